// Package tokenizer turns text into token ids and back as libllama does
// (llama_tokenize, llama_token_to_piece), reading the vocabulary from a GGUF
// file's tokenizer.ggml.* metadata. Two vocabulary types are implemented:
//
//   - "llama": SentencePiece as llama.cpp runs it (spaces as "▁", a space
//     prefix, pairs of symbols merged by piece score, bytes of unknown
//     symbols as <0xXX> tokens);
//   - "gpt2": byte-level BPE with the file's merges, with Llama 3's
//     pre-tokenizer (tokenizer.ggml.pre "llama-bpe", "llama3" or "llama-v3")
//     or SmolLM's (digits alone, then GPT-2's regex: "smollm", "starcoder",
//     "refact", "command-r").
//
// Control, unknown and user-defined tokens are found in the text before
// the rest is tokenized, as llama.cpp does: user-defined ones always,
// control and unknown ones only when parseSpecial is set.
//
// The shape a model runner plugs in: FromGGUF, Encode, TokenToPiece,
// Decode, BOS, EOS, IsEOG and AddBOS. A Tokenizer is read-only after
// FromGGUF and safe for concurrent use.
//
// Not implemented (FromGGUF reports them): other vocabulary types (WPM,
// UGM, RWKV) and other BPE pre-tokenizers; the lstrip/rstrip token
// attributes llama.cpp sets for a few models by name.
package tokenizer

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ggml-go/ggml/gguf"
)

// Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
const (
	TypeUndefined   = 0
	TypeNormal      = 1
	TypeUnknown     = 2
	TypeControl     = 3
	TypeUserDefined = 4
	TypeUnused      = 5
	TypeByte        = 6
)

// Errors returned by this package; test with errors.Is.
var (
	// ErrVocab reports metadata that makes no usable vocabulary.
	ErrVocab = errors.New("tokenizer: bad vocabulary")
	// ErrUnsupported reports a vocabulary type or pre-tokenizer this
	// package does not implement.
	ErrUnsupported = fmt.Errorf("tokenizer: %w", errors.ErrUnsupported)
	// ErrText reports text the tokenizer cannot take: a byte with no
	// byte token, or (byte-level BPE) a code point above U+10FFFF, on
	// which libllama aborts.
	ErrText = errors.New("tokenizer: cannot tokenize text")
	// ErrToken reports a token id outside the vocabulary.
	ErrToken = errors.New("tokenizer: token id out of range")
)

type kind int

const (
	spm kind = iota
	bpe
)

// Tokenizer is a vocabulary and its tokenization algorithm.
type Tokenizer struct {
	kind   kind
	tokens []string
	scores []float32
	types  []int32
	index  map[string]int32
	ranks  map[pair]int32 // BPE: merge rank of a (left, right) pair
	// special are the control, user-defined and unknown tokens, longest
	// first: the order they are searched for in the text.
	special []int32
	pieces  []string // each token's piece with special set

	bos, eos, unk, eot, eom  int32
	addBOS, addEOS, addSpace bool
	ignoreMerges             bool
	pre                      preTokenizer
	eog                      map[int32]bool
}

type pair struct{ a, b string }

// FromGGUF reads the tokenizer of a model file: tokenizer.ggml.model,
// tokens, scores, token_type, merges and pre, the special ids and the
// add_bos_token / add_eos_token / add_space_prefix flags, with llama.cpp's
// defaults where a key is absent.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	model, err := gguf.Get[string](f, "tokenizer.ggml.model")
	if err != nil {
		return nil, fmt.Errorf("%w: tokenizer.ggml.model: %w", ErrVocab, err)
	}
	t := &Tokenizer{unk: -1, eot: -1, eom: -1}
	switch model {
	case "llama":
		t.kind, t.bos, t.eos, t.unk, t.addBOS, t.addSpace = spm, 1, 2, 0, true, true
	case "gpt2":
		t.kind, t.bos, t.eos = bpe, 11, 11
		pre, err := gguf.Get[string](f, "tokenizer.ggml.pre")
		if err != nil && !errors.Is(err, gguf.ErrNotFound) {
			return nil, fmt.Errorf("%w: tokenizer.ggml.pre: %w", ErrVocab, err)
		}
		switch pre {
		case "llama3", "llama-v3", "llama-bpe":
			t.pre, t.ignoreMerges, t.addBOS = preLlama3, true, true
		case "smollm", "starcoder", "refact", "command-r":
			// llama.cpp gives these one pre-tokenizer (and no other
			// setting that tokenization reads).
			t.pre = preSmolLM
		default:
			return nil, fmt.Errorf("%w: BPE pre-tokenizer %q (llama-bpe, smollm, starcoder, refact or command-r)", ErrUnsupported, pre)
		}
	default:
		return nil, fmt.Errorf("%w: vocabulary type %q (llama or gpt2)", ErrUnsupported, model)
	}
	if t.tokens, err = gguf.GetArray[string](f, "tokenizer.ggml.tokens"); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.ggml.tokens: %w", ErrVocab, err)
	}
	n := len(t.tokens)
	if n == 0 || n > 1<<31-1 {
		return nil, fmt.Errorf("%w: %d tokens", ErrVocab, n)
	}
	if t.scores, err = optionalArray[float32](f, "scores", n); err != nil {
		return nil, err
	}
	if t.types, err = optionalArray[int32](f, "token_type", n); err != nil {
		return nil, err
	}
	if t.types == nil {
		t.types = make([]int32, n)
		for i := range t.types {
			t.types[i] = TypeNormal
		}
	} else {
		t.types = slices.Clone(t.types) // FromGGUF may promote some to CONTROL
	}
	t.index = make(map[string]int32, n)
	for i, s := range t.tokens {
		t.index[s] = int32(i) // a repeated text maps to its last id, as in llama.cpp
	}
	if t.kind == bpe {
		if err := t.readMerges(f); err != nil {
			return nil, err
		}
	}
	if err := t.readFlags(f); err != nil {
		return nil, err
	}
	t.findEOG()
	for id, ty := range t.types {
		if (ty == TypeControl || ty == TypeUserDefined || ty == TypeUnknown) && t.tokens[id] != "" {
			t.special = append(t.special, int32(id))
		}
	}
	slices.SortStableFunc(t.special, func(a, b int32) int { return cmp.Compare(len(t.tokens[b]), len(t.tokens[a])) })
	t.pieces = make([]string, n)
	for id := range t.pieces {
		t.pieces[id] = t.makePiece(int32(id))
	}
	return t, nil
}

// optionalArray reads tokenizer.ggml.<key>, nil when absent; present, it
// must have one element per token.
func optionalArray[T gguf.Scalar](f *gguf.File, key string, n int) ([]T, error) {
	a, err := gguf.GetArray[T](f, "tokenizer.ggml."+key)
	if errors.Is(err, gguf.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: tokenizer.ggml.%s: %w", ErrVocab, key, err)
	}
	if len(a) != n {
		return nil, fmt.Errorf("%w: tokenizer.ggml.%s has %d entries for %d tokens", ErrVocab, key, len(a), n)
	}
	return a, nil
}

// readMerges reads the BPE merges "left right"; llama.cpp splits at the
// first space after the first byte.
func (t *Tokenizer) readMerges(f *gguf.File) error {
	merges, err := gguf.GetArray[string](f, "tokenizer.ggml.merges")
	if err != nil {
		return fmt.Errorf("%w: tokenizer.ggml.merges: %w", ErrVocab, err)
	}
	t.ranks = make(map[pair]int32, len(merges))
	for r, m := range merges {
		i := strings.IndexByte(m[min(1, len(m)):], ' ') + 1
		if i <= 0 {
			return fmt.Errorf("%w: merge %d (%q) has no space", ErrVocab, r, m)
		}
		p := pair{m[:i], m[i+1:]}
		if _, dup := t.ranks[p]; !dup {
			t.ranks[p] = int32(r)
		}
	}
	return nil
}

// readFlags reads the special ids and add_* flags over the defaults. An id
// past the vocabulary keeps the default, as llama.cpp does.
func (t *Tokenizer) readFlags(f *gguf.File) error {
	for _, s := range []struct {
		key string
		id  *int32
	}{{"bos_token_id", &t.bos}, {"eos_token_id", &t.eos}, {"unknown_token_id", &t.unk}, {"eot_token_id", &t.eot}, {"eom_token_id", &t.eom}} {
		v, err := gguf.Get[uint32](f, "tokenizer.ggml."+s.key)
		if errors.Is(err, gguf.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: tokenizer.ggml.%s: %w", ErrVocab, s.key, err)
		}
		if int(v) < len(t.tokens) {
			*s.id = int32(v)
		}
	}
	// A default past a small vocabulary names no token.
	for _, id := range []*int32{&t.bos, &t.eos, &t.unk} {
		if int(*id) >= len(t.tokens) {
			*id = -1
		}
	}
	for _, s := range []struct {
		key string
		v   *bool
	}{{"add_bos_token", &t.addBOS}, {"add_eos_token", &t.addEOS}, {"add_space_prefix", &t.addSpace}} {
		v, err := gguf.Get[bool](f, "tokenizer.ggml."+s.key)
		if errors.Is(err, gguf.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: tokenizer.ggml.%s: %w", ErrVocab, s.key, err)
		}
		*s.v = v
	}
	return nil
}

// Texts llama.cpp recognises special tokens by when the file names none
// (llama_vocab::impl::load); it makes each token it finds CONTROL.
var (
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomTexts = []string{"<|eom_id|>"}
	// fimTexts are the fill-in-the-middle tokens' texts: prefix, suffix,
	// middle, then pad, repo and file separator, the last three of which
	// end generation.
	fimTexts = [][]string{
		{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>"},
		{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>"},
		{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>"},
		{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"},
		{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
		{"<|file_sep|>"},
	}
	// eogTexts end generation whatever the ids the file names. The
	// reference libllama also counts "</s>" (Gemma 3's vocabulary has it
	// beside its EOS <eos>: TestTokenToPieceMatchesLlama found it).
	eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>", "</s>"}
)

// findEOG fills the end-of-generation set as llama.cpp does: EOS, EOT and
// EOM, the FIM pad, repo and separator tokens, and every token with an
// end-of-turn text. Where several tokens have one of a role's texts,
// llama.cpp takes the first its hash map yields, an order this package
// does not reproduce: it takes the first text of the list (SmolLM2 has
// <|im_end|> and <|endoftext|>; libllama's EOT is the second, ours the
// first). The end-of-generation set, a set, is the same either way.
func (t *Tokenizer) findEOG() {
	t.eog = map[int32]bool{}
	find := func(texts []string, id *int32) {
		for _, s := range texts {
			i, ok := t.index[s]
			if !ok {
				continue
			}
			if *id < 0 {
				*id = i
				t.types[i] = TypeControl
			}
		}
	}
	find(eotTexts, &t.eot)
	find(eomTexts, &t.eom)
	for role, texts := range fimTexts {
		id := int32(-1)
		find(texts, &id)
		if id >= 0 && role >= 3 {
			t.eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if i, ok := t.index[s]; ok {
			t.eog[i] = true
			t.types[i] = TypeControl
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id >= 0 {
			t.eog[id] = true
		}
	}
}

// NumTokens is the vocabulary's size.
func (t *Tokenizer) NumTokens() int { return len(t.tokens) }

// BOS is the beginning-of-sequence token, -1 when the vocabulary has none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence token, -1 when the vocabulary has none.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT is the end-of-turn token, -1 when the vocabulary has none.
func (t *Tokenizer) EOT() int32 { return t.eot }

// UNK is the unknown token, -1 when the vocabulary has none.
func (t *Tokenizer) UNK() int32 { return t.unk }

// AddBOS reports whether Encode with addSpecial starts with BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// AddEOS reports whether Encode with addSpecial ends with EOS.
func (t *Tokenizer) AddEOS() bool { return t.addEOS }

// IsEOG reports whether id ends generation (llama_vocab_is_eog): EOS, EOT,
// EOM or a token with an end-of-turn text.
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// Token returns the text of token id as the vocabulary stores it.
func (t *Tokenizer) Token(id int32) (string, error) {
	if id < 0 || int(id) >= len(t.tokens) {
		return "", fmt.Errorf("%w: %d of %d", ErrToken, id, len(t.tokens))
	}
	return t.tokens[id], nil
}

// Type returns the type of token id (TypeNormal, ...), -1 out of range.
func (t *Tokenizer) Type(id int32) int32 {
	if id < 0 || int(id) >= len(t.types) {
		return -1
	}
	return t.types[id]
}

// fragment is a piece of the text: raw text, or a special token found in it.
type fragment struct {
	tok  int32 // -1: text
	text string
}

// Encode tokenizes text as llama_tokenize does. addSpecial adds BOS and
// EOS as the vocabulary says (AddBOS, AddEOS); parseSpecial makes the text
// of control and unknown tokens those tokens (user-defined tokens are
// always found).
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	frags := t.partition(text, parseSpecial)
	var out []int32
	if addSpecial && (t.addBOS && t.bos < 0 || t.addEOS && t.eos < 0) {
		// llama.cpp asserts here.
		return nil, fmt.Errorf("%w: add_bos/add_eos set without a BOS/EOS token", ErrVocab)
	}
	if addSpecial && t.addBOS {
		out = append(out, t.bos)
	}
	prevSpecial := true // SentencePiece prefixes a space to text at the start and after a special token
	for _, f := range frags {
		if f.tok >= 0 {
			out = append(out, f.tok)
			prevSpecial = true
			continue
		}
		var err error
		if t.kind == spm {
			s := f.text
			if t.addSpace && prevSpecial {
				s = " " + s
			}
			out, err = t.encodeSPM(strings.ReplaceAll(s, " ", "▁"), out)
		} else {
			out, err = t.encodeBPE(f.text, out)
		}
		if err != nil {
			return nil, err
		}
		prevSpecial = false
	}
	if addSpecial && t.addEOS {
		out = append(out, t.eos)
	}
	return out, nil
}

// partition splits text at the special tokens, longest first, each at
// every leftmost non-overlapping occurrence in what is still text.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{-1, text}}
	var next []fragment
	for _, id := range t.special {
		ty := t.types[id]
		if !parseSpecial && (ty == TypeControl || ty == TypeUnknown) {
			continue
		}
		s := t.tokens[id]
		next = next[:0]
		for _, f := range frags {
			rest := f.text
			for f.tok < 0 {
				i := strings.Index(rest, s)
				if i < 0 {
					if rest != "" {
						next = append(next, fragment{-1, rest})
					}
					break
				}
				if i > 0 {
					next = append(next, fragment{-1, rest[:i]})
				}
				next = append(next, fragment{id, ""})
				rest = rest[i+len(s):]
			}
			if f.tok >= 0 {
				next = append(next, f)
			}
		}
		frags, next = next, frags
	}
	return frags
}

// TokenToPiece returns the text of token id as llama_token_to_piece does
// with lstrip 0: control and unknown tokens give their text only with
// special set (else ""); SentencePiece pieces have "▁" as spaces and byte
// tokens their byte; byte-level BPE pieces their bytes. An id outside the
// vocabulary gives "".
func (t *Tokenizer) TokenToPiece(id int32, special bool) string {
	return t.piece(id, 0, special)
}

// piece is llama_token_to_piece with lstrip: up to lstrip leading spaces
// are dropped.
func (t *Tokenizer) piece(id int32, lstrip int, special bool) string {
	if id < 0 || int(id) >= len(t.pieces) {
		return ""
	}
	if ty := t.types[id]; !special && (ty == TypeControl || ty == TypeUnknown) {
		return ""
	}
	p := t.pieces[id]
	for i := 0; i < lstrip && p != "" && p[0] == ' '; i++ {
		p = p[1:]
	}
	return p
}

// makePiece is token id's piece with special set.
func (t *Tokenizer) makePiece(id int32) string {
	s := t.tokens[id]
	switch t.types[id] {
	case TypeControl, TypeUnknown, TypeUserDefined:
		return s
	case TypeNormal:
		if t.kind == spm {
			return strings.ReplaceAll(s, "▁", " ")
		}
		return decodeByteLevel(s)
	case TypeByte:
		if t.kind == spm {
			return string([]byte{spmByte(s)})
		}
	}
	return ""
}

// spmByte is the byte of a "<0xXX>" token, as strtol reads its two digits.
func spmByte(s string) byte {
	var b byte
	for i := 3; i < min(5, len(s)); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			b = b<<4 | (c - '0')
		case 'a' <= c && c <= 'f':
			b = b<<4 | (c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			b = b<<4 | (c - 'A' + 10)
		default:
			return b
		}
	}
	return b
}

// Decode is the text of ids: their pieces without control and unknown
// tokens, less the space a SentencePiece vocabulary prefixes to the text
// at the start and after each special token, so that Decode inverts
// Encode where the algorithm loses nothing. (llama_detokenize differs: it
// keeps that space after a BOS it does not remove.)
func (t *Tokenizer) Decode(ids []int32) (string, error) {
	var b strings.Builder
	strip := t.addSpace
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.tokens) {
			return "", fmt.Errorf("%w: %d of %d", ErrToken, id, len(t.tokens))
		}
		switch t.types[id] {
		case TypeControl, TypeUnknown, TypeUserDefined:
			b.WriteString(t.piece(id, 0, false))
			strip = t.addSpace
		default:
			lstrip := 0
			if strip {
				lstrip = 1
			}
			b.WriteString(t.piece(id, lstrip, false))
			strip = false
		}
	}
	return b.String(), nil
}
