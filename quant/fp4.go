package quant

import "math"

// MXFP4 and NVFP4 store 4-bit E2M1 floats: MXFP4 in blocks of 32 with one
// E8M0 power-of-two scale (1 byte, then 16 bytes of nibble pairs, value j in
// the low nibble of byte j and value j+16 in the high one), NVFP4 in blocks
// of 64 made of four 16-value sub-blocks, each with a UE4M3 scale (4 scale
// bytes, then 8 bytes of nibble pairs per sub-block, laid out the same way).

// kvaluesFP4 are the E2M1 values doubled, ggml's kvalues_mxfp4; the scales
// are halved to match.
var kvaluesFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// e8m0Half is ggml_e8m0_to_fp32_half: 2^(e-128), exact for every e.
func e8m0Half(e uint8) float32 {
	if e < 2 {
		// 2^-128 and 2^-127 are subnormal.
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// ue4m3ToFP32 is ggml_ue4m3_to_fp32: half the value of an unsigned E4M3
// byte (bias 7, three mantissa bits). The top bit is ignored, and 0x7f,
// E4M3's NaN, reads as 0.
func ue4m3ToFP32(u uint8) float32 {
	if u == 0 || u == 0x7f {
		return 0
	}
	exp, man := int(u>>3&0x0f), float64(u&7)
	if exp == 0 {
		return float32(math.Ldexp(man, -9-1))
	}
	return float32(math.Ldexp(1+man/8, exp-7-1))
}

// fp32ToUE4M3 is ggml_fp32_to_ue4m3: it rounds x > 0 to UE4M3, half up on
// the first dropped bit, saturating at 448 (0x7e); anything else gives 0.
func fp32ToUE4M3(x float32) uint8 {
	if !(x > 0) {
		return 0
	}
	x = min(x, 448)
	bits := math.Float32bits(x)
	exp := int(bits>>23&0xff) - 127 + 7
	man := int(bits >> 20 & 7)
	if exp <= 0 {
		// Subnormal UE4M3: man * 2^-9.
		m := cInt(float32(x*512) + 0.5)
		if m < 1 {
			return 0
		}
		return uint8(min(m, 7))
	}
	man += int(bits >> 19 & 1)
	if man > 7 {
		man = 0
		exp++
	}
	if exp >= 15 {
		return 0x7e
	}
	return uint8(exp<<3 | man)
}

// fp4Levels are the 16 FP4 values times a block's scale d, each product
// rounded to float32 as ggml computes it inside its search.
type fp4Levels [16]float32

func levelsFP4(d float32) (l fp4Levels) {
	for i, k := range kvaluesFP4 {
		l[i] = float32(float32(k) * d)
	}
	return l
}

// nearest is ggml's best_index_mxfp4: the index of the level closest to x,
// the first one on ties. The levels are computed once per block instead of
// once per value; the products are the same.
func (l *fp4Levels) nearest(x float32) uint8 {
	best := uint8(0)
	bestErr := absf(l[0] - x)
	for i := 1; i < len(l); i++ {
		if e := absf(l[i] - x); e < bestErr {
			best, bestErr = uint8(i), e
		}
	}
	return best
}

func packFP4(qs []byte, x []float32, d float32) {
	h := len(x) / 2
	l := levelsFP4(d)
	for j := range h {
		qs[j] = l.nearest(x[j]) | l.nearest(x[j+h])<<4
	}
}

// unpackFP4 is the inverse of packFP4 for len(y) values.
func unpackFP4(y []float32, qs []byte, d float32) {
	h := len(y) / 2
	for j, q := range qs[:h] {
		y[j] = float32(kvaluesFP4[q&0x0f]) * d
		y[j+h] = float32(kvaluesFP4[q>>4]) * d
	}
}

// mxfp4Exponent is the block exponent ggml derives from amax with
// floorf(log2f(amax)) - 2 + 127, cast to uint8 the way x86 does (so very
// small amax wraps around), or 0 for amax == 0.
func mxfp4Exponent(amax float32) uint8 {
	if !(amax > 0) {
		return 0
	}
	log2 := float32(math.Log2(float64(amax))) // log2f: correctly rounded to float32
	return uint8(cInt(float32(math.Floor(float64(log2))) - 2 + 127))
}

func quantizeBlockMXFP4(b []byte, x []float32) {
	e := mxfp4Exponent(absMax(x))
	b[0] = e
	packFP4(b[1:17], x, e8m0Half(e))
}

func dequantizeBlockMXFP4(y []float32, b []byte) { unpackFP4(y, b[1:17], e8m0Half(b[0])) }

// nvfp4Sub is the number of values sharing one NVFP4 scale.
const nvfp4Sub = 16

func quantizeBlockNVFP4(b []byte, x []float32) {
	for s := range len(x) / nvfp4Sub {
		xs := x[s*nvfp4Sub : (s+1)*nvfp4Sub]
		u := fp32ToUE4M3(absMax(xs) / 6)
		b[s] = u
		packFP4(b[4+s*nvfp4Sub/2:], xs, ue4m3ToFP32(u))
	}
}

func dequantizeBlockNVFP4(y []float32, b []byte) {
	for s := range len(y) / nvfp4Sub {
		unpackFP4(y[s*nvfp4Sub:(s+1)*nvfp4Sub], b[4+s*nvfp4Sub/2:], ue4m3ToFP32(b[s]))
	}
}
