package optest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"strings"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// The attention family: ROPE and ROPE_BACK, FLASH_ATTN_EXT, SSM_CONV,
// GATED_DELTA_NET and SOLVE_TRI, after test-backend-ops' test_rope,
// test_flash_attn_ext, test_ssm_conv, test_gated_delta_net and
// test_solve_tri. Each case is a small struct holding the test's
// parameters; its name, graph and inputs follow the C++ test exactly, and
// the same struct is filled from a cpu_support.csv description.

func init() {
	Register("attn", attnCases)
	RegisterDescribed([]string{"ROPE", "ROPE_BACK"}, ropeFromDesc)
	RegisterDescribed([]string{"FLASH_ATTN_EXT"}, flashAttnFromDesc)
	RegisterDescribed([]string{"SSM_CONV"}, ssmConvFromDesc)
	RegisterDescribed([]string{"GATED_DELTA_NET"}, gatedDeltaNetFromDesc)
	RegisterDescribed([]string{"SOLVE_TRI"}, solveTriFromDesc)
}

// FlashAttnNMSE is test-backend-ops' tolerance for FLASH_ATTN_EXT.
const FlashAttnNMSE = 5e-4

func attnCases(full bool) []Case {
	var cases []Case
	for _, r := range ropeList(full) {
		cases = append(cases, r.toCase())
	}
	for _, f := range flashAttnList(full) {
		cases = append(cases, f.toCase())
	}
	for _, s := range ssmConvList(full) {
		cases = append(cases, s.toCase())
	}
	for _, g := range gatedDeltaNetList(full) {
		cases = append(cases, g.toCase())
	}
	for _, s := range solveTriList(full) {
		cases = append(cases, s.toCase())
	}
	return cases
}

// attnFillInts writes int32 values from gen into contiguous I32 tensor t.
func attnFillInts(t *graph.Tensor, gen func() int32) {
	for i := range t.NElements() {
		binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(gen()))
	}
}

// ---- ROPE / ROPE_BACK ----

// ropeCase is test_rope: v&1 views a with every dimension but the last
// padded, v == 2 views the second half of each row; forward false builds
// ROPE_BACK. test_rope always passes n_ctx_orig = 0, which collapses
// YaRN's correction range; yarn, when set, gives a real one (and the name
// gains its parameters, so those cases are ours, not test-backend-ops').
type ropeCase struct {
	typ        quant.Type
	ne         [4]int64
	nDims      int32
	mode       ops.RopeMode
	nCtx       int32
	fs, ef, af float32
	ff         bool
	v          int
	forward    bool
	inplace    bool
	nOffs      int32
	yarn       *ropeYarn
}

// ropeYarn are the YaRN parameters test_rope leaves at n_ctx_orig = 0,
// freq_base = 10000, beta_fast = beta_slow = 1.
type ropeYarn struct {
	nCtxOrig           int32
	base               float32
	betaFast, betaSlow float32
}

func (r ropeCase) name() string {
	op := "ROPE"
	if !r.forward {
		op = "ROPE_BACK"
	}
	kv := []any{"type", r.typ, "ne_a", r.ne, "n_dims", r.nDims, "mode", int32(r.mode), "n_ctx", r.nCtx,
		"fs", fmtF(r.fs), "ef", fmtF(r.ef), "af", fmtF(r.af), "ff", b2i(r.ff), "v", r.v,
		"inplace", b2i(r.inplace), "n_offs", r.nOffs}
	if y := r.yarn; y != nil {
		kv = append(kv, "n_ctx_orig", y.nCtxOrig, "freq_base", fmtF(y.base),
			"beta_fast", fmtF(y.betaFast), "beta_slow", fmtF(y.betaSlow))
	}
	return Fmt(op, kv...)
}

func (r ropeCase) toCase() Case {
	return Case{Name: r.name(), Build: r.build, Init: r.init}
}

func (r ropeCase) build(c *graph.Context) []*graph.Tensor {
	ne := r.ne
	var a *graph.Tensor
	switch {
	case r.v&1 != 0:
		base := c.NewTensor(r.typ, ne[0]*2, ne[1]*4, ne[2]*3, ne[3])
		if base == nil {
			return nil
		}
		a = c.View4D(base, ne[0], ne[1], ne[2], ne[3], base.Nb[1], base.Nb[2], base.Nb[3], 0)
	case r.v == 2:
		base := c.NewTensor(r.typ, ne[0]*2, ne[1], ne[2], ne[3])
		if base == nil {
			return nil
		}
		a = c.View4D(base, ne[0], ne[1], ne[2], ne[3], base.Nb[1], base.Nb[2], base.Nb[3], uint64(ne[0])*uint64(r.typ.TypeSize()))
	default:
		a = c.NewTensor(r.typ, ne[:]...)
	}
	multi := r.mode.UsesSections()
	nPos := ne[2]
	if multi {
		nPos *= 4
	}
	pos := c.SetName(c.NewTensor(quant.I32, nPos), "pos")
	var freq *graph.Tensor
	if r.ff {
		freq = c.SetName(c.NewTensor(quant.F32, int64(r.nDims/2)), "freq")
	}
	p := ops.RopeParams{NDims: r.nDims, Mode: r.mode, FreqBase: 10000, FreqScale: r.fs,
		ExtFactor: r.ef, AttnFactor: r.af, BetaFast: 1, BetaSlow: 1}
	if y := r.yarn; y != nil {
		p.NCtxOrig, p.FreqBase, p.BetaFast, p.BetaSlow = y.nCtxOrig, y.base, y.betaFast, y.betaSlow
	}
	var out *graph.Tensor
	if multi {
		if r.mode == ops.RopeVision {
			p.NDims = r.nDims / 2
			p.Sections = [4]int32{r.nDims / 4, r.nDims / 4, 0, 0}
		} else {
			p.Sections = [4]int32{r.nDims / 3, r.nDims / 3, r.nDims / 3, 0}
		}
		switch {
		case !r.forward:
			out = c.RopeMultiBack(a, pos, freq, p)
		case r.inplace:
			out = c.RopeMultiInplace(a, pos, freq, p)
		default:
			out = c.RopeMulti(a, pos, freq, p)
		}
	} else {
		switch {
		case !r.forward:
			out = c.RopeExtBack(a, pos, freq, p)
		case r.inplace:
			out = c.RopeExtInplace(a, pos, freq, p)
		default:
			out = c.RopeExt(a, pos, freq, p)
		}
	}
	if r.nOffs != 0 {
		out = c.RopeSetOffset(out, r.nOffs)
	}
	return []*graph.Tensor{out}
}

// init draws positions below n_ctx and frequency factors in [0.9, 1.1].
func (r ropeCase) init(rng *rand.Rand, t *graph.Tensor) bool {
	switch t.Name {
	case "pos":
		attnFillInts(t, func() int32 { return rng.Int31n(r.nCtx) })
		return true
	case "freq":
		return FillUniform(rng, t, 0.9, 1.1) == nil
	}
	return false
}

// ropeList is test-backend-ops' list of ROPE and ROPE_BACK cases when full
// (466 and 404 of them), or a few small ones of every mode.
func ropeList(full bool) []ropeCase {
	const (
		normal = ops.RopeNormal
		neox   = ops.RopeNeox
		mrope  = ops.RopeMRope
		imrope = ops.RopeIMRope
		vision = ops.RopeVision
	)
	rc := func(typ quant.Type, ne [4]int64, nDims int32, mode ops.RopeMode, fs, ef, af float32, ff bool, v int, fw, inplace bool, nOffs int32) ropeCase {
		return ropeCase{typ: typ, ne: ne, nDims: nDims, mode: mode, nCtx: 512, fs: fs, ef: ef, af: af,
			ff: ff, v: v, forward: fw, inplace: inplace, nOffs: nOffs}
	}
	if !full {
		var out []ropeCase
		for _, typ := range []quant.Type{quant.F32, quant.F16} {
			out = append(out,
				rc(typ, [4]int64{32, 4, 3, 1}, 32, normal, 1, 0, 1, false, 0, true, false, 0),
				rc(typ, [4]int64{64, 5, 3, 1}, 20, neox, 1.4245, 0.7465, 1.4245, true, 1, true, false, 0),
				rc(typ, [4]int64{48, 3, 4, 1}, 24, mrope, 1.4245, 0.7465, 1.4245, true, 0, true, false, 0),
				rc(typ, [4]int64{48, 3, 4, 1}, 48, imrope, 1, 0.7465, 1, false, 1, true, true, 0),
				rc(typ, [4]int64{40, 4, 3, 1}, 40, vision, 1.4245, 0, 1, true, 2, true, false, 0),
				rc(typ, [4]int64{64, 4, 3, 2}, 16, neox, 1.4245, 0.7465, 1.4245, false, 1, false, false, 0),
				rc(typ, [4]int64{64, 4, 3, 1}, 16, normal, 1.4245, 0.7465, 1.4245, true, 0, true, false, 32),
				rc(typ, [4]int64{64, 4, 3, 1}, 24, mrope, 1.4245, 0.7465, 1.4245, false, 0, false, false, 32),
			)
		}
		for i, y := range ropeYarnList() {
			if i%3 == 0 {
				out = append(out, y)
			}
		}
		return out
	}
	out := ropeYarnList()
	for _, fw := range []bool{true, false} {
		all := true
		for _, fs := range []float32{1, 1.4245} {
			for _, ef := range []float32{0, 0.7465} {
				for _, af := range []float32{1, 1.4245} {
					for _, typ := range []quant.Type{quant.F32, quant.F16} {
						for _, ff := range []bool{false, true} {
							for _, v := range []int{0, 1} {
								add := func(ne [4]int64, nDims int32, mode ops.RopeMode) {
									out = append(out, rc(typ, ne, nDims, mode, fs, ef, af, ff, v, fw, false, 0))
								}
								add([4]int64{128, 32, 2, 1}, 128, normal) // llama 7B
								if all {
									add([4]int64{128, 40, 2, 1}, 128, normal)
									add([4]int64{128, 52, 2, 1}, 128, normal)
									add([4]int64{128, 64, 2, 1}, 128, normal)
									add([4]int64{16, 16, 8192, 1}, 16, normal)
									add([4]int64{64, 1, 2, 1}, 64, neox)
									add([4]int64{64, 71, 2, 1}, 64, neox)
									add([4]int64{64, 8, 2, 1}, 64, neox)
									add([4]int64{80, 32, 2, 1}, 20, normal)
									add([4]int64{80, 32, 2, 1}, 32, normal)
									add([4]int64{80, 32, 4, 1}, 32, normal)
									add([4]int64{80, 32, 2, 1}, 20, neox)
									add([4]int64{80, 32, 2, 1}, 32, neox)
									add([4]int64{80, 32, 4, 1}, 32, neox)
									add([4]int64{16, 16, 8192, 1}, 16, neox)
									add([4]int64{128, 12, 2, 1}, 128, mrope)
									add([4]int64{128, 28, 2, 1}, 128, mrope)
									add([4]int64{128, 12, 2, 1}, 20, mrope)
									add([4]int64{128, 28, 2, 1}, 32, mrope)
									add([4]int64{128, 12, 2, 1}, 128, imrope)
									add([4]int64{128, 28, 2, 1}, 128, imrope)
									add([4]int64{128, 12, 2, 1}, 20, imrope)
									add([4]int64{128, 28, 2, 1}, 32, imrope)
									add([4]int64{80, 16, 2, 1}, 80, vision)
									add([4]int64{128, 16, 2, 1}, 128, imrope)
									add([4]int64{16, 16, 8192, 1}, 16, imrope)
								}
								add([4]int64{64, 128, 2, 1}, 64, neox) // falcon 40B
							}
							// A view starting half a row in (build_rope_2d in clip.cpp).
							for _, mode := range []ops.RopeMode{normal, neox, mrope, imrope, vision} {
								out = append(out, rc(typ, [4]int64{36, 16, 2457, 1}, 36, mode, fs, ef, af, ff, 2, fw, false, 0))
							}
						}
						all = false
					}
				}
			}
		}
	}
	for _, typ := range []quant.Type{quant.F32, quant.F16} {
		for _, mode := range []ops.RopeMode{normal, neox, mrope, imrope, vision} {
			for _, ff := range []bool{false, true} {
				out = append(out,
					rc(typ, [4]int64{128, 32, 2, 1}, 128, mode, 1.4245, 0.7465, 1.4245, ff, 0, true, true, 0),
					rc(typ, [4]int64{128, 32, 2, 1}, 128, mode, 1.4245, 0.7465, 1.4245, ff, 1, true, true, 0),
					rc(typ, [4]int64{128, 32, 2, 3}, 128, mode, 1.4245, 0.7465, 1.4245, ff, 1, true, true, 0))
			}
		}
	}
	for _, typ := range []quant.Type{quant.F32, quant.F16} {
		for _, fw := range []bool{true, false} {
			for _, ff := range []bool{false, true} {
				out = append(out,
					rc(typ, [4]int64{128, 32, 2, 1}, 32, normal, 1.4245, 0.7465, 1.4245, ff, 0, fw, false, 32),
					rc(typ, [4]int64{128, 32, 2, 1}, 32, neox, 1.4245, 0.7465, 1.4245, ff, 0, fw, false, 32),
					rc(typ, [4]int64{128, 12, 2, 1}, 24, mrope, 1.4245, 0.7465, 1.4245, ff, 0, fw, false, 32),
					rc(typ, [4]int64{128, 12, 2, 1}, 24, imrope, 1.4245, 0.7465, 1.4245, ff, 0, fw, false, 32))
			}
		}
		out = append(out, rc(typ, [4]int64{128, 32, 2, 1}, 32, neox, 1.4245, 0.7465, 1.4245, false, 0, true, true, 32))
	}
	return out
}

// ropeYarnList are our cases with a real YaRN correction range (context
// 4096, base 1e6, betas 32 and 1, a quarter frequency scale) in every mode.
func ropeYarnList() []ropeCase {
	var out []ropeCase
	for _, mode := range []ops.RopeMode{ops.RopeNormal, ops.RopeNeox, ops.RopeMRope, ops.RopeIMRope, ops.RopeVision} {
		for _, typ := range []quant.Type{quant.F32, quant.F16} {
			for _, ff := range []bool{false, true} {
				for _, fw := range []bool{true, false} {
					out = append(out, ropeCase{typ: typ, ne: [4]int64{128, 8, 6, 1}, nDims: 128, mode: mode, nCtx: 8192,
						fs: 0.25, ef: 1, af: 1, ff: ff, forward: fw, yarn: &ropeYarn{4096, 1e6, 32, 1}})
				}
			}
		}
	}
	return out
}

func ropeFromDesc(op string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := ropeCase{
		typ: r.dtype("type"), ne: r.ne("ne_a"), nDims: int32(r.num64("n_dims")), mode: ops.RopeMode(r.num64("mode")),
		nCtx: int32(r.num64("n_ctx")), fs: r.float("fs"), ef: r.float("ef"), af: r.float("af"), ff: r.flag("ff"),
		v: int(r.num64("v")), forward: op == "ROPE", inplace: r.flag("inplace"), nOffs: int32(r.num64("n_offs")),
	}
	if r.err != nil {
		return Case{}, r.err
	}
	return c.toCase(), nil
}

// ---- FLASH_ATTN_EXT ----

// flashAttnCase is test_flash_attn_ext. Head sizes are padded up to the
// K and V types' block sizes; the scale uses the unpadded hsk.
type flashAttnCase struct {
	hsk, hsv, nh   int64
	nr23           [2]int64
	kv, nb         int64
	mask, sinks    bool
	maxBias        float32
	softcap        float32
	prec           ops.Prec
	typeK, typeV   quant.Type
	permute        [4]int
	kvView, vViewK bool
	// kvCache builds Q, K and V as a llama-style graph does rather than
	// as test-backend-ops does: Q a PERMUTE of a RESHAPE of a [hsk·heads,
	// tokens] projection, K and V PERMUTEs of VIEWs of [hsk·kv_heads,
	// 2·kv] caches. These are the patterns ggml-openvino's FLASH_ATTN_EXT
	// rule accepts, which none of test-backend-ops' cases follows; the
	// case name says so with layout=kv_cache.
	kvCache bool
}

func (f flashAttnCase) name() string {
	prec := "def"
	if f.prec == ops.PrecF32 {
		prec = "f32"
	}
	name := Fmt("FLASH_ATTN_EXT", "hsk", f.hsk, "hsv", f.hsv, "nh", f.nh, "nr23", f.nr23, "kv", f.kv, "nb", f.nb,
		"mask", b2i(f.mask), "sinks", b2i(f.sinks), "max_bias", fmtF(f.maxBias), "logit_softcap", fmtF(f.softcap),
		"prec", prec, "type_K", f.typeK, "type_V", f.typeV, "permute", f.permute,
		"kv_view", b2i(f.kvView), "v_is_view_of_k", b2i(f.vViewK))
	if f.kvCache {
		return strings.TrimSuffix(name, ")") + ",layout=kv_cache)"
	}
	return name
}

func (f flashAttnCase) toCase() Case {
	return Case{Name: f.name(), Build: f.build, Init: f.init, Tol: Tolerance{MaxNMSE: FlashAttnNMSE}}
}

// permuted creates a tensor that, after ggml_permute(permute), has shape
// ne; as a view of one twice as long in dimension 1 when view (a KV cache).
func (f flashAttnCase) permuted(c *graph.Context, typ quant.Type, ne [4]int64, view bool) *graph.Tensor {
	var np [4]int64
	for i, ax := range f.permute {
		np[ax] = ne[i]
	}
	var t *graph.Tensor
	if view {
		base := c.NewTensor(typ, np[0], 2*np[1], np[2], np[3])
		if base == nil {
			return nil
		}
		t = c.View4D(base, np[0], np[1], np[2], np[3], base.Nb[1], base.Nb[2], base.Nb[3], 0)
	} else {
		t = c.NewTensor(typ, np[:]...)
	}
	if f.permute != [4]int{0, 1, 2, 3} {
		t = c.Permute(t, f.permute[0], f.permute[1], f.permute[2], f.permute[3])
	}
	return t
}

func (f flashAttnCase) build(c *graph.Context) []*graph.Tensor {
	pad := func(n int64, typ quant.Type) int64 {
		b := int64(typ.BlockSize())
		return (n + b - 1) / b * b
	}
	hsk, hsv := pad(f.hsk, f.typeK), pad(f.hsv, f.typeV)
	nr2, nr3 := f.nr23[0], f.nr23[1]
	if f.kvCache {
		return f.buildKVCache(c, hsk, hsv)
	}
	q := f.permuted(c, quant.F32, [4]int64{hsk, f.nb, f.nh * nr2, nr3}, false)
	k := f.permuted(c, f.typeK, [4]int64{hsk, f.kv, f.nh, nr3}, f.kvView)
	var v *graph.Tensor
	if f.vViewK {
		if f.typeK != f.typeV || hsv > hsk || k == nil {
			c.Fail(fmt.Errorf("%w: V as a view of K needs the same type and hsv <= hsk", graph.ErrArgument))
			return nil
		}
		v = c.View4D(k, hsv, f.kv, f.nh, nr3, k.Nb[1], k.Nb[2], k.Nb[3], 0)
	} else {
		v = f.permuted(c, f.typeV, [4]int64{hsv, f.kv, f.nh, nr3}, f.kvView)
	}
	var m, s *graph.Tensor
	if f.mask {
		m = c.SetName(c.NewTensor(quant.F16, f.kv, f.nb, 1, nr3), "m")
	}
	if f.sinks && q != nil {
		s = c.SetName(c.NewTensor(quant.F32, q.Ne[2]), "s")
	}
	scale := 1 / float32(math.Sqrt(float64(float32(f.hsk))))
	out := c.FlashAttnExt(q, k, v, m, scale, f.maxBias, f.softcap)
	out = c.FlashAttnExtAddSinks(out, s)
	out = c.FlashAttnExtSetPrec(out, f.prec)
	return []*graph.Tensor{out}
}

// buildKVCache is build for the kvCache layout: Q from a [hsk·nh·nr2,
// nb, nr3] projection reshaped to heads and permuted to [hsk, nb, heads,
// nr3]; K and V the first kv rows of [hsk·nh, 2·kv, nr3] caches viewed as
// [hsk, nh, kv, nr3] and permuted to [hsk, kv, nh, nr3].
func (f flashAttnCase) buildKVCache(c *graph.Context, hsk, hsv int64) []*graph.Tensor {
	nr2, nr3 := f.nr23[0], f.nr23[1]
	qp := c.NewTensor(quant.F32, hsk*f.nh*nr2, f.nb, nr3)
	q := c.Permute(c.Reshape(qp, hsk, f.nh*nr2, f.nb, nr3), 0, 2, 1, 3)
	cache := func(typ quant.Type, hs int64) *graph.Tensor {
		t := c.NewTensor(typ, hs*f.nh, 2*f.kv, nr3)
		if t == nil {
			return nil
		}
		es := uint64(typ.TypeSize())
		v := c.View4D(t, hs, f.nh, f.kv, nr3, uint64(hs)*es, t.Nb[1], t.Nb[2], 0)
		return c.Permute(v, 0, 2, 1, 3)
	}
	k, v := cache(f.typeK, hsk), cache(f.typeV, hsv)
	var m *graph.Tensor
	if f.mask {
		m = c.SetName(c.NewTensor(quant.F16, f.kv, f.nb, 1, nr3), "m")
	}
	scale := 1 / float32(math.Sqrt(float64(float32(f.hsk))))
	out := c.FlashAttnExtSetPrec(c.FlashAttnExt(q, k, v, m, scale, 0, 0), f.prec)
	return []*graph.Tensor{out}
}

// flashAttnKVCache are the kvCache-layout cases: decode (one token) and
// prompt shapes, grouped-query heads, with and without a mask, F16, BF16
// and F32 caches, both precisions; a few when quick.
func flashAttnKVCache(full bool) []flashAttnCase {
	kc := func(hs, nh, nr2, kv, nb int64, mask bool, prec ops.Prec, t quant.Type) flashAttnCase {
		return flashAttnCase{hsk: hs, hsv: hs, nh: nh, nr23: [2]int64{nr2, 1}, kv: kv, nb: nb, mask: mask,
			prec: prec, typeK: t, typeV: t, permute: [4]int{0, 2, 1, 3}, kvView: true, kvCache: true}
	}
	f32, def := ops.PrecF32, ops.PrecDefault
	if !full {
		return []flashAttnCase{
			kc(64, 2, 2, 113, 1, true, f32, quant.F16),
			kc(64, 1, 4, 96, 7, true, def, quant.F16),
			kc(32, 2, 1, 64, 3, false, f32, quant.F32),
		}
	}
	var out []flashAttnCase
	for _, hs := range []int64{64, 128} {
		for _, heads := range [][2]int64{{1, 1}, {2, 4}, {4, 2}} {
			for _, kv := range []int64{113, 256} {
				for _, nb := range []int64{1, 7, 32} {
					for _, t := range []quant.Type{quant.F16, quant.BF16, quant.F32} {
						mask := nb != 7 || t != quant.F32
						prec := f32
						if t == quant.F16 && kv == 256 {
							prec = def
						}
						out = append(out, kc(hs, heads[0], heads[1], kv, nb, mask, prec, t))
					}
				}
			}
		}
	}
	return out
}

// init makes the sinks large enough to matter (uniform in [-10, 10]) and
// fills the mask as init_tensor_kq_mask does.
func (f flashAttnCase) init(rng *rand.Rand, t *graph.Tensor) bool {
	switch t.Name {
	case "s":
		return FillUniform(rng, t, -10, 10) == nil
	case "m":
		return SetFloats(t, kqMask(rng, t.Ne)) == nil
	}
	return false
}

// kqMask is init_tensor_kq_mask: values uniform in [-1, 1] with, per 8192
// elements, 0.2 blocks of 64 rows by 128 columns set to -inf or to 0.
func kqMask(rng *rand.Rand, ne [4]int64) []float32 {
	v := make([]float32, ne[0]*ne[1]*ne[2]*ne[3])
	for i := range v {
		v[i] = -1 + 2*rng.Float32()
	}
	const blck0, blck1 = 128, 64
	nBlocks := int(0.2 * float64(len(v)) / (blck0 * blck1))
	for range nBlocks {
		p3, p2, p1, p0 := rng.Int63n(ne[3]), rng.Int63n(ne[2]), rng.Int63n(ne[1]), rng.Int63n(ne[0])
		fill := float32(0)
		if rng.Intn(2) == 1 {
			fill = float32(math.Inf(-1))
		}
		for i1 := int64(0); i1 < blck1 && p1+i1 < ne[1]; i1++ {
			row := ((p3*ne[2]+p2)*ne[1] + p1 + i1) * ne[0]
			for i0 := int64(0); i0 < blck0 && p0+i0 < ne[0]; i0++ {
				v[row+p0+i0] = fill
			}
		}
	}
	return v
}

// flashAttnAll is test-backend-ops' full list of FLASH_ATTN_EXT cases
// (5,158 of them): its main loop, then flashAttnExtras.
func flashAttnAll() []flashAttnCase {
	f32 := ops.PrecF32
	fa := func(hsk, hsv, nh int64, nr23 [2]int64, kv, nb int64, mask, sinks bool, maxBias, softcap float32, prec ops.Prec, tk, tv quant.Type) flashAttnCase {
		return flashAttnCase{hsk: hsk, hsv: hsv, nh: nh, nr23: nr23, kv: kv, nb: nb, mask: mask, sinks: sinks,
			maxBias: maxBias, softcap: softcap, prec: prec, typeK: tk, typeV: tv, permute: [4]int{0, 1, 2, 3}, kvView: true}
	}
	var out []flashAttnCase
	// Prefill shapes with long KV.
	for _, kv := range []int64{1024, 2048} {
		for _, hs := range []int64{64, 128, 256} {
			for _, nb := range []int64{32, 64} {
				for _, t := range []quant.Type{quant.F16, quant.Q8_0, quant.Q4_0} {
					out = append(out, fa(hs, hs, 8, [2]int64{4, 1}, kv, nb, true, false, 0, 0, f32, t, t))
				}
			}
		}
	}
	kvTypes := []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q8_0, quant.Q5_1, quant.Q5_0, quant.Q4_1, quant.Q4_0, quant.IQ4_NL}
	for _, hsk := range []int64{40, 64, 72, 80, 96, 128, 192, 256, 320, 512, 576} {
		for _, hsv := range []int64{40, 64, 72, 80, 96, 128, 192, 256, 512} {
			switch {
			case hsk != 192 && hsk != 320 && hsk != 576 && hsk != hsv,
				hsk == 192 && hsv != 128 && hsv != 192,
				hsk == 576 && hsv != 512,
				hsk == 320 && hsv != 256:
				continue
			}
			for _, mask := range []bool{true, false} {
				for _, sinks := range []bool{true, false} {
					for _, maxBias := range []float32{0, 8} {
						if !mask && maxBias > 0 {
							continue
						}
						for _, softcap := range []float32{0, 10} {
							if hsk != 128 && softcap != 0 {
								continue
							}
							for _, nh := range []int64{1, 4} {
								if nh == 1 && hsk != 320 && hsk != 576 {
									continue
								}
								for _, nr3 := range []int64{1, 3} {
									if hsk > 64 && nr3 > 1 {
										continue
									}
									for _, nr2 := range []int64{1, 4, 8, 12, 16, 20, 32} {
										switch {
										case nr2 == 8 && hsk != 192, nr2 == 12 && hsk != 128, nr2 == 16 && hsk != 192,
											nr2 == 20 && (nh != 1 || hsk != 576), nr2 == 32 && (nh != 1 || hsk != 320):
											continue
										}
										for _, kv := range []int64{113, 512, 1024} {
											if nr2 != 1 && kv != 512 {
												continue
											}
											for _, nb := range []int64{1, 3, 32, 75} {
												for _, prec := range []ops.Prec{f32, ops.PrecDefault} {
													if hsk != 128 && prec == ops.PrecDefault {
														continue
													}
													for _, t := range kvTypes {
														if t != quant.F16 && hsk != 64 && hsk != 72 {
															continue
														}
														c := fa(hsk, hsv, nh, [2]int64{nr2, nr3}, kv, nb, mask, sinks, maxBias, softcap, prec, t, t)
														c.vViewK = hsk == 576 // DeepSeek MLA
														out = append(out, c)
														if mask && maxBias == 0 && softcap == 0 && kv == 512 {
															c.permute = [4]int{0, 2, 1, 3}
															out = append(out, c)
														}
													}
												}
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return append(out, flashAttnExtras()...)
}

// flashAttnExtras are the cases test-backend-ops lists after its main loop:
// mixed K/V types and the Q1_0/Q2_0 formats, Q8_0 decode and prompt
// shapes, V as a view of K, long KV and dense quantized K/V.
func flashAttnExtras() []flashAttnCase {
	f32 := ops.PrecF32
	id, swap := [4]int{0, 1, 2, 3}, [4]int{0, 2, 1, 3}
	fa := func(hsk, hsv, nh int64, nr23 [2]int64, kv, nb int64, sinks bool, maxBias, softcap float32, tk, tv quant.Type, perm [4]int, kvView, vViewK bool) flashAttnCase {
		return flashAttnCase{hsk: hsk, hsv: hsv, nh: nh, nr23: nr23, kv: kv, nb: nb, mask: true, sinks: sinks,
			maxBias: maxBias, softcap: softcap, prec: f32, typeK: tk, typeV: tv, permute: perm, kvView: kvView, vViewK: vViewK}
	}
	mixed := func(hsk, hsv, kv, nb int64, tk, tv quant.Type) flashAttnCase {
		return fa(hsk, hsv, 4, [2]int64{1, 1}, kv, nb, false, 0, 0, tk, tv, id, true, false)
	}
	noMask := mixed(128, 128, 256, 1, quant.F16, quant.Q4_0)
	noMask.mask = false
	out := []flashAttnCase{
		mixed(64, 64, 128, 2, quant.Q8_0, quant.Q4_0),
		mixed(64, 64, 128, 2, quant.Q4_0, quant.F16),
		mixed(72, 72, 96, 2, quant.Q4_0, quant.Q8_0),
		mixed(64, 64, 96, 2, quant.F16, quant.F32),
		noMask,
		mixed(128, 128, 96, 2, quant.Q1_0, quant.Q1_0),
		mixed(128, 64, 128, 2, quant.Q1_0, quant.Q4_0),
		mixed(64, 128, 128, 2, quant.Q4_0, quant.Q1_0),
		mixed(128, 64, 64, 2, quant.Q1_0, quant.F16),
		mixed(128, 128, 96, 2, quant.Q2_0, quant.Q2_0),
		mixed(128, 64, 128, 2, quant.Q2_0, quant.Q4_0),
		mixed(64, 128, 128, 2, quant.Q4_0, quant.Q2_0),
		mixed(128, 64, 64, 2, quant.Q2_0, quant.F16),

		fa(256, 256, 2, [2]int64{16, 1}, 113, 1, false, 0, 0, quant.Q8_0, quant.Q8_0, id, true, false),
		fa(256, 256, 2, [2]int64{16, 1}, 1024, 1, false, 0, 0, quant.Q8_0, quant.Q8_0, id, true, false),
		fa(256, 256, 2, [2]int64{16, 1}, 1024, 1, false, 0, 0, quant.Q8_0, quant.Q8_0, swap, true, false),
		fa(256, 256, 2, [2]int64{16, 2}, 1025, 1, true, 8, 30, quant.Q8_0, quant.Q8_0, id, true, false),
		fa(256, 256, 2, [2]int64{16, 1}, 1025, 64, false, 0, 0, quant.Q8_0, quant.Q8_0, swap, true, false),
		fa(256, 256, 2, [2]int64{16, 1}, 16384, 1, false, 0, 0, quant.Q8_0, quant.Q8_0, id, true, false),

		fa(576, 512, 1, [2]int64{20, 1}, 113, 1, false, 0, 0, quant.Q8_0, quant.Q8_0, id, true, true),
		fa(576, 512, 1, [2]int64{20, 1}, 1024, 1, false, 0, 0, quant.Q8_0, quant.Q8_0, id, true, true),
		fa(576, 512, 1, [2]int64{20, 1}, 1024, 64, false, 0, 0, quant.Q8_0, quant.Q8_0, id, true, true),
		fa(320, 256, 1, [2]int64{32, 1}, 512, 1, false, 0, 0, quant.F16, quant.F16, id, true, true),
		fa(192, 128, 4, [2]int64{8, 1}, 512, 1, false, 0, 0, quant.F16, quant.F16, id, true, true),
		fa(128, 128, 8, [2]int64{4, 1}, 512, 8, false, 0, 0, quant.F16, quant.F16, id, true, true),
		fa(64, 64, 4, [2]int64{1, 1}, 512, 1, false, 0, 0, quant.Q8_0, quant.Q8_0, id, true, true),
	}
	for _, kv := range []int64{4096, 16384} {
		out = append(out,
			fa(256, 256, 4, [2]int64{6, 1}, kv, 512, false, 0, 0, quant.F16, quant.F16, id, true, false),
			fa(128, 128, 8, [2]int64{4, 1}, kv, 512, false, 0, 0, quant.F16, quant.F16, id, true, false))
	}
	return append(out,
		fa(64, 64, 4, [2]int64{1, 1}, 512, 75, false, 0, 0, quant.Q8_0, quant.Q8_0, swap, false, false),
		fa(64, 64, 4, [2]int64{4, 1}, 512, 75, false, 0, 0, quant.Q8_0, quant.Q8_0, swap, false, false),
		fa(64, 64, 4, [2]int64{1, 1}, 1024, 75, false, 0, 0, quant.Q8_0, quant.Q8_0, swap, false, false),
		fa(64, 64, 4, [2]int64{1, 1}, 512, 75, false, 0, 0, quant.Q8_0, quant.Q8_0, id, false, false),
	)
}

// flashAttnBudget bounds the multiply-adds of one full-run case, so the
// pure-Go reference finishes the full set in minutes.
const flashAttnBudget = 40 << 20

// flashAttnList is, when full, every 5th case of test-backend-ops' main
// loop (its innermost parameters, the K/V types and precisions, rotate
// through the sample) and every extra case, all within flashAttnBudget;
// otherwise a few small cases covering GQA, masks with ALiBi, softcap,
// sinks, permuted and quantized K/V, and V as a view of K.
func flashAttnList(full bool) []flashAttnCase {
	if full {
		all := flashAttnAll()
		nExtra := len(flashAttnExtras())
		var out []flashAttnCase
		for i, f := range all {
			cost := f.nh * f.nr23[0] * f.nr23[1] * f.nb * f.kv * (f.hsk + f.hsv)
			if (i%5 == 0 || i >= len(all)-nExtra) && cost <= flashAttnBudget {
				out = append(out, f)
			}
		}
		return append(out, flashAttnKVCache(true)...)
	}
	base := flashAttnCase{hsk: 64, hsv: 64, nh: 2, nr23: [2]int64{2, 1}, kv: 113, nb: 3, mask: true,
		prec: ops.PrecF32, typeK: quant.F16, typeV: quant.F16, permute: [4]int{0, 1, 2, 3}, kvView: true}
	with := func(fn func(*flashAttnCase)) flashAttnCase {
		c := base
		fn(&c)
		return c
	}
	return append([]flashAttnCase{
		base,
		with(func(c *flashAttnCase) { c.sinks, c.maxBias, c.nr23 = true, 8, [2]int64{1, 3} }),
		with(func(c *flashAttnCase) { c.hsk, c.hsv, c.softcap, c.prec, c.mask = 128, 128, 10, 0, false }),
		with(func(c *flashAttnCase) {
			c.typeK, c.typeV, c.permute, c.sinks = quant.F32, quant.F32, [4]int{0, 2, 1, 3}, true
		}),
		with(func(c *flashAttnCase) { c.typeK, c.typeV, c.hsk, c.hsv = quant.Q8_0, quant.Q4_0, 72, 72 }),
		with(func(c *flashAttnCase) { c.typeK, c.typeV, c.nb, c.kvView = quant.BF16, quant.BF16, 1, false }),
		with(func(c *flashAttnCase) { c.typeK, c.typeV = quant.Q5_1, quant.IQ4_NL }),
		with(func(c *flashAttnCase) { c.hsk, c.hsv, c.nh, c.nr23, c.vViewK = 96, 64, 1, [2]int64{4, 1}, true }),
	}, flashAttnKVCache(false)...)
}

func flashAttnFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	nr23, perm := r.ints("nr23", 2), r.ints("permute", 4)
	f := flashAttnCase{
		hsk: r.num64("hsk"), hsv: r.num64("hsv"), nh: r.num64("nh"), nr23: [2]int64{nr23[0], nr23[1]},
		kv: r.num64("kv"), nb: r.num64("nb"), mask: r.flag("mask"), sinks: r.flag("sinks"),
		maxBias: r.float("max_bias"), softcap: r.float("logit_softcap"),
		typeK: r.dtype("type_K"), typeV: r.dtype("type_V"),
		permute: [4]int{int(perm[0]), int(perm[1]), int(perm[2]), int(perm[3])},
		kvView:  r.flag("kv_view"), vViewK: r.flag("v_is_view_of_k"),
	}
	switch d["layout"] {
	case "":
	case "kv_cache":
		f.kvCache = true
	default:
		return Case{}, fmt.Errorf("optest: layout=%q", d["layout"])
	}
	switch d["prec"] {
	case "f32":
		f.prec = ops.PrecF32
	case "def":
		f.prec = ops.PrecDefault
	default:
		return Case{}, fmt.Errorf("optest: prec=%q", d["prec"])
	}
	if r.err != nil {
		return Case{}, r.err
	}
	return f.toCase(), nil
}

// ---- SSM_CONV ----

type ssmConvCase struct {
	typ      quant.Type
	neA, neB [4]int64
}

func (s ssmConvCase) toCase() Case {
	return Case{
		Name: Fmt("SSM_CONV", "type", s.typ, "ne_a", s.neA, "ne_b", s.neB),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.SSMConv(c.NewTensor(s.typ, s.neA[:]...), c.NewTensor(s.typ, s.neB[:]...))}
		},
	}
}

// ssmConvList is test-backend-ops' 45 SSM_CONV cases, or 3 small ones.
func ssmConvList(full bool) []ssmConvCase {
	if !full {
		return []ssmConvCase{
			{quant.F32, [4]int64{4, 16, 1, 1}, [4]int64{4, 16, 1, 1}},
			{quant.F32, [4]int64{8, 16, 3, 1}, [4]int64{4, 16, 1, 1}},
			{quant.F32, [4]int64{11, 24, 2, 1}, [4]int64{3, 24, 1, 1}},
		}
	}
	var out []ssmConvCase
	for _, dc := range []int64{3, 4, 9} {
		for _, di := range []int64{1024, 1536, 2048} {
			w := [4]int64{dc, di, 1, 1}
			for _, a := range [][4]int64{{dc, di, 1, 1}, {2 * dc, di, 1, 1}, {dc, di, 4, 1}, {dc - 1 + 64, di, 1, 1}, {dc - 1 + 64, di, 4, 1}} {
				out = append(out, ssmConvCase{quant.F32, a, w})
			}
		}
	}
	return out
}

func ssmConvFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := ssmConvCase{typ: r.dtype("type"), neA: r.ne("ne_a"), neB: r.ne("ne_b")}
	if r.err != nil {
		return Case{}, r.err
	}
	return c.toCase(), nil
}

// ---- GATED_DELTA_NET ----

// gatedDeltaNetCase is test_gated_delta_net. The C++ test feeds q and k
// through ggml_l2_norm first; here their rows are L2-normalized as inputs,
// which keeps the graph to the one operation under test.
type gatedDeltaNetCase struct {
	typ                       quant.Type
	heads, size, tokens, seqs int64
	vRepeat                   int64
	permuted, kda             bool
	k                         int64
}

func (g gatedDeltaNetCase) toCase() Case {
	return Case{
		Name: Fmt("GATED_DELTA_NET", "type", g.typ, "head_count", g.heads, "head_size", g.size,
			"n_seq_tokens", g.tokens, "n_seqs", g.seqs, "v_repeat", g.vRepeat,
			"permuted", b2i(g.permuted), "kda", b2i(g.kda), "K", g.k),
		Build: g.build,
		Init:  g.init,
	}
}

func (g gatedDeltaNetCase) build(c *graph.Context) []*graph.Tensor {
	hv := g.heads * g.vRepeat
	mk := func(name string, heads int64) *graph.Tensor {
		if !g.permuted {
			return c.SetName(c.NewTensor(g.typ, g.size, heads, g.tokens, g.seqs), name)
		}
		t := c.SetName(c.NewTensor(g.typ, g.size, g.tokens, heads, g.seqs), name)
		return c.Permute(t, 0, 2, 1, 3)
	}
	q, k, v := mk("q", g.heads), mk("k", g.heads), mk("v", hv)
	g0 := int64(1)
	if g.kda {
		g0 = g.size
	}
	gate := c.SetName(c.NewTensor(g.typ, g0, hv, g.tokens, g.seqs), "g")
	beta := c.SetName(c.NewTensor(g.typ, 1, hv, g.tokens, g.seqs), "beta")
	state := c.SetName(c.NewTensor(g.typ, g.size, g.size, hv, g.seqs), "state")
	return []*graph.Tensor{c.GatedDeltaNet(q, k, v, gate, beta, state, g.k)}
}

func (g gatedDeltaNetCase) init(rng *rand.Rand, t *graph.Tensor) bool {
	switch t.Name {
	case "q", "k":
		if FillUniform(rng, t, -1, 1) != nil {
			return false
		}
		v, err := Floats(t)
		if err != nil {
			return false
		}
		for r := 0; r < len(v); r += int(t.Ne[0]) {
			row := v[r : r+int(t.Ne[0])]
			var sum float32
			for _, x := range row {
				sum += x * x
			}
			scale := 1 / max(float32(math.Sqrt(float64(sum))), 1e-6)
			for i := range row {
				row[i] *= scale
			}
		}
		return SetFloats(t, v) == nil
	case "g":
		return FillUniform(rng, t, -20, -1e-4) == nil
	case "beta":
		return FillUniform(rng, t, 0, 1) == nil
	case "v":
		return FillUniform(rng, t, -0.3, 5) == nil
	}
	return false
}

// gatedDeltaNetList is test-backend-ops' 36 GATED_DELTA_NET cases, or a few
// small ones.
func gatedDeltaNetList(full bool) []gatedDeltaNetCase {
	gd := func(heads, size, tokens, seqs, vRepeat int64, permuted, kda bool, k int64) gatedDeltaNetCase {
		return gatedDeltaNetCase{quant.F32, heads, size, tokens, seqs, vRepeat, permuted, kda, k}
	}
	if !full {
		return []gatedDeltaNetCase{
			gd(4, 16, 3, 2, 1, false, false, 1),
			gd(2, 16, 4, 2, 2, true, true, 1),
			gd(4, 8, 5, 1, 1, false, true, 3),
		}
	}
	return []gatedDeltaNetCase{
		gd(32, 128, 1, 1, 1, false, false, 1),
		gd(32, 16, 1, 1, 1, false, false, 1),
		gd(32, 16, 1, 1, 1, true, true, 1),
		gd(32, 16, 1, 1, 1, false, true, 1),
		gd(16, 64, 1, 2, 1, false, false, 1),
		gd(4, 64, 4, 1, 1, false, false, 1),
		gd(4, 64, 4, 2, 1, false, false, 1),
		gd(8, 32, 4, 2, 2, false, false, 1),
		gd(4, 64, 4, 2, 1, true, false, 1),
		gd(4, 64, 4, 1, 1, true, false, 1),
		gd(4, 64, 1, 1, 1, false, true, 1),
		gd(4, 64, 1, 2, 1, false, true, 1),
		gd(4, 16, 1, 2, 1, false, true, 1),
		gd(4, 32, 4, 1, 1, false, true, 1),
		gd(4, 64, 4, 2, 1, false, true, 1),
		gd(8, 32, 4, 2, 2, false, true, 1),
		gd(4, 64, 4, 2, 1, true, true, 1),
		gd(4, 16, 4, 2, 1, true, true, 1),
		gd(4, 64, 64, 1, 1, false, false, 1),
		gd(4, 64, 127, 1, 1, false, false, 1),
		gd(4, 64, 256, 1, 1, false, false, 1),
		gd(4, 64, 65, 1, 1, false, false, 1),
		gd(4, 64, 100, 1, 1, false, false, 1),
		gd(4, 64, 200, 1, 1, false, false, 1),
		gd(4, 64, 127, 2, 1, false, false, 1),
		gd(4, 64, 64, 1, 1, false, true, 1),
		gd(4, 64, 33, 1, 1, false, true, 1),
		gd(4, 64, 100, 1, 1, false, true, 1),
		gd(4, 16, 2, 1, 1, false, false, 2),
		gd(4, 32, 4, 1, 1, false, false, 4),
		gd(4, 64, 4, 2, 1, false, false, 4),
		gd(8, 128, 4, 1, 1, false, false, 4),
		gd(4, 64, 4, 2, 1, false, true, 4),
		gd(8, 32, 4, 2, 2, false, true, 4),
		gd(4, 32, 8, 1, 1, false, false, 3),
		gd(4, 64, 16, 2, 1, false, false, 4),
	}
}

func gatedDeltaNetFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	g := gatedDeltaNetCase{
		typ: r.dtype("type"), heads: r.num64("head_count"), size: r.num64("head_size"),
		tokens: r.num64("n_seq_tokens"), seqs: r.num64("n_seqs"), vRepeat: r.num64("v_repeat"),
		permuted: r.flag("permuted"), kda: r.flag("kda"), k: r.num64("K"),
	}
	if r.err != nil {
		return Case{}, r.err
	}
	return g.toCase(), nil
}

// ---- SOLVE_TRI ----

type solveTriCase struct {
	typ      quant.Type
	neA, neB [4]int64
}

func (s solveTriCase) toCase() Case {
	return Case{
		Name: Fmt("SOLVE_TRI", "type", s.typ, "ne_lhs", s.neA, "ne_rhs", s.neB),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.SetName(c.NewTensor(s.typ, s.neA[:]...), "a")
			b := c.SetName(c.NewTensor(s.typ, s.neB[:]...), "b")
			return []*graph.Tensor{c.SolveTri(a, b, true, true, false)}
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool {
			if t.Name != "a" {
				return false
			}
			// Lower triangular with a diagonal away from zero.
			v := make([]float32, t.NElements())
			n := t.Ne[0]
			for i := range v {
				if int64(i)%n <= int64(i)/n%n {
					v[i] = 0.1 + 0.9*rng.Float32()
				}
			}
			return SetFloats(t, v) == nil
		},
	}
}

// solveTriList is test-backend-ops' 24 SOLVE_TRI cases, or 3 small ones.
func solveTriList(full bool) []solveTriCase {
	st := func(a, b [4]int64) solveTriCase { return solveTriCase{quant.F32, a, b} }
	if !full {
		return []solveTriCase{
			st([4]int64{10, 10, 4, 3}, [4]int64{3, 10, 4, 3}),
			st([4]int64{11, 11, 1, 1}, [4]int64{5, 11, 1, 1}),
			st([4]int64{17, 17, 2, 4}, [4]int64{9, 17, 2, 4}),
		}
	}
	return []solveTriCase{
		st([4]int64{10, 10, 4, 3}, [4]int64{3, 10, 4, 3}),
		st([4]int64{11, 11, 1, 1}, [4]int64{5, 11, 1, 1}),
		st([4]int64{17, 17, 2, 4}, [4]int64{9, 17, 2, 4}),
		st([4]int64{30, 30, 7, 1}, [4]int64{8, 30, 7, 1}),
		st([4]int64{42, 42, 5, 2}, [4]int64{10, 42, 5, 2}),
		st([4]int64{64, 64, 2, 2}, [4]int64{10, 64, 2, 2}),
		st([4]int64{64, 64, 2, 2}, [4]int64{64, 64, 2, 2}),
		st([4]int64{79, 79, 5, 3}, [4]int64{417, 79, 5, 3}),
		st([4]int64{128, 128, 4, 2}, [4]int64{32, 128, 4, 2}),
		st([4]int64{80, 80, 2, 8}, [4]int64{80, 80, 2, 8}),
		st([4]int64{80, 80, 2, 8}, [4]int64{79, 80, 2, 8}),
		st([4]int64{80, 80, 2, 8}, [4]int64{81, 80, 2, 8}),
		st([4]int64{80, 80, 8, 8}, [4]int64{80, 80, 8, 8}),
		st([4]int64{80, 80, 8, 8}, [4]int64{79, 80, 8, 8}),
		st([4]int64{80, 80, 8, 8}, [4]int64{81, 80, 8, 8}),
		st([4]int64{84, 84, 4, 4}, [4]int64{32, 84, 4, 4}),
		st([4]int64{95, 95, 8, 8}, [4]int64{40, 95, 8, 8}),
		st([4]int64{100, 100, 4, 4}, [4]int64{41, 100, 4, 4}),
		st([4]int64{128, 128, 4, 4}, [4]int64{31, 128, 4, 4}),
		st([4]int64{128, 128, 4, 4}, [4]int64{32, 128, 4, 4}),
		st([4]int64{128, 128, 3, 4}, [4]int64{32, 128, 3, 4}),
		st([4]int64{128, 128, 4, 1}, [4]int64{32, 128, 4, 1}),
		st([4]int64{64, 64, 4, 4}, [4]int64{200, 64, 4, 4}),
		st([4]int64{64, 64, 4, 4}, [4]int64{384, 64, 4, 4}),
	}
}

func solveTriFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := solveTriCase{typ: r.dtype("type"), neA: r.ne("ne_lhs"), neB: r.ne("ne_rhs")}
	if r.err != nil {
		return Case{}, r.err
	}
	return c.toCase(), nil
}
