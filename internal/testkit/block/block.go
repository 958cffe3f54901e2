// Package block builds the llama-style decoder block the demo runs and the
// benchmarks time, with deterministic weights and inputs, so that every
// device (and the real ggml) computes exactly the same graph.
package block

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Dims are the sizes of a llama-style decoder block.
type Dims struct {
	Embd, Heads, KVHeads, HeadDim, FF int64
	// Tokens are appended to a KV cache of Ctx cells that already holds
	// Ctx-Tokens earlier ones.
	Tokens, Ctx int64
	RopeMode    ops.RopeMode
}

// ErrDims reports sizes a block cannot have.
var ErrDims = errors.New("bad block dimensions")

// headDim is fixed, as in most llama-style models, so that -embd alone
// sets the width.
const headDim = 64

// NewDims checks the sizes and derives the rest: grouped-query
// attention with half as many KV heads when the head count allows it, and
// an FFN three times as wide as the embedding.
func NewDims(embd, tokens, ctx int, neox bool) (Dims, error) {
	if embd <= 0 || embd%headDim != 0 {
		return Dims{}, fmt.Errorf("%w: embd must be a positive multiple of %d, got %d", ErrDims, headDim, embd)
	}
	if tokens <= 0 || ctx < tokens {
		return Dims{}, fmt.Errorf("%w: need 0 < tokens <= ctx, got %d and %d", ErrDims, tokens, ctx)
	}
	d := Dims{Embd: int64(embd), Heads: int64(embd / headDim), HeadDim: headDim, FF: 3 * int64(embd), Tokens: int64(tokens), Ctx: int64(ctx)}
	d.KVHeads = d.Heads
	if d.Heads%2 == 0 {
		d.KVHeads = d.Heads / 2
	}
	if neox {
		d.RopeMode = ops.RopeNeox
	}
	return d, nil
}

// Inputs are the graph inputs every layer shares.
type Inputs struct {
	X, Pos, Mask *graph.Tensor
}

// newInputs makes the hidden state x (F32 [embd, tokens]), the token
// positions (I32) and the causal mask (F16 [ctx, tokens]) as graph inputs.
func newInputs(c *graph.Context, d Dims) Inputs {
	in := Inputs{
		X:    graph.SetInput(c.NewTensor(quant.F32, d.Embd, d.Tokens)),
		Pos:  graph.SetInput(c.NewTensor(quant.I32, d.Tokens)),
		Mask: graph.SetInput(c.NewTensor(quant.F16, d.Ctx, d.Tokens)),
	}
	c.SetName(in.X, NameX)
	c.SetName(in.Pos, NamePos)
	c.SetName(in.Mask, NameMask)
	return in
}

// LeafFunc supplies a block's weights and KV cache tensors by name.
type LeafFunc func(name string, typ quant.Type, ne ...int64) *graph.Tensor

// buildBlock adds one decoder block reading x to g and returns its output.
// The K and V cache writes are expanded into g before the attention that
// reads the cache, as llama.cpp does, so the graph orders them first.
func buildBlock(c *graph.Context, g *graph.Graph, d Dims, in Inputs, x *graph.Tensor, leaf LeafFunc) *graph.Tensor {
	const eps = 1e-5
	kvDim := d.KVHeads * d.HeadDim
	name := func(t *graph.Tensor, n string) *graph.Tensor { return c.SetName(t, n) }

	h := name(c.Mul(name(c.RMSNorm(x, eps), "norm"), leaf("attn_norm", quant.F32, d.Embd)), "attn_norm_out")
	q := name(c.MulMat(leaf("wq", quant.Q4_0, d.Embd, d.Embd), h), "Qcur")
	k := name(c.MulMat(leaf("wk", quant.Q4_0, d.Embd, kvDim), h), "Kcur")
	v := name(c.MulMat(leaf("wv", quant.Q4_0, d.Embd, kvDim), h), "Vcur")
	q = name(c.Rope(c.Reshape(q, d.HeadDim, d.Heads, d.Tokens), in.Pos, int32(d.HeadDim), d.RopeMode), "Qrope")
	k = name(c.Rope(c.Reshape(k, d.HeadDim, d.KVHeads, d.Tokens), in.Pos, int32(d.HeadDim), d.RopeMode), "Krope")

	// The caches hold one row of kvDim F16 values per cell; this step
	// writes the last d.Tokens cells.
	kc, vc := leaf("cache_k", quant.F16, kvDim, d.Ctx), leaf("cache_v", quant.F16, kvDim, d.Ctx)
	past := d.Ctx - d.Tokens
	if kc == nil || vc == nil || c.Err() != nil {
		return nil
	}
	kw := name(c.View2D(kc, kvDim, d.Tokens, kc.Nb[1], uint64(past)*kc.Nb[1]), "cache_k_view")
	vw := name(c.View2D(vc, kvDim, d.Tokens, vc.Nb[1], uint64(past)*vc.Nb[1]), "cache_v_view")
	kcpy := name(c.Cpy(c.Reshape(k, kvDim, d.Tokens), kw), "cache_k_cpy")
	vcpy := name(c.Cpy(v, vw), "cache_v_cpy")
	if c.Err() != nil {
		return nil
	}
	g.Expand(kcpy)
	g.Expand(vcpy)

	f16 := uint64(quant.F16.TypeSize())
	kAll := name(c.View3D(kc, d.HeadDim, d.Ctx, d.KVHeads, kc.Nb[1], uint64(d.HeadDim)*f16, 0), "k")
	vAll := name(c.View3D(vc, d.HeadDim, d.Ctx, d.KVHeads, vc.Nb[1], uint64(d.HeadDim)*f16, 0), "v")
	qp := name(c.Permute(q, 0, 2, 1, 3), "q")
	attn := name(c.FlashAttnExt(qp, kAll, vAll, in.Mask, float32(1/math.Sqrt(float64(d.HeadDim))), 0, 0), "fattn")
	attn = c.Reshape(attn, d.Embd, d.Tokens)
	o := name(c.MulMat(leaf("wo", quant.Q4_0, d.Embd, d.Embd), attn), "attn_out")
	x = name(c.Add(o, x), "ffn_inp")

	h = name(c.Mul(name(c.RMSNorm(x, eps), "ffn_norm_in"), leaf("ffn_norm", quant.F32, d.Embd)), "ffn_norm_out")
	gate := name(c.MulMat(leaf("ffn_gate", quant.Q4_0, d.Embd, d.FF), h), "ffn_gate")
	up := name(c.MulMat(leaf("ffn_up", quant.Q4_0, d.Embd, d.FF), h), "ffn_up")
	act := name(c.SwiGLUSplit(gate, up), "ffn_swiglu")
	down := name(c.MulMat(leaf("ffn_down", quant.Q4_0, d.FF, d.Embd), act), "ffn_out")
	return name(c.Add(down, x), "l_out")
}

// BuildLayers builds n stacked blocks (layer i's leaves named with the
// prefix "blk.i.") and returns the graph and its output; leaf supplies the
// leaves with their full names.
func BuildLayers(c *graph.Context, d Dims, n int, leaf LeafFunc) (*graph.Graph, Inputs, *graph.Tensor, error) {
	in := newInputs(c, d)
	g := graph.NewGraph()
	x := in.X
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

// rngFor is a generator for the tensor called name, so every run (and
// every device) sees the same values for it.
func rngFor(name string, seed uint64) *rand.Rand {
	h := fnv.New64a()
	io.WriteString(h, name)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// LeafData is the contents of a weight or cache tensor: norm weights near
// 1, matrices and cache values gaussian, quantized to t's type.
func LeafData(t *graph.Tensor, seed uint64) ([]byte, error) {
	rng := rngFor(t.Name, seed)
	vs := make([]float32, t.NElements())
	norm := t.Ne[1] == 1
	for i := range vs {
		v := rng.NormFloat64()
		if norm {
			v = 1 + 0.1*v
		} else {
			v *= 0.5 / math.Sqrt(float64(t.Ne[0]))
			if strings.HasSuffix(t.Name, "cache_k") || strings.HasSuffix(t.Name, "cache_v") {
				v = rng.NormFloat64()
			}
		}
		vs[i] = float32(v)
	}
	return quant.Quantize(t.Type, vs, int(t.NElements()/t.Ne[0]), int(t.Ne[0]), nil)
}

// Names of the block's inputs.
const (
	NameX    = "inp_embd"
	NamePos  = "inp_pos"
	NameMask = "kq_mask"
)

// Data is the contents of any leaf of a block with dims d: for the inputs
// the hidden state (gaussian), the positions of the cells the batch
// occupies and the mask that lets each token see the earlier cells and
// itself; for the weights and caches LeafData.
func Data(t *graph.Tensor, d Dims, seed uint64) ([]byte, error) {
	past := d.Ctx - d.Tokens
	switch t.Name {
	case NameX:
		rng := rngFor(NameX, seed)
		x := make([]float32, t.NElements())
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return quant.F32Bytes(x), nil
	case NamePos:
		pos := make([]byte, 4*d.Tokens)
		for i := range d.Tokens {
			binary.LittleEndian.PutUint32(pos[4*i:], uint32(past+i))
		}
		return pos, nil
	case NameMask:
		mask := make([]float32, d.Ctx*d.Tokens)
		for i := range d.Tokens {
			for j := past + i + 1; j < d.Ctx; j++ {
				mask[i*d.Ctx+j] = float32(math.Inf(-1))
			}
		}
		return quant.Quantize(quant.F16, mask, int(d.Tokens), int(d.Ctx), nil)
	}
	return LeafData(t, seed)
}

// SetInputs writes the inputs' Data with set.
func SetInputs(in Inputs, d Dims, seed uint64, set func(t *graph.Tensor, data []byte, offset uint64) error) error {
	for _, t := range []*graph.Tensor{in.X, in.Pos, in.Mask} {
		data, err := Data(t, d, seed)
		if err == nil {
			err = set(t, data, 0)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}
