// Package htp is the host side of the wire protocol between ggml's Hexagon
// backend and its DSP library (libggml-htp-vNN.so): the structs the host
// writes into shared memory for an op batch, the opcodes, status codes and
// flags, and the packing of the htp_iface FastRPC methods.
//
// The protocol is the public one of ggml-org/ggml at d99724f
// (src/ggml-hexagon/htp/htp-ops.h and htp_iface.idl). Every struct and
// value of that snapshot is pinned by a layout test against the measured
// facts (testdata/layouts-d99724f.txt): verified against the public
// headers, and on the test double, but not against a real DSP library.
// Upstream (the ggml-hexagon.cpp this package follows) uses additions whose
// headers are not public: fences, CPY_FENCE, MDEV_GROUP, ALLREDUCE, the
// seq-carrying request and response, 10-input op descriptors and the
// tiled/fence tensor flags. They make up ProtocolFence (protocol.go), each
// marked "fence-protocol only, not verified against a real DSP library": a DSP
// library built from other headers reads them as garbage, and only a real
// device can say which values it expects.
package htp

// Limits of the public protocol (htp-ops.h at d99724f).
const (
	MaxDims        = 4
	MaxInputs      = 6
	MaxOutputs     = 4
	MaxParams      = 16
	MaxKernParams  = 32 // int32 words: a 128-byte blob
	MaxBufs        = 16
	MaxTensors     = 8192
	MaxVmemDefault = 3355443200 // bytes of DSP virtual memory for mappings (arch >= 75)
	MmapMaxVmem    = 2147483648 // HAP_mmap's limit on v73
	MaxNThreads    = 10
	TraceMaxEvents = 256
	ProfPMUNCnt    = 8
	// NoTensor is the index of an absent source or destination.
	NoTensor = 0xffff
)

// Tiled weight blocks (QK_*_TILED).
const (
	QK4_0Tiled  = 256
	QK8_0Tiled  = 128
	QKMXFP4Tile = 256
)

// BufDesc is struct htp_buf_desc (24 bytes): one shared buffer of a batch.
type BufDesc struct {
	// Base is the host address of the rpcmem block; the DSP overwrites it
	// with its own address.
	Base  uint64
	Size  uint64
	Flags uint32 // BufExtended (the public DSP reads no buffer flag)
	FD    uint32 // the rpcmem fd
}

// Tensor is struct htp_tensor (56 bytes).
type Tensor struct {
	// Data is the byte offset into bufs[BI]; the DSP rewrites it to a
	// pointer. The public protocol has 32 bits for it: a tensor must start
	// within the first 4 GiB of its buffer.
	Data     uint32
	Reserved uint32
	// Size is the tensor's bytes (nb[3]*ne[3] for a tiled tensor).
	Size  uint32
	Flags uint32 // public: TensorCompute; fence: TensorWeight, TensorTiled, TensorFence
	Type  uint32 // ggml_type / htp_data_type
	BI    uint16 // buffer index
	TI    uint16 // the tensor's own index
	Ne    [MaxDims]uint32
	Nb    [MaxDims]uint32
}

// OpDesc is struct htp_op_desc (224 bytes with MaxInputs = 6).
type OpDesc struct {
	Opcode uint32
	Flags  uint32 // OpFlagSkipCompute
	// Params are the ggml node's op_params.
	Params [MaxParams]int32
	// KernelParams is the host-computed kernel blob (up to 128 bytes).
	KernelParams [MaxKernParams]int32
	Src          [MaxInputs]uint16
	Dst          [MaxOutputs]uint16
	Pad          [2]uint16
}

// ProfDesc is struct htp_prof_desc (48 bytes): the DSP's timing of one op.
type ProfDesc struct {
	Opcode      uint32
	Usecs       uint32
	CyclesStart uint32
	CyclesStop  uint32
	PMU         [ProfPMUNCnt]uint32
}

// TraceDesc is struct htp_trace_desc (8 bytes): one trace event.
type TraceDesc struct {
	Cycles uint32
	ID     uint16
	// Info: bit 15 set for a stop event; bits 14..0 the tile or chunk.
	Info uint16
}

// OpBatchReq is struct htp_opbatch_req (24 bytes), the dspqueue message of
// a batch. ID carries the batch's sequence number (low 32 bits): upstream
// sends a 64-bit seq in a field the public struct lacks, so we use the
// public id field for it, and the DSP echoes it in OpBatchRsp.ID.
type OpBatchReq struct {
	ID       uint32
	NBufs    uint32
	NTensors uint32
	NOps     uint32
	NTraces  uint32 // trace events per thread; 0 without tracing
	Pad      uint32
}

// OpBatchRsp is struct htp_opbatch_rsp (88 bytes), the DSP's answer.
type OpBatchRsp struct {
	ID          uint32
	Status      uint32
	NBufs       uint32
	NTensors    uint32
	NOps        uint32
	NTraces     [MaxNThreads + 1]uint32
	Usecs       uint32
	Pad         uint32
	CyclesStart uint64
	CyclesStop  uint64
}

// FastDiv is struct fastdiv_values: a divisor precomputed for the DSP's
// multiply-shift division.
type FastDiv struct {
	MP uint32
	L  uint32
}

// NewFastDiv returns the fastdiv values of d (init_fastdiv_values):
// l = ceil(log2 d), mp = 2^32 * (2^l - d) / d + 1. d = 0 (a ratio that
// rounds to zero, such as MUL_MAT_ID's tokens per expert) gives zeros
// instead of the snapshot's undefined division.
func NewFastDiv(d uint32) FastDiv {
	if d == 0 {
		return FastDiv{}
	}
	var l uint32
	for l < 32 && uint64(1)<<l < uint64(d) {
		l++
	}
	mp := (uint64(1)<<32)*((uint64(1)<<l)-uint64(d))/uint64(d) + 1
	return FastDiv{MP: uint32(mp), L: l}
}

// MMKernelParams is struct htp_mm_kernel_params (124 bytes).
type MMKernelParams struct {
	KernelType, Pipeline, MChunk, NChunk, NThreads, NActThreads, NHMX, NPrefetch uint32
	TileSize, AlignedTileSize, Src1RowSize, VtcmSize                             uint32
	VtcmSrc0Size, VtcmSrc1Size, VtcmSrc2Size, VtcmSrc3Size, VtcmDstSize          uint32
	DivNe12Ne1, DivNe1, DivR2, DivR3, DivNe11, DivNActThreads, DivNe00Padded     FastDiv
}

// FAKernelParams is struct htp_fa_kernel_params (124 bytes).
type FAKernelParams struct {
	KernelType, IsQFP32, IsDstFP32, NThreads uint8
	Br, Bc, NKVBlocks, G                     uint16
	Scale, MaxBias, LogitSoftcap             float32
	VtcmSize, QRows, QRowsPerThread          uint32
	M0, M1                                   float32
	NHeadLog2                                uint32
	Src3Div2, Src3Div3                       FastDiv
	BroadcastRK2, BroadcastRK3               FastDiv
	BroadcastRV2, BroadcastRV3               FastDiv
	// U is the HMX/HVX union of the public header, kept as bytes.
	U [28]byte
}

// UnaryKernelParams is struct htp_unary_kernel_params (92 bytes).
type UnaryKernelParams struct {
	NThreads, ColTile, VtcmRowPerThread, Block, BroadcastWeight         uint32
	VtcmSrc0SizePerThread, VtcmSrc1SizePerThread, VtcmDstSizePerThread  uint32
	VtcmSrc0Size, VtcmSrc1Size, VtcmDstSize                             uint32
	Src0RowSizeAligned, Src1RowSizeAligned, DstRowSizeAligned, VtcmSize uint32
	DivNe01, DivNe02, DivNe012, DivTPR                                  FastDiv
}
