package llamaref

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/quant"
)

func genModel(t *testing.T, c genmodel.Config) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), c.Arch+"-"+c.Type.String()+".gguf")
	require.NoError(t, genmodel.WriteFile(p, c))
	return p
}

// run decodes tokens in calls of the given sizes in a fresh context and
// returns every position's logits.
func run(t *testing.T, m *Model, tokens []int32, calls []int) [][]float32 {
	t.Helper()
	c, err := m.NewContext(CompareOptions(256, 64, 2))
	require.NoError(t, err)
	defer c.Free()
	out, err := c.Evaluate(tokens, 0, calls)
	require.NoError(t, err)
	return out
}

func TestGeneratedModels(t *testing.T) {
	l := ForTest(t)
	tokens := make([]int32, 40)
	for i := range tokens {
		tokens[i] = int32((i*37 + 11) % 512)
	}
	for _, c := range []genmodel.Config{
		{Arch: "llama", Type: quant.F32},
		{Arch: "qwen2", Type: quant.F32},
		{Arch: "llama", Type: quant.Q4_K, Tied: true},
		{Arch: "qwen2", Type: quant.Q8_0},
	} {
		m, err := l.LoadModel(genModel(t, c))
		require.NoError(t, err, "%s %s", c.Arch, c.Type)
		require.Equal(t, 512, m.NVocab())
		require.Equal(t, 256, m.NEmbd())
		require.Equal(t, 256, m.NCtxTrain())

		a := run(t, m, tokens, []int{16, 16, 8})
		require.Len(t, a, 40)
		distinct := 0
		for i, lg := range a {
			require.Len(t, lg, 512)
			for _, v := range lg {
				require.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0), "%s %s position %d", c.Arch, c.Type, i)
			}
			if i > 0 && lg[0] != a[i-1][0] {
				distinct++
			}
		}
		require.Greater(t, distinct, 30, "logits depend on the position and token")
		// Bit-identical on a second run; the same within rounding when
		// the prompt goes in one call instead of three.
		require.Equal(t, a, run(t, m, tokens, []int{16, 16, 8}), "%s %s", c.Arch, c.Type)
		b := run(t, m, tokens, []int{40})
		var num, den float64
		for i := range a {
			for j := range a[i] {
				d := float64(a[i][j] - b[i][j])
				num += d * d
				den += float64(a[i][j]) * float64(a[i][j])
			}
		}
		require.Less(t, num/den, 1e-10, "%s %s: NMSE between one call and three", c.Arch, c.Type)

		// Greedy generation follows the logits: each token is the argmax
		// of Evaluate's logits at the position before it.
		ctx, err := m.NewContext(CompareOptions(256, 64, 2))
		require.NoError(t, err)
		gen, err := ctx.Greedy(tokens[:5], 8)
		require.NoError(t, err)
		ctx.Free()
		require.Len(t, gen, 8)
		seq := append(append([]int32(nil), tokens[:5]...), gen...)
		all := run(t, m, seq, nil)
		for i, tok := range gen {
			lg := all[4+i]
			for j, v := range lg {
				require.True(t, v < lg[tok] || (v == lg[tok] && int32(j) >= tok), "token %d is not the argmax", i)
			}
		}
		m.Free()
	}
}

func TestContextSettings(t *testing.T) {
	l := ForTest(t)
	m, err := l.LoadModel(genModel(t, genmodel.Config{Arch: "llama", Type: quant.F32}))
	require.NoError(t, err)
	defer m.Free()
	c, err := m.NewContext(ContextOptions{NCtx: 512, NBatch: 64, Threads: 3, FlashAttn: FlashAttnDisabled})
	require.NoError(t, err)
	s := c.Settings()
	log := c.Log()
	c.Free()
	require.Equal(t, Settings{NCtx: 512, NBatch: 64, NUbatch: 64, Threads: 3, ThreadsBatch: 3}, s)
	require.Regexp(t, `flash_attn\s+= disabled`, log)
	require.Contains(t, log, "K (f32)")
	require.Contains(t, log, "V (f32)")

	c, err = m.NewContext(ContextOptions{NCtx: 256, NBatch: 8, FlashAttn: FlashAttnEnabled, TypeK: 1, TypeV: 1})
	require.NoError(t, err)
	log = c.Log()
	require.Contains(t, log, "K (f16)")
	require.Regexp(t, `flash_attn\s+= enabled`, log)
	require.Error(t, c.Decode(make([]int32, 9), 0, nil), "more than n_batch")
	require.Error(t, c.Decode([]int32{512}, 0, nil), "outside the vocabulary")
	require.NoError(t, c.Decode([]int32{1, 2, 3}, 0, []bool{false, false, true}))
	_, err = c.Logits(0)
	require.ErrorIs(t, err, ErrNoLogits)
	_, err = c.Logits(2)
	require.NoError(t, err)
	c.ClearMemory()
	require.NoError(t, c.Decode([]int32{1}, 0, nil))

	_, err = c.Evaluate([]int32{1, 2}, 0, []int{1})
	require.Error(t, err, "calls that do not cover the tokens")
	c.Free()

	_, err = l.LoadModel(filepath.Join(t.TempDir(), "missing.gguf"))
	require.ErrorIs(t, err, ErrLlama)
	bad := filepath.Join(t.TempDir(), "gpt2.gguf")
	require.NoError(t, os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00"+strings.Repeat("\x00", 16)), 0o644))
	_, err = l.LoadModel(bad)
	require.ErrorIs(t, err, ErrLlama)
}

// spmVocab is a minimal SentencePiece vocabulary: the three specials, the
// 256 byte tokens, and the pieces (with every prefix, SPM merges pairs
// only into tokens that exist) of "hello world".
func spmVocab() []gguf.KV {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{2, 3, 3}
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6)
	}
	for _, w := range []string{"\u2581hello", "\u2581world"} {
		r := []rune(w)
		for i := 1; i <= len(r); i++ {
			if p := string(r[:i]); !slices.Contains(tokens, p) {
				tokens = append(tokens, p)
				types = append(types, 1)
			}
		}
	}
	for _, ch := range "helowrd" {
		tokens = append(tokens, string(ch))
		types = append(types, 1)
	}
	scores := make([]float32, len(tokens))
	for i, tok := range tokens {
		scores[i] = float32(len([]rune(tok)))
	}
	return []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: gguf.ScalarValue("llama")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayValue(tokens)},
		{Key: "tokenizer.ggml.scores", Value: gguf.ArrayValue(scores)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.ArrayValue(types)},
		{Key: "tokenizer.ggml.unknown_token_id", Value: gguf.ScalarValue(uint32(0))},
		{Key: "tokenizer.ggml.bos_token_id", Value: gguf.ScalarValue(uint32(1))},
		{Key: "tokenizer.ggml.eos_token_id", Value: gguf.ScalarValue(uint32(2))},
		{Key: "tokenizer.ggml.add_bos_token", Value: gguf.ScalarValue(true)},
		{Key: "tokenizer.ggml.add_eos_token", Value: gguf.ScalarValue(false)},
	}
}

func TestTokenize(t *testing.T) {
	l := ForTest(t)
	kvs := spmVocab()
	tokens, _ := gguf.ArrayAs[string](kvs[1].Value)
	id := func(s string) int32 { return int32(slices.Index(tokens, s)) }
	m, err := l.LoadModel(genModel(t, genmodel.Config{Arch: "llama", Type: quant.F32, VocabSize: len(tokens), KVs: kvs}))
	require.NoError(t, err)
	defer m.Free()
	require.Equal(t, len(tokens), m.NVocab())
	require.EqualValues(t, 1, m.BOS())
	require.EqualValues(t, 2, m.EOS())

	got, err := m.Tokenize("hello world", true, false)
	require.NoError(t, err)
	require.Equal(t, []int32{1, id("\u2581hello"), id("\u2581world")}, got)
	got, err = m.Tokenize("hello world", false, false)
	require.NoError(t, err)
	require.Equal(t, []int32{id("\u2581hello"), id("\u2581world")}, got)
	// Bytes outside the pieces fall back to byte tokens.
	got, err = m.Tokenize("h\u00e9", false, false)
	require.NoError(t, err)
	require.Equal(t, []int32{id("\u2581h"), id("<0xC3>"), id("<0xA9>")}, got)
	// Special-token text is parsed only when asked.
	got, err = m.Tokenize("</s>", false, true)
	require.NoError(t, err)
	require.Equal(t, []int32{2}, got)
	long, err := m.Tokenize(strings.Repeat("hello ", 300)+"world", true, false)
	require.NoError(t, err)
	require.Len(t, long, 302)
	require.Equal(t, id("\u2581world"), long[301])

	p, err := m.TokenToPiece(id("\u2581hello"), 0, false)
	require.NoError(t, err)
	require.Equal(t, " hello", p)
	p, err = m.TokenToPiece(id("\u2581hello"), 1, false)
	require.NoError(t, err)
	require.Equal(t, "hello", p, "lstrip")
	p, err = m.TokenToPiece(id("<0x41>"), 0, false)
	require.NoError(t, err)
	require.Equal(t, "A", p)
	p, err = m.TokenToPiece(1, 0, false)
	require.NoError(t, err)
	require.Empty(t, p, "a control token without special")
	p, err = m.TokenToPiece(1, 0, true)
	require.NoError(t, err)
	require.Equal(t, "<s>", p)
}
