package quant

import (
	"errors"
	"fmt"
	"math"
)

// ErrNonFinite reports NaN or Inf input to a block quantizer. ggml produces
// unspecified bytes for such input, so it is refused here instead.
var ErrNonFinite = errors.New("quant: non-finite input")

// kernel holds one type's row functions. The dispatchers below check every
// length before calling them, so a kernel may assume:
//   - quantize: len(src) == nrows*nPerRow, nPerRow is a multiple of the block
//     size, len(dst) == nrows*RowSize(nPerRow), imatrix is nil or has nPerRow
//     weights, and src is finite for block-quantized types;
//   - dequantize: len(dst) is a multiple of the block size and
//     len(src) == RowSize(len(dst)).
type kernel struct {
	quantize        func(dst []byte, src []float32, nrows, nPerRow int, imatrix []float32)
	dequantize      func(dst []float32, src []byte)
	requiresImatrix bool
}

// CanQuantize reports whether Quantize supports t.
func (t Type) CanQuantize() bool { return t.Valid() && kernels[t].quantize != nil }

// CanDequantize reports whether Dequantize supports t.
func (t Type) CanDequantize() bool { return t.Valid() && kernels[t].dequantize != nil }

// RequiresImatrix reports whether quantizing to t needs an importance matrix,
// as ggml_quantize_requires_imatrix.
func (t Type) RequiresImatrix() bool { return t.Valid() && kernels[t].requiresImatrix }

// QuantizedSize returns the number of bytes Quantize produces for nrows rows
// of nPerRow values, or an error when the shape does not fit the type.
func QuantizedSize(t Type, nrows, nPerRow int) (int, error) {
	if err := t.Check(); err != nil {
		return 0, err
	}
	if nrows < 0 || nPerRow < 0 {
		return 0, fmt.Errorf("%w: negative shape %d x %d", ErrBadLength, nrows, nPerRow)
	}
	rs := t.RowSize(int64(nPerRow))
	if rs < 0 {
		return 0, fmt.Errorf("%w: %s rows of %d values: not a multiple of the block size %d",
			ErrBadLength, t, nPerRow, t.BlockSize())
	}
	if nrows != 0 && rs > int64(math.MaxInt)/int64(nrows) {
		return 0, fmt.Errorf("%w: %d rows of %d bytes overflow", ErrBadLength, nrows, rs)
	}
	return int(rs) * nrows, nil
}

// Quantize converts nrows rows of nPerRow floats from src to type t and
// returns the same bytes as ggml_quantize_chunk(t, src, dst, 0, nrows,
// nPerRow, imatrix). imatrix, if not nil, holds one importance weight per
// column (nPerRow values); types that ignore it in ggml ignore it here.
//
// For Q8_1 and Q8_K, which ggml_quantize_chunk does not handle, the result is
// what ggml's CPU backend produces for activations (its from_float).
//
// Block-quantized types refuse NaN and Inf input with ErrNonFinite; F16,
// BF16 and F32 convert them. The seven lattice types IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S and IQ1_M return an ErrUnsupported error.
func Quantize(t Type, src []float32, nrows, nPerRow int, imatrix []float32) ([]byte, error) {
	size, err := checkQuantize(t, src, nrows, nPerRow, imatrix)
	if err != nil {
		return nil, err
	}
	dst := make([]byte, size)
	quantizeChecked(dst, t, src, nrows, nPerRow, imatrix)
	return dst, nil
}

// QuantizeInto is Quantize writing into dst, which must hold at least
// QuantizedSize(t, nrows, nPerRow) bytes. It returns the number of bytes
// written and allocates nothing.
func QuantizeInto(dst []byte, t Type, src []float32, nrows, nPerRow int, imatrix []float32) (int, error) {
	size, err := checkQuantize(t, src, nrows, nPerRow, imatrix)
	if err != nil {
		return 0, err
	}
	if len(dst) < size {
		return 0, fmt.Errorf("%w: dst has %d bytes, need %d", ErrBadLength, len(dst), size)
	}
	quantizeChecked(dst[:size], t, src, nrows, nPerRow, imatrix)
	return size, nil
}

// checkQuantize validates a Quantize call before anything is allocated and
// returns the output size.
func checkQuantize(t Type, src []float32, nrows, nPerRow int, imatrix []float32) (int, error) {
	size, err := QuantizedSize(t, nrows, nPerRow)
	if err != nil {
		return 0, err
	}
	if nPerRow != 0 && nrows > math.MaxInt/nPerRow {
		return 0, fmt.Errorf("%w: %d rows of %d values overflow", ErrBadLength, nrows, nPerRow)
	}
	n := nrows * nPerRow
	if len(src) != n {
		return 0, fmt.Errorf("%w: src has %d values, %d rows of %d need %d", ErrBadLength, len(src), nrows, nPerRow, n)
	}
	if imatrix != nil && len(imatrix) != nPerRow {
		return 0, fmt.Errorf("%w: imatrix has %d weights, need one per column (%d)", ErrBadLength, len(imatrix), nPerRow)
	}
	k := kernels[t]
	if k.quantize == nil {
		return 0, fmt.Errorf("%w: quantizing to %s", ErrUnsupported, t)
	}
	if imatrix == nil && k.requiresImatrix && n > 0 {
		return 0, fmt.Errorf("%w: %s requires an importance matrix", ErrBadLength, t)
	}
	if t.IsQuantized() {
		if i := firstNonFinite(src); i >= 0 {
			return 0, fmt.Errorf("%w: src[%d] = %v", ErrNonFinite, i, src[i])
		}
	}
	return size, nil
}

func quantizeChecked(dst []byte, t Type, src []float32, nrows, nPerRow int, imatrix []float32) {
	if len(src) > 0 {
		kernels[t].quantize(dst, src, nrows, nPerRow, imatrix)
	}
}

// Dequantize converts the first n elements of type t in src to float32,
// giving the same floats as ggml's to_float for the type. n must be a
// multiple of the block size and src must hold at least RowSize(n) bytes.
func Dequantize(t Type, src []byte, n int) ([]float32, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: negative count %d", ErrBadLength, n)
	}
	dst := make([]float32, n)
	if err := DequantizeInto(dst, t, src); err != nil {
		return nil, err
	}
	return dst, nil
}

// DequantizeInto is Dequantize of len(dst) elements into dst. It allocates nothing.
func DequantizeInto(dst []float32, t Type, src []byte) error {
	if err := t.Check(); err != nil {
		return err
	}
	k := kernels[t]
	if k.dequantize == nil {
		return fmt.Errorf("%w: dequantizing %s", ErrUnsupported, t)
	}
	need := t.RowSize(int64(len(dst)))
	if need < 0 {
		return fmt.Errorf("%w: %d %s elements: not a multiple of the block size %d", ErrBadLength, len(dst), t, t.BlockSize())
	}
	if int64(len(src)) < need {
		return fmt.Errorf("%w: src has %d bytes, %d %s elements need %d", ErrBadLength, len(src), len(dst), t, need)
	}
	k.dequantize(dst, src[:need])
	return nil
}

// firstNonFinite returns the index of the first NaN or Inf in v, or -1. It
// tests the exponent bits eight values at a time: this check runs on every
// quantization and must cost little next to it.
func firstNonFinite(v []float32) int {
	const exp = 0x7f800000
	i := 0
	for ; i+8 <= len(v); i += 8 {
		w := v[i : i+8 : i+8]
		if math.Float32bits(w[0])&exp == exp || math.Float32bits(w[1])&exp == exp ||
			math.Float32bits(w[2])&exp == exp || math.Float32bits(w[3])&exp == exp ||
			math.Float32bits(w[4])&exp == exp || math.Float32bits(w[5])&exp == exp ||
			math.Float32bits(w[6])&exp == exp || math.Float32bits(w[7])&exp == exp {
			break
		}
	}
	for ; i < len(v); i++ {
		if math.Float32bits(v[i])&exp == exp {
			return i
		}
	}
	return -1
}

// FromFloat converts src into dst as ggml's CPU backend converts
// activations and copies (the from_float of its generic build), returning
// the bytes written. It is Quantize of one row without an importance
// matrix, except for IQ4_NL, whose from_float skips ggml_quantize_chunk's
// scale search. The lattice types have no from_float (ErrUnsupported).
func FromFloat(dst []byte, t Type, src []float32) (int, error) {
	if t != IQ4_NL {
		return QuantizeInto(dst, t, src, 1, len(src), nil)
	}
	size, err := checkQuantize(t, src, 1, len(src), nil)
	if err != nil {
		return 0, err
	}
	if len(dst) < size {
		return 0, fmt.Errorf("%w: dst has %d bytes, need %d", ErrBadLength, len(dst), size)
	}
	fromFloatIQ4NL(dst[:size], src)
	return size, nil
}
