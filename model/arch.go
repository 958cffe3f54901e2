package model

import (
	"fmt"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// arch describes one architecture the runner builds: what differs between
// llama, qwen2 and gemma3 is data (rope mode, which biases and norms there
// are, the feed-forward gate, ...), the graph is the same builder
// (builder.build in graph.go).
type arch struct {
	name     string
	ropeMode ops.RopeMode
	// qkvBias makes attn_q/k/v.bias required (qwen2); for llama they are
	// optional, as llama.cpp loads them TENSOR_NOT_REQUIRED.
	qkvBias bool
	// embdScale multiplies the token embeddings by sqrt(n_embd).
	embdScale bool
	// qkNorm RMS-normalizes each head of Q and K (attn_q_norm,
	// attn_k_norm) before RoPE.
	qkNorm bool
	// postNorm RMS-normalizes the attention and feed-forward outputs
	// (post_attention_norm, post_ffw_norm) before their residual adds.
	postNorm bool
	// geglu gates the feed-forward with GELU instead of SiLU.
	geglu bool
	// scaleQ multiplies Q by the attention scale after RoPE, the softmax
	// then scaling by 1, instead of the softmax scaling Q·Kᵀ.
	scaleQ bool
	// swa reads {arch}.attention.sliding_window: some layers attend to
	// the last n_swa positions only (see readSWA).
	swa bool
}

// archs are the architectures this package runs, by general.architecture;
// each is described in its own file (llama.go, qwen2.go, gemma3.go).
var archs = map[string]arch{archLlama.name: archLlama, archQwen2.name: archQwen2, archGemma3.name: archGemma3}

// layer holds one decoder block's weights; the optional ones are nil when
// the file lacks them.
type layer struct {
	attnNorm, wq, wk, wv, wo *graph.Tensor
	bq, bk, bv, bo           *graph.Tensor
	ffnNorm                  *graph.Tensor
	ffnGate, ffnUp, ffnDown  *graph.Tensor
	// qNorm and kNorm (arch.qkNorm), attnPostNorm and ffnPostNorm
	// (arch.postNorm).
	qNorm, kNorm              *graph.Tensor
	attnPostNorm, ffnPostNorm *graph.Tensor
}

// weights are the model's tensors by role.
type weights struct {
	tokEmbd, outputNorm, output *graph.Tensor
	// ropeFreqs are llama 3's per-dimension rope factors (rope_freqs.weight).
	ropeFreqs *graph.Tensor
	layers    []layer
}

// bindWeights finds every tensor the architecture uses in byName, checking
// each shape against the hyperparameters. tied reports an output projection
// taken from token_embd.weight.
func bindWeights(a arch, h *HParams, byName map[string]*graph.Tensor) (w weights, tied bool, err error) {
	get := func(name string, required bool, ne ...int) *graph.Tensor {
		t := byName[name]
		if t == nil {
			if required && err == nil {
				err = fmt.Errorf("%w: tensor %s missing", ErrModel, name)
			}
			return nil
		}
		for i := range graph.MaxDims {
			want := int64(1)
			if i < len(ne) {
				want = int64(ne[i])
			}
			if t.Ne[i] != want && err == nil {
				err = fmt.Errorf("%w: tensor %s has shape %v, want %v", ErrModel, name, t.Ne, ne)
			}
		}
		return t
	}
	n, v := h.NEmbd, h.NVocab
	w.tokEmbd = get("token_embd.weight", true, n, v)
	w.outputNorm = get("output_norm.weight", true, n)
	w.output = get("output.weight", false, n, v)
	if w.output == nil {
		w.output, tied = w.tokEmbd, true
	}
	if byName["rope_freqs.weight"] != nil {
		w.ropeFreqs = get("rope_freqs.weight", true, h.NRot/2)
	}
	w.layers = make([]layer, h.NLayer)
	for il := range w.layers {
		p := fmt.Sprintf("blk.%d.", il)
		q, kv := h.HeadDimK*h.NHead[il], h.NEmbdKGQA(il)
		l := &w.layers[il]
		l.attnNorm = get(p+"attn_norm.weight", true, n)
		l.wq = get(p+"attn_q.weight", true, n, q)
		l.wk = get(p+"attn_k.weight", true, n, kv)
		l.wv = get(p+"attn_v.weight", true, n, h.NEmbdVGQA(il))
		l.wo = get(p+"attn_output.weight", true, q, n)
		l.bq = get(p+"attn_q.bias", a.qkvBias, q)
		l.bk = get(p+"attn_k.bias", a.qkvBias, kv)
		l.bv = get(p+"attn_v.bias", a.qkvBias, h.NEmbdVGQA(il))
		l.bo = get(p+"attn_output.bias", false, n)
		l.ffnNorm = get(p+"ffn_norm.weight", true, n)
		l.ffnGate = get(p+"ffn_gate.weight", true, n, h.NFF[il])
		l.ffnUp = get(p+"ffn_up.weight", true, n, h.NFF[il])
		l.ffnDown = get(p+"ffn_down.weight", true, h.NFF[il], n)
		if a.qkNorm {
			l.qNorm = get(p+"attn_q_norm.weight", true, h.HeadDimK)
			l.kNorm = get(p+"attn_k_norm.weight", true, h.HeadDimK)
		}
		if a.postNorm {
			l.attnPostNorm = get(p+"post_attention_norm.weight", true, n)
			l.ffnPostNorm = get(p+"post_ffw_norm.weight", true, n)
		}
	}
	return w, tied, err
}
