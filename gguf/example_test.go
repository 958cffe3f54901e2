package gguf_test

import (
	"bytes"
	"fmt"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/quant"
)

// A file is written in one pass: metadata and tensor descriptions first,
// then each tensor's data in order. Reading gives typed values and the
// tensors' bytes in place.
func Example() {
	var buf bytes.Buffer
	w, err := gguf.NewWriter(&buf,
		[]gguf.KV{
			{Key: "general.architecture", Value: gguf.ScalarValue("llama")},
			{Key: "llama.block_count", Value: gguf.ScalarValue(uint32(2))},
			{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayValue([]string{"<unk>", "<s>", "</s>"})},
		},
		[]gguf.TensorInfo{{Name: "output_norm.weight", Type: quant.F32, Shape: []int64{4}}})
	if err != nil {
		panic(err)
	}
	if err := w.WriteTensor("output_norm.weight", quant.F32Bytes([]float32{1, 2, 3, 4})); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	f, err := gguf.Parse(buf.Bytes()) // gguf.Open(path) maps a file instead
	if err != nil {
		panic(err)
	}
	layers, _ := gguf.Get[uint32](f, "llama.block_count")
	tokens, _ := gguf.GetArray[string](f, "tokenizer.ggml.tokens")
	_, err = gguf.Get[uint64](f, "llama.block_count")
	ti, _ := f.Tensor("output_norm.weight")
	data, _ := f.TensorData(ti.Name)
	fmt.Println(layers, tokens)
	fmt.Println(err)
	fmt.Println(ti.Type, ti.Shape, ti.Size(), quant.BytesF32(data))
	// Output:
	// 2 [<unk> <s> </s>]
	// gguf: wrong value type: key "llama.block_count" is u32, want u64
	// f32 [4] 16 [1 2 3 4]
}
