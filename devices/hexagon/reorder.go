package hexagon

import (
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// memRange is the memory a node reads or writes: its buffer block (or,
// before allocation, its root tensor) and a byte range in it.
type memRange struct {
	key    any
	lo, hi uint64
	dst    bool
}

func rangeOf(t *graph.Tensor, dst bool) memRange {
	if x, err := extraOf(t); err == nil {
		return memRange{key: x.blk, lo: x.at, hi: x.at + max(t.NBytes(), 1), dst: dst}
	}
	root := t
	if t.ViewSrc != nil {
		root = t.ViewSrc
	}
	// Not placed yet: any use of the same tensor overlaps.
	return memRange{key: root, lo: 0, hi: 1024, dst: dst}
}

type memRanges []memRange

// clashes reports whether r overlaps a range of rs where one of the two
// writes.
func (rs memRanges) clashes(r memRange) bool {
	for _, c := range rs {
		if c.key == r.key && (c.dst || r.dst) && r.lo < c.hi && r.hi > c.lo {
			return true
		}
	}
	return false
}

// unit is a node with the node fused to it, kept together.
type unit []*graph.Tensor

func (u unit) ranges() memRanges {
	var rs memRanges
	for _, t := range u {
		for _, s := range t.Src {
			if s != nil {
				rs = append(rs, rangeOf(s, false))
			}
		}
	}
	return append(rs, rangeOf(u[len(u)-1], true))
}

// stackable: quantized matmuls, whose dynamically quantized src1 the DSP
// keeps in VTCM when the next op multiplies the same src1.
func stackable(t *graph.Tensor) bool {
	return (t.Op == ops.MulMat || t.Op == ops.MulMatID) && isTiledType(t.Src[0].Type)
}

// reorderWindow is how far ahead stackable nodes are looked for.
const reorderWindow = 64

// GraphOptimize reorders g for the DSP (upstream's graph_optimize):
// quantized MUL_MAT and MUL_MAT_ID sharing src1 within 64 nodes are moved
// next to each other when no node they are moved across writes what they
// read or touches what they write. Fused pairs move as one. The result
// computes the same values. Verified on the double.
func (b *hexBackend) GraphOptimize(g *graph.Graph) error {
	var units []unit
	for i := 0; i < len(g.Nodes); i++ {
		u := unit{g.Nodes[i]}
		if b.dev.opts.OpFusion && i+1 < len(g.Nodes) && fuse(g, g.Nodes[i], g.Nodes[i+1]) != nil {
			u = append(u, g.Nodes[i+1])
			i++
		}
		units = append(units, u)
	}
	used := make([]bool, len(units))
	out := g.Nodes[:0:0]
	for i0, u0 := range units {
		if used[i0] {
			continue
		}
		used[i0] = true
		out = append(out, u0...)
		head := u0[0]
		if !stackable(head) {
			continue
		}
		var between memRanges
		for i1 := i0 + 1; i1 < len(units) && i1 < i0+reorderWindow; i1++ {
			if used[i1] {
				continue
			}
			u1 := units[i1]
			n1 := u1[0]
			ok := stackable(n1) && n1.Op == head.Op && n1.Src[1] == head.Src[1]
			if ok {
				for _, r := range u1.ranges() {
					if between.clashes(r) {
						ok = false
						break
					}
				}
			}
			if ok {
				used[i1] = true
				out = append(out, u1...)
				continue
			}
			between = append(between, u1.ranges()...)
		}
	}
	copy(g.Nodes, out)
	return nil
}
