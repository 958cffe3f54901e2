package hexagon

import (
	"unsafe"

	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
)

// Kernel parameters: the 128-byte blob of each op descriptor that the
// host solves for the DSP's kernel. The seed solves them in htp-kparams.h,
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
//   - htp_mm_kernel_params (MUL_MAT, MUL_MAT_ID, the fused matmuls) and
//     htp_fa_kernel_params (FLASH_ATTN_EXT): their solvers choose the HMX
//     or HVX kernel, chunk sizes and prefetch depth from matmul-ops.h's
//     and flash-attn-ops.h's VTCM planners. Not ported: these ops get an
//     all-zero blob, which a d99724f DSP reads as kernel type 0 with no
//     chunking. The double computes them without reading the blob; on a
//     real DSP they need the port first.
//
// The seed's ALLREDUCE block (htp_allreduce_kernel_params, whose field
// names hexagon.md lists) is written by allReduceDSP. Every other op has
// no block: the DSP receives zeros, as the snapshot sends them.

// unaryOps are htp_op_is_unary's opcodes.
var unaryOps = map[htp.Op]bool{
	htp.OpClamp: true, htp.OpNorm: true, htp.OpRMSNorm: true, htp.OpRMSNormMul: true, htp.OpScale: true,
	htp.OpSqr: true, htp.OpSqrt: true, htp.OpUnaryNeg: true, htp.OpUnaryExp: true, htp.OpUnarySigmoid: true,
	htp.OpUnarySilu: true, htp.OpUnaryGelu: true, htp.OpUnarySoftplus: true, htp.OpUnaryTanh: true,
	htp.OpL2Norm: true, htp.OpTri: true,
}

// solveKernelParams fills n's blob for session s.
func (s *session) solveKernelParams(n *opNode) {
	if unaryOps[n.op] {
		kp := solveUnary(n, s.nThreads, s.vtcm)
		*(*htp.UnaryKernelParams)(unsafe.Pointer(&n.kparams)) = kp
	}
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
