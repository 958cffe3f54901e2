package htp

import "fmt"

// Protocol is the wire protocol a session speaks. Opcodes, the op
// descriptor's size and the request/response framing differ between
// them, and a DSP library accepts exactly one: a mismatch is not an
// error on the DSP, it computes garbage or never answers.
type Protocol uint8

const (
	// ProtocolPublic is ggml-org/ggml d99724f's htp-ops.h: 224-byte op
	// descriptors (6 inputs), the 24-byte request and 88-byte response,
	// opcodes 0..46. It has no fences: events, copies across cores, groups
	// and the all-reduce are done by the host. Pinned by the layout tests
	// against the public headers; not verified against a real DSP library.
	ProtocolPublic Protocol = iota
	// ProtocolFence is the fence protocol of upstream ggml-hexagon (the
	// ggml-hexagon.cpp of crates.io llama-cpp-sys-4 0.10.0), as
	// devices/hexagon/testdata/facts/hexagon.md §2.2-2.4 and §3 reconstruct it
	// (a third-party Rust port of upstream's htp-ops.h and a fake-DSP harness; upstream's own headers are
	// not public): the fence-protocol opcode table 0..59 with FENCE, CPY_FENCE,
	// MDEV_GROUP and ALLREDUCE, 232-byte op descriptors (10 inputs),
	// the 32-byte request and 96-byte response carrying a u64 seq, the
	// tensor flags WEIGHT/TILED/FENCE and I8 fence tensors. Fence-protocol only:
	// NOT verified against a real DSP library.
	ProtocolFence
)

// ProtocolSeed is the old name of ProtocolFence, kept so that code
// written before the rename still builds.
//
// Deprecated: use ProtocolFence.
const ProtocolSeed = ProtocolFence

// String is the protocol's version string, logged at session start so a
// mismatch with the DSP library can be traced.
func (p Protocol) String() string {
	switch p {
	case ProtocolPublic:
		return "ggml-htp d99724f (public htp-ops.h, htp_iface.idl)"
	case ProtocolFence:
		return "ggml-htp fence-v1 (hexagon.md 2.2-2.4/3 reconstruction; NOT verified against a real DSP library)"
	}
	return fmt.Sprintf("htp.Protocol(%d)", uint8(p))
}

// Fences reports whether the protocol has FENCE, CPY_FENCE, MDEV_GROUP
// and ALLREDUCE.
func (p Protocol) Fences() bool { return p == ProtocolFence }

// MaxInputs is the sources an op descriptor carries.
func (p Protocol) MaxInputs() int {
	if p == ProtocolFence {
		return FenceMaxInputs
	}
	return MaxInputs
}

// OpDescSize is the bytes of one op descriptor on the wire.
func (p Protocol) OpDescSize() int {
	if p == ProtocolFence {
		return 232
	}
	return 224
}

// ReqSize and RspSize are the bytes of the batch request and response.
func (p Protocol) ReqSize() int {
	if p == ProtocolFence {
		return 32
	}
	return 24
}

// RspSize is the bytes of a batch response.
func (p Protocol) RspSize() int {
	if p == ProtocolFence {
		return 96
	}
	return 88
}

// fenceOpcodes is the fence-protocol table (hexagon.md 3, from a third-party Rust
// port; not verified): the wire value of each of our opcodes, -1 where
// upstream has none. MUL_MAT_QKV and MUL_MAT_FFN have no fence-protocol value (its
// 6 and 7 are MUL_MAT_NX and MUL_MAT_ID_NX): the host does not build them.
var fenceOpcodes = map[Op]uint32{
	OpMul: 0, OpAdd: 1, OpSub: 2, OpDiv: 3, OpMulMat: 4, OpMulMatID: 5, OpMulMatAdd: 8, OpRMSNorm: 9,
	OpRMSNormMul: 10, OpUnarySilu: 11, OpUnaryGelu: 12, OpUnarySigmoid: 13, OpUnaryExp: 14, OpUnaryNeg: 15,
	OpUnarySoftplus: 16, OpUnaryTanh: 17, OpGLUSwiglu: 21, OpGLUSwigluOAI: 22, OpGLUGeglu: 23, OpSoftmax: 25,
	OpAddID: 26, OpRope: 27, OpFlashAttnExt: 28, OpSetRows: 29, OpGetRows: 30, OpScale: 31, OpCpy: 32,
	OpCpyFence: 33, OpArgsort: 34, OpSqr: 36, OpSqrt: 37, OpSumRows: 38, OpSSMConv: 39, OpRepeat: 40,
	OpCumsum: 41, OpFill: 42, OpDiag: 43, OpSolveTri: 44, OpL2Norm: 45, OpGatedDeltaNet: 46, OpTri: 47,
	OpPad: 48, OpNorm: 49, OpConcat: 50, OpClamp: 51, OpIm2col: 53, OpFence: 54, OpAllreduce: 55,
	OpAllreduceAdd: 56, OpMdevGroup: 58,
}

// Opcode is op's wire value under p; false when p has no such op.
func (p Protocol) Opcode(op Op) (uint32, bool) {
	if p == ProtocolFence {
		v, ok := fenceOpcodes[op]
		return v, ok
	}
	return uint32(op), op < OpInvalid
}

// FenceMaxInputs is HTP_OP_MAX_INPUTS of the fence protocol (hexagon.md 2.2: the
// ALLREDUCE of 4 ranks takes 8 sources; the Rust port says 10).
const FenceMaxInputs = 10

// FenceOpDesc is the fence-protocol htp_op_desc (232 bytes): OpDesc with 10
// sources. Fence-protocol only, not verified against a real DSP library.
type FenceOpDesc struct {
	Opcode       uint32
	Flags        uint32
	Params       [MaxParams]int32
	KernelParams [MaxKernParams]int32
	Src          [FenceMaxInputs]uint16
	Dst          [MaxOutputs]uint16
	Pad          [2]uint16
}

// Public is the descriptor in the public layout (the first 6 sources).
func (d *FenceOpDesc) Public() OpDesc {
	o := OpDesc{Opcode: d.Opcode, Flags: d.Flags, Params: d.Params, KernelParams: d.KernelParams, Dst: d.Dst}
	copy(o.Src[:], d.Src[:MaxInputs])
	return o
}

// FenceOpBatchReq is the fence-protocol request (32 bytes): the public one and a
// trailing u64 seq (the public qualcomm dev htp-ops.h @4f400747 layout).
// Fence-protocol only, not verified against a real DSP library.
type FenceOpBatchReq struct {
	OpBatchReq
	Seq uint64
}

// FenceOpBatchRsp is the fence-protocol response (96 bytes): the public one and a
// trailing u64 seq. Fence-protocol only, not verified against a real DSP library.
type FenceOpBatchRsp struct {
	OpBatchRsp
	Seq uint64
}

// TypeI8 is the type of fence tensors (ggml's I8). Fence-protocol only.
const TypeI8 = 24

// Allreduce modes (htp_allreduce_kernel_params.mode, hexagon.md 2.4).
const (
	AllreduceFull          = 0
	AllreduceShardedFanout = 1
)

// AllreduceKernelParams is the leading part of upstream's
// htp_allreduce_kernel_params as hexagon.md 2.4 names its fields (rank,
// n_ranks, mode, is_row_bcast, then VTCM sizes); the field widths are our
// reading (u32 each). Fence-protocol only, not verified against a real DSP library.
type AllreduceKernelParams struct {
	Rank, NRanks, Mode, IsRowBcast uint32
	VtcmSize, VtcmSizePerThread    uint32
}
