package hexagon

import (
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// supportsOp is the public snapshot's host-side rule (hexagon.md §9),
// without its buffer conditions: as upstream's comment demands, it
// depends only on static properties of t (op, types, shapes, strides,
// params), never on buffers, usage or tiling, because the scheduler asks
// before anything is allocated. The kernel-parameter checks (VTCM fits)
// of upstream's htp_kparams_check are not public and not ported: a DSP
// that cannot run a kernel answers NO_SUPPORT or VTCM_TOO_SMALL, which
// becomes an error. Verified on the double for the ops it executes; the
// rest is the public snapshot's rule, not verified against a real DSP.
func supportsOp(t *graph.Tensor) bool {
	if isNoop(t.Op) {
		return true
	}
	s0, s1, s2 := t.Src[0], t.Src[1], t.Src[2]
	f32 := func(ts ...*graph.Tensor) bool {
		for _, x := range ts {
			if x == nil || x.Type != quant.F32 {
				return false
			}
		}
		return true
	}
	sameShape := func(a, b *graph.Tensor) bool { return a.Ne == b.Ne }
	switch t.Op {
	case ops.Add, ops.Sub, ops.Mul, ops.Div:
		typesOK := f32(s0, s1, t) || (s0.Type == quant.F16 && s1.Type == quant.F16 && t.Type == quant.F16)
		return typesOK && !s0.IsPermuted() && !t.IsPermuted() && sameShape(s0, t) && !s1.IsPermuted() && canRepeat(s1, s0)
	case ops.MulMat:
		return supportsMulMat(t, s0, s1)
	case ops.MulMatID:
		return isTiledType(s0.Type) && f32(s1, t) && s2 != nil && s2.Type == quant.I32 && s0.Ne[0]%32 == 0 && s0.IsContiguous()
	case ops.AddID:
		return f32(s0, s1, t) && sameShape(s0, t) && s0.IsContiguous() && s1.IsContiguous() && t.IsContiguous() &&
			s2 != nil && s2.Type == quant.I32
	case ops.Norm, ops.L2Norm, ops.RMSNorm, ops.Scale, ops.Clamp, ops.Sqr, ops.Sqrt:
		return unaryOK(t, s0)
	case ops.Unary:
		switch t.Params.Unary() {
		case ops.UnaryNeg, ops.UnaryExp, ops.UnarySigmoid, ops.UnarySoftplus, ops.UnaryTanh, ops.UnarySiLU, ops.UnaryGELUQuick:
			return unaryOK(t, s0)
		}
		return false
	case ops.SumRows:
		return f32(s0, t) && s0.IsContiguous() && t.IsContiguous()
	case ops.SoftMax:
		if !f32(s0, t) || s2 != nil || !s0.IsContiguous() || !t.IsContiguous() {
			return false
		}
		if s1 != nil && (s1.Type != quant.F32 && s1.Type != quant.F16 || s1.Ne[0] != s0.Ne[0] || s1.Ne[1] < s0.Ne[1] ||
			s0.Ne[2]%s1.Ne[2] != 0 || s0.Ne[3]%s1.Ne[3] != 0) {
			return false
		}
		n := s0.Ne[0]
		return (n <= 32 || n%32 == 0) && n <= 131072
	case ops.GLU:
		switch ops.GluOp(t.Params.I32(0)) {
		case ops.GLUSwiGLU, ops.GLUSwiGLUOAI, ops.GLUGeGLU:
		default:
			return false
		}
		if !f32(s0, t) || !s0.IsContiguous1() || !t.IsContiguous() {
			return false
		}
		return s1 == nil || f32(s1) && sameShape(s0, s1) && s1.IsContiguous1()
	case ops.Rope:
		return supportsRope(t, s0, s1, s2)
	case ops.FlashAttnExt:
		q, k, v, mask, sinks := s0, s1, s2, t.Src[3], t.Src[4]
		return (q.Type == quant.F32 || q.Type == quant.F16) && k.Type == quant.F16 && v.Type == quant.F16 &&
			(mask == nil || mask.Type == quant.F16) && (sinks == nil || sinks.Type == quant.F32) &&
			(t.Type == quant.F32 || t.Type == quant.F16) && t.Ne[3] == 1
	case ops.SetRows:
		return f32(s0) && (s1.Type == quant.I32 || s1.Type == quant.I64) && t.Type == quant.F16
	case ops.GetRows:
		return f32(s0, t) && (s1.Type == quant.I32 || s1.Type == quant.I64)
	case ops.Cpy, ops.Cont, ops.Dup:
		float := func(x *graph.Tensor) bool { return x.Type == quant.F32 || x.Type == quant.F16 }
		if !float(s0) || !float(t) {
			return false
		}
		return s0.Type == t.Type || sameShape(s0, t) && !s0.IsTransposed() && !t.IsTransposed()
	case ops.Repeat:
		if s0.Type != t.Type || (t.Type != quant.F32 && t.Type != quant.F16) || s0.IsTransposed() {
			return false
		}
		return canRepeat(s0, t)
	case ops.Argsort:
		return f32(s0) && t.Type == quant.I32 && s0.Ne[0] <= 16384
	case ops.Cumsum, ops.Tri:
		return f32(s0, t) && s0.IsContiguous() && t.IsContiguous() && (t.Op != ops.Tri || sameShape(s0, t))
	case ops.Diag:
		return f32(s0, t) && s0.Ne[1] == 1 && t.Ne[0] == t.Ne[1]
	case ops.SolveTri:
		return f32(s0, s1, t) && s0.Ne[0] == s0.Ne[1] && s1.Ne[1] == s0.Ne[0] && sameShape(s1, t)
	case ops.Pad:
		return f32(s0, t)
	case ops.Concat:
		dim := t.Params.I32(0)
		ok := func(x *graph.Tensor) bool { return x.Type == quant.F32 || x.Type == quant.I32 || x.Type == quant.F16 }
		return ok(s0) && ok(s1) && s0.Type == t.Type && s1.Type == t.Type && dim >= 0 && dim < 4
	case ops.Fill:
		return t.Type == quant.F32 || t.Type == quant.F16
	}
	return false
}

// unaryOK is the element-wise rule: f32 in and out, the source not
// permuted, the same shape, the output contiguous.
func unaryOK(t, s0 *graph.Tensor) bool {
	return s0.Type == quant.F32 && t.Type == quant.F32 && !s0.IsPermuted() && s0.Ne == t.Ne && t.IsContiguous()
}

// canRepeat reports whether a repeats into b (ggml_can_repeat).
func canRepeat(a, b *graph.Tensor) bool {
	for i := range 4 {
		if a.Ne[i] == 0 || b.Ne[i]%a.Ne[i] != 0 {
			return false
		}
	}
	return true
}

func supportsMulMat(t, s0, s1 *graph.Tensor) bool {
	if t.Type != quant.F32 || (s1.Type != quant.F32 && s1.Type != quant.F16) {
		return false
	}
	switch {
	case isTiledType(s0.Type):
		return s0.Ne[0]%32 == 0 && s0.Ne[1] <= 32768 && s1.Ne[2] == 1 && s1.Ne[3] == 1 && s0.IsContiguous()
	case s0.Type == quant.F16 || s0.Type == quant.F32:
		if s0.Type == quant.F32 && s1.Type != quant.F32 {
			return false
		}
		return s0.Nb[1] >= s0.Nb[0] && s1.Ne[2] >= s0.Ne[2] && s1.Ne[3] >= s0.Ne[3] &&
			s1.Ne[2]%s0.Ne[2] == 0 && s1.Ne[3]%s0.Ne[3] == 0
	}
	return false
}

func supportsRope(t, s0, pos, freq *graph.Tensor) bool {
	if s0.Type != quant.F32 || t.Type != quant.F32 || pos == nil || pos.Type != quant.I32 || s0.Nb[0] != 4 {
		return false
	}
	p := t.Params
	nDims, mode := p.I32(1), p.I32(2)
	if mode&1 != 0 {
		return false
	}
	const ropeVision = 24
	if mode == ropeVision && int64(nDims) != s0.Ne[0]/2 {
		return false
	}
	if p.I32(15)%32 != 0 {
		return false
	}
	return freq == nil || freq.Type == quant.F32 && freq.Ne[0] >= int64(nDims/2)
}
