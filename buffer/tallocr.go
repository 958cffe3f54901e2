package buffer

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/ggml-go/ggml/graph"
)

// TensorAllocator places tensors in a buffer one after another, each
// aligned as the buffer's type asks (ggml_tallocr). It is not safe for
// concurrent use.
type TensorAllocator struct {
	buf    Buffer
	align  uint64
	offset uint64
}

// NewTensorAllocator returns an allocator filling b from its start.
func NewTensorAllocator(b Buffer) (*TensorAllocator, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: nil buffer", ErrArgument)
	}
	align := b.Type().Alignment()
	if align == 0 || align&(align-1) != 0 {
		return nil, fmt.Errorf("%w: %s alignment %d is not a power of two", ErrArgument, b.Name(), align)
	}
	return &TensorAllocator{buf: b, align: align, offset: alignPad(b.Base(), 0, align)}, nil
}

// Alloc places t after the tensors placed before it; a view instead gets
// its ViewSrc's memory, wherever that is. A tensor that does not fit is an
// ErrNoSpace error, and takes no space.
func (a *TensorAllocator) Alloc(t *graph.Tensor) error {
	if t == nil {
		return fmt.Errorf("%w: nil tensor", ErrArgument)
	}
	if t.ViewSrc != nil {
		b, err := Of(t.ViewSrc)
		if err != nil {
			return fmt.Errorf("view %s: %w", t, err)
		}
		return b.InitView(t)
	}
	if t.Buffer != nil || t.Data != nil {
		return fmt.Errorf("%w: %s", ErrPlaced, t)
	}
	size, err := paddedSize(a.buf.Type(), t)
	if err != nil {
		return err
	}
	if end, carry := bits.Add64(a.offset, size, 0); carry != 0 || end > a.buf.Size() {
		return fmt.Errorf("%w: %s needs %d bytes, %d of %d are left in %s",
			ErrNoSpace, t, size, a.buf.Size()-min(a.offset, a.buf.Size()), a.buf.Size(), a.buf.Name())
	}
	if err := a.buf.AllocTensor(t, a.offset); err != nil {
		return err
	}
	a.offset += size
	return nil
}

// allocSize is the memory t takes in a buffer of typ: typ's AllocSize,
// and never less than the tensor's bytes.
func allocSize(typ Type, t *graph.Tensor) (uint64, error) {
	n, err := tensorBytes(t)
	if err != nil {
		return 0, err
	}
	return max(typ.AllocSize(t), n), nil
}

// paddedSize is allocSize rounded up to typ's alignment.
func paddedSize(typ Type, t *graph.Tensor) (uint64, error) {
	n, err := allocSize(typ, t)
	if err != nil {
		return 0, err
	}
	p := alignUp(n, typ.Alignment())
	if p < n {
		return 0, fmt.Errorf("%w: %s", ErrTooLarge, t)
	}
	return p, nil
}

// Used is how far into the buffer the allocator has placed tensors.
func (a *TensorAllocator) Used() uint64 { return a.offset }

// needsMemory reports whether a context's tensor needs memory of its own
// from an allocator: not a view, and not yet placed.
func needsMemory(t *graph.Tensor) bool {
	return t.ViewSrc == nil && t.Data == nil && t.Buffer == nil
}

// ranges splits ts into consecutive runs whose memory fits typ's MaxSize
// (a single tensor larger than that gets a run of its own), as
// ggml_backend_alloc_ctx_tensors_from_buft does; it returns each run's end
// index and size.
func ranges(typ Type, ts []*graph.Tensor) (ends []int, sizes []uint64, err error) {
	maxSize := typ.MaxSize()
	var cur uint64
	for i, t := range ts {
		var n uint64
		if needsMemory(t) {
			if n, err = paddedSize(typ, t); err != nil {
				return nil, nil, err
			}
		}
		if cur > 0 && (cur+n > maxSize || cur+n < cur) {
			ends, sizes = append(ends, i), append(sizes, cur)
			cur = 0
		}
		cur += n
	}
	if cur > 0 {
		ends, sizes = append(ends, len(ts)), append(sizes, cur)
	}
	return ends, sizes, nil
}

// ContextTensorsSize is the memory AllocContextTensors would allocate for
// the tensors of ctx that have none yet (ggml_backend_alloc_ctx_tensors_from_buft_size).
func ContextTensorsSize(ctx *graph.Context, typ Type) (uint64, error) {
	if ctx == nil || typ == nil {
		return 0, fmt.Errorf("%w: nil context or type", ErrArgument)
	}
	if p, ok := typ.(TensorPlanner); ok {
		return p.TensorsSize(ctx.Tensors()), nil
	}
	_, sizes, err := ranges(typ, ctx.Tensors())
	var total uint64
	for _, s := range sizes {
		total += s
	}
	return total, err
}

// AllocContextTensors places every tensor of ctx that has no memory (the
// context was made without Alloc) in new buffers of typ, and initializes
// views of them (ggml_backend_alloc_ctx_tensors_from_buft): one buffer, or
// a Multi when typ's MaxSize forces a split. Tensors keep their creation
// order. It returns nil when no tensor needs memory. On error nothing stays
// allocated and no tensor stays placed.
func AllocContextTensors(ctx *graph.Context, typ Type) (Buffer, error) {
	if ctx == nil || typ == nil {
		return nil, fmt.Errorf("%w: nil context or type", ErrArgument)
	}
	return AllocTensors(typ, ctx.Tensors())
}

// AllocTensors is AllocContextTensors for a list of tensors: it places, in
// the list's order, every tensor of ts without memory in new buffers of
// typ, and initializes views of them. The conformance suite uses it to
// interleave sentinel tensors with a case's tensors, as test-backend-ops
// does.
func AllocTensors(typ Type, ts []*graph.Tensor) (Buffer, error) {
	if typ == nil {
		return nil, fmt.Errorf("%w: nil type", ErrArgument)
	}
	for _, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("%w: nil tensor", ErrArgument)
		}
	}
	if p, ok := typ.(TensorPlanner); ok {
		return p.AllocTensors(ts)
	}
	ends, sizes, err := ranges(typ, ts)
	if err != nil {
		return nil, err
	}
	var bufs []Buffer
	fail := func(err error) (Buffer, error) {
		var errs []error
		for _, b := range bufs {
			errs = append(errs, b.Reset(), b.Free())
		}
		return nil, errors.Join(append([]error{err}, errs...)...)
	}
	first := 0
	for i, end := range ends {
		b, err := typ.Alloc(sizes[i])
		if err != nil {
			return fail(err)
		}
		bufs = append(bufs, b)
		ta, err := NewTensorAllocator(b)
		if err != nil {
			return fail(err)
		}
		for _, t := range ts[first:end] {
			if err := allocContextTensor(ta, t); err != nil {
				return fail(err)
			}
		}
		first = end
	}
	switch len(bufs) {
	case 0:
		return nil, nil
	case 1:
		return bufs[0], nil
	}
	m, err := NewMulti(bufs...)
	if err != nil {
		return fail(err)
	}
	return m, nil
}

// allocContextTensor places t with ta if it needs memory, and initializes
// it if it is a view of a placed tensor not yet initialized. Views of
// tensors with Go memory (a context made with Alloc) already have Data.
func allocContextTensor(ta *TensorAllocator, t *graph.Tensor) error {
	switch {
	case needsMemory(t):
		return ta.Alloc(t)
	case t.ViewSrc != nil && t.Buffer == nil && t.ViewSrc.Buffer != nil:
		return ta.Alloc(t)
	}
	return nil
}
