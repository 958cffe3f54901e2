//go:build !purego

package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
)

// amxGemvRecord is the bytes of one block's aux record for the gemv
// kernels: d_y (float32), then the block's correction (int32) or s_y
// (float32), then its 32 activation bytes.
const amxGemvRecord = 40

// gemvAuxQ8_0 returns the aux writer of Q8_0 activations for weights
// whose levels the kernel takes bias above their value (unsigned): the
// correction is -bias times the activations' sum, which the kernel's
// integer sums start from.
func gemvAuxQ8_0(bias int32) func(rec, y []byte, nb int) {
	return func(rec, y []byte, nb int) {
		for b := range nb {
			blk, r := y[34*b:34*b+34], rec[amxGemvRecord*b:amxGemvRecord*(b+1)]
			var sum int32
			for _, v := range blk[2:] {
				sum += int32(int8(v))
			}
			binary.LittleEndian.PutUint32(r, math.Float32bits(f16(blk)))
			binary.LittleEndian.PutUint32(r[4:], uint32(-bias*sum))
			copy(r[8:], blk[2:])
		}
	}
}

// gemvAuxQ8_1 writes Q8_1 activations' records: d_y, s_y, the bytes
// (gemvAuxQ8_1Asm: its halves converted by VCVTPH2PS, since the lookups
// of quant.FP16ToFP32's 256 KB table, which the weights' stream has
// evicted by the next product, missed the caches: 0.15 ms of a SmolLM2
// token's CPU time, 1.3%).
func gemvAuxQ8_1(rec, y []byte, nb int) {
	if nb <= 0 {
		return
	}
	_, _ = y[36*nb-1], rec[amxGemvRecord*nb-1]
	gemvAuxQ8_1Asm(unsafe.Pointer(&rec[0]), unsafe.Pointer(&y[0]), nb)
}

// gemvAuxQ8_1Asm (amx_gemv_linux_amd64.s) writes nb Q8_1 blocks at y as
// gemvAuxQ8_1's records at rec.
//
//go:noescape
func gemvAuxQ8_1Asm(rec, y unsafe.Pointer, nb int)

// amxGemvRecordK is the bytes of a Q8_K super-block's aux record: d_y,
// the eight sums of 32 activations (int16, from 4), then at 32 the 256
// activation bytes.
const amxGemvRecordK = 288

// gemvAuxQ8_K writes Q8_K activations' records for Q4_K's kernel.
func gemvAuxQ8_K(rec, y []byte, nb int) {
	for b := range nb {
		blk, r := y[292*b:292*(b+1)], rec[amxGemvRecordK*b:amxGemvRecordK*(b+1)]
		copy(r[:4], blk[:4])
		for j := range 8 {
			s := int16(binary.LittleEndian.Uint16(blk[260+4*j:])) + int16(binary.LittleEndian.Uint16(blk[262+4*j:]))
			binary.LittleEndian.PutUint16(r[4+2*j:], uint16(s))
		}
		copy(r[32:], blk[4:260])
	}
}

// amxGemvRecordQ6K is the bytes of a Q8_K super-block's aux record for
// Q6_K's kernel: d_y, the 16 sums of 16 activations (int16, from 4),
// then at 64 the 256 activation bytes.
const amxGemvRecordQ6K = 320

// gemvAuxQ8_K16 writes Q8_K activations' records for Q6_K's kernel.
func gemvAuxQ8_K16(rec, y []byte, nb int) {
	for b := range nb {
		blk, r := y[292*b:292*(b+1)], rec[amxGemvRecordQ6K*b:amxGemvRecordQ6K*(b+1)]
		copy(r[:4], blk[:4])
		copy(r[4:36], blk[260:292])
		copy(r[64:], blk[4:260])
	}
}

// amxGemv computes groups [lo, hi) of 16 rows of MUL_MAT t (weight a of
// at's type, its rows a multiple of 16, group g rows g + l*rows/16;
// activations act of at.vdt) with
// at.gemv, a column at a time: each output, from zero and over the
// blocks in order, fused, float(sum)*(dx*dy) + acc (Q4_1: then + mx*sy,
// fused; a K-quant's sum the super-block's of its groups' sums times
// their scales, Q4_K's then - float(msum)*(dmin*dy), fused), where the
// sums are exact integers: the order of ggml's AMX code for one column
// (its tinygemm_kernel_vnni on the weights its AMX buffer packed), which
// is its tiles' order for more too (tinygemm_kernel_amx), and so the
// K-quants' below a tile of columns.
func amxGemv(t *graph.Tensor, at *amxType, act *activations, lo, hi int64) {
	a := t.Src[0]
	nb := int(a.Ne[0] / int64(a.Type.BlockSize()))
	s := amxScratches.Get().(*amxScratch)
	defer amxScratches.Put(s)
	rec := grow(&s.aux, nb*at.gemvRecord())
	// Group g's lane l is row g + l*far: rows a sixteenth of the
	// matrix apart stream from separate pages, which the hardware
	// prefetchers follow; 16 neighbouring rows they do not (those
	// products ran 1.5x the haswell-order kernels' time in the models).
	// far is a little short of a sixteenth where the lanes would share
	// cache sets, and the groups past it take 16 neighbouring rows.
	far := gemvSpacing(a.Ne[1]/16, a.Nb[1])
	stride := uint64(far) * a.Nb[1]
	idx, oidx, tidx, toidx := &s.idx, &s.oidx, &s.tidx, &s.toidx
	for m := range idx {
		idx[m] = int32(uint64(at.gemvRow(m)) * stride)
		oidx[m] = int32(4 * int64(m) * far)
		tidx[m] = int32(uint64(at.gemvRow(m)) * a.Nb[1])
		toidx[m] = int32(4 * m)
	}
	nan := math.Float32bits(float32(math.NaN()))
	for c := range t.Src[1].NRows() {
		col := t.Data[uint64(c)*t.Nb[1] : uint64(c)*t.Nb[1]+4*uint64(a.Ne[1])]
		if act.bad != nil && act.bad[c] != 0 {
			// Not finite: NaN, as on the other paths.
			for g := lo; g < hi; g++ {
				for l := range int64(16) {
					r := g + l*far
					if g >= far {
						r = 16*g + l
					}
					binary.LittleEndian.PutUint32(col[4*r:], nan)
				}
			}
			continue
		}
		at.gemvAux(rec, act.data[uint64(c)*act.nb[1]:], nb)
		y := unsafe.Pointer(unsafe.SliceData(rec))
		if g1 := min(hi, far); lo < g1 {
			x := a.Data[uint64(lo)*a.Nb[1] : uint64(g1-1)*a.Nb[1]+15*stride+a.Nb[1]]
			at.gemv(nb, unsafe.Pointer(unsafe.SliceData(x)), uintptr(stride), int(g1-lo),
				y, (*float32)(unsafe.Pointer(&col[4*lo])), idx, uintptr(a.Nb[1]), oidx)
		}
		for g := max(lo, far); g < hi; g++ {
			x := a.Data[uint64(16*g)*a.Nb[1] : uint64(16*g+16)*a.Nb[1]]
			at.gemv(nb, unsafe.Pointer(unsafe.SliceData(x)), uintptr(a.Nb[1]), 1,
				y, (*float32)(unsafe.Pointer(&col[4*16*g])), tidx, 0, toidx)
		}
	}
}

// gemvSpacing is the rows between amxGemv's lanes for a weight of 16*groups
// rows of rs bytes: groups, or up to 7 fewer where more than 4 of the 16
// lanes' lines would fall in one of L1's 64 sets (a power of two of rows
// of a multiple of 64 bytes: Gemma 3's output, whose 16 lanes then shared
// one set, took 1.3x the haswell-order kernel's time).
func gemvSpacing(groups int64, rs uint64) int64 {
	for k := range min(int64(8), groups) {
		var sets [64]int
		most := 0
		for m := range uint64(16) {
			s := m * uint64(groups-k) * rs / 64 % 64
			sets[s]++
			most = max(most, sets[s])
		}
		if most <= 4 {
			return groups - k
		}
	}
	return groups
}

// gemvRecord is the bytes of a block's aux record for at.gemv.
func (a *amxType) gemvRecord() int {
	switch {
	case a.kq != nil && a.signed:
		return amxGemvRecordQ6K
	case a.kq != nil:
		return amxGemvRecordK
	}
	return amxGemvRecord
}

// gemvRow is the row of a group whose output lane m of at.gemv sums:
// m, but for Q8_0's kernel, which swaps lanes 4-7 with 8-11 until it
// stores them.
func (a *amxType) gemvRow(m int) int {
	if !a.gemvSwap || m < 4 || m >= 12 {
		return m
	}
	return m ^ 12
}

// amxGemvQ4_0, amxGemvQ4_1, amxGemvQ8_0, amxGemvQ4K and amxGemvQ6K
// (amx_gemv_linux_amd64.s) compute ngroups groups of 16 rows of nb blocks
// each times the activation row whose aux records (gemvRecord bytes a
// block) are at aux: group g's row m at x + g*gstride + m*stride (idx
// holds those offsets for the scale gathers, in the kernel's lane order,
// gemvRow), its output at out + 4g + oidx[m], in the order amxGemv says.
//
//go:noescape
func amxGemvQ4_0(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)

//go:noescape
func amxGemvQ4_1(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)

//go:noescape
func amxGemvQ4K(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)

//go:noescape
func amxGemvQ6K(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)

//go:noescape
func amxGemvQ8_0(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)
