//go:build !purego

package cpu

import (
	"math"
	"unsafe"
)

// Flash attention's F16 steps in one assembly call per query row instead
// of one primitive call per key (attn_amd64.s). The assembly checks every
// key against the rows the data holds before it reads the row.

//go:noescape
func attnScoresF16AVX2(out, qf *float32, k *byte, stride uintptr, keys *int32, n, d, rows int, mvs *float32, newMax *bool, scale float32) (bad int, m float32)

//go:noescape
func attnAccF16AVX2(acc *uint16, d int, v *byte, stride uintptr, keys *int32, ex *float32, newMax *bool, n, rows int) (bad int, sum float32)

// attnRows is how many rows of rowBytes bytes, stride bytes apart, fit in
// n bytes: the assembly checks every key against it.
func attnRows(n int, stride, rowBytes uint64) int {
	switch {
	case uint64(n) < rowBytes:
		return 0
	case stride == 0:
		return math.MaxInt
	}
	return int(min((uint64(n)-rowBytes)/stride+1, math.MaxInt))
}

func attnScoresF16Fused(out []float32, keys []int32, k []byte, stride uint64, q16 []uint16, qf []float32, tmp []uint16) {
	attnScoresMaxF16Fused(out, keys, k, stride, q16, qf, tmp, 1, nil, nil)
}

// attnScoresMaxF16Fused is attnScoresMaxF16, and without mvs
// attnScoresF16.
func attnScoresMaxF16Fused(out []float32, keys []int32, k []byte, stride uint64, q16 []uint16, qf []float32, _ []uint16,
	scale float32, mvs []float32, newMax []bool) float32 {
	d := len(q16)
	out, qf = out[:len(keys)], qf[:d]
	if mvs != nil {
		mvs, newMax = mvs[:len(keys)], newMax[:len(keys)]
	}
	bad, m := attnScoresF16AVX2(unsafe.SliceData(out), unsafe.SliceData(qf), unsafe.SliceData(k), uintptr(stride),
		unsafe.SliceData(keys), len(keys), d, attnRows(len(k), stride, uint64(d)*2), unsafe.SliceData(mvs), unsafe.SliceData(newMax), scale)
	if bad != 0 {
		panic("cpu: attention row out of range")
	}
	return m
}

func attnAccF16Fused(acc []uint16, keys []int32, v []byte, stride uint64, ex []float32, newMax []bool, tmp []uint16) float32 {
	if len(acc) == 0 {
		return genericVec.attnAccF16(acc, keys, v, stride, ex, newMax, tmp)
	}
	ex, newMax = ex[:len(keys)], newMax[:len(keys)]
	bad, sum := attnAccF16AVX2(unsafe.SliceData(acc), len(acc), unsafe.SliceData(v), uintptr(stride), unsafe.SliceData(keys),
		unsafe.SliceData(ex), unsafe.SliceData(newMax), len(keys), attnRows(len(v), stride, uint64(len(acc))*2))
	if bad != 0 {
		panic("cpu: attention row out of range")
	}
	return sum
}
