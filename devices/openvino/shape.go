package openvino

import (
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// A language model's runner builds a new graph whenever the batch shape
// changes: the prompt's, then the first generated token's, then one per
// step of the cache length. Each is a new set of tensors, so the last
// graph's snapshot (sameGraph) cannot recognize it, and building its key
// took SmolLM2-135M's 934-node graphs 1.5-2.5 ms (55 ms while a host
// weight was hashed every time) on each first token after a prompt. A
// shapeRec remembers a graph whose key was built by position instead of
// by pointer: a new graph with the same nodes in the same order, the same
// sources at the same positions, the same external tensors (fields,
// memory, weight identity) and its nodes at the same addresses has the
// same key, found without building it.

// hdrSize is the leading bytes of a tensor struct compared as they are:
// type, shape, strides, op, parameters and flags (the fields before Src).
const hdrSize = int(unsafe.Offsetof(graph.Tensor{}.Src))

// maxShapes is how many graphs a backend remembers by position.
const maxShapes = 8

// refSlots is the pointer slots of a node compared by position: its
// sources, then its view source.
const refSlots = graph.MaxSrc + 1

// extRec is an external source as a graph's key saw it.
type extRec struct {
	hdr      [hdrSize]byte
	viewOffs uint64
	addr     uintptr
	// weight, layout and content are a device weight's identity
	// (tensorExtra); host is hostContent of a quantized host tensor.
	weight  bool
	layout  *extractedLayout
	content uint64
	host    uint64
}

// shapeRec is a graph whose key was built, by position.
type shapeRec struct {
	key   string
	cm    *compiledModel
	nodes int
	hdr   []byte    // hdrSize bytes per node
	vofs  []uint64  // per node
	naddr []uintptr // per node
	refs  []int32   // refSlots per node: -1 nil, < nodes a node, else nodes+x external x
	ext   []extRec  // in order of first reference
	scr   []*graph.Tensor
	seen  map[*graph.Tensor]bool
}

func srcSlot(n *graph.Tensor, s int) *graph.Tensor {
	if s < graph.MaxSrc {
		return n.Src[s]
	}
	return n.ViewSrc
}

func recordExt(t *graph.Tensor) (extRec, bool) {
	// External views and tensors with an op (computed elsewhere) are left
	// to the full key.
	if t.ViewSrc != nil || t.Op != ops.None {
		return extRec{}, false
	}
	r := extRec{viewOffs: t.ViewOffs, addr: addr(t)}
	copy(r.hdr[:], tensorStruct(t)[:hdrSize])
	if e, ok := t.Extra.(*tensorExtra); ok && e.weight {
		r.weight, r.layout, r.content = true, e.layout, e.content
	} else if t.Type.IsQuantized() {
		r.host = hostContent(t)
	}
	return r, true
}

func (r *extRec) matches(t *graph.Tensor) bool {
	if t.ViewSrc != nil || t.Op != ops.None || t.ViewOffs != r.viewOffs || string(tensorStruct(t)[:hdrSize]) != string(r.hdr[:]) ||
		addr(t) != r.addr {
		return false
	}
	e, ok := t.Extra.(*tensorExtra)
	if w := ok && e.weight; w != r.weight {
		return false
	} else if w {
		return e.layout == r.layout && e.content == r.content
	}
	return !t.Type.IsQuantized() || hostContent(t) == r.host
}

// recordShape remembers g, whose key is key and model cm; nil when g has
// what the positional check leaves to the full key.
func recordShape(g *graph.Graph, key string, cm *compiledModel) *shapeRec {
	n := len(g.Nodes)
	rec := &shapeRec{key: key, cm: cm, nodes: n, hdr: make([]byte, 0, n*hdrSize), vofs: make([]uint64, n),
		naddr: make([]uintptr, n), refs: make([]int32, 0, n*refSlots), seen: map[*graph.Tensor]bool{}}
	idx := make(map[*graph.Tensor]int32, n)
	for i, t := range g.Nodes {
		if t.Op == ops.None {
			return nil // the key treats such nodes as external sources
		}
		idx[t] = int32(i)
	}
	ext := map[*graph.Tensor]int32{}
	for i, t := range g.Nodes {
		rec.hdr = append(rec.hdr, tensorStruct(t)[:hdrSize]...)
		rec.vofs[i], rec.naddr[i] = t.ViewOffs, addr(t)
		for s := range refSlots {
			x := srcSlot(t, s)
			switch j, node := idx[x]; {
			case x == nil:
				rec.refs = append(rec.refs, -1)
			case node:
				rec.refs = append(rec.refs, j)
			default:
				id, ok := ext[x]
				if !ok {
					r, ok := recordExt(x)
					if !ok {
						return nil
					}
					id = int32(len(rec.ext))
					ext[x] = id
					rec.ext = append(rec.ext, r)
				}
				rec.refs = append(rec.refs, int32(n)+id)
			}
		}
	}
	return rec
}

// matches reports whether g is, by position, the graph rec recorded; its
// external sources are then in rec.scr.
func (rec *shapeRec) matches(g *graph.Graph) bool {
	n := rec.nodes
	if len(g.Nodes) != n {
		return false
	}
	rec.scr = rec.scr[:0]
	clear(rec.seen)
	for i, t := range g.Nodes {
		if t.Op == ops.None || string(tensorStruct(t)[:hdrSize]) != string(rec.hdr[i*hdrSize:(i+1)*hdrSize]) ||
			t.ViewOffs != rec.vofs[i] {
			return false
		}
	}
	for i, t := range g.Nodes {
		refs := rec.refs[i*refSlots : (i+1)*refSlots]
		for s, r := range refs {
			x := srcSlot(t, s)
			switch {
			case r < 0:
				if x != nil {
					return false
				}
			case int(r) < n:
				if x != g.Nodes[r] {
					return false
				}
			case int(r)-n < len(rec.scr):
				if x != rec.scr[int(r)-n] {
					return false
				}
			default:
				// The first reference to external int(r)-n: a tensor no
				// other slot named, and as the key saw it.
				if x == nil || rec.seen[x] || !rec.ext[len(rec.scr)].matches(x) {
					return false
				}
				rec.seen[x] = true
				rec.scr = append(rec.scr, x)
			}
		}
		if addr(t) != rec.naddr[i] {
			return false
		}
	}
	// No node is one of the external sources (which would be a node
	// reference in the key): every node has an op (the first loop) and
	// every external none (extRec.matches).
	return true
}

// snapshotFrom records g as snapshot does, with its external sources
// known (ext): no map.
func snapshotFrom(g *graph.Graph, ext []*graph.Tensor, s graphSnap) graphSnap {
	s.ext, s.raw, s.epoch = append(s.ext[:0], ext...), s.raw[:0], extraEpoch.Load()
	for _, n := range g.Nodes {
		s.raw = append(s.raw, tensorStruct(n)...)
	}
	for _, x := range ext {
		s.raw = append(s.raw, tensorStruct(x)...)
	}
	return s
}

// shapeHit finds a remembered graph that g is by position.
func (be *ovBackend) shapeHit(g *graph.Graph) *shapeRec {
	for i, rec := range be.shapes {
		if rec.matches(g) {
			// Most recent first: a conversation alternates few shapes.
			copy(be.shapes[1:i+1], be.shapes[:i])
			be.shapes[0] = rec
			return rec
		}
	}
	return nil
}

// rememberShape records g (key k, model cm) by position.
func (be *ovBackend) rememberShape(g *graph.Graph, k keyInfo, cm *compiledModel) {
	rec := recordShape(g, k.key, cm)
	if rec == nil {
		return
	}
	if len(be.shapes) < maxShapes {
		be.shapes = append(be.shapes, nil)
	}
	copy(be.shapes[1:], be.shapes[:len(be.shapes)-1])
	be.shapes[0] = rec
}

// byShapeOn turns the positional check off when false (a test setting,
// to compare with the full key).
var byShapeOn = true
