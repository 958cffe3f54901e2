package model

import (
	"fmt"

	"github.com/ggml-go/ggml/gguf"
)

// Vocab is what the file's tokenizer metadata says about special tokens.
// Token ids of -1 mean none.
type Vocab struct {
	// Model is tokenizer.ggml.model: "none" (token ids only), "llama"
	// (SentencePiece), "gpt2" (BPE), ...
	Model string
	// BOS, EOS and EOT are tokenizer.ggml.bos_token_id, eos_token_id and
	// eot_token_id, with llama.cpp's defaults for the tokenizer model.
	BOS, EOS, EOT int32
	// AddBOS is tokenizer.ggml.add_bos_token (llama.cpp's default for the
	// model when absent).
	AddBOS bool
	// eog is the tokenizer's end-of-generation set when it has one
	// (package tokenizer's IsEOG: EOS, EOT, EOM and the tokens llama.cpp
	// recognises by their end-of-turn text, such as SmolLM2's
	// <|endoftext|> beside its EOS <|im_end|>).
	eog func(int32) bool
}

// IsStop reports whether generation ends at t: EOS or EOT, or any token
// the tokenizer counts as ending generation, as llama_vocab_is_eog.
func (v Vocab) IsStop(t int32) bool {
	if v.eog != nil && v.eog(t) {
		return true
	}
	return t >= 0 && (t == v.EOS || t == v.EOT)
}

func readVocab(f *gguf.File, nVocab int) (Vocab, error) {
	m := &meta{f: f}
	v := Vocab{BOS: -1, EOS: -1, EOT: -1}
	model, ok := m.str("tokenizer.ggml.model")
	if !ok {
		if m.err != nil {
			return v, m.err
		}
		return v, fmt.Errorf("%w: tokenizer.ggml.model missing", ErrModel)
	}
	v.Model = model
	// llama.cpp's defaults per tokenizer model (llama_vocab::impl::load).
	switch model {
	case "llama":
		v.BOS, v.EOS, v.AddBOS = 1, 2, true
	case "gpt2":
		v.BOS, v.EOS = 11, 11
	}
	for _, k := range []struct {
		key string
		id  *int32
	}{
		{"tokenizer.ggml.bos_token_id", &v.BOS},
		{"tokenizer.ggml.eos_token_id", &v.EOS},
		{"tokenizer.ggml.eot_token_id", &v.EOT},
	} {
		x, ok := m.number(k.key)
		if !ok {
			continue
		}
		if x < 0 || x >= float64(nVocab) {
			return v, fmt.Errorf("%w: %s = %v outside the %d-token vocabulary", ErrModel, k.key, x, nVocab)
		}
		*k.id = int32(x)
	}
	if b, ok := f.Lookup("tokenizer.ggml.add_bos_token"); ok {
		add, isBool := gguf.ValueAs[bool](b)
		if !isBool {
			return v, fmt.Errorf("%w: tokenizer.ggml.add_bos_token is %s, want bool", ErrModel, b.Type())
		}
		v.AddBOS = add
	}
	return v, m.err
}
