package main

import (
	"fmt"
	"math"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// blockDims are the sizes of a llama-style decoder block.
type blockDims struct {
	embd, heads, kvHeads, headDim, ff int64
	// tokens are appended to a KV cache of ctx cells that already holds
	// ctx-tokens earlier ones.
	tokens, ctx int64
	ropeMode    ops.RopeMode
}

// headDim is fixed, as in most llama-style models, so that -embd alone
// sets the width.
const headDim = 64

// newBlockDims checks the sizes and derives the rest: grouped-query
// attention with half as many KV heads when the head count allows it, and
// an FFN three times as wide as the embedding.
func newBlockDims(embd, tokens, ctx int, neox bool) (blockDims, error) {
	if embd <= 0 || embd%headDim != 0 {
		return blockDims{}, fmt.Errorf("%w: -embd must be a positive multiple of %d, got %d", errUsage, headDim, embd)
	}
	if tokens <= 0 || ctx < tokens {
		return blockDims{}, fmt.Errorf("%w: need 0 < -tokens <= -ctx, got %d and %d", errUsage, tokens, ctx)
	}
	d := blockDims{embd: int64(embd), heads: int64(embd / headDim), headDim: headDim, ff: 3 * int64(embd), tokens: int64(tokens), ctx: int64(ctx)}
	d.kvHeads = d.heads
	if d.heads%2 == 0 {
		d.kvHeads = d.heads / 2
	}
	if neox {
		d.ropeMode = ops.RopeNeox
	}
	return d, nil
}

// blockInputs are the graph inputs every layer shares.
type blockInputs struct {
	x, pos, mask *graph.Tensor
}

// newBlockInputs makes the hidden state x (F32 [embd, tokens]), the token
// positions (I32) and the causal mask (F16 [ctx, tokens]) as graph inputs.
func newBlockInputs(c *graph.Context, d blockDims) blockInputs {
	in := blockInputs{
		x:    graph.SetInput(c.NewTensor(quant.F32, d.embd, d.tokens)),
		pos:  graph.SetInput(c.NewTensor(quant.I32, d.tokens)),
		mask: graph.SetInput(c.NewTensor(quant.F16, d.ctx, d.tokens)),
	}
	c.SetName(in.x, "inp_embd")
	c.SetName(in.pos, "inp_pos")
	c.SetName(in.mask, "kq_mask")
	return in
}

// leafFunc supplies a block's weights and KV cache tensors by name.
type leafFunc func(name string, typ quant.Type, ne ...int64) *graph.Tensor

// buildBlock adds one decoder block reading x to g and returns its output.
// The K and V cache writes are expanded into g before the attention that
// reads the cache, as llama.cpp does, so the graph orders them first.
func buildBlock(c *graph.Context, g *graph.Graph, d blockDims, in blockInputs, x *graph.Tensor, leaf leafFunc) *graph.Tensor {
	const eps = 1e-5
	kvDim := d.kvHeads * d.headDim
	name := func(t *graph.Tensor, n string) *graph.Tensor { return c.SetName(t, n) }

	h := name(c.Mul(name(c.RMSNorm(x, eps), "norm"), leaf("attn_norm", quant.F32, d.embd)), "attn_norm_out")
	q := name(c.MulMat(leaf("wq", quant.Q4_0, d.embd, d.embd), h), "Qcur")
	k := name(c.MulMat(leaf("wk", quant.Q4_0, d.embd, kvDim), h), "Kcur")
	v := name(c.MulMat(leaf("wv", quant.Q4_0, d.embd, kvDim), h), "Vcur")
	q = name(c.Rope(c.Reshape(q, d.headDim, d.heads, d.tokens), in.pos, int32(d.headDim), d.ropeMode), "Qrope")
	k = name(c.Rope(c.Reshape(k, d.headDim, d.kvHeads, d.tokens), in.pos, int32(d.headDim), d.ropeMode), "Krope")

	// The caches hold one row of kvDim F16 values per cell; this step
	// writes the last d.tokens cells.
	kc, vc := leaf("cache_k", quant.F16, kvDim, d.ctx), leaf("cache_v", quant.F16, kvDim, d.ctx)
	past := d.ctx - d.tokens
	if kc == nil || vc == nil || c.Err() != nil {
		return nil
	}
	kw := name(c.View2D(kc, kvDim, d.tokens, kc.Nb[1], uint64(past)*kc.Nb[1]), "cache_k_view")
	vw := name(c.View2D(vc, kvDim, d.tokens, vc.Nb[1], uint64(past)*vc.Nb[1]), "cache_v_view")
	kcpy := name(c.Cpy(c.Reshape(k, kvDim, d.tokens), kw), "cache_k_cpy")
	vcpy := name(c.Cpy(v, vw), "cache_v_cpy")
	if c.Err() != nil {
		return nil
	}
	g.Expand(kcpy)
	g.Expand(vcpy)

	f16 := uint64(quant.F16.TypeSize())
	kAll := name(c.View3D(kc, d.headDim, d.ctx, d.kvHeads, kc.Nb[1], uint64(d.headDim)*f16, 0), "k")
	vAll := name(c.View3D(vc, d.headDim, d.ctx, d.kvHeads, vc.Nb[1], uint64(d.headDim)*f16, 0), "v")
	qp := name(c.Permute(q, 0, 2, 1, 3), "q")
	attn := name(c.FlashAttnExt(qp, kAll, vAll, in.mask, float32(1/math.Sqrt(float64(d.headDim))), 0, 0), "fattn")
	attn = c.Reshape(attn, d.embd, d.tokens)
	o := name(c.MulMat(leaf("wo", quant.Q4_0, d.embd, d.embd), attn), "attn_out")
	x = name(c.Add(o, x), "ffn_inp")

	h = name(c.Mul(name(c.RMSNorm(x, eps), "ffn_norm_in"), leaf("ffn_norm", quant.F32, d.embd)), "ffn_norm_out")
	gate := name(c.MulMat(leaf("ffn_gate", quant.Q4_0, d.embd, d.ff), h), "ffn_gate")
	up := name(c.MulMat(leaf("ffn_up", quant.Q4_0, d.embd, d.ff), h), "ffn_up")
	act := name(c.SwiGLUSplit(gate, up), "ffn_swiglu")
	down := name(c.MulMat(leaf("ffn_down", quant.Q4_0, d.ff, d.embd), act), "ffn_out")
	return name(c.Add(down, x), "l_out")
}

// buildLayers builds n stacked blocks (layer i's leaves named with the
// prefix "blk.i.") and returns the graph and its output; leaf supplies the
// leaves with their full names.
func buildLayers(c *graph.Context, d blockDims, n int, leaf leafFunc) (*graph.Graph, blockInputs, *graph.Tensor, error) {
	in := newBlockInputs(c, d)
	g := graph.NewGraph()
	x := in.x
	for l := range n {
		prefixed := func(name string, typ quant.Type, ne ...int64) *graph.Tensor {
			return leaf(fmt.Sprintf("blk.%d.%s", l, name), typ, ne...)
		}
		if x = buildBlock(c, g, d, in, x, prefixed); x == nil {
			break
		}
	}
	if err := c.Err(); err != nil {
		return nil, in, nil, err
	}
	if x == nil {
		return nil, in, nil, fmt.Errorf("building the block failed")
	}
	out := graph.SetOutput(c.SetName(x, "result"))
	g.Expand(out)
	return g, in, out, nil
}
