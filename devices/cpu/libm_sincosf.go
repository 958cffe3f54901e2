package cpu

import (
	"math"
	"math/big"
)

// libcSincosf is glibc's sincosf (2.28 and later, as its FMA build
// computes it on a processor with FMA, which glibc's resolver picks
// there): ROPE's cosf and sinf of one angle, which GCC merges into one
// sincosf call in ggml's rope_yarn. glibc's results are not correctly
// rounded (about 1% of RoPE's angles round otherwise than the float64
// cosine or sine), so ggml's bits need glibc's own steps, in float64:
//
//   - |x| < pi/4: no reduction; below 2^-12, sin x = x and cos x = 1.
//   - |x| < 120: n = round(x * 2/pi) (the product scaled by 2^24, truncated
//     to an integer, 2^23 added, shifted down 24), r = x - n*pi/2 fused.
//   - larger: the fixed-point product of x's mantissa with 96 bits of 4/pi
//     at x's exponent (libcInvPio4), its top two bits the quadrant, the rest
//     times 2pi*2^-64.
//
// then the sine and cosine polynomials of r (odd quadrants swap them,
// quadrants 2 and 3 take the cosine negated and r by the quadrant's sign),
// every step that glibc's FMA build fuses fused here.
func libcSincosf(y float32) (sin, cos float32) {
	const (
		hpiInv = 0x1.45f306dc9c883p+23 // 2/pi * 2^24
		hpi    = 0x1.921fb54442d18p+0  // pi/2
		pi63   = 0x1.921fb54442d18p-62 // 2pi * 2^-64
	)
	abstop := math.Float32bits(y) >> 20 & 0x7ff
	x := float64(y)
	switch {
	case abstop < 0x3f4: // |y| < pi/4
		if abstop < 0x398 { // |y| < 2^-12
			return y, 1
		}
		return sincosfPoly(x, float64(x*x), 0, false)
	case abstop < 0x42f: // |y| < 120
		n := (int32(float64(x*hpiInv)) + 0x800000) >> 24
		r := math.FMA(-float64(n), hpi, x)
		return sincosfPoly(float64(r*libcSign(int(n))), float64(r*r), int(n), n&2 != 0)
	case abstop < 0x7f8:
		xi := math.Float32bits(y)
		sign := int(xi >> 31)
		r, n := sincosfReduceLarge(xi)
		return sincosfPoly(float64(r*libcSign(n+sign)), float64(r*r), n, (n+sign)&2 != 0)
	}
	return y - y, y - y
}

// libcSign is the sign of the sine in quadrant n&3.
func libcSign(n int) float64 {
	if n&3 == 1 || n&3 == 2 {
		return -1
	}
	return 1
}

// sincosfReduceLarge is glibc's reduction of |x| >= 120 (xi its bits): the
// mantissa, shifted by the exponent's low three bits, times three 32-bit
// words of 4/pi picked by its next four, as a 2.62-bit fixed-point
// fraction of the quadrant; n rounds it to the nearest quadrant, and the
// remainder becomes radians.
func sincosfReduceLarge(xi uint32) (r float64, n int) {
	const pi63 = 0x1.921fb54442d18p-62
	arr := libcInvPio4[xi>>26&15:]
	m := (xi&0xffffff | 0x800000) << (xi >> 23 & 7)
	res0 := uint64(m * arr[0])
	res1 := uint64(m) * uint64(arr[4])
	res2 := uint64(m) * uint64(arr[8])
	res0 = res2>>32 | res0<<32
	res0 += res1
	q := (res0 + 1<<61) >> 62
	res0 -= q << 62
	return float64(int64(res0)) * pi63, int(q)
}

// sincosfPoly is glibc's pair of polynomials at x (x2 = x*x): its sine
// x + x^3 s1 + x^5 (s2 + x^2 s3) and cosine c0 + x^2 c1 + x^4 c2 +
// x^6 (c3 + x^2 c4), each multiply-add fused, the powers rounded products;
// odd quadrants n swap the two, neg negates the cosine's coefficients.
func sincosfPoly(x, x2 float64, n int, neg bool) (sin, cos float32) {
	const (
		c0 = 1.0
		c1 = -0x1.ffffffd0c621cp-2
		c2 = 0x1.55553e1068f19p-5
		c3 = -0x1.6c087e89a359dp-10
		c4 = 0x1.99343027bf8c3p-16
		s1 = -0x1.555545995a603p-3
		s2 = 0x1.1107605230bc4p-7
		s3 = -0x1.994eb3774cf24p-13
	)
	k0, k1, k2, k3, k4 := c0, c1, c2, c3, c4
	if neg {
		k0, k1, k2, k3, k4 = -c0, -c1, -c2, -c3, -c4
	}
	x3 := float64(x2 * x)
	x4 := float64(x2 * x2)
	x5 := float64(x2 * x3)
	x6 := float64(x2 * x4)
	ps1 := math.FMA(x2, s3, s2)
	pc2 := math.FMA(x2, k4, k3)
	pc1 := math.FMA(x2, k1, k0)
	s := math.FMA(x3, s1, x)
	c := math.FMA(x4, k2, pc1)
	sin, cos = float32(math.FMA(ps1, x5, s)), float32(math.FMA(pc2, x6, c))
	if n&1 != 0 {
		return cos, sin
	}
	return sin, cos
}

// libcInvPio4 is glibc's table of 4/pi: entry k holds bits 8k-24..8k+7 of
// 4/pi's binary expansion counted from its leading bit (floor(4/pi *
// 2^(8k+7)) mod 2^32), so that any three entries four apart are 96
// consecutive bits; computed here from pi by Machin's formula at 320 bits.
var libcInvPio4 = func() (t [24]uint32) {
	const prec = 320
	// atanInv is arctan(1/n) by its series.
	atanInv := func(n int64) *big.Float {
		sum := new(big.Float).SetPrec(prec)
		pow := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), big.NewFloat(float64(n)).SetPrec(prec))
		nn := new(big.Float).SetPrec(prec).SetInt64(n * n)
		eps := new(big.Float).SetPrec(prec).SetMantExp(big.NewFloat(1), -prec)
		for k := int64(0); pow.Cmp(eps) > 0; k++ {
			term := new(big.Float).SetPrec(prec).Quo(pow, new(big.Float).SetPrec(prec).SetInt64(2*k+1))
			if k%2 == 0 {
				sum.Add(sum, term)
			} else {
				sum.Sub(sum, term)
			}
			pow.Quo(pow, nn)
		}
		return sum
	}
	pi := new(big.Float).SetPrec(prec).Mul(big.NewFloat(16).SetPrec(prec), atanInv(5))
	pi.Sub(pi, new(big.Float).SetPrec(prec).Mul(big.NewFloat(4).SetPrec(prec), atanInv(239)))
	fourOverPi := new(big.Float).SetPrec(prec).Quo(big.NewFloat(4).SetPrec(prec), pi)
	mask := new(big.Int).SetUint64(1<<32 - 1)
	for k := range t {
		v := new(big.Float).SetPrec(prec).SetMantExp(fourOverPi, 8*k+7)
		i, _ := v.Int(nil)
		t[k] = uint32(i.And(i, mask).Uint64())
	}
	return t
}()
