package hexagon

import (
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// The HMX kernels of htp_mm_kernel_type and their planner's constants
// (matmul-ops.h at d99724f): an HMX tile is 32x32 fp16; weight loading
// (dequantization) weighs 3 and activation conversion 2 in the chunk
// cost; the activation is converted 2 rows per DMA step, double-buffered.
const (
	mmHMX2D         = 1
	mmHMXF16Batched = 2
	hmxTileBytes    = 2048
	hmxOverhead     = 256
	hmxCostWeight   = 3
	hmxCostAct      = 2
	hmxDMAActRows   = 4
)

// hmxEligible is the snapshot's HMX eligibility: 32-aligned N and K, a
// float or repacked weight, contiguous rows, quantized weights only in
// flat 2-D products, and more than mmMinRows activation rows (tokens,
// for MUL_MAT_ID).
func hmxEligible(src0, src1 *graph.Tensor, ne01p int64, id, batched bool) bool {
	_, repacked := mmTiles[src0.Type]
	switch {
	case ne01p%32 != 0 || src0.Ne[0]%32 != 0:
		return false
	case !repacked && src0.Type != quant.F16 && src0.Type != quant.F32:
		return false
	case !id && batched && src0.Type != quant.F16:
		return false
	case src0.Nb[0] > src0.Nb[1] || src1.Nb[0] > src1.Nb[1]:
		return false
	}
	m := src1.Ne[1]
	if id {
		m = src1.Ne[2]
	}
	return m > mmMinRows
}

// hmxCosts is the VTCM a chunk of nc weight rows by mc activation rows
// takes: perN per weight row, perM per activation row, perMN per result.
type hmxCosts struct{ perN, perM, perMN uint64 }

// hmxChunks searches the (mc, nc) chunk, multiples of 32, that fits
// budget with the least weighted count of blocks (weights re-read per
// activation block and the reverse), the larger chunk on a tie.
func hmxChunks(budget uint64, c hmxCosts, m, n, mCost, nCost uint64) (mc, nc uint64, ok bool) {
	if m == 0 || n == 0 || budget <= hmxOverhead {
		return 0, 0, false
	}
	usable := budget - hmxOverhead
	best := ^uint64(0)
	for cn := n / 32 * 32; cn >= 32; cn -= 32 {
		fixed := cn * c.perN
		if fixed >= usable {
			continue
		}
		cm := min((usable-fixed)/(c.perM+cn*c.perMN)/32*32, m)
		if cm == 0 {
			continue
		}
		cost := (m+cm-1)/cm*mCost + (n+cn-1)/cn*nCost
		if cost < best || (cost == best && cm*cn > mc*nc) {
			best, mc, nc = cost, cm, cn
		}
	}
	return mc, nc, mc > 0
}

func align2K(n uint64) uint64 { return alignUp(n, hmxTileBytes) }

// hmxPrep is the f32 activation-conversion area, which overlaps the
// compute buffers: at least a DMA step per thread, at most 64 rows per
// thread, else as large as the compute buffers.
func hmxPrep(k, actThreads, compute uint64) uint64 {
	return alignUp(min(actThreads*64*k*4, max(alignUp(actThreads*hmxDMAActRows*k*4, 128), compute)), 128)
}

// hmx2DSize is the VTCM of the 2-D kernel: scales and activation tiles,
// then the weights, results and dequantization scratch (doubled when
// pipelined) overlapped by the conversion area.
func hmx2DSize(w quant.Type, k, mc, nc uint64, pipe bool, actThreads, aligned uint64) uint64 {
	weights := align2K(nc * k * 2)
	if w == quant.F32 {
		weights = align2K(nc * k * 4)
	}
	if _, repacked := mmTiles[w]; repacked {
		weights = align2K(nc / 32 * (k / 32) * aligned)
	}
	out, scratch := align2K(mc*nc*2), align2K(nc*k*2)
	compute := weights + out + scratch
	if pipe {
		compute += weights + out + scratch
	}
	return hmxTileBytes + align2K(mc*k*2) + max(compute, hmxPrep(k, actThreads, compute))
}

// hmxBatchedSize is the VTCM of the batched F16 kernel: every head of a
// group's activation tiles and scales, then weights, results and two
// scratch areas, overlapped by the conversion area when the activation
// comes by DMA.
func hmxBatchedSize(k, mc, nc, group uint64, dma bool, actThreads uint64) uint64 {
	compute := align2K(nc*k*2) + align2K(group*mc*nc*2) + 2*align2K(nc*k*2)
	var prep uint64
	if dma {
		prep = hmxPrep(k, actThreads, compute)
	}
	return align2K(group*mc*k*2) + hmxTileBytes + max(compute, prep)
}

// hmxPlan tries every activation-thread count from threads down by
// halves and keeps the chunk with the fewest activation blocks (the most
// threads on a tie).
func hmxPlan(threads int, budget uint64, c hmxCosts, m, n, mCost, nCost, mRows uint64,
	size func(mc, nc, act uint64) uint64) (mc, nc, act, vtcm uint64, ok bool) {
	bestBlocks := ^uint64(0)
	for a := uint64(threads); a >= 1; a /= 2 {
		cm, cn, found := hmxChunks(budget, c, m, n, mCost, nCost)
		if !found {
			continue
		}
		if sz := size(cm, cn, a); sz <= budget {
			if blocks := (mRows + cm - 1) / cm; blocks < bestBlocks {
				bestBlocks, mc, nc, act, vtcm, ok = blocks, cm, cn, a, sz, true
			}
		}
	}
	return
}

// solveHMX is the snapshot's HMX precompute: the batched F16 kernel for
// grouped heads when its plan fits, else the 2-D kernel; false when
// neither fits VTCM (the HVX kernels take over).
func solveHMX(kp *htp.MMKernelParams, n *opNode, threads uint32, vtcm uint64, ne00p, ne01p uint64, batched bool) bool {
	src0, src1, dst := n.inputs[0], n.inputs[1], n.outputs[0]
	id := n.op == htp.OpMulMatID
	w, k := src0.Type, ne00p
	ne11 := uint64(src1.Ne[1])
	pipe := !id && ne11 > 32
	tile := mmTiles[w]
	var mc, nc, act, size uint64
	ok := false
	if group := uint64(src1.Ne[2] / max(src0.Ne[2], 1)); !id && batched && w == quant.F16 && group > 1 {
		dma := src1.Nb[1]/4 > ne00p
		c := hmxCosts{3 * k * 2, group * k * 2, 2}
		mc, nc, act, size, ok = hmxPlan(int(threads), vtcm, c, alignUp(ne11, 32), ne01p, ne01p*hmxCostWeight, ne11*hmxCostAct, ne11,
			func(mc, nc, a uint64) uint64 { return hmxBatchedSize(k, mc, nc, group, dma, a) })
	}
	if !ok {
		p := uint64(1)
		if pipe {
			p = 2
		}
		rowN := k * 2
		if w == quant.F32 {
			rowN = k * 4
		}
		if tile.aligned > 0 {
			rowN = k / 32 * tile.aligned / 32
		}
		c := hmxCosts{p*rowN + p*k*2, k * 2, p * 2}
		m := alignUp(ne11, 32)
		if id {
			m = alignUp(uint64(dst.Ne[1]*dst.Ne[2]), 32)
		}
		mc, nc, act, size, ok = hmxPlan(int(threads), vtcm, c, m, ne01p, ne01p*hmxCostWeight, ne11*hmxCostAct, ne11,
			func(mc, nc, a uint64) uint64 {
				if id {
					a = 0
				}
				return hmx2DSize(w, k, mc, nc, pipe, a, tile.aligned)
			})
		if !ok {
			return false
		}
	}
	kp.KernelType = mmHMX2D
	if batched && !id {
		kp.KernelType = mmHMXF16Batched
	}
	kp.NHMX, kp.MChunk, kp.NChunk, kp.NThreads, kp.NActThreads = 1, uint32(mc), uint32(nc), threads, uint32(act)
	if pipe {
		kp.Pipeline = 1
	}
	kp.TileSize, kp.AlignedTileSize = uint32(tile.size), uint32(tile.aligned)
	kp.Src1RowSize = uint32(mmActRow(w, uint64(src1.Ne[0]), false))
	kp.VtcmSize = uint32(size)
	kp.DivNActThreads, kp.DivNe00Padded = htp.NewFastDiv(uint32(act)), htp.NewFastDiv(uint32(ne00p))
	return true
}
