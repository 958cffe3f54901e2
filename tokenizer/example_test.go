package tokenizer_test

import (
	"bytes"
	"fmt"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/tokenizer"
)

// A model file's tokenizer: here a tiny SentencePiece vocabulary written
// in memory; a real model comes from gguf.Open.
func ExampleFromGGUF() {
	kv := func(k string, v gguf.Value) gguf.KV { return gguf.KV{Key: "tokenizer.ggml." + k, Value: v} }
	var file bytes.Buffer
	w, _ := gguf.NewWriter(&file, []gguf.KV{
		kv("model", gguf.ScalarValue("llama")),
		kv("tokens", gguf.ArrayValue([]string{"<unk>", "<s>", "</s>", "▁", "h", "i", "▁h", "▁hi", "<0x21>"})),
		kv("scores", gguf.ArrayValue([]float32{0, 0, 0, -1, -2, -3, -4, -5, 0})),
		kv("token_type", gguf.ArrayValue([]int32{2, 3, 3, 1, 1, 1, 1, 1, 6})),
	}, nil)
	w.Close()
	f, err := gguf.Parse(file.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, err := tok.Encode("hi!", true, false) // add BOS, no special-token parsing
	if err != nil {
		fmt.Println(err)
		return
	}
	text, _ := tok.Decode(ids)
	fmt.Println(ids, tok.AddBOS(), tok.IsEOG(tok.EOS()))
	fmt.Printf("%q %q\n", tok.TokenToPiece(ids[1], false), text)
	// Output:
	// [1 7 8] true true
	// " hi" "hi!"
}
