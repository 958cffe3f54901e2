// Package graph holds tensors, the Context that builds them (the builder
// functions of ggml.h), and Graph, a forward computation in topological
// order. Shapes and types are checked as ggml asserts them, but a bad call
// records an error on the Context instead of aborting the process.
package graph

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Limits shared with ggml.
const (
	MaxDims = 4  // GGML_MAX_DIMS
	MaxSrc  = 10 // GGML_MAX_SRC
	MaxName = 63 // GGML_MAX_NAME - 1 (the C field keeps a NUL)
)

// Flags mark a tensor's role in a graph, with ggml's values.
type Flags int32

// Tensor flags.
const (
	FlagInput   Flags = 1  // an input of the graph
	FlagOutput  Flags = 2  // an output of the graph
	FlagParam   Flags = 4  // a trainable parameter
	FlagLoss    Flags = 8  // a loss term
	FlagCompute Flags = 16 // must be computed (set by Build)
)

// Buffer is what a tensor needs to know of the buffer holding its data; the
// buffer package's types satisfy it. It keeps this package free of
// allocation concerns.
type Buffer interface {
	// Name identifies the buffer (its type's name) in messages.
	Name() string
	// IsHost reports whether the buffer's memory is directly addressable
	// by the CPU, so that Tensor.Data is valid.
	IsHost() bool
}

// Tensor is an n-dimensional array and, unless it is a leaf, the operation
// that computes it from its sources. Field meanings follow struct ggml_tensor.
//
// The methods accept a nil *Tensor as a tensor of no elements: the sizes
// are 0, IsEmpty is true, the layout predicates (IsContiguous, IsView, ...)
// and SameShape, SameStride, CanRepeat are false, String says so. Builders
// refuse nil sources with ErrNil.
type Tensor struct {
	Type quant.Type
	// Ne is the number of elements per dimension, innermost first.
	Ne [MaxDims]int64
	// Nb is the stride in bytes per dimension: Nb[0] is the size of an
	// element (a block, for quantized types), Nb[1] of a row, and so on.
	Nb [MaxDims]uint64

	Op     ops.Op
	Params ops.Params
	Flags  Flags
	Src    [MaxSrc]*Tensor

	// ViewSrc is the tensor whose memory this one views (never itself a
	// view), at byte offset ViewOffs.
	ViewSrc  *Tensor
	ViewOffs uint64

	// Data is the tensor's memory when it is host-addressable: exactly
	// NBytes() bytes, starting at the first element. It is nil for tensors
	// not yet allocated and for tensors in device memory. (A transposed
	// quantized tensor, whose rows are partial blocks, has its source's
	// memory: NBytes means nothing for it, as in ggml.)
	Data   []byte
	Buffer Buffer
	Name   string
	// Extra is free for a backend's per-tensor state.
	Extra any
}

// OpDesc is ggml_op_desc: the unary or GLU function's name ("SILU",
// "SWIGLU") for UNARY and GLU tensors, the operation's name otherwise;
// "NONE" for a nil tensor.
func (t *Tensor) OpDesc() string {
	if t == nil {
		return ops.None.String()
	}
	switch t.Op {
	case ops.Unary:
		return t.Params.Unary().String()
	case ops.GLU:
		return ops.GluOp(t.Params.I32(0)).String()
	}
	return t.Op.String()
}

// NElements is the total number of elements.
func (t *Tensor) NElements() int64 {
	if t == nil {
		return 0
	}
	return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3]
}

// NRows is the number of rows (all dimensions but the first).
func (t *Tensor) NRows() int64 {
	if t == nil {
		return 0
	}
	return t.Ne[1] * t.Ne[2] * t.Ne[3]
}

// NDims is the number of dimensions up to the last one larger than 1 (at least 1).
func (t *Tensor) NDims() int {
	if t == nil {
		return 0
	}
	for i := MaxDims - 1; i >= 1; i-- {
		if t.Ne[i] > 1 {
			return i + 1
		}
	}
	return 1
}

// NBytes is the extent of the tensor's memory in bytes, as ggml_nbytes: from
// the first element to the end of the last, following the strides.
func (t *Tensor) NBytes() uint64 {
	n, _ := t.nbytes()
	return n
}

// nbytes is NBytes, wrapping around as ggml's size_t arithmetic does, and
// whether it did not wrap.
func (t *Tensor) nbytes() (uint64, bool) {
	if t == nil {
		return 0, true
	}
	for _, n := range t.Ne {
		if n <= 0 {
			return 0, true
		}
	}
	ok := true
	mul := func(a, b uint64) uint64 {
		hi, lo := bits.Mul64(a, b)
		ok = ok && hi == 0
		return lo
	}
	add := func(a, b uint64) uint64 {
		s, carry := bits.Add64(a, b, 0)
		ok = ok && carry == 0
		return s
	}
	bs := uint64(t.Type.BlockSize())
	var n uint64
	if bs == 1 {
		n = uint64(t.Type.TypeSize())
		for i := range MaxDims {
			n = add(n, mul(uint64(t.Ne[i]-1), t.Nb[i]))
		}
		return n, ok
	}
	n = mul(uint64(t.Ne[0]), t.Nb[0]) / bs
	for i := 1; i < MaxDims; i++ {
		n = add(n, mul(uint64(t.Ne[i]-1), t.Nb[i]))
	}
	return n, ok
}

// RowSize is the size in bytes of one contiguous row of Ne[0] elements.
func (t *Tensor) RowSize() uint64 {
	if t == nil {
		return 0
	}
	return uint64(t.Type.RowSize(t.Ne[0]))
}

// IsEmpty reports whether some dimension has no elements.
func (t *Tensor) IsEmpty() bool {
	if t == nil {
		return true
	}
	for _, n := range t.Ne {
		if n == 0 {
			return true
		}
	}
	return false
}

// IsView reports whether the tensor views another's memory.
func (t *Tensor) IsView() bool { return t != nil && t.ViewSrc != nil }

// contiguousMN is ggml_is_contiguous_m_n: dimensions below n are laid out
// without gaps, except that those up to m may have any stride between them
// (a dimension of size 1 never breaks contiguity).
func (t *Tensor) contiguousMN(m, n int) bool {
	if t == nil {
		return false
	}
	next := uint64(t.Type.TypeSize())
	bs := int64(t.Type.BlockSize())
	if t.Ne[0] != bs && t.Nb[0] != next {
		return false
	}
	next *= uint64(t.Ne[0] / bs)
	for i := 1; i < n; i++ {
		if i > m {
			if t.Ne[i] != 1 && t.Nb[i] != next {
				return false
			}
			next *= uint64(t.Ne[i])
		} else {
			next = uint64(t.Ne[i]) * t.Nb[i]
		}
	}
	return true
}

// IsContiguous reports whether all elements are laid out densely in order.
func (t *Tensor) IsContiguous() bool { return t.contiguousMN(0, MaxDims) }

// IsContiguousRows reports whether each row is contiguous (elements of a row
// adjacent), whatever the strides between rows.
func (t *Tensor) IsContiguousRows() bool {
	return t != nil && (t.Ne[0] == int64(t.Type.BlockSize()) || t.Nb[0] == uint64(t.Type.TypeSize()))
}

// IsContiguous1 is ggml_is_contiguous_1: contiguous but for dimension 1.
func (t *Tensor) IsContiguous1() bool { return t.contiguousMN(1, MaxDims) }

// IsContiguous2 is ggml_is_contiguous_2: contiguous but for dimensions 1 and 2.
func (t *Tensor) IsContiguous2() bool { return t.contiguousMN(2, MaxDims) }

// IsContiguousTo reports whether dimensions 0..n-1 are contiguous
// (ggml_is_contiguous_to_1/2/3 for n = 1, 2, 3).
func (t *Tensor) IsContiguousTo(n int) bool { return t.contiguousMN(0, n) }

// IsContiguouslyAllocated reports whether the tensor's extent holds exactly
// its elements, in whatever order.
func (t *Tensor) IsContiguouslyAllocated() bool {
	return t != nil && t.NBytes() == uint64(t.NElements())*uint64(t.Type.TypeSize())/uint64(t.Type.BlockSize())
}

// IsTransposed reports whether the first two dimensions are swapped in memory.
func (t *Tensor) IsTransposed() bool { return t != nil && t.Nb[0] > t.Nb[1] }

// IsPermuted reports whether the dimensions' strides are out of order.
func (t *Tensor) IsPermuted() bool {
	return t != nil && (t.Nb[0] > t.Nb[1] || t.Nb[1] > t.Nb[2] || t.Nb[2] > t.Nb[3])
}

// SameShape reports whether a and b have the same number of elements in every dimension.
func SameShape(a, b *Tensor) bool { return a != nil && b != nil && a.Ne == b.Ne }

// SameStride reports whether a and b have the same strides.
func SameStride(a, b *Tensor) bool { return a != nil && b != nil && a.Nb == b.Nb }

// CanRepeat reports whether b can be broadcast to a's shape: every dimension
// of a is a multiple of b's (ggml_can_repeat).
func CanRepeat(b, a *Tensor) bool {
	if a == nil || b == nil {
		return false
	}
	if b.IsEmpty() {
		return a.IsEmpty()
	}
	for i := range MaxDims {
		if a.Ne[i]%b.Ne[i] != 0 {
			return false
		}
	}
	return true
}

// CanRepeatRows is ggml_can_repeat_rows: same row length and b's rows
// repeat over a's.
func CanRepeatRows(b, a *Tensor) bool { return CanRepeat(b, a) && b.Ne[0] == a.Ne[0] }

// String describes the tensor for messages: name, op, type and shape.
func (t *Tensor) String() string {
	if t == nil {
		return "<nil tensor>"
	}
	return fmt.Sprintf("%q %s %s [%d %d %d %d]", t.Name, t.Op, t.Type, t.Ne[0], t.Ne[1], t.Ne[2], t.Ne[3])
}

// denseStrides returns the dense strides of a tensor of type typ and shape
// ne, or an error when a size overflows.
func denseStrides(typ quant.Type, ne [MaxDims]int64) ([MaxDims]uint64, error) {
	var nb [MaxDims]uint64
	rs := typ.RowSize(ne[0])
	if rs < 0 {
		return nb, fmt.Errorf("%w: %d elements of %s do not make whole blocks of %d", ErrShape, ne[0], typ, typ.BlockSize())
	}
	nb[0] = uint64(typ.TypeSize())
	nb[1] = uint64(rs)
	for i := 2; i < MaxDims; i++ {
		if ne[i-1] != 0 && nb[i-1] > math.MaxInt64/uint64(ne[i-1]) {
			return nb, fmt.Errorf("%w: tensor size overflows", ErrShape)
		}
		nb[i] = nb[i-1] * uint64(ne[i-1])
	}
	if ne[3] != 0 && nb[3] > math.MaxInt64/uint64(ne[3]) {
		return nb, fmt.Errorf("%w: tensor size overflows", ErrShape)
	}
	return nb, nil
}
