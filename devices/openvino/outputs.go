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
		r := extent(b.memOf(w.base))
		dead := false
		for _, o := range ws {
			if o.base != w.base && o.first > w.last && extent(b.memOf(o.base)).overlaps(r) {
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

// inPlaceParams says, for each Result of m, which Parameter's memory it
// may be written over in place, or -1. The rule (verified on the real
// CPU plugin of 2025.0.0 and 2026.4.1 by TestKVInPlaceLogits; the hazard
// it avoids shown on the double only, TestKVInPlaceHazardRule):
// the Result is a ScatterUpdate whose data input is the Parameter itself,
// through Reshapes only, and nothing else reads that Parameter or those
// Reshapes. The plugin may then read the input from the caller's memory
// and write the output there (zero-copy both), and the one reader of the
// old contents is the ScatterUpdate, which takes its data before writing
// its rows (or copies nothing when the two are one memory). Any other
// reader of the old contents could run after the output is written; such
// outputs stay in scratch memory. This is the KV cache that SET_ROWS
// writes while attention reads the new contents: 60 such outputs of
// SmolLM2-135M's decode graph were copied out of scratch every token.
func (m *irModel) inPlaceParams() []int {
	type port struct{ layer, port int }
	uses := map[port]int{}
	for _, l := range m.layers {
		for _, in := range l.inputs {
			uses[port{in.layer, in.port}]++
		}
	}
	param := make(map[int]int, len(m.params))
	for i, id := range m.params {
		param[id] = i
	}
	out := make([]int, len(m.results))
	for r, id := range m.results {
		out[r] = -1
		v := m.layers[id].inputs[0]
		if m.layers[v.layer].typ != "ScatterUpdate" {
			continue
		}
		d := m.layers[v.layer].inputs[0]
		for m.layers[d.layer].typ == "Reshape" && uses[port{d.layer, d.port}] == 1 {
			d = m.layers[d.layer].inputs[0]
		}
		if i, ok := param[d.layer]; ok && uses[port{d.layer, d.port}] == 1 {
			out[r] = i
		}
	}
	return out
}

// kvInPlace turns off binding outputs in place (inPlaceParams) when false,
// and forceInPlace binds every output whose memory is exactly an input's
// in place whatever the rule says: test settings, to show what the rule
// changes.
var kvInPlace, forceInPlace = true, false
