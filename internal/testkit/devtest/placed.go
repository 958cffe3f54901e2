package devtest

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/graph"
)

// placedRec is a graph as the first GraphComputePlaced with its id saw
// it: the graph, its node list and the bytes of every tensor it reaches.
type placedRec struct {
	g       *graph.Graph
	nodes   []*graph.Tensor
	tensors []*graph.Tensor
	raw     []byte
}

// tensorBytes is t's struct as bytes, pointers included (sources, view
// source, buffer, data, name, extra): equal bytes are an unchanged tensor.
func tensorBytes(t *graph.Tensor) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(t)), unsafe.Sizeof(*t))
}

// recordPlaced records g and every tensor reachable from its nodes through
// Src and ViewSrc.
func recordPlaced(g *graph.Graph) *placedRec {
	r := &placedRec{g: g, nodes: g.Nodes}
	seen := map[*graph.Tensor]bool{}
	var walk func(t *graph.Tensor)
	walk = func(t *graph.Tensor) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		r.tensors = append(r.tensors, t)
		r.raw = append(r.raw, tensorBytes(t)...)
		for _, s := range t.Src {
			walk(s)
		}
		walk(t.ViewSrc)
	}
	for _, n := range g.Nodes {
		walk(n)
	}
	return r
}

// broken says how g breaks the promise r recorded, or "".
func (r *placedRec) broken(g *graph.Graph) string {
	if g != r.g {
		return "another graph"
	}
	if len(g.Nodes) != len(r.nodes) || (len(g.Nodes) > 0 && &g.Nodes[0] != &r.nodes[0]) {
		return "another node list"
	}
	now := recordPlaced(g)
	if !slices.Equal(now.tensors, r.tensors) {
		return "other tensors reachable"
	}
	size := int(unsafe.Sizeof(graph.Tensor{}))
	for i, t := range r.tensors {
		if string(now.raw[i*size:(i+1)*size]) != string(r.raw[i*size:(i+1)*size]) {
			return fmt.Sprintf("tensor %q changed", t.Name)
		}
	}
	return ""
}

// GraphComputePlaced computes g as GraphCompute does, and checks the
// caller's promise (backend.PlacedGraphComputer) instead of trusting it:
// a later call with an id must pass the graph of the first, with the same
// node list and every tensor it reaches unchanged, or it fails. So every
// test computing through a scheduler on this device shows that the
// scheduler never promises what is not true.
func (b *Backend) GraphComputePlaced(g *graph.Graph, id backend.PlacementID) error {
	if id == 0 {
		return fmt.Errorf("%w: placement id 0", backend.ErrArgument)
	}
	b.mu.Lock()
	b.placements = append(b.placements, id)
	r, ok := b.placed[id]
	b.mu.Unlock()
	if ok {
		if why := r.broken(g); why != "" {
			return fmt.Errorf("devtest: %s: placement %d broken: %s since its first compute", b.Name(), id, why)
		}
	} else if g != nil {
		b.mu.Lock()
		if b.placed == nil {
			b.placed = map[backend.PlacementID]*placedRec{}
		}
		b.placed[id] = recordPlaced(g)
		b.mu.Unlock()
	}
	return b.compute(g)
}

// Placements lists the id of every graph computation, in order: the id
// GraphComputePlaced was given, 0 for GraphCompute.
func (b *Backend) Placements() []backend.PlacementID {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.placements)
}
