package openvino

import (
	"errors"
	"fmt"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// The static (NPU) path of ggml-openvino's ov_graph_compute_static: the
// NPU compiles static shapes only, so instead of a model per token count a
// language-model graph family gets two: a prefill model for
// PREFILL_CHUNK_SIZE tokens and a decode model for one, both over the whole
// KV cache (ctx cells, not the n_kv cells the graph attends to). A prefill
// runs chunk by chunk: positions, tokens and KV indices padded with last+1,
// the mask padded with -inf to [chunk, ctx] with a zero diagonal on the
// padding rows, output indices taken relative to the chunk.
//
// ggml-openvino's frontend builds those models from the ggml graph with
// the input shapes changed. Here the graph itself is re-shaped: every
// tensor's axes are tagged by what they count (tokens, KV cells, selected
// outputs), propagated from the inputs ggml-openvino recognizes (its
// is_inp_pos, is_inp_tok, is_kv_idx, is_inp_mask, is_output_idx rules),
// and a clone of the graph with those axes resized is translated the usual
// way. A graph the tagging cannot follow (an op that mixes token axes, KV
// written through a view at a token-dependent offset rather than SET_ROWS)
// is computed as it is: still static shapes, just one model per shape.

// axisTag says what an axis of a tensor counts: a kind (the low byte)
// and, for an axis of several elements per token (the transposed V
// cache's indices, a token axis merged with the axes inside it), how many
// (the factor, stored minus one, so that the kinds are their own tags).
type axisTag uint32

const (
	tagNone axisTag = iota
	tagTok          // the tokens of the batch: chunk-sized in the clone
	tagKV           // KV cache cells attended to: ctx in the clone
	tagOut          // selected output rows: unchanged
	// tagPad is the mask's rows, the tokens padded to llama.cpp's
	// GGML_KQ_MASK_PAD: only dynamic analysis (dynamic.go) tags it; the
	// static path refuses such masks.
	tagPad
)

func (a axisTag) kind() axisTag           { return a & 0xff }
func (a axisTag) factor() int64           { return int64(a>>8) + 1 }
func tagTimes(k axisTag, f int64) axisTag { return k | axisTag(f-1)<<8 }

type axisTags [graph.MaxDims]axisTag

// has is the first axis of kind t.
func (a axisTags) has(t axisTag) int {
	for i, x := range a {
		if x.kind() == t {
			return i
		}
	}
	return -1
}

func (a axisTags) any() bool { return a != axisTags{} }

// staticRole is what an input of a language-model graph carries.
type staticRole uint8

const (
	roleNone  staticRole = iota
	rolePos              // ROPE positions
	roleTok              // token ids (GET_ROWS of a weight)
	roleKVIdx            // SET_ROWS cell indices
	roleMask             // attention mask [n_kv, n_tokens]
	roleOut              // output row indices (GET_ROWS of activations)
	roleEmbd             // input embeddings [n_embd, n_tokens]
)

// errNotStatic says why a graph is computed as it is on the static path.
var errNotStatic = errors.New("openvino: static path")

func notStatic(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errNotStatic, fmt.Sprintf(format, args...))
}

// staticInfo is a graph's analysis for the static path.
type staticInfo struct {
	g        *graph.Graph
	n        int64 // tokens of the graph
	kv       int64 // KV cells the graph attends to (mask ne0); 0 without a mask
	ctx      int64 // KV cells of the cache (the clone's KV length)
	tags     map[*graph.Tensor]axisTags
	roles    map[*graph.Tensor]staticRole
	rowsOf   map[*graph.Tensor]int64 // KV index input -> rows of the cache it indexes
	inputs   []*graph.Tensor         // leaves with a role, in first-use order
	liveBase []*graph.Tensor         // written bases whose contents outlive the graph
	// dynamic: the analysis for one model of all token counts
	// (dynamic.go), which also follows padded masks, the transposed V
	// cache and token axes merged with the axes inside them.
	dynamic bool
}

// minNaiveNodes is ggml-openvino's is_naive threshold: a graph of fewer
// non-NONE nodes (test-backend-ops' graphs) is compiled as it is.
const minNaiveNodes = 20

// analyzeStatic tags g for the static path, or says why it is computed as
// it is (errNotStatic).
func analyzeStatic(g *graph.Graph) (*staticInfo, error) { return analyzeGraph(g, false) }

func analyzeGraph(g *graph.Graph, dynamic bool) (*staticInfo, error) {
	count := 0
	for _, n := range g.Nodes {
		if n.Op != ops.None {
			count++
		}
	}
	if count < minNaiveNodes {
		return nil, notStatic("naive graph (%d nodes)", count)
	}
	s := &staticInfo{g: g, tags: map[*graph.Tensor]axisTags{}, roles: map[*graph.Tensor]staticRole{},
		rowsOf: map[*graph.Tensor]int64{}, dynamic: dynamic}
	if err := s.findRoles(); err != nil {
		return nil, err
	}
	for _, n := range g.Nodes {
		if _, err := s.tagOf(n); err != nil {
			return nil, err
		}
	}
	if s.ctx == 0 {
		s.ctx = s.kv
	}
	s.liveBase = liveBases(g)
	for _, b := range s.liveBase {
		tg := s.tags[b]
		if tg.any() && b.Type.IsQuantized() {
			return nil, notStatic("quantized output %s with a token axis", b.Name)
		}
	}
	return s, nil
}

// findRoles classifies the graph's inputs as ggml-openvino's decoder does
// and finds the token count from the positions.
func (s *staticInfo) findRoles() error {
	set := func(t *graph.Tensor, r staticRole) error {
		if t == nil {
			return nil
		}
		if t.Op != ops.None || t.ViewSrc != nil {
			return notStatic("%s input %s is computed", roleName(r), t.Name)
		}
		if old, ok := s.roles[t]; ok && old != r {
			return notStatic("input %s is both %s and %s", t.Name, roleName(old), roleName(r))
		}
		if _, ok := s.roles[t]; !ok {
			s.inputs = append(s.inputs, t)
		}
		s.roles[t] = r
		return nil
	}
	var pos *graph.Tensor
	for _, n := range s.g.Nodes {
		var err error
		switch n.Op {
		case ops.Rope:
			if pos == nil {
				pos = n.Src[1]
				if pos == nil || n.Src[0] == nil || pos.Ne[0] != n.Src[0].Ne[2] {
					// IMROPE/MROPE stack position planes: not chunked here.
					return notStatic("ROPE %s with several position planes", n.Name)
				}
			}
			err = set(n.Src[1], rolePos)
		case ops.GetRows:
			if n.Src[0] != nil && n.Src[0].Op == ops.None && n.Src[0].ViewSrc == nil {
				err = set(n.Src[1], roleTok)
			} else {
				err = set(n.Src[1], roleOut)
			}
		case ops.SetRows:
			err = set(n.Src[1], roleKVIdx)
			if err == nil && n.Src[1] != nil && n.Src[2] != nil {
				s.rowsOf[n.Src[1]] = n.Src[2].Ne[1]
			}
		case ops.FlashAttnExt:
			err = set(n.Src[3], roleMask)
		case ops.SoftMax:
			err = set(n.Src[1], roleMask)
		}
		if err != nil {
			return err
		}
	}
	if pos == nil {
		// Not a language-model graph (no positions): upstream's chunk is
		// then the graph's own length, which is computing it as it is.
		return notStatic("no ROPE positions")
	}
	s.n = pos.Ne[0]
	for t, r := range s.roles {
		if r == roleMask {
			if s.kv != 0 && s.kv != t.Ne[0] {
				return notStatic("masks over %d and %d KV cells", s.kv, t.Ne[0])
			}
			if (t.Ne[1] != s.n && !(s.dynamic && t.Ne[1] > s.n)) || t.Ne[2] != 1 || t.Ne[3] != 1 {
				return notStatic("mask %s of %v rows for %d tokens", t.Name, t.Ne, s.n)
			}
			s.kv = t.Ne[0]
		}
	}
	// Embeddings given as an input (no token ids): F32 [n_embd, n_tokens].
	for _, n := range s.g.Nodes {
		for _, x := range n.Src {
			if x != nil && x.Op == ops.None && x.ViewSrc == nil && x.Flags&graph.FlagInput != 0 &&
				s.roles[x] == roleNone && x.Type == quant.F32 && x.Ne[1] == s.n && x.Ne[2] == 1 && x.Ne[3] == 1 &&
				!isWeight(x) {
				if err := set(x, roleEmbd); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func isWeight(t *graph.Tensor) bool {
	e, ok := t.Extra.(*tensorExtra)
	return ok && e.weight
}

func roleName(r staticRole) string {
	return [...]string{"no", "position", "token", "KV index", "mask", "output index", "embedding"}[r]
}

// tagOf computes (once) the axis tags of t.
func (s *staticInfo) tagOf(t *graph.Tensor) (axisTags, error) {
	if t == nil {
		return axisTags{}, nil
	}
	if tg, ok := s.tags[t]; ok {
		return tg, nil
	}
	var tg axisTags
	var err error
	switch {
	case t.Op == ops.None && t.ViewSrc == nil:
		switch s.roles[t] {
		case rolePos, roleTok:
			tg[0] = tagTok
		case roleKVIdx:
			tg[0] = tagTok
			if s.dynamic && t.Ne[0] != s.n {
				// The transposed V cache's: one index per element.
				if t.Ne[0]%s.n != 0 {
					return tg, notStatic("KV index input %s of %d for %d tokens", t.Name, t.Ne[0], s.n)
				}
				tg[0] = tagTimes(tagTok, t.Ne[0]/s.n)
			}
		case roleOut:
			tg[0] = tagOut
		case roleMask:
			tg[0], tg[1] = tagKV, tagTok
			if s.dynamic {
				tg[1] = tagPad
			}
		case roleEmbd:
			tg[1] = tagTok
		}
	case t.ViewSrc != nil:
		tg, err = s.viewTags(t)
		if err == nil {
			err = s.checkInplace(t, tg)
		}
	default:
		tg, err = s.opTags(t)
	}
	if err != nil {
		return tg, err
	}
	s.tags[t] = tg
	return tg, nil
}

// viewTags tags a view (VIEW, RESHAPE, PERMUTE, TRANSPOSE, or an in-place
// result) by the strides it walks its base with: an axis stepping by the
// base's token stride over all its tokens is a token axis; one stepping by
// a row of an untagged base (the KV cache) over the mask's n_kv cells is
// a KV axis.
func (s *staticInfo) viewTags(t *graph.Tensor) (axisTags, error) {
	base := t.ViewSrc
	bt, err := s.tagOf(base)
	if err != nil {
		return axisTags{}, err
	}
	var tg axisTags
	if a := bt.has(tagTok); a >= 0 {
		found := false
		for i := 0; i < graph.MaxDims; i++ {
			if t.Nb[i] == base.Nb[a] && t.Ne[i] == base.Ne[a] {
				tg[i], found = bt[a], true
				break
			}
		}
		if !found && s.dynamic {
			tg, found = mergedTokens(t, base, bt, a)
		}
		if !found && base.Ne[a] > 1 {
			return tg, notStatic("view %s selects some tokens of %s", t.Name, base.Name)
		}
		if t.ViewOffs >= base.Nb[a] && base.Ne[a] > 1 {
			return tg, notStatic("view %s starts past the first token of %s", t.Name, base.Name)
		}
	}
	if !bt.any() && s.kv > 0 {
		for i := 0; i < graph.MaxDims; i++ {
			if t.Ne[i] != s.kv {
				continue
			}
			if s.dynamic && transposedCells(t, i, base) {
				if s.ctx != 0 && s.ctx != base.Ne[1] {
					return tg, notStatic("KV caches of %d and %d cells", s.ctx, base.Ne[1])
				}
				s.ctx = base.Ne[1]
				tg[i] = tagKV
				break
			}
			for j := 1; j < graph.MaxDims; j++ {
				if t.Nb[i] == base.Nb[j] && base.Ne[j] >= s.kv && t.ViewOffs < base.Nb[j] {
					if s.ctx != 0 && s.ctx != base.Ne[j] {
						return tg, notStatic("KV caches of %d and %d cells", s.ctx, base.Ne[j])
					}
					s.ctx = base.Ne[j]
					tg[i] = tagKV
					break
				}
			}
			if tg[i] == tagKV {
				break
			}
		}
	}
	for i := range bt {
		if bt[i] == tagKV || bt[i] == tagOut {
			for j := 0; j < graph.MaxDims; j++ {
				if t.Nb[j] == base.Nb[i] && t.Ne[j] == base.Ne[i] && tg[j] == tagNone {
					tg[j] = bt[i]
					break
				}
			}
		}
	}
	return tg, nil
}

// checkInplace checks the sources of an in-place op (its result is a
// view of its destination) against that view's tags.
func (s *staticInfo) checkInplace(t *graph.Tensor, tg axisTags) error {
	switch t.Op {
	case ops.View, ops.Reshape, ops.Permute, ops.Transpose, ops.None:
		return nil
	case ops.SetRows:
		b, err := s.tagOf(t.Src[0])
		if err != nil {
			return err
		}
		idx, err := s.tagOf(t.Src[1])
		if err != nil {
			return err
		}
		if b[1] != idx[0] || tg.has(tagTok) >= 0 {
			return notStatic("SET_ROWS %s: rows and indices count different things", t.Name)
		}
		return nil
	case ops.Cpy:
		a, err := s.tagOf(t.Src[0])
		if err != nil {
			return err
		}
		if a != tg {
			return notStatic("CPY %s into a view that is not token-shaped (KV written at a fixed offset?)", t.Name)
		}
		return nil
	}
	return s.sameAsSources(t, tg)
}

// opTags tags the result of a computing op from its sources.
func (s *staticInfo) opTags(t *graph.Tensor) (axisTags, error) {
	var src [graph.MaxSrc]axisTags
	for i, x := range t.Src {
		tg, err := s.tagOf(x)
		if err != nil {
			return axisTags{}, err
		}
		src[i] = tg
	}
	a := src[0]
	switch t.Op {
	case ops.MulMat:
		b := src[1]
		if a[0] != b[0] {
			return axisTags{}, notStatic("MUL_MAT %s contracts different axes", t.Name)
		}
		if a[2] != tagNone || a[3] != tagNone {
			return axisTags{}, notStatic("MUL_MAT %s broadcasts a tagged axis", t.Name)
		}
		return axisTags{a[1], b[1], b[2], b[3]}, nil
	case ops.GetRows:
		b := src[1]
		return axisTags{a[0], b[0], b[1], b[2]}, nil
	case ops.FlashAttnExt:
		q, k, v, m := src[0], src[1], src[2], src[3]
		if k[1] != v[1] || (t.Src[3] != nil && (m[0] != k[1] || !s.maskRows(m[1], q[1]))) || k[0] != tagNone {
			return axisTags{}, notStatic("FLASH_ATTN_EXT %s: K, V and mask disagree", t.Name)
		}
		return axisTags{v[0], q[2], q[1], q[3]}, nil
	case ops.SoftMax:
		if t.Src[1] != nil && (src[1][0] != a[0] || !s.maskRows(src[1][1], a[1])) {
			return axisTags{}, notStatic("SOFT_MAX %s: mask and scores disagree", t.Name)
		}
		return a, nil
	case ops.Add, ops.Sub, ops.Mul, ops.Div, ops.Add1:
		b := src[1]
		for i := range b {
			if b[i] != a[i] && !(b[i] == tagNone && t.Src[1].Ne[i] == 1) {
				return axisTags{}, notStatic("%s %s broadcasts a tagged axis", t.Op, t.Name)
			}
		}
		return a, nil
	case ops.Unary, ops.Scale, ops.RMSNorm, ops.Norm, ops.L2Norm, ops.Rope, ops.Sqr, ops.Sqrt, ops.Clamp, ops.Cont, ops.Dup:
		if (t.Op == ops.Cont || t.Op == ops.Dup) && t.Ne != t.Src[0].Ne && s.dynamic {
			return contTags(t, a)
		}
		if t.Ne != t.Src[0].Ne {
			return axisTags{}, notStatic("%s %s changes the shape", t.Op, t.Name)
		}
		if t.Op == ops.Rope && src[1][0] != a[2] {
			return axisTags{}, notStatic("ROPE %s: positions and rotated rows count different things", t.Name)
		}
		if t.Op == ops.Rope || t.Op == ops.RMSNorm || t.Op == ops.Norm || t.Op == ops.L2Norm || t.Op == ops.SoftMax {
			if a[0].kind() == tagTok {
				return axisTags{}, notStatic("%s %s along the tokens", t.Op, t.Name)
			}
		}
		return a, nil
	case ops.GLU:
		if t.Src[1] != nil && src[1] != a {
			return axisTags{}, notStatic("GLU %s halves differ", t.Name)
		}
		if a[0] != tagNone {
			return axisTags{}, notStatic("GLU %s along a tagged axis", t.Name)
		}
		return a, nil
	}
	tg := axisTags{}
	if err := s.sameAsSources(t, tg); err != nil {
		return tg, err
	}
	return tg, nil
}

// sameAsSources refuses an op this file has no rule for unless none of
// its sources has a tagged axis (it is then the same in the clone).
func (s *staticInfo) sameAsSources(t *graph.Tensor, tg axisTags) error {
	for _, x := range t.Src {
		if x == nil {
			continue
		}
		xt, err := s.tagOf(x)
		if err != nil {
			return err
		}
		if xt.any() || tg.any() {
			return notStatic("no static rule for %s (%s) over token or KV axes", t.Op, t.Name)
		}
	}
	return nil
}

// liveBases are the bases written by g whose contents outlive it (those
// the model writes back, by the rule outputs applies).
func liveBases(g *graph.Graph) []*graph.Tensor {
	dead := map[int]bool{}
	for _, d := range deadWrites(g) {
		dead[d] = true
	}
	seen := map[*graph.Tensor]bool{}
	var out []*graph.Tensor
	for i, n := range g.Nodes {
		if isViewOp(n.Op) || n.Op == ops.None {
			continue
		}
		base := n
		if n.ViewSrc != nil {
			base = n.ViewSrc
		}
		if seen[base] {
			continue
		}
		seen[base] = true
		if !dead[i] {
			out = append(out, base)
		}
	}
	return out
}

// maskRows reports whether a mask's row axis m goes with scores' row axis
// a: the same, or the padded rows of a dynamic analysis over the tokens.
func (s *staticInfo) maskRows(m, a axisTag) bool {
	return m == a || (s.dynamic && m == tagPad && a == tagTok)
}

// mergedTokens tags view t of base whose axis a counts tokens when one
// axis of t runs, contiguously, over base's axes up to a (a Reshape of
// [hd, n_head_kv, T] into [1, hd*n_head_kv*T], the transposed V cache's
// rows): that axis counts tokens too, several elements each.
func mergedTokens(t, base *graph.Tensor, bt axisTags, a int) (axisTags, bool) {
	var tg axisTags
	span := base.Nb[a] * uint64(base.Ne[a])
	for lo := 0; lo < a; lo++ {
		if bt[lo] != tagNone || base.Nb[lo+1] != base.Nb[lo]*uint64(base.Ne[lo]) {
			return tg, false
		}
	}
	inner := int64(1)
	for lo := 0; lo < a; lo++ {
		inner *= base.Ne[lo]
	}
	for i := 0; i < graph.MaxDims; i++ {
		if t.Nb[i] == base.Nb[0] && t.Ne[i] == inner*base.Ne[a] && t.Nb[i]*uint64(t.Ne[i]) == span {
			tg[i] = tagTimes(tagTok, bt[a].factor()*inner)
			return tg, true
		}
	}
	return tg, false
}

// transposedCells reports whether axis i of view t of a [n_embd, ctx]
// cache steps one element at a time inside rows of ctx elements (the
// transposed V cache, channel j of cell c at j*ctx+c): it then counts KV
// cells.
func transposedCells(t *graph.Tensor, i int, base *graph.Tensor) bool {
	es := uint64(t.Type.TypeSize())
	ctx := base.Ne[1]
	if t.Nb[i] != es || base.Ne[2] != 1 || base.Ne[3] != 1 {
		return false
	}
	for j := 0; j < graph.MaxDims; j++ {
		if j != i && t.Ne[j] > 1 && t.Nb[j] == uint64(ctx)*es {
			return true
		}
	}
	return false
}

// contTags tags a CONT that also reshapes (ggml_cont_2d of the attention's
// permuted output): its one tagged source axis, the slowest of those
// above 1, is the result's axis after the same number of elements.
func contTags(t *graph.Tensor, a axisTags) (axisTags, error) {
	var tg axisTags
	src := t.Src[0]
	ax := -1
	for i, x := range a {
		if x != tagNone {
			if ax >= 0 {
				return tg, notStatic("CONT %s reshapes several tagged axes", t.Name)
			}
			ax = i
		}
	}
	if ax < 0 {
		return tg, nil
	}
	inner := int64(1)
	for i := 0; i < ax; i++ {
		inner *= src.Ne[i]
	}
	for i := ax + 1; i < graph.MaxDims; i++ {
		if src.Ne[i] != 1 {
			return tg, notStatic("CONT %s: axes above the tagged one", t.Name)
		}
	}
	prod := int64(1)
	for i := 0; i < graph.MaxDims; i++ {
		if prod == inner && t.Ne[i] == src.Ne[ax] {
			tg[i] = a[ax]
			return tg, nil
		}
		prod *= t.Ne[i]
	}
	return tg, notStatic("CONT %s splits its tagged axis", t.Name)
}

// cloneSizes are the extents a clone gives each kind of tagged axis (0:
// the graph's own).
type cloneSizes [tagPad + 1]int64

// resized is t's shape in a clone of the given sizes.
func (s *staticInfo) resized(t *graph.Tensor, sz cloneSizes) [graph.MaxDims]int64 {
	ne := t.Ne
	tg := s.tags[t]
	for i, x := range tg {
		if k := x.kind(); k != tagNone && sz[k] > 0 {
			ne[i] = sz[k] * x.factor()
		}
	}
	return ne
}

func denseNb(typ quant.Type, ne [graph.MaxDims]int64) [graph.MaxDims]uint64 {
	var nb [graph.MaxDims]uint64
	nb[0] = uint64(typ.TypeSize())
	nb[1] = uint64(typ.RowSize(ne[0]))
	for i := 2; i < graph.MaxDims; i++ {
		nb[i] = nb[i-1] * uint64(ne[i-1])
	}
	return nb
}

// clone builds g re-shaped for tok tokens and ctx KV cells. Untagged
// leaves (weights, the KV cache) are the graph's own tensors; tagged
// inputs are new leaves, to be placed and filled per chunk.
func (s *staticInfo) clone(tok int64) (*graph.Graph, map[*graph.Tensor]*graph.Tensor, error) {
	return s.cloneSized(cloneSizes{tagTok: tok, tagKV: s.ctx})
}

// cloneSized is clone with every kind of tagged axis sized by sz.
func (s *staticInfo) cloneSized(sz cloneSizes) (*graph.Graph, map[*graph.Tensor]*graph.Tensor, error) {
	m := map[*graph.Tensor]*graph.Tensor{}
	var get func(t *graph.Tensor) (*graph.Tensor, error)
	get = func(t *graph.Tensor) (*graph.Tensor, error) {
		if t == nil {
			return nil, nil
		}
		if c, ok := m[t]; ok {
			return c, nil
		}
		tg := s.tags[t]
		if t.Op == ops.None && t.ViewSrc == nil && !tg.any() {
			m[t] = t
			return t, nil
		}
		ne := s.resized(t, sz)
		c := &graph.Tensor{Type: t.Type, Ne: ne, Op: t.Op, Params: t.Params, Flags: t.Flags, Name: t.Name}
		if t.ViewSrc == nil {
			c.Nb = denseNb(t.Type, ne)
			if t.Op == ops.None {
				c.Flags |= graph.FlagInput
			}
		} else {
			base, err := get(t.ViewSrc)
			if err != nil {
				return nil, err
			}
			nb, err := remapStrides(t, base)
			if err != nil {
				return nil, err
			}
			c.Nb, c.ViewSrc, c.ViewOffs = nb, base, t.ViewOffs
		}
		for i, x := range t.Src {
			cx, err := get(x)
			if err != nil {
				return nil, err
			}
			c.Src[i] = cx
		}
		m[t] = c
		return c, nil
	}
	out := graph.NewGraph()
	for _, n := range s.g.Nodes {
		c, err := get(n)
		if err != nil {
			return nil, nil, err
		}
		if err := out.Expand(c); err != nil {
			return nil, nil, err
		}
	}
	// The allocator must not reuse what is copied back after each chunk.
	for _, b := range s.liveBase {
		if c := m[b]; c != b && c != nil {
			c.Flags |= graph.FlagOutput
		}
	}
	return out, m, nil
}

// remapStrides gives view t's strides over its re-shaped base: a stride
// that is one of the old base's is that stride of the new base; one
// inside the part of the base that keeps its layout stays.
func remapStrides(t, nbase *graph.Tensor) ([graph.MaxDims]uint64, error) {
	old := t.ViewSrc
	if old == nbase {
		return t.Nb, nil
	}
	limit := ^uint64(0)
	for j := 0; j < graph.MaxDims; j++ {
		if nbase.Nb[j] != old.Nb[j] && old.Nb[j] < limit {
			limit = old.Nb[j]
		}
	}
	var nb [graph.MaxDims]uint64
	for i := 0; i < graph.MaxDims; i++ {
		found := false
		for j := graph.MaxDims - 1; j >= 0; j-- {
			if t.Nb[i] == old.Nb[j] {
				nb[i], found = nbase.Nb[j], true
				break
			}
		}
		if found {
			continue
		}
		if t.Nb[i] >= limit {
			return nb, notStatic("view %s steps over %s by %d bytes, which depends on the tokens", t.Name, old.Name, t.Nb[i])
		}
		nb[i] = t.Nb[i]
	}
	if t.ViewOffs >= limit {
		return nb, notStatic("view %s at %d bytes into %s, which depends on the tokens", t.Name, t.ViewOffs, old.Name)
	}
	return nb, nil
}
