package optest

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// known runs a one-output graph on the CPU with inputs in and returns the
// output as floats.
func known(t *testing.T, build func(c *graph.Context, in []*graph.Tensor) *graph.Tensor,
	inputs []*graph.Tensor, values [][]float32, c *graph.Context) []float32 {
	t.Helper()
	out := build(c, inputs)
	require.NoError(t, c.Err())
	for i, in := range inputs {
		require.NoError(t, SetFloats(in, values[i]))
	}
	g, err := c.Build(out)
	require.NoError(t, err)
	e := cpu.New(cpu.Options{Threads: 2})
	defer e.Close()
	require.NoError(t, e.Compute(g))
	v, err := Floats(out)
	require.NoError(t, err)
	return v
}

// TestElementwiseKnownValues checks results worked out by hand or observed
// from ggml 0.25.1 itself (its F16-table GELU, SWIGLU_CLAMP's clamping).
func TestElementwiseKnownValues(t *testing.T) {
	newCtx := func() *graph.Context { return graph.NewContext(graph.ContextOptions{Alloc: true}) }

	c := newCtx()
	v := known(t, func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Sub(in[0], in[1]) },
		[]*graph.Tensor{c.NewTensor(quant.F32, 4, 2), c.NewTensor(quant.F32, 2)},
		[][]float32{{1, 2, 3, 4, 5, 6, 7, 8}, {10, 20}}, c)
	require.Equal(t, []float32{-9, -18, -7, -16, -5, -14, -3, -12}, v, "src1 repeats along rows")

	c = newCtx()
	v = known(t, func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.GELU(in[0]) },
		[]*graph.Tensor{c.NewTensor(quant.F32, 6)}, [][]float32{{0.3, -0.7, 1.234567, 9.99, 10, -11}}, c)
	require.Equal(t, []float32{0.1854248, -0.1694336, 1.1005859, 9.9921875, 10, 0}, v, "ggml's GELU goes through an F16 table")

	c = newCtx()
	v = known(t, func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.GELUQuick(in[0]) },
		[]*graph.Tensor{c.NewTensor(quant.F32, 3)}, [][]float32{{0.3, -10, 11}}, c)
	require.Equal(t, []float32{0.1875, -4.172325e-07, 11}, v, "GELU_QUICK's table has no saturation")

	c = newCtx()
	v = known(t, func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.SwiGLUClamp(in[0], in[1], 1.5) },
		[]*graph.Tensor{c.NewTensor(quant.F32, 4), c.NewTensor(quant.F32, 4)},
		[][]float32{{-3, 0.5, 2, 3}, {0.5, 2, 7, -9}}, c)
	for i, want := range []float32{-0.07113881, 0.4668445, 1.8395424, -1.8395424} {
		require.InDelta(t, want, v[i], 1e-6)
	}

	c = newCtx()
	v = known(t, func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Clamp(in[0], -0.5, 0.5) },
		[]*graph.Tensor{c.NewTensor(quant.F32, 4)}, [][]float32{{float32(math.NaN()), -2, 0.25, 2}}, c)
	require.Equal(t, []float32{0.5, -0.5, 0.25, 0.5}, v, "ggml's MIN/MAX macros turn NaN into max")

	c = newCtx()
	v = known(t, func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Tri(in[0], ops.TriLower) },
		[]*graph.Tensor{c.NewTensor(quant.F32, 3, 3)}, [][]float32{{1, 2, 3, 4, 5, 6, 7, 8, 9}}, c)
	require.Equal(t, []float32{0, 0, 0, 4, 0, 0, 7, 8, 0}, v)

	c = newCtx()
	v = known(t, func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.ReGLUSwapped(in[0]) },
		[]*graph.Tensor{c.NewTensor(quant.F32, 5, 1)}, [][]float32{{2, 3, -1, 4, 100}}, c)
	require.Equal(t, []float32{0, 12}, v, "swapped: x is the second half, the odd element is ignored")

	c = newCtx()
	v = known(t, func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Add1(in[0], in[1]) },
		[]*graph.Tensor{c.NewTensor(quant.Q8_0, 32, 1, 1, 2), c.NewTensor(quant.F32, 1)},
		[][]float32{make([]float32, 64), {0.5}}, c)
	for _, x := range v {
		require.InDelta(t, 0.5, x, 1e-4, "requantized to Q8_0")
	}
}

// TestAddIDInitIsAPermutation checks the ids ADD_ID's cases are filled
// with: each row a shuffled 0..n_experts-1 pattern, so ids stay in range.
func TestAddIDInitIsAPermutation(t *testing.T) {
	c := addIDCase(quant.F32, quant.F32, 8, 4, 2, 3)
	ctx := graph.NewContext(graph.ContextOptions{Alloc: true})
	ids := ctx.NewTensor(quant.I32, 4, 3)
	require.True(t, c.Init(rand.New(rand.NewSource(1)), ids))
	v, err := Floats(ids)
	require.NoError(t, err)
	for r := 0; r < 3; r++ {
		seen := map[float32]bool{}
		for _, x := range v[r*4 : r*4+4] {
			seen[x] = true
		}
		require.Len(t, seen, 4)
	}
}
