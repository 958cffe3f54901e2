package openvino

import (
	"strings"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// requantType is ggml-openvino's ExtraQuantType: a format a weight is
// re-quantized to instead of extracted as is.
type requantType int

const (
	requantNone requantType = iota
	requantF16
	requantQ8_0C    // i8, one group per row, symmetric, f16 scale per row
	requantQ4_0_128 // i4, groups of 128, symmetric
)

func (r requantType) String() string {
	return [...]string{"none", "F16", "Q8_0_C", "Q4_0_128"}[r]
}

// extractedLayout is ggml_openvino_extracted_layout: where the converted
// weights, scales and zero points of a quantized weight lie in its memory
// ([weights | scales | zp], each part 64-byte aligned), and how they are
// encoded.
type extractedLayout struct {
	total                  uint64
	weightsOff, weightsLen uint64
	scalesOff, scalesLen   uint64
	zpOff, zpLen           uint64
	// wtype is the element type of the weights (u4, i4, u8, i8, f4e2m1,
	// f16 for an F16 requant).
	wtype elemType
	// scaleType is f16, f8e8m0 for MXFP4, f32 for the K-quants (whose
	// scale d*sc needs more than f16's 11 bits); zpType f16 or f32 alike.
	scaleType, zpType elemType
	// group is the number of weights sharing a scale (weights_per_block).
	group     int64
	symmetric bool
	// zpF16 stores zero points as f16 (always, here; upstream packs them
	// as the weights, u4 or u8, except for 3-D MoE experts).
	zpF16   bool
	requant requantType
	// exact reports whether the original ggml bytes can be rebuilt from
	// the extracted form. When not, AllocSize reserves room for a copy of
	// them after the layout (ggml-go keeps get-tensor exact; upstream
	// returns the converted bytes).
	exact bool
	// origOff is where that copy starts (when !exact).
	origOff uint64
}

func align64(n uint64) uint64 { return (n + 63) &^ 63 }

// requantFor is ggml_openvino_get_requant_type: token_embd and output
// weights become per-row Q8_0 (token_embd F16 on the NPU when it is
// Q6_K); everything else on the NPU Q4_0 in groups of 128.
func requantFor(t *graph.Tensor, k Kind) requantType {
	if !t.Type.IsQuantized() {
		return requantNone
	}
	switch {
	case strings.HasPrefix(t.Name, "token_embd.weight"):
		if k == KindNPU && t.Type == quant.Q6_K {
			return requantF16
		}
		return requantQ8_0C
	case strings.HasPrefix(t.Name, "output.weight"):
		return requantQ8_0C
	case k == KindNPU && t.Ne[0]%128 == 0:
		return requantQ4_0_128
	}
	// Upstream also requantizes Q6_K and Q5_K to per-row Q8_0 on CPU and
	// GPU, which moves GET_ROWS and MUL_MAT results ~1e-5 (NMSE) from
	// ggml's; here they keep their own values (exact f32 scales).
	return requantNone
}

// extractable reports whether ggml-openvino converts t's type.
func extractable(t quant.Type) bool {
	switch t {
	case quant.Q4_0, quant.Q4_1, quant.Q4_K, quant.Q5_1, quant.Q5_K, quant.Q8_0, quant.Q6_K, quant.MXFP4:
		return true
	}
	return false
}

// layoutFor is ggml_openvino_get_extracted_layout for a weight on a
// device of kind k; ok is false for an empty layout (not quantized, 4-D,
// or a type that is not converted).
//
// requant is false for tensors converted when a graph is built (inputs
// that are not weights: test-backend-ops' path in upstream, which does not
// requantize them either).
func layoutFor(t *graph.Tensor, k Kind, requant bool) (l extractedLayout, ok bool) {
	if !t.Type.IsQuantized() || t.Ne[3] != 1 || !extractable(t.Type) {
		return l, false
	}
	// Upstream keeps 3-D MXFP4 experts packed for a translation of its
	// own; here they are converted like 2-D ones (f4e2m1 + e8m0).
	n := uint64(t.NElements())
	nbytes := t.NBytes()
	if requant {
		l.requant = requantFor(t, k)
	}
	l.scaleType, l.zpType = etF16, etF16
	switch l.requant {
	case requantF16:
		l.wtype, l.weightsLen = etF16, n*2
		l.total = max(l.weightsLen, nbytes)
		l.origOff = align64(l.total)
		l.total = l.origOff + nbytes
		return l, true
	case requantQ8_0C:
		l.wtype, l.group, l.symmetric = etI8, t.Ne[0], true
	case requantQ4_0_128:
		l.wtype, l.group, l.symmetric = etI4, 128, true
	default:
		l.exact = true
		switch t.Type {
		case quant.Q4_0:
			l.wtype, l.group, l.symmetric = etI4, 32, true
		case quant.MXFP4:
			l.wtype, l.group, l.symmetric, l.scaleType = etF4E2M1, 32, true, etF8E8M0
		case quant.Q4_1:
			l.wtype, l.group, l.exact = etU4, 32, false
		case quant.Q4_K:
			l.wtype, l.group, l.exact, l.scaleType, l.zpType = etU4, 32, false, etF32, etF32
		case quant.Q5_1:
			l.wtype, l.group, l.exact = etU8, 32, false
		case quant.Q5_K:
			l.wtype, l.group, l.exact, l.scaleType, l.zpType = etU8, 32, false, etF32, etF32
		case quant.Q8_0:
			l.wtype, l.group, l.symmetric = etI8, 32, true
		case quant.Q6_K:
			l.wtype, l.group, l.symmetric, l.exact, l.scaleType = etI8, 16, true, false, etF32
		}
	}
	nBlocks := n / uint64(l.group)
	u4 := l.wtype == etU4 || l.wtype == etI4 || l.wtype == etF4E2M1
	l.weightsLen = n
	if u4 {
		l.weightsLen = n / 2
	}
	l.scalesLen = uint64(l.scaleType.byteSize(int64(nBlocks)))
	// Zero points are the exact f16 -min/scale, upstream's use_bias form
	// (its test-backend-ops and 3-D MoE layout), on every weight:
	// upstream's default u4/u8 round(-min/scale) moves Q4_1 0.7% (NMSE) from
	// ggml's values, beyond test-backend-ops' 5e-4 for MUL_MAT
	// (TestExtractRoundTrip measures both).
	if !l.symmetric {
		l.zpF16, l.zpLen = true, uint64(l.zpType.byteSize(int64(nBlocks)))
	}
	l.scalesOff = align64(l.weightsLen)
	l.zpOff = l.scalesOff + align64(l.scalesLen)
	l.total = max(l.zpOff+l.zpLen, nbytes)
	if !l.exact {
		l.origOff = align64(l.total)
		l.total = l.origOff + nbytes
	}
	return l, true
}
