package model

import (
	"fmt"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/tokenizer"
)

// defaultTokenizer is Options.NewTokenizer's default.
func defaultTokenizer(f *gguf.File) (Tokenizer, error) {
	t, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Tokenizer turns text into token ids and ids back into text. Package
// tokenizer's Tokenizer (tokenizer.FromGGUF, built from the file's
// tokenizer.ggml.* metadata) has these methods; Options.NewTokenizer plugs
// one in.
type Tokenizer interface {
	// Encode tokenizes text as llama_tokenize: addSpecial adds BOS/EOS as
	// the vocabulary says, parseSpecial turns special-token text into
	// those tokens.
	Encode(text string, addSpecial, parseSpecial bool) ([]int32, error)
	// TokenToPiece is the text of one token, as llama_token_to_piece;
	// special renders control tokens' text instead of nothing.
	TokenToPiece(id int32, special bool) string
}

// Tokenize turns text into the model's token ids with the model's
// tokenizer (Options.NewTokenizer). A model without a vocabulary
// (tokenizer.ggml.model "none") refuses text with ErrNoVocab.
func (m *Model) Tokenize(text string, addSpecial bool) ([]int32, error) {
	if err := m.textAvailable(); err != nil {
		return nil, err
	}
	return m.tok.Encode(text, addSpecial, true)
}

// Piece is the text of token id; ErrNoVocab as for Tokenize.
func (m *Model) Piece(id int32) (string, error) {
	if err := m.textAvailable(); err != nil {
		return "", err
	}
	if id < 0 || int(id) >= m.HParams.NVocab {
		return "", fmt.Errorf("%w: token %d outside the %d-token vocabulary", ErrArgument, id, m.HParams.NVocab)
	}
	return m.tok.TokenToPiece(id, false), nil
}

// HasText reports whether the model takes text (Tokenize, Piece).
func (m *Model) HasText() bool { return m.textAvailable() == nil }

func (m *Model) textAvailable() error {
	switch {
	case m.noText != nil:
		return fmt.Errorf("%w: %w; give token ids", ErrNoVocab, m.noText)
	case m.tok == nil:
		return fmt.Errorf("%w: the model has no vocabulary (tokenizer.ggml.model = none); give token ids", ErrNoVocab)
	}
	return nil
}
