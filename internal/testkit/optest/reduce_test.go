package optest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// reduceEval builds out from a context with host memory, sets the named
// inputs and computes it on the CPU with 2 threads.
func reduceEval(t *testing.T, build func(c *graph.Context) (*graph.Tensor, map[*graph.Tensor][]float32)) []float32 {
	t.Helper()
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	out, inputs := build(c)
	require.NoError(t, c.Err())
	for in, v := range inputs {
		require.NoError(t, SetFloats(in, v))
	}
	g, err := c.Build(out)
	require.NoError(t, err)
	e := cpu.New(cpu.Options{Threads: 2})
	defer e.Close()
	require.NoError(t, e.Compute(g))
	got, err := Floats(out)
	require.NoError(t, err)
	return got
}

// reduceOne is reduceEval for an op of one F32 input of shape ne.
func reduceOne(t *testing.T, x []float32, ne []int64, op func(c *graph.Context, a *graph.Tensor) *graph.Tensor) []float32 {
	t.Helper()
	return reduceEval(t, func(c *graph.Context) (*graph.Tensor, map[*graph.Tensor][]float32) {
		a := c.NewTensor(quant.F32, ne...)
		return op(c, a), map[*graph.Tensor][]float32{a: x}
	})
}

func TestReduceHandComputed(t *testing.T) {
	x := []float32{1, 2, 3, 4, -2, 6}
	near := func(want []float64, got []float32) {
		t.Helper()
		require.Len(t, got, len(want))
		for i := range want {
			assert.InDelta(t, want[i], float64(got[i]), 1e-6*max(1, math.Abs(want[i])), "element %d", i)
		}
	}

	near([]float64{14}, reduceOne(t, x, []int64{3, 2}, (*graph.Context).Sum))
	near([]float64{6, 8}, reduceOne(t, x, []int64{3, 2}, (*graph.Context).SumRows))
	near([]float64{2, 8.0 / 3}, reduceOne(t, x, []int64{3, 2}, (*graph.Context).Mean))
	near([]float64{1, 3, 6, 4, 2, 8}, reduceOne(t, x, []int64{3, 2}, (*graph.Context).Cumsum))
	// Ties go to the last maximum, as in ggml.
	near([]float64{2, 2}, reduceOne(t, []float32{5, 1, 5, 0, 9, 9}, []int64{3, 2}, (*graph.Context).Argmax))
	// Stable: equal values keep their index order.
	near([]float64{1, 0, 2, 3}, reduceOne(t, []float32{2, 1, 2, 3}, []int64{4},
		func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.Argsort(a, ops.SortAsc) }))
	near([]float64{3, 0, 2, 1}, reduceOne(t, []float32{2, 1, 2, 3}, []int64{4},
		func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.Argsort(a, ops.SortDesc) }))
	near([]float64{3, 0, 1, 2}, reduceOne(t, []float32{2, 1, 0, 3, 0, 7, 5, 1}, []int64{4, 2},
		func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.TopK(a, 2) }))

	s := 1 / math.Sqrt(1.25)
	near([]float64{-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s}, reduceOne(t, []float32{1, 2, 3, 4}, []int64{4},
		func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.Norm(a, 0) }))
	r := 1 / math.Sqrt(12.5+0.5)
	near([]float64{3 * r, 4 * r}, reduceOne(t, []float32{3, 4}, []int64{2},
		func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.RMSNorm(a, 0.5) }))
	near([]float64{0.6, 0.8}, reduceOne(t, []float32{3, 4}, []int64{2},
		func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.L2Norm(a, 1e-6) }))
	// eps floors the norm 5.
	near([]float64{0.3, 0.4}, reduceOne(t, []float32{3, 4}, []int64{2},
		func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.L2Norm(a, 10) }))
}

// TestReduceGroupNormHand checks GROUP_NORM against a float64 computation:
// 5 channels in 2 groups of 3 and 2 channels, 2 samples.
func TestReduceGroupNormHand(t *testing.T) {
	ne := [4]int64{2, 3, 5, 2}
	x := make([]float32, ne[0]*ne[1]*ne[2]*ne[3])
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.7)) * float32(1+i%5)
	}
	got := reduceOne(t, x, ne[:], func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.GroupNorm(a, 2, 1e-3) })
	per := ne[0] * ne[1] // elements per channel
	for i3 := range ne[3] {
		for _, g := range [][2]int64{{0, 3}, {3, 5}} {
			lo, hi := (i3*ne[2]+g[0])*per, (i3*ne[2]+g[1])*per
			var mean, variance float64
			for _, v := range x[lo:hi] {
				mean += float64(v)
			}
			mean /= float64(hi - lo)
			for _, v := range x[lo:hi] {
				variance += (float64(v) - mean) * (float64(v) - mean)
			}
			variance /= float64(hi - lo)
			for i := lo; i < hi; i++ {
				want := (float64(x[i]) - mean) / math.Sqrt(variance+1e-3)
				assert.InDelta(t, want, float64(got[i]), 1e-5, "element %d", i)
			}
		}
	}
}

// TestReduceSoftMaxHand checks SOFT_MAX with scale, an F16 mask broadcast
// over heads, ALiBi slopes and sinks against a float64 computation.
func TestReduceSoftMaxHand(t *testing.T) {
	const n, rows, heads = 5, 2, 3
	const scale, maxBias = 0.5, 8
	x := make([]float32, n*rows*heads)
	for i := range x {
		x[i] = float32(math.Cos(float64(i) * 1.3))
	}
	mask := make([]float32, n*rows)
	for i := range mask {
		mask[i] = float32(i%3) - 1
	}
	mask[n-1] = float32(math.Inf(-1))
	sinks := []float32{0.5, -1, 2}
	// Three heads: 2 below the power of two (m0 = 2^-4), one above (m1 = 2^-2).
	slopes := []float64{1.0 / 16, 1.0 / 256, 1.0 / 4}
	got := reduceEval(t, func(c *graph.Context) (*graph.Tensor, map[*graph.Tensor][]float32) {
		a := c.NewTensor(quant.F32, n, rows, heads)
		m := c.NewTensor(quant.F16, n, rows)
		s := c.NewTensor(quant.F32, heads)
		out := c.SoftMaxAddSinks(c.SoftMaxExt(a, m, scale, maxBias), s)
		return out, map[*graph.Tensor][]float32{a: x, m: mask, s: sinks}
	})
	for h := range heads {
		for r := range rows {
			logits := make([]float64, n)
			hi := float64(sinks[h])
			for i := range n {
				logits[i] = float64(x[(h*rows+r)*n+i])*scale + slopes[h]*float64(mask[r*n+i])
				hi = max(hi, logits[i])
			}
			sum := math.Exp(float64(sinks[h]) - hi)
			for _, l := range logits {
				sum += math.Exp(l - hi)
			}
			for i, l := range logits {
				assert.InDelta(t, math.Exp(l-hi)/sum, float64(got[(h*rows+r)*n+i]), 1e-6, "head %d row %d col %d", h, r, i)
			}
		}
	}
}

// TestReduceBuilders checks the builders' results (type, shape, op
// parameters, sources, views) and that every check ggml asserts becomes
// an error on the Context, never a panic.
func TestReduceBuilders(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{})
	a := c.NewTensor(quant.F32, 10, 5, 4, 3)
	m := c.NewTensor(quant.F16, 10, 6, 2, 1)

	check := func(r *graph.Tensor, op ops.Op, typ quant.Type, ne ...int64) {
		t.Helper()
		require.NoError(t, c.Err())
		require.NotNil(t, r)
		assert.Equal(t, op, r.Op)
		assert.Equal(t, typ, r.Type)
		want := [4]int64{1, 1, 1, 1}
		copy(want[:], ne)
		assert.Equal(t, want, r.Ne)
		assert.Same(t, a, r.Src[0])
	}
	check(c.Sum(a), ops.Sum, quant.F32, 1)
	check(c.SumRows(a), ops.SumRows, quant.F32, 1, 5, 4, 3)
	check(c.Mean(a), ops.Mean, quant.F32, 1, 5, 4, 3)
	check(c.Cumsum(a), ops.Cumsum, quant.F32, 10, 5, 4, 3)
	check(c.Argsort(a, ops.SortDesc), ops.Argsort, quant.I32, 10, 5, 4, 3)
	check(c.TopK(a, 3), ops.TopK, quant.I32, 3, 5, 4, 3)
	n := c.RMSNorm(a, 1e-5)
	check(n, ops.RMSNorm, quant.F32, 10, 5, 4, 3)
	assert.Equal(t, float32(1e-5), ops.NormParamsOf(n.Params).Eps)
	gn := c.GroupNormInplace(a, 2, 1e-6)
	check(gn, ops.GroupNorm, quant.F32, 10, 5, 4, 3)
	assert.Same(t, a, gn.ViewSrc, "in place is a view of the input")
	assert.Equal(t, ops.GroupNormParams{Groups: 2, Eps: 1e-6}, ops.GroupNormParamsOf(gn.Params))
	sm := c.SoftMaxExt(a, m, 0.25, 8)
	check(sm, ops.SoftMax, quant.F32, 10, 5, 4, 3)
	assert.Same(t, m, sm.Src[1])
	assert.Equal(t, ops.SoftMaxParams{Scale: 0.25, MaxBias: 8}, ops.SoftMaxParamsOf(sm.Params))
	sinks := c.NewTensor(quant.F32, 4)
	assert.Same(t, sm, c.SoftMaxAddSinks(sm, sinks))
	assert.Same(t, sinks, sm.Src[2])
	tk := c.ArgsortTopK(a, 4)
	require.NoError(t, c.Err())
	assert.Equal(t, ops.View, tk.Op)
	assert.Equal(t, [4]int64{4, 5, 4, 3}, tk.Ne)
	assert.Equal(t, ops.Argsort, tk.Src[0].Op)
	assert.Equal(t, ops.SortDesc, ops.ArgsortParamsOf(tk.Src[0].Params).Order)
	am := c.Argmax(c.NewTensor(quant.F32, 7, 9))
	require.NoError(t, c.Err())
	assert.Equal(t, [4]int64{9, 1, 1, 1}, am.Ne)
	assert.Equal(t, quant.I32, am.Type)

	bad := []struct {
		name  string
		kind  error
		build func(c *graph.Context) *graph.Tensor
	}{
		{"nil input", graph.ErrNil, func(c *graph.Context) *graph.Tensor { return c.Norm(nil, 0) }},
		{"cumsum of f16", graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.Cumsum(c.NewTensor(quant.F16, 4, 2))
		}},
		{"argmax of 3-d", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.Argmax(c.NewTensor(quant.F32, 4, 2, 2))
		}},
		{"sum of a quantized type", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.Sum(c.NewTensor(quant.Q4_0, 32, 2))
		}},
		{"top_k beyond the row", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.TopK(c.NewTensor(quant.F32, 4, 2), 5)
		}},
		{"argsort_top_k beyond the row", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.ArgsortTopK(c.NewTensor(quant.F32, 4, 2), 5)
		}},
		{"soft_max of a transposed input", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SoftMax(c.Transpose(c.NewTensor(quant.F32, 4, 2)))
		}},
		{"soft_max mask of i32", graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.SoftMaxExt(c.NewTensor(quant.F32, 4, 2), c.NewTensor(quant.I32, 4, 2), 1, 0)
		}},
		{"soft_max mask row length", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SoftMaxExt(c.NewTensor(quant.F32, 4, 2), c.NewTensor(quant.F32, 5, 2), 1, 0)
		}},
		{"soft_max mask too few rows", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SoftMaxExt(c.NewTensor(quant.F32, 4, 3), c.NewTensor(quant.F32, 4, 2), 1, 0)
		}},
		{"soft_max mask does not broadcast", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SoftMaxExt(c.NewTensor(quant.F32, 4, 2, 3), c.NewTensor(quant.F32, 4, 2, 2), 1, 0)
		}},
		{"soft_max mask not contiguous", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SoftMaxExt(c.NewTensor(quant.F32, 4, 4), c.Transpose(c.NewTensor(quant.F32, 4, 4)), 1, 0)
		}},
		{"alibi without mask", graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			return c.SoftMaxExt(c.NewTensor(quant.F32, 4, 2), nil, 1, 8)
		}},
		{"sinks on another op", graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			return c.SoftMaxAddSinks(c.Norm(c.NewTensor(quant.F32, 4, 2, 3), 0), c.NewTensor(quant.F32, 3))
		}},
		{"sinks twice", graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			s := c.NewTensor(quant.F32, 3)
			return c.SoftMaxAddSinks(c.SoftMaxAddSinks(c.SoftMax(c.NewTensor(quant.F32, 4, 2, 3)), s), s)
		}},
		{"sinks per head", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SoftMaxAddSinks(c.SoftMax(c.NewTensor(quant.F32, 4, 2, 3)), c.NewTensor(quant.F32, 2))
		}},
		{"sinks of f16", graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.SoftMaxAddSinks(c.SoftMax(c.NewTensor(quant.F32, 4, 2, 3)), c.NewTensor(quant.F16, 3))
		}},
	}
	for _, b := range bad {
		c := graph.NewContext(graph.ContextOptions{})
		var r *graph.Tensor
		require.NotPanics(t, func() { r = b.build(c) }, b.name)
		assert.Nil(t, r, b.name)
		assert.ErrorIs(t, c.Err(), b.kind, b.name)
	}
}
