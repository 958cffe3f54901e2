package hexagon

import (
	"fmt"

	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// htpOp maps a ggml node to its opcode (op_remap_to_htp of the public
// snapshot): CONT becomes CPY, GELU_QUICK becomes UNARY_GELU, the GLUs
// their GLU_* codes, the rest one to one. OpInvalid for what the
// DSP does not compute.
func htpOp(t *graph.Tensor) htp.Op {
	switch t.Op {
	case ops.Add:
		return htp.OpAdd
	case ops.Sub:
		return htp.OpSub
	case ops.Mul:
		return htp.OpMul
	case ops.Div:
		return htp.OpDiv
	case ops.MulMat:
		return htp.OpMulMat
	case ops.MulMatID:
		return htp.OpMulMatID
	case ops.RMSNorm:
		return htp.OpRMSNorm
	case ops.Norm:
		return htp.OpNorm
	case ops.L2Norm:
		return htp.OpL2Norm
	case ops.Scale:
		return htp.OpScale
	case ops.Clamp:
		return htp.OpClamp
	case ops.Sqr:
		return htp.OpSqr
	case ops.Sqrt:
		return htp.OpSqrt
	case ops.SumRows:
		return htp.OpSumRows
	case ops.SoftMax:
		return htp.OpSoftmax
	case ops.AddID:
		return htp.OpAddID
	case ops.Rope:
		return htp.OpRope
	case ops.FlashAttnExt:
		return htp.OpFlashAttnExt
	case ops.SetRows:
		return htp.OpSetRows
	case ops.GetRows:
		return htp.OpGetRows
	case ops.Cpy, ops.Cont, ops.Dup:
		return htp.OpCpy
	case ops.Argsort:
		return htp.OpArgsort
	case ops.Repeat:
		return htp.OpRepeat
	case ops.Cumsum:
		return htp.OpCumsum
	case ops.Fill:
		return htp.OpFill
	case ops.Diag:
		return htp.OpDiag
	case ops.SolveTri:
		return htp.OpSolveTri
	case ops.Tri:
		return htp.OpTri
	case ops.Pad:
		return htp.OpPad
	case ops.Concat:
		return htp.OpConcat
	case ops.Im2Col:
		return htp.OpIm2col
	case ops.SSMConv:
		return htp.OpSSMConv
	case ops.GatedDeltaNet:
		return htp.OpGatedDeltaNet
	case ops.Unary:
		switch t.Params.Unary() {
		case ops.UnarySiLU:
			return htp.OpUnarySilu
		case ops.UnaryGELUQuick:
			// The public DSP computes UNARY_GELU as x*sigmoid(1.702x),
			// GELU_QUICK, whatever the host asked (its kernel parameters
			// do not change that): ggml's tanh GELU is not offered.
			return htp.OpUnaryGelu
		case ops.UnarySigmoid:
			return htp.OpUnarySigmoid
		case ops.UnaryExp:
			return htp.OpUnaryExp
		case ops.UnaryNeg:
			return htp.OpUnaryNeg
		case ops.UnarySoftplus:
			return htp.OpUnarySoftplus
		case ops.UnaryTanh:
			return htp.OpUnaryTanh
		}
	case ops.GLU:
		switch ops.GluOp(t.Params.I32(0)) {
		case ops.GLUSwiGLU:
			return htp.OpGLUSwiglu
		case ops.GLUSwiGLUOAI:
			return htp.OpGLUSwigluOAI
		case ops.GLUGeGLU:
			return htp.OpGLUGeglu
		}
	}
	return htp.OpInvalid
}

// isNoop reports ops that move no data: views and reshapes.
func isNoop(op ops.Op) bool {
	switch op {
	case ops.None, ops.Reshape, ops.View, ops.Permute, ops.Transpose:
		return true
	}
	return false
}

// newNode builds the DSP op of graph node t: its sources in order (nil
// where absent), t as the output, ggml's op params.
func newNode(t *graph.Tensor) (*opNode, error) {
	op := htpOp(t)
	if op == htp.OpInvalid {
		return nil, fmt.Errorf("hexagon: %s (%s) is not computed by the DSP", t, t.OpDesc())
	}
	n := &opNode{op: op, node: t, params: [htp.MaxParams]int32(t.Params)}
	for i, s := range t.Src {
		if s == nil {
			continue
		}
		if i >= htp.MaxInputs {
			return nil, fmt.Errorf("hexagon: %s has more than %d sources", t, htp.MaxInputs)
		}
		n.inputs[i] = s
	}
	if op == htp.OpCpy {
		// CPY's second source is where it writes: t itself views it.
		n.inputs[1] = nil
	}
	n.outputs[0] = t
	return n, nil
}

// fuse returns the op that computes a and its follower b together (the
// public snapshot's try_fuse_node), or nil: RMS_NORM then a MUL of its
// output becomes RMS_NORM_MUL, MUL_MAT then an ADD of its output becomes
// MUL_MAT_ADD. a's output is then never written, so it must have no
// other use and not be a graph output. Verified on the double (which
// executes both fused ops); not verified against a real DSP.
func fuse(g *graph.Graph, a, b *graph.Tensor) *opNode {
	if g.UseCount(a) != 1 || a.Flags&graph.FlagOutput != 0 || a.Type != quant.F32 || b.Type != quant.F32 {
		return nil
	}
	other := func() *graph.Tensor {
		switch {
		case b.Src[0] == a && b.Src[1] != a:
			return b.Src[1]
		case b.Src[1] == a && b.Src[0] != a:
			return b.Src[0]
		}
		return nil
	}()
	if other == nil || other.Type != quant.F32 || b.Ne != a.Ne || !canRepeat(other, b) {
		return nil
	}
	var n *opNode
	switch {
	case a.Op == ops.RMSNorm && b.Op == ops.Mul:
		n = &opNode{op: htp.OpRMSNormMul}
	case a.Op == ops.MulMat && b.Op == ops.Add:
		n = &opNode{op: htp.OpMulMatAdd}
	default:
		return nil
	}
	n.node, n.params = b, [htp.MaxParams]int32(a.Params)
	copy(n.inputs[:], a.Src[:2])
	if a.Op == ops.RMSNorm {
		n.inputs[1] = other
	} else {
		n.inputs[2] = other
	}
	n.outputs[0] = b
	return n
}
