package htp

import "fmt"

// Op is an htp_op_code: what the DSP computes for one op descriptor.
type Op uint32

// Opcodes of the public protocol (d99724f), positional.
const (
	OpMul Op = iota
	OpAdd
	OpSub
	OpDiv
	OpMulMat
	OpMulMatID
	OpMulMatQKV
	OpMulMatFFN
	OpMulMatAdd
	OpRMSNorm
	OpRMSNormMul
	OpUnarySilu
	OpUnaryGelu
	OpUnarySigmoid
	OpUnaryExp
	OpUnaryNeg
	OpUnarySoftplus
	OpUnaryTanh
	OpGLUSwiglu
	OpGLUSwigluOAI
	OpGLUGeglu
	OpSoftmax
	OpAddID
	OpRope
	OpFlashAttnExt
	OpSetRows
	OpGetRows
	OpScale
	OpCpy
	OpArgsort
	OpSqr
	OpSqrt
	OpSumRows
	OpSSMConv
	OpRepeat
	OpCumsum
	OpFill
	OpDiag
	OpSolveTri
	OpL2Norm
	OpGatedDeltaNet
	OpTri
	OpPad
	OpNorm
	OpConcat
	OpClamp
	OpIm2col
	// OpInvalid ends the public list (47).
	OpInvalid
)

// Fence-protocol only opcodes: upstream's htp-ops.h is not public. These values
// only name the ops inside the host; on the wire they exist under
// ProtocolFence only, with the values of its table (Protocol.Opcode).
// Not verified against a real DSP library.
const (
	OpFence        Op = 48 + iota // params[0] seq, params[1] 0 wait / 1 signal; src[0] the fence tensor
	OpCpyFence                    // CPY, then signal src[1] (a fence tensor) with params[0]
	OpMdevGroup                   // first op of a multi-NSP batch; params[0] the group index
	OpAllreduce                   // params[0]/[1] entry/exit seq; srcs: ranks' data then their fences
	OpAllreduceAdd                // ALLREDUCE fused with the ADD that follows
)

var opNames = [...]string{
	"MUL", "ADD", "SUB", "DIV", "MUL_MAT", "MUL_MAT_ID", "MUL_MAT_QKV", "MUL_MAT_FFN", "MUL_MAT_ADD",
	"RMS_NORM", "RMS_NORM_MUL", "UNARY_SILU", "UNARY_GELU", "UNARY_SIGMOID", "UNARY_EXP", "UNARY_NEG",
	"UNARY_SOFTPLUS", "UNARY_TANH", "GLU_SWIGLU", "GLU_SWIGLU_OAI", "GLU_GEGLU", "SOFTMAX", "ADD_ID", "ROPE",
	"FLASH_ATTN_EXT", "SET_ROWS", "GET_ROWS", "SCALE", "CPY", "ARGSORT", "SQR", "SQRT", "SUM_ROWS", "SSM_CONV",
	"REPEAT", "CUMSUM", "FILL", "DIAG", "SOLVE_TRI", "L2_NORM", "GATED_DELTA_NET", "TRI", "PAD", "NORM",
	"CONCAT", "CLAMP", "IM2COL", "INVALID",
	"FENCE", "CPY_FENCE", "MDEV_GROUP", "ALLREDUCE", "ALLREDUCE_ADD",
}

// String is the opcode's name in htp-ops.h without HTP_OP_.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("htp.Op(%d)", uint32(o))
}

// FenceOnly reports whether o is one of upstream's opcodes with no public
// value.
func (o Op) FenceOnly() bool { return o >= OpFence && o <= OpAllreduceAdd }

// Status is an htp_status, the DSP's verdict on a batch or a fence.
// OK is 1; anything above is a failure.
type Status uint32

// Status codes (public).
const (
	StatusOK           Status = 1
	StatusInternalErr  Status = 2
	StatusNoSupport    Status = 3
	StatusInvalParams  Status = 4
	StatusVTCMTooSmall Status = 5
)

// Failed reports whether s is a failure (s > OK, as upstream tests it).
func (s Status) Failed() bool { return s > StatusOK }

// String is the status as upstream prints it ("NO-SUPPORT").
func (s Status) String() string {
	switch s {
	case StatusOK:
		return "OK"
	case StatusInternalErr:
		return "INTERNAL-ERROR"
	case StatusNoSupport:
		return "NO-SUPPORT"
	case StatusInvalParams:
		return "INVAL-PARAMS"
	case StatusVTCMTooSmall:
		return "VTCM-TOO-SMALL"
	}
	return fmt.Sprintf("UNKNOWN(%d)", uint32(s))
}

// Data types of the public protocol (htp_data_type; ggml's numbering
// where they overlap). Upstream also sends Q4_K..Q6_K, Q2_K, Q3_K, Q1_0,
// Q2_0 and BF16 with their ggml values.
const (
	TypeF32        = 0
	TypeF16        = 1
	TypeQ4_0       = 2
	TypeQ4_1       = 3
	TypeQ8_0       = 8
	TypeIQ4_NL     = 20
	TypeI32        = 26
	TypeI64        = 27
	TypeMXFP4      = 39
	TypeQ4_0Tiled  = 200
	TypeQ4_1Tiled  = 201
	TypeQ8_0Tiled  = 202
	TypeMXFP4Tiled = 203
	TypeInvalid    = 204
)

// Tensor flags. The public snapshot names bits 0 and 1 COMPUTE and DIRTY;
// upstream's names and meanings are WEIGHT (1<<0), TILED (1<<1, the public
// dev branch's REPACK) and FENCE (1<<2). Fence-protocol meaning, not verified
// against a real DSP library.
const (
	TensorWeight = 1 << 0
	TensorTiled  = 1 << 1
	TensorFence  = 1 << 2
	// TensorWireMask are the flags that go on the wire.
	TensorWireMask = TensorWeight | TensorTiled | TensorFence
	// Public snapshot names of bits 0 and 1.
	TensorCompute = 1 << 0
	TensorDirty   = 1 << 1
)

// BufExtended marks a buffer mapped with FASTRPC_MAP_FD_DELAYED_EXTENDED
// (DMA64), not counted against the DSP's vmem. Fence-protocol only, not verified
// against a real DSP library.
const BufExtended = 1 << 0

// OpFlagSkipCompute is HTP_OPFLAGS_SKIP_COMPUTE (public; upstream sends 0).
const OpFlagSkipCompute = 1 << 0

// Profiler modes (htp_profiler_mode).
const (
	ProfDisabled = 0
	ProfBasic    = 1
	ProfPMU      = 2
	ProfTrace    = 3
)

// DefaultPMUEvents are upstream's PMU events for profiling mode 2.
var DefaultPMUEvents = [ProfPMUNCnt]uint32{0x3, 0x111, 0x100, 0x105, 0x240, 0x256, 0x7D, 0x8C}

// FenceSlotSize is the bytes of one fence slot: u32 seq at +0, u32 status
// at +4. HTP_FENCE_SLOT_SIZE is not public; 64 (a cache line) is our
// choice, sent to the DSP as the fence tensor's ne[0] so a DSP library can
// read it. Fence-protocol only, not verified against a real DSP library.
const FenceSlotSize = 64

// FenceBufferSize is the bytes of a session's fence buffer (upstream's
// 64 KiB).
const FenceBufferSize = 64 * 1024

// Trace event ids (public), named as htp-ops.h's htp_trace_event_id
// without HTP_TRACE_EVT_ (layout_test.go checks every one).
var traceNames = map[uint16]string{
	0: "DMA", 1: "L2FLUSH", 2: "INIT", 3: "BUFF", 20: "HVX_COMP", 21: "HVX_A_QUANT", 22: "HVX_A_PREP",
	23: "HVX_W_DEQUANT", 24: "HVX_W_PREP", 25: "HVX_O_PROC", 26: "HVX_FA_QK", 27: "HVX_FA_SFM",
	28: "HVX_FA_Q_PREP", 29: "HVX_FA_K_PREP", 30: "HVX_FA_V_PREP", 40: "HMX_COMP",
}

// TraceEventName names a trace event id ("UNKNOWN" for ids the public
// protocol lacks, such as upstream's GDN and FENCE events).
func TraceEventName(id uint16) string {
	if n, ok := traceNames[id]; ok {
		return n
	}
	return "UNKNOWN"
}
