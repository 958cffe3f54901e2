package genmodel

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/internal/testkit/npmvocab"
	"github.com/ggml-go/ggml/quant"
)

func generate(t *testing.T, c Config) (*gguf.File, []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, c))
	f, err := gguf.Parse(buf.Bytes())
	require.NoError(t, err)
	return f, buf.Bytes()
}

func TestLlamaLayout(t *testing.T) {
	c := Default()
	c.Type = quant.Q4_K
	f, _ := generate(t, c)
	arch, err := gguf.Get[string](f, "general.architecture")
	require.NoError(t, err)
	require.Equal(t, "llama", arch)
	for key, want := range map[string]uint32{
		"llama.context_length": 256, "llama.embedding_length": 256, "llama.block_count": 2,
		"llama.feed_forward_length": 512, "llama.attention.head_count": 4, "llama.attention.head_count_kv": 2,
		"llama.rope.dimension_count": 64, "llama.vocab_size": 512, "general.file_type": 15,
	} {
		v, err := gguf.Get[uint32](f, key)
		require.NoError(t, err, key)
		require.Equal(t, want, v, key)
	}
	eps, err := gguf.Get[float32](f, "llama.attention.layer_norm_rms_epsilon")
	require.NoError(t, err)
	require.Equal(t, float32(1e-5), eps)
	model, err := gguf.Get[string](f, "tokenizer.ggml.model")
	require.NoError(t, err)
	require.Equal(t, "none", model)

	want := map[string][]int64{
		"token_embd.weight": {256, 512}, "output_norm.weight": {256}, "output.weight": {256, 512},
		"blk.1.attn_norm.weight": {256}, "blk.1.attn_q.weight": {256, 256}, "blk.1.attn_k.weight": {256, 128},
		"blk.1.attn_v.weight": {256, 128}, "blk.1.attn_output.weight": {256, 256}, "blk.1.ffn_norm.weight": {256},
		"blk.1.ffn_gate.weight": {256, 512}, "blk.1.ffn_up.weight": {256, 512}, "blk.1.ffn_down.weight": {512, 256},
	}
	require.Equal(t, 3+2*9, f.NumTensors())
	for name, shape := range want {
		ti, ok := f.Tensor(name)
		require.True(t, ok, name)
		require.Equal(t, shape, ti.Shape, name)
		if len(shape) == 1 {
			require.Equal(t, quant.F32, ti.Type, name)
		} else {
			require.Equal(t, quant.Q4_K, ti.Type, name)
		}
	}
	_, ok := f.Tensor("blk.0.attn_q.bias")
	require.False(t, ok, "llama has no biases")
}

func TestExtraKVs(t *testing.T) {
	c := Default()
	c.KVs = []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: gguf.ScalarValue("llama")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayValue([]string{"a", "b"})},
	}
	f, _ := generate(t, c)
	model, err := gguf.Get[string](f, "tokenizer.ggml.model")
	require.NoError(t, err)
	require.Equal(t, "llama", model, "replaced in place")
	toks, err := gguf.GetArray[string](f, "tokenizer.ggml.tokens")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, toks)
	require.Equal(t, "tokenizer.ggml.tokens", f.KVs()[f.NumKV()-1].Key, "added at the end")
}

func TestQwen2Tied(t *testing.T) {
	c := Default()
	c.Arch, c.Tied, c.Type = "qwen2", true, quant.Q8_0
	f, _ := generate(t, c)
	for _, name := range []string{"blk.0.attn_q.bias", "blk.0.attn_k.bias", "blk.0.attn_v.bias"} {
		ti, ok := f.Tensor(name)
		require.True(t, ok, name)
		require.Equal(t, quant.F32, ti.Type)
	}
	kb, _ := f.Tensor("blk.1.attn_k.bias")
	require.Equal(t, []int64{128}, kb.Shape)
	_, ok := f.Tensor("output.weight")
	require.False(t, ok, "tied output")
	base, err := gguf.Get[float32](f, "qwen2.rope.freq_base")
	require.NoError(t, err)
	require.Equal(t, float32(1e6), base)
}

// TestWeights checks the drawn values: deterministic for a seed, other
// for another seed, and of the intended scale.
func TestWeights(t *testing.T) {
	c := Default()
	_, a := generate(t, c)
	_, b := generate(t, c)
	require.Equal(t, a, b, "same config, same bytes")
	c.Seed = 2
	_, d := generate(t, c)
	require.NotEqual(t, a, d)

	f, _ := gguf.Parse(a)
	q, err := f.TensorData("blk.0.attn_q.weight")
	require.NoError(t, err)
	w := quant.BytesF32(q)
	var sum, sq float64
	for _, v := range w {
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	n := float64(len(w))
	require.InDelta(t, 0, sum/n, 0.01)
	require.InDelta(t, 1.0/256, sq/n, 0.1/256, "variance 1/fan-in")
	norm, _ := f.TensorData("output_norm.weight")
	for _, v := range quant.BytesF32(norm) {
		require.InDelta(t, 1, v, 0.6)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"arch":         func(c *Config) { c.Arch = "gpt2" },
		"type":         func(c *Config) { c.Type = quant.Q5_K },
		"block size":   func(c *Config) { c.Type, c.Embd, c.Heads, c.KVHeads = quant.Q4_K, 128, 2, 1 },
		"heads":        func(c *Config) { c.Heads = 3 },
		"kv heads":     func(c *Config) { c.KVHeads = 3 },
		"odd head dim": func(c *Config) { c.Embd, c.Heads, c.KVHeads = 96, 32, 32 },
		"negative":     func(c *Config) { c.Layers = -1 },
		"vocab":        func(c *Config) { c.Vocab = "wordpiece" },
	} {
		c := Default()
		mod(&c)
		err := Write(&bytes.Buffer{}, c)
		require.ErrorIs(t, err, ErrConfig, name)
	}
	p := filepath.Join(t.TempDir(), "bad.gguf")
	c := Default()
	c.Arch = "gpt2"
	require.Error(t, WriteFile(p, c))
	require.NoFileExists(t, p, "a failed generation leaves no file")
}

// TestGGMLReadsModels has the real ggml read every generated variant.
func TestGGMLReadsModels(t *testing.T) {
	l := reftest.Lib(t)
	dir := t.TempDir()
	for _, arch := range []string{"llama", "qwen2"} {
		for _, typ := range Types {
			c := Default()
			c.Arch, c.Type, c.Tied = arch, typ, typ == quant.Q6_K
			p := filepath.Join(dir, arch+typ.String()+".gguf")
			require.NoError(t, WriteFile(p, c))
			g, err := l.ReadGGUF(p)
			require.NoError(t, err, "%s %s", arch, typ)
			f, err := gguf.Open(p)
			require.NoError(t, err)
			require.Equal(t, f.NumTensors(), len(g.Tensors))
			for _, gt := range g.Tensors {
				d, err := f.TensorData(gt.Name)
				require.NoError(t, err)
				require.Equal(t, d, gt.Data, gt.Name)
			}
			require.NoError(t, f.Close())
		}
	}
}

// TestRealVocab: a real vocabulary sets n_vocab and the embedding's rows,
// and Config.KVs still replace its pairs. (Package tokenizer checks that
// libllama reads these files' tokenizers as we do.)
func TestRealVocab(t *testing.T) {
	c := Default()
	c.Vocab = "spm"
	c.Embd, c.FF = 32, 32
	c.KVs = []gguf.KV{{Key: "tokenizer.ggml.add_bos_token", Value: gguf.ScalarValue(false)}}
	var b bytes.Buffer
	err := Write(&b, c)
	if errors.Is(err, npmvocab.ErrMissing) && os.Getenv("GGML_REF_REQUIRED") != "1" {
		t.Skip(err)
	}
	require.NoError(t, err)
	f, err := gguf.Parse(b.Bytes())
	require.NoError(t, err)
	n, err := gguf.Get[uint32](f, "llama.vocab_size")
	require.NoError(t, err)
	require.EqualValues(t, 32000, n)
	tokens, err := gguf.GetArray[string](f, "tokenizer.ggml.tokens")
	require.NoError(t, err)
	require.Len(t, tokens, 32000)
	emb, ok := f.Tensor("token_embd.weight")
	require.True(t, ok)
	require.EqualValues(t, 32000, emb.Shape[1])
	model, err := gguf.Get[string](f, "tokenizer.ggml.model")
	require.NoError(t, err)
	require.Equal(t, "llama", model)
	addBOS, err := gguf.Get[bool](f, "tokenizer.ggml.add_bos_token")
	require.NoError(t, err)
	require.False(t, addBOS)
}
