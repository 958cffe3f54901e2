package cpu

import (
	"math"
	"sync"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// ggml's CPU backend computes GELU and GELU_QUICK (and the gates built on
// them) through tables indexed by the F16 bits of the input, even for F32
// tensors (GGML_GELU_FP16, GGML_GELU_QUICK_FP16): the result is the F16
// rounding of the function at the F16 rounding of x. The 0.25.1 library
// does this too; matching it keeps us within test-backend-ops' 1e-7.
// Each build fills its tables with its own arithmetic in ggml_cpu_init:
// the FMA builds (haswell and up, and ARM's) contract GELU's
// 1 + a*x*x into a fused multiply-add, which moves one entry of the 65,536
// (TestGELUTablesMatchGGML), so the kernel sets that stand for those
// builds (vecKernels.contracts) take a table computed the same way.

type geluTables struct {
	gelu, quick [1 << 16]uint16
}

var (
	geluOnce [2]sync.Once
	geluTab  [2]*geluTables
)

// geluTable returns the tables of the kernel set in use (vec), built on
// first use (ggml builds them in ggml_cpu_init).
func geluTable() *geluTables { return geluTableFor(vec.contracts) }

// geluTableFor returns the tables as a build with (fused) or without FMA
// contraction fills them.
func geluTableFor(fused bool) *geluTables {
	i := 0
	if fused {
		i = 1
	}
	geluOnce[i].Do(func() {
		t := new(geluTables)
		for j := range t.gelu {
			x := quant.FP16ToFP32(uint16(j))
			t.gelu[j] = quant.FP32ToFP16(geluTanhF32(x, fused))
			t.quick[j] = quant.FP32ToFP16(geluQuickF32(x))
		}
		geluTab[i] = t
	})
	return geluTab[i]
}

// GELU constants as ggml's vec.h spells them (float).
const (
	geluCoefA      float32 = 0.044715
	geluQuickCoef  float32 = -1.702
	sqrt2OverPiF32 float32 = 0.79788456080286535587989211986876
)

// geluTanhF32 is ggml_gelu_f32, 0.5x(1 + tanh(sqrt(2/pi) x (1 + a x^2))),
// with 1 + (a x) x rounded once when fused.
func geluTanhF32(x float32, fused bool) float32 {
	inner := 1 + float32(geluCoefA*x*x)
	if fused {
		inner = fma32(geluCoefA*x, x, 1)
	}
	return 0.5 * x * (1 + tanhf(sqrt2OverPiF32*x*inner))
}

// fma32 is a*b + c rounded once to float32, for results in float32's
// normal range (and infinities, NaN): a*b is exact in float64 and the sum
// rounds there once; that rounding can only mislead the final one when it
// lands on a midpoint between two floats that the exact sum was not on,
// so there it is moved a float64 ulp toward the exact sum (whose error
// TwoSum gives).
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	bb := s - p
	err := (p - (s - bb)) + (float64(c) - bb)
	if bits := math.Float64bits(s); bits&(1<<29-1) == 1<<28 && err != 0 {
		if (err > 0) == (s > 0) {
			bits++
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}

func geluQuickF32(x float32) float32 { return x * (1 / (1 + libcExpf(geluQuickCoef*x))) }

// geluLookup is ggml_vec_gelu_f32 / ggml_vec_gelu_quick_f32 on one element:
// the table at x rounded to F16. GELU (clamped) saturates outside ±10 first.
func geluLookup(tab *[1 << 16]uint16, clamped bool, x float32) float32 {
	if clamped {
		if x <= -10 {
			return 0
		}
		if x >= 10 {
			return x
		}
	}
	return quant.FP16ToFP32(tab[quant.FP32ToFP16(x)])
}

// computeGELU is UNARY GELU or GELU_QUICK through tab. An F16 input indexes
// the table directly, which is the same as the F32 path without clamping.
func computeGELU(p *Params, t *graph.Tensor, tab *[1 << 16]uint16) {
	clamped := t.Params.Unary() == ops.UnaryGELU && t.Type == quant.F32
	ewMap(p, t, func(x float32) float32 { return geluLookup(tab, clamped, x) })
}

// gluFunc returns GLU's element function out(x, g) for t's parameters and
// type (the F32 GELU gates saturate before the table; the F16 ones index it
// directly).
func gluFunc(t *graph.Tensor) func(x, g float32) float32 {
	gp := ops.GLUParamsOf(t.Params)
	f32 := t.Type == quant.F32
	switch gp.Op {
	case ops.GLUReGLU:
		return func(x, g float32) float32 {
			if x > 0 {
				return x * g
			}
			return 0
		}
	case ops.GLUGeGLU:
		tab := &geluTable().gelu
		return func(x, g float32) float32 {
			if f32 && x <= -10 {
				return 0
			}
			if f32 && x >= 10 {
				return x * g
			}
			return geluLookup(tab, false, x) * g
		}
	case ops.GLUSwiGLU:
		return func(x, g float32) float32 { return libcSiLU(x) * g }
	case ops.GLUSwiGLUOAI:
		return func(x, g float32) float32 {
			x = stdMin(x, gp.Limit)
			g = stdClamp(g, -gp.Limit, gp.Limit)
			return x / (1 + libcExpf(gp.Alpha*(-x))) * (g + 1)
		}
	case ops.GLUGeGLUERF:
		return func(x, g float32) float32 { return geluERF(x) * g }
	case ops.GLUGeGLUQuick:
		tab := &geluTable().quick
		return func(x, g float32) float32 { return geluLookup(tab, false, x) * g }
	case ops.GLUSwiGLUClamp:
		return func(x, g float32) float32 {
			x = stdMin(x, gp.Limit)
			g = stdClamp(g, -gp.Limit, gp.Limit)
			return libcSiLU(x) * g
		}
	}
	return nil
}

// supportsGLU: F32 or F16 (SWIGLU_OAI: F32 only), every tensor walkable as
// one sequence of rows, the result of the shape the builder gives.
func supportsGLU(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	gp := ops.GLUParamsOf(t.Params)
	if a == nil || !gp.Op.Valid() {
		return false
	}
	if gp.Op == ops.GLUSwiGLUOAI {
		if !ewSameType(t, quant.F32) {
			return false
		}
	} else if !ewSameType(t, quant.F32, quant.F16) {
		return false
	}
	nc := a.Ne[0] / 2
	if b != nil {
		if b.Type != a.Type || !graph.SameShape(a, b) || !ewFlatRows(b) {
			return false
		}
		nc = a.Ne[0]
	}
	return t.Ne[0] == nc && t.Ne[1] == a.Ne[1] && t.Ne[2] == a.Ne[2] && t.Ne[3] == a.Ne[3] &&
		ewFlatRows(a) && ewFlatRows(t)
}

func computeGLU(p *Params, t *graph.Tensor) {
	a, b := t.Src[0], t.Src[1]
	if computeGLUF32(p, t) {
		return
	}
	f := gluFunc(t)
	nc := t.Ne[0]
	// x is the activation's input, g the gate it multiplies.
	x := make([]float32, nc)
	g := make([]float32, nc)
	var whole []float32
	if b == nil {
		whole = make([]float32, a.Ne[0])
	}
	swapped := ops.GLUParamsOf(t.Params).Swapped
	out := make([]float32, nc)
	forRows(p, t, func(i1, i2, i3 int64) {
		if b != nil {
			ewReadRow(a, ewRowOffset(a, i1, i2, i3), x)
			ewReadRow(b, ewRowOffset(b, i1, i2, i3), g)
		} else {
			ewReadRow(a, ewRowOffset(a, i1, i2, i3), whole)
			lo, hi := whole[:nc], whole[nc:2*nc]
			if swapped {
				lo, hi = hi, lo
			}
			copy(x, lo)
			copy(g, hi)
		}
		for i := range out {
			out[i] = f(x[i], g[i])
		}
		ewWriteRow(t, ewRowOffset(t, i1, i2, i3), out)
	})
}

// computeGLUF32 is GLU of F32 sources into F32 on rows viewed in place,
// without a copy per row: SWIGLU through the vector SiLU
// (ggml_vec_swiglu_f32), GEGLU through the GELU table in a loop of its
// own, the others through gluFunc. It returns false, having done nothing,
// for other types or unaligned rows.
func computeGLUF32(p *Params, t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a.Type != quant.F32 || t.Type != quant.F32 || a.Nb[0] != 4 || t.Nb[0] != 4 || !f32Aligned(a) || !f32Aligned(t) ||
		b != nil && (b.Type != quant.F32 || b.Nb[0] != 4 || !f32Aligned(b)) {
		return false
	}
	gp := ops.GLUParamsOf(t.Params)
	var f func(x, g float32) float32
	var tab *[1 << 16]uint16
	switch gp.Op {
	case ops.GLUSwiGLU:
	case ops.GLUGeGLU:
		tab = &geluTable().gelu
	default:
		f = gluFunc(t)
	}
	n := t.Ne[0]
	lo, hi := p.Rows(t.NRows())
	for r := lo; r < hi; r++ {
		i1, i2, i3 := r%t.Ne[1], r/t.Ne[1]%t.Ne[2], r/(t.Ne[1]*t.Ne[2])
		var x, g []float32
		if b != nil {
			x = f32Row(a.Data, ewRowOffset(a, i1, i2, i3), n)
			g = f32Row(b.Data, ewRowOffset(b, i1, i2, i3), n)
		} else {
			whole := f32Row(a.Data, ewRowOffset(a, i1, i2, i3), 2*n)
			x, g = whole[:n], whole[n:2*n]
			if gp.Swapped {
				x, g = g, x
			}
		}
		out := f32Row(t.Data, ewRowOffset(t, i1, i2, i3), n)
		switch gp.Op {
		case ops.GLUSwiGLU:
			vec.swiglu(out, x, g)
		case ops.GLUGeGLU:
			gegluF32(out, x, g, tab)
		default:
			for i := range out {
				out[i] = f(x[i], g[i])
			}
		}
	}
	return true
}

// gegluF32 is ggml_vec_geglu_f32: 0 below -10, x*g above 10, else the
// table at x's F16 bits times g.
func gegluF32(out, x, g []float32, tab *[1 << 16]uint16) {
	x, g = x[:len(out)], g[:len(out)]
	for i, v := range x {
		switch {
		case v <= -10:
			out[i] = 0
		case v >= 10:
			out[i] = v * g[i]
		default:
			out[i] = quant.FP16ToFP32(tab[quant.FP32ToFP16(v)]) * g[i]
		}
	}
}
