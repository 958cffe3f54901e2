// The numbering and names below are ggml 0.25.1's, as ggml_op_name,
// ggml_op_symbol, ggml_unary_op_name and ggml_glu_op_name of libggml-base.so
// report them; TestNamesMatchLibrary checks every entry against the library.

package ops

// The operations, numbered as ggml 0.25.1's enum ggml_op.
const (
	None                 Op = 0
	Dup                  Op = 1
	Add                  Op = 2
	AddID                Op = 3
	Add1                 Op = 4
	Acc                  Op = 5
	Sub                  Op = 6
	Mul                  Op = 7
	Div                  Op = 8
	Sqr                  Op = 9
	Sqrt                 Op = 10
	Log                  Op = 11
	Sin                  Op = 12
	Cos                  Op = 13
	Sum                  Op = 14
	SumRows              Op = 15
	Cumsum               Op = 16
	Mean                 Op = 17
	Argmax               Op = 18
	CountEqual           Op = 19
	Repeat               Op = 20
	RepeatBack           Op = 21
	Concat               Op = 22
	SiLUBack             Op = 23
	Norm                 Op = 24
	RMSNorm              Op = 25
	RMSNormBack          Op = 26
	GroupNorm            Op = 27
	L2Norm               Op = 28
	MulMat               Op = 29
	MulMatID             Op = 30
	OutProd              Op = 31
	Scale                Op = 32
	Set                  Op = 33
	Cpy                  Op = 34
	Cont                 Op = 35
	Reshape              Op = 36
	View                 Op = 37
	Permute              Op = 38
	Transpose            Op = 39
	GetRows              Op = 40
	GetRowsBack          Op = 41
	SetRows              Op = 42
	Diag                 Op = 43
	DiagMaskInf          Op = 44
	DiagMaskZero         Op = 45
	SoftMax              Op = 46
	SoftMaxBack          Op = 47
	Rope                 Op = 48
	RopeBack             Op = 49
	Clamp                Op = 50
	ConvTranspose1D      Op = 51
	Im2Col               Op = 52
	Im2ColBack           Op = 53
	Im2Col3D             Op = 54
	Col2Im1D             Op = 55
	Conv2D               Op = 56
	Conv3D               Op = 57
	Conv2DDW             Op = 58
	ConvTranspose2D      Op = 59
	Pool1D               Op = 60
	Pool2D               Op = 61
	Pool2DBack           Op = 62
	Upscale              Op = 63
	Pad                  Op = 64
	PadReflect1D         Op = 65
	Roll                 Op = 66
	Arange               Op = 67
	TimestepEmbedding    Op = 68
	Argsort              Op = 69
	TopK                 Op = 70
	LeakyReLU            Op = 71
	Tri                  Op = 72
	Fill                 Op = 73
	FlashAttnExt         Op = 74
	FlashAttnBack        Op = 75
	SSMConv              Op = 76
	SSMScan              Op = 77
	WinPart              Op = 78
	WinUnpart            Op = 79
	GetRelPos            Op = 80
	AddRelPos            Op = 81
	RWKVWKV6             Op = 82
	GatedLinearAttn      Op = 83
	RWKVWKV7             Op = 84
	SolveTri             Op = 85
	GatedDeltaNet        Op = 86
	LightningIndexer     Op = 87
	DSV4HCComb           Op = 88
	DSV4HCPre            Op = 89
	DSV4HCPost           Op = 90
	Unary                Op = 91
	MapCustom1           Op = 92
	MapCustom2           Op = 93
	MapCustom3           Op = 94
	Custom               Op = 95
	CrossEntropyLoss     Op = 96
	CrossEntropyLossBack Op = 97
	OptStepAdamW         Op = 98
	OptStepSGD           Op = 99
	GLU                  Op = 100

	// OpCount is GGML_OP_COUNT.
	OpCount Op = 101
)

var opNames = [OpCount]string{
	"NONE",
	"DUP",
	"ADD",
	"ADD_ID",
	"ADD1",
	"ACC",
	"SUB",
	"MUL",
	"DIV",
	"SQR",
	"SQRT",
	"LOG",
	"SIN",
	"COS",
	"SUM",
	"SUM_ROWS",
	"CUMSUM",
	"MEAN",
	"ARGMAX",
	"COUNT_EQUAL",
	"REPEAT",
	"REPEAT_BACK",
	"CONCAT",
	"SILU_BACK",
	"NORM",
	"RMS_NORM",
	"RMS_NORM_BACK",
	"GROUP_NORM",
	"L2_NORM",
	"MUL_MAT",
	"MUL_MAT_ID",
	"OUT_PROD",
	"SCALE",
	"SET",
	"CPY",
	"CONT",
	"RESHAPE",
	"VIEW",
	"PERMUTE",
	"TRANSPOSE",
	"GET_ROWS",
	"GET_ROWS_BACK",
	"SET_ROWS",
	"DIAG",
	"DIAG_MASK_INF",
	"DIAG_MASK_ZERO",
	"SOFT_MAX",
	"SOFT_MAX_BACK",
	"ROPE",
	"ROPE_BACK",
	"CLAMP",
	"CONV_TRANSPOSE_1D",
	"IM2COL",
	"IM2COL_BACK",
	"IM2COL_3D",
	"COL2IM_1D",
	"CONV_2D",
	"CONV_3D",
	"CONV_2D_DW",
	"CONV_TRANSPOSE_2D",
	"POOL_1D",
	"POOL_2D",
	"POOL_2D_BACK",
	"UPSCALE",
	"PAD",
	"PAD_REFLECT_1D",
	"ROLL",
	"ARANGE",
	"TIMESTEP_EMBEDDING",
	"ARGSORT",
	"TOP_K",
	"LEAKY_RELU",
	"TRI",
	"FILL",
	"FLASH_ATTN_EXT",
	"FLASH_ATTN_BACK",
	"SSM_CONV",
	"SSM_SCAN",
	"WIN_PART",
	"WIN_UNPART",
	"GET_REL_POS",
	"ADD_REL_POS",
	"RWKV_WKV6",
	"GATED_LINEAR_ATTN",
	"RWKV_WKV7",
	"SOLVE_TRI",
	"GATED_DELTA_NET",
	"LIGHTNING_INDEXER",
	"DSV4_HC_COMB",
	"DSV4_HC_PRE",
	"DSV4_HC_POST",
	"UNARY",
	"MAP_CUSTOM1",
	"MAP_CUSTOM2",
	"MAP_CUSTOM3",
	"CUSTOM",
	"CROSS_ENTROPY_LOSS",
	"CROSS_ENTROPY_LOSS_BACK",
	"OPT_STEP_ADAMW",
	"OPT_STEP_SGD",
	"GLU",
}

var opSymbols = [OpCount]string{
	"none",
	"x",
	"x+y",
	"x[i]+y",
	"x+y",
	"view(x,nb,offset)+=y->x",
	"x-y",
	"x*y",
	"x/y",
	"x^2",
	"√x",
	"log(x)",
	"sin(x)",
	"cos(x)",
	"Σx",
	"Σx_k",
	"cumsum(x)",
	"Σx/n",
	"argmax(x)",
	"count_equal(x)",
	"repeat(x)",
	"repeat_back(x)",
	"concat(x, y)",
	"silu_back(x)",
	"norm(x)",
	"rms_norm(x)",
	"rms_norm_back(x)",
	"group_norm(x)",
	"l2_norm(x)",
	"X*Y",
	"X[i]*Y",
	"X*Y",
	"x*v",
	"y-\\>view(x)",
	"x-\\>y",
	"cont(x)",
	"reshape(x)",
	"view(x)",
	"permute(x)",
	"transpose(x)",
	"get_rows(x)",
	"get_rows_back(x)",
	"set_rows(x)",
	"diag(x)",
	"diag_mask_inf(x)",
	"diag_mask_zero(x)",
	"soft_max(x)",
	"soft_max_back(x)",
	"rope(x)",
	"rope_back(x)",
	"clamp(x)",
	"conv_transpose_1d(x)",
	"im2col(x)",
	"im2col_back(x)",
	"im2col_3d(x)",
	"col2im_1d(x)",
	"conv_2d(x)",
	"conv_3d(x)",
	"conv_2d_dw(x)",
	"conv_transpose_2d(x)",
	"pool_1d(x)",
	"pool_2d(x)",
	"pool_2d_back(x)",
	"upscale(x)",
	"pad(x)",
	"pad_reflect_1d(x)",
	"roll(x)",
	"arange(start, stop, step)",
	"timestep_embedding(timesteps, dim, max_period)",
	"argsort(x)",
	"top_k(x)",
	"leaky_relu(x)",
	"tri(x)",
	"fill(x, c)",
	"flash_attn_ext(x)",
	"flash_attn_back(x)",
	"ssm_conv(x)",
	"ssm_scan(x)",
	"win_part(x)",
	"win_unpart(x)",
	"get_rel_pos(x)",
	"add_rel_pos(x)",
	"rwkv_wkv6(k, v, r, tf, td, s)",
	"gated_linear_attn(k, v, q, gate, s)",
	"rwkv_wkv7(r, w, k, v, a, b, s)",
	"A X = B, A triangular, solve X",
	"gated_delta_net(q, k, v, g, beta, s)",
	"lightning_indexer(q, k, weights, mask)",
	"dsv4_hc_comb(mixes, scale, base)",
	"dsv4_hc_pre(x, weights)",
	"dsv4_hc_post(x, residual, post, comb)",
	"unary(x)",
	"map_custom(x)",
	"map_custom(x,y)",
	"map_custom(x,y,z)",
	"custom(x)",
	"cross_entropy_loss(x,y)",
	"cross_entropy_loss_back(x,y)",
	"adamw(x)",
	"sgd(x)",
	"glu(x)",
}

// The unary operations (UNARY's parameter), numbered as enum ggml_unary_op.
const (
	UnaryAbs         UnaryOp = 0
	UnarySgn         UnaryOp = 1
	UnaryNeg         UnaryOp = 2
	UnaryStep        UnaryOp = 3
	UnaryTanh        UnaryOp = 4
	UnaryELU         UnaryOp = 5
	UnaryReLU        UnaryOp = 6
	UnarySigmoid     UnaryOp = 7
	UnaryGELU        UnaryOp = 8
	UnaryGELUQuick   UnaryOp = 9
	UnarySiLU        UnaryOp = 10
	UnaryHardSwish   UnaryOp = 11
	UnaryHardSigmoid UnaryOp = 12
	UnaryExp         UnaryOp = 13
	UnaryExpm1       UnaryOp = 14
	UnarySoftplus    UnaryOp = 15
	UnaryGELUERF     UnaryOp = 16
	UnaryXIELU       UnaryOp = 17
	UnaryFloor       UnaryOp = 18
	UnaryCeil        UnaryOp = 19
	UnaryRound       UnaryOp = 20
	UnaryTrunc       UnaryOp = 21

	// UnaryOpCount is GGML_UNARY_OP_COUNT.
	UnaryOpCount UnaryOp = 22
)

var unaryNames = [UnaryOpCount]string{
	"ABS",
	"SGN",
	"NEG",
	"STEP",
	"TANH",
	"ELU",
	"RELU",
	"SIGMOID",
	"GELU",
	"GELU_QUICK",
	"SILU",
	"HARDSWISH",
	"HARDSIGMOID",
	"EXP",
	"EXPM1",
	"SOFTPLUS",
	"GELU_ERF",
	"XIELU",
	"FLOOR",
	"CEIL",
	"ROUND",
	"TRUNC",
}

// The gated linear units (GLU's parameter), numbered as enum ggml_glu_op.
const (
	GLUReGLU       GluOp = 0
	GLUGeGLU       GluOp = 1
	GLUSwiGLU      GluOp = 2
	GLUSwiGLUOAI   GluOp = 3
	GLUGeGLUERF    GluOp = 4
	GLUGeGLUQuick  GluOp = 5
	GLUSwiGLUClamp GluOp = 6

	// GluOpCount is GGML_GLU_OP_COUNT in the 0.25.1 library (SWIGLU_CLAMP included).
	GluOpCount GluOp = 7
)

var gluNames = [GluOpCount]string{
	"REGLU",
	"GEGLU",
	"SWIGLU",
	"SWIGLU_OAI",
	"GEGLU_ERF",
	"GEGLU_QUICK",
	"SWIGLU_CLAMP",
}
