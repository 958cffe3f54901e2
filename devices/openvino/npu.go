package openvino

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"unsafe"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// staticPlan is one re-shaped clone of a graph (the prefill chunk or the
// decode step) and which of its tensors stand for which of the graph's.
type staticPlan struct {
	info *staticInfo
	tok  int64
	g    *graph.Graph
	m    map[*graph.Tensor]*graph.Tensor
}

// staticState is a backend's static-path state: the plans of the last
// graph, rebuilt when the graph changes (their clones hold its tensors).
type staticState struct {
	src     *graph.Graph
	key     string
	prefill *staticPlan
	decode  *staticPlan
	// refused is the key of the last graph the path declined: the same
	// structure again is declined without a new analysis.
	refused string
	// inside is set while a clone is computed, which must not take the
	// static path again.
	inside bool
	// runs counts the clone computes (chunks and decode steps).
	runs int
	// allocs place the clones, one per token length: a new graph of the
	// same family (the next decode step) reuses the memory, so the
	// clone's inputs keep their addresses and stay bound.
	allocs map[int64]*buffer.GraphAllocator
}

// drop forgets the plans (their clones hold the last graph's tensors).
func (st *staticState) drop() { st.prefill, st.decode, st.src = nil, nil, nil }

func (st *staticState) free() {
	st.drop()
	for _, a := range st.allocs {
		_ = a.Free()
	}
	st.allocs = nil
}

// computeStatic runs g on the static path. done is false when g is not a
// graph the path re-shapes: the caller computes it as it is.
func (be *ovBackend) computeStatic(g *graph.Graph, k keyInfo) (done bool, err error) {
	st := &be.static
	if st.refused == k.key {
		return false, nil // declined before: same structure, same answer
	}
	if st.src != g || st.key != k.key {
		st.drop()
		info, err := analyzeStatic(g)
		if err == nil && be.opts.EnableFallback && splitGraph(g) {
			err = notStatic("a split piece of a model (GGML_OPENVINO_ENABLE_FALLBACK)")
		}
		if err != nil {
			if errors.Is(err, errNotStatic) {
				st.refused = k.key
				slog.Debug("openvino: graph computed with its own shapes", "reason", err)
				return false, nil
			}
			return true, err
		}
		st.src, st.key = g, k.key
		st.decode, err = be.newPlan(info, 1)
		if err == nil && info.n > 1 {
			st.prefill, err = be.newPlan(info, int64(be.opts.PrefillChunkSize))
		}
		if err != nil {
			st.drop()
			if errors.Is(err, errNotStatic) {
				st.refused = k.key
				slog.Debug("openvino: graph computed with its own shapes", "reason", err)
				return false, nil
			}
			return true, err
		}
		// Upstream compiles both models of the family on a miss, so the
		// first decode after a prefill does not wait for a compile. A
		// clone the translators refuse although its graph is accepted
		// (a re-shaping the tagging got wrong) is not the user's error:
		// the graph then runs as it is.
		for _, p := range []*staticPlan{st.prefill, st.decode} {
			if p == nil {
				continue
			}
			if err := be.precompile(p.g); err != nil {
				st.drop()
				if errors.Is(err, ErrTranslate) {
					st.refused = k.key
					slog.Warn("openvino: static path: re-shaped graph not translated; computed with its own shapes", "err", err)
					return false, nil
				}
				return true, err
			}
		}
	}
	info := st.decode.info
	if info.n == 1 {
		return true, be.runChunk(st.decode, 0, 1)
	}
	chunk := st.prefill.tok
	for c0 := int64(0); c0 < info.n; c0 += chunk {
		if err := be.runChunk(st.prefill, c0, min(chunk, info.n-c0)); err != nil {
			return true, fmt.Errorf("openvino: prefill chunk at token %d: %w", c0, err)
		}
	}
	return true, nil
}

// newPlan clones info's graph for tok tokens and places the clone's own
// tensors in host memory of the device.
func (be *ovBackend) newPlan(info *staticInfo, tok int64) (*staticPlan, error) {
	g, m, err := info.clone(tok)
	if err != nil {
		return nil, err
	}
	st := &be.static
	a := st.allocs[tok]
	if a == nil {
		if a, err = buffer.NewGraphAllocator(be.dev.HostType()); err != nil {
			return nil, err
		}
		if st.allocs == nil {
			st.allocs = map[int64]*buffer.GraphAllocator{}
		}
		st.allocs[tok] = a
	}
	if err := a.AllocGraph(g); err != nil {
		return nil, err
	}
	return &staticPlan{info: info, tok: tok, g: g, m: m}, nil
}

// precompile makes sure the model of g is in the compiled-model cache.
func (be *ovBackend) precompile(g *graph.Graph) error {
	if be.opts.DisableCache {
		return nil
	}
	k := graphKey(g, be.dev.rt.kind)
	cache := be.dev.cache
	cache.mu.Lock()
	_, ok := cache.models[k.key]
	cache.mu.Unlock()
	if ok {
		return nil
	}
	cm, err := be.compile(g, k)
	if err != nil {
		return err
	}
	cache.mu.Lock()
	if cache.models[k.key] == nil {
		cache.models[k.key] = cm
		cm = nil
	}
	cache.mu.Unlock()
	if cm != nil {
		be.freeModel(cm)
	}
	return nil
}

// runChunk fills the clone's inputs with tokens c0..c0+valid of the
// graph's, computes the clone and copies what it wrote back.
func (be *ovBackend) runChunk(p *staticPlan, c0, valid int64) error {
	info := p.info
	for _, t := range info.inputs {
		if err := fillInput(info, info.roles[t], t, p.m[t], c0, valid); err != nil {
			return err
		}
	}
	be.static.inside = true
	err := be.GraphCompute(p.g)
	be.static.inside = false
	be.static.runs++
	if err != nil {
		return err
	}
	for _, b := range info.liveBase {
		if c := p.m[b]; c != nil && c != b {
			copyBack(info, b, c, c0, valid)
		}
	}
	return nil
}

// tensorBytes is t's memory, from its first byte to the end of its extent.
func tensorBytes(t *graph.Tensor) []byte {
	r := extent(t)
	if r.lo == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(cPtr(r.lo)), r.hi-r.lo)
}

// fillInput writes the chunk's part of input t into its clone c, padded
// as ggml-openvino pads the static inputs.
func fillInput(info *staticInfo, r staticRole, t, c *graph.Tensor, c0, valid int64) error {
	src, dst := tensorBytes(t), tensorBytes(c)
	if src == nil || dst == nil {
		return fmt.Errorf("openvino: static input %s has no host memory", t.Name)
	}
	es := int64(t.Type.TypeSize())
	switch r {
	case rolePos, roleTok, roleKVIdx:
		if t.Type != quant.I32 && t.Type != quant.I64 {
			return fmt.Errorf("openvino: %s input %s is %s, want I32 or I64", roleName(r), t.Name, t.Type)
		}
		copy(dst[:valid*es], src[c0*es:(c0+valid)*es])
		// The padding tokens are written to the cell after the last
		// valid one (and read nowhere: the mask hides them); the next
		// token's write replaces them.
		last := readInt(src[(c0+valid-1)*es:], es)
		if r == roleKVIdx && valid < c.Ne[0] && last+1 >= info.rowsOf[t] {
			return fmt.Errorf("openvino: prefill chunk pads KV index %d past the cache's %d cells: %s",
				last+1, info.rowsOf[t], "use a chunk size that divides the prompt, or a larger cache")
		}
		for i := valid; i < c.Ne[0]; i++ {
			writeInt(dst[i*es:], es, last+1)
		}
	case roleEmbd:
		row := int64(t.Nb[1])
		copy(dst[:valid*row], src[c0*row:(c0+valid)*row])
		clear(dst[valid*row:])
	case roleOut:
		if t.Type != quant.I32 {
			return fmt.Errorf("openvino: output index input %s is %s, want I32", t.Name, t.Type)
		}
		for i := int64(0); i < t.Ne[0]; i++ {
			id := int64(int32(binary.LittleEndian.Uint32(src[4*i:])))
			if id < c0 || id >= c0+valid {
				id = c0 // rows of other chunks: computed, not copied back
			}
			binary.LittleEndian.PutUint32(dst[4*i:], uint32(id-c0))
		}
	case roleMask:
		return fillMask(t, c, src, dst, c0, valid)
	}
	return nil
}

// fillMask writes rows c0.. of mask t, its n_kv columns padded to ctx
// with -inf; padding rows are -inf but for a zero on the diagonal, so
// their softmax has a finite sum.
func fillMask(t, c *graph.Tensor, src, dst []byte, c0, valid int64) error {
	es := int64(t.Type.TypeSize())
	var ninf, zero []byte
	switch t.Type {
	case quant.F16:
		ninf = binary.LittleEndian.AppendUint16(nil, 0xfc00)
		zero = []byte{0, 0}
	case quant.F32:
		ninf = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.Inf(-1))))
		zero = []byte{0, 0, 0, 0}
	default:
		return fmt.Errorf("openvino: mask %s is %s, want F16 or F32", t.Name, t.Type)
	}
	kv, ctx := t.Ne[0], c.Ne[0]
	for i := int64(0); i < c.Ne[1]; i++ {
		row := dst[i*ctx*es : (i+1)*ctx*es]
		j0 := int64(0)
		if i < valid {
			j0 = kv
			copy(row, src[(c0+i)*int64(t.Nb[1]):(c0+i)*int64(t.Nb[1])+kv*es])
		}
		for j := j0; j < ctx; j++ {
			copy(row[j*es:], ninf)
		}
		if i >= valid {
			copy(row[min(i, ctx-1)*es:], zero)
		}
	}
	return nil
}

func readInt(b []byte, es int64) int64 {
	if es == 8 {
		return int64(binary.LittleEndian.Uint64(b))
	}
	return int64(int32(binary.LittleEndian.Uint32(b)))
}

func writeInt(b []byte, es, v int64) {
	if es == 8 {
		binary.LittleEndian.PutUint64(b, uint64(v))
		return
	}
	binary.LittleEndian.PutUint32(b, uint32(v))
}

// copyBack copies what the clone c of written base b holds for the chunk
// into b: the chunk's rows of a token axis, the rows of selected outputs
// that fall in the chunk, or all of an untagged base.
func copyBack(info *staticInfo, b, c *graph.Tensor, c0, valid int64) {
	tg := info.tags[b]
	dst, src := tensorBytes(b), tensorBytes(c)
	es := uint64(b.Type.TypeSize())
	ta, oa := tg.has(tagTok), tg.has(tagOut)
	var outIDs []int64
	if oa >= 0 {
		outIDs = info.outRows(b, c0, valid)
	}
	var idx [graph.MaxDims]int64
	for idx[3] = 0; idx[3] < c.Ne[3]; idx[3]++ {
		for idx[2] = 0; idx[2] < c.Ne[2]; idx[2]++ {
			for idx[1] = 0; idx[1] < c.Ne[1]; idx[1]++ {
				for idx[0] = 0; idx[0] < c.Ne[0]; idx[0]++ {
					d := idx
					if ta >= 0 {
						if idx[ta] >= valid {
							continue
						}
						d[ta] += c0
					}
					if oa >= 0 && outIDs[idx[oa]] < 0 {
						continue
					}
					so, do := uint64(0), uint64(0)
					for i := 0; i < graph.MaxDims; i++ {
						so += uint64(idx[i]) * c.Nb[i]
						do += uint64(d[i]) * b.Nb[i]
					}
					copy(dst[do:do+es], src[so:so+es])
				}
			}
		}
	}
}

// outRows marks, per selected output row, whether its token is in the
// chunk (>= 0) or not (-1).
func (s *staticInfo) outRows(_ *graph.Tensor, c0, valid int64) []int64 {
	for _, t := range s.inputs {
		if s.roles[t] != roleOut {
			continue
		}
		src := tensorBytes(t)
		ids := make([]int64, t.Ne[0])
		for i := range ids {
			id := int64(int32(binary.LittleEndian.Uint32(src[4*i:])))
			ids[i] = -1
			if id >= c0 && id < c0+valid {
				ids[i] = id
			}
		}
		return ids
	}
	return nil
}
