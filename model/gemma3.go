package model

import "github.com/ggml-go/ggml/ops"

// archGemma3 is llama.cpp's llm_build_gemma3_iswa (Gemma 3 text models):
// per layer
//
//	q, k = RMSNorm_head(Wq·n)·q_norm, RMSNorm_head(Wk·n)·k_norm,     n = RMSNorm(x)·attn_norm
//	h = x + RMSNorm(Wo·attn(s·RoPE_neox(q), RoPE_neox(k), Wv·n))·post_attention_norm
//	x = h + RMSNorm(Wdown·(GELU(Wgate·m) ⊙ Wup·m))·post_ffw_norm,  m = RMSNorm(h)·ffn_norm
//
// on token embeddings scaled by sqrt(n_embd), with the output projection
// tied to them when the file has no output.weight. Five layers in six
// attend within a sliding window of {arch}.attention.sliding_window
// positions with RoPE base 10000; every sixth attends to all positions
// with {arch}.rope.freq_base (and the rope scaling, when there is one).
// The attention scale s multiplies Q: 1/sqrt(key_length), or for the 62
// layer 27B model 1/sqrt(n_embd/n_head). The norm weights in a GGUF file
// already hold Gemma's 1+w.
var archGemma3 = arch{name: "gemma3", ropeMode: ops.RopeNeox, embdScale: true, qkNorm: true, postNorm: true,
	geglu: true, scaleQ: true, swa: true}
