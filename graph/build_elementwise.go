package graph

import (
	"math"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// elementwise creates the result of a one-source op with parameters p: a
// new tensor of a's type and shape (ggml_dup_tensor), or a view of a when
// inplace (ggml_view_tensor).
func (c *Context) elementwise(op ops.Op, a *Tensor, p ops.Params, inplace bool) *Tensor {
	if !c.ok(op.String(), a) {
		return nil
	}
	if inplace {
		return c.newInplace(op, a, p, a)
	}
	return c.NewOp(op, a.Type, a.Ne, p, a)
}

// Sqr is x² element-wise.
func (c *Context) Sqr(a *Tensor) *Tensor { return c.elementwise(ops.Sqr, a, ops.Params{}, false) }

// SqrInplace is Sqr writing into a.
func (c *Context) SqrInplace(a *Tensor) *Tensor { return c.elementwise(ops.Sqr, a, ops.Params{}, true) }

// Sqrt is √x element-wise.
func (c *Context) Sqrt(a *Tensor) *Tensor { return c.elementwise(ops.Sqrt, a, ops.Params{}, false) }

// SqrtInplace is Sqrt writing into a.
func (c *Context) SqrtInplace(a *Tensor) *Tensor {
	return c.elementwise(ops.Sqrt, a, ops.Params{}, true)
}

// Log is the natural logarithm element-wise.
func (c *Context) Log(a *Tensor) *Tensor { return c.elementwise(ops.Log, a, ops.Params{}, false) }

// LogInplace is Log writing into a.
func (c *Context) LogInplace(a *Tensor) *Tensor { return c.elementwise(ops.Log, a, ops.Params{}, true) }

// Sin is sin(x) element-wise.
func (c *Context) Sin(a *Tensor) *Tensor { return c.elementwise(ops.Sin, a, ops.Params{}, false) }

// SinInplace is Sin writing into a.
func (c *Context) SinInplace(a *Tensor) *Tensor { return c.elementwise(ops.Sin, a, ops.Params{}, true) }

// Cos is cos(x) element-wise.
func (c *Context) Cos(a *Tensor) *Tensor { return c.elementwise(ops.Cos, a, ops.Params{}, false) }

// CosInplace is Cos writing into a.
func (c *Context) CosInplace(a *Tensor) *Tensor { return c.elementwise(ops.Cos, a, ops.Params{}, true) }

// scale is ggml_scale_impl: a must be padded 1-D.
func (c *Context) scale(a *Tensor, s, b float32, inplace bool) *Tensor {
	if !c.ok("Scale", a) {
		return nil
	}
	if !isPadded1D(a) {
		c.failf(ErrShape, "Scale", "%s is not padded 1-D", a)
		return nil
	}
	return c.elementwise(ops.Scale, a, ops.ScaleParams{Scale: s, Bias: b}.Params(), inplace)
}

// Scale is x*s element-wise.
func (c *Context) Scale(a *Tensor, s float32) *Tensor { return c.scale(a, s, 0, false) }

// ScaleInplace is Scale writing into a.
func (c *Context) ScaleInplace(a *Tensor, s float32) *Tensor { return c.scale(a, s, 0, true) }

// ScaleBias is x*s + b element-wise.
func (c *Context) ScaleBias(a *Tensor, s, b float32) *Tensor { return c.scale(a, s, b, false) }

// ScaleBiasInplace is ScaleBias writing into a.
func (c *Context) ScaleBiasInplace(a *Tensor, s, b float32) *Tensor { return c.scale(a, s, b, true) }

// Clamp limits every element to [min, max]. In ggml 0.25.1 ggml_clamp makes
// a new tensor; ClampInplace is the view.
func (c *Context) Clamp(a *Tensor, min, max float32) *Tensor {
	return c.elementwise(ops.Clamp, a, ops.ClampParams{Min: min, Max: max}.Params(), false)
}

// ClampInplace is Clamp writing into a.
func (c *Context) ClampInplace(a *Tensor, min, max float32) *Tensor {
	return c.elementwise(ops.Clamp, a, ops.ClampParams{Min: min, Max: max}.Params(), true)
}

// LeakyReLU is x for x > 0 and negativeSlope*x otherwise, as
// ggml_leaky_relu (which takes the in-place choice as an argument).
func (c *Context) LeakyReLU(a *Tensor, negativeSlope float32, inplace bool) *Tensor {
	return c.elementwise(ops.LeakyReLU, a, ops.LeakyReLUParams{NegativeSlope: negativeSlope}.Params(), inplace)
}

// fill is ggml_fill_impl: a must be a contiguous F32 or F16 tensor.
func (c *Context) fill(a *Tensor, v float32, inplace bool) *Tensor {
	if !c.ok("Fill", a) {
		return nil
	}
	if a.Type != quant.F32 && a.Type != quant.F16 {
		c.failf(ErrType, "Fill", "%s must be F32 or F16", a)
		return nil
	}
	if !a.IsContiguous() {
		c.failf(ErrShape, "Fill", "%s is not contiguous", a)
		return nil
	}
	return c.elementwise(ops.Fill, a, ops.FillParams{C: v}.Params(), inplace)
}

// Fill is a tensor shaped as a with every element v.
func (c *Context) Fill(a *Tensor, v float32) *Tensor { return c.fill(a, v, false) }

// FillInplace is Fill writing into a.
func (c *Context) FillInplace(a *Tensor, v float32) *Tensor { return c.fill(a, v, true) }

// Tri keeps one triangle of each square matrix of a (contiguous F32) and
// zeroes the rest, as ggml_tri.
func (c *Context) Tri(a *Tensor, typ ops.TriType) *Tensor {
	if !c.ok("Tri", a) {
		return nil
	}
	switch {
	case a.Type != quant.F32:
		c.failf(ErrType, "Tri", "%s must be F32", a)
	case !a.IsContiguous():
		c.failf(ErrShape, "Tri", "%s is not contiguous", a)
	case a.Ne[0] != a.Ne[1]:
		c.failf(ErrShape, "Tri", "%s is not square", a)
	case !typ.Valid():
		// ggml aborts in the kernel; a builder error is kinder.
		c.failf(ErrArgument, "Tri", "invalid triangle type %d", typ)
	default:
		return c.NewOp(ops.Tri, a.Type, a.Ne, ops.TriParams{Type: typ}.Params(), a)
	}
	return nil
}

// unary is ggml_unary_impl: a's rows must be contiguous.
func (c *Context) unary(a *Tensor, p ops.Params, inplace bool) *Tensor {
	name := p.Unary().String()
	if !c.ok(name, a) {
		return nil
	}
	if !p.Unary().Valid() {
		c.failf(ErrArgument, "Unary", "invalid unary op %d", int32(p.Unary()))
		return nil
	}
	if !a.IsContiguousRows() {
		c.failf(ErrShape, name, "rows of %s are not contiguous", a)
		return nil
	}
	return c.elementwise(ops.Unary, a, p, inplace)
}

// Unary applies the unary operation op element-wise (ggml_unary). XIELU
// needs its parameters: use XIELU.
func (c *Context) Unary(a *Tensor, op ops.UnaryOp) *Tensor {
	return c.unary(a, ops.UnaryParams{Op: op}.Params(), false)
}

// UnaryInplace is Unary writing into a.
func (c *Context) UnaryInplace(a *Tensor, op ops.UnaryOp) *Tensor {
	return c.unary(a, ops.UnaryParams{Op: op}.Params(), true)
}

// Abs is |x|.
func (c *Context) Abs(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryAbs) }

// AbsInplace is Abs writing into a.
func (c *Context) AbsInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryAbs) }

// Sgn is the sign of x (-1, 0 or 1).
func (c *Context) Sgn(a *Tensor) *Tensor { return c.Unary(a, ops.UnarySgn) }

// SgnInplace is Sgn writing into a.
func (c *Context) SgnInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnarySgn) }

// Neg is -x.
func (c *Context) Neg(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryNeg) }

// NegInplace is Neg writing into a.
func (c *Context) NegInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryNeg) }

// Step is 1 for x > 0, else 0.
func (c *Context) Step(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryStep) }

// StepInplace is Step writing into a.
func (c *Context) StepInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryStep) }

// Tanh is tanh(x).
func (c *Context) Tanh(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryTanh) }

// TanhInplace is Tanh writing into a.
func (c *Context) TanhInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryTanh) }

// ELU is x for x > 0, else exp(x)-1.
func (c *Context) ELU(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryELU) }

// ELUInplace is ELU writing into a.
func (c *Context) ELUInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryELU) }

// ReLU is max(x, 0).
func (c *Context) ReLU(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryReLU) }

// ReLUInplace is ReLU writing into a.
func (c *Context) ReLUInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryReLU) }

// Sigmoid is 1/(1+exp(-x)).
func (c *Context) Sigmoid(a *Tensor) *Tensor { return c.Unary(a, ops.UnarySigmoid) }

// SigmoidInplace is Sigmoid writing into a.
func (c *Context) SigmoidInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnarySigmoid) }

// GELU is the tanh approximation of the Gaussian error linear unit.
func (c *Context) GELU(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryGELU) }

// GELUInplace is GELU writing into a.
func (c *Context) GELUInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryGELU) }

// GELUERF is the Gaussian error linear unit computed with erf.
func (c *Context) GELUERF(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryGELUERF) }

// GELUERFInplace is GELUERF writing into a.
func (c *Context) GELUERFInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryGELUERF) }

// GELUQuick is x*sigmoid(1.702x).
func (c *Context) GELUQuick(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryGELUQuick) }

// GELUQuickInplace is GELUQuick writing into a.
func (c *Context) GELUQuickInplace(a *Tensor) *Tensor {
	return c.UnaryInplace(a, ops.UnaryGELUQuick)
}

// SiLU is x*sigmoid(x).
func (c *Context) SiLU(a *Tensor) *Tensor { return c.Unary(a, ops.UnarySiLU) }

// SiLUInplace is SiLU writing into a.
func (c *Context) SiLUInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnarySiLU) }

// HardSwish is x*min(1, max(0, (x+3)/6)); ggml has no in-place form.
func (c *Context) HardSwish(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryHardSwish) }

// HardSigmoid is min(1, max(0, (x+3)/6)); ggml has no in-place form.
func (c *Context) HardSigmoid(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryHardSigmoid) }

// Exp is exp(x).
func (c *Context) Exp(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryExp) }

// ExpInplace is Exp writing into a.
func (c *Context) ExpInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryExp) }

// Expm1 is exp(x)-1.
func (c *Context) Expm1(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryExpm1) }

// Expm1Inplace is Expm1 writing into a.
func (c *Context) Expm1Inplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryExpm1) }

// Softplus is log(1+exp(x)) (x itself above 20).
func (c *Context) Softplus(a *Tensor) *Tensor { return c.Unary(a, ops.UnarySoftplus) }

// SoftplusInplace is Softplus writing into a.
func (c *Context) SoftplusInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnarySoftplus) }

// Floor rounds down.
func (c *Context) Floor(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryFloor) }

// FloorInplace is Floor writing into a.
func (c *Context) FloorInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryFloor) }

// Ceil rounds up.
func (c *Context) Ceil(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryCeil) }

// CeilInplace is Ceil writing into a.
func (c *Context) CeilInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryCeil) }

// Round rounds to the nearest integer, halves away from zero.
func (c *Context) Round(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryRound) }

// RoundInplace is Round writing into a.
func (c *Context) RoundInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryRound) }

// Trunc rounds towards zero.
func (c *Context) Trunc(a *Tensor) *Tensor { return c.Unary(a, ops.UnaryTrunc) }

// TruncInplace is Trunc writing into a.
func (c *Context) TruncInplace(a *Tensor) *Tensor { return c.UnaryInplace(a, ops.UnaryTrunc) }

// XIELU is the expanded integral of the ELU, as ggml_xielu: it stores
// beta+softplus(alphaN) and softplus(alphaP), computed in float32 as ggml
// does, for the kernel. Unlike ggml_unary it does not check a's rows.
func (c *Context) XIELU(a *Tensor, alphaN, alphaP, beta, eps float32) *Tensor {
	p := ops.XIELUParams{AlphaN: beta + softplus32(alphaN), AlphaP: softplus32(alphaP), Beta: beta, Eps: eps}
	return c.elementwise(ops.Unary, a, p.Params(), false)
}

// softplus32 is ggml_compute_softplus_f32: log(1+exp(x)) in float32, x
// itself above 20.
func softplus32(x float32) float32 {
	if x > 20 {
		return x
	}
	e := float32(math.Exp(float64(x)))
	return float32(math.Log(float64(1 + e)))
}

// glu is ggml_glu_impl: a (and b, when given) must be contiguous but for
// dimension 1; with b the result has a's shape, without it half of a's
// rows (the gate and the value are the two halves of each row).
func (c *Context) glu(a, b *Tensor, p ops.GLUParams) *Tensor {
	name := p.Op.String()
	if !c.ok(name, a) {
		return nil
	}
	if !p.Op.Valid() {
		c.failf(ErrArgument, "GLU", "invalid GLU op %d", int32(p.Op))
		return nil
	}
	if !a.IsContiguous1() {
		c.failf(ErrShape, name, "%s is not contiguous in dimensions 0, 2 and 3", a)
		return nil
	}
	ne := a.Ne
	srcs := []*Tensor{a}
	if b != nil {
		switch {
		case !b.IsContiguous1():
			c.failf(ErrShape, name, "%s is not contiguous in dimensions 0, 2 and 3", b)
		case !SameShape(a, b):
			c.failf(ErrShape, name, "%s and %s differ in shape", a, b)
		case a.Type != b.Type:
			c.failf(ErrType, name, "%s and %s differ in type", a, b)
		}
		if c.err != nil {
			return nil
		}
		srcs = append(srcs, b)
	} else {
		ne[0] /= 2
	}
	return c.NewOp(ops.GLU, a.Type, ne, p.Params(), srcs...)
}

// GLU is the gated linear unit op over the two halves of each row of a
// (ggml_glu); swapped takes the gate from the second half.
func (c *Context) GLU(a *Tensor, op ops.GluOp, swapped bool) *Tensor {
	return c.glu(a, nil, ops.GLUParams{Op: op, Swapped: swapped})
}

// GLUSplit is the gated linear unit op with the gate in a and the value in
// b (ggml_glu_split).
func (c *Context) GLUSplit(a, b *Tensor, op ops.GluOp) *Tensor {
	if !c.ok("GLUSplit", a, b) {
		return nil
	}
	return c.glu(a, b, ops.GLUParams{Op: op})
}

// ReGLU is relu(x)*g over the halves of a's rows.
func (c *Context) ReGLU(a *Tensor) *Tensor { return c.GLU(a, ops.GLUReGLU, false) }

// ReGLUSwapped is ReGLU with the halves exchanged.
func (c *Context) ReGLUSwapped(a *Tensor) *Tensor { return c.GLU(a, ops.GLUReGLU, true) }

// ReGLUSplit is ReGLU with x in a and g in b.
func (c *Context) ReGLUSplit(a, b *Tensor) *Tensor { return c.GLUSplit(a, b, ops.GLUReGLU) }

// GeGLU is gelu(x)*g over the halves of a's rows.
func (c *Context) GeGLU(a *Tensor) *Tensor { return c.GLU(a, ops.GLUGeGLU, false) }

// GeGLUSwapped is GeGLU with the halves exchanged.
func (c *Context) GeGLUSwapped(a *Tensor) *Tensor { return c.GLU(a, ops.GLUGeGLU, true) }

// GeGLUSplit is GeGLU with x in a and g in b.
func (c *Context) GeGLUSplit(a, b *Tensor) *Tensor { return c.GLUSplit(a, b, ops.GLUGeGLU) }

// SwiGLU is silu(x)*g over the halves of a's rows.
func (c *Context) SwiGLU(a *Tensor) *Tensor { return c.GLU(a, ops.GLUSwiGLU, false) }

// SwiGLUSwapped is SwiGLU with the halves exchanged.
func (c *Context) SwiGLUSwapped(a *Tensor) *Tensor { return c.GLU(a, ops.GLUSwiGLU, true) }

// SwiGLUSplit is SwiGLU with x in a and g in b.
func (c *Context) SwiGLUSplit(a, b *Tensor) *Tensor { return c.GLUSplit(a, b, ops.GLUSwiGLU) }

// GeGLUERF is gelu_erf(x)*g over the halves of a's rows.
func (c *Context) GeGLUERF(a *Tensor) *Tensor { return c.GLU(a, ops.GLUGeGLUERF, false) }

// GeGLUERFSwapped is GeGLUERF with the halves exchanged.
func (c *Context) GeGLUERFSwapped(a *Tensor) *Tensor { return c.GLU(a, ops.GLUGeGLUERF, true) }

// GeGLUERFSplit is GeGLUERF with x in a and g in b.
func (c *Context) GeGLUERFSplit(a, b *Tensor) *Tensor { return c.GLUSplit(a, b, ops.GLUGeGLUERF) }

// GeGLUQuick is gelu_quick(x)*g over the halves of a's rows.
func (c *Context) GeGLUQuick(a *Tensor) *Tensor { return c.GLU(a, ops.GLUGeGLUQuick, false) }

// GeGLUQuickSwapped is GeGLUQuick with the halves exchanged.
func (c *Context) GeGLUQuickSwapped(a *Tensor) *Tensor { return c.GLU(a, ops.GLUGeGLUQuick, true) }

// GeGLUQuickSplit is GeGLUQuick with x in a and g in b.
func (c *Context) GeGLUQuickSplit(a, b *Tensor) *Tensor {
	return c.GLUSplit(a, b, ops.GLUGeGLUQuick)
}

// SwiGLUOAI is gpt-oss's gate, x' = min(x, limit), g' = clamp(g, ±limit),
// x'*sigmoid(alpha*x')*(g'+1), as ggml_swiglu_oai: x in a and g in b, or the
// halves of a's rows when b is nil.
func (c *Context) SwiGLUOAI(a, b *Tensor, alpha, limit float32) *Tensor {
	return c.glu(a, b, ops.GLUParams{Op: ops.GLUSwiGLUOAI, Alpha: alpha, Limit: limit})
}

// SwiGLUClamp is silu(min(x, limit))*clamp(g, ±limit), as ggml 0.25.1's
// ggml_swiglu_clamp(ctx, a, b, limit): x in a and g in b, or the halves of
// a's rows when b is nil.
func (c *Context) SwiGLUClamp(a, b *Tensor, limit float32) *Tensor {
	return c.glu(a, b, ops.GLUParams{Op: ops.GLUSwiGLUClamp, Limit: limit})
}
