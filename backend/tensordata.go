package backend

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// The typed tensor helpers below move a whole tensor's values between a Go
// slice and the tensor's memory, converting to and from the tensor's type.
// They go through b (SetTensorAsync / GetTensorAsync) when b is not nil,
// else straight to the tensor's buffer (buffer.SetTensor / GetTensor), or
// to its Data when it has Go memory and no buffer (a Context with Alloc).
// The tensor must be contiguous; the slice has one value per element, in
// the tensor's order (Ne[0] fastest).

// SetFloat32 writes vs into t, converted to t's type: F32 as is, F16 and
// BF16 rounded as ggml does, F64 widened, and block formats quantized row
// by row as ggml's CPU backend converts activations (quant.FromFloat), not
// as a model file's weights are quantized (quant.Quantize,
// ggml_quantize_chunk; the two differ for IQ4_NL, and FromFloat writes no
// type that needs an importance matrix). For weights use LoadWeights. It
// needs no Synchronize: the bytes handed to b are the helper's own.
func SetFloat32(b Backend, t *graph.Tensor, vs []float32) error {
	n, err := checkValues(t, len(vs))
	if err != nil {
		return err
	}
	data := make([]byte, t.NBytes())
	switch t.Type {
	case quant.F32:
		for i, v := range vs {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
	case quant.F64:
		for i, v := range vs {
			binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(float64(v)))
		}
	case quant.F16:
		for i, v := range vs {
			binary.LittleEndian.PutUint16(data[2*i:], quant.FP32ToFP16(v))
		}
	case quant.BF16:
		for i, v := range vs {
			binary.LittleEndian.PutUint16(data[2*i:], quant.FP32ToBF16(v))
		}
	default:
		if !t.Type.IsQuantized() {
			return fmt.Errorf("%w: SetFloat32: %s holds %s, not floats (SetInt32)", ErrArgument, t, t.Type)
		}
		row, rs := int(t.Ne[0]), int(t.RowSize())
		for r := range n / row {
			if _, err := quant.FromFloat(data[r*rs:(r+1)*rs], t.Type, vs[r*row:(r+1)*row]); err != nil {
				return fmt.Errorf("backend: SetFloat32: %s row %d: %w", t, r, err)
			}
		}
	}
	return setBytes(b, t, data)
}

// GetFloat32 reads t's values as float32: F32 as is, F16, BF16 and block
// formats as ggml's to_float gives them (quant.Dequantize), F64 rounded.
// With b it waits for b (Synchronize) before reading the bytes.
func GetFloat32(b Backend, t *graph.Tensor) ([]float32, error) {
	n, err := checkValues(t, -1)
	if err != nil {
		return nil, err
	}
	data, err := getBytes(b, t)
	if err != nil {
		return nil, err
	}
	out := make([]float32, n)
	switch t.Type {
	case quant.F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case quant.F64:
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:])))
		}
	default:
		if t.Type != quant.F16 && t.Type != quant.BF16 && !t.Type.IsQuantized() {
			return nil, fmt.Errorf("%w: GetFloat32: %s holds %s, not floats (GetInt32)", ErrArgument, t, t.Type)
		}
		if err := quant.DequantizeInto(out, t.Type, data); err != nil {
			return nil, fmt.Errorf("backend: GetFloat32: %s: %w", t, err)
		}
	}
	return out, nil
}

// SetInt32 writes vs into t, an I8, I16, I32 or I64 tensor (positions,
// row ids, expert ids); a value out of the type's range is an error.
func SetInt32(b Backend, t *graph.Tensor, vs []int32) error {
	if _, err := checkValues(t, len(vs)); err != nil {
		return err
	}
	data := make([]byte, t.NBytes())
	for i, v := range vs {
		switch t.Type {
		case quant.I8:
			if v < math.MinInt8 || v > math.MaxInt8 {
				return fmt.Errorf("%w: SetInt32: value %d at %d does not fit %s", ErrArgument, v, i, t.Type)
			}
			data[i] = byte(int8(v))
		case quant.I16:
			if v < math.MinInt16 || v > math.MaxInt16 {
				return fmt.Errorf("%w: SetInt32: value %d at %d does not fit %s", ErrArgument, v, i, t.Type)
			}
			binary.LittleEndian.PutUint16(data[2*i:], uint16(int16(v)))
		case quant.I32:
			binary.LittleEndian.PutUint32(data[4*i:], uint32(v))
		case quant.I64:
			binary.LittleEndian.PutUint64(data[8*i:], uint64(int64(v)))
		default:
			return fmt.Errorf("%w: SetInt32: %s holds %s, not integers (SetFloat32)", ErrArgument, t, t.Type)
		}
	}
	return setBytes(b, t, data)
}

// GetInt32 reads the values of t, an I8, I16, I32 or I64 tensor; an I64
// value out of int32's range is an error. With b it waits for b first.
func GetInt32(b Backend, t *graph.Tensor) ([]int32, error) {
	n, err := checkValues(t, -1)
	if err != nil {
		return nil, err
	}
	switch t.Type {
	case quant.I8, quant.I16, quant.I32, quant.I64:
	default:
		return nil, fmt.Errorf("%w: GetInt32: %s holds %s, not integers (GetFloat32)", ErrArgument, t, t.Type)
	}
	data, err := getBytes(b, t)
	if err != nil {
		return nil, err
	}
	out := make([]int32, n)
	for i := range out {
		switch t.Type {
		case quant.I8:
			out[i] = int32(int8(data[i]))
		case quant.I16:
			out[i] = int32(int16(binary.LittleEndian.Uint16(data[2*i:])))
		case quant.I32:
			out[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
		case quant.I64:
			v := int64(binary.LittleEndian.Uint64(data[8*i:]))
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("%w: GetInt32: value %d at %d does not fit int32", ErrArgument, v, i)
			}
			out[i] = int32(v)
		}
	}
	return out, nil
}

// checkValues checks that t can be read or written whole and, when want is
// not negative, that want values fill it; it returns the element count.
func checkValues(t *graph.Tensor, want int) (int, error) {
	if t == nil {
		return 0, fmt.Errorf("%w: nil tensor", ErrArgument)
	}
	if !t.IsContiguous() {
		return 0, fmt.Errorf("%w: %s is not contiguous; copy it (Context.Cont) to read or write it whole", ErrArgument, t)
	}
	n := t.NElements()
	if uint64(n) > math.MaxInt {
		return 0, fmt.Errorf("%w: %s has %d elements, too many for one slice", ErrArgument, t, n)
	}
	if want >= 0 && int64(want) != n {
		return 0, fmt.Errorf("%w: %d values for %s, which has %d elements", ErrArgument, want, t, n)
	}
	return int(n), nil
}

func setBytes(b Backend, t *graph.Tensor, data []byte) error {
	switch {
	case b != nil:
		return b.SetTensorAsync(t, data, 0)
	case hasOwnMemory(t):
		copy(t.Data, data)
		return nil
	}
	return buffer.SetTensor(t, data, 0)
}

func getBytes(b Backend, t *graph.Tensor) ([]byte, error) {
	data := make([]byte, t.NBytes())
	switch {
	case b != nil:
		if err := b.GetTensorAsync(t, data, 0); err != nil {
			return nil, err
		}
		if err := b.Synchronize(); err != nil {
			return nil, err
		}
	case hasOwnMemory(t):
		copy(data, t.Data)
	default:
		if err := buffer.GetTensor(t, data, 0); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// hasOwnMemory reports a tensor with Go memory (a Context with Alloc, or a
// view of such a tensor) and no buffer.
func hasOwnMemory(t *graph.Tensor) bool {
	src := t
	if t.ViewSrc != nil {
		src = t.ViewSrc
	}
	return src.Buffer == nil && uint64(len(t.Data)) == t.NBytes()
}
