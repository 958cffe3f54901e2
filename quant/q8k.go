package quant

import (
	"encoding/binary"
	"math"
)

// Q8_K is the activation format the K-quant and IQ dot products consume:
// 256 values as int8 with one float32 scale, plus the sum of every 16
// quants. ggml_quantize_chunk does not handle it; Quantize produces what
// ggml's CPU backend produces (its from_float, which on every x86 build of
// ggml 0.25.1 is the reference quantizer). Any importance matrix is ignored.

// quantizeQ8K writes 256-value blocks: the float32 scale, 256 int8 quants
// and 16 int16 sums of 16 consecutive quants.
func quantizeQ8K(dst []byte, src []float32, _, _ int, _ []float32) {
	const bs, ts = 256, 292
	for b := 0; b < len(src)/bs; b++ {
		x := src[b*bs : (b+1)*bs]
		out := dst[b*ts : (b+1)*ts]
		var amax, maxv float32
		for _, v := range x {
			if av := float32(math.Abs(float64(v))); av > amax {
				amax, maxv = av, v
			}
		}
		if amax == 0 {
			// ggml leaves the sums untouched here; they are zero, as the quants are.
			clear(out)
			continue
		}
		// ggml maps the largest magnitude to -127, not -128, so that its
		// SIMD dot products can negate any quant without overflow.
		iscale := -127 / maxv
		qs := out[4 : 4+bs]
		for j, v := range x {
			qs[j] = uint8(min(127, nearestInt(iscale*v)))
		}
		for g := 0; g < bs/16; g++ {
			var sum int16
			for _, q := range qs[16*g : 16*g+16] {
				sum += int16(int8(q))
			}
			binary.LittleEndian.PutUint16(out[4+bs+2*g:], uint16(sum))
		}
		binary.LittleEndian.PutUint32(out, math.Float32bits(1/iscale))
	}
}

func dequantizeQ8K(dst []float32, src []byte) {
	const bs, ts = 256, 292
	for b := 0; b < len(dst)/bs; b++ {
		blk := src[b*ts : (b+1)*ts]
		d := math.Float32frombits(binary.LittleEndian.Uint32(blk))
		for j, q := range blk[4 : 4+bs] {
			dst[b*bs+j] = d * float32(int8(q))
		}
	}
}
