package quant

import "math"

// FP16ToFP32 converts an IEEE half-precision value to float32. Every finite
// half is exactly representable; a NaN keeps its sign and payload and comes
// back quiet, as it does from ggml's conversion on x86. It reads a table of
// every half's value (as ggml's generic builds do), a load instead of the
// branches below for each element of an F16 row.
func FP16ToFP32(h uint16) float32 { return fp16Table[h] }

// fp16ToFP32 computes FP16ToFP32, for its table.
func fp16ToFP32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && mant != 0:
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// Subnormal half: mant * 2^-24 is exact in float32.
		v := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// FP32ToFP16 converts a float32 to IEEE half precision, rounding to nearest
// even, overflowing to infinity and keeping the sign of zeros.
//
// NaN becomes the canonical quiet NaN 0x7e00 with the input's sign, as ggml's
// scalar ggml_fp32_to_fp16 does. (ggml's F16C path keeps the payload instead;
// the two agree on every other input.)
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000:
		return sign | 0x7e00
	case abs >= 0x477ff000:
		// At or above 65520 rounds to infinity.
		return sign | 0x7c00
	case abs >= 0x38800000:
		// Normal half range: rebias the exponent and round the 13 dropped bits.
		v := abs - (112 << 23)
		v += 0x0fff + (v>>13)&1
		return sign | uint16(v>>13)
	case abs < 0x33000000:
		// Below half the smallest subnormal: rounds to zero.
		return sign
	}
	// Subnormal half: shift the implicit-bit mantissa into place, rounding
	// to nearest even on the bits shifted out.
	exp := abs >> 23
	mant := abs&0x7fffff | 0x800000
	shift := 126 - exp // 14..24
	half := uint32(1) << (shift - 1)
	rest := mant & (1<<shift - 1)
	q := mant >> shift
	if rest > half || (rest == half && q&1 == 1) {
		q++
	}
	return sign | uint16(q)
}

// BF16ToFP32 converts a bfloat16 value to float32 (exact).
func BF16ToFP32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FP32ToBF16 converts a float32 to bfloat16, rounding to nearest even. A NaN
// keeps its sign and top payload bits and is forced quiet, as in ggml.
func FP32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// FP16ToFP32Slice converts len(dst) values from src, which must be at least as long.
func FP16ToFP32Slice(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, h := range src {
		dst[i] = FP16ToFP32(h)
	}
}

// FP32ToFP16Slice converts len(dst) values from src, which must be at least as long.
func FP32ToFP16Slice(dst []uint16, src []float32) {
	src = src[:len(dst)]
	for i, f := range src {
		dst[i] = FP32ToFP16(f)
	}
}

// BF16ToFP32Slice converts len(dst) values from src, which must be at least as long.
func BF16ToFP32Slice(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, h := range src {
		dst[i] = BF16ToFP32(h)
	}
}

// FP32ToBF16Slice converts len(dst) values from src, which must be at least as long.
func FP32ToBF16Slice(dst []uint16, src []float32) {
	src = src[:len(dst)]
	for i, f := range src {
		dst[i] = FP32ToBF16(f)
	}
}
