package optest

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// TestLayoutFromFloatMatchesGGML compares what CPY makes of random F32 rows
// in each quantized type with the CPU from_float of ggml's generic (x64)
// build, byte for byte. (Its AVX builds round Q8_0/Q8_1 ties to even; see
// tiesAmbiguous.)
func TestLayoutFromFloatMatchesGGML(t *testing.T) {
	lib := reftest.Lib(t)
	generic, err := ggmlref.OpenVariant(lib.Dir(), "x64")
	require.NoError(t, err)
	defer generic.Close()
	eng := cpu.New(cpu.Options{Threads: 2})
	defer eng.Close()
	rng := rand.New(rand.NewSource(7))
	src := make([]float32, 4*256)
	for i := range src {
		src[i] = 300*rng.Float32() - 150
	}
	// A block scaled by exactly 1 whose values are halfway between levels.
	src[0] = 127
	for i := 1; i < 32; i++ {
		src[i] = float32(i-16) + 0.5
	}
	for _, typ := range quant.Types() {
		if !typ.IsQuantized() || !typ.CanQuantize() {
			continue
		}
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		in := c.NewTensor(quant.F32, 256, 4)
		out := c.Cpy(in, c.NewTensor(typ, 256, 4))
		require.NoError(t, c.Err())
		require.NoError(t, SetFloats(in, src))
		g, err := c.Build(out)
		require.NoError(t, err)
		require.NoError(t, eng.Compute(g), typ)
		want, err := generic.FromFloatCPU(uint32(typ), src)
		require.NoError(t, err, typ)
		assert.True(t, bytes.Equal(want, out.Data), "%s: our copy differs from ggml's from_float", typ)
	}
}

// --- hand-computed results --------------------------------------------------------

// layoutRun builds an output in an allocating context, lets fill set the
// inputs (the context's tensors, in creation order), computes on 1 and 3
// threads and returns the output's values, which must agree.
func layoutRun(t *testing.T, build func(c *graph.Context) *graph.Tensor, fill func(in []*graph.Tensor)) []float32 {
	t.Helper()
	var results [][]float32
	for _, threads := range []int{1, 3} {
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		out := build(c)
		require.NoError(t, c.Err())
		g, err := c.Build(out)
		require.NoError(t, err)
		fill(c.Tensors())
		eng := cpu.New(cpu.Options{Threads: threads})
		require.NoError(t, eng.Compute(g))
		eng.Close()
		v, err := Floats(out)
		require.NoError(t, err)
		results = append(results, v)
	}
	require.Equal(t, results[0], results[1], "1 and 3 threads")
	return results[0]
}

// seq fills in with start, start+1, ...
func seq(t *testing.T, in *graph.Tensor, start float32) {
	t.Helper()
	v := make([]float32, in.NElements())
	for j := range v {
		v[j] = start + float32(j)
	}
	require.NoError(t, SetFloats(in, v))
}

func setInts(in *graph.Tensor, v ...int64) {
	for j, x := range v {
		if in.Type == quant.I64 {
			binary.LittleEndian.PutUint64(in.Data[8*j:], uint64(x))
		} else {
			binary.LittleEndian.PutUint32(in.Data[4*j:], uint32(int32(x)))
		}
	}
}

func TestLayoutHandComputed(t *testing.T) {
	t.Run("CONCAT", func(t *testing.T) {
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.Concat(c.NewTensor(quant.F32, 2, 2), c.NewTensor(quant.F32, 2, 1), 1)
		}, func(in []*graph.Tensor) { seq(t, in[0], 0); seq(t, in[1], 10) })
		assert.Equal(t, []float32{0, 1, 2, 3, 10, 11}, got)
	})
	t.Run("REPEAT", func(t *testing.T) {
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.Repeat4D(c.NewTensor(quant.F32, 2, 1), 4, 2, 1, 1)
		}, func(in []*graph.Tensor) { seq(t, in[0], 1) })
		assert.Equal(t, []float32{1, 2, 1, 2, 1, 2, 1, 2}, got)
	})
	t.Run("SET", func(t *testing.T) {
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			a := c.NewTensor(quant.F32, 3, 3)
			return c.Set2D(a, c.NewTensor(quant.F32, 2, 2), a.Nb[1], 4)
		}, func(in []*graph.Tensor) { seq(t, in[0], 0); seq(t, in[1], 10) })
		assert.Equal(t, []float32{0, 10, 11, 3, 12, 13, 6, 7, 8}, got)
	})
	t.Run("GET_ROWS", func(t *testing.T) {
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.GetRows(c.NewTensor(quant.F16, 2, 3), c.NewTensor(quant.I32, 4))
		}, func(in []*graph.Tensor) { seq(t, in[0], 0); setInts(in[1], 2, 0, 2, 1) })
		assert.Equal(t, []float32{4, 5, 0, 1, 4, 5, 2, 3}, got)
	})
	t.Run("SET_ROWS last write wins", func(t *testing.T) {
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.SetRows(c.NewTensor(quant.F32, 2, 3), c.NewTensor(quant.F32, 2, 4), c.NewTensor(quant.I64, 4))
		}, func(in []*graph.Tensor) { seq(t, in[0], 0); seq(t, in[1], 10); setInts(in[2], 2, 0, 2, 0) })
		assert.Equal(t, []float32{16, 17, 2, 3, 14, 15}, got)
	})
	t.Run("DIAG", func(t *testing.T) {
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.Diag(c.NewTensor(quant.F32, 2, 1, 2))
		}, func(in []*graph.Tensor) { seq(t, in[0], 1) })
		assert.Equal(t, []float32{1, 0, 0, 2, 3, 0, 0, 4}, got)
	})
	t.Run("PAD", func(t *testing.T) {
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.PadExt(c.NewTensor(quant.F32, 3, 1), 1, 2, 0, 1, 0, 0, 0, 0)
		}, func(in []*graph.Tensor) { seq(t, in[0], 1) })
		assert.Equal(t, []float32{0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0}, got)
		got = layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.PadExtCircular(c.NewTensor(quant.F32, 3, 1), 2, 1, 0, 0, 0, 0, 0, 0)
		}, func(in []*graph.Tensor) { seq(t, in[0], 1) })
		assert.Equal(t, []float32{2, 3, 1, 2, 3, 1}, got)
		got = layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.PadExt(c.NewTensor(quant.F32, 4, 1), -1, -2, 0, 0, 0, 0, 0, 0)
		}, func(in []*graph.Tensor) { seq(t, in[0], 1) })
		assert.Equal(t, []float32{2}, got, "negative padding crops")
	})
	t.Run("IM2COL", func(t *testing.T) {
		// A 1-D input of 4 values in 1 channel, kernel width 2, stride 2,
		// padding 1: windows [pad, x0], [x1, x2], [x3, pad].
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.Im2Col(c.NewTensor(quant.F16, 2, 1), c.NewTensor(quant.F32, 4, 1), 2, 0, 1, 0, 1, 0, false, quant.F32)
		}, func(in []*graph.Tensor) { seq(t, in[1], 1) })
		assert.Equal(t, []float32{0, 1, 2, 3, 4, 0}, got)
	})
	t.Run("POOL_2D", func(t *testing.T) {
		// 3x3 input 1..9, 2x2 windows, stride 2, padding 1: the padded
		// cells count in the average's divisor.
		for op, want := range map[ops.PoolOp][]float32{
			ops.PoolMax: {1, 3, 7, 9},
			ops.PoolAvg: {0.25, 5.0 / 4, 11.0 / 4, 7},
		} {
			got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
				return c.Pool2D(c.NewTensor(quant.F32, 3, 3), op, 2, 2, 2, 2, 1, 1)
			}, func(in []*graph.Tensor) { seq(t, in[0], 1) })
			assert.Equal(t, want, got, op)
		}
	})
	t.Run("CPY f32 to i32", func(t *testing.T) {
		vals := []float32{1.9, -1.9, 2147483648, -2147483904, float32(math.NaN()), -0.5}
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.Cast(c.NewTensor(quant.F32, 6), quant.I32)
		}, func(in []*graph.Tensor) { require.NoError(t, SetFloats(in[0], vals)) })
		// Truncation towards zero; x86's INT32_MIN out of range and for NaN.
		assert.Equal(t, []float32{1, -1, math.MinInt32, math.MinInt32, math.MinInt32, 0}, got)
	})
	t.Run("CPY transposed f32 to f16", func(t *testing.T) {
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.Cpy(c.Transpose(c.NewTensor(quant.F32, 3, 2)), c.NewTensor(quant.F16, 6))
		}, func(in []*graph.Tensor) { seq(t, in[0], 0) })
		assert.Equal(t, []float32{0, 3, 1, 4, 2, 5}, got)
	})
	t.Run("CONT reshaped permutation", func(t *testing.T) {
		got := layoutRun(t, func(c *graph.Context) *graph.Tensor {
			return c.Cont(c.Permute(c.NewTensor(quant.F32, 2, 3), 1, 0, 2, 3), 6)
		}, func(in []*graph.Tensor) { seq(t, in[0], 0) })
		assert.Equal(t, []float32{0, 2, 4, 1, 3, 5}, got)
	})
}

// --- builders -----------------------------------------------------------------

func TestLayoutBuilders(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{})
	a := c.NewTensor(quant.F32, 4, 3, 2)

	r := c.Repeat(c.NewTensor(quant.F16, 2, 1, 2), a)
	assert.Equal(t, quant.F16, r.Type)
	assert.Equal(t, a.Ne, r.Ne)

	cc := c.Concat(a, c.NewTensor(quant.F32, 4, 5, 2), 1)
	assert.Equal(t, [4]int64{4, 8, 2, 1}, cc.Ne)
	assert.Equal(t, int32(1), ops.ConcatParamsOf(cc.Params).Dim)

	s := c.SetInplace(a, c.NewTensor(quant.F32, 2), 16, 48, 96, 8)
	assert.Equal(t, a, s.ViewSrc)
	assert.Equal(t, ops.SetParams{Nb1: 16, Nb2: 48, Nb3: 96, Offset: 8, Inplace: true}, ops.SetParamsOf(s.Params))
	s = c.Set1D(a, c.NewTensor(quant.F32, 2), 8)
	assert.Nil(t, s.ViewSrc)
	assert.Equal(t, ops.SetParams{Nb1: 16, Nb2: 48, Nb3: 96, Offset: 8}, ops.SetParamsOf(s.Params))
	assert.Equal(t, [graph.MaxSrc]*graph.Tensor{a, s.Src[1]}, s.Src)

	rows := c.NewTensor(quant.I32, 5, 2)
	g := c.GetRows(a, rows)
	assert.Equal(t, quant.F32, g.Type)
	assert.Equal(t, [4]int64{4, 5, 2, 1}, g.Ne)
	assert.Equal(t, quant.I32, c.GetRows(c.NewTensor(quant.I32, 4, 3, 2), rows).Type)

	dst := c.NewTensor(quant.Q4_0, 64, 10, 2)
	src := c.NewTensor(quant.F16, 64, 3, 2)
	idx := c.NewTensor(quant.I64, 3, 1)
	sr := c.SetRows(dst, src, idx)
	assert.Equal(t, dst, sr.ViewSrc)
	assert.Equal(t, []*graph.Tensor{src, idx, dst}, sr.Src[:3], "ggml's source order")

	cast := c.Cast(a, quant.F16)
	assert.Equal(t, ops.Cpy, cast.Op)
	assert.Equal(t, cast, cast.Src[1], "ggml_cast's result is its own second source")

	d := c.DupInplace(a)
	assert.Equal(t, a, d.ViewSrc)
	assert.Equal(t, ops.Dup, d.Op)

	p := c.PadExtCircular(a, 1, 2, 3, 4, 5, 6, 7, 8)
	assert.Equal(t, [4]int64{7, 10, 13, 16}, p.Ne)
	assert.Equal(t, ops.PadParams{LP: [4]int32{1, 3, 5, 7}, RP: [4]int32{2, 4, 6, 8}, Circular: true}, ops.PadParamsOf(p.Params))
	assert.Equal(t, [4]int64{5, 4, 2, 1}, c.Pad(a, 1, 1, 0, 0).Ne)

	im := c.Im2Col(c.NewTensor(quant.F16, 3, 3, 2, 8), c.NewTensor(quant.F32, 10, 9, 2, 5), 2, 1, 1, 0, 1, 2, true, quant.F16)
	assert.Equal(t, quant.F16, im.Type)
	assert.Equal(t, [4]int64{18, 5, 5, 5}, im.Ne)
	assert.Equal(t, ops.Im2ColParams{S0: 2, S1: 1, P0: 1, D0: 1, D1: 2, Is2D: true}, ops.Im2ColParamsOf(im.Params))
	im = c.Im2Col(c.NewTensor(quant.F16, 3, 4, 8), c.NewTensor(quant.F32, 10, 4, 5), 1, 0, 0, 0, 1, 0, false, quant.F32)
	assert.Equal(t, [4]int64{12, 8, 5, 1}, im.Ne)

	// ggml computes pool sizes in float: (10 + 2*0.5 - 3)/2 + 1 = 5 and
	// (7 + 2*0.9 - 2)/2 + 1 = 4.4, truncated.
	pl := c.Pool2D(c.NewTensor(quant.F16, 10, 7, 3), ops.PoolAvg, 3, 2, 2, 2, 0.5, 0.9)
	assert.Equal(t, quant.F32, pl.Type)
	assert.Equal(t, [4]int64{5, 4, 3, 1}, pl.Ne)
	assert.Equal(t, ops.Pool2DParams{Op: ops.PoolAvg, K0: 3, K1: 2, S0: 2, S1: 2}, ops.Pool2DParamsOf(pl.Params))

	require.NoError(t, c.Err())
}

func TestLayoutBuilderErrors(t *testing.T) {
	f32 := func(c *graph.Context, ne ...int64) *graph.Tensor { return c.NewTensor(quant.F32, ne...) }
	bad := []struct {
		name  string
		kind  error
		build func(c *graph.Context) *graph.Tensor
	}{
		{"repeat not a multiple", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Repeat(f32(c, 3), f32(c, 4)) }},
		{"repeat4d not a multiple", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Repeat4D(f32(c, 2, 2), 4, 3, 1, 1) }},
		{"repeat nil", graph.ErrNil, func(c *graph.Context) *graph.Tensor { return c.Repeat(nil, f32(c, 4)) }},
		{"concat dim", graph.ErrArgument, func(c *graph.Context) *graph.Tensor { return c.Concat(f32(c, 2), f32(c, 2), 4) }},
		{"concat types", graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.Concat(f32(c, 2), c.NewTensor(quant.F16, 2), 0)
		}},
		{"concat shapes", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Concat(f32(c, 2, 3), f32(c, 2, 4), 0) }},
		{"set too big", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Set1D(f32(c, 2), f32(c, 3), 0) }},
		{"set offset", graph.ErrArgument, func(c *graph.Context) *graph.Tensor { return c.Set1D(f32(c, 4), f32(c, 1), 1<<30) }},
		{"set stride", graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			return c.Set(f32(c, 4), f32(c, 1), 1<<31, 0, 0, 0)
		}},
		{"get_rows batch", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.GetRows(f32(c, 4, 3, 2), c.NewTensor(quant.I32, 5, 3))
		}},
		{"get_rows i64", graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.GetRows(f32(c, 4, 3), c.NewTensor(quant.I64, 5))
		}},
		{"set_rows width", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SetRows(f32(c, 4, 3), f32(c, 5, 2), c.NewTensor(quant.I64, 2))
		}},
		{"set_rows count", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SetRows(f32(c, 4, 3), f32(c, 4, 2), c.NewTensor(quant.I64, 3))
		}},
		{"set_rows broadcast", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SetRows(f32(c, 4, 3, 3), f32(c, 4, 2, 3), c.NewTensor(quant.I64, 2, 2))
		}},
		{"set_rows source type", graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.SetRows(f32(c, 4, 3), c.NewTensor(quant.BF16, 4, 2), c.NewTensor(quant.I64, 2))
		}},
		{"set_rows index type", graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.SetRows(f32(c, 4, 3), f32(c, 4, 2), f32(c, 2))
		}},
		{"set_rows strided rows", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SetRows(f32(c, 4, 3), c.Transpose(f32(c, 2, 4)), c.NewTensor(quant.I64, 2))
		}},
		{"diag", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Diag(f32(c, 3, 2)) }},
		{"pad negative size", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.PadExt(f32(c, 3), -2, -2, 0, 0, 0, 0, 0, 0) }},
		{"im2col channels", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.Im2Col(f32(c, 3, 3, 2), f32(c, 10, 10, 3), 1, 1, 0, 0, 1, 1, true, quant.F32)
		}},
		{"im2col 1-d batch", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.Im2Col(f32(c, 3, 2), f32(c, 10, 2, 1, 2), 1, 0, 0, 0, 1, 0, false, quant.F32)
		}},
		{"im2col too small", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.Im2Col(f32(c, 5, 5, 1), f32(c, 4, 4, 1), 1, 1, 0, 0, 1, 1, true, quant.F32)
		}},
		{"im2col zero stride", graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			return c.Im2Col(f32(c, 3, 2), f32(c, 10, 2), 0, 0, 0, 0, 1, 0, false, quant.F32)
		}},
		{"pool op", graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			return c.Pool2D(f32(c, 4, 4), ops.PoolCount, 2, 2, 1, 1, 0, 0)
		}},
		{"pool zero stride", graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			return c.Pool2D(f32(c, 4, 4), ops.PoolMax, 2, 2, 0, 1, 0, 0)
		}},
		{"pool NaN padding", graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			return c.Pool2D(f32(c, 4, 4), ops.PoolMax, 2, 2, 1, 1, float32(math.NaN()), 0)
		}},
		{"pool too small", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.Pool2D(f32(c, 4, 4), ops.PoolMax, 5, 2, 1, 1, 0, 0)
		}},
		{"cast to a block type", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Cast(f32(c, 10), quant.Q4_0) }},
	}
	for _, b := range bad {
		c := graph.NewContext(graph.ContextOptions{})
		var r *graph.Tensor
		require.NotPanics(t, func() { r = b.build(c) }, b.name)
		assert.Nil(t, r, b.name)
		assert.ErrorIs(t, c.Err(), b.kind, b.name)
	}
}

// TestLayoutRefusals checks layouts and types the CPU refuses because
// ggml's kernels abort or go wrong on them, and a few it accepts.
func TestLayoutRefusals(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{})
	f32 := c.NewTensor(quant.F32, 64, 4, 3)
	q4 := c.NewTensor(quant.Q4_0, 64, 4, 3)
	for _, k := range []struct {
		name string
		t    *graph.Tensor
		want bool
	}{
		{"cpy f32 to q4_0, permuted destination", c.Cpy(f32, c.Permute(c.NewTensor(quant.Q4_0, 64, 3, 4), 0, 2, 1, 3)), false},
		{"cpy f32 to q4_0, transposed source", c.Cpy(c.Transpose(c.NewTensor(quant.F32, 4, 64)), c.NewTensor(quant.Q4_0, 64, 4)), false},
		{"cpy f32 to q4_0, rows of half blocks", c.Cpy(c.NewTensor(quant.F32, 16, 8), c.NewTensor(quant.Q4_0, 128)), false},
		{"cpy q4_0 permuted to q4_0 reshaped", c.Cpy(c.Permute(q4, 0, 2, 1, 3), c.NewTensor(quant.Q4_0, 128, 6)), false},
		{"cpy q4_0 permuted to q4_0 same shape", c.Cpy(c.Permute(q4, 0, 2, 1, 3), c.NewTensor(quant.Q4_0, 64, 3, 4)), true},
		{"cpy q4_0 to f16", c.Cpy(q4, c.NewTensor(quant.F16, 64, 4, 3)), false},
		{"cpy q4_0 to q8_0", c.Cpy(q4, c.NewTensor(quant.Q8_0, 64, 4, 3)), false},
		{"cpy q8_1 to f32", c.Cpy(c.NewTensor(quant.Q8_1, 64), c.NewTensor(quant.F32, 64)), false},
		{"cpy q4_0 to f32, strided destination", c.Cpy(q4, c.Transpose(c.NewTensor(quant.F32, 48, 16))), false},
		{"cpy q4_0 to f32, rows of half blocks", c.Cpy(q4, c.View2D(c.NewTensor(quant.F32, 32, 48), 16, 48, 128, 0)), false},
		{"cpy q4_0 to contiguous f32, rows of half blocks", c.Cpy(q4, c.NewTensor(quant.F32, 16, 48)), true},
		{"cpy i32 to f16", c.Cpy(c.NewTensor(quant.I32, 4), c.NewTensor(quant.F16, 4)), false},
		{"cpy f16 to i32", c.Cpy(c.NewTensor(quant.F16, 4), c.NewTensor(quant.I32, 4)), true},
		{"cpy iq2_xxs to iq2_xxs", c.Cpy(c.NewTensor(quant.IQ2_XXS, 256), c.NewTensor(quant.IQ2_XXS, 256)), false},
		{"dup iq2_xxs", c.Dup(c.NewTensor(quant.IQ2_XXS, 256)), true},
		{"cpy i16 to i16", c.Cpy(c.NewTensor(quant.I16, 4), c.NewTensor(quant.I16, 4)), true},
		{"repeat q4_0", c.Repeat(c.NewTensor(quant.Q4_0, 32), c.NewTensor(quant.Q4_0, 64)), false},
		{"repeat transposed", c.Repeat(c.Transpose(c.NewTensor(quant.F32, 2, 2)), c.NewTensor(quant.F32, 4, 2)), false},
		{"get_rows q8_k", c.GetRows(c.NewTensor(quant.Q8_K, 256, 2), c.NewTensor(quant.I32, 1)), false},
		{"get_rows transposed", c.GetRows(c.Transpose(c.NewTensor(quant.F32, 2, 4)), c.NewTensor(quant.I32, 1)), false},
		{"set f16", c.Set1D(c.NewTensor(quant.F16, 8), c.NewTensor(quant.F16, 2), 0), false},
		{"set past the end", c.Set1D(c.NewTensor(quant.F32, 8), c.NewTensor(quant.F32, 2), 28), false},
		{"set_rows into q8_k", c.SetRows(c.NewTensor(quant.Q8_K, 256, 2), c.NewTensor(quant.F32, 256), c.NewTensor(quant.I32, 1)), true},
		{"set_rows into iq1_s", c.SetRows(c.NewTensor(quant.IQ1_S, 256, 2), c.NewTensor(quant.F32, 256), c.NewTensor(quant.I32, 1)), false},
		{"diag f16", c.Diag(c.NewTensor(quant.F16, 3)), false},
		{"pad f16", c.Pad(c.NewTensor(quant.F16, 3), 1, 0, 0, 0), false},
		{"pad circular past the source", c.PadExtCircular(c.NewTensor(quant.F32, 3), 4, 0, 0, 0, 0, 0, 0, 0), false},
		{"im2col f16 into f32", c.Im2Col(c.NewTensor(quant.F16, 3, 3), c.NewTensor(quant.F16, 8, 3), 1, 0, 0, 0, 1, 0, false, quant.F32), false},
		{"im2col strided image", c.Im2Col(c.NewTensor(quant.F16, 3, 3, 1), c.Transpose(c.NewTensor(quant.F32, 6, 6)), 1, 1, 0, 0, 1, 1, true, quant.F32), false},
		{"pool transposed", c.Pool2D(c.Transpose(c.NewTensor(quant.F32, 6, 6)), ops.PoolMax, 2, 2, 1, 1, 0, 0), false},
		{"pool f16", c.Pool2D(c.NewTensor(quant.F16, 6, 6), ops.PoolMax, 2, 2, 1, 1, 0, 0), true},
	} {
		require.NoError(t, c.Err(), k.name)
		assert.Equal(t, k.want, cpu.SupportsOp(k.t), k.name)
	}
}

// TestLayoutBadRowNumbers: row numbers out of range are an error, never a
// read or write out of place.
func TestLayoutBadRowNumbers(t *testing.T) {
	eng := cpu.New(cpu.Options{Threads: 2})
	defer eng.Close()
	for name, build := range map[string]func(c *graph.Context) *graph.Tensor{
		"GET_ROWS": func(c *graph.Context) *graph.Tensor {
			return c.GetRows(c.NewTensor(quant.F32, 2, 3), c.NewTensor(quant.I32, 2))
		},
		"SET_ROWS": func(c *graph.Context) *graph.Tensor {
			return c.SetRows(c.NewTensor(quant.F32, 2, 3), c.NewTensor(quant.F32, 2, 2), c.NewTensor(quant.I32, 2))
		},
	} {
		for _, r := range []int64{-1, 3} {
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			out := build(c)
			g, err := c.Build(out)
			require.NoError(t, err)
			idx := out.Src[1]
			setInts(idx, 0, r)
			assert.ErrorContains(t, eng.Compute(g), "row", name)
		}
	}
}
