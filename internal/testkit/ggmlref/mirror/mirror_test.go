package mirror_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func executor(t *testing.T) *mirror.Executor { t.Helper(); return newExecutor(t, 2) }

func executor1(t *testing.T) *mirror.Executor { t.Helper(); return newExecutor(t, 1) }

func newExecutor(t *testing.T, threads int) *mirror.Executor {
	t.Helper()
	e, err := mirror.New(reftest.Lib(t), threads)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	return e
}

// set writes v into contiguous F32 tensor t.
func set(t *graph.Tensor, v ...float32) *graph.Tensor {
	for i, x := range v {
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(x))
	}
	return t
}

// get reads contiguous F32 tensor t.
func get(t *graph.Tensor) []float32 {
	out := make([]float32, t.NElements())
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return out
}

func seq(n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = scale * float32(i+1)
	}
	return v
}

func compute(t *testing.T, e *mirror.Executor, c *graph.Context, outs ...*graph.Tensor) {
	t.Helper()
	g, err := c.Build(outs...)
	require.NoError(t, err)
	require.NoError(t, e.Supports(g))
	require.NoError(t, e.Compute(g))
}

func TestBinaryBroadcast(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := set(c.NewTensor(quant.F32, 3, 2), 1, 2, 3, 4, 5, 6)
	b := set(c.NewTensor(quant.F32, 3, 1), 10, 20, 30)
	add, sub, mul, div := c.Add(a, b), c.Sub(a, b), c.Mul(a, b), c.Div(b, set(c.NewTensor(quant.F32, 1), 2))
	compute(t, e, c, add, sub, mul, div)
	require.Equal(t, []float32{11, 22, 33, 14, 25, 36}, get(add))
	require.Equal(t, []float32{-9, -18, -27, -6, -15, -24}, get(sub))
	require.Equal(t, []float32{10, 40, 90, 40, 100, 180}, get(mul))
	require.Equal(t, []float32{5, 10, 15}, get(div))
	require.Equal(t, []float32{1, 2, 3, 4, 5, 6}, get(a), "inputs unchanged")
}

// TestChain checks a node reading another node's result.
func TestChain(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := set(c.NewTensor(quant.F32, 4), 1, 2, 3, 4)
	b := set(c.NewTensor(quant.F32, 4), 4, 3, 2, 1)
	out := c.Mul(c.Add(a, b), a)
	compute(t, e, c, out)
	require.Equal(t, []float32{5, 10, 15, 20}, get(out))
}

func TestViewsAndLayouts(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	// a is 3 columns x 4 rows: a[r][k] = 10r + k.
	a := c.NewTensor(quant.F32, 3, 4)
	for r := range 4 {
		for k := range 3 {
			binary.LittleEndian.PutUint32(a.Data[4*(3*r+k):], math.Float32bits(float32(10*r+k)))
		}
	}
	// Rows 1 and 2, columns 1 and 2.
	v := c.View2D(a, 2, 2, a.Nb[1], a.Nb[1]+a.Nb[0])
	sub := c.Cont(v)
	tr := c.Cont(c.Transpose(a))
	p := c.Cont(c.Permute(c.Reshape(a, 3, 2, 2), 2, 0, 1, 3))
	dup := c.Dup(a)
	compute(t, e, c, sub, tr, p, dup)
	require.Equal(t, []float32{11, 12, 21, 22}, get(sub))
	require.Equal(t, []float32{0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32}, get(tr))
	require.Equal(t, [4]int64{2, 2, 3, 1}, p.Ne)
	// The reshape holds (k, j, s) = 10(j+2s) + k; Permute(2,0,1) moves it
	// to (j, s, k).
	require.Equal(t, []float32{0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32}, get(p))
	require.Equal(t, get(a), get(dup))
}

// TestCpyAndInplace checks that memory ggml writes through views (CPY into
// a leaf, an in-place ADD) comes back to the viewed tensor.
func TestCpyAndInplace(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := set(c.NewTensor(quant.F32, 4), 0.5, -1, 2, 65504)
	h := c.NewTensor(quant.F16, 2, 2)
	cp := c.Cpy(a, h)
	x := set(c.NewTensor(quant.F32, 3), 1, 2, 3)
	y := set(c.NewTensor(quant.F32, 3), 5, 5, 5)
	in := c.AddInplace(x, y)
	compute(t, e, c, cp, in)
	back, err := quant.Dequantize(quant.F16, h.Data, 4)
	require.NoError(t, err)
	require.Equal(t, []float32{0.5, -1, 2, 65504}, back)
	require.Equal(t, []float32{6, 7, 8}, get(x))
	require.Equal(t, []float32{6, 7, 8}, get(in))
}

// TestGraphView computes only the second node of a graph: the first is an
// input then, with the contents it has.
func TestGraphView(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := set(c.NewTensor(quant.F32, 2), 1, 2)
	s := c.Add(a, a)
	out := c.Mul(s, a)
	g, err := c.Build(out)
	require.NoError(t, err)
	set(s, 100, 200) // not what a+a would give
	v, err := g.View(1, 2)
	require.NoError(t, err)
	require.NoError(t, e.Compute(v))
	require.Equal(t, []float32{100, 400}, get(out))
	require.Equal(t, []float32{100, 200}, get(s))
}

func TestUnsupported(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := c.NewTensor(quant.F32, 32, 2)
	b := c.NewTensor(quant.Q4_0, 32, 3)
	// MUL_MAT wants src1 in F32 or src0's vec_dot type.
	mm := c.NewOp(ops.MulMat, quant.F32, [4]int64{2, 3, 1, 1}, ops.Params{}, a, b)
	c.SetName(mm, "mm")
	g, err := c.Build(mm)
	require.NoError(t, err)
	err = e.Supports(g)
	require.ErrorIs(t, err, mirror.ErrUnsupported)
	require.Contains(t, err.Error(), `"mm" MUL_MAT f32 [2 3 1 1] from src0 f32 [32 2 1 1], src1 q4_0 [32 3 1 1]`)
	require.ErrorIs(t, e.Compute(g), mirror.ErrUnsupported, "Compute refuses too, rather than let ggml abort")
}

func TestNotMirrorable(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{}) // no memory
	a := c.NewTensor(quant.F32, 4)
	out := c.Add(a, a)
	g, err := c.Build(out)
	require.NoError(t, err)
	require.NoError(t, e.Supports(g), "support needs no data")
	err = e.Compute(g)
	require.ErrorIs(t, err, mirror.ErrNotMirrorable)
	require.Contains(t, err.Error(), "has 0 bytes of Data, needs 16")

	out.Op = ops.OpCount
	require.ErrorIs(t, e.Supports(g), mirror.ErrNotMirrorable)
	require.ErrorIs(t, e.Compute(&graph.Graph{}), mirror.ErrNotMirrorable)
}

// TestLongName checks that names longer than ggml's field are cut, not overrun.
func TestLongName(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := set(c.NewTensor(quant.F32, 1), 3)
	a.Name = string(make([]byte, 200)) + "x"
	out := c.Add(a, a)
	compute(t, e, c, out)
	require.Equal(t, []float32{6}, get(out))
}

// TestGrowsContext computes a graph needing more than the first context.
func TestGrowsContext(t *testing.T) {
	e := executor(t)
	for _, n := range []int64{4, 1 << 19, 8} {
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		a := set(c.NewTensor(quant.F32, n), seq(int(n), 1)...)
		out := c.Add(a, a)
		compute(t, e, c, out)
		got := get(out)
		require.Equal(t, float32(2*n), got[n-1])
	}
}

func TestOpCountMatches(t *testing.T) {
	require.EqualValues(t, ops.OpCount, ggmlref.OpCount)
	require.EqualValues(t, graph.MaxSrc, ggmlref.MaxSrc)
	require.EqualValues(t, graph.MaxName+1, ggmlref.MaxName)
}

// TestComputeFlag checks that every node is computed, even one whose
// FlagCompute was cleared (ggml would skip it).
func TestComputeFlag(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := set(c.NewTensor(quant.F32, 2), 1, 2)
	out := c.Add(a, a)
	g, err := c.Build(out)
	require.NoError(t, err)
	out.Flags &^= graph.FlagCompute
	require.NoError(t, e.Compute(g))
	require.Equal(t, []float32{2, 4}, get(out))
}

// TestOpParamsAndIndices checks that op parameters and integer sources
// reach ggml: SCALE (scale and bias as float bits), UNARY NEG (the unary
// op in op_params[0]) and GET_ROWS (I32 row indices).
func TestOpParamsAndIndices(t *testing.T) {
	e := executor(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := set(c.NewTensor(quant.F32, 2, 3), 1, 2, 3, 4, 5, 6)
	var sp ops.Params
	sp.SetF32(0, 2)
	sp.SetF32(1, 0.5)
	scale := c.NewOp(ops.Scale, quant.F32, a.Ne, sp, a)
	var up ops.Params
	up.SetUnary(ops.UnaryNeg)
	neg := c.NewOp(ops.Unary, quant.F32, a.Ne, up, a)
	idx := c.NewTensor(quant.I32, 2)
	binary.LittleEndian.PutUint32(idx.Data, 2)
	binary.LittleEndian.PutUint32(idx.Data[4:], 0)
	rows := c.NewOp(ops.GetRows, quant.F32, [4]int64{2, 2, 1, 1}, ops.Params{}, a, idx)
	compute(t, e, c, scale, neg, rows)
	require.Equal(t, []float32{2.5, 4.5, 6.5, 8.5, 10.5, 12.5}, get(scale))
	require.Equal(t, []float32{-1, -2, -3, -4, -5, -6}, get(neg))
	require.Equal(t, []float32{5, 6, 1, 2}, get(rows))
}

// TestAbortIsAnError gives ggml a node its kernel asserts on (ADD of
// shapes that do not broadcast, made without the builder's check): the
// computation fails with ggml's message, and the executor goes on working.
// Only a one-thread executor can do this: an abort on one of ggml's own
// worker threads still ends the process.
func TestAbortIsAnError(t *testing.T) {
	e := executor1(t)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := c.NewTensor(quant.F32, 3, 2)
	bad := c.NewOp(ops.Add, quant.F32, a.Ne, ops.Params{}, a, c.NewTensor(quant.F32, 2))
	g, err := c.Build(bad)
	require.NoError(t, err)
	err = e.Compute(g)
	var ae *ggmlref.AbortError
	require.ErrorAs(t, err, &ae)
	require.Contains(t, err.Error(), "GGML_ASSERT")
	require.Contains(t, err.Error(), `(computing "node_0" ADD f32 [3 2 1 1] from src0 f32 [3 2 1 1], src1 f32 [2 1 1 1])`)

	c = graph.NewContext(graph.ContextOptions{Alloc: true})
	x := set(c.NewTensor(quant.F32, 2), 1, 2)
	out := c.Add(x, x)
	compute(t, e, c, out)
	require.Equal(t, []float32{2, 4}, get(out))
}

// TestLoadedComputesRepeatedly checks the benchmarks' path: a graph loaded
// once computes many times with ggml's default and persistent thread
// pools, reads back what Compute gives, and is refused once the executor
// has loaded another graph.
func TestLoadedComputesRepeatedly(t *testing.T) {
	for _, pool := range []ggmlref.Threadpool{ggmlref.DefaultPool, ggmlref.PersistentPool} {
		t.Run(pool.String(), func(t *testing.T) {
			e, err := mirror.NewPool(reftest.Lib(t), 2, pool)
			require.NoError(t, err)
			defer e.Close()
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			a := set(c.NewTensor(quant.F32, 8, 3), seq(24, 0.5)...)
			out := c.Add(c.Mul(a, a), a)
			g, err := c.Build(out)
			require.NoError(t, err)
			l, err := e.Load(g)
			require.NoError(t, err)
			for range 3 {
				require.NoError(t, l.Compute())
			}
			l.Read()
			want := make([]float32, 24)
			for i, v := range seq(24, 0.5) {
				want[i] = v*v + v
			}
			require.Equal(t, want, get(out))

			other, err := c.Build(c.Sqr(a))
			require.NoError(t, err)
			_, err = e.Load(other)
			require.NoError(t, err)
			require.Error(t, l.Compute())
		})
	}
}
