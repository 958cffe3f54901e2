package cpu

import (
	"encoding/binary"
	"math"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Element access for the reference kernels. Offsets are byte offsets into
// Tensor.Data computed from the strides; every access is bounds-checked by
// the slice, so a wrong stride is a caught panic, never a stray write.

// offset is the byte offset of element (i0, i1, i2, i3) of t.
func offset(t *graph.Tensor, i0, i1, i2, i3 int64) uint64 {
	return uint64(i0)*t.Nb[0] + uint64(i1)*t.Nb[1] + uint64(i2)*t.Nb[2] + uint64(i3)*t.Nb[3]
}

// isFloatType reports whether t's elements are plain floats the element
// accessors convert (F32, F16, BF16).
func isFloatType(typ quant.Type) bool {
	return typ == quant.F32 || typ == quant.F16 || typ == quant.BF16
}

// getF at byte offset off of a tensor of float type typ, as float32.
func getF(typ quant.Type, b []byte, off uint64) float32 {
	switch typ {
	case quant.F32:
		return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
	case quant.F16:
		return quant.FP16ToFP32(binary.LittleEndian.Uint16(b[off:]))
	case quant.BF16:
		return quant.BF16ToFP32(binary.LittleEndian.Uint16(b[off:]))
	case quant.I32:
		return float32(int32(binary.LittleEndian.Uint32(b[off:])))
	}
	panic("cpu: getF on " + typ.String())
}

// setF stores v at byte offset off of a tensor of float type typ, rounding
// as ggml's conversions do.
func setF(typ quant.Type, b []byte, off uint64, v float32) {
	switch typ {
	case quant.F32:
		binary.LittleEndian.PutUint32(b[off:], math.Float32bits(v))
	case quant.F16:
		binary.LittleEndian.PutUint16(b[off:], quant.FP32ToFP16(v))
	case quant.BF16:
		binary.LittleEndian.PutUint16(b[off:], quant.FP32ToBF16(v))
	default:
		panic("cpu: setF on " + typ.String())
	}
}

// getI32 reads an int32 element at byte offset off.
func getI32(b []byte, off uint64) int32 { return int32(binary.LittleEndian.Uint32(b[off:])) }

// setI32 stores an int32 element at byte offset off.
func setI32(b []byte, off uint64, v int32) { binary.LittleEndian.PutUint32(b[off:], uint32(v)) }

// getI64 reads an int64 element at byte offset off.
func getI64(b []byte, off uint64) int64 { return int64(binary.LittleEndian.Uint64(b[off:])) }

// forRows calls fn for every row (i1, i2, i3) of t in thread p's share of
// the rows, in order.
func forRows(p *Params, t *graph.Tensor, fn func(i1, i2, i3 int64)) {
	lo, hi := p.Rows(t.NRows())
	for r := lo; r < hi; r++ {
		i1 := r % t.Ne[1]
		i2 := r / t.Ne[1] % t.Ne[2]
		i3 := r / (t.Ne[1] * t.Ne[2])
		fn(i1, i2, i3)
	}
}
