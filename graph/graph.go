package graph

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/ggml-go/ggml/ops"
)

// Graph is a forward computation: Nodes in an order where every tensor
// comes after its sources, and Leafs, the tensors it reads but does not
// compute (constants, weights, inputs). It follows ggml_cgraph.
type Graph struct {
	Nodes []*Tensor
	Leafs []*Tensor
	// useCounts[t] is how many times t is a source of a node in the graph.
	useCounts map[*Tensor]int
	index     map[*Tensor]int
}

// NewGraph returns an empty graph to Expand. The zero Graph is empty too.
func NewGraph() *Graph {
	return &Graph{useCounts: map[*Tensor]int{}, index: map[*Tensor]int{}}
}

// Build returns the graph computing outputs, or the Context's first error.
// Each output is expanded in turn, as repeated ggml_build_forward_expand.
// At least one output is needed (ErrArgument otherwise: a forgotten
// argument); NewGraph is the empty graph to expand by hand.
func (c *Context) Build(outputs ...*Tensor) (*Graph, error) {
	if c.err != nil {
		return nil, c.err
	}
	if len(outputs) == 0 {
		return nil, fmt.Errorf("%w: Build: no outputs", ErrArgument)
	}
	g := NewGraph()
	for i, t := range outputs {
		if t == nil {
			return nil, fmt.Errorf("%w: Build: output %d", ErrNil, i)
		}
		if err := g.Expand(t); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Expand adds t and every tensor it depends on that the graph lacks, in
// ggml_build_forward_expand's depth-first order (sources left to right).
// Tensors with an operation become nodes and get FlagCompute; the rest
// become leafs. Unnamed tensors are named "node_N" / "leaf_N" as in ggml.
// A nil t is refused with ErrNil and leaves the graph as it was.
func (g *Graph) Expand(t *Tensor) error {
	type frame struct {
		t    *Tensor
		next int
	}
	if t == nil {
		return fmt.Errorf("%w: Expand", ErrNil)
	}
	if g.index == nil {
		g.index, g.useCounts = map[*Tensor]int{}, map[*Tensor]int{}
	}
	// An explicit stack: graphs of many thousands of nodes would otherwise
	// recurse as deep as the longest chain.
	if _, seen := g.index[t]; seen {
		g.markCompute(t)
		return nil
	}
	if t.Op != ops.None {
		t.Flags |= FlagCompute
	}
	g.index[t] = -1
	stack := []frame{{t: t}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < MaxSrc {
			src := f.t.Src[f.next]
			f.next++
			if src == nil {
				continue
			}
			g.useCounts[src]++
			if _, seen := g.index[src]; seen {
				g.markCompute(src)
				continue
			}
			if src.Op != ops.None {
				src.Flags |= FlagCompute
			}
			g.index[src] = -1
			stack = append(stack, frame{t: src})
			continue
		}
		g.add(f.t)
		stack = stack[:len(stack)-1]
	}
	return nil
}

// markCompute sets FlagCompute on an already visited tensor's sources that
// lack it, as ggml does when a tensor is expanded again.
func (g *Graph) markCompute(t *Tensor) {
	for _, src := range t.Src {
		if src != nil && src.Op != ops.None && src.Flags&FlagCompute == 0 {
			src.Flags |= FlagCompute
			g.markCompute(src)
		}
	}
}

func (g *Graph) add(t *Tensor) {
	if t.Op == ops.None && t.Flags&FlagParam == 0 {
		if t.Name == "" {
			t.Name = fmt.Sprintf("leaf_%d", len(g.Leafs))
		}
		g.index[t] = len(g.Leafs)
		g.Leafs = append(g.Leafs, t)
		return
	}
	if t.Name == "" {
		t.Name = fmt.Sprintf("node_%d", len(g.Nodes))
	}
	g.index[t] = len(g.Nodes)
	g.Nodes = append(g.Nodes, t)
}

// UseCount is how many times t is a source of a tensor in the graph.
func (g *Graph) UseCount(t *Tensor) int { return g.useCounts[t] }

// Contains reports whether t is a node or leaf of the graph.
func (g *Graph) Contains(t *Tensor) bool { _, ok := g.index[t]; return ok }

// View returns the graph of nodes [i0, i1), as ggml_graph_view: it shares
// the tensors and g's use counts, has no leafs, and is meant for computing
// a slice of g. The use counts stay g's because a node used by a later
// slice must not be treated as used only where this slice uses it (for
// instance, fused away).
func (g *Graph) View(i0, i1 int) (*Graph, error) {
	if i0 < 0 || i1 > len(g.Nodes) || i0 > i1 {
		return nil, fmt.Errorf("%w: graph view [%d, %d) of %d nodes", ErrArgument, i0, i1, len(g.Nodes))
	}
	v := &Graph{Nodes: g.Nodes[i0:i1:i1], useCounts: g.useCounts, index: map[*Tensor]int{}}
	for i, n := range v.Nodes {
		v.index[n] = i
	}
	return v, nil
}

// Hash is a structural hash of the graph, usable as a cache key for
// compiled or planned graphs: it covers every node's and leaf's type,
// shape, strides, op, parameters, flags and view offset, and the positions
// of their sources, but neither data nor names nor buffers. Sources outside
// the graph (in a View) count by their type, shape and strides and by
// which of them are the same tensor.
func (g *Graph) Hash() uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	layout := func(t *Tensor) {
		put(uint64(t.Type))
		for i := range MaxDims {
			put(uint64(t.Ne[i]))
			put(t.Nb[i])
		}
	}
	outside := map[*Tensor]uint64{}
	pos := func(t *Tensor) uint64 {
		if t == nil {
			return 0
		}
		i, ok := g.index[t]
		if !ok {
			n, seen := outside[t]
			if !seen {
				n = uint64(len(outside))
				outside[t] = n
				layout(t)
			}
			return 1<<62 | n
		}
		if t.Op == ops.None && t.Flags&FlagParam == 0 {
			return 1<<61 | uint64(i)
		}
		return 1<<60 | uint64(i)
	}
	tensor := func(t *Tensor) {
		layout(t)
		put(uint64(t.Op))
		for _, p := range t.Params {
			put(uint64(uint32(p)))
		}
		put(uint64(t.Flags &^ FlagCompute))
		for _, s := range t.Src {
			put(pos(s))
		}
		put(pos(t.ViewSrc))
		put(t.ViewOffs)
	}
	put(uint64(len(g.Leafs)))
	for _, t := range g.Leafs {
		tensor(t)
	}
	put(uint64(len(g.Nodes)))
	for _, t := range g.Nodes {
		tensor(t)
	}
	return h.Sum64()
}
