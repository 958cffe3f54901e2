package graph

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Errors recorded by builders. A Context keeps the first one (see Err), so
// a chain of builder calls reads like ggml's and is checked once.
var (
	ErrShape    = errors.New("graph: bad shape")
	ErrType     = errors.New("graph: bad type")
	ErrArgument = errors.New("graph: bad argument")
	ErrNil      = errors.New("graph: nil tensor")
	// ErrNoSpace reports a tensor whose memory would take an Alloc
	// Context past its MemSize.
	ErrNoSpace = errors.New("graph: not enough context memory")
)

// DefaultMemSize is the memory an Alloc Context gives its tensors in total
// when ContextOptions.MemSize is 0: 4 GiB. A larger request is refused
// with ErrNoSpace instead of letting the Go runtime die of an allocation
// the machine cannot back. Weights of real models belong in buffers
// (package buffer), whose memory is outside the Go heap.
const DefaultMemSize = 4 << 30

// Context creates tensors and records the first error a builder meets.
// After an error every builder returns nil, and Err and Build report it.
// A Context is not safe for concurrent use.
type Context struct {
	alloc   bool
	memSize uint64 // the limit of used
	used    uint64 // bytes of Data the Context allocated
	err     error
	tensors []*Tensor
}

// ContextOptions configure NewContext.
type ContextOptions struct {
	// Alloc gives every new tensor that is not a view zeroed host memory
	// of its own (Tensor.Data), as ggml_init with no_alloc=false. Without
	// it tensors are descriptions, to be placed by an allocator.
	Alloc bool
	// MemSize bounds the bytes Alloc gives tensors in total, as ggml_init's
	// mem_size bounds its arena; a tensor that would pass it is refused
	// with ErrNoSpace. 0 means DefaultMemSize. Without Alloc it is unused.
	MemSize uint64
}

// NewContext returns an empty Context.
func NewContext(opts ContextOptions) *Context {
	c := &Context{alloc: opts.Alloc, memSize: opts.MemSize}
	if c.memSize == 0 {
		c.memSize = DefaultMemSize
	}
	return c
}

// Err returns the first error recorded by a builder, or nil.
func (c *Context) Err() error { return c.err }

// Tensors returns every tensor the Context created, in creation order.
func (c *Context) Tensors() []*Tensor { return c.tensors }

// Fail records err as the Context's error unless one is already recorded.
// Builders outside this package use it to report their own checks.
func (c *Context) Fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// failf records an error wrapping kind, naming the builder.
func (c *Context) failf(kind error, builder, format string, args ...any) {
	c.Fail(fmt.Errorf("%w: %s: %s", kind, builder, fmt.Sprintf(format, args...)))
}

// ok reports whether a builder may go on: no error so far and no nil input.
func (c *Context) ok(builder string, ts ...*Tensor) bool {
	if c.err != nil {
		return false
	}
	for i, t := range ts {
		if t == nil {
			c.Fail(fmt.Errorf("%w: %s: argument %d", ErrNil, builder, i))
			return false
		}
	}
	return true
}

// newTensor is ggml_new_tensor_impl: a dense tensor of type typ and shape
// ne, viewing viewSrc at offs when viewSrc is set.
func (c *Context) newTensor(builder string, typ quant.Type, ne [MaxDims]int64, viewSrc *Tensor, offs uint64) *Tensor {
	if err := typ.Check(); err != nil {
		c.failf(ErrType, builder, "%v", err)
		return nil
	}
	for i, n := range ne {
		if n < 0 {
			c.failf(ErrShape, builder, "ne[%d] = %d is negative", i, n)
			return nil
		}
	}
	nb, err := denseStrides(typ, ne)
	if err != nil {
		c.failf(ErrShape, builder, "%v", err)
		return nil
	}
	t := &Tensor{Type: typ, Ne: ne, Nb: nb}
	if viewSrc != nil {
		if viewSrc.ViewSrc != nil {
			var carry uint64
			if offs, carry = bits.Add64(offs, viewSrc.ViewOffs, 0); carry != 0 {
				c.failf(ErrShape, builder, "view offset overflows")
				return nil
			}
			viewSrc = viewSrc.ViewSrc
		}
		t.ViewSrc, t.ViewOffs = viewSrc, offs
		if !c.viewFits(builder, t) {
			return nil
		}
		t.Buffer = viewSrc.Buffer
		t.Data = viewData(viewSrc, offs, t.NBytes())
	} else if c.alloc {
		n := t.NBytes()
		if n > c.memSize-c.used {
			c.failf(ErrNoSpace, builder, "%s needs %d bytes; %d of the context's %d are left (ContextOptions.MemSize)",
				t, n, c.memSize-c.used, c.memSize)
			return nil
		}
		c.used += n
		t.Data = make([]byte, n)
	}
	c.tensors = append(c.tensors, t)
	return t
}

// viewData is the slice of src's memory a view at offs of size bytes covers,
// or nil when src has none. An empty view has empty memory wherever it is
// (ggml lets it lie past its source's end).
func viewData(src *Tensor, offs, size uint64) []byte {
	n := uint64(len(src.Data))
	if src.Data == nil {
		return nil
	}
	if size == 0 {
		return src.Data[:0:0]
	}
	if offs > n || size > n-offs {
		return nil
	}
	return src.Data[offs : offs+size : offs+size]
}

// NewTensor creates a tensor of type typ with up to four dimensions
// (innermost first; missing ones are 1).
func (c *Context) NewTensor(typ quant.Type, ne ...int64) *Tensor {
	if !c.ok("NewTensor") {
		return nil
	}
	if len(ne) < 1 || len(ne) > MaxDims {
		c.failf(ErrShape, "NewTensor", "%d dimensions, want 1 to %d", len(ne), MaxDims)
		return nil
	}
	return c.newTensor("NewTensor", typ, dims(ne), nil, 0)
}

// dims pads a dimension list to MaxDims with ones.
func dims(ne []int64) [MaxDims]int64 {
	out := [MaxDims]int64{1, 1, 1, 1}
	copy(out[:], ne)
	return out
}

// SetName names t (at most MaxName bytes, as ggml's fixed field) and returns it.
func (c *Context) SetName(t *Tensor, name string) *Tensor {
	if t != nil {
		t.setName(name)
	}
	return t
}

// setName stores name cut to MaxName bytes, as ggml_set_name and
// ggml_format_name fill the fixed-size field: derived names such as
// "x (view) (view)" must not grow past what ggml keeps.
func (t *Tensor) setName(name string) {
	if len(name) > MaxName {
		name = name[:MaxName]
	}
	t.Name = name
}

// SetInput marks t as a graph input and returns it. It is a function, not
// a method of the Context, so that it wraps any builder call
// (SetInput(c.NewTensor(...))) and passes a nil (failed) tensor through.
func SetInput(t *Tensor) *Tensor {
	if t != nil {
		t.Flags |= FlagInput
	}
	return t
}

// SetOutput marks t as a graph output and returns it. As ggml_set_output,
// it marks the tensor t views too: an allocator must keep that memory.
func SetOutput(t *Tensor) *Tensor {
	for cur := t; cur != nil; cur = cur.ViewSrc {
		cur.Flags |= FlagOutput
	}
	return t
}

// NewOp creates the result of op with sources srcs, of type typ and shape
// ne, with op parameters p. It is the building block of every operation
// builder, exported so device packages and tests can build operations the
// typed builders do not cover; it performs no operation-specific checks.
func (c *Context) NewOp(op ops.Op, typ quant.Type, ne [MaxDims]int64, p ops.Params, srcs ...*Tensor) *Tensor {
	name := op.String()
	if !c.ok(name, srcs...) {
		return nil
	}
	if !op.Valid() || len(srcs) > MaxSrc {
		c.failf(ErrArgument, name, "invalid op %d or %d sources", int32(op), len(srcs))
		return nil
	}
	t := c.newTensor(name, typ, ne, nil, 0)
	if t == nil {
		return nil
	}
	t.Op, t.Params = op, p
	copy(t.Src[:], srcs)
	return t
}

// newInplace creates the result of an in-place op on a: a view of all of a
// with op set, as ggml_view_tensor followed by setting the op.
func (c *Context) newInplace(op ops.Op, a *Tensor, p ops.Params, srcs ...*Tensor) *Tensor {
	t := c.ViewTensor(a)
	if t == nil {
		return nil
	}
	t.Op, t.Params = op, p
	copy(t.Src[:], srcs)
	return t
}

// ViewTensor is a view of all of a with a's strides (ggml_view_tensor).
func (c *Context) ViewTensor(a *Tensor) *Tensor {
	if !c.ok("ViewTensor", a) {
		return nil
	}
	// The same memory as a, so nothing to check; a dense tensor of a's
	// shape may not even exist (a transposed quantized tensor has rows of
	// partial blocks).
	t := &Tensor{Type: a.Type, Ne: a.Ne, Nb: a.Nb, ViewSrc: a, Buffer: a.Buffer, Data: a.Data}
	if a.ViewSrc != nil {
		t.ViewSrc, t.ViewOffs = a.ViewSrc, a.ViewOffs
	}
	t.setName(a.Name + " (view)")
	c.tensors = append(c.tensors, t)
	return t
}

// view is ggml_view_impl: a VIEW of a with shape ne at byte offset offs,
// dense strides to be overwritten by the caller.
func (c *Context) view(builder string, a *Tensor, ne [MaxDims]int64, offs uint64) *Tensor {
	if !c.ok(builder, a) {
		return nil
	}
	t := c.newTensor(builder, a.Type, ne, a, offs)
	if t == nil {
		return nil
	}
	t.Op = ops.View
	t.Src[0] = a
	t.setName(a.Name + " (view)")
	// ggml stores the offset as a size_t in the first two slots.
	t.Params.SetI32(0, int32(uint32(offs)))
	t.Params.SetI32(1, int32(uint32(offs>>32)))
	return t
}

// View1D views ne0 elements of a from byte offset offs.
func (c *Context) View1D(a *Tensor, ne0 int64, offs uint64) *Tensor {
	return c.view("View1D", a, [MaxDims]int64{ne0, 1, 1, 1}, offs)
}

// View2D views ne0 x ne1 elements of a with row stride nb1 from byte offset offs.
func (c *Context) View2D(a *Tensor, ne0, ne1 int64, nb1, offs uint64) *Tensor {
	t := c.view("View2D", a, [MaxDims]int64{ne0, ne1, 1, 1}, offs)
	if t == nil {
		return nil
	}
	t.Nb[1] = nb1
	t.Nb[2] = nb1 * uint64(ne1)
	t.Nb[3] = t.Nb[2]
	return c.restride("View2D", t)
}

// View3D views ne0 x ne1 x ne2 elements of a with strides nb1, nb2 from byte offset offs.
func (c *Context) View3D(a *Tensor, ne0, ne1, ne2 int64, nb1, nb2, offs uint64) *Tensor {
	t := c.view("View3D", a, [MaxDims]int64{ne0, ne1, ne2, 1}, offs)
	if t == nil {
		return nil
	}
	t.Nb[1], t.Nb[2] = nb1, nb2
	t.Nb[3] = nb2 * uint64(ne2)
	return c.restride("View3D", t)
}

// View4D views ne0 x ne1 x ne2 x ne3 elements of a with strides nb1, nb2, nb3 from byte offset offs.
func (c *Context) View4D(a *Tensor, ne0, ne1, ne2, ne3 int64, nb1, nb2, nb3, offs uint64) *Tensor {
	t := c.view("View4D", a, [MaxDims]int64{ne0, ne1, ne2, ne3}, offs)
	if t == nil {
		return nil
	}
	t.Nb[1], t.Nb[2], t.Nb[3] = nb1, nb2, nb3
	return c.restride("View4D", t)
}

// restride finishes a view whose strides were just set: it must stay inside
// its source (ggml does not check this; an overrun here is an error, not a
// read past the buffer), and its Data follows the new extent.
func (c *Context) restride(builder string, t *Tensor) *Tensor {
	if !c.viewFits(builder, t) {
		c.tensors = c.tensors[:len(c.tensors)-1] // drop t, which view registered
		return nil
	}
	t.Data = viewData(t.ViewSrc, t.ViewOffs, t.NBytes())
	return t
}

// viewFits checks that a strided view stays inside its source's memory.
// Strides so large that the extent overflows do not fit either.
func (c *Context) viewFits(builder string, t *Tensor) bool {
	n, ok := t.nbytes()
	src := t.ViewSrc.NBytes()
	if !ok || n != 0 && (t.ViewOffs > src || n > src-t.ViewOffs) {
		c.failf(ErrShape, builder, "view of %d bytes at offset %d exceeds its source's %d bytes", n, t.ViewOffs, src)
		return false
	}
	return true
}

// Reshape gives a, which must be contiguous, the shape ne (same number of
// elements), as ggml_reshape_1d..4d.
func (c *Context) Reshape(a *Tensor, ne ...int64) *Tensor {
	if !c.ok("Reshape", a) {
		return nil
	}
	if len(ne) < 1 || len(ne) > MaxDims {
		c.failf(ErrShape, "Reshape", "%d dimensions, want 1 to %d", len(ne), MaxDims)
		return nil
	}
	shape := dims(ne)
	if !a.IsContiguous() {
		c.failf(ErrShape, "Reshape", "%s is not contiguous", a)
		return nil
	}
	if shape[0]*shape[1]*shape[2]*shape[3] != a.NElements() {
		c.failf(ErrShape, "Reshape", "%v has a different element count than %s", shape, a)
		return nil
	}
	t := c.newTensor("Reshape", a.Type, shape, a, 0)
	if t == nil {
		return nil
	}
	t.Op = ops.Reshape
	t.Src[0] = a
	t.setName(a.Name + " (reshaped)")
	return t
}

// ReshapeAs gives a the shape of b.
func (c *Context) ReshapeAs(a, b *Tensor) *Tensor {
	if !c.ok("ReshapeAs", a, b) {
		return nil
	}
	return c.Reshape(a, b.Ne[:]...)
}

// Permute moves dimension i of a to position axes[i], as ggml_permute.
func (c *Context) Permute(a *Tensor, ax0, ax1, ax2, ax3 int) *Tensor {
	if !c.ok("Permute", a) {
		return nil
	}
	axes := [MaxDims]int{ax0, ax1, ax2, ax3}
	var seen [MaxDims]bool
	for _, ax := range axes {
		if ax < 0 || ax >= MaxDims || seen[ax] {
			c.failf(ErrArgument, "Permute", "axes %v are not a permutation of 0..3", axes)
			return nil
		}
		seen[ax] = true
	}
	t := c.ViewTensor(a)
	if t == nil {
		return nil
	}
	for i, ax := range axes {
		t.Ne[ax], t.Nb[ax] = a.Ne[i], a.Nb[i]
		t.Params.SetI32(i, int32(ax))
	}
	t.Op = ops.Permute
	t.Src[0] = a
	t.setName(a.Name + " (permuted)")
	return t
}

// Transpose swaps the first two dimensions of a (a view).
func (c *Context) Transpose(a *Tensor) *Tensor {
	t := c.ViewTensor(a)
	if t == nil {
		return nil
	}
	t.Ne[0], t.Ne[1] = a.Ne[1], a.Ne[0]
	t.Nb[0], t.Nb[1] = a.Nb[1], a.Nb[0]
	t.Op = ops.Transpose
	t.Src[0] = a
	t.setName(a.Name + " (transposed)")
	return t
}

// Cont makes a contiguous copy of a, optionally with a new shape of the
// same element count (ggml_cont, ggml_cont_1d..4d).
func (c *Context) Cont(a *Tensor, ne ...int64) *Tensor {
	if !c.ok("Cont", a) {
		return nil
	}
	shape := a.Ne
	if len(ne) > 0 {
		if len(ne) > MaxDims {
			c.failf(ErrShape, "Cont", "%d dimensions", len(ne))
			return nil
		}
		shape = dims(ne)
		if shape[0]*shape[1]*shape[2]*shape[3] != a.NElements() {
			c.failf(ErrShape, "Cont", "%v has a different element count than %s", shape, a)
			return nil
		}
	}
	t := c.NewOp(ops.Cont, a.Type, shape, ops.Params{}, a)
	if t != nil {
		t.setName(a.Name + " (cont)")
	}
	return t
}

// Cpy copies a into b (converting the type) and returns a view of b that
// depends on the copy, as ggml_cpy.
func (c *Context) Cpy(a, b *Tensor) *Tensor {
	if !c.ok("Cpy", a, b) {
		return nil
	}
	if a.NElements() != b.NElements() {
		c.failf(ErrShape, "Cpy", "%s and %s have different element counts", a, b)
		return nil
	}
	t := c.ViewTensor(b)
	if t == nil {
		return nil
	}
	if b.Name != "" {
		t.setName(b.Name + " (copy of " + a.Name + ")")
	} else {
		t.setName(a.Name + " (copy)")
	}
	t.Op = ops.Cpy
	t.Src[0], t.Src[1] = a, b
	return t
}

// Dup makes a copy of a with the same shape and type (ggml_dup).
func (c *Context) Dup(a *Tensor) *Tensor {
	if !c.ok("Dup", a) {
		return nil
	}
	return c.NewOp(ops.Dup, a.Type, a.Ne, ops.Params{}, a)
}
