package openvino

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// ENABLE_FALLBACK: a piece of a model (a scheduler-style View of the
// graph, whose nodes are read past its end) compiles every time instead
// of being cached; the whole graph stays cached. Without the option the
// piece is cached too.
func TestEnableFallbackSplitGraphsUncached(t *testing.T) {
	p := buildDouble(t)
	for _, fallback := range []bool{true, false} {
		dev := openDevice(t, p, Options{EnableFallback: fallback})
		m := newLM(t, dev.BufferType(), dev.HostType(), 64)
		be := newBackend(dev)
		g, _ := m.step(t, prompt(8), 0)
		require.False(t, splitGraph(g), "the whole graph")
		piece, err := g.View(0, 12)
		require.NoError(t, err)
		require.True(t, splitGraph(piece), "a piece whose nodes are read after it")
		c0 := doubleStat(t, p, "compile.count")
		for range 2 {
			require.NoError(t, be.GraphCompute(piece))
			require.NoError(t, be.GraphCompute(g))
		}
		compiles := doubleStat(t, p, "compile.count") - c0
		if fallback {
			require.Equal(t, int64(3), compiles, "the piece twice, the whole graph once")
		} else {
			require.Equal(t, int64(2), compiles, "each once")
		}
		be.Close()
	}
}

// COMPILED_MODEL_CACHE_ONLY: a graph with no exported model is an error
// (nothing compiles); once another device exported it, it is imported.
func TestCompiledModelCacheOnly(t *testing.T) {
	p := buildDouble(t)
	dir := t.TempDir()
	only := openDevice(t, p, Options{CompiledModelCacheDir: dir, CompiledModelCacheOnly: true})
	be := newBackend(only)
	defer be.Close()
	g, _, _, y := addGraph(t, only, 8)
	c0 := doubleStat(t, p, "calls.ov_core_compile_model")
	err := be.GraphCompute(g)
	require.ErrorContains(t, err, "GGML_OPENVINO_COMPILED_MODEL_CACHE_ONLY: no compiled model")
	require.Equal(t, c0, doubleStat(t, p, "calls.ov_core_compile_model"), "nothing compiled")

	exp := openDevice(t, p, Options{CompiledModelCacheDir: dir})
	be2 := newBackend(exp)
	defer be2.Close()
	g2, _, _, y2 := addGraph(t, exp, 8)
	require.NoError(t, be2.GraphCompute(g2))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1)

	i0 := doubleStat(t, p, "import.count")
	require.NoError(t, be.GraphCompute(g))
	require.Equal(t, i0+1, doubleStat(t, p, "import.count"))
	require.Equal(t, getF32(t, y2), getF32(t, y))

	none := openDevice(t, p, Options{CompiledModelCacheOnly: true})
	be3 := newBackend(none)
	defer be3.Close()
	g3, _, _, _ := addGraph(t, none, 8)
	require.ErrorContains(t, be3.GraphCompute(g3), "needs GGML_OPENVINO_COMPILED_MODEL_CACHE_DIR")
}
