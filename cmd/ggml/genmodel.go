package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/quant"
)

func runGenModel(args []string, stdout io.Writer) error {
	d := genmodel.Default()
	fs := flag.NewFlagSet("gen-model", flag.ContinueOnError)
	out := fs.String("o", "", "output `FILE` (required)")
	arch := fs.String("arch", d.Arch, "architecture: llama or qwen2")
	typ := fs.String("type", d.Type.String(), "weight type: f32, f16, q8_0, q4_0, q4_K or q6_K")
	vocab := fs.String("vocab", d.Vocab, "tokenizer: none, spm (LLaMA 2, 32k) or bpe (Llama 3, 128k); spm and bpe need scripts/fetch-vocab")
	embd := fs.Int("embd", d.Embd, "embedding width (n_embd)")
	layers := fs.Int("layers", d.Layers, "layers (n_layer)")
	heads := fs.Int("heads", d.Heads, "attention heads (n_head)")
	kvHeads := fs.Int("kv-heads", d.KVHeads, "key/value heads (n_head_kv; fewer than -heads is GQA)")
	ff := fs.Int("ff", d.FF, "feed-forward width (n_ff)")
	vocabSize := fs.Int("vocab-size", d.VocabSize, "tokens (n_vocab)")
	ctx := fs.Int("ctx", d.Ctx, "training context length")
	seed := fs.Uint64("seed", d.Seed, "weights seed")
	tied := fs.Bool("tied", false, "no output.weight: the output reuses token_embd.weight")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml gen-model -o FILE [-arch llama|qwen2] [-type T] [-vocab none|spm|bpe] [-embd N -layers N -heads N\n"+
			"                      -kv-heads N -ff N -vocab-size N -ctx N -seed N -tied]\n\n"+
			"Writes a random-weight model with the metadata and tensor names llama.cpp reads, for tests and demos.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return usageErrorf("-o FILE is required")
	}
	t, err := quant.ParseType(*typ)
	if err != nil {
		return usageErrorf("-type: %w", err)
	}
	c := genmodel.Config{Arch: *arch, Type: t, Vocab: *vocab, Embd: *embd, Layers: *layers, Heads: *heads,
		KVHeads: *kvHeads, FF: *ff, VocabSize: *vocabSize, Ctx: *ctx, Seed: *seed, Tied: *tied}
	for _, v := range []int{*embd, *layers, *heads, *kvHeads, *ff, *vocabSize, *ctx} {
		if v <= 0 {
			return usageErrorf("sizes must be positive")
		}
	}
	if err := genmodel.WriteFile(*out, c); err != nil {
		return err
	}
	fi, err := os.Stat(*out)
	if err != nil {
		return err
	}
	f, err := gguf.Open(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(stdout, "wrote %s: %s, %s weights, %d tensors, %d bytes\n", *out, *arch, t, f.NumTensors(), fi.Size())
	return nil
}
