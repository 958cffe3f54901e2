package model

import (
	"fmt"
	"math"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// maskPad is llama.cpp's GGML_KQ_MASK_PAD: the mask has this multiple of
// rows, so kernels may read whole tiles of it.
const maskPad = 64

// batchInputs are the input tensors of one batch's graph, set after the
// scheduler places them.
type batchInputs struct {
	tokens *graph.Tensor // I32 [n_tokens]
	pos    *graph.Tensor // I32 [n_tokens]
	mask   *graph.Tensor // F32 [n_kv, pad(n_tokens)]
	// maskSWA is the sliding-window layers' mask, nil without them.
	maskSWA *graph.Tensor
	kIdx    *graph.Tensor // I64 [n_tokens]: cache cell of each token
	vIdx    *graph.Tensor // I64: cells (or element indices, transposed V)
	outIDs  *graph.Tensor // I32 [n_outputs]
}

// batchShape is what a graph depends on: how many tokens, how many cache
// cells the attention reads, how many outputs.
type batchShape struct {
	nTokens, nKV, nOutputs int
}

// builder builds the decoder graph of one batch for a session.
type builder struct {
	s  *Session
	c  *graph.Context
	g  *graph.Graph
	in batchInputs
	bs batchShape
}

func (b *builder) input(name string, typ quant.Type, ne ...int64) *graph.Tensor {
	return b.c.SetName(graph.SetInput(b.c.NewTensor(typ, ne...)), name)
}

// expand adds t to the graph now, so that what it writes (a cache row) comes
// before the nodes that read the cache through views.
func (b *builder) expand(t *graph.Tensor) {
	if t == nil {
		return // the context holds the error
	}
	if err := b.g.Expand(t); err != nil {
		b.c.Fail(err)
	}
}

// build returns the graph of a batch and its logits (F32 [n_vocab,
// n_outputs]): llama.cpp's llm_build_llama, llm_build_qwen2 and
// llm_build_gemma3_iswa, whose differences are data of the architecture
// (arch).
func (b *builder) build() (*graph.Tensor, error) {
	s, m := b.s, b.s.m
	h, w, c := &m.HParams, &m.w, b.c
	T := int64(b.bs.nTokens)
	b.in.tokens = b.input("inp_tokens", quant.I32, T)
	b.in.pos = b.input("inp_pos", quant.I32, T)
	b.in.mask = b.input("kq_mask", quant.F32, int64(b.bs.nKV), padTo(T, maskPad))
	b.in.kIdx = b.input("k_idxs", quant.I64, T)
	if s.vTrans {
		b.in.vIdx = b.input("v_idxs", quant.I64, T*int64(h.NEmbdVGQA(0)))
	} else {
		b.in.vIdx = b.input("v_idxs", quant.I64, T)
	}
	// Always there, even when every token outputs (llama.cpp leaves it
	// out then): a prompt's graph and a decode step's then have the same
	// nodes, which a device compiling one model for all token counts
	// (OpenVINO's dynamic shapes) needs; over every row it is an identity.
	b.in.outIDs = b.input("inp_out_ids", quant.I32, int64(b.bs.nOutputs))
	a := &m.arch
	if h.SWALayers != nil {
		b.in.maskSWA = b.input("kq_mask_swa", quant.F32, int64(b.bs.nKV), padTo(T, maskPad))
	}
	mask, maskSWA := b.in.mask, b.in.maskSWA
	if s.opts.FlashAttn {
		mask = c.Cast(mask, quant.F16)
		if maskSWA != nil {
			maskSWA = c.Cast(maskSWA, quant.F16)
		}
	}
	norm := func(x, w *graph.Tensor) *graph.Tensor { return c.Mul(c.RMSNorm(x, h.RMSEps), w) }
	x := c.GetRows(w.tokEmbd, b.in.tokens)
	if a.embdScale {
		x = c.Scale(x, float32(math.Sqrt(float64(h.NEmbd))))
	}
	for il := range w.layers {
		l := &w.layers[il]
		inpSA := x
		cur := norm(x, l.attnNorm)
		lm := mask
		if h.IsSWA(il) {
			lm = maskSWA
		}
		cur = b.attention(il, l, cur, lm)
		if il == len(w.layers)-1 {
			// Only the positions whose logits are asked go further.
			cur = c.GetRows(cur, b.in.outIDs)
			inpSA = c.GetRows(inpSA, b.in.outIDs)
		}
		if a.postNorm {
			cur = norm(cur, l.attnPostNorm)
		}
		ffnInp := c.Add(cur, inpSA)
		cur = norm(ffnInp, l.ffnNorm)
		up := c.MulMat(l.ffnUp, cur)
		gate := c.MulMat(l.ffnGate, cur)
		if a.geglu {
			cur = c.GeGLUSplit(gate, up)
		} else {
			cur = c.SwiGLUSplit(gate, up)
		}
		cur = c.MulMat(l.ffnDown, cur)
		if a.postNorm {
			cur = norm(cur, l.ffnPostNorm)
		}
		x = c.Add(cur, ffnInp)
	}
	x = norm(x, w.outputNorm)
	logits := graph.SetOutput(c.SetName(c.MulMat(w.output, x), "result_output"))
	b.expand(logits)
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("model: building the graph: %w", err)
	}
	return logits, nil
}

// attention is llama.cpp's build_attn for one layer: Q, K, V projections
// (with biases when the layer has them), RoPE, the new K and V rows written
// into the cache with SET_ROWS, then softmax(scale·Q·Kᵀ + mask)·V over the
// first n_kv cells read through views, and the output projection.
func (b *builder) attention(il int, l *layer, cur, mask *graph.Tensor) *graph.Tensor {
	s, c, h := b.s, b.c, &b.s.m.HParams
	T, nKV := int64(b.bs.nTokens), int64(b.bs.nKV)
	hd, nh, nkv := int64(h.HeadDimK), int64(h.NHead[il]), int64(h.NHeadKV[il])
	proj := func(w, bias *graph.Tensor) *graph.Tensor {
		t := c.MulMat(w, cur)
		if bias != nil {
			t = c.Add(t, bias)
		}
		return t
	}
	q := c.Reshape(proj(l.wq, l.bq), hd, nh, T)
	k := c.Reshape(proj(l.wk, l.bk), hd, nkv, T)
	v := proj(l.wv, l.bv)
	if l.qNorm != nil {
		q = c.Mul(c.RMSNorm(q, h.RMSEps), l.qNorm)
		k = c.Mul(c.RMSNorm(k, h.RMSEps), l.kNorm)
	}
	base, fscale := h.ropeBase(il)
	rp := ops.RopeParams{
		NDims: int32(h.NRot), Mode: s.m.arch.ropeMode, NCtxOrig: int32(h.NCtxOrig),
		FreqBase: base, FreqScale: fscale, AttnFactor: 1,
		BetaFast: 32, BetaSlow: 1,
	}
	if h.RopeYarn {
		// llama.cpp's yarn_ext_factor default (-1) becomes 1 for YaRN
		// models, and the attention factor its magnitude correction.
		rp.ExtFactor = 1
		rp.AttnFactor = float32(1 / (1 + 0.1*math.Log(1/float64(h.RopeFreqScale))))
	}
	q = c.RopeExt(q, b.in.pos, s.m.w.ropeFreqs, rp)
	k = c.RopeExt(k, b.in.pos, s.m.w.ropeFreqs, rp)
	kqScale := h.AttnScale
	if s.m.arch.scaleQ {
		q, kqScale = c.Scale(q, h.AttnScale), 1
	}

	kc, vc := s.k[il], s.v[il]
	kvDim := int64(h.NEmbdKGQA(il))
	b.expand(c.SetRows(kc, c.Reshape(k, kvDim, T), b.in.kIdx))
	if s.vTrans {
		// The transposed cache stores channel j of cell i at j*n_ctx+i:
		// every value is a row of one element.
		flat := c.Reshape(vc, 1, vc.Ne[0]*vc.Ne[1])
		b.expand(c.SetRows(flat, c.Reshape(v, 1, kvDim*T), b.in.vIdx))
	} else {
		b.expand(c.SetRows(vc, v, b.in.vIdx))
	}

	q = c.Permute(q, 0, 2, 1, 3)
	kView := c.View3D(kc, hd, nKV, nkv, kc.Nb[1], uint64(kc.Type.RowSize(hd)), 0)
	var out *graph.Tensor
	if s.opts.FlashAttn {
		vView := c.View3D(vc, hd, nKV, nkv, vc.Nb[1], uint64(vc.Type.RowSize(hd)), 0)
		if kView.Type == quant.F32 {
			// As llama.cpp: the flash-attention kernels take F16 K/V.
			kView, vView = c.Cast(kView, quant.F16), c.Cast(vView, quant.F16)
		}
		fa := c.FlashAttnExt(q, kView, vView, mask, kqScale, 0, 0)
		c.FlashAttnExtSetPrec(fa, ops.PrecF32)
		out = c.Reshape(fa, hd*nh, T)
	} else {
		kq := c.MulMat(kView, q)
		c.MulMatSetPrec(kq, ops.PrecF32)
		kq = c.SoftMaxExt(kq, mask, kqScale, 0)
		nCtx := vc.Ne[1]
		vView := c.View3D(vc, nKV, hd, nkv, uint64(vc.Type.RowSize(nCtx)), uint64(vc.Type.RowSize(nCtx*hd)), 0)
		kqv := c.MulMat(vView, kq)
		out = c.Cont(c.Permute(kqv, 0, 2, 1, 3), hd*nh, T)
	}
	out = c.MulMat(l.wo, out)
	if l.bo != nil {
		out = c.Add(out, l.bo)
	}
	return out
}

func padTo(n, p int64) int64 { return (n + p - 1) / p * p }
