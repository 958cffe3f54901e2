package quant

import (
	"encoding/binary"
	"math"
)

// The ternary formats (BitNet b1.58, TriLM) store each value as a trit
// -1, 0 or +1 times one fp16 scale per 256 values, the block's largest
// magnitude. ggml ignores any importance matrix for them, and so do we.

// lroundf is C's lroundf: round half away from zero. For ±Inf and NaN, the
// only inputs here without an int64 result, it returns math.MinInt64 as
// glibc does on x86-64; ggml reaches them when a block's largest magnitude
// is so small that its reciprocal overflows.
func lroundf(v float32) int64 {
	r := math.Round(float64(v))
	if !(r >= math.MinInt64 && r < math.MaxInt64) {
		return math.MinInt64
	}
	return int64(r)
}

// ternaryScale returns the block's largest magnitude and its reciprocal
// (0 for an all-zero block).
func ternaryScale(x []float32) (d, id float32) {
	for _, v := range x {
		d = max(d, float32(math.Abs(float64(v))))
	}
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// tritOf maps v/d to 0, 1 or 2 for -1, 0, +1. The conversion to int32
// truncates as C's long-to-int conversion does.
func tritOf(v, id float32) int32 { return int32(lroundf(v*id) + 1) }

// tq1Pack reads n trits, x[0], x[stride], ..., as the base-3 digits of a
// number (first trit most significant, modulo 256 as in ggml's uint8
// arithmetic), pads it to five digits and scales it to a byte so that
// digit k can be recovered as the top of (byte*3^k)*3 >> 8.
func tq1Pack(x []float32, id float32, n, stride int) byte {
	var q uint8
	for k := 0; k < n; k++ {
		q = q*3 + uint8(tritOf(x[k*stride], id))
	}
	for k := n; k < 5; k++ {
		q *= 3
	}
	// Ceiling division by 3^5 = 243.
	return uint8((uint32(q)*256 + 242) / 243)
}

// quantizeTQ1_0 writes 256-value blocks: 48 bytes of five trits (values
// 0-159 in groups of 32, then 160-239 in groups of 16, each byte taking
// its trits a group apart), 4 bytes of four trits (values 240-255) and the
// fp16 scale.
func quantizeTQ1_0(dst []byte, src []float32, _, _ int, _ []float32) {
	const bs, ts = 256, 54
	for b := 0; b < len(src)/bs; b++ {
		x := src[b*bs : (b+1)*bs]
		out := dst[b*ts : (b+1)*ts]
		d, id := ternaryScale(x)
		for m := 0; m < 32; m++ {
			out[m] = tq1Pack(x[m:], id, 5, 32)
		}
		for m := 0; m < 16; m++ {
			out[32+m] = tq1Pack(x[160+m:], id, 5, 16)
		}
		for j := 0; j < 4; j++ {
			out[48+j] = tq1Pack(x[240+j:], id, 4, 4)
		}
		binary.LittleEndian.PutUint16(out[52:], FP32ToFP16(d))
	}
}

// trit returns, as -1, 0 or +1, the base-3 digit that multiplying the packed byte q by 3^k
// (mod 256) brings to the top, as TQ1_0 stores five (or four) digits per byte.
func trit(q byte, pow uint8) int32 {
	return int32(uint16(q*pow)*3>>8) - 1
}

// tq1Unpack writes the first n trits of each byte of qs as values, digit by
// digit: all bytes' first trits, then all bytes' second trits, and so on.
func tq1Unpack(dst []float32, qs []byte, n int, d float32) []float32 {
	pow3 := uint8(1)
	for k := 0; k < n; k++ {
		for _, b := range qs {
			dst[0] = float32(trit(b, pow3)) * d
			dst = dst[1:]
		}
		pow3 *= 3
	}
	return dst
}

func dequantizeTQ1_0(dst []float32, src []byte) {
	const bs, ts = 256, 54
	for b := 0; b < len(dst)/bs; b++ {
		blk := src[b*ts : (b+1)*ts]
		d := FP16ToFP32(binary.LittleEndian.Uint16(blk[52:]))
		y := dst[b*bs : (b+1)*bs]
		y = tq1Unpack(y, blk[0:32], 5, d)
		y = tq1Unpack(y, blk[32:48], 5, d)
		tq1Unpack(y, blk[48:52], 4, d)
	}
}

// quantizeTQ2_0 writes 256-value blocks: 64 bytes of four 2-bit trits each
// (byte m of a 32-byte group holds values m, m+32, m+64 and m+96 of that
// group's 128, lowest bits first) and the fp16 scale.
func quantizeTQ2_0(dst []byte, src []float32, _, _ int, _ []float32) {
	const bs, ts = 256, 66
	for b := 0; b < len(src)/bs; b++ {
		x := src[b*bs : (b+1)*bs]
		out := dst[b*ts : (b+1)*ts]
		d, id := ternaryScale(x)
		for g := 0; g < 2; g++ {
			xg := x[128*g:]
			for m := 0; m < 32; m++ {
				var q uint8
				for n := 0; n < 4; n++ {
					q += uint8(tritOf(xg[m+32*n], id)&3) << (2 * n)
				}
				out[32*g+m] = q
			}
		}
		binary.LittleEndian.PutUint16(out[64:], FP32ToFP16(d))
	}
}

func dequantizeTQ2_0(dst []float32, src []byte) {
	const bs, ts = 256, 66
	for b := 0; b < len(dst)/bs; b++ {
		blk := src[b*ts : (b+1)*ts]
		d := FP16ToFP32(binary.LittleEndian.Uint16(blk[64:]))
		y := dst[b*bs : (b+1)*bs]
		for g := 0; g < 2; g++ {
			for l := 0; l < 4; l++ {
				for m := 0; m < 32; m++ {
					q := int(blk[32*g+m]>>(2*l)) & 3
					y[128*g+32*l+m] = float32(q-1) * d
				}
			}
		}
	}
}
