package quant

import "math"

// Rounding and float-to-integer conversions with the exact semantics of the
// C expressions ggml's quantizers use. They are shared by every family of
// formats.

// nearestInt is ggml's nearest_int: adding 1.5*2^23 pushes the fraction out
// of the mantissa, so the low mantissa bits hold the integer rounded to
// nearest, ties to even. ggml only calls it for |f| < 2^22; outside that
// range, and for NaN, it returns the same bits-derived value ggml does.
//
// The conversion float32(f) keeps a caller's product (nearestInt(a*b), once
// inlined) from being fused with the addition.
func nearestInt(f float32) int32 {
	bits := math.Float32bits(float32(f) + 12582912)
	return int32(bits&0x007fffff) - 0x00400000
}

// roundHalfAway is C's roundf: nearest integer, halfway cases away from zero.
// The float64 detour is exact for every float32.
func roundHalfAway(f float32) float32 { return float32(math.Round(float64(f))) }

// roundSmall is roundHalfAway converted to int32, for |f| < 2^30: the
// float64 sum with a half of f's sign is exact, and truncating it rounds
// halfway cases away from zero.
func roundSmall(f float32) int32 {
	g := float64(f)
	return int32(g + math.Copysign(0.5, g))
}

// cInt is the C conversion (int)f as compiled for x86-64 (cvttss2si):
// truncation toward zero, and INT_MIN for NaN and values outside the int32
// range. C leaves those cases undefined, but the reference library behaves
// this way, and narrower casts such as (int8_t)f or (uint8_t)f keep the low
// bits of this result. Go's own conversion is platform dependent there.
func cInt(f float32) int32 {
	if !(f >= -(1<<31) && f < 1<<31) {
		return math.MinInt32
	}
	return int32(f)
}

// sqrtf is C's sqrtf; the float64 square root rounded once to float32 is
// correctly rounded.
func sqrtf(f float32) float32 { return float32(math.Sqrt(float64(f))) }

// absf is C's fabsf.
func absf(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }
