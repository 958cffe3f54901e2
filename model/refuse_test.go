package model_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// TestRefusesUnimplementedKeys: a file asking for a computation the
// runner does not implement is refused with the key's name, not run
// without it.
func TestRefusesUnimplementedKeys(t *testing.T) {
	for _, key := range []string{"llama.attn_logit_softcapping", "llama.final_logit_softcapping",
		"llama.attention.sliding_window_pattern", "llama.expert_count"} {
		c := genmodel.Config{Arch: "llama", Type: quant.F32, Embd: 64, Layers: 1, Heads: 2, KVHeads: 1, FF: 64, VocabSize: 50,
			KVs: []gguf.KV{{Key: key, Value: gguf.ScalarValue(uint32(8))}}}
		path := filepath.Join(t.TempDir(), "m.gguf")
		require.NoError(t, genmodel.WriteFile(path, c))
		_, err := model.Open(path, model.Options{})
		require.ErrorIs(t, err, model.ErrModel, key)
		require.ErrorContains(t, err, key)
	}
}
