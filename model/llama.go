package model

import "github.com/ggml-go/ggml/ops"

// archLlama is llama.cpp's llm_build_llama (llama 2/3, mistral-style
// files): per layer
//
//	h = x + Wo·attn(RoPE_normal(Wq·n), RoPE_normal(Wk·n), Wv·n),  n = RMSNorm(x)·attn_norm
//	x = h + Wdown·(SiLU(Wgate·m) ⊙ Wup·m),                          m = RMSNorm(h)·ffn_norm
//
// with grouped-query attention when head_count_kv < head_count, RoPE on
// adjacent pairs, rope_freqs.weight as llama 3's frequency factors when
// present, optional Q/K/V/O biases, and output.weight or, when the file has
// none, token_embd.weight as the output projection (tied).
var archLlama = arch{name: "llama", ropeMode: ops.RopeNormal}
