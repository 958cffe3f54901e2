package openvino

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
)

// The model runner's graphs of every batch shape - prompts of 6, 11 and
// 250 tokens, each followed by 20 single tokens, so that n_kv crosses 256
// cells - compile one model on the dynamic path (one per shape without
// it), and the logits are those of one model per shape and of our CPU
// device.
// Verified on the double and, with GGML_OPENVINO_LIB, on the real CPU
// plugin. The second model, a 16-token prompt in one batch, has the
// decode step's graph keep the last layer's products live where the
// prompt's graph reused their memory (TestOpenVINORealRSS's shape, which
// compiled a second model for the step before member accepted that).
func TestDynamicOneModel(t *testing.T) {
	p := buildDouble(t)
	wide := genmodel.Default()
	wide.Embd, wide.Heads, wide.KVHeads, wide.FF = 512, 8, 4, 1024
	long := make([]int32, 250)
	for i := range long {
		long[i] = int32(1 + i*7%30)
	}
	for _, c := range []struct {
		name    string
		cfg     genmodel.Config
		prompts [][]int32
	}{
		{"default", genmodel.Default(), [][]int32{{1, 5, 9, 12, 3, 8}, {4, 2, 7, 7, 1, 9, 30, 6, 5, 2, 3}, long}},
		{"wide", wide, [][]int32{{1, 5, 9, 12, 3, 8, 4, 2, 7, 7, 1, 9, 30, 6, 5, 2}}},
	} {
		t.Run(c.name, func(t *testing.T) { dynamicOneModel(t, p, c.cfg, c.prompts) })
	}
}

func dynamicOneModel(t *testing.T, p string, cfg genmodel.Config, prompts [][]int32) {
	path := filepath.Join(t.TempDir(), "model.gguf")
	require.NoError(t, genmodel.WriteFile(path, cfg))
	run := func(dev *device) ([][]float32, int) {
		opts := model.Options{Threads: 1}
		if dev != nil {
			opts.Device = dev
		}
		s := lmSession(t, path, opts)
		var out [][]float32
		for _, prompt := range prompts {
			s.Reset()
			lg, err := s.Decode(context.Background(), prompt, nil)
			require.NoError(t, err)
			out = append(out, lg[len(lg)-1])
			for i := range 20 {
				lg, err := s.Decode(context.Background(), []int32{int32(3 + i%20)}, nil)
				require.NoError(t, err)
				out = append(out, lg[len(lg)-1])
			}
		}
		if dev == nil {
			return out, 0
		}
		return out, dev.CacheStats().Misses
	}
	cpu, _ := run(nil)
	dyn, dynMisses := run(openDevice(t, p, Options{DynamicShapes: true}))
	st, stMisses := run(openDevice(t, p, Options{}))
	require.Equal(t, 1, dynMisses, "one model for every batch shape")
	require.Greater(t, stMisses, 1, "one model per shape without the dynamic path")
	for i := range dyn {
		require.Less(t, nmse(dyn[i], st[i]), 1e-10, "step %d: dynamic against one model per shape", i)
		require.Less(t, nmse(dyn[i], cpu[i]), 1e-6, "step %d: dynamic against the CPU device", i)
	}
	t.Logf("%d steps; compiles: %d dynamic, %d per shape", len(dyn), dynMisses, stMisses)
}

// lmSession is a session of 512 cells in batches of 16 over the model file
// at path opened with opts, the session and the model closed when the
// test ends. A one-token step then attends to fewer cells than the cache
// has (256, the runner's padding, until position 256): one attending to
// the whole cache is not one the dynamic path recognizes (its KV axis is
// the cache's own extent), and takes a model per shape.
func lmSession(t *testing.T, path string, opts model.Options) *model.Session {
	t.Helper()
	m, err := model.Open(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	s, err := m.NewSession(model.SessionOptions{Ctx: 512, Batch: 16})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}
