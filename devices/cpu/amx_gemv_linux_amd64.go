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

// gemvAuxQ8_1 writes Q8_1 activations' records: d_y, s_y, the bytes.
func gemvAuxQ8_1(rec, y []byte, nb int) {
	for b := range nb {
		blk, r := y[36*b:36*b+36], rec[amxGemvRecord*b:amxGemvRecord*(b+1)]
		binary.LittleEndian.PutUint32(r, math.Float32bits(f16(blk)))
		binary.LittleEndian.PutUint32(r[4:], math.Float32bits(f16(blk[2:])))
		copy(r[8:], blk[4:])
	}
}

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
// at's type in groups of 16 rows, activations act of at.vdt) with
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
	var idx [16]int32
	for m := range idx {
		idx[m] = int32(at.gemvRow(m) * int(a.Nb[1]))
	}
	x := a.Data[uint64(lo)*16*a.Nb[1] : uint64(hi)*16*a.Nb[1]]
	for c := range t.Src[1].NRows() {
		at.gemvAux(rec, act.data[uint64(c)*act.nb[1]:], nb)
		off := uint64(c)*t.Nb[1] + 4*16*uint64(lo)
		out := t.Data[off : off+4*16*uint64(hi-lo)]
		at.gemv(nb, unsafe.Pointer(unsafe.SliceData(x)), uintptr(a.Nb[1]), int(hi-lo),
			unsafe.Pointer(unsafe.SliceData(rec)), (*float32)(unsafe.Pointer(unsafe.SliceData(out))), &idx)
	}
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

// amxGemvQ4_0, amxGemvQ4_1 and amxGemvQ8_0 (amx_gemv_linux_amd64.s)
// compute ngroups groups of 16 rows (stride bytes apart, from x; idx the
// offsets of a group's rows) of nb blocks each times the activation row
// whose aux records (amxGemvRecord bytes a block) are at aux, 16 outputs
// a group to out, in the order amxGemv says.
//
//go:noescape
func amxGemvQ4_0(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32)

//go:noescape
func amxGemvQ4_1(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32)

//go:noescape
func amxGemvQ4K(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32)

//go:noescape
func amxGemvQ6K(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32)

//go:noescape
func amxGemvQ8_0(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32)
