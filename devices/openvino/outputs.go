package openvino

import (
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// outputSpec is a Result: value v written into the memory of tensor t
// (a whole base tensor, or one view region of it).
type outputSpec struct {
	t *graph.Tensor
	v value
}

// region is a byte range of host memory.
type region struct{ lo, hi uintptr }

func (r region) overlaps(o region) bool { return r.lo < o.hi && o.lo < r.hi }

// extent is the bytes view or tensor t spans.
func extent(t *graph.Tensor) region {
	a := addr(t)
	if a == 0 {
		return region{}
	}
	if t.ViewSrc == nil || t.IsContiguous() {
		return region{a, a + uintptr(t.NBytes())}
	}
	last := uint64(t.Type.TypeSize())
	for i := 0; i < 4; i++ {
		if t.Ne[i] > 0 {
			last += uint64(t.Ne[i]-1) * t.Nb[i]
		}
	}
	return region{a, a + uintptr(last)}
}

// outputs decides what the model writes back: for every tensor whose
// memory nodes of the graph wrote, its final contents, unless a later node
// of the graph reuses that memory (the graph allocator placed a later
// tensor there, so nobody reads it after this graph). A base written only
// through one view gets just that view's elements.
func (b *builder) outputs(g *graph.Graph) []outputSpec {
	type written struct {
		base        *graph.Tensor
		first, last int
	}
	var ws []written
	for i, n := range g.Nodes {
		if isViewOp(n.Op) || n.Op == ops.None {
			continue
		}
		base := n
		if n.ViewSrc != nil {
			base = n.ViewSrc
		}
		found := false
		for j := range ws {
			if ws[j].base == base {
				ws[j].last, found = i, true
			}
		}
		if !found {
			ws = append(ws, written{base, i, i})
		}
	}
	var out []outputSpec
	for _, w := range ws {
		r := extent(w.base)
		dead := false
		for _, o := range ws {
			if o.base != w.base && o.first > w.last && extent(o.base).overlaps(r) {
				dead = true
				break
			}
		}
		if dead {
			continue
		}
		pos := b.writes[w.base]
		_, selfNode := b.vals[w.base]
		switch {
		case selfNode && len(pos) == 1:
			out = append(out, outputSpec{t: w.base, v: b.vals[w.base]})
		case !selfNode && len(pos) == 1:
			n := g.Nodes[pos[0]]
			out = append(out, outputSpec{t: n, v: b.wvals[n]})
		default:
			out = append(out, outputSpec{t: w.base, v: b.flat[w.base]})
		}
	}
	return out
}
