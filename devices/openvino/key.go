package openvino

import (
	"hash/maphash"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// locator finds a tensor in a graph of a cached structure: node i itself
// (src < 0) or its source src, or that tensor's ViewSrc.
type locator struct {
	node, src int
	viewSrc   bool
}

// keyInfo is a graph's compiled-model cache key and where its tensors are.
type keyInfo struct {
	key  string
	g    *graph.Graph
	locs map[*graph.Tensor]locator
	// dyn, for the key of a family of graphs equal up to their tagged
	// axes (dynamic.go), is its analysis; locs are then the base clone's.
	dyn *dynPlan
}

func (k keyInfo) resolve(l locator) *graph.Tensor {
	if l.node < 0 || l.node >= len(k.g.Nodes) {
		return nil
	}
	t := k.g.Nodes[l.node]
	if l.src >= 0 {
		t = t.Src[l.src]
	}
	if t != nil && l.viewSrc {
		t = t.ViewSrc
	}
	return t
}

// graphKey is upstream's graph_key made exact: the structure of every
// node (op, type, shape, strides, parameters, view offsets) and of every
// external source, which sources are the same tensor, the weights by
// address (Constants point at them) and content identity (another
// model's weights at the same addresses are other constants), the content of quantized inputs
// folded into the model, and which written tensors share memory. Two
// graphs with the same key compile to the same model and bind the same
// way.
func graphKey(g *graph.Graph, k Kind) keyInfo {
	ki := keyInfo{g: g, locs: make(map[*graph.Tensor]locator, 2*len(g.Nodes))}
	nodeIdx := make(map[*graph.Tensor]int, len(g.Nodes))
	for i, n := range g.Nodes {
		nodeIdx[n] = i
	}
	ext := map[*graph.Tensor]int{}
	buf := make([]byte, 0, 64*len(g.Nodes))
	buf = append(buf, byte('0'+k))
	var ref func(t *graph.Tensor, l locator)
	desc := func(t *graph.Tensor) {
		buf = strconv.AppendInt(buf, int64(t.Type), 10)
		for i := 0; i < 4; i++ {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, t.Ne[i], 10)
			buf = append(buf, ':')
			buf = strconv.AppendUint(buf, t.Nb[i], 10)
		}
		buf = append(buf, '@')
		buf = strconv.AppendUint(buf, t.ViewOffs, 10)
	}
	ref = func(t *graph.Tensor, l locator) {
		if t == nil {
			buf = append(buf, '-')
			return
		}
		if _, ok := ki.locs[t]; !ok {
			ki.locs[t] = l
		}
		if i, ok := nodeIdx[t]; ok && t.Op != ops.None {
			buf = append(buf, 'n')
			buf = strconv.AppendInt(buf, int64(i), 10)
			return
		}
		if id, ok := ext[t]; ok {
			buf = append(buf, 'x')
			buf = strconv.AppendInt(buf, int64(id), 10)
			return
		}
		ext[t] = len(ext)
		buf = append(buf, 'X')
		desc(t)
		if e, ok := t.Extra.(*tensorExtra); ok && e.weight {
			buf = append(buf, 'w')
			buf = strconv.AppendUint(buf, uint64(addr(t)), 16)
			buf = append(buf, 'c')
			buf = strconv.AppendUint(buf, e.content, 16)
			if e.layout != nil {
				buf = append(buf, 'q')
				buf = strconv.AppendUint(buf, e.layout.total, 10)
			}
		} else if t.Type.IsQuantized() && t.ViewSrc == nil {
			buf = append(buf, 'h')
			buf = strconv.AppendUint(buf, hostContent(t), 16)
		}
		if t.ViewSrc != nil {
			buf = append(buf, 'v')
			vl := l
			vl.viewSrc = true
			ref(t.ViewSrc, vl)
		}
	}
	for i, n := range g.Nodes {
		if _, ok := ki.locs[n]; !ok {
			ki.locs[n] = locator{node: i, src: -1}
		}
		buf = append(buf, '|')
		buf = strconv.AppendInt(buf, int64(n.Op), 10)
		buf = append(buf, ' ')
		desc(n)
		for _, p := range n.Params {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(p), 10)
		}
		if n.ViewSrc != nil {
			buf = append(buf, 'V')
			ref(n.ViewSrc, locator{node: i, src: -1, viewSrc: true})
		}
		for j, s := range n.Src {
			if s == nil {
				continue
			}
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(j), 10)
			buf = append(buf, '=')
			ref(s, locator{node: i, src: j})
		}
	}
	// Which written tensors share memory decides which results exist.
	buf = append(buf, '#')
	for _, d := range deadWrites(g) {
		buf = strconv.AppendInt(buf, int64(d), 10)
		buf = append(buf, ',')
	}
	ki.key = string(buf)
	return ki
}

// hostMemo is the content hash of a quantized host tensor in a weights
// buffer, for the memory it had when hashed.
type hostMemo struct {
	addr uintptr
	n    uint64
	h    uint64
}

// hostHashes memoizes hostContent for tensors in weights buffers, by the
// tensor object: a weak pointer, so another model's tensor (a new object,
// even at the same addresses) is hashed afresh, and the entry goes with
// its tensor.
var hostHashes struct {
	mu sync.Mutex
	m  map[weak.Pointer[graph.Tensor]]hostMemo
}

// hostContent identifies the bytes of quantized tensor t outside a
// WEIGHTS buffer, which the model folds in as constants (the tied output
// weight that the loader leaves in the mapped model file). Hashing its
// bytes for every new graph cost SmolLM2-135M's first token after a
// prompt 55 ms of the key (FNV over 21 MB). A tensor in a buffer marked
// UsageWeights is hashed once while it lives at the same memory: weights
// are not rewritten in place, as ggml's backends assume of weight
// buffers (upstream keys them by address alone). Other tensors are
// hashed every time.
func hostContent(t *graph.Tensor) uint64 {
	data := memBytes(t, t.NBytes())
	u, ok := t.Buffer.(interface{ Usage() buffer.Usage })
	if !ok || u.Usage() != buffer.UsageWeights {
		return maphash.Bytes(contentSeed, data)
	}
	wp := weak.Make(t)
	a := addr(t)
	hostHashes.mu.Lock()
	m, ok := hostHashes.m[wp]
	hostHashes.mu.Unlock()
	if ok && m.addr == a && m.n == t.NBytes() {
		return m.h
	}
	m = hostMemo{addr: a, n: t.NBytes(), h: maphash.Bytes(contentSeed, data)}
	hostHashes.mu.Lock()
	if hostHashes.m == nil {
		hostHashes.m = map[weak.Pointer[graph.Tensor]]hostMemo{}
	}
	if _, had := hostHashes.m[wp]; !had {
		runtime.AddCleanup(t, func(wp weak.Pointer[graph.Tensor]) {
			hostHashes.mu.Lock()
			delete(hostHashes.m, wp)
			hostHashes.mu.Unlock()
		}, wp)
	}
	hostHashes.m[wp] = m
	hostHashes.mu.Unlock()
	return m.h
}

// deadWrites lists the positions of nodes whose memory a later node of g
// overwrites (allocator reuse), by the rule outputs applies.
func deadWrites(g *graph.Graph) []int {
	type w struct {
		base        *graph.Tensor
		first, last int
		r           region
	}
	var ws []w
	idx := map[*graph.Tensor]int{}
	for i, n := range g.Nodes {
		if isViewOp(n.Op) {
			continue
		}
		base := n
		if n.ViewSrc != nil {
			base = n.ViewSrc
		}
		if j, ok := idx[base]; ok {
			ws[j].last = i
			continue
		}
		idx[base] = len(ws)
		ws = append(ws, w{base, i, i, extent(base)})
	}
	var dead []int
	for _, a := range ws {
		for _, o := range ws {
			if o.base != a.base && o.first > a.last && o.r.overlaps(a.r) {
				dead = append(dead, a.first)
				break
			}
		}
	}
	return dead
}

// tensorStruct is t's struct as bytes: every field, pointers included
// (sources, view source, buffer, data, extra), so that equal bytes are an
// unchanged tensor.
func tensorStruct(t *graph.Tensor) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(t)), unsafe.Sizeof(*t))
}

// tensorSize is the bytes of a recorded tensor.
const tensorSize = int(unsafe.Sizeof(graph.Tensor{}))

// graphSnap is what a graph's key was built from, so that the same graph
// computed again is recognized in O(nodes) with no allocation: the bytes
// of every node, then of every source that is not a node, once (a node's
// bytes hold its Src pointers, so sources that are nodes are checked by
// their own records), and extraEpoch. The check compares each tensor's
// struct with its record in one memory comparison and follows no pointer:
// it runs on every cache hit, with the tensors' memory cold after an
// infer (a field-by-field check that also read each device tensor's
// extra cost SmolLM2-135M's 934-node decode graph 100-200 us a token on
// the real CPU plugin).
type graphSnap struct {
	ext   []*graph.Tensor // the sources that are not nodes
	raw   []byte          // tensorSize bytes per node, then per ext
	epoch uint64
}

// extraEpoch counts the changes of what a device tensor's extra says
// beyond its pointer: a weight's content or layout set, a storage
// released. A recorded graph whose epoch moved is checked again in full.
var extraEpoch atomic.Uint64

// snapshot records g into s's memory.
func snapshot(g *graph.Graph, s graphSnap) graphSnap {
	s.ext, s.raw, s.epoch = s.ext[:0], s.raw[:0], extraEpoch.Load()
	nodes := make(map[*graph.Tensor]bool, len(g.Nodes))
	for _, n := range g.Nodes {
		s.raw = append(s.raw, tensorStruct(n)...)
		nodes[n] = true
	}
	for _, n := range g.Nodes {
		for _, x := range n.Src {
			if x != nil && !nodes[x] {
				s.ext = append(s.ext, x)
				s.raw = append(s.raw, tensorStruct(x)...)
				nodes[x] = true
			}
		}
	}
	return s
}

// vouchedSnap is s emptied, keeping its memory, for a graph that came with
// a promise (backend.PlacedGraphComputer): the promise recognizes it
// again, so the records are not taken (copying SmolLM2-135M's 1,272
// tensor structs, ~380 KB, on the first token of every placement); only
// the epoch, which the promise does not cover. A later call without the
// promise then finds nothing recorded and recognizes the graph again by
// position or by its key.
func vouchedSnap(s graphSnap) graphSnap {
	return graphSnap{ext: s.ext[:0], raw: s.raw[:0], epoch: extraEpoch.Load()}
}

// unchanged reports whether g is the graph s recorded, as it was (never
// for a vouchedSnap of a graph with nodes).
func (s *graphSnap) unchanged(g *graph.Graph) bool {
	if len(s.raw) != (len(g.Nodes)+len(s.ext))*tensorSize || s.epoch != extraEpoch.Load() {
		return false
	}
	at := 0
	for _, n := range g.Nodes {
		if string(tensorStruct(n)) != string(s.raw[at:at+tensorSize]) {
			return false
		}
		at += tensorSize
	}
	for _, x := range s.ext {
		if string(tensorStruct(x)) != string(s.raw[at:at+tensorSize]) {
			return false
		}
		at += tensorSize
	}
	return true
}

// sameGraph reports whether g is the graph of the last key, unchanged:
// by the caller's promise id when the last compute of g came with it
// (the device's own epoch still checked: a weight set again changes the
// model), else by comparing every tensor with its record.
func (be *ovBackend) sameGraph(g *graph.Graph, id backend.PlacementID) (k keyInfo, same, vouched bool) {
	if be.last.g != g {
		return keyInfo{}, false, false
	}
	if id != 0 && id == be.lastID && be.lastSnap.epoch == extraEpoch.Load() {
		return be.last, true, true
	}
	if !be.lastSnap.unchanged(g) {
		return keyInfo{}, false, false
	}
	return be.last, true, false
}
