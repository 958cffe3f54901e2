package hexagon

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/ggml-go/ggml/quant"

	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
)

// Kernel parameters: the 128-byte blob of each op descriptor that the
// host solves for the DSP's kernel. Upstream solves them in htp-kparams.h,
// which is not public. The public protocol (ggml d99724f) defines three
// blocks and solves them on the host:
//
//   - htp_unary_kernel_params, for the row-wise ops (htp_op_is_unary:
//     CLAMP, NORM, RMS_NORM, RMS_NORM_MUL, SCALE, SQR, SQRT, the UNARY_*
//     functions, L2_NORM, TRI): threads, VTCM row blocking or column
//     tiling, aligned row sizes, fastdiv divisors. Solved here
//     (solveUnary), following the snapshot's precompute and
//     htp_unary_vtcm_layout_build; the double checks every field a shape
//     determines.
//   - htp_fa_kernel_params (FLASH_ATTN_EXT): solved here for the HVX
//     kernel (solveFlashAttn), as the snapshot does when HMX is off or not
//     eligible (GGML_HEXAGON_FA_SELECT=1, decode with small heads); the
//     snapshot's HMX planner (hmx_fa_find_chunk_size) is not ported, so
//     cases it would give to HMX run the HVX kernel here. The double
//     checks the fields a shape fixes.
//   - htp_mm_kernel_params (MUL_MAT, MUL_MAT_ID, MUL_MAT_ADD): solved
//     here (solveMatMul, mmparams.go and mmhmx.go) as the snapshot's
//     precompute does with matmul-ops.h's planners: with HMX units and
//     GGML_HEXAGON_MM_SELECT=2 an eligible product gets the HMX 2-D or
//     batched-F16 kernel, its chunks and activation threads; else the HVX
//     kernel for the weight type, the prefetch depth that fits VTCM and
//     the area sizes; the shape divisors always. The fused QKV/FFN
//     matmuls have no Go fusion yet, so their solvers are not ported. The
//     double checks the fields a shape fixes.
//
// Upstream's ALLREDUCE block (htp_allreduce_kernel_params, whose field
// names hexagon.md lists) is written by allReduceDSP. Every other op has
// no block: the DSP receives zeros, as the snapshot sends them.

// unaryOps are htp_op_is_unary's opcodes.
var unaryOps = map[htp.Op]bool{
	htp.OpClamp: true, htp.OpNorm: true, htp.OpRMSNorm: true, htp.OpRMSNormMul: true, htp.OpScale: true,
	htp.OpSqr: true, htp.OpSqrt: true, htp.OpUnaryNeg: true, htp.OpUnaryExp: true, htp.OpUnarySigmoid: true,
	htp.OpUnarySilu: true, htp.OpUnaryGelu: true, htp.OpUnarySoftplus: true, htp.OpUnaryTanh: true,
	htp.OpL2Norm: true, htp.OpTri: true,
}

// solveKernelParams fills n's blob for session s. A plan that needs more
// VTCM than the session has is an error: the DSP would refuse it
// (INVAL_PARAMS or VTCM_TOO_SMALL, breaking the session), so supports-op
// asks the same solvers and such a node stays on the CPU (upstream's
// htp_kparams_check in supports_op).
func (s *session) solveKernelParams(n *opNode) error {
	var need uint32
	switch {
	case unaryOps[n.op]:
		kp := solveUnary(n, s.nThreads, s.vtcm)
		*(*htp.UnaryKernelParams)(unsafe.Pointer(&n.kparams)) = kp
		need = kp.VtcmSize
	case n.op == htp.OpFlashAttnExt:
		kp := solveFlashAttn(n, s.nThreads)
		*(*htp.FAKernelParams)(unsafe.Pointer(&n.kparams)) = kp
		need = kp.VtcmSize
	case n.op == htp.OpMulMat || n.op == htp.OpMulMatID || n.op == htp.OpMulMatAdd:
		kp := solveMatMul(n, s.nThreads, s.vtcm, s.nHMX > 0 && s.opts.MMSelect >= 2, s.opts.MMSelect >= 1)
		*(*htp.MMKernelParams)(unsafe.Pointer(&n.kparams)) = kp
		need = kp.VtcmSize
	}
	if uint64(need) > s.vtcm {
		return fmt.Errorf("hexagon: %s: %s (%s) needs %d bytes of VTCM, the session has %d", s.name, n.node, n.op, need, s.vtcm)
	}
	return nil
}

// FA kernel types (htp_fa_kernel_type) and the HVX kernel's constants
// (flash-attn-ops.h): KV rows per block, mask rows cached.
const (
	faKernelHVX     = 1
	faHVXBlock      = 64
	faHVXMaskCached = 128
)

// faHVXUnion is the HVX member of htp_fa_kernel_params' union.
type faHVXUnion struct {
	SizeQRowPadded, SizeKRowPadded, SizeVRowPadded uint32
	Src0Div21, Src0Div1                            htp.FastDiv
}

// solveFlashAttn is the snapshot's precompute of htp_fa_kernel_params for
// its HVX kernel: one query row against 64-row KV blocks per step, every
// thread with double-buffered K and V blocks, its query row, the mask rows
// it caches and an f32 accumulator row in VTCM; ALiBi's m0/m1 and the
// softcap-adjusted scale from ggml's op params.
func solveFlashAttn(n *opNode, nThreads uint32) htp.FAKernelParams {
	q, k, v, mask := n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3]
	dst := n.outputs[0]
	var kp htp.FAKernelParams
	f32 := func(i int) float32 { return math.Float32frombits(uint32(n.params[i])) }
	scale, maxBias, softcap := f32(0), f32(1), f32(2)
	if softcap != 0 {
		scale /= softcap
	}
	kp.Scale, kp.MaxBias, kp.LogitSoftcap = scale, maxBias, softcap
	if q.Type == quant.F32 {
		kp.IsQFP32 = 1
	}
	if dst.Type == quant.F32 {
		kp.IsDstFP32 = 1
	}
	kp.G = uint16(q.Ne[2] / k.Ne[2])
	kp.NHeadLog2 = 1 << bits.Len32(uint32(q.Ne[2])>>1)
	kp.M0 = float32(math.Pow(2, float64(-maxBias/float32(kp.NHeadLog2))))
	kp.M1 = float32(math.Pow(2, float64(-(maxBias/2)/float32(kp.NHeadLog2))))

	kp.KernelType, kp.Br, kp.Bc = faKernelHVX, 1, faHVXBlock
	kp.NKVBlocks = uint16((k.Ne[1] + faHVXBlock - 1) / faHVXBlock)
	kp.NThreads = uint8(nThreads)
	qElem := uint64(2)
	if kp.IsQFP32 == 1 {
		qElem = 4
	}
	qRow := alignUp(uint64(q.Ne[0])*qElem, 128)
	kRow := alignUp(uint64(k.Ne[0])*2, 128)
	vRow := alignUp(uint64(v.Ne[0])*2, 128)
	perThread := qRow + 2*kRow*faHVXBlock + 2*vRow*faHVXBlock + alignUp(uint64(v.Ne[0])*4, 128)
	if mask != nil {
		perThread += alignUp(faHVXBlock*2, 128) * faHVXMaskCached
	}
	kp.VtcmSize = uint32(perThread * uint64(nThreads))
	u := faHVXUnion{SizeQRowPadded: uint32(qRow), SizeKRowPadded: uint32(kRow), SizeVRowPadded: uint32(vRow),
		Src0Div21: htp.NewFastDiv(uint32(q.Ne[2] * q.Ne[1])), Src0Div1: htp.NewFastDiv(uint32(q.Ne[1]))}
	*(*faHVXUnion)(unsafe.Pointer(&kp.U)) = u
	kp.BroadcastRK2 = htp.NewFastDiv(uint32(q.Ne[2] / k.Ne[2]))
	kp.BroadcastRK3 = htp.NewFastDiv(uint32(q.Ne[3] / k.Ne[3]))
	kp.BroadcastRV2 = htp.NewFastDiv(uint32(q.Ne[2] / v.Ne[2]))
	kp.BroadcastRV3 = htp.NewFastDiv(uint32(q.Ne[3] / v.Ne[3]))
	if mask != nil {
		kp.Src3Div2 = htp.NewFastDiv(uint32(mask.Ne[2]))
		kp.Src3Div3 = htp.NewFastDiv(uint32(mask.Ne[3]))
	}
	kp.QRows = uint32(q.Ne[1] * q.Ne[2] * q.Ne[3])
	kp.QRowsPerThread = (kp.QRows + nThreads - 1) / max(nThreads, 1)
	return kp
}

func alignUp(n, m uint64) uint64 { return (n + m - 1) / m * m }

// solveUnary is the snapshot's precompute of htp_unary_kernel_params for
// f32 rows: each of up to nThreads threads streams rows through VTCM, two
// buffers per row of source and result (RMS_NORM_MUL's weight too, unless
// one row is broadcast); when no whole row fits and the op is not a
// reduction, rows are cut in column tiles of a quarter of a thread's VTCM.
func solveUnary(n *opNode, nThreads uint32, vtcm uint64) htp.UnaryKernelParams {
	src0, src1, dst := n.inputs[0], n.inputs[1], n.outputs[0]
	var kp htp.UnaryKernelParams
	rows := uint32(src0.Ne[1] * src0.Ne[2] * src0.Ne[3])
	threads := max(min(nThreads, rows), 1)
	kp.NThreads = threads
	row0 := alignUp(uint64(src0.Ne[0])*4, 128)
	rowD := alignUp(uint64(dst.Ne[0])*4, 128)
	kp.Src0RowSizeAligned, kp.DstRowSizeAligned = uint32(row0), uint32(rowD)
	var row1 uint64
	bcast := false
	if n.op == htp.OpRMSNormMul && src1 != nil {
		row1 = alignUp(uint64(src1.Ne[0])*4, 128)
		bcast = src1.Ne[1]*src1.Ne[2]*src1.Ne[3] == 1
	}
	kp.Src1RowSizeAligned = uint32(row1)
	if bcast {
		kp.BroadcastWeight = 1
	}

	t := uint64(threads)
	var perRow, rowsPerThread uint64
	switch {
	case n.op == htp.OpRMSNormMul && bcast:
		avail := vtcm - min(vtcm, t*row1)
		perRow = 2 * (row0 + rowD)
		rowsPerThread = avail / (t * perRow)
	case n.op == htp.OpRMSNormMul:
		perRow = 2 * (row0 + rowD + row1)
		rowsPerThread = vtcm / (t * perRow)
	default:
		perRow = 2 * (row0 + rowD)
		rowsPerThread = vtcm / (t * perRow)
	}
	reduction := n.op == htp.OpNorm || n.op == htp.OpRMSNorm || n.op == htp.OpRMSNormMul || n.op == htp.OpL2Norm
	var colTile uint32
	var b0, b1, bd uint64
	if rowsPerThread == 0 && !reduction {
		tileBytes := (vtcm / t / 4) &^ 127
		colTile = uint32(tileBytes / 4)
		b0, bd = 2*tileBytes, 2*tileBytes
	} else {
		b0, bd = row0*rowsPerThread*2, rowD*rowsPerThread*2
		if n.op == htp.OpRMSNormMul {
			b1 = row1 * rowsPerThread * 2
			if bcast {
				b1 = row1
			}
		}
	}
	kp.ColTile, kp.VtcmRowPerThread = colTile, uint32(rowsPerThread)
	kp.VtcmSrc0SizePerThread, kp.VtcmSrc1SizePerThread, kp.VtcmDstSizePerThread = uint32(b0), uint32(b1), uint32(bd)
	kp.VtcmSrc0Size, kp.VtcmSrc1Size, kp.VtcmDstSize = uint32(b0*t), uint32(b1*t), uint32(bd*t)
	kp.VtcmSize = uint32((b0 + b1 + bd) * t)
	if colTile == 0 && row0 > 0 {
		kp.Block = uint32(b0 / 2 / row0)
	}
	tilesPerRow := uint32(1)
	if colTile > 0 {
		tilesPerRow = (uint32(src0.Ne[0]) + colTile - 1) / colTile
	}
	kp.DivNe01 = htp.NewFastDiv(uint32(src0.Ne[1]))
	kp.DivNe02 = htp.NewFastDiv(uint32(src0.Ne[2]))
	kp.DivNe012 = htp.NewFastDiv(uint32(src0.Ne[1] * src0.Ne[2]))
	kp.DivTPR = htp.NewFastDiv(tilesPerRow)
	return kp
}
