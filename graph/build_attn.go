package graph

import (
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// rope is ggml_rope_impl. sections are kept only for the multi-section
// modes and n_offs always starts at 0, as in ggml.
func (c *Context) rope(op ops.Op, builder string, a, pos, freq *Tensor, p ops.RopeParams, multi, inplace bool) *Tensor {
	if !c.ok(builder, a, pos) {
		return nil
	}
	if p.Mode&1 != 0 {
		c.failf(ErrArgument, builder, "mode %d: mode & 1 is no longer supported", p.Mode)
		return nil
	}
	// ggml checks these only in its kernels (GGML_ASSERT, an abort); a
	// graph that cannot be computed is refused here with the reason.
	if p.NDims <= 0 || p.NDims%2 != 0 {
		c.failf(ErrArgument, builder, "n_dims = %d must be positive and even (dimensions rotate in pairs)", p.NDims)
		return nil
	}
	if int64(p.NDims) > a.Ne[0] {
		c.failf(ErrShape, builder, "n_dims = %d is larger than the rows of %s", p.NDims, a)
		return nil
	}
	if p.Mode == ops.RopeVision && 2*int64(p.NDims) != a.Ne[0] {
		c.failf(ErrShape, builder, "vision mode rotates whole rows: n_dims = %d must be half of the rows of %s", p.NDims, a)
		return nil
	}
	if pos.Ne[1] != 1 || pos.Ne[2] != 1 || pos.Ne[3] != 1 || pos.Type != quant.I32 {
		c.failf(ErrType, builder, "positions %s must be an I32 vector", pos)
		return nil
	}
	want := a.Ne[2]
	if p.Mode.UsesSections() {
		want *= 4 // four position streams per token
	}
	if pos.Ne[0] != want {
		c.failf(ErrShape, builder, "%d positions for %s, want %d", pos.Ne[0], a, want)
		return nil
	}
	if freq != nil && (freq.Type != quant.F32 || freq.Ne[0] < int64(p.NDims/2)) {
		c.failf(ErrShape, builder, "frequency factors %s must be F32 with at least n_dims/2 = %d values", freq, p.NDims/2)
		return nil
	}
	if !multi || !p.Mode.UsesSections() {
		p.Sections = [ops.RopeSections]int32{}
	}
	p.NOffs = 0
	var t *Tensor
	if inplace {
		t = c.newInplace(op, a, p.Params(), a, pos, freq)
	} else {
		t = c.NewOp(op, a.Type, a.Ne, p.Params(), a, pos)
		if t != nil {
			t.Src[2] = freq
		}
	}
	return t
}

// Rope rotates the first nDims dimensions of each row of a by the angle of
// its token's position in pos (an I32 vector of a.Ne[2] values), with ggml's
// default frequencies (ggml_rope).
func (c *Context) Rope(a, pos *Tensor, nDims int32, mode ops.RopeMode) *Tensor {
	return c.rope(ops.Rope, "Rope", a, pos, nil, ops.DefaultRopeParams(nDims, mode), false, false)
}

// RopeInplace is Rope writing into a.
func (c *Context) RopeInplace(a, pos *Tensor, nDims int32, mode ops.RopeMode) *Tensor {
	return c.rope(ops.Rope, "RopeInplace", a, pos, nil, ops.DefaultRopeParams(nDims, mode), false, true)
}

// RopeExt is ggml_rope_ext: RoPE with YaRN scaling and optional frequency
// factors freq (F32, at least n_dims/2 values; nil for none). p.Sections
// and p.NOffs are ignored; use RopeMulti and RopeSetOffset for them.
func (c *Context) RopeExt(a, pos, freq *Tensor, p ops.RopeParams) *Tensor {
	return c.rope(ops.Rope, "RopeExt", a, pos, freq, p, false, false)
}

// RopeExtInplace is RopeExt writing into a.
func (c *Context) RopeExtInplace(a, pos, freq *Tensor, p ops.RopeParams) *Tensor {
	return c.rope(ops.Rope, "RopeExtInplace", a, pos, freq, p, false, true)
}

// RopeMulti is ggml_rope_multi: multi-section RoPE (modes RopeMRope,
// RopeIMRope, RopeVision) with p.Sections, pos holding four position
// streams of a.Ne[2] values each.
func (c *Context) RopeMulti(a, pos, freq *Tensor, p ops.RopeParams) *Tensor {
	return c.rope(ops.Rope, "RopeMulti", a, pos, freq, p, true, false)
}

// RopeMultiInplace is RopeMulti writing into a.
func (c *Context) RopeMultiInplace(a, pos, freq *Tensor, p ops.RopeParams) *Tensor {
	return c.rope(ops.Rope, "RopeMultiInplace", a, pos, freq, p, true, true)
}

// RopeExtBack is ggml_rope_ext_back: the gradient of RopeExt, given the
// gradient a of its result (the inverse rotation).
func (c *Context) RopeExtBack(a, pos, freq *Tensor, p ops.RopeParams) *Tensor {
	return c.rope(ops.RopeBack, "RopeExtBack", a, pos, freq, p, false, false)
}

// RopeMultiBack is ggml_rope_multi_back: the gradient of RopeMulti.
func (c *Context) RopeMultiBack(a, pos, freq *Tensor, p ops.RopeParams) *Tensor {
	return c.rope(ops.RopeBack, "RopeMultiBack", a, pos, freq, p, true, false)
}

// RopeSetOffset makes the ROPE or ROPE_BACK result t rotate the nDims
// dimensions starting at nOffs instead of at 0 (ggml_rope_set_offset) and
// returns t. Vision mode has no offset.
func (c *Context) RopeSetOffset(t *Tensor, nOffs int32) *Tensor {
	if !c.ok("RopeSetOffset", t) {
		return nil
	}
	if t.Op != ops.Rope && t.Op != ops.RopeBack {
		c.failf(ErrArgument, "RopeSetOffset", "%s is not a ROPE result", t)
		return nil
	}
	p := ops.RopeParamsOf(t.Params)
	if nOffs < 0 || nOffs%2 != 0 || p.Mode == ops.RopeVision {
		c.failf(ErrArgument, "RopeSetOffset", "offset %d with mode %d (the offset must be even and vision mode has none)", nOffs, p.Mode)
		return nil
	}
	if a := t.Src[0]; a != nil && int64(nOffs)+int64(p.NDims) > a.Ne[0] {
		c.failf(ErrShape, "RopeSetOffset", "offset %d + n_dims %d is past the rows of %s", nOffs, p.NDims, a)
		return nil
	}
	t.Params.SetI32(15, nOffs)
	return t
}

// FlashAttnExt is ggml_flash_attn_ext: softmax(scale·Q·Kᵀ + mask)·V per
// head, with K and V heads broadcast over Q's (grouped-query attention).
// q is [DK, n_q, heads, batch] F32, k [DK, n_kv, kv_heads, batch], v [DV,
// n_kv, kv_heads, batch], mask (nil for none) F16 [n_kv, ≥n_q, heads or 1,
// batch or 1]. The result is F32 [DV, heads, n_q, batch]: Q's dimensions 1
// and 2 swapped. maxBias > 0 (ALiBi) needs a mask; logitSoftcap != 0 caps
// the scores with softcap·tanh(s/softcap).
func (c *Context) FlashAttnExt(q, k, v, mask *Tensor, scale, maxBias, logitSoftcap float32) *Tensor {
	const name = "FlashAttnExt"
	if !c.ok(name, q, k, v) {
		return nil
	}
	// ggml_can_mul_mat(k, q); empty broadcast dimensions would divide by zero.
	if k.Ne[2] == 0 || k.Ne[3] == 0 || k.Ne[0] != q.Ne[0] || q.Ne[2]%k.Ne[2] != 0 || q.Ne[3]%k.Ne[3] != 0 {
		c.failf(ErrShape, name, "k %s does not multiply q %s", k, q)
		return nil
	}
	if q.Ne[3] != k.Ne[3] || q.Ne[3] != v.Ne[3] {
		c.failf(ErrShape, name, "q %s, k %s and v %s differ in dimension 3", q, k, v)
		return nil
	}
	if mask != nil {
		if mask.Type != quant.F16 {
			c.failf(ErrType, name, "mask %s must be F16", mask)
			return nil
		}
		if !mask.IsContiguous() {
			c.failf(ErrShape, name, "mask %s must be contiguous", mask)
			return nil
		}
		if mask.Ne[2] == 0 || mask.Ne[3] == 0 || q.Ne[2]%mask.Ne[2] != 0 || q.Ne[3]%mask.Ne[3] != 0 {
			c.failf(ErrShape, name, "mask %s does not broadcast over q %s", mask, q)
			return nil
		}
	}
	if maxBias > 0 && mask == nil {
		c.failf(ErrArgument, name, "max_bias %g needs a mask", maxBias)
		return nil
	}
	p := ops.FlashAttnParams{Scale: scale, MaxBias: maxBias, LogitSoftcap: logitSoftcap}
	ne := [MaxDims]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]}
	t := c.NewOp(ops.FlashAttnExt, quant.F32, ne, p.Params(), q, k, v)
	if t != nil {
		t.Src[3] = mask
	}
	return t
}

// FlashAttnExtSetPrec sets the accumulator precision of the FLASH_ATTN_EXT
// result t (ops.PrecDefault or ops.PrecF32) and returns t.
func (c *Context) FlashAttnExtSetPrec(t *Tensor, prec ops.Prec) *Tensor {
	if !c.ok("FlashAttnExtSetPrec", t) {
		return nil
	}
	if t.Op != ops.FlashAttnExt {
		c.failf(ErrArgument, "FlashAttnExtSetPrec", "%s is not a FLASH_ATTN_EXT result", t)
		return nil
	}
	t.Params.SetI32(3, int32(prec))
	return t
}

// FlashAttnExtAddSinks gives the FLASH_ATTN_EXT result t attention sinks:
// one F32 logit per query head that joins every softmax without a value
// (ggml_flash_attn_ext_add_sinks). A nil sinks removes them. It returns t.
func (c *Context) FlashAttnExtAddSinks(t, sinks *Tensor) *Tensor {
	const name = "FlashAttnExtAddSinks"
	if !c.ok(name, t) {
		return nil
	}
	if sinks == nil {
		t.Src[4] = nil
		return t
	}
	switch {
	case t.Op != ops.FlashAttnExt:
		c.failf(ErrArgument, name, "%s is not a FLASH_ATTN_EXT result", t)
	case t.Src[4] != nil:
		c.failf(ErrArgument, name, "%s already has sinks", t)
	case t.Src[0].Ne[2] != sinks.Ne[0]:
		c.failf(ErrShape, name, "%d sinks for %d heads", sinks.Ne[0], t.Src[0].Ne[2])
	case sinks.Type != quant.F32:
		c.failf(ErrType, name, "sinks %s must be F32", sinks)
	default:
		t.Src[4] = sinks
		return t
	}
	return nil
}

// SSMConv is ggml_ssm_conv, Mamba's causal 1-D convolution: sx is
// [d_conv-1+n_t, d_inner, n_s] (the previous state followed by the tokens),
// c is [d_conv, d_inner]; the result is F32 [d_inner, n_t, n_s].
func (c *Context) SSMConv(sx, w *Tensor) *Tensor {
	const name = "SSMConv"
	if !c.ok(name, sx, w) {
		return nil
	}
	if sx.Ne[3] != 1 || w.Ne[2] != 1 || w.Ne[3] != 1 {
		c.failf(ErrShape, name, "sx %s must be 3-D and c %s a matrix", sx, w)
		return nil
	}
	dConv, dInner := w.Ne[0], w.Ne[1]
	nT := sx.Ne[0] - dConv + 1
	if sx.Ne[1] != dInner || nT < 0 {
		c.failf(ErrShape, name, "sx %s does not fit c %s", sx, w)
		return nil
	}
	return c.NewOp(ops.SSMConv, quant.F32, [MaxDims]int64{dInner, nT, sx.Ne[2], 1}, ops.Params{}, sx, w)
}

// SolveTri solves A·X = B for X, A a batch of square triangular matrices
// [n, n, ...] and B [k, n, ...], both F32 and contiguous (ggml_solve_tri).
// Like ggml it only implements left, lower, non-unit-diagonal systems.
func (c *Context) SolveTri(a, b *Tensor, left, lower, uni bool) *Tensor {
	const name = "SolveTri"
	if !c.ok(name, a, b) {
		return nil
	}
	switch {
	case a.Type != quant.F32 || b.Type != quant.F32:
		c.failf(ErrType, name, "a %s and b %s must be F32", a, b)
	case a.Ne[0] != a.Ne[1] || a.Ne[1] != b.Ne[1] || a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3]:
		c.failf(ErrShape, name, "a %s must be square and match b %s", a, b)
	case !a.IsContiguous() || !b.IsContiguous():
		c.failf(ErrShape, name, "a %s and b %s must be contiguous", a, b)
	case !(left && lower && !uni):
		c.failf(ErrArgument, name, "only left, lower, non-unit systems are implemented")
	default:
		return c.NewOp(ops.SolveTri, quant.F32, b.Ne, ops.Params{}, a, b)
	}
	return nil
}

// GatedDeltaNet is ggml_gated_delta_net, the gated delta rule recurrence
// (Qwen3-Next, Kimi linear attention). With S the head size, H the value
// heads, T tokens and B sequences: q and k are [S, H_k, T, B] (H divisible
// by H_k), v is [S, H, T, B], g is [1 or S, H, T, B] (scalar or per-channel
// KDA gate), beta [1, H, T, B] and state [S, S, H, B]. The F32 result is
// [S·H, T·B + K·S·B]: the outputs of every token followed by the last K
// states, newest first.
func (c *Context) GatedDeltaNet(q, k, v, g, beta, state *Tensor, K int64) *Tensor {
	const name = "GatedDeltaNet"
	if !c.ok(name, q, k, v, g, beta, state) {
		return nil
	}
	for _, t := range []*Tensor{q, k, v, g, beta, state} {
		if t.Type != quant.F32 {
			c.failf(ErrType, name, "%s must be F32", t)
			return nil
		}
	}
	if !q.IsContiguousRows() || !k.IsContiguousRows() || !v.IsContiguousRows() ||
		!g.IsContiguous() || !beta.IsContiguous() || !state.IsContiguous() {
		c.failf(ErrShape, name, "q, k, v need contiguous rows and g, beta, state contiguity")
		return nil
	}
	sv, h, nTokens, nSeqs := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	switch {
	case g.Ne[0] != 1 && g.Ne[0] != sv:
		c.failf(ErrShape, name, "gate %s must have 1 or %d values per head", g, sv)
	case beta.Ne[0] != 1:
		c.failf(ErrShape, name, "beta %s must have one value per head", beta)
	case state.Ne != [MaxDims]int64{sv, sv, h, nSeqs}:
		c.failf(ErrShape, name, "state %s must be [%d %d %d %d]", state, sv, sv, h, nSeqs)
	case K < 1 || K > 1<<31-1:
		c.failf(ErrArgument, name, "K = %d snapshots", K)
	default:
		ne := [MaxDims]int64{sv * h, nTokens*nSeqs + K*sv*nSeqs, 1, 1}
		p := ops.GatedDeltaNetParams{K: int32(K)}
		return c.NewOp(ops.GatedDeltaNet, quant.F32, ne, p.Params(), q, k, v, g, beta, state)
	}
	return nil
}
