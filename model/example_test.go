package model_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/tokenizer"
)

// modelFile is the model Example runs: see writeExampleModel.
var modelFile string

// Open a model on the best device, tokenize a prompt and generate with a
// context that Ctrl-C or a deadline would cancel.
func Example() {
	m, err := model.Open(modelFile, model.Options{BestDevice: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	prompt, err := m.Tokenize("Once upon a time", true)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := m.NewSession(model.SessionOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// emit, here nil, gets each token as it comes (m.Piece: its text).
	out, err := s.Generate(ctx, prompt, 8, model.Sampler{}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	tm := s.Timings()
	// m.DeviceName() says which device ran; tm has the durations too.
	fmt.Printf("prompt %v: %d tokens generated, %d decoded\n", prompt, len(out), tm.Decoded)
	// Output: prompt [1 267 274 276 283]: 8 tokens generated, 7 decoded
}

// writeExampleModel writes a random-weight llama model with a small
// SentencePiece vocabulary of its own (the control tokens, the 256 byte
// tokens and the example's four words with their prefixes) into dir, for
// Example.
func writeExampleModel(dir string) (string, error) {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{tokenizer.TypeUnknown, tokenizer.TypeControl, tokenizer.TypeControl}
	for b := range 256 {
		tokens, types = append(tokens, fmt.Sprintf("<0x%02X>", b)), append(types, tokenizer.TypeByte)
	}
	scores := make([]float32, len(tokens))
	// SentencePiece merges adjacent pieces whose join is a token, from
	// single characters up: every prefix of a word is one, scored by length.
	seen := map[string]bool{}
	for _, w := range []string{"▁Once", "▁upon", "▁a", "▁time"} {
		for i, r := range []rune(w) {
			for _, p := range []string{string(r), string([]rune(w)[:i+1])} {
				if !seen[p] {
					seen[p] = true
					tokens, types = append(tokens, p), append(types, tokenizer.TypeNormal)
					scores = append(scores, float32(len([]rune(p))))
				}
			}
		}
	}
	kv := func(k string, v gguf.Value) gguf.KV { return gguf.KV{Key: "tokenizer.ggml." + k, Value: v} }
	c := genmodel.Config{Arch: "llama", Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, VocabSize: len(tokens), Ctx: 64, Seed: 5,
		KVs: []gguf.KV{
			kv("model", gguf.ScalarValue("llama")), kv("tokens", gguf.ArrayValue(tokens)),
			kv("scores", gguf.ArrayValue(scores)), kv("token_type", gguf.ArrayValue(types)),
			kv("bos_token_id", gguf.ScalarValue(uint32(1))), kv("eos_token_id", gguf.ScalarValue(uint32(2))),
			kv("unknown_token_id", gguf.ScalarValue(uint32(0))), kv("add_bos_token", gguf.ScalarValue(true)),
		}}
	path := filepath.Join(dir, "example.gguf")
	return path, genmodel.WriteFile(path, c)
}
