package graph_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/dynlib"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// TestElementwiseBuilderErrors checks that every shape or type ggml's
// element-wise builders assert on becomes an error on the Context (of the
// right kind), with a nil result and no panic, and that later builders
// keep returning nil.
func TestElementwiseBuilderErrors(t *testing.T) {
	type build func(c *graph.Context) *graph.Tensor
	f32 := func(c *graph.Context, ne ...int64) *graph.Tensor { return c.NewTensor(quant.F32, ne...) }
	permuted := func(c *graph.Context) *graph.Tensor { return c.Permute(f32(c, 4, 3, 2), 1, 0, 2, 3) }
	cases := []struct {
		name string
		kind error
		b    build
	}{
		{"Add no broadcast", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Add(f32(c, 4, 3), f32(c, 3, 3)) }},
		{"MulInplace no broadcast", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.MulInplace(f32(c, 4), f32(c, 8)) }},
		{"Div nil", graph.ErrNil, func(c *graph.Context) *graph.Tensor { return c.Div(f32(c, 4), nil) }},
		{"AddCast rows differ", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.AddCast(c.NewTensor(quant.F16, 4, 2), f32(c, 1, 2), quant.F32)
		}},
		{"AddCast f32 source", graph.ErrType, func(c *graph.Context) *graph.Tensor { return c.AddCast(f32(c, 4), f32(c, 4), quant.F16) }},
		{"AddID rows", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.AddID(f32(c, 8, 2, 3), f32(c, 4, 4), c.NewTensor(quant.I32, 2, 3))
		}},
		{"AddID ids shape", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.AddID(f32(c, 8, 2, 3), f32(c, 8, 4), c.NewTensor(quant.I32, 3, 2))
		}},
		{"AddID ids type", graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.AddID(f32(c, 8, 2, 3), f32(c, 8, 4), f32(c, 2, 3))
		}},
		{"Add1 not scalar", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Add1(f32(c, 4), f32(c, 2)) }},
		{"Add1 not padded", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Add1(permuted(c), f32(c, 1)) }},
		{"Scale not padded", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.ScaleBias(permuted(c), 2, 1) }},
		{"Fill type", graph.ErrType, func(c *graph.Context) *graph.Tensor { return c.Fill(c.NewTensor(quant.BF16, 4), 1) }},
		{"Fill not contiguous", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.FillInplace(permuted(c), 1) }},
		{"Tri type", graph.ErrType, func(c *graph.Context) *graph.Tensor { return c.Tri(c.NewTensor(quant.F16, 4, 4), ops.TriLower) }},
		{"Tri not square", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Tri(f32(c, 4, 3), ops.TriLower) }},
		{"Tri not contiguous", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.Tri(c.Transpose(f32(c, 4, 4)), ops.TriLower) }},
		{"Tri bad type", graph.ErrArgument, func(c *graph.Context) *graph.Tensor { return c.Tri(f32(c, 4, 4), ops.TriType(4)) }},
		{"Unary rows", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.GELU(permuted(c)) }},
		{"Unary op", graph.ErrArgument, func(c *graph.Context) *graph.Tensor { return c.Unary(f32(c, 4), ops.UnaryOpCount) }},
		{"Unary nil", graph.ErrNil, func(c *graph.Context) *graph.Tensor { return c.SiLUInplace(nil) }},
		{"GLU not contiguous", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.SwiGLU(permuted(c)) }},
		{"GLU op", graph.ErrArgument, func(c *graph.Context) *graph.Tensor { return c.GLU(f32(c, 4), ops.GluOpCount, false) }},
		{"GLUSplit shapes", graph.ErrShape, func(c *graph.Context) *graph.Tensor { return c.GeGLUSplit(f32(c, 4, 2), f32(c, 4, 3)) }},
		{"GLUSplit types", graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.ReGLUSplit(f32(c, 4), c.NewTensor(quant.F16, 4))
		}},
		{"GLUSplit b not contiguous", graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.SwiGLUOAI(f32(c, 3, 4, 2), permuted(c), 1.702, 7)
		}},
		{"GLUSplit nil", graph.ErrNil, func(c *graph.Context) *graph.Tensor { return c.GLUSplit(f32(c, 4), nil, ops.GLUSwiGLU) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := graph.NewContext(graph.ContextOptions{})
			var out *graph.Tensor
			require.NotPanics(t, func() { out = tc.b(c) })
			require.Nil(t, out)
			require.ErrorIs(t, c.Err(), tc.kind)
			require.Nil(t, c.Abs(c.NewTensor(quant.F32, 4)), "builders after an error return nil")
		})
	}
}

// TestElementwiseBuilderResults checks result types, shapes, sources,
// in-place views and the typed parameters.
func TestElementwiseBuilderResults(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{})
	a := c.NewTensor(quant.F16, 8, 3, 2)
	b := c.NewTensor(quant.F32, 8, 1, 2)

	s := c.ScaleBiasInplace(a, 2, -1)
	require.Equal(t, ops.Scale, s.Op)
	require.Equal(t, ops.ScaleParams{Scale: 2, Bias: -1}, ops.ScaleParamsOf(s.Params))
	require.Same(t, a, s.ViewSrc)
	require.Same(t, a, s.Src[0])

	cl := c.Clamp(a, -0.5, 0.5)
	require.Nil(t, cl.ViewSrc, "0.25.1's ggml_clamp is not in place")
	require.Equal(t, ops.ClampParams{Min: -0.5, Max: 0.5}, ops.ClampParamsOf(cl.Params))
	require.Same(t, a, c.ClampInplace(a, 0, 1).ViewSrc)

	ac := c.AddCast(a, b, quant.F32)
	require.Equal(t, quant.F32, ac.Type)
	require.Equal(t, a.Ne, ac.Ne)
	require.Equal(t, ops.Add, ac.Op)

	g := c.SwiGLUSwapped(a)
	require.Equal(t, [4]int64{4, 3, 2, 1}, g.Ne)
	require.Equal(t, quant.F16, g.Type)
	require.Equal(t, ops.GLUParams{Op: ops.GLUSwiGLU, Swapped: true}, ops.GLUParamsOf(g.Params))
	require.Nil(t, g.Src[1])

	odd := c.GeGLU(c.NewTensor(quant.F32, 5, 2))
	require.Equal(t, int64(2), odd.Ne[0], "an odd row drops its last element")

	sc := c.SwiGLUClamp(a, c.NewTensor(quant.F16, 8, 3, 2), 7)
	require.Equal(t, a.Ne, sc.Ne)
	require.Equal(t, ops.GLUParams{Op: ops.GLUSwiGLUClamp, Limit: 7}, ops.GLUParamsOf(sc.Params))

	oai := c.SwiGLUOAI(a, nil, 1.702, 7)
	require.Equal(t, ops.GLUParams{Op: ops.GLUSwiGLUOAI, Alpha: 1.702, Limit: 7}, ops.GLUParamsOf(oai.Params))
	require.Equal(t, int64(4), oai.Ne[0])

	x := c.XIELU(a, 4, 20, 0.5, 1e-7)
	xp := ops.XIELUParamsOf(x.Params)
	require.Equal(t, ops.UnaryXIELU, x.Params.Unary())
	require.InDelta(t, 0.5+math.Log1p(math.Exp(4)), float64(xp.AlphaN), 1e-6)
	require.Equal(t, float32(20), xp.AlphaP, "softplus is the identity above 20")
	require.Equal(t, float32(0.5), xp.Beta)

	lr := c.LeakyReLU(a, 0.1, true)
	require.Same(t, a, lr.ViewSrc)
	require.Equal(t, float32(0.1), ops.LeakyReLUParamsOf(lr.Params).NegativeSlope)

	tr := c.Tri(c.NewTensor(quant.F32, 4, 4), ops.TriUpperDiag)
	require.Equal(t, ops.TriUpperDiag, ops.TriParamsOf(tr.Params).Type)

	id := c.AddID(c.NewTensor(quant.F32, 8, 2, 3), c.NewTensor(quant.F32, 8, 4), c.NewTensor(quant.I32, 2, 3))
	require.Equal(t, ops.AddID, id.Op)
	require.NotNil(t, id.Src[2])
	require.NoError(t, c.Err())
}

func TestTriTypeKeep(t *testing.T) {
	// Row 1 of a 3x3 matrix: which columns each triangle keeps.
	want := map[ops.TriType][3]bool{
		ops.TriUpperDiag: {false, true, true},
		ops.TriUpper:     {false, false, true},
		ops.TriLowerDiag: {true, true, false},
		ops.TriLower:     {true, false, false},
	}
	for typ, cols := range want {
		for i0, keep := range cols {
			require.Equal(t, keep, typ.Keep(int64(i0), 1), "%d col %d", typ, i0)
		}
	}
}

// ggmlBuilders calls the real ggml's builders through purego.
type ggmlBuilders struct {
	lib  *dynlib.Library
	init func(ggmlref.InitParams) uintptr
	free func(ctx uintptr)
	newT func(ctx uintptr, typ int32, nDims int32, ne *int64) *ggmlref.Tensor
	ctx  uintptr
}

func loadGGMLBuilders(t *testing.T) *ggmlBuilders {
	ref := reftest.Lib(t)
	lib, err := dynlib.Open(filepath.Join(ref.Dir(), "libggml-base.so"))
	require.NoError(t, err)
	g := &ggmlBuilders{lib: lib}
	register(t, g, "ggml_init", &g.init)
	register(t, g, "ggml_free", &g.free)
	register(t, g, "ggml_new_tensor", &g.newT)
	g.ctx = g.init(ggmlref.InitParams{MemSize: 1 << 20, NoAlloc: true})
	require.NotZero(t, g.ctx)
	t.Cleanup(func() {
		g.free(g.ctx)
		_ = lib.Close()
	})
	return g
}

func register[F any](t *testing.T, g *ggmlBuilders, name string, fn *F) {
	t.Helper()
	p, err := g.lib.Sym(name)
	require.NoError(t, err)
	purego.RegisterFunc(fn, p)
}

// The builder signatures used below.
type (
	cT     = *ggmlref.Tensor
	fnA    func(ctx uintptr, a cT) cT
	fnAB   func(ctx uintptr, a, b cT) cT
	fnABC  func(ctx uintptr, a, b, c cT) cT
	fnABI  func(ctx uintptr, a, b cT, i int32) cT
	fnAI   func(ctx uintptr, a cT, i int32) cT
	fnAIB  func(ctx uintptr, a cT, i int32, flag bool) cT
	fnAF   func(ctx uintptr, a cT, x float32) cT
	fnAFF  func(ctx uintptr, a cT, x, y float32) cT
	fnAFB  func(ctx uintptr, a cT, x float32, flag bool) cT
	fnABF  func(ctx uintptr, a, b cT, x float32) cT
	fnABFF func(ctx uintptr, a, b cT, x, y float32) cT
	fnAF4  func(ctx uintptr, a cT, x, y, z, w float32) cT
)

// TestElementwiseBuildersMatchGGML calls each builder and ggml's own on
// matching inputs and compares what ggml.c decides: result type, shape,
// strides, op, op_params, sources and whether (and where) it is a view.
func TestElementwiseBuildersMatchGGML(t *testing.T) {
	g := loadGGMLBuilders(t)
	type call struct {
		sym  string
		ours func(c *graph.Context, in []*graph.Tensor) *graph.Tensor
		ref  func(ctx uintptr, in []cT) cT
	}
	var calls []call
	unaryFns := map[string]func(c *graph.Context, a *graph.Tensor) *graph.Tensor{
		"ggml_sqr": (*graph.Context).Sqr, "ggml_sqr_inplace": (*graph.Context).SqrInplace,
		"ggml_sqrt": (*graph.Context).Sqrt, "ggml_log_inplace": (*graph.Context).LogInplace,
		"ggml_sin": (*graph.Context).Sin, "ggml_cos_inplace": (*graph.Context).CosInplace,
		"ggml_abs": (*graph.Context).Abs, "ggml_sgn_inplace": (*graph.Context).SgnInplace,
		"ggml_neg": (*graph.Context).Neg, "ggml_step": (*graph.Context).Step,
		"ggml_tanh": (*graph.Context).Tanh, "ggml_elu_inplace": (*graph.Context).ELUInplace,
		"ggml_relu": (*graph.Context).ReLU, "ggml_sigmoid": (*graph.Context).Sigmoid,
		"ggml_gelu": (*graph.Context).GELU, "ggml_gelu_erf_inplace": (*graph.Context).GELUERFInplace,
		"ggml_gelu_quick": (*graph.Context).GELUQuick, "ggml_silu_inplace": (*graph.Context).SiLUInplace,
		"ggml_hardswish": (*graph.Context).HardSwish, "ggml_hardsigmoid": (*graph.Context).HardSigmoid,
		"ggml_exp": (*graph.Context).Exp, "ggml_expm1": (*graph.Context).Expm1,
		"ggml_softplus_inplace": (*graph.Context).SoftplusInplace, "ggml_floor": (*graph.Context).Floor,
		"ggml_ceil_inplace": (*graph.Context).CeilInplace, "ggml_round": (*graph.Context).Round,
		"ggml_trunc": (*graph.Context).Trunc,
		"ggml_reglu": (*graph.Context).ReGLU, "ggml_geglu_swapped": (*graph.Context).GeGLUSwapped,
		"ggml_swiglu": (*graph.Context).SwiGLU, "ggml_geglu_erf_swapped": (*graph.Context).GeGLUERFSwapped,
		"ggml_geglu_quick": (*graph.Context).GeGLUQuick, "ggml_reglu_swapped": (*graph.Context).ReGLUSwapped,
	}
	for sym, f := range unaryFns {
		var fn fnA
		register(t, g, sym, &fn)
		calls = append(calls, call{sym,
			func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return f(c, in[0]) },
			func(ctx uintptr, in []cT) cT { return fn(ctx, in[0]) }})
	}
	binaryFns := map[string]func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor{
		"ggml_add": (*graph.Context).Add, "ggml_add_inplace": (*graph.Context).AddInplace,
		"ggml_sub": (*graph.Context).Sub, "ggml_mul_inplace": (*graph.Context).MulInplace,
		"ggml_div":          (*graph.Context).Div,
		"ggml_swiglu_split": (*graph.Context).SwiGLUSplit, "ggml_geglu_quick_split": (*graph.Context).GeGLUQuickSplit,
	}
	for sym, f := range binaryFns {
		var fn fnAB
		register(t, g, sym, &fn)
		calls = append(calls, call{sym,
			func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return f(c, in[0], in[1]) },
			func(ctx uintptr, in []cT) cT { return fn(ctx, in[0], in[1]) }})
	}
	var (
		add1, add1In              fnAB
		addCast, gluSplit         fnABI
		addID                     fnABC
		scale, fill, fillIn       fnAF
		scaleBias, clamp, clampIn fnAFF
		leaky                     fnAFB
		tri, unary                fnAI
		glu                       fnAIB
		swigluClamp               fnABF
		swigluOAI                 fnABFF
		xielu                     fnAF4
	)
	register(t, g, "ggml_add1", &add1)
	register(t, g, "ggml_add1_inplace", &add1In)
	register(t, g, "ggml_add_cast", &addCast)
	register(t, g, "ggml_glu_split", &gluSplit)
	register(t, g, "ggml_add_id", &addID)
	register(t, g, "ggml_scale", &scale)
	register(t, g, "ggml_fill", &fill)
	register(t, g, "ggml_fill_inplace", &fillIn)
	register(t, g, "ggml_scale_bias_inplace", &scaleBias)
	register(t, g, "ggml_clamp", &clamp)
	register(t, g, "ggml_clamp_inplace", &clampIn)
	register(t, g, "ggml_leaky_relu", &leaky)
	register(t, g, "ggml_tri", &tri)
	register(t, g, "ggml_unary_inplace", &unary)
	register(t, g, "ggml_glu", &glu)
	register(t, g, "ggml_swiglu_clamp", &swigluClamp)
	register(t, g, "ggml_swiglu_oai", &swigluOAI)
	register(t, g, "ggml_xielu", &xielu)
	calls = append(calls,
		call{"ggml_add1", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Add1(in[0], in[3]) },
			func(ctx uintptr, in []cT) cT { return add1(ctx, in[0], in[3]) }},
		call{"ggml_add1_inplace", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Add1Inplace(in[0], in[3]) },
			func(ctx uintptr, in []cT) cT { return add1In(ctx, in[0], in[3]) }},
		call{"ggml_add_cast", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.AddCast(in[2], in[1], quant.F32) },
			func(ctx uintptr, in []cT) cT { return addCast(ctx, in[2], in[1], int32(quant.F32)) }},
		call{"ggml_glu_split", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor {
			return c.GLUSplit(in[0], in[1], ops.GLUSwiGLUClamp)
		}, func(ctx uintptr, in []cT) cT { return gluSplit(ctx, in[0], in[1], int32(ops.GLUSwiGLUClamp)) }},
		call{"ggml_add_id", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.AddID(in[5], in[6], in[4]) },
			func(ctx uintptr, in []cT) cT { return addID(ctx, in[5], in[6], in[4]) }},
		call{"ggml_scale", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Scale(in[0], 0.25) },
			func(ctx uintptr, in []cT) cT { return scale(ctx, in[0], 0.25) }},
		call{"ggml_fill", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Fill(in[0], -3) },
			func(ctx uintptr, in []cT) cT { return fill(ctx, in[0], -3) }},
		call{"ggml_fill_inplace", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.FillInplace(in[2], 1.5) },
			func(ctx uintptr, in []cT) cT { return fillIn(ctx, in[2], 1.5) }},
		call{"ggml_scale_bias_inplace", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor {
			return c.ScaleBiasInplace(in[0], 2, -1)
		}, func(ctx uintptr, in []cT) cT { return scaleBias(ctx, in[0], 2, -1) }},
		call{"ggml_clamp", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Clamp(in[2], -1, 2) },
			func(ctx uintptr, in []cT) cT { return clamp(ctx, in[2], -1, 2) }},
		call{"ggml_clamp_inplace", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.ClampInplace(in[0], -1, 2) },
			func(ctx uintptr, in []cT) cT { return clampIn(ctx, in[0], -1, 2) }},
		call{"ggml_leaky_relu", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.LeakyReLU(in[0], 0.1, true) },
			func(ctx uintptr, in []cT) cT { return leaky(ctx, in[0], 0.1, true) }},
		call{"ggml_tri", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.Tri(in[7], ops.TriLowerDiag) },
			func(ctx uintptr, in []cT) cT { return tri(ctx, in[7], int32(ops.TriLowerDiag)) }},
		call{"ggml_unary_inplace", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor {
			return c.UnaryInplace(in[8], ops.UnaryTanh)
		}, func(ctx uintptr, in []cT) cT { return unary(ctx, in[8], int32(ops.UnaryTanh)) }},
		call{"ggml_glu", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.GLU(in[8], ops.GLUGeGLUERF, true) },
			func(ctx uintptr, in []cT) cT { return glu(ctx, in[8], int32(ops.GLUGeGLUERF), true) }},
		call{"ggml_swiglu_clamp", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.SwiGLUClamp(in[0], nil, 7.5) },
			func(ctx uintptr, in []cT) cT { return swigluClamp(ctx, in[0], nil, 7.5) }},
		call{"ggml_swiglu_clamp", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor {
			return c.SwiGLUClamp(in[0], in[1], 3)
		}, func(ctx uintptr, in []cT) cT { return swigluClamp(ctx, in[0], in[1], 3) }},
		call{"ggml_swiglu_oai", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor {
			return c.SwiGLUOAI(in[0], in[1], 1.702, 7)
		}, func(ctx uintptr, in []cT) cT { return swigluOAI(ctx, in[0], in[1], 1.702, 7) }},
		call{"ggml_xielu", func(c *graph.Context, in []*graph.Tensor) *graph.Tensor { return c.XIELU(in[2], 4, 20, 0.5, 1e-7) },
			func(ctx uintptr, in []cT) cT { return xielu(ctx, in[2], 4, 20, 0.5, 1e-7) }},
	)

	// The inputs, made alike on both sides: 0 and 1 F32 [8,3,2], 2 F16
	// [8,3,2], 3 an F32 scalar, 4-6 ADD_ID's ids, a and b, 7 a square F32
	// matrix, 8 a strided view of 0 (rows of 4 in rows of 8).
	type input struct {
		typ quant.Type
		ne  [4]int64
	}
	dense := []input{
		{quant.F32, [4]int64{8, 3, 2, 1}}, {quant.F32, [4]int64{8, 3, 2, 1}}, {quant.F16, [4]int64{8, 3, 2, 1}},
		{quant.F32, [4]int64{1, 1, 1, 1}}, {quant.I32, [4]int64{3, 2, 1, 1}}, {quant.F32, [4]int64{8, 3, 2, 1}},
		{quant.F32, [4]int64{8, 5, 1, 1}}, {quant.F32, [4]int64{4, 4, 3, 1}},
	}
	var viewND func(ctx uintptr, a cT, ne0, ne1, ne2 int64, nb1, nb2 uint64, offs uint64) cT
	register(t, g, "ggml_view_3d", &viewND)
	for _, k := range calls {
		t.Run(k.sym, func(t *testing.T) {
			c := graph.NewContext(graph.ContextOptions{})
			var ours []*graph.Tensor
			var refs []cT
			for _, in := range dense {
				ours = append(ours, c.NewTensor(in.typ, in.ne[:]...))
				ne := in.ne
				refs = append(refs, g.newT(g.ctx, int32(in.typ), 4, &ne[0]))
			}
			ours = append(ours, c.View3D(ours[0], 4, 3, 2, ours[0].Nb[1], ours[0].Nb[2], 0))
			refs = append(refs, viewND(g.ctx, refs[0], 4, 3, 2, refs[0].Nb[1], refs[0].Nb[2], 0))
			o := k.ours(c, ours)
			require.NoError(t, c.Err())
			r := k.ref(g.ctx, refs)
			require.NotNil(t, r)
			index := func(ts []*graph.Tensor, x *graph.Tensor) int {
				for i, y := range ts {
					if x == y {
						return i
					}
				}
				return -1
			}
			indexC := func(x cT) int {
				for i, y := range refs {
					if x == y {
						return i
					}
				}
				return -1
			}
			require.Equal(t, quant.Type(r.Type), o.Type, "type")
			require.Equal(t, r.Ne, o.Ne, "ne")
			require.Equal(t, r.Nb, o.Nb, "nb")
			require.Equal(t, ops.Op(r.Op), o.Op, "op")
			require.Equal(t, r.OpParams, [16]int32(o.Params), "op_params")
			for i := range graph.MaxSrc {
				if r.Src[i] == nil {
					require.Nil(t, o.Src[i], "src %d", i)
					continue
				}
				require.Equal(t, indexC(r.Src[i]), index(ours, o.Src[i]), "src %d", i)
			}
			require.Equal(t, r.ViewSrc != nil, o.ViewSrc != nil, "view")
			if r.ViewSrc != nil {
				require.Equal(t, indexC(r.ViewSrc), index(ours, o.ViewSrc), "view source")
				require.Equal(t, r.ViewOffs, o.ViewOffs, "view offset")
			}
		})
	}
}
