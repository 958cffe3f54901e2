package cpu

import (
	"encoding/binary"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func setF32s(t *graph.Tensor, v ...float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(x))
	}
}

func f32s(t *graph.Tensor) []float32 {
	out := make([]float32, len(t.Data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return out
}

func newEngine(t *testing.T, threads int) *Engine {
	e := New(Options{Threads: threads})
	t.Cleanup(e.Close)
	return e
}

func TestEngineThreads(t *testing.T) {
	require.Equal(t, runtime.GOMAXPROCS(0), newEngine(t, 0).Threads())
	require.Equal(t, runtime.GOMAXPROCS(0), newEngine(t, -3).Threads())
	require.Equal(t, 3, newEngine(t, 3).Threads())
}

// TestLayoutOpsSupported: views, reshapes, permutes, transposes and plain
// tensors are always supported (ggml's CPU backend says so before looking
// at types), and computing them is a no-op on the shared memory.
func TestLayoutOpsSupported(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	for _, typ := range []quant.Type{quant.F32, quant.Q4_K, quant.I8} {
		bs := int64(typ.BlockSize())
		a := c.NewTensor(typ, 2*bs, 3, 2)
		for _, v := range []*graph.Tensor{
			a,
			c.ViewTensor(a),
			c.View1D(a, bs, 0),
			c.View2D(a, bs, 2, a.Nb[1], a.Nb[1]),
			c.Reshape(a, 2*bs, 6),
			c.Permute(a, 2, 0, 1, 3),
			c.Transpose(a),
			c.Transpose(c.Transpose(a)),
		} {
			require.NoError(t, c.Err())
			require.True(t, SupportsOp(v), "%s", v)
		}
	}
	g, err := c.Build(c.Tensors()...)
	require.NoError(t, err)
	require.NotEmpty(t, g.Nodes)
	require.NoError(t, newEngine(t, 2).Compute(g))
}

// TestComputeThroughViews: a binary op reading a view with gaps between its
// rows and writing into a view of another tensor.
func TestComputeThroughViews(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := c.NewTensor(quant.F32, 3, 4)
	b := c.NewTensor(quant.F32, 3, 2)
	out := c.NewTensor(quant.F32, 8)
	setF32s(a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	setF32s(b, 10, 20, 30, 40, 50, 60)
	rows := c.View2D(a, 3, 2, 24, 12) // rows 1 and 3 of a
	sum := c.Add(rows, b)
	dst := c.Cpy(sum, c.View1D(out, 6, 8))                                  // into out[2:8]
	dup := c.Dup(c.View1D(out, 8, 0))                                       // a copy of out
	res := c.AddInplace(c.Reshape(dup, 4, 2), c.NewTensor(quant.F32, 4, 1)) // + zeros, in place
	require.NoError(t, c.Err())
	g, err := c.Build(dst, res)
	require.NoError(t, err)
	e := newEngine(t, 3)
	require.True(t, SupportsOp(sum))
	require.NoError(t, e.ComputeNode(sum))
	require.Equal(t, []float32{14, 25, 36, 50, 61, 72}, f32s(sum))
	if !SupportsOp(dst) || !SupportsOp(dup) { // copies are another family's
		require.ErrorIs(t, e.Compute(g), ErrUnsupported)
		return
	}
	require.NoError(t, e.Compute(g))
	require.Equal(t, []float32{0, 0, 14, 25, 36, 50, 61, 72}, f32s(out))
	require.Equal(t, f32s(out), f32s(res))
}

func TestComputeUnsupported(t *testing.T) {
	e := newEngine(t, 2)
	for name, build := range map[string]func(c *graph.Context) *graph.Tensor{
		"no kernel": func(c *graph.Context) *graph.Tensor {
			a := c.NewTensor(quant.F32, 4, 4)
			return c.NewOp(ops.SSMScan, quant.F32, a.Ne, ops.Params{}, a, a)
		},
		"quantized add": func(c *graph.Context) *graph.Tensor {
			a := c.NewTensor(quant.Q8_0, 32)
			return c.Add(a, a)
		},
		"missing source": func(c *graph.Context) *graph.Tensor {
			a := c.NewTensor(quant.F32, 4)
			return c.NewOp(ops.Add, quant.F32, a.Ne, ops.Params{}, a)
		},
		"invalid op": func(c *graph.Context) *graph.Tensor {
			a := c.NewTensor(quant.F32, 4)
			x := c.Add(a, a)
			x.Op = ops.OpCount + 7
			return x
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			x := build(c)
			require.NoError(t, c.Err())
			require.False(t, SupportsOp(x))
			g, err := c.Build(x)
			require.NoError(t, err)
			err = e.Compute(g)
			require.ErrorIs(t, err, ErrUnsupported)
			require.Contains(t, err.Error(), x.Op.String())
		})
	}
}

func TestComputeNoData(t *testing.T) {
	e := newEngine(t, 2)
	c := graph.NewContext(graph.ContextOptions{})
	a := c.NewTensor(quant.F32, 4)
	x := c.Add(a, a)
	g, err := c.Build(x)
	require.NoError(t, err)
	require.ErrorIs(t, e.Compute(g), ErrNoData)

	x.Data = make([]byte, 16) // the result has memory, its source not
	err = e.Compute(g)
	require.ErrorIs(t, err, ErrNoData)
	require.Contains(t, err.Error(), "source")

	// Empty tensors need none.
	z := c.Add(c.NewTensor(quant.F32, 0, 3), c.NewTensor(quant.F32, 1, 3))
	g, err = c.Build(z)
	require.NoError(t, err)
	require.NoError(t, e.Compute(g))
}

// TestComputeKernelPanic: memory shorter than the strides need makes the
// kernel panic; that is an error, never a crash, and the engine goes on.
func TestComputeKernelPanic(t *testing.T) {
	e := newEngine(t, 3)
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := c.NewTensor(quant.F32, 4, 6)
	x := c.Add(a, a)
	g, err := c.Build(x)
	require.NoError(t, err)
	a.Data = a.Data[:40]
	err = e.Compute(g)
	require.Error(t, err)
	require.Contains(t, err.Error(), "kernel failed")
	a.Data = make([]byte, 96)
	require.NoError(t, e.Compute(g))
}

// TestComputeWorkAndPhases runs a stand-in kernel with scratch memory and
// a barrier through the engine: each thread sums its rows into Work, and
// after the barrier thread 0 adds the partial sums.
func TestComputeWorkAndPhases(t *testing.T) {
	saved := kernels[ops.Sum]
	t.Cleanup(func() { kernels[ops.Sum] = saved })
	kernels[ops.Sum] = kernel{
		compute: func(p *Params, t *graph.Tensor) {
			src := t.Src[0]
			lo, hi := p.Rows(src.NRows())
			var s float32
			for r := lo; r < hi; r++ {
				for i := range src.Ne[0] {
					s += getF(src.Type, src.Data, offset(src, i, r, 0, 0))
				}
			}
			binary.LittleEndian.PutUint32(p.Work[4*p.Ith:], math.Float32bits(s))
			p.Barrier()
			if p.Ith == 0 {
				var total float32
				for i := range p.Nth {
					total += math.Float32frombits(binary.LittleEndian.Uint32(p.Work[4*i:]))
				}
				setF(t.Type, t.Data, 0, total)
			}
		},
		workSize: func(t *graph.Tensor, nth int) int { return 4 * nth },
	}
	for _, threads := range []int{1, 2, 5} {
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		a := c.NewTensor(quant.F32, 3, 7)
		for i := range 21 {
			setF(quant.F32, a.Data, uint64(4*i), float32(i))
		}
		x := c.NewOp(ops.Sum, quant.F32, [graph.MaxDims]int64{1, 1, 1, 1}, ops.Params{}, a)
		g, err := c.Build(x)
		require.NoError(t, err)
		require.NoError(t, newEngine(t, threads).Compute(g))
		require.Equal(t, []float32{210}, f32s(x), "%d threads", threads)
	}
}

// TestThreadCountsAgree: results do not depend on the number of threads.
func TestThreadCountsAgree(t *testing.T) {
	var want []float32
	for _, threads := range []int{1, 2, 3, 8, 64} {
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		a := c.NewTensor(quant.F32, 5, 7, 3)
		b := c.NewTensor(quant.F32, 5, 1, 3)
		for i := range 105 {
			setF(quant.F32, a.Data, uint64(4*i), float32(i)*0.25-3)
		}
		for i := range 15 {
			setF(quant.F32, b.Data, uint64(4*i), float32(i)+0.5)
		}
		x := c.Div(c.Mul(a, b), c.Sub(b, c.NewTensor(quant.F32, 1)))
		g, err := c.Build(x)
		require.NoError(t, err)
		require.NoError(t, newEngine(t, threads).Compute(g))
		if want == nil {
			want = f32s(x)
			continue
		}
		require.Equal(t, want, f32s(x), "%d threads", threads)
	}
}

// TestOneRowOnCaller: operations whose kernel gives work to one thread
// only (one-row element-wise, norm, GLU, softmax and copy nodes, one
// GET_ROWS or SET_ROWS row: most nodes of a one-token decode) run on the
// calling thread without handing anything to the workers, and compute
// what the one-thread engine does; the same nodes with two rows are
// handed over.
func TestOneRowOnCaller(t *testing.T) {
	build := func(rows int64) (*graph.Graph, []*graph.Tensor) {
		const n = 2048 // past serialBelow: size alone would hand them over
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		x := c.NewTensor(quant.F32, n, rows)
		w := c.NewTensor(quant.F32, n)
		table := c.NewTensor(quant.F32, n, 4)
		idx := c.NewTensor(quant.I32, rows)
		cache := c.NewTensor(quant.F16, n, 8)
		cells := c.NewTensor(quant.I64, rows)
		for i := range x.NElements() {
			setF(quant.F32, x.Data, uint64(4*i), float32(i%97)*0.03-1)
		}
		for i := range n {
			setF(quant.F32, w.Data, uint64(4*i), float32(i%13)*0.1)
		}
		for i := range 4 * n {
			setF(quant.F32, table.Data, uint64(4*i), float32(i%31)*0.05)
		}
		for i := range rows {
			binary.LittleEndian.PutUint32(idx.Data[4*i:], uint32(3-i))
			binary.LittleEndian.PutUint64(cells.Data[8*i:], uint64(5+i))
		}
		h := c.Add(c.Mul(c.RMSNorm(x, 1e-5), w), c.GetRows(table, idx))
		h = c.SoftMaxExt(c.SwiGLUSplit(h, x), nil, 0.5, 0)
		out := c.Cont(c.Permute(c.Reshape(h, n, 1, rows), 0, 2, 1, 3))
		set := c.SetRows(cache, out, cells)
		g, err := c.Build(set)
		require.NoError(t, err)
		return g, []*graph.Tensor{out, set}
	}
	for _, rows := range []int64{1, 2} {
		g1, want := build(rows)
		require.NoError(t, newEngine(t, 1).Compute(g1))
		g2, got := build(rows)
		e := newEngine(t, 2)
		require.NoError(t, e.Compute(g2))
		for i := range want {
			require.Equal(t, want[i].Data, got[i].Data, "%d rows: %s", rows, got[i].Op)
		}
		handed := e.pool.generation()
		if rows == 1 {
			require.Zero(t, handed, "one-row nodes handed to the workers")
		} else {
			require.Greater(t, handed, uint32(5), "two-row nodes run on the caller")
		}
	}
}
