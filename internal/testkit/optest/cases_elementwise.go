package optest

import (
	"fmt"
	"strings"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func init() {
	Register("elementwise", elementwiseCases)
	var unaryNames []string
	for u := ops.UnaryOp(0); u < ops.UnaryOpCount; u++ {
		if u != ops.UnaryXIELU {
			unaryNames = append(unaryNames, u.String())
		}
	}
	RegisterDescribed(unaryNames, unaryFromDesc)
	RegisterDescribed([]string{"XIELU"}, xieluFromDesc)
	var gluNames []string
	for g := ops.GluOp(0); g < ops.GluOpCount; g++ {
		gluNames = append(gluNames, g.String())
	}
	RegisterDescribed(gluNames, gluFromDesc)
	RegisterDescribed([]string{"SQR", "SQRT", "LOG", "SIN", "COS", "CLAMP"}, mathFromDesc)
	RegisterDescribed([]string{"LEAKY_RELU"}, leakyReLUFromDesc)
	RegisterDescribed([]string{"SCALE"}, scaleFromDesc)
	RegisterDescribed([]string{"FILL"}, fillFromDesc)
	RegisterDescribed([]string{"TRI"}, triFromDesc)
}

// withSuffix appends a bare word to a case name's parameters
// ("GEGLU(...,v=0)" -> "GEGLU(...,v=0,split)").
func withSuffix(name, word string) string { return strings.TrimSuffix(name, ")") + "," + word + ")" }

// viewedInput is test-backend-ops' "v" input: with v&1 a view of shape ne
// into a larger tensor (each dimension multiplied by grow), so rows are
// not adjacent; otherwise a plain tensor.
func viewedInput(c *graph.Context, typ quant.Type, ne [4]int64, v int, grow [4]int64) *graph.Tensor {
	if v&1 == 0 {
		return c.NewTensor(typ, ne[:]...)
	}
	a := c.NewTensor(typ, ne[0]*grow[0], ne[1]*grow[1], ne[2]*grow[2], ne[3]*grow[3])
	return c.View4D(a, ne[0], ne[1], ne[2], ne[3], a.Nb[1], a.Nb[2], a.Nb[3], 0)
}

// unaryCase is test_unary: inputs from [-150, 150] (±10 for F16 EXP and
// EXPM1, which would overflow), a strided view of a larger tensor when v&1.
func unaryCase(op ops.UnaryOp, typ quant.Type, ne [4]int64, v int) Case {
	lo, hi := float32(-150), float32(150)
	if typ == quant.F16 && (op == ops.UnaryExp || op == ops.UnaryExpm1) {
		lo, hi = -10, 10
	}
	return Case{
		Name: Fmt(op.String(), "type", typ, "ne_a", ne, "v", v),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := viewedInput(c, typ, ne, v, [4]int64{3, 2, 5, 4})
			return []*graph.Tensor{c.Unary(a, op)}
		},
		Init: uniformInit(lo, hi),
	}
}

// unaryToF32Case is a generic unary op from F16 or BF16 into F32, a type
// pair ggml's kernels compute though no builder makes it (the node is
// made directly). XIELU gets parameters as its kernel reads them.
func unaryToF32Case(op ops.UnaryOp, typ quant.Type, ne [4]int64) Case {
	p := ops.UnaryParams{Op: op}.Params()
	if op == ops.UnaryXIELU {
		p = ops.XIELUParams{AlphaN: 4.5, AlphaP: 20, Beta: 0.5, Eps: 1e-7}.Params()
	}
	return Case{
		Name: Fmt(op.String(), "type", typ, "type_dst", quant.F32, "ne_a", ne),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typ, ne[:]...)
			return []*graph.Tensor{c.NewOp(ops.Unary, quant.F32, a.Ne, p, a)}
		},
		Init: uniformInit(-10, 10),
	}
}

// xieluCase is test_xielu.
func xieluCase(typ quant.Type, ne [4]int64) Case {
	return Case{
		Name: Fmt("XIELU", "type", typ, "ne", ne),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.XIELU(c.NewTensor(typ, ne[:]...), 4, 20, 0.5, 0.0000001)}
		},
		Init: uniformInit(-1, 1),
	}
}

// gluCase is test_glu (fused halves, optionally swapped) or, when split,
// test_glu_split; with v&1 the inputs are views into rows three times as
// long. Inputs come from [-150, 150].
func gluCase(op ops.GluOp, typ quant.Type, ne [4]int64, v int, swapped, split bool) Case {
	name := Fmt(op.String(), "type", typ, "ne_a", ne, "v", v, "swapped", b2i(swapped))
	if split {
		name = withSuffix(Fmt(op.String(), "type", typ, "ne_a", ne, "v", v), "split")
	}
	grow := [4]int64{3, 1, 1, 1}
	return Case{
		Name: name,
		Build: func(c *graph.Context) []*graph.Tensor {
			a := viewedInput(c, typ, ne, v, grow)
			if split {
				return []*graph.Tensor{c.GLUSplit(a, viewedInput(c, typ, ne, v, grow), op)}
			}
			return []*graph.Tensor{c.GLU(a, op, swapped)}
		},
		Init: uniformInit(-150, 150),
	}
}

// swigluOAICase is test_swiglu_oai (split inputs).
func swigluOAICase(typ quant.Type, ne [4]int64, v int, alpha, limit float32) Case {
	grow := [4]int64{3, 1, 1, 1}
	return Case{
		Name: Fmt("SWIGLU_OAI", "type", typ, "ne_a", ne, "v", v, "alpha", fmtF(alpha), "limit", fmtF(limit)),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := viewedInput(c, typ, ne, v, grow)
			b := viewedInput(c, typ, ne, v, grow)
			return []*graph.Tensor{c.SwiGLUOAI(a, b, alpha, limit)}
		},
		Init: uniformInit(-150, 150),
	}
}

// swigluClampCase is ggml 0.25.1's SWIGLU_CLAMP (no test-backend-ops case
// in 0.21.0): split inputs, or the halves of a's rows, modelled on
// test_swiglu_oai.
func swigluClampCase(typ quant.Type, ne [4]int64, v int, limit float32, split bool) Case {
	name := Fmt("SWIGLU_CLAMP", "type", typ, "ne_a", ne, "v", v, "limit", fmtF(limit))
	if split {
		name = withSuffix(name, "split")
	}
	grow := [4]int64{3, 1, 1, 1}
	return Case{
		Name: name,
		Build: func(c *graph.Context) []*graph.Tensor {
			a := viewedInput(c, typ, ne, v, grow)
			var b *graph.Tensor
			if split {
				b = viewedInput(c, typ, ne, v, grow)
			}
			return []*graph.Tensor{c.SwiGLUClamp(a, b, limit)}
		},
		Init: uniformInit(-150, 150),
	}
}

// mathOp is one of the parameterless element-wise ops with their own
// test-backend-ops class (test_sqr, test_floor, ...), with the input range
// that class uses.
type mathOp struct {
	name   string
	build  func(c *graph.Context, a *graph.Tensor) *graph.Tensor
	lo, hi float32
	// ne is the class's default shape.
	ne [4]int64
}

var mathOps = []mathOp{
	{"SQR", (*graph.Context).Sqr, -1, 1, [4]int64{10, 5, 4, 3}},
	{"SQRT", (*graph.Context).Sqrt, 50, 100, [4]int64{10, 3, 3, 2}},
	{"LOG", (*graph.Context).Log, 0.9, 1.1, [4]int64{10, 5, 4, 3}},
	{"SIN", (*graph.Context).Sin, -6.5, 6.5, [4]int64{10, 2, 2, 2}},
	{"COS", (*graph.Context).Cos, -6.5, 6.5, [4]int64{10, 2, 2, 2}},
	{"FLOOR", (*graph.Context).Floor, -10, 10, [4]int64{10, 2, 2, 2}},
	{"CEIL", (*graph.Context).Ceil, -10, 10, [4]int64{10, 2, 2, 2}},
	{"ROUND", (*graph.Context).Round, -10, 10, [4]int64{10, 2, 2, 2}},
	{"TRUNC", (*graph.Context).Trunc, -10, 10, [4]int64{10, 2, 2, 2}},
}

// mathCase is test_sqr, test_sqrt, ..., test_trunc.
func mathCase(op mathOp, typ quant.Type, ne [4]int64) Case {
	return Case{
		Name: Fmt(op.name, "type", typ, "ne", ne),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{op.build(c, c.NewTensor(typ, ne[:]...))}
		},
		Init: uniformInit(op.lo, op.hi),
	}
}

// gapRows makes the view in viewedInput skip every other row, so rows are
// not one sequence at stride nb1.
var gapRows = [4]int64{1, 2, 1, 1}

// flatRowsBug is why ggml's CLAMP and LEAKY_RELU are wrong on gapRows views.
const flatRowsBug = "the kernel walks rows as j*nb1 for j < nrows, which is not where rows are when nb2 != ne1*nb1"

// clampCase is test_clamp; v=1 (not in test-backend-ops) clamps a view
// whose rows have gaps.
func clampCase(typ quant.Type, ne [4]int64, lo, hi float32, v int) Case {
	return gappedRowsCase(Fmt("CLAMP", "type", typ, "ne", ne, "min", fmtF(lo), "max", fmtF(hi)), typ, ne, v,
		func(c *graph.Context, in *graph.Tensor) *graph.Tensor { return c.Clamp(in, lo, hi) })
}

// leakyReLUCase is test_leaky_relu (in place, as there); v=1 (not in
// test-backend-ops) works on a view whose rows have gaps.
func leakyReLUCase(typ quant.Type, ne [4]int64, slope float32, v int) Case {
	return gappedRowsCase(Fmt("LEAKY_RELU", "type", typ, "ne_a", ne, "negative_slope", fmtF(slope)), typ, ne, v,
		func(c *graph.Context, in *graph.Tensor) *graph.Tensor { return c.LeakyReLU(in, slope, true) })
}

// gappedRowsCase applies op to an input of shape ne, or with v != 0 to a
// view of it whose rows have gaps: ggml's CLAMP and LEAKY_RELU read those
// as packed rows (flatRowsBug), so the case records the bug.
func gappedRowsCase(name string, typ quant.Type, ne [4]int64, v int, op func(c *graph.Context, in *graph.Tensor) *graph.Tensor) Case {
	bug := ""
	if v != 0 {
		name = withSuffix(name, fmt.Sprintf("v=%d", v))
		bug = flatRowsBug
	}
	return Case{
		Name: name,
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{op(c, viewedInput(c, typ, ne, v, gapRows))}
		},
		GGMLBug: bug,
	}
}

// scaleCase is test_scale.
func scaleCase(typ quant.Type, ne [4]int64, s, b float32, inplace bool) Case {
	return Case{
		Name: Fmt("SCALE", "type", typ, "ne", ne, "scale", fmtF(s), "bias", fmtF(b), "inplace", b2i(inplace)),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typ, ne[:]...)
			if inplace {
				return []*graph.Tensor{c.ScaleBiasInplace(a, s, b)}
			}
			return []*graph.Tensor{c.ScaleBias(a, s, b)}
		},
	}
}

// fillCase is test_fill.
func fillCase(typ quant.Type, ne [4]int64, v float32) Case {
	return Case{
		Name: Fmt("FILL", "type", typ, "ne", ne, "c", fmtF(v)),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.Fill(c.NewTensor(typ, ne[:]...), v)}
		},
	}
}

// triCase is test_tri.
func triCase(typ quant.Type, ne [4]int64, tri ops.TriType) Case {
	return Case{
		Name: Fmt("TRI", "type", typ, "ne", ne, "tri_type", int32(tri)),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.Tri(c.NewTensor(typ, ne[:]...), tri)}
		},
	}
}

// elementwiseCases are UNARY (all 22), GLU (all 7, fused, swapped and
// split), SQR, SQRT, LOG, SIN, COS, CLAMP, LEAKY_RELU, SCALE, FILL and TRI,
// after make_test_cases_eval, plus BF16 where ggml's CPU kernels take it.
func elementwiseCases(full bool) []Case {
	var cases []Case
	add := func(quick bool, c Case) {
		c.Full = !quick
		cases = append(cases, c)
	}
	shapes := [][4]int64{{128, 2, 2, 2}, {5, 7, 11, 13}}
	for _, typ := range []quant.Type{quant.F16, quant.F32} {
		for _, v := range []int{0, 1} {
			for u := ops.UnaryOp(0); u < ops.UnaryOpCount; u++ {
				if u == ops.UnaryXIELU {
					continue
				}
				for i, ne := range shapes {
					quick := typ == quant.F32 && v == 1 && i == 0 || typ == quant.F16 && v == 0 && i == 1
					add(quick, unaryCase(u, typ, ne, v))
				}
			}
		}
	}
	// BF16: ggml's generic unary kernels take it (GELU, GELU_ERF,
	// GELU_QUICK and SILU do not, and are left out).
	for u := ops.UnaryOp(0); u < ops.UnaryOpCount; u++ {
		switch u {
		case ops.UnaryXIELU, ops.UnaryGELU, ops.UnaryGELUERF, ops.UnaryGELUQuick, ops.UnarySiLU:
			continue
		}
		for _, v := range []int{0, 1} {
			add(false, unaryCase(u, quant.BF16, shapes[1], v))
		}
	}
	for _, typ := range []quant.Type{quant.F16, quant.BF16} {
		for _, u := range []ops.UnaryOp{ops.UnaryAbs, ops.UnaryTanh, ops.UnaryExp, ops.UnarySoftplus, ops.UnaryRound, ops.UnaryXIELU} {
			add(typ == quant.F16 && u == ops.UnaryTanh, unaryToF32Case(u, typ, [4]int64{33, 3, 2, 1}))
		}
	}
	add(true, xieluCase(quant.F32, [4]int64{10, 5, 4, 3}))
	add(false, xieluCase(quant.F16, [4]int64{10, 5, 4, 3}))
	add(false, xieluCase(quant.F32, [4]int64{512, 16, 1, 1}))
	add(false, xieluCase(quant.F16, [4]int64{512, 16, 1, 1}))

	for _, typ := range []quant.Type{quant.F16, quant.F32} {
		for _, v := range []int{0, 1} {
			for g := ops.GluOp(0); g < ops.GluOpCount; g++ {
				if g == ops.GLUSwiGLUOAI || g == ops.GLUSwiGLUClamp {
					continue
				}
				for _, swapped := range []bool{false, true} {
					for i, ne := range shapes {
						add(typ == quant.F32 && v == 1 && swapped && i == 1, gluCase(g, typ, ne, v, swapped, false))
					}
				}
				for i, ne := range shapes {
					add(typ == quant.F16 && v == 0 && i == 0, gluCase(g, typ, ne, v, false, true))
				}
			}
		}
	}
	for _, v := range []int{0, 1} {
		for _, alpha := range []float32{0.5, 1.702} {
			for _, limit := range []float32{2, 7} {
				add(v == 1 && alpha == 1.702 && limit == 7, swigluOAICase(quant.F32, shapes[0], v, alpha, limit))
			}
		}
	}
	for _, typ := range []quant.Type{quant.F16, quant.F32} {
		for _, v := range []int{0, 1} {
			for _, limit := range []float32{2, 7} {
				for _, split := range []bool{false, true} {
					for i, ne := range shapes {
						quick := limit == 2 && i == 1 && (typ == quant.F32 && v == 1 && !split || typ == quant.F16 && v == 0 && split)
						add(quick, swigluClampCase(typ, ne, v, limit, split))
					}
				}
			}
		}
	}

	for _, typ := range []quant.Type{quant.F16, quant.F32} {
		for _, op := range mathOps {
			for i, ne := range [][4]int64{op.ne, {7, 1, 5, 3}, {1024, 1024, 1, 1}} {
				add(i == 1 && typ == quant.F32 || i == 0 && typ == quant.F16, mathCase(op, typ, ne))
			}
		}
		for i, ne := range [][4]int64{{10, 5, 4, 3}, {7, 1, 5, 3}, {1024, 1024, 1, 1}} {
			add(i == 1, clampCase(typ, ne, -0.5, 0.5, 0))
			add(i == 0, leakyReLUCase(typ, ne, 0.1, 0))
		}
		add(typ == quant.F32, clampCase(typ, [4]int64{10, 5, 4, 3}, -0.5, 0.5, 1))
		add(typ == quant.F16, leakyReLUCase(typ, [4]int64{10, 5, 4, 3}, 0.1, 1))
	}
	for _, op := range mathOps {
		add(false, mathCase(op, quant.BF16, op.ne))
	}
	add(false, leakyReLUCase(quant.F32, [4]int64{10, 5, 4, 3}, 0.1, 0))

	add(true, scaleCase(quant.F32, [4]int64{10, 10, 10, 10}, 2, 0, false))
	add(true, scaleCase(quant.F32, [4]int64{10, 10, 10, 10}, 2, 1, false))
	add(true, scaleCase(quant.F32, [4]int64{10, 10, 10, 10}, 2, 1, true))
	add(false, scaleCase(quant.F32, [4]int64{100, 10, 10, 10}, 2, 1, false))

	for tri := ops.TriType(3); tri >= 0; tri-- {
		add(true, triCase(quant.F32, [4]int64{10, 10, 4, 3}, tri))
	}
	add(true, fillCase(quant.F32, [4]int64{10, 10, 4, 3}, 0))
	add(false, fillCase(quant.F32, [4]int64{303, 207, 11, 3}, 2))
	add(false, fillCase(quant.F32, [4]int64{800, 600, 4, 4}, -152))
	add(false, fillCase(quant.F32, [4]int64{2048, 512, 2, 2}, 3.5))
	add(true, fillCase(quant.F16, [4]int64{10, 10, 4, 3}, -1.25))
	return cases
}

func unaryFromDesc(op string, d Desc) (Case, error) {
	u, err := ops.ParseUnaryOp(op)
	if err != nil {
		return Case{}, err
	}
	if _, ok := d["ne_a"]; !ok {
		// test_floor, test_ceil, test_round and test_trunc.
		for _, m := range mathOps {
			if m.name == op {
				return mathFromDesc(op, d)
			}
		}
		return Case{}, fmt.Errorf("optest: %s description has no ne_a", op)
	}
	r := &descReader{d: d}
	c := unaryCase(u, r.dtype("type"), r.ne("ne_a"), r.num("v"))
	return c, r.err
}

func xieluFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := xieluCase(r.dtype("type"), r.ne("ne"))
	return c, r.err
}

func gluFromDesc(op string, d Desc) (Case, error) {
	g, err := ops.ParseGluOp(op)
	if err != nil {
		return Case{}, err
	}
	r := &descReader{d: d}
	typ, ne, v := r.dtype("type"), r.ne("ne_a"), r.num("v")
	split := r.has("split")
	var c Case
	switch {
	case g == ops.GLUSwiGLUOAI:
		c = swigluOAICase(typ, ne, v, r.float("alpha"), r.float("limit"))
	case g == ops.GLUSwiGLUClamp:
		c = swigluClampCase(typ, ne, v, r.float("limit"), split)
	case split:
		c = gluCase(g, typ, ne, v, false, true)
	default:
		c = gluCase(g, typ, ne, v, r.flag("swapped"), false)
	}
	return c, r.err
}

func mathFromDesc(op string, d Desc) (Case, error) {
	r := &descReader{d: d}
	typ, ne := r.dtype("type"), r.ne("ne")
	if op == "CLAMP" {
		c := clampCase(typ, ne, r.float("min"), r.float("max"), 0)
		return c, r.err
	}
	for _, m := range mathOps {
		if m.name == op {
			return mathCase(m, typ, ne), r.err
		}
	}
	return Case{}, fmt.Errorf("optest: %s is not an element-wise math op", op)
}

func leakyReLUFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := leakyReLUCase(r.dtype("type"), r.ne("ne_a"), r.float("negative_slope"), 0)
	return c, r.err
}

func scaleFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := scaleCase(r.dtype("type"), r.ne("ne"), r.float("scale"), r.float("bias"), r.flag("inplace"))
	return c, r.err
}

func fillFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := fillCase(r.dtype("type"), r.ne("ne"), r.float("c"))
	return c, r.err
}

func triFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := triCase(r.dtype("type"), r.ne("ne"), ops.TriType(r.num("tri_type")))
	return c, r.err
}
