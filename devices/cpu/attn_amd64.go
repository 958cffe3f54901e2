//go:build !purego

package cpu

import "unsafe"

// Flash attention's F16 steps in one assembly call per query row instead
// of one primitive call per key (attn_amd64.s). The wrappers check every
// row the assembly will read against the data's length.

//go:noescape
func attnScoresF16AVX2(out, qf *float32, k *byte, stride uintptr, keys *int32, n, d int)

//go:noescape
func attnAccF16AVX2(acc *uint16, d int, v *byte, stride uintptr, keys *int32, ms, vs *float32, n int)

// checkAttnRows panics unless every row keys[j] of rowBytes bytes, stride
// bytes apart, lies inside data.
func checkAttnRows(data []byte, keys []int32, stride, rowBytes uint64) {
	for _, key := range keys {
		if end := attnRowOffset(key, stride) + rowBytes; end > uint64(len(data)) || end < rowBytes {
			panic("cpu: attention row out of range")
		}
	}
}

func attnScoresF16Fused(out []float32, keys []int32, k []byte, stride uint64, q16 []uint16, qf []float32, _ []uint16) {
	d := len(q16)
	if len(keys) == 0 || d == 0 {
		clear(out[:len(keys)])
		return
	}
	out, qf = out[:len(keys)], qf[:d]
	checkAttnRows(k, keys, stride, uint64(d)*2)
	attnScoresF16AVX2(unsafe.SliceData(out), unsafe.SliceData(qf), unsafe.SliceData(k), uintptr(stride), unsafe.SliceData(keys), len(keys), d)
}

func attnAccF16Fused(acc []uint16, keys []int32, v []byte, stride uint64, ms, vs []float32, _ []uint16) {
	if len(keys) == 0 || len(acc) == 0 {
		return
	}
	ms, vs = ms[:len(keys)], vs[:len(keys)]
	checkAttnRows(v, keys, stride, uint64(len(acc))*2)
	attnAccF16AVX2(unsafe.SliceData(acc), len(acc), unsafe.SliceData(v), uintptr(stride), unsafe.SliceData(keys),
		unsafe.SliceData(ms), unsafe.SliceData(vs), len(keys))
}
