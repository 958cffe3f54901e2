package openvino

import (
	"github.com/ggml-go/ggml/ops"
)

// The translator tables, in one place: upstream's op table
// (ggml-openvino's openvino/op_table.cpp, get_supported_ops), every op of
// it with the function that builds its IR. supportsOp derives the
// supported op, unary and GLU sets from these tables, as upstream does,
// so an op is offered exactly when a translator for it is listed here.
// The translators live in the files of their family (translate.go:
// elementwise, norms, matmul, copies and views, rope, attention;
// translate_more.go: set, diag, tri, pad, add_id, mul_mat_id;
// translate_seq.go: argsort, im2col, pool_2d, roll, ssm_conv,
// gated_delta_net).

// opTranslators maps each ggml op upstream's table has to its translator.
var opTranslators = map[ops.Op]translator{
	ops.Add:           binaryTranslator("Add"),
	ops.Sub:           binaryTranslator("Subtract"),
	ops.Mul:           binaryTranslator("Multiply"),
	ops.Div:           binaryTranslator("Divide"),
	ops.Add1:          binaryTranslator("Add"),
	ops.Sqr:           translateSqr,
	ops.Sqrt:          unaryNode(func(b *builder, x value) value { return b.unaryOp("Sqrt", x) }),
	ops.Scale:         translateScale,
	ops.Clamp:         translateClamp,
	ops.Unary:         translateUnary,
	ops.GLU:           translateGLU,
	ops.RMSNorm:       translateNorm,
	ops.Norm:          translateNorm,
	ops.L2Norm:        translateNorm,
	ops.SoftMax:       translateSoftMax,
	ops.SumRows:       translateSumRows,
	ops.MulMat:        translateMulMat,
	ops.Cpy:           translateCopy,
	ops.Cont:          translateCopy,
	ops.Reshape:       translateView,
	ops.View:          translateView,
	ops.Permute:       translateView,
	ops.Transpose:     translateView,
	ops.GetRows:       translateGetRows,
	ops.SetRows:       translateSetRows,
	ops.Concat:        translateConcat,
	ops.Repeat:        translateRepeat,
	ops.Rope:          translateRope,
	ops.FlashAttnExt:  translateFlashAttn,
	ops.Cumsum:        translateCumsum,
	ops.Fill:          translateFill,
	ops.Set:           translateSet,
	ops.Diag:          translateDiag,
	ops.Tri:           translateTri,
	ops.Pad:           translatePad,
	ops.AddID:         translateAddID,
	ops.MulMatID:      translateMulMatID,
	ops.Argsort:       translateArgsort,
	ops.Im2Col:        translateIm2Col,
	ops.Pool2D:        translatePool2D,
	ops.Roll:          translateRoll,
	ops.SSMConv:       translateSSMConv,
	ops.GatedDeltaNet: translateGatedDeltaNet,
}

// unaryTranslators builds each UNARY op upstream translates.
var unaryTranslators = map[ops.UnaryOp]func(b *builder, x value) value{
	ops.UnaryGELU: func(b *builder, x value) value {
		return b.m.add("Gelu", "opset7", []attr{{"approximation_mode", "TANH"}}, x.et, x.shape, x)
	},
	ops.UnarySigmoid: func(b *builder, x value) value { return b.unaryOp("Sigmoid", x) },
	ops.UnarySiLU:    func(b *builder, x value) value { return b.binary("Multiply", x, b.unaryOp("Sigmoid", x)) },
	ops.UnaryTanh:    func(b *builder, x value) value { return b.unaryOp("Tanh", x) },
	ops.UnaryExp:     func(b *builder, x value) value { return b.exp(x) },
	ops.UnaryNeg:     func(b *builder, x value) value { return b.unaryOp("Negative", x) },
	ops.UnaryReLU:    func(b *builder, x value) value { return b.unaryOp("Relu", x) },
	// softplus(x) = max(x, 0) + log(1 + exp(-|x|)), the stable form
	// ggml-openvino uses (ggml returns x itself above 20, where the two
	// agree in f32).
	ops.UnarySoftplus: func(b *builder, x value) value {
		if b.nativeSoftplus {
			return b.m.add("SoftPlus", "opset4", nil, x.et, x.shape, x)
		}
		e := b.unaryOp("Exp", b.unaryOp("Negative", b.unaryOp("Abs", x)))
		return b.binary("Add", b.unaryOp("Relu", x), b.unaryOp("Log", b.binary("Add", e, b.m.scalarF32(1))))
	},
}

// gluTranslators builds each GLU op upstream translates, from the
// gate's two halves.
var gluTranslators = map[ops.GluOp]func(b *builder, a, g value, p ops.GLUParams) value{
	ops.GLUSwiGLU: func(b *builder, a, g value, _ ops.GLUParams) value {
		return b.binary("Multiply", unaryTranslators[ops.UnarySiLU](b, a), g)
	},
	ops.GLUGeGLU: func(b *builder, a, g value, _ ops.GLUParams) value {
		return b.binary("Multiply", unaryTranslators[ops.UnaryGELU](b, a), g)
	},
	// gelu_quick(a) = a * sigmoid(1.702 a), ggml's GELU_QUICK_COEF.
	ops.GLUGeGLUQuick: func(b *builder, a, g value, _ ops.GLUParams) value {
		q := b.binary("Multiply", a, b.unaryOp("Sigmoid", b.binary("Multiply", a, b.m.scalarF32(1.702))))
		return b.binary("Multiply", q, g)
	},
	// ggml's swiglu_clamp: silu(min(a, limit)) * clamp(g, -limit, limit).
	ops.GLUSwiGLUClamp: func(b *builder, a, g value, p ops.GLUParams) value {
		x := b.binary("Minimum", a, b.m.scalarF32(p.Limit))
		return b.binary("Multiply", unaryTranslators[ops.UnarySiLU](b, x), b.clamp(g, -p.Limit, p.Limit))
	},
	// ggml's swiglu_oai: x = min(a, limit), y = clamp(g, -limit, limit),
	// out = x * sigmoid(alpha * x) * (y + 1).
	ops.GLUSwiGLUOAI: func(b *builder, a, g value, p ops.GLUParams) value {
		x := b.binary("Minimum", a, b.m.scalarF32(p.Limit))
		y := b.clamp(g, -p.Limit, p.Limit)
		s := b.unaryOp("Sigmoid", b.binary("Multiply", x, b.m.scalarF32(p.Alpha)))
		return b.binary("Multiply", b.binary("Multiply", x, s), b.binary("Add", y, b.m.scalarF32(1)))
	},
}
