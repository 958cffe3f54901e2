package buffer_test

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// life is when a tensor's memory is in use, in graph steps (node indexes):
// from the step that writes it (-1: before the graph runs, for leafs and
// inputs) to the last step that reads it or a view of it (MaxInt: outputs).
type life struct{ start, end int }

// lives returns the life of every tensor of g with memory of its own.
func lives(g *graph.Graph) map[*graph.Tensor]*life {
	out := map[*graph.Tensor]*life{}
	owner := func(t *graph.Tensor) *graph.Tensor {
		if t.ViewSrc != nil {
			return t.ViewSrc
		}
		return t
	}
	get := func(t *graph.Tensor) *life {
		o := owner(t)
		l, ok := out[o]
		if !ok {
			l = &life{start: -1, end: -1}
			out[o] = l
		}
		return l
	}
	for i, n := range g.Nodes {
		if n.ViewSrc == nil && n.Flags&graph.FlagInput == 0 {
			get(n).start = i
			get(n).end = i
		}
	}
	for _, t := range g.Leafs {
		get(t)
	}
	use := func(t *graph.Tensor, step int) {
		l := get(t)
		l.end = max(l.end, step)
		if t.Flags&graph.FlagOutput != 0 || owner(t).Flags&graph.FlagOutput != 0 {
			l.end = math.MaxInt
		}
	}
	for i, n := range g.Nodes {
		use(n, i) // a view node writes (or just names) its source's memory
		for _, s := range n.Src {
			if s != nil {
				use(s, i)
			}
		}
	}
	for _, t := range g.Leafs {
		use(t, -1)
	}
	return out
}

// region is where in its buffer a placed tensor's memory lies: from its
// Data for host memory, else from the byte offset the test device keeps in
// Tensor.Extra.
func region(t *graph.Tensor) (lo, hi uint64, ok bool) {
	if b, isBuf := t.Buffer.(buffer.Buffer); isBuf && len(t.Data) > 0 {
		lo = uint64(uintptr(unsafe.Pointer(&t.Data[0])) - b.Base())
		return lo, lo + uint64(len(t.Data)), true
	}
	if at, isAt := t.Extra.(uint64); isAt {
		return at, at + t.NBytes(), true
	}
	return 0, 0, false
}

// inplacePair reports whether node n (computed at step) may share the
// memory of src's owner: n runs in place over src, or over a view of it
// at offset 0, read for the last time by n.
func inplacePair(n, src *graph.Tensor) bool {
	if !buffer.CanInplace(n.Op) {
		return false
	}
	for _, s := range n.Src {
		if s == nil {
			continue
		}
		if s == src || (s.ViewSrc == src && s.ViewOffs == 0) {
			return true
		}
	}
	return false
}

// checkPlacement returns an error when a tensor of g that needs memory has
// none (tensors with Go memory have theirs), a placed tensor's memory lies outside its buffer, or two tensors
// whose lives overlap share memory (but for an operation running in place
// over a source it reads for the last time).
func checkPlacement(g *graph.Graph) error {
	ls := lives(g)
	type placed struct {
		t      *graph.Tensor
		lo, hi uint64
		l      *life
	}
	var ps []placed
	for t, l := range ls {
		if t.NBytes() == 0 || (t.Buffer == nil && t.Data != nil) {
			continue // nothing to place, or Go memory of its own
		}
		if t.Buffer == nil {
			return fmt.Errorf("%s has no buffer", t)
		}
		lo, hi, ok := region(t)
		if !ok || hi-lo != t.NBytes() {
			return fmt.Errorf("%s has %d bytes of memory, needs %d", t, hi-lo, t.NBytes())
		}
		if b := t.Buffer.(buffer.Buffer); hi > b.Size() {
			return fmt.Errorf("%s lies outside its buffer", t)
		}
		ps = append(ps, placed{t, lo, hi, l})
	}
	for i, a := range ps {
		for _, b := range ps[i+1:] {
			if a.t.Buffer != b.t.Buffer || a.hi <= b.lo || b.hi <= a.lo {
				continue
			}
			if a.l.end < b.l.start || b.l.end < a.l.start {
				continue
			}
			if ok := (a.l.end == b.l.start && b.l.start >= 0 && inplacePair(g.Nodes[b.l.start], a.t)) ||
				(b.l.end == a.l.start && a.l.start >= 0 && inplacePair(g.Nodes[a.l.start], b.t)); ok {
				continue
			}
			return fmt.Errorf("%s (steps %d..%d) and %s (steps %d..%d) share memory", a.t, a.l.start, a.l.end, b.t, b.l.start, b.l.end)
		}
	}
	return nil
}
