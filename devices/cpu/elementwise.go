package cpu

import (
	"math"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Shared helpers of the element-wise kernels: whole rows are converted to
// float32, computed on, and converted back, as ggml's kernels do element by
// element (its conversions to and from F16/BF16 round the same way).

// ewRowOffset is the byte offset of row (i1, i2, i3) of t.
func ewRowOffset(t *graph.Tensor, i1, i2, i3 int64) uint64 {
	return uint64(i1)*t.Nb[1] + uint64(i2)*t.Nb[2] + uint64(i3)*t.Nb[3]
}

// ewReadRow reads len(dst) elements of t from byte offset off: float types
// element by element at stride Nb[0], quantized types as one dense row.
func ewReadRow(t *graph.Tensor, off uint64, dst []float32) {
	if isFloatType(t.Type) {
		for i := range dst {
			dst[i] = getF(t.Type, t.Data, off+uint64(i)*t.Nb[0])
		}
		return
	}
	n := uint64(t.Type.RowSize(int64(len(dst))))
	if err := quant.DequantizeInto(dst, t.Type, t.Data[off:off+n]); err != nil {
		panic(err)
	}
}

// ewWriteRow stores src into t from byte offset off, rounding to float
// types element by element and quantizing a quantized row as ggml's CPU
// from_float does.
func ewWriteRow(t *graph.Tensor, off uint64, src []float32) {
	if isFloatType(t.Type) {
		for i, v := range src {
			setF(t.Type, t.Data, off+uint64(i)*t.Nb[0], v)
		}
		return
	}
	n := uint64(t.Type.RowSize(int64(len(src))))
	fromFloat(t.Type, t.Data[off:off+n], src)
}

// ewDenseElems reports whether t's elements are adjacent within a row (the
// kernels' nb0 == sizeof(type) assertion).
func ewDenseElems(t *graph.Tensor) bool { return t.Nb[0] == uint64(t.Type.TypeSize()) }

// ewFlatRows reports whether t's rows can be walked as one sequence at
// stride Nb[1] with adjacent elements, as the ggml kernels that index rows
// by a single counter assert (GLU, XIELU). CLAMP and LEAKY_RELU walk rows
// that way too without asserting it, so ggml computes them wrongly on
// other layouts; the kernels here follow every stride and take any rows.
func ewFlatRows(t *graph.Tensor) bool { return ewDenseElems(t) && t.IsContiguous1() }

// ewNotPermuted is the quantized kernels' check that dst is neither
// transposed nor permuted.
func ewNotPermuted(t *graph.Tensor) bool {
	return t.Nb[0] <= t.Nb[1] && t.Nb[1] <= t.Nb[2] && t.Nb[2] <= t.Nb[3]
}

// ewMap computes dst = f(src) element by element, row by row, for the
// one-source kernels whose supports rule has checked types and layout; src
// and dst have the same shape.
func ewMap(p *Params, t *graph.Tensor, f func(float32) float32) {
	a := t.Src[0]
	row := make([]float32, t.Ne[0])
	forRows(p, t, func(i1, i2, i3 int64) {
		ewReadRow(a, ewRowOffset(a, i1, i2, i3), row)
		for i, x := range row {
			row[i] = f(x)
		}
		ewWriteRow(t, ewRowOffset(t, i1, i2, i3), row)
	})
}

// computeSiLUF32 is F32 SILU a row at a time through vec.silu: on rows
// viewed in place where both tensors' rows are aligned packed float32s,
// else copied in and out.
func computeSiLUF32(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	n := t.Ne[0]
	view := a.Nb[0] == 4 && t.Nb[0] == 4 && f32Aligned(a) && f32Aligned(t)
	var row []float32
	if !view {
		row = make([]float32, n)
	}
	forRows(p, t, func(i1, i2, i3 int64) {
		if view {
			vec.silu(f32Row(t.Data, ewRowOffset(t, i1, i2, i3), n), f32Row(a.Data, ewRowOffset(a, i1, i2, i3), n))
			return
		}
		ewReadRow(a, ewRowOffset(a, i1, i2, i3), row)
		vec.silu(row, row)
		ewWriteRow(t, ewRowOffset(t, i1, i2, i3), row)
	})
}

// ewSameType reports whether t and its first source have the same type,
// one of types.
func ewSameType(t *graph.Tensor, types ...quant.Type) bool {
	a := t.Src[0]
	if a == nil || a.Type != t.Type {
		return false
	}
	for _, typ := range types {
		if t.Type == typ {
			return true
		}
	}
	return false
}

// ewConvertingTypes reports whether (src, dst) is one of the type pairs of
// ggml's generic unary kernels: same-type F32, F16 or BF16, or F16/BF16 to
// F32.
func ewConvertingTypes(src, dst quant.Type) bool {
	switch {
	case src == dst:
		return isFloatType(src)
	case dst == quant.F32:
		return src == quant.F16 || src == quant.BF16
	}
	return false
}

// Float32 helpers with C's semantics. Transcendentals go through float64,
// which rounds correctly where glibc's float functions are within an ulp.

// expf is e^x: in float64, 2^n * p(r) with n = round(x / ln 2),
// r = x - n ln 2 (|r| <= ln2/2) and p exp's Taylor polynomial to degree 8
// (relative error under 1e-10 before the rounding to float32), which
// rounds as float32(math.Exp) does, at a third of its cost: softmax,
// flash attention and SiLU call it for every element.
func expf(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.72284:
		return float32(math.Inf(1))
	case x < -103.97208:
		return 0
	}
	const (
		log2e = 1.4426950408889634
		ln2hi = 6.93147180369123816490e-01
		ln2lo = 1.90821492927058770002e-10
	)
	// Every product is rounded before its sum (the conversions forbid the
	// compiler a fused multiply-add), so the bits are the same on every
	// architecture and level, and the kernels' (expfAVX2, expfNEON).
	xd := float64(x)
	ni := floorSmall(float64(xd*log2e) + 0.5)
	n := float64(ni)
	r := xd - float64(n*ln2hi) - float64(n*ln2lo)
	p := float64(r*(1.0/40320)) + 1.0/5040
	p = float64(r*p) + 1.0/720
	p = float64(r*p) + 1.0/120
	p = float64(r*p) + 1.0/24
	p = float64(r*p) + 1.0/6
	p = float64(r*p) + 1.0/2
	p = float64(r*p) + 1
	p = float64(r*p) + 1
	return float32(p * math.Float64frombits(uint64(ni+1023)<<52))
}

// floorSmall is math.Floor for |t| < 2^62 as an integer: truncation, one
// down for negative non-integers. math.Floor is an assembly call on amd64
// that cannot inline, and expf runs once per attention key.
func floorSmall(t float64) int64 {
	i := int64(t)
	if float64(i) > t {
		i--
	}
	return i
}

func expm1f(x float32) float32 { return float32(math.Expm1(float64(x))) }

func tanhf(x float32) float32 { return float32(math.Tanh(float64(x))) }

func erff(x float32) float32 { return float32(math.Erf(float64(x))) }

func logf(x float32) float32 { return float32(math.Log(float64(x))) }

// fminf and fmaxf return the other argument when one is NaN, as C's do.
func fminf(x, y float32) float32 {
	switch {
	case x != x:
		return y
	case y != y:
		return x
	case y < x:
		return y
	}
	return x
}

func fmaxf(x, y float32) float32 {
	switch {
	case x != x:
		return y
	case y != y:
		return x
	case y > x:
		return y
	}
	return x
}

// stdMin and stdClamp are C++'s std::min and std::clamp (NaN passes
// through std::min unless it is the bound).
func stdMin(x, limit float32) float32 {
	if limit < x {
		return limit
	}
	return x
}

func stdClamp(v, lo, hi float32) float32 {
	if v < lo {
		return lo
	}
	if hi < v {
		return hi
	}
	return v
}

// unaryFunc returns the element function of a generic unary kernel (the
// UNARY ops that take no parameters and are not table-driven, and SQR,
// SQRT, LOG, SIN, COS), or nil.
func unaryFunc(t *graph.Tensor) func(float32) float32 {
	switch t.Op {
	case ops.Sqr:
		return func(x float32) float32 { return x * x }
	case ops.Sqrt:
		return func(x float32) float32 { return float32(math.Sqrt(float64(x))) }
	case ops.Log:
		return logf
	case ops.Sin:
		return func(x float32) float32 { return float32(math.Sin(float64(x))) }
	case ops.Cos:
		return func(x float32) float32 { return float32(math.Cos(float64(x))) }
	case ops.Unary:
	default:
		return nil
	}
	switch t.Params.Unary() {
	case ops.UnaryAbs:
		return func(x float32) float32 { return float32(math.Abs(float64(x))) }
	case ops.UnarySgn:
		return func(x float32) float32 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		}
	case ops.UnaryNeg:
		return func(x float32) float32 { return -x }
	case ops.UnaryStep:
		return func(x float32) float32 {
			if x > 0 {
				return 1
			}
			return 0
		}
	case ops.UnaryTanh:
		return tanhf
	case ops.UnaryELU:
		return func(x float32) float32 {
			if x > 0 {
				return x
			}
			return expm1f(x)
		}
	case ops.UnaryReLU:
		return func(x float32) float32 {
			if x > 0 {
				return x
			}
			return 0
		}
	case ops.UnarySigmoid:
		return func(x float32) float32 { return 1 / (1 + libcExpf(-x)) }
	case ops.UnaryHardSigmoid:
		return func(x float32) float32 { return fminf(1, fmaxf(0, (x+3)/6)) }
	case ops.UnaryHardSwish:
		return func(x float32) float32 { return x * fminf(1, fmaxf(0, (x+3)/6)) }
	case ops.UnaryExp:
		return libcExpf
	case ops.UnaryExpm1:
		// ggml computes expf(x) - 1, not expm1f.
		return func(x float32) float32 { return libcExpf(x) - 1 }
	case ops.UnarySoftplus:
		return func(x float32) float32 {
			if x > 20 {
				return x
			}
			return logf(1 + libcExpf(x))
		}
	case ops.UnaryFloor:
		return func(x float32) float32 { return float32(math.Floor(float64(x))) }
	case ops.UnaryCeil:
		return func(x float32) float32 { return float32(math.Ceil(float64(x))) }
	case ops.UnaryRound:
		return func(x float32) float32 { return float32(math.Round(float64(x))) }
	case ops.UnaryTrunc:
		return func(x float32) float32 { return float32(math.Trunc(float64(x))) }
	}
	return nil
}

// supportsUnary covers SQR, SQRT, LOG, SIN, COS and UNARY.
func supportsUnary(t *graph.Tensor) bool {
	a := t.Src[0]
	if a == nil || !graph.SameShape(a, t) {
		return false
	}
	if t.Op == ops.Unary {
		switch t.Params.Unary() {
		case ops.UnaryGELU, ops.UnaryGELUERF, ops.UnaryGELUQuick, ops.UnarySiLU:
			// ggml's dedicated F32 and F16 kernels write the source type.
			return ewSameType(t, quant.F32, quant.F16) && a.IsContiguousRows() && t.IsContiguousRows()
		case ops.UnaryXIELU:
			return ewConvertingTypes(a.Type, t.Type) && ewFlatRows(a) && ewFlatRows(t)
		}
	}
	return unaryFunc(t) != nil && ewConvertingTypes(a.Type, t.Type) && ewDenseElems(a) && ewDenseElems(t)
}

func computeUnary(p *Params, t *graph.Tensor) {
	if f := unaryFunc(t); f != nil {
		ewMap(p, t, f)
		return
	}
	switch t.Params.Unary() {
	case ops.UnaryGELU:
		computeGELU(p, t, &geluTable().gelu)
	case ops.UnaryGELUQuick:
		computeGELU(p, t, &geluTable().quick)
	case ops.UnaryGELUERF:
		ewMap(p, t, geluERF)
	case ops.UnarySiLU:
		if t.Type == quant.F32 {
			// ggml_vec_silu_f32: the vector SiLU a row at a time.
			computeSiLUF32(p, t)
			return
		}
		ewMap(p, t, libcSiLU)
	case ops.UnaryXIELU:
		x := ops.XIELUParamsOf(t.Params)
		ewMap(p, t, func(v float32) float32 {
			if v > 0 {
				return float32(x.AlphaP*v*v) + float32(x.Beta*v)
			}
			return float32((expm1f(fminf(v, x.Eps))-v)*x.AlphaN) + float32(x.Beta*v)
		})
	}
}

// sqrt2Inv is ggml's SQRT_2_INV (float).
const sqrt2Inv float32 = 0.70710678118654752440084436210484

func geluERF(x float32) float32 { return 0.5 * x * (1 + erff(x*sqrt2Inv)) }

// supportsLeakyReLU: F32 or F16 with adjacent elements.
func supportsLeakyReLU(t *graph.Tensor) bool {
	a := t.Src[0]
	return ewSameType(t, quant.F32, quant.F16) && graph.SameShape(a, t) && ewDenseElems(a) && ewDenseElems(t)
}

func computeLeakyReLU(p *Params, t *graph.Tensor) {
	ns := ops.LeakyReLUParamsOf(t.Params).NegativeSlope
	ewMap(p, t, func(x float32) float32 {
		// Both terms, as ggml computes them, so -0 and NaN come out alike.
		pos, neg := float32(0), float32(0)
		if x > 0 {
			pos = x
		}
		if x < 0 {
			neg = x
		}
		return pos + float32(ns*neg)
	})
}

// supportsClamp: F32 or F16 with adjacent elements.
func supportsClamp(t *graph.Tensor) bool {
	a := t.Src[0]
	return ewSameType(t, quant.F32, quant.F16) && graph.SameShape(a, t) && ewDenseElems(a) && ewDenseElems(t)
}

func computeClamp(p *Params, t *graph.Tensor) {
	c := ops.ClampParamsOf(t.Params)
	ewMap(p, t, func(x float32) float32 {
		// ggml's MAX(MIN(x, max), min) macros: a NaN becomes max.
		if !(x < c.Max) {
			x = c.Max
		}
		if !(x > c.Min) {
			x = c.Min
		}
		return x
	})
}

// supportsScale: contiguous F32.
func supportsScale(t *graph.Tensor) bool {
	a := t.Src[0]
	return ewSameType(t, quant.F32) && graph.SameShape(a, t) && a.IsContiguous() && t.IsContiguous()
}

func computeScale(p *Params, t *graph.Tensor) {
	s := ops.ScaleParamsOf(t.Params)
	if s.Bias == 0 {
		ewMap(p, t, func(x float32) float32 { return x * s.Scale })
		return
	}
	ewMap(p, t, func(x float32) float32 { return float32(x*s.Scale) + s.Bias })
}

// supportsFill: F32 or F16 (the source's type) with adjacent elements.
func supportsFill(t *graph.Tensor) bool {
	return ewSameType(t, quant.F32, quant.F16) && t.IsContiguousRows()
}

func computeFill(p *Params, t *graph.Tensor) {
	row := make([]float32, t.Ne[0])
	c := ops.FillParamsOf(t.Params).C
	for i := range row {
		row[i] = c
	}
	forRows(p, t, func(i1, i2, i3 int64) {
		ewWriteRow(t, ewRowOffset(t, i1, i2, i3), row)
	})
}

// supportsTri: contiguous F32 source, a valid triangle type.
func supportsTri(t *graph.Tensor) bool {
	a := t.Src[0]
	return ewSameType(t, quant.F32) && graph.SameShape(a, t) && a.IsContiguous() &&
		t.IsContiguousRows() && ops.TriParamsOf(t.Params).Type.Valid()
}

func computeTri(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	tri := ops.TriParamsOf(t.Params).Type
	src := make([]float32, t.Ne[0])
	forRows(p, t, func(i1, i2, i3 int64) {
		ewReadRow(a, ewRowOffset(a, i1, i2, i3), src)
		for i0 := range src {
			if !tri.Keep(int64(i0), i1) {
				src[i0] = 0
			}
		}
		ewWriteRow(t, ewRowOffset(t, i1, i2, i3), src)
	})
}
