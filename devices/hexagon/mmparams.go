package hexagon

import (
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// The matmul kernels of htp_mm_kernel_type (matmul-ops.h at d99724f);
// 1 and 2 are the HMX kernels, whose planner is not ported.
const (
	mmHVXF16VTCM      = 3
	mmHVXF16DDR       = 4
	mmHVXF16F32DDR    = 5
	mmHVXF32VTCM      = 6
	mmHVXF32DDR       = 7
	mmHVXF32F16DDR    = 8
	mmHVXQuantRow     = 9
	mmHVXQuantBlock   = 10
	mmHVXQuantRowFlat = 11
)

// mmMinRows is HTP_MM_HMX_MIN_NROWS: with more activation rows than this
// the quantized kernels keep only two weight rows in flight per thread.
const mmMinRows = 4

// mmTile is a repacked weight type's 32x32 tile in DDR and in VTCM
// (padded to 128 bytes).
type mmTile struct{ size, aligned uint64 }

var mmTiles = map[quant.Type]mmTile{
	quant.Q4_0: {576, 640}, quant.IQ4_NL: {576, 640}, quant.Q4_1: {640, 640},
	quant.Q8_0: {1088, 1152}, quant.MXFP4: {544, 640},
}

// mmActRow is the bytes of one activation row quantized for the
// quantized kernels: Q8_1 (with sums) for Q4_1 weights, Q8_0 otherwise;
// tiled in 32-element blocks of a 128-padded row, or flat (quants, then
// the scales, each 128-aligned).
func mmActRow(w quant.Type, ne10 uint64, flat bool) uint64 {
	tile, scale := uint64(1152), uint64(2)
	if w == quant.Q4_1 {
		tile, scale = 1280, 4
	}
	if flat {
		return alignUp(ne10, 128) + alignUp((ne10+31)/32*scale, 128)
	}
	return alignUp(ne10, 128) / 32 * tile
}

// mmLayout is one VTCM plan of the HVX kernels (htp_mm_hvx_vtcm_layout):
// areas laid out one after another, src1 first.
type mmLayout struct{ src0, src1, src2, dst, total uint64 }

// mmShape is what the HVX planner reads of a matmul.
type mmShape struct {
	kernel                         int
	w                              quant.Type
	ne10, rows, threads            uint64
	dstRow, src0Row, src1Row, src2 uint64
	prefetch                       uint64
	id                             bool
}

// layout sizes the areas for sh: n_prefetch weight rows per thread
// (tiles when the weight is repacked), the whole activation in VTCM for
// the VTCM and quantized kernels or n_prefetch rows per thread for the
// DDR ones, a result row per thread only for a single activation row,
// and at least an f32 row of scratch per thread for the quantizer.
func (sh mmShape) layout() mmLayout {
	var L mmLayout
	if sh.src2 > 0 {
		L.src2 = alignUp(sh.src2, 128)
	}
	tile, repacked := mmTiles[sh.w]
	wRow := alignUp(sh.src0Row, 128)
	weights := func(round uint64) uint64 {
		if repacked {
			return alignUp(sh.prefetch*(sh.ne10/32)*tile.aligned, round) * sh.threads
		}
		return alignUp(sh.prefetch*wRow, round) * sh.threads
	}
	scratch := alignUp(sh.ne10*4, 128*4)
	var dstRow uint64
	if sh.rows <= 1 {
		dstRow = alignUp(sh.dstRow, 128)
	}
	switch {
	case sh.id:
		L.src0 = weights(256)
		L.src1 = alignUp(mmActRow(sh.w, sh.ne10, false)*sh.rows, 256)
		L.dst = scratch * sh.threads
	case sh.kernel == mmHVXF16VTCM || sh.kernel == mmHVXF32VTCM:
		elem := uint64(2)
		if sh.kernel == mmHVXF32VTCM {
			elem = 4
		}
		L.src1 = alignUp(alignUp(sh.ne10*elem, 128)*sh.rows, 256)
		L.src0 = alignUp(sh.prefetch*wRow, 256) * sh.threads
		L.dst = dstRow * sh.threads
	case sh.kernel == mmHVXF16DDR || sh.kernel == mmHVXF16F32DDR || sh.kernel == mmHVXF32DDR || sh.kernel == mmHVXF32F16DDR:
		L.src0 = alignUp(sh.prefetch*sh.src0Row, 256) * sh.threads
		L.src1 = alignUp(sh.prefetch*sh.src1Row, 256) * sh.threads
		L.dst = dstRow * sh.threads
	case sh.kernel >= mmHVXQuantRow:
		L.src0 = weights(256)
		L.src1 = alignUp(mmActRow(sh.w, sh.ne10, sh.kernel == mmHVXQuantRowFlat)*sh.rows, 256)
		L.dst = max(dstRow, scratch) * sh.threads
	}
	L.total = L.src0 + L.src1 + L.src2 + L.dst
	return L
}

// solveMatMul is the snapshot's precompute of htp_mm_kernel_params for
// MUL_MAT, MUL_MAT_ID and MUL_MAT_ADD. With hmx (HMX units and
// GGML_HEXAGON_MM_SELECT=2) an eligible product gets the HMX kernel whose
// chunks fit VTCM (solveHMX); the rest its HVX kernels: quantized
// weights go to the tiled-activation kernel (row- or block-parallel) with
// the deepest weight prefetch that fits VTCM, else to the flat one; F16
// and F32 weights to the kernel that keeps the activation in VTCM when
// it fits and nothing is batched or permuted, else to the one streaming
// both from DDR. tiled is false under GGML_HEXAGON_MM_SELECT=0 (the
// snapshot's select 1: flat only). For HVX, n_threads, the chunks and the
// HMX fields stay zero, as the snapshot leaves them.
func solveMatMul(n *opNode, threads uint32, vtcm uint64, hmx, tiled bool) htp.MMKernelParams {
	src0, src1, dst := n.inputs[0], n.inputs[1], n.outputs[0]
	var kp htp.MMKernelParams
	sh := mmShape{w: src0.Type, ne10: uint64(src1.Ne[0]), rows: uint64(src1.Ne[1] * src1.Ne[2] * src1.Ne[3]),
		threads: uint64(threads), dstRow: dst.Nb[1], src0Row: src0.Nb[1], src1Row: src1.Nb[1], prefetch: 16,
		id: n.op == htp.OpMulMatID}
	if n.op == htp.OpMulMatAdd && n.inputs[2] != nil {
		sh.src2 = n.inputs[2].Nb[1]
	}
	ne02, ne03, ne11, ne12, ne13 := src0.Ne[2], src0.Ne[3], src1.Ne[1], src1.Ne[2], src1.Ne[3]
	tile, repacked := mmTiles[src0.Type]
	ne00p, ne01p := src0.Ne[0], src0.Ne[1]
	if repacked {
		ne00p, ne01p = (ne00p+31)/32*32, (ne01p+31)/32*32
	}
	batched := ne02*ne03 > 1 || ne12*ne13 > 1
	switch {
	case hmx && hmxEligible(src0, src1, ne01p, sh.id, batched) &&
		solveHMX(&kp, n, threads, vtcm, uint64(ne00p), uint64(ne01p), batched):
	case repacked || (src0.Type != quant.F16 && src0.Type != quant.F32):
		kp.TileSize, kp.AlignedTileSize = uint32(tile.size), uint32(tile.aligned)
		solveMatMulQuant(&kp, sh, vtcm, tiled)
	default:
		solveMatMulFloat(&kp, sh, src0, src1, vtcm)
	}
	kp.DivNe12Ne1 = htp.NewFastDiv(uint32(ne12 * ne11))
	kp.DivNe1 = htp.NewFastDiv(uint32(ne11))
	kp.DivR2 = htp.NewFastDiv(uint32(ne12 / max(ne02, 1)))
	kp.DivR3 = htp.NewFastDiv(uint32(ne13 / max(ne03, 1)))
	kp.DivNe11 = kp.DivNe1
	return kp
}

// set copies a plan into the block. The snapshot leaves
// vtcm_src2_size zero outside the fused QKV/FFN kernels, though the plan
// counts MUL_MAT_ADD's addend row in the total.
func (L mmLayout) set(kp *htp.MMKernelParams) {
	kp.VtcmSize, kp.VtcmSrc0Size, kp.VtcmSrc1Size, kp.VtcmDstSize = uint32(L.total), uint32(L.src0), uint32(L.src1), uint32(L.dst)
}

// solveMatMulQuant picks among the quantized kernels: the block-parallel
// one when there are fewer activation rows than threads; a prefetch depth
// from 16 (2 with more than mmMinRows rows) halved until the plan fits.
// MUL_MAT_ID has no flat fallback.
func solveMatMulQuant(kp *htp.MMKernelParams, sh mmShape, vtcm uint64, tiled bool) {
	if sh.id || (tiled && sh.ne10%32 == 0) {
		kp.Src1RowSize = uint32(mmActRow(sh.w, sh.ne10, false))
		sh.kernel = mmHVXQuantRow
		if sh.rows < sh.threads {
			sh.kernel = mmHVXQuantBlock
		}
		depth := uint64(16)
		if sh.rows > mmMinRows {
			depth = 2
		}
		for sh.prefetch = depth; sh.prefetch > 2 && sh.layout().total > vtcm; sh.prefetch /= 2 {
		}
		L := sh.layout()
		if sh.id || L.total <= vtcm {
			kp.KernelType, kp.NPrefetch = uint32(sh.kernel), uint32(sh.prefetch)
			L.set(kp)
			return
		}
	}
	sh.kernel, sh.prefetch = mmHVXQuantRowFlat, 16
	kp.Src1RowSize = uint32(mmActRow(sh.w, sh.ne10, true))
	kp.KernelType, kp.NPrefetch = mmHVXQuantRowFlat, 16
	sh.layout().set(kp)
}

// solveMatMulFloat picks the F16 or F32 weight kernel.
func solveMatMulFloat(kp *htp.MMKernelParams, sh mmShape, src0, src1 *graph.Tensor, vtcm uint64) {
	elem, vtcmKernel, ddr := uint64(2), mmHVXF16VTCM, mmHVXF16DDR
	if src0.Type == quant.F32 {
		elem, vtcmKernel, ddr = 4, mmHVXF32VTCM, mmHVXF32DDR
	} else if src1.Type == quant.F32 {
		ddr = mmHVXF16F32DDR
	}
	sh.kernel = vtcmKernel
	L := sh.layout()
	batched := src0.Ne[2] > 1 || src0.Ne[3] > 1
	if !batched && !src0.IsPermuted() && !src1.IsPermuted() && L.total <= vtcm {
		kp.Src1RowSize = uint32(alignUp(sh.ne10*elem, 128))
	} else {
		sh.kernel = ddr
		kp.Src1RowSize = uint32(src1.Nb[1])
		L = sh.layout()
	}
	kp.KernelType, kp.NPrefetch = uint32(sh.kernel), 16
	L.set(kp)
}
