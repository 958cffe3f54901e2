package model

import "github.com/ggml-go/ggml/ops"

// archQwen2 is llama.cpp's llm_build_qwen2: llama's graph (archLlama) with
// biases on Q, K and V, which the file must have, and RoPE NEOX (each head's
// two halves rotated together instead of adjacent pairs).
var archQwen2 = arch{name: "qwen2", ropeMode: ops.RopeNeox, qkvBias: true}
