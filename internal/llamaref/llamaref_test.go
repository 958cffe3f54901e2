package llamaref

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf/genmodel"
	"github.com/ggml-go/ggml/internal/ggmlref"
	"github.com/ggml-go/ggml/quant"
)

// lib returns libllama, skipping when it is not installed unless
// GGML_REF_REQUIRED=1 makes that a failure.
func lib(t *testing.T) *Lib {
	t.Helper()
	l, err := Default()
	if err != nil {
		if errors.Is(err, ErrNotAvailable) && os.Getenv(ggmlref.EnvRequired) != "1" {
			t.Skipf("libllama not available: %v", err)
		}
		require.NoError(t, err)
	}
	return l
}

func genModel(t *testing.T, c genmodel.Config) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), c.Arch+"-"+c.Type.String()+".gguf")
	require.NoError(t, genmodel.WriteFile(p, c))
	return p
}

// run decodes tokens in calls of the given sizes and returns every
// position's logits.
func run(t *testing.T, m *Model, tokens []int32, calls []int) [][]float32 {
	t.Helper()
	c, err := m.NewContext(CompareOptions(256, 64, 2))
	require.NoError(t, err)
	defer c.Free()
	var out [][]float32
	pos := 0
	for _, n := range calls {
		require.NoError(t, c.Decode(tokens[pos:pos+n], pos, nil))
		for i := range n {
			lg, err := c.Logits(i)
			require.NoError(t, err)
			out = append(out, lg)
		}
		pos += n
	}
	return out
}

func TestGeneratedModels(t *testing.T) {
	l := lib(t)
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
		m.Free()
	}
}

func TestContextSettings(t *testing.T) {
	l := lib(t)
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
	c.Free()

	_, err = l.LoadModel(filepath.Join(t.TempDir(), "missing.gguf"))
	require.ErrorIs(t, err, ErrLlama)
	bad := filepath.Join(t.TempDir(), "gpt2.gguf")
	require.NoError(t, os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00"+strings.Repeat("\x00", 16)), 0o644))
	_, err = l.LoadModel(bad)
	require.ErrorIs(t, err, ErrLlama)
}
