package cpu

import (
	"fmt"

	"github.com/ggml-go/ggml/quant"
)

// What ggml's CPU backend can convert between floats and each type, shared
// by every family's supports rules and kernels.

// latticeType reports whether typ is one of the lattice formats, whose
// quantizers need tables ggml's CPU backend does not set up: it has no
// from_float for them and refuses CPY and SET_ROWS into them.
func latticeType(typ quant.Type) bool {
	switch typ {
	case quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M:
		return true
	}
	return false
}

// hasFromFloat reports whether ggml's CPU backend converts float rows to
// typ (its type_traits_cpu from_float): the plain float types, I32, and
// every quantized type but the lattice ones. fromFloat does the same.
func hasFromFloat(typ quant.Type) bool {
	switch typ {
	case quant.F32, quant.F16, quant.BF16, quant.I32:
		return true
	}
	return typ.IsQuantized() && !latticeType(typ)
}

// hasToFloat reports whether typ is a quantized type ggml can convert back
// to floats (its type_traits to_float): all but the activation formats Q8_1
// and Q8_K.
func hasToFloat(typ quant.Type) bool {
	return typ.IsQuantized() && typ != quant.Q8_1 && typ != quant.Q8_K
}

// fromFloat converts the floats src into dst, of a type hasFromFloat
// accepts, as ggml's CPU from_float for it: a plain conversion for the
// float types and I32, the type's CPU quantizer otherwise (bit for bit with
// ggml's scalar builds; its AVX builds round Q8_0 and Q8_1 ties to even, so
// a few values can land one level apart).
func fromFloat(typ quant.Type, dst []byte, src []float32) {
	if typ == quant.I32 {
		for i, v := range src {
			setI32(dst, uint64(4*i), f32ToI32(v))
		}
		return
	}
	if typ == quant.F16 {
		// The vector conversion (the KV cache copies of every decoder
		// block) writes what quant's does, NaNs included.
		if h := f16Row(dst, 0, int64(len(src))); h != nil {
			vec.f32ToF16(h, src)
			return
		}
	}
	if _, err := quant.FromFloat(dst, typ, src); err != nil {
		// Non-finite values have no quantized form; ggml writes garbage.
		panic(fmt.Sprintf("cpu: converting a row to %s: %v", typ, err))
	}
}
