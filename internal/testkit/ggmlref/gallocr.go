package ggmlref

import (
	"errors"
	"fmt"

	"github.com/ebitengine/purego"
)

// This file is ggml's graph allocator (ggml-alloc.h) over the CPU buffer
// type, the reference that ggml-go's buffer.GraphAllocator is measured
// against: the same graph must not need a larger compute buffer here than
// there.

// gallocAPI holds the entry points of ggml-alloc and of the CPU buffer type.
// Booleans come back as a byte: only the low byte of a C bool is defined.
type gallocAPI struct {
	cpuBufferType func() uintptr
	buftAlignment func(buft uintptr) uintptr
	buftMaxSize   func(buft uintptr) uintptr
	newGalloc     func(buft uintptr) uintptr
	reserve       func(ga uintptr, g uintptr) uint8
	allocGraph    func(ga uintptr, g uintptr) uint8
	bufferSize    func(ga uintptr, id int32) uintptr
	freeGalloc    func(ga uintptr)
	canInplace    func(op int32) uint8
	ctxAllocSize  func(ctx uintptr, buft uintptr) uintptr
}

// loadGallocAPI resolves the allocator's symbols in libggml-base, where
// ggml-alloc.c and ggml-backend.cpp (with the CPU buffer type) are built.
func (l *Lib) loadGallocAPI() (*gallocAPI, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.libs) == 0 {
		return nil, fmt.Errorf("%w: library closed", ErrNotAvailable)
	}
	base := l.libs[0]
	a := &gallocAPI{}
	for _, f := range []struct {
		name string
		fn   any
	}{
		{"ggml_backend_cpu_buffer_type", &a.cpuBufferType},
		{"ggml_backend_buft_get_alignment", &a.buftAlignment},
		{"ggml_backend_buft_get_max_size", &a.buftMaxSize},
		{"ggml_gallocr_new", &a.newGalloc},
		{"ggml_gallocr_reserve", &a.reserve},
		{"ggml_gallocr_alloc_graph", &a.allocGraph},
		{"ggml_gallocr_get_buffer_size", &a.bufferSize},
		{"ggml_gallocr_free", &a.freeGalloc},
		{"ggml_op_can_inplace", &a.canInplace},
		{"ggml_backend_alloc_ctx_tensors_from_buft_size", &a.ctxAllocSize},
	} {
		sym, err := l.dlsym(base, f.name)
		if err != nil {
			return nil, err
		}
		purego.RegisterFunc(f.fn, sym)
	}
	return a, nil
}

// OpCanInplace returns ggml_op_can_inplace for every op, indexed by op
// number: the ops whose result the graph allocator may place in the memory
// of a source that is not needed afterwards.
func (l *Lib) OpCanInplace() ([]bool, error) {
	a, err := l.loadGallocAPI()
	if err != nil {
		return nil, err
	}
	out := make([]bool, OpCount)
	for op := range out {
		out[op] = a.canInplace(int32(op)) != 0
	}
	return out, nil
}

// CPUBufferTypeLimits returns the alignment and maximum size of ggml's CPU
// buffer type (ggml_backend_cpu_buffer_type).
func (l *Lib) CPUBufferTypeLimits() (alignment, maxSize uint64, err error) {
	a, err := l.loadGallocAPI()
	if err != nil {
		return 0, 0, err
	}
	buft := a.cpuBufferType()
	return uint64(a.buftAlignment(buft)), uint64(a.buftMaxSize(buft)), nil
}

// ContextTensorsSize is ggml_backend_alloc_ctx_tensors_from_buft_size with
// the CPU buffer type: the bytes a buffer needs to hold every tensor of the
// (no_alloc) context that has no memory yet.
func (c *Context) ContextTensorsSize() (uint64, error) {
	a, err := c.l.loadGallocAPI()
	if err != nil {
		return 0, err
	}
	if c.ptr == 0 {
		return 0, errors.New("ggmlref: context already freed")
	}
	var n uintptr
	if err := Catch(func() { n = a.ctxAllocSize(c.ptr, a.cpuBufferType()) }); err != nil {
		return 0, err
	}
	return uint64(n), nil
}

// GraphAllocator is a ggml_gallocr over ggml's CPU buffer type. It places
// the tensors of graphs (built in no_alloc contexts) in one compute buffer
// that it owns, and sets their data pointers.
type GraphAllocator struct {
	api *gallocAPI
	ptr uintptr
}

// NewGraphAllocator is ggml_gallocr_new(ggml_backend_cpu_buffer_type()).
func (l *Lib) NewGraphAllocator() (*GraphAllocator, error) {
	a, err := l.loadGallocAPI()
	if err != nil {
		return nil, err
	}
	p := a.newGalloc(a.cpuBufferType())
	if p == 0 {
		return nil, errors.New("ggmlref: ggml_gallocr_new failed")
	}
	return &GraphAllocator{api: a, ptr: p}, nil
}

// Reserve is ggml_gallocr_reserve: it plans g (the worst case to be
// allocated later) and sizes the compute buffer for it. ggml's asserts come
// back as an *AbortError.
func (a *GraphAllocator) Reserve(g *Graph) error {
	return a.call("ggml_gallocr_reserve", a.api.reserve, g)
}

// AllocGraph is ggml_gallocr_alloc_graph: it places every tensor of g that
// has no memory, planning again first if g needs more than the reserve.
func (a *GraphAllocator) AllocGraph(g *Graph) error {
	return a.call("ggml_gallocr_alloc_graph", a.api.allocGraph, g)
}

func (a *GraphAllocator) call(name string, fn func(uintptr, uintptr) uint8, g *Graph) error {
	if a.ptr == 0 {
		return errors.New("ggmlref: graph allocator already freed")
	}
	if g == nil || g.ptr == 0 {
		return fmt.Errorf("ggmlref: %s of a nil graph", name)
	}
	var ok uint8
	if err := Catch(func() { ok = fn(a.ptr, g.ptr) }); err != nil {
		return err
	}
	if ok == 0 {
		return fmt.Errorf("ggmlref: %s failed", name)
	}
	return nil
}

// BufferSize is ggml_gallocr_get_buffer_size(galloc, 0): the size of the
// compute buffer, 0 before the first reserve.
func (a *GraphAllocator) BufferSize() uint64 {
	if a.ptr == 0 {
		return 0
	}
	return uint64(a.api.bufferSize(a.ptr, 0))
}

// Free is ggml_gallocr_free: the allocator and its buffer are released, and
// the data pointers of the tensors it placed are left dangling.
func (a *GraphAllocator) Free() {
	if a.ptr != 0 {
		a.api.freeGalloc(a.ptr)
		a.ptr = 0
	}
}
