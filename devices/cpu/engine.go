package cpu

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/sentinel"
	"github.com/ggml-go/ggml/ops"
)

// ErrUnsupported reports an operation (with its types and layout) the CPU
// device cannot compute. errors.Is also matches it to
// backend.ErrUnsupported (errors.ErrUnsupported).
var ErrUnsupported error = sentinel.New("cpu: unsupported operation", errors.ErrUnsupported)

// ErrNoData reports a tensor without host memory.
var ErrNoData = errors.New("cpu: tensor has no host memory")

// Options configure an Engine.
type Options struct {
	// Threads is the number of threads an operation is split across; 0
	// means runtime.GOMAXPROCS(0).
	Threads int
	// Generic makes the matrix products use the portable Go kernels
	// instead of the processor's assembly ones. The vector primitives
	// are the process's: EnvGeneric or the purego tag switch those.
	Generic bool
}

// Engine computes graphs on the CPU. It owns a pool of worker goroutines
// that live until Close; an Engine computes one graph at a time.
//
// It is what the CPU device's backend runs on. Programs normally start
// that backend (backend.Init with "CPU") instead; an Engine is for code
// that computes host tensors outside the backend API: device test doubles
// checking their results, the conformance suite, tools computing single
// nodes (ComputeNode).
type Engine struct {
	pool *pool
	kset *kernelSet
	// work is the scratch memory of the last operation that asked for
	// some, reused (cleared) by the next.
	work []byte
}

// New returns an Engine with its worker pool started.
func New(opts Options) *Engine {
	n := opts.Threads
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	e := &Engine{pool: newPool(n), kset: selectKernels(opts)}
	e.pool.setKernels(e.kset)
	return e
}

// Kernels names the kernel set the matrix products use: "generic", or the
// instruction sets of the assembly ones (such as "avx2").
func (e *Engine) Kernels() string { return e.kset.name }

// Threads is the number of threads each operation is split across.
func (e *Engine) Threads() int { return e.pool.n }

// Close stops the worker pool. The Engine must not be used afterwards.
func (e *Engine) Close() { e.pool.close() }

// Compute runs every node of g in order. Each node's memory (Tensor.Data)
// and its sources' must be host memory; leafs keep their values.
func (e *Engine) Compute(g *graph.Graph) (err error) {
	// The nodes that run on this thread alone are not guarded one by one:
	// one recover here turns their panics into errors.
	defer func() {
		if r := recover(); r != nil {
			err = kernelError(0, r)
		}
	}()
	for _, t := range g.Nodes {
		if err := e.computeNode(t, true); err != nil {
			return err
		}
	}
	return nil
}

// ComputeNode computes one tensor from its sources.
func (e *Engine) ComputeNode(t *graph.Tensor) error { return e.computeNode(t, false) }

// computeNode computes t; guarded says the caller recovers a panic of an
// operation run on the calling thread alone.
func (e *Engine) computeNode(t *graph.Tensor, guarded bool) error {
	if t.IsEmpty() {
		return nil
	}
	k := kernelFor(t)
	if k == nil || (k.supports != nil && !k.supports(t)) {
		return fmt.Errorf("%w: %s", ErrUnsupported, describe(t))
	}
	if empty(t.Op) {
		return nil // the memory already holds the result
	}
	small, err := scanSources(t)
	if err != nil {
		return err
	}
	nth := e.pool.n
	if small || (k.busy != nil && k.busy(t) < 2) {
		nth = 1
	}
	var work []byte
	if k.workSize != nil {
		n := k.workSize(t, nth)
		if n > cap(e.work) {
			e.work = make([]byte, n)
		}
		work = e.work[:n]
		clear(work)
	}
	if nth == 1 && guarded {
		e.pool.runUnguarded(k.compute, t, work)
		return nil
	}
	return e.pool.run(k.compute, t, work, nth)
}

// serialBelow is the size, in elements, under which an operation runs on
// the calling thread alone: handing a few hundred nanoseconds of work to
// the other threads and waiting for them costs more than it saves, and
// with fewer rows than threads most of them would have nothing to do.
const serialBelow = 1024

// scanSources checks that t and its sources have host memory, or are
// repacked weights read only as repackedUseOK allows, and reports whether
// all of them have fewer than serialBelow elements: one pass over the
// sources, as this runs for every node of every graph.
func scanSources(t *graph.Tensor) (small bool, err error) {
	if t.Data == nil {
		if t.Op != ops.None && inRepackBuffer(t) {
			return false, fmt.Errorf("%w: %s", ErrUnsupported, describe(t))
		}
		if t.NBytes() > 0 {
			return false, fmt.Errorf("%w: %s", ErrNoData, t)
		}
	}
	small = t.NElements() < serialBelow
	for i, s := range &t.Src {
		if s == nil {
			continue
		}
		// A repacked weight has no Tensor.Data; its product finds its
		// bytes through its buffer.
		if s.Data == nil {
			if inRepackBuffer(s) {
				if t.Op != ops.MulMat || i != 0 {
					return false, fmt.Errorf("%w: %s", ErrUnsupported, describe(t))
				}
			} else if s.NBytes() > 0 {
				return false, fmt.Errorf("%w: source %s of %s", ErrNoData, s, t)
			}
		}
		small = small && s.NElements() < serialBelow
	}
	return small, nil
}

// SupportsOp reports whether the CPU device computes t exactly: its
// operation, types and layout. It is the device's supports_op.
func SupportsOp(t *graph.Tensor) bool {
	k := kernelFor(t)
	if k == nil || !repackedUseOK(t) {
		return false
	}
	return k.supports == nil || k.supports(t)
}

// repackedUseOK reports whether t reads a repacked weight (repack.go) only
// where a kernel knows its layout: as the src0 of a MUL_MAT. Views of one
// are refused too.
func repackedUseOK(t *graph.Tensor) bool {
	if t.Op != ops.None && inRepackBuffer(t) {
		return false
	}
	// By pointer, and host memory ruled out before the call: this runs
	// for every node, over every source slot.
	for i, s := range &t.Src {
		if s != nil && s.Data == nil && inRepackBuffer(s) && (t.Op != ops.MulMat || i != 0) {
			return false
		}
	}
	return true
}

func kernelFor(t *graph.Tensor) *kernel {
	if !t.Op.Valid() {
		return nil
	}
	k := &kernels[t.Op]
	if !empty(t.Op) && k.compute == nil {
		return nil
	}
	return k
}

// empty reports whether op computes nothing: a leaf, or a view of its
// source's memory (ggml_op_is_empty).
func empty(op ops.Op) bool { return op == ops.None || op.IsView() }

// describe names an operation with its types and shapes for errors.
func describe(t *graph.Tensor) string {
	s := fmt.Sprintf("%s %s [%d %d %d %d]", t.Op, t.Type, t.Ne[0], t.Ne[1], t.Ne[2], t.Ne[3])
	switch t.Op {
	case ops.Unary:
		s += " " + t.Params.Unary().String()
	case ops.GLU:
		s += " " + ops.GluOp(t.Params.I32(0)).String()
	}
	for i, src := range t.Src {
		if src != nil {
			s += fmt.Sprintf(" src%d=%s[%d %d %d %d]", i, src.Type, src.Ne[0], src.Ne[1], src.Ne[2], src.Ne[3])
		}
	}
	return s
}
