package cpu

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func mmSetF32s(t *graph.Tensor, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(x))
	}
}

func mmF32s(t *graph.Tensor) []float32 {
	v := make([]float32, len(t.Data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v
}

func mmRandF32s(rng *rand.Rand, n int64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 2*rng.Float32() - 1
	}
	return v
}

func mmCompute(t *testing.T, threads int, outs ...*graph.Tensor) {
	t.Helper()
	e := New(Options{Threads: threads})
	defer e.Close()
	for _, o := range outs {
		require.True(t, SupportsOp(o), "%s", describe(o))
		require.NoError(t, e.ComputeNode(o))
	}
}

// TestFWHTIsHadamardProduct: the hinted MUL_MAT (a transform that never
// reads src0) equals the plain product with the scaled Hadamard matrix.
func TestFWHTIsHadamardProduct(t *testing.T) {
	const n = 64
	rng := rand.New(rand.NewSource(1))
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	h := c.NewTensor(quant.F32, n, n)
	x := c.NewTensor(quant.F32, n, 3, 2)
	fast, plain := c.MulMat(h, x), c.MulMat(h, x)
	c.MulMatSetHint(fast, ops.HintSrc0IsHadamard)
	require.NoError(t, c.Err())
	hv := make([]float32, n*n)
	for j := range hv {
		hv[j] = 1 / float32(math.Sqrt(n))
		if bits.OnesCount(uint(j/n&(j%n)))%2 != 0 {
			hv[j] = -hv[j]
		}
	}
	mmSetF32s(h, hv)
	mmSetF32s(x, mmRandF32s(rng, x.NElements()))
	mmCompute(t, 3, fast, plain)
	require.InDeltaSlice(t, mmF32s(plain), mmF32s(fast), 1e-5)

	// The transform needs a power-of-two length and a square src0.
	c = graph.NewContext(graph.ContextOptions{})
	odd := c.MulMat(c.NewTensor(quant.F32, 48, 48), c.NewTensor(quant.F32, 48, 2))
	wide := c.MulMat(c.NewTensor(quant.F32, 64, 32), c.NewTensor(quant.F32, 64, 2))
	c.MulMatSetHint(odd, ops.HintSrc0IsHadamard)
	c.MulMatSetHint(wide, ops.HintSrc0IsHadamard)
	require.NoError(t, c.Err())
	require.False(t, SupportsOp(odd))
	require.False(t, SupportsOp(wide))
}

// TestMulMatNonFinite: a row of activations the quantized vec_dot type
// cannot hold makes its column NaN and leaves the others alone.
func TestMulMatNonFinite(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := c.NewTensor(quant.Q8_0, 64, 5)
	b := c.NewTensor(quant.F32, 64, 3)
	out := c.MulMat(a, b)
	require.NoError(t, c.Err())
	_, err := quant.QuantizeInto(a.Data, quant.Q8_0, mmRandF32s(rng, a.NElements()), 5, 64, nil)
	require.NoError(t, err)
	bv := mmRandF32s(rng, b.NElements())
	bv[64+7] = float32(math.Inf(1))
	mmSetF32s(b, bv)
	mmCompute(t, 2, out)
	for i, v := range mmF32s(out) {
		require.Equal(t, i/5 == 1, math.IsNaN(float64(v)), "element %d = %v", i, v)
	}
}

// TestMulMatIDBadExpert: an expert id outside the experts gives a NaN
// column instead of reading out of bounds.
func TestMulMatIDBadExpert(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	as := c.NewTensor(quant.F32, 32, 4, 3)
	b := c.NewTensor(quant.F32, 32, 1, 2)
	ids := c.NewTensor(quant.I32, 2, 2)
	out := c.MulMatID(as, b, ids)
	require.NoError(t, c.Err())
	mmSetF32s(as, mmRandF32s(rng, as.NElements()))
	mmSetF32s(b, mmRandF32s(rng, b.NElements()))
	for i, id := range []int32{0, 3, -1, 2} {
		binary.LittleEndian.PutUint32(ids.Data[4*i:], uint32(id))
	}
	mmCompute(t, 3, out)
	for i, v := range mmF32s(out) {
		col := i / 4
		require.Equal(t, col == 1 || col == 2, math.IsNaN(float64(v)), "element %d = %v", i, v)
	}
}

// TestMatmulSupports: layouts and types ggml's kernels assert against, or
// have no kernel for, are refused.
func TestMatmulSupports(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{})
	f32 := func(ne ...int64) *graph.Tensor { return c.NewTensor(quant.F32, ne...) }
	// src1 with strided elements: a permutation that moves dimension 0.
	strided := c.MulMat(f32(8, 4), c.Permute(f32(3, 8), 1, 0, 2, 3))
	// src1 in F16 with F32 or quantized src0: neither F32 nor the vec_dot type.
	f16 := c.MulMat(f32(32, 4), c.NewTensor(quant.F16, 32, 2))
	qf16 := c.MulMat(c.NewTensor(quant.Q4_0, 32, 4), c.NewTensor(quant.F16, 32, 2))
	// src0 types without a vec_dot.
	q81 := c.MulMat(c.NewTensor(quant.Q8_1, 32, 4), f32(32, 2))
	i32 := c.MulMat(c.NewTensor(quant.I32, 32, 4), f32(32, 2))
	// src1 in the vec_dot type is fine.
	q80 := c.MulMat(c.NewTensor(quant.Q4_0, 32, 4), c.NewTensor(quant.Q8_0, 32, 2))
	id16 := c.MulMatID(c.NewTensor(quant.F32, 8, 4, 3), c.NewTensor(quant.F16, 8, 2, 5), c.NewTensor(quant.I32, 2, 5))
	opF16b := c.OutProd(f32(6, 9), c.NewTensor(quant.F16, 5, 9))
	opBF16 := c.OutProd(c.NewTensor(quant.BF16, 6, 9), f32(5, 9))
	opQBcast := c.OutProd(c.NewTensor(quant.Q4_0, 32, 9, 1), f32(5, 9, 2))
	opQ := c.OutProd(c.NewTensor(quant.Q4_0, 32, 9, 2), c.Transpose(f32(9, 5, 2)))
	require.NoError(t, c.Err())
	for _, n := range []*graph.Tensor{strided, f16, qf16, q81, i32, id16, opF16b, opBF16, opQBcast} {
		require.False(t, SupportsOp(n), "%s", describe(n))
	}
	for _, n := range []*graph.Tensor{q80, opQ} {
		require.True(t, SupportsOp(n), "%s", describe(n))
	}
	// A permuted result (set by hand: the builder makes dense ones).
	perm := c.MulMat(f32(8, 4), f32(8, 2))
	perm.Nb[1], perm.Nb[2] = perm.Nb[2], perm.Nb[1]
	require.False(t, SupportsOp(perm))
}
