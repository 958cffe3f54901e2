package hexagon

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

// TestNodeCache: a graph computed again reuses its built ops (and gives
// the right result with new inputs); a graph changed in place - an op's
// parameter, a source - or another graph is built afresh, never served
// from the cache.
func TestNodeCache(t *testing.T) {
	d := hexdouble.Open(t, hexdouble.Full)
	r, devs := openRegistry(t, testOptions(d))
	dev := devs[0].(*device)
	b, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	ctx := graph.NewContext(graph.ContextOptions{})
	x := ctx.NewTensor(quant.F32, 256)
	z := ctx.NewTensor(quant.F32, 256)
	w := ctx.NewTensor(quant.F32, 256)
	y := ctx.Scale(x, 2)
	out := ctx.Add(y, z)
	g, err := ctx.Build(out)
	require.NoError(t, err)
	buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	defer buf.Free()
	rng := rand.New(rand.NewPCG(41, 42))
	c := &dev.s.cache
	run := func(g *graph.Graph, scale float32, add *graph.Tensor) {
		t.Helper()
		xs, zs, ws := randF32(rng, 256), randF32(rng, 256), randF32(rng, 256)
		require.NoError(t, backend.SetFloat32(nil, x, xs))
		require.NoError(t, backend.SetFloat32(nil, z, zs))
		require.NoError(t, backend.SetFloat32(nil, w, ws))
		require.NoError(t, backend.Compute(b, g))
		got, err := backend.GetFloat32(nil, g.Nodes[len(g.Nodes)-1])
		require.NoError(t, err)
		second := zs
		if add == w {
			second = ws
		}
		for i := range got {
			require.InDelta(t, scale*xs[i]+second[i], got[i], 1e-5)
		}
	}
	run(g, 2, z)
	require.Equal(t, [2]int{0, 1}, [2]int{c.hits, c.misses})
	run(g, 2, z)
	require.Equal(t, [2]int{1, 1}, [2]int{c.hits, c.misses}, "the same graph again: served from the cache")

	y.Params.SetF32(0, 3) // the scale changed in place
	run(g, 3, z)
	require.Equal(t, [2]int{1, 2}, [2]int{c.hits, c.misses}, "a changed parameter rebuilds")
	run(g, 3, z)
	require.Equal(t, 2, c.hits)

	out.Src[1] = w // another source
	run(g, 3, w)
	require.Equal(t, 3, c.misses, "a changed source rebuilds")

	g2, err := ctx.Build(out)
	require.NoError(t, err)
	run(g2, 3, w)
	require.Equal(t, 4, c.misses, "another graph replaces the cache")
	run(g, 3, w)
	require.Equal(t, 5, c.misses, "and the first one is gone")
	require.NoError(t, b.Close())
	require.NoError(t, r.Close())
	require.Empty(t, d.Violations())
}
