package tokenizer

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/ggml-go/ggml/gguf"
)

// fileOf is a tensorless GGUF file with the tokenizer.ggml.* pairs kvs.
func fileOf(t *testing.T, kvs map[string]gguf.Value) *gguf.File {
	t.Helper()
	var list []gguf.KV
	for _, k := range []string{"model", "pre", "tokens", "scores", "token_type", "merges", "bos_token_id", "eos_token_id",
		"add_bos_token", "add_eos_token"} {
		if v, ok := kvs[k]; ok {
			list = append(list, gguf.KV{Key: "tokenizer.ggml." + k, Value: v})
		}
	}
	var b bytes.Buffer
	w, err := gguf.NewWriter(&b, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// tinySPM is a SentencePiece vocabulary without byte tokens.
func tinySPM() map[string]gguf.Value {
	return map[string]gguf.Value{
		"model":      gguf.ScalarValue("llama"),
		"tokens":     gguf.ArrayValue([]string{"<unk>", "<s>", "</s>", "▁", "a", "b", "▁a", "ab", "<|eot_id|>"}),
		"scores":     gguf.ArrayValue([]float32{0, 0, 0, -1, -2, -3, -4, -5, 0}),
		"token_type": gguf.ArrayValue([]int32{2, 3, 3, 1, 1, 1, 1, 1, 1}),
	}
}

func TestFromGGUFErrors(t *testing.T) {
	with := func(base map[string]gguf.Value, k string, v gguf.Value) map[string]gguf.Value {
		m := map[string]gguf.Value{}
		for k, v := range base {
			m[k] = v
		}
		if v == (gguf.Value{}) {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	bpe := map[string]gguf.Value{
		"model": gguf.ScalarValue("gpt2"), "pre": gguf.ScalarValue("llama-bpe"),
		"tokens": gguf.ArrayValue([]string{"a", "b", "ab"}), "merges": gguf.ArrayValue([]string{"a b"}),
	}
	for name, c := range map[string]struct {
		kvs  map[string]gguf.Value
		want error
	}{
		"no model":       {with(tinySPM(), "model", gguf.Value{}), ErrVocab},
		"model type":     {with(tinySPM(), "model", gguf.ScalarValue(uint32(1))), ErrVocab},
		"wordpiece":      {with(tinySPM(), "model", gguf.ScalarValue("bert")), ErrUnsupported},
		"no tokens":      {with(tinySPM(), "tokens", gguf.Value{}), ErrVocab},
		"empty tokens":   {with(tinySPM(), "tokens", gguf.ArrayValue([]string{})), ErrVocab},
		"short scores":   {with(tinySPM(), "scores", gguf.ArrayValue([]float32{0})), ErrVocab},
		"scores type":    {with(tinySPM(), "scores", gguf.ArrayValue([]int32{0, 0, 0, 0, 0, 0, 0, 0, 0})), ErrVocab},
		"bos type":       {with(tinySPM(), "bos_token_id", gguf.ScalarValue("1")), ErrVocab},
		"add_bos type":   {with(tinySPM(), "add_bos_token", gguf.ScalarValue(uint8(1))), ErrVocab},
		"other pre":      {with(bpe, "pre", gguf.ScalarValue("qwen2")), ErrUnsupported},
		"no pre":         {with(bpe, "pre", gguf.Value{}), ErrUnsupported},
		"no merges":      {with(bpe, "merges", gguf.Value{}), ErrVocab},
		"merge no space": {with(bpe, "merges", gguf.ArrayValue([]string{"ab"})), ErrVocab},
	} {
		_, err := FromGGUF(fileOf(t, c.kvs))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if _, err := FromGGUF(fileOf(t, bpe)); err != nil {
		t.Fatal(err)
	}
}

func TestTinySPM(t *testing.T) {
	kvs := tinySPM()
	kvs["bos_token_id"] = gguf.ScalarValue(uint32(99)) // past the vocabulary: llama.cpp keeps the default
	tok, err := FromGGUF(fileOf(t, kvs))
	if err != nil {
		t.Fatal(err)
	}
	if tok.BOS() != 1 || tok.EOS() != 2 || tok.UNK() != 0 || !tok.AddBOS() || tok.AddEOS() {
		t.Fatalf("bos %d eos %d unk %d add %v %v", tok.BOS(), tok.EOS(), tok.UNK(), tok.AddBOS(), tok.AddEOS())
	}
	// An end-of-turn text becomes a CONTROL end-of-generation token.
	if !tok.IsEOG(8) || !tok.IsEOG(2) || tok.IsEOG(4) || tok.EOT() != 8 || tok.Type(8) != TypeControl {
		t.Fatal("end of generation tokens")
	}
	if ids, err := tok.Encode("", true, false); err != nil || !slices.Equal(ids, []int32{1}) {
		t.Fatalf("empty text: %v %v", ids, err)
	}
	// "▁a" (-4) is formed before "ab" (-5): ▁a b.
	if ids, err := tok.Encode("ab", false, false); err != nil || !slices.Equal(ids, []int32{6, 5}) {
		t.Fatalf("ab: %v %v", ids, err)
	}
	if _, err := tok.Encode("c", false, false); !errors.Is(err, ErrText) {
		t.Fatalf("a byte without a token: %v", err)
	}
	if _, err := tok.Decode([]int32{4, 9}); !errors.Is(err, ErrToken) {
		t.Fatalf("decode out of range: %v", err)
	}
	if tok.TokenToPiece(-1, true) != "" || tok.TokenToPiece(6, false) != " a" || tok.TokenToPiece(1, false) != "" || tok.TokenToPiece(1, true) != "<s>" {
		t.Fatal("pieces")
	}
	if _, err := tok.Token(9); !errors.Is(err, ErrToken) {
		t.Fatal(err)
	}
}

func TestAboveMaxRune(t *testing.T) {
	tok, err := FromGGUF(fileOf(t, map[string]gguf.Value{
		"model": gguf.ScalarValue("gpt2"), "pre": gguf.ScalarValue("llama-bpe"),
		"tokens": gguf.ArrayValue([]string{"a", "b", "ab"}), "merges": gguf.ArrayValue([]string{"a b"}),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := tok.Encode("ab", false, false); err != nil || !slices.Equal(ids, []int32{2}) {
		t.Fatalf("ab: %v %v", ids, err)
	}
	// F4 90 80 80 decodes (leniently) to U+110000, which libllama cannot
	// encode back and aborts on.
	if _, err := tok.Encode("a\xf4\x90\x80\x80", false, false); !errors.Is(err, ErrText) {
		t.Fatalf("above U+10FFFF: %v", err)
	}
}

// FuzzFromGGUF: any metadata gives a tokenizer or an error, and a
// tokenizer encodes and decodes any text without panicking.
func FuzzFromGGUF(f *testing.F) {
	for _, kvs := range []map[string]gguf.Value{tinySPM(), {
		"model": gguf.ScalarValue("gpt2"), "pre": gguf.ScalarValue("llama-bpe"),
		"tokens": gguf.ArrayValue([]string{"a", "b", "ab", "<|x|>"}), "merges": gguf.ArrayValue([]string{"a b"}),
		"token_type": gguf.ArrayValue([]int32{1, 1, 1, 3}),
	}} {
		f.Add(fileOf(&testing.T{}, kvs).Bytes(), "ab <|x|> ▁a")
	}
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		g, err := gguf.Parse(data)
		if err != nil {
			return
		}
		tok, err := FromGGUF(g)
		if err != nil {
			return
		}
		for _, special := range []bool{false, true} {
			ids, err := tok.Encode(text, true, special)
			if err != nil {
				continue
			}
			if _, err := tok.Decode(ids); err != nil {
				t.Fatal(err)
			}
		}
	})
}
