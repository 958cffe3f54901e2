package buffer

import (
	"fmt"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// tensorState is what planning a graph knows of one tensor.
type tensorState struct {
	// children counts the uses of the tensor by nodes not yet planned,
	// views the views of it still alive.
	children, views int
	buf             int
	addr            address
	// inplace is 1 + the index of the source whose memory the tensor
	// took, or 0.
	inplace int
	// allocated is set while the tensor holds planned memory of its own.
	allocated bool
}

// planner plans one graph (ggml_gallocr_alloc_graph_impl).
type planner struct {
	a        *GraphAllocator
	planners []*dynAlloc
	state    map[*graph.Tensor]*tensorState
}

func (p *planner) st(t *graph.Tensor) *tensorState {
	s, ok := p.state[t]
	if !ok {
		s = &tensorState{}
		p.state[t] = s
	}
	return s
}

func isOutput(t *graph.Tensor) bool { return t.Flags&graph.FlagOutput != 0 }

// planGraph plans g with planners (reset first) and returns where every
// node, source and leaf goes.
func (a *GraphAllocator) planGraph(g *graph.Graph, nodeBuf, leafBuf []int, planners []*dynAlloc) (*graphPlan, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: nil graph", ErrArgument)
	}
	nodeID, err := a.ids("node", nodeBuf, len(g.Nodes))
	if err != nil {
		return nil, err
	}
	leafID, err := a.ids("leaf", leafBuf, len(g.Leafs))
	if err != nil {
		return nil, err
	}
	for _, list := range [][]*graph.Tensor{g.Leafs, g.Nodes} {
		for _, t := range list {
			if t == nil {
				return nil, fmt.Errorf("%w: nil tensor in the graph", ErrArgument)
			}
		}
	}
	for _, d := range planners {
		d.reset()
	}
	p := &planner{a: a, planners: planners, state: make(map[*graph.Tensor]*tensorState, len(g.Nodes)+len(g.Leafs))}
	if err := p.run(g, nodeID, leafID); err != nil {
		return nil, err
	}
	plan := &graphPlan{nodes: make([]nodePlace, len(g.Nodes)), leafs: make([]place, len(g.Leafs)), sig: signature(g)}
	for i, n := range g.Nodes {
		plan.nodes[i].dst = p.placeOf(n)
		plan.nodes[i].inplace = p.st(n).inplace
		for j, s := range n.Src {
			plan.nodes[i].src[j] = p.placeOf(s)
		}
	}
	for i, t := range g.Leafs {
		plan.leafs[i] = p.placeOf(t)
	}
	return plan, nil
}

// ids returns the buffer type index of each of n tensors from ids (nil:
// all 0), checking them.
func (a *GraphAllocator) ids(what string, ids []int, n int) (func(i int) int, error) {
	if ids == nil {
		return func(int) int { return 0 }, nil
	}
	if len(ids) != n {
		return nil, fmt.Errorf("%w: %d %s buffer ids for %d %ss", ErrArgument, len(ids), what, n, what)
	}
	for i, id := range ids {
		if id < 0 || id >= len(a.types) {
			return nil, fmt.Errorf("%w: %s %d: buffer id %d of %d", ErrArgument, what, i, id, len(a.types))
		}
	}
	return func(i int) int { return ids[i] }, nil
}

func (p *planner) placeOf(t *graph.Tensor) place {
	if t == nil || t.ViewSrc != nil || p.a.external(t) {
		return place{buf: -1}
	}
	s := p.state[t]
	n, _ := allocSize(p.a.types[s.buf], t)
	return place{buf: s.buf, addr: s.addr, max: n}
}

func (p *planner) run(g *graph.Graph, nodeID, leafID func(int) int) error {
	for i, t := range g.Leafs {
		if err := p.allocate(t, leafID(i)); err != nil {
			return err
		}
		// ggml does not count views among the leafs; a leaf view
		// read by a node must keep its source alive all the same.
		if t.ViewSrc != nil {
			p.st(t.ViewSrc).views++
		}
	}
	// Count every tensor's consumers and views, and place the inputs
	// first, so that nothing computed before their last use overlaps them.
	for i, n := range g.Nodes {
		if n.ViewSrc != nil && n.Op != ops.None {
			p.st(n.ViewSrc).views++
		}
		if n.Flags&graph.FlagInput != 0 {
			if err := p.allocate(n, nodeID(i)); err != nil {
				return err
			}
		}
		for _, s := range n.Src {
			if s == nil {
				continue
			}
			p.st(s).children++
			if s.Flags&graph.FlagInput != 0 {
				if err := p.allocate(s, nodeID(i)); err != nil {
					return err
				}
			}
		}
	}
	for i, n := range g.Nodes {
		id := nodeID(i)
		for _, s := range n.Src {
			if s == nil {
				continue
			}
			if err := p.allocate(s, id); err != nil {
				return err
			}
		}
		if err := p.allocate(n, id); err != nil {
			return err
		}
		for _, s := range n.Src {
			if s == nil {
				continue
			}
			if err := p.consumed(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// consumed records one use of s by the node just planned, freeing s (or
// the source of view s) when nothing needs it any more.
func (p *planner) consumed(s *graph.Tensor) error {
	ss := p.st(s)
	ss.children--
	if ss.children != 0 || ss.views != 0 {
		return nil
	}
	if s.ViewSrc == nil {
		if ss.allocated {
			return p.free(s)
		}
		return nil
	}
	if isOutput(s) {
		// An output view keeps its source: ggml would free it here and
		// let later tensors overwrite the output.
		return nil
	}
	vs := p.st(s.ViewSrc)
	vs.views--
	if vs.views == 0 && vs.children == 0 && vs.allocated {
		return p.free(s.ViewSrc)
	}
	return nil
}

func (p *planner) free(t *graph.Tensor) error {
	if isOutput(t) {
		return nil
	}
	s := p.st(t)
	n, err := allocSize(p.a.types[s.buf], t)
	if err != nil {
		return err
	}
	s.allocated = false
	return p.planners[s.buf].release(s.addr, n)
}

// allocate plans memory for t in buffer type id, unless it is a view, has
// memory, or is planned already: a dead source's memory when t's operation
// may run in place, else new memory.
func (p *planner) allocate(t *graph.Tensor, id int) error {
	s := p.st(t)
	if t.ViewSrc != nil || s.allocated || p.a.external(t) {
		return nil
	}
	s.allocated = true
	// Inputs are planned before their sources' readers are counted, when
	// running in place could take memory a later node still reads (ggml
	// does it, then plans that source anew).
	if CanInplace(t.Op) && t.Flags&graph.FlagInput == 0 {
		for j, src := range t.Src {
			if src == nil {
				continue
			}
			done, err := p.reuse(t, s, src)
			if err != nil {
				return err
			}
			if done {
				s.inplace = j + 1
				return nil
			}
		}
	}
	n, err := allocSize(p.a.types[id], t)
	if err != nil {
		return err
	}
	s.buf = id
	s.addr, err = p.planners[id].alloc(n)
	return err
}

// inplaceLayout reports whether t can be computed over src's memory as far
// as layouts go: src is not a view and has t's layout.
func inplaceLayout(t, src *graph.Tensor) bool {
	return src != nil && src.ViewSrc == nil && sameLayout(t, src)
}

// reuse gives t the memory of its source src when src holds planned
// memory, has t's layout, and nothing but t still needs it; the memory t
// does not need is freed. Like ggml, it never reuses a source through a
// view of it: doing so on llama-style blocks (ROPE over a reshaped
// MUL_MAT) fragments the buffer and made ours 10% larger than ggml's
// (ggml bench alloc).
func (p *planner) reuse(t *graph.Tensor, s *tensorState, src *graph.Tensor) (bool, error) {
	os := p.st(src)
	if !os.allocated || isOutput(src) || !inplaceLayout(t, src) {
		return false, nil
	}
	if os.children != 1 || os.views != 0 {
		return false, nil
	}
	owner := src
	typ, d := p.a.types[os.buf], p.planners[os.buf]
	need, err := allocSize(typ, t)
	if err != nil {
		return false, err
	}
	have, err := allocSize(typ, owner)
	if err != nil || need > have {
		return false, err
	}
	s.buf, s.addr = os.buf, os.addr
	os.allocated = false
	if need, have = alignUp(need, d.align), alignUp(have, d.align); have > need {
		return true, d.release(address{os.addr.chunk, os.addr.offset + need}, have-need)
	}
	return true, nil
}
