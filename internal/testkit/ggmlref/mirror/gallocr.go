package mirror

import (
	"fmt"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
)

// GallocrSize copies g, without data, into a ggml context and returns the
// size of the compute buffer ggml_gallocr_reserve plans for it on ggml's
// CPU buffer type: the yardstick for buffer.GraphAllocator.
func GallocrSize(l *ggmlref.Lib, g *graph.Graph) (uint64, error) {
	size, _, err := GallocrPlacement(l, g)
	return size, err
}

// GallocrPlacement is GallocrSize, and where ggml placed each tensor of g
// (the address of its first byte; the memory is gone on return).
func GallocrPlacement(l *ggmlref.Lib, g *graph.Graph) (uint64, map[*graph.Tensor]uintptr, error) {
	ctx, cg, c, err := Structure(l, g)
	if err != nil {
		return 0, nil, err
	}
	defer ctx.Free()
	ga, err := l.NewGraphAllocator()
	if err != nil {
		return 0, nil, err
	}
	defer ga.Free()
	if err := ga.Reserve(cg); err != nil {
		return 0, nil, err
	}
	if err := ga.AllocGraph(cg); err != nil {
		return 0, nil, err
	}
	at := map[*graph.Tensor]uintptr{}
	for t, ct := range c {
		at[t] = uintptr(ct.Data)
	}
	return ga.BufferSize(), at, nil
}

// Structure copies g's structure (types, shapes, strides, operations,
// parameters, input/output flags, sources, views, which tensors have
// memory) into a new no_alloc ggml context and expands its nodes in g's
// order into a ggml graph; c maps g's tensors to their copies. The caller
// frees ctx.
func Structure(l *ggmlref.Lib, g *graph.Graph) (ctx *ggmlref.Context, cg *ggmlref.Graph, c map[*graph.Tensor]*ggmlref.Tensor, err error) {
	order := Reachable(g)
	ctx, err = l.NewContext(uint64(len(order)+1)*l.TensorOverhead()+l.GraphOverhead(len(order)+1)+4096, true)
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) (*ggmlref.Context, *ggmlref.Graph, map[*graph.Tensor]*ggmlref.Tensor, error) {
		ctx.Free()
		return nil, nil, nil, err
	}
	c = map[*graph.Tensor]*ggmlref.Tensor{}
	for _, t := range order {
		ct, err := ctx.NewTensor(uint32(t.Type), t.Ne)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", t, err))
		}
		c[t] = ct
	}
	// Tensors with memory of their own (weights in a buffer of theirs, Go
	// memory) get some ggml memory too, so ggml leaves them alone as ours
	// does; only its address matters, nothing reads or writes it.
	var elsewhere unsafe.Pointer
	for _, t := range order {
		if t.ViewSrc == nil && (t.Data != nil || t.Buffer != nil) && elsewhere == nil {
			if elsewhere, err = ctx.NewBuffer(64); err != nil {
				return fail(err)
			}
		}
	}
	for _, t := range order {
		ct := c[t]
		if t.ViewSrc == nil && (t.Data != nil || t.Buffer != nil) {
			ct.Data = elsewhere
		}
		ct.Nb = t.Nb
		ct.Op = int32(t.Op)
		ct.OpParams = t.Params
		ct.Flags = int32(t.Flags & (graph.FlagInput | graph.FlagOutput))
		for i, s := range t.Src {
			if s != nil {
				ct.Src[i] = c[s]
			}
		}
		if t.ViewSrc != nil {
			ct.ViewSrc, ct.ViewOffs = c[t.ViewSrc], t.ViewOffs
		}
		ct.SetName(t.Name)
	}
	cg, err = ctx.NewGraph(len(order) + 1)
	if err != nil {
		return fail(err)
	}
	for _, n := range g.Nodes {
		if err := cg.BuildForwardExpand(c[n]); err != nil {
			return fail(err)
		}
	}
	if cg.NNodes() != len(g.Nodes) {
		return fail(fmt.Errorf("ggml built %d nodes from %d", cg.NNodes(), len(g.Nodes)))
	}
	for i, n := range g.Nodes {
		if cg.Node(i) != c[n] {
			return fail(fmt.Errorf("ggml ordered node %d (%s) differently", i, n))
		}
	}
	return ctx, cg, c, nil
}
