package cpu

import (
	"math"
	"math/big"
	"unsafe"
)

// ggml's own e^x. ggml's CPU backend does not call the C library's expf
// for SOFT_MAX, SILU and SWIGLU: it runs them through a vector e^x of its
// own (ggml_v_expf, ggml_v_silu, ggml_vec_soft_max_f32 in the upstream
// ggml backend's vec.h and vec.cpp, 2025), a range reduction by ln 2 and a
// degree-5 polynomial in float32, over as many lanes as the build's vector
// has (four with SSE2 in the x64 build, eight with AVX2 and FMA in the
// haswell one), and only the elements after the last whole vector go to
// the C library's expf. The kernels here compute the same: the portable
// ones as the x64 build (every product rounded before its sum, four lanes
// per partial sum), the AVX2 ones (vexp_amd64.s) as the haswell build
// (fused multiply-adds, eight lanes), and both take the leftover elements
// to libcExpf, glibc's expf.

// ggml's vector e^x in float32: x = n ln2 + b with n = round(x log2 e) (by
// adding and subtracting 1.5*2^23) and ln2 in two parts; e^b = 1 + j with
// j = (P4 b) + u (P2 b + P3) + u^2 (P0 b + P1), u = b*b; the result is
// 2^n (1 + j) built in the exponent bits, scaled in two steps when
// |n| > 126 so that it underflows or overflows only as the true value
// does, and 0 or +Inf outright past |n| > 192.
const (
	vexpShift   float32 = 0x1.8p23
	vexpLog2e   float32 = 0x1.715476p+0
	vexpLn2Hi   float32 = 0x1.62e4p-1
	vexpLn2Lo   float32 = 0x1.7f7d1cp-20
	vexpP0      float32 = 0x1.0e4020p-7
	vexpP1      float32 = 0x1.573e2ep-5
	vexpP2      float32 = 0x1.555e66p-3
	vexpP3      float32 = 0x1.fffdb6p-2
	vexpP4      float32 = 0x1.ffffecp-1
	vexpOne             = 0x3f800000 // the bits of 1.0
	vexpScaleHi         = 0x7f000000 // 2^127, the bits the wide scaling starts from
	vexpNegAdj          = 0x82000000 // moves the scaling to 2^-125 for n <= 0
	vexpWide    float32 = 126
	vexpHuge    float32 = 192
)

// vexpSSE is one lane of ggml's SSE2 vector e^x as the x64 build runs it:
// without FMA, every product is rounded before its sum (the conversions
// keep the Go compiler from fusing them).
func vexpSSE(x float32) float32 {
	z := float32(x*vexpLog2e) + vexpShift
	n := z - vexpShift
	b := x - float32(n*vexpLn2Hi)
	b -= float32(n * vexpLn2Lo)
	e := math.Float32bits(z) << 23
	k := math.Float32frombits(e + vexpOne)
	u := float32(b * b)
	hi := float32(vexpP0*b) + vexpP1
	lo := float32(vexpP2*b) + vexpP3
	mid := float32(hi*u) + lo
	j := float32(mid*u) + float32(vexpP4*b)
	an := float32(math.Abs(float64(n)))
	if !(an > vexpWide) {
		return float32(k*j) + k
	}
	var g uint32
	if n <= 0 {
		g = vexpNegAdj
	}
	s1 := math.Float32frombits(g + vexpScaleHi)
	if an > vexpHuge {
		return s1 * s1
	}
	s2 := math.Float32frombits(e - g)
	return (float32(s2*j) + s2) * s1
}

// vsiluSSE is one lane of ggml's SSE2 vector SiLU: x / (1 + e^(0-x)).
func vsiluSSE(x float32) float32 { return x / (1 + vexpSSE(0-x)) }

// libcSiLU is ggml's scalar SiLU of the leftover elements,
// x / (1 + expf(-x)), with glibc's expf.
func libcSiLU(x float32) float32 { return x / (1 + libcExpf(-x)) }

// softmaxSSE is ggml_vec_soft_max_f32 of the x64 build: dst = e^(src-max)
// by the vector e^x four at a time, each group's sum, ((e0+e1)+(e2+e3)) in
// float32 as SSE2's shuffles add it, added to the float64 total; the
// leftovers through libcExpf, one by one into the total.
func softmaxSSE(dst, src []float32, max float32) float64 {
	src = src[:len(dst)]
	var sum float64
	i := 0
	for ; i+3 < len(dst); i += 4 {
		e0, e1 := vexpSSE(src[i]-max), vexpSSE(src[i+1]-max)
		e2, e3 := vexpSSE(src[i+2]-max), vexpSSE(src[i+3]-max)
		dst[i], dst[i+1], dst[i+2], dst[i+3] = e0, e1, e2, e3
		sum += float64((e0 + e1) + (e2 + e3))
	}
	return softmaxTail(dst, src, max, i, sum)
}

// softmaxTail finishes a softmax row from element i on as ggml's scalar
// loop does, adding each e^x to sum.
func softmaxTail(dst, src []float32, max float32, i int, sum float64) float64 {
	for ; i < len(dst); i++ {
		e := libcExpf(src[i] - max)
		dst[i] = e
		sum += float64(e)
	}
	return sum
}

// swigluSSE is ggml_vec_swiglu_f32 of the x64 build: silu(x)*g by the
// vector SiLU four at a time, the leftovers by swigluLibc.
func swigluSSE(dst, x, g []float32) {
	x, g = x[:len(dst)], g[:len(dst)]
	n := len(dst) &^ 3
	for i := range n {
		dst[i] = vsiluSSE(x[i]) * g[i]
	}
	swigluLibc(dst[n:], x[n:], g[n:])
}

// siluSSE is ggml_vec_silu_f32 of the x64 build.
func siluSSE(dst, x []float32) {
	x = x[:len(dst)]
	n := len(dst) &^ 3
	for i := range n {
		dst[i] = vsiluSSE(x[i])
	}
	siluLibc(dst[n:], x[n:])
}

// swigluLibc and siluLibc are ggml's leftovers loops: one element at a
// time through libcSiLU.
func swigluLibc(dst, x, g []float32) {
	x, g = x[:len(dst)], g[:len(dst)]
	for i := range dst {
		dst[i] = libcSiLU(x[i]) * g[i]
	}
}

func siluLibc(dst, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] = libcSiLU(x[i])
	}
}

// asmSiLU wraps a SiLU loop over whole groups, the rest by siluLibc.
func asmSiLU(k grouped[func(dst, x *float32, n int)], generic func(dst, x []float32)) func(dst, x []float32) {
	if k.fn == nil {
		return generic
	}
	return func(dst, x []float32) {
		n := len(dst) / k.group * k.group
		if n > 0 {
			x = x[:len(dst)]
			k.fn(unsafe.SliceData(dst), unsafe.SliceData(x), n)
		}
		siluLibc(dst[n:], x[n:])
	}
}

// asmSoftmax wraps a softmax loop over whole groups, the rest by
// softmaxTail into the same sum.
func asmSoftmax(k grouped[func(dst, src *float32, n int, max float32) float64],
	generic func(dst, src []float32, max float32) float64) func(dst, src []float32, max float32) float64 {
	if k.fn == nil {
		return generic
	}
	return func(dst, src []float32, max float32) float64 {
		n := len(dst) / k.group * k.group
		var sum float64
		if n > 0 {
			src = src[:len(dst)]
			sum = k.fn(unsafe.SliceData(dst), unsafe.SliceData(src), n, max)
		}
		return softmaxTail(dst, src, max, n, sum)
	}
}

// libcExpf is glibc's expf (2.27 and later, as its FMA build computes it
// on a processor with FMA, which glibc's resolver picks there): in
// float64, z = x * 32/ln2, k = round(z) (by adding and subtracting
// 1.5*2^52, fused with the product), r = z - k (fused), 2^(k/32) from a
// table of 32 values and the exponent bits, times a cubic in r; then
// rounded to float32. Outside the range it computes, glibc answers for
// itself: 0 below -103.97 (and for -Inf), the smallest subnormal between
// -103.97 and -103.28, +Inf above 88.72, x+x for NaN and +Inf.
func libcExpf(x float32) float32 {
	const (
		invLn2N = 0x1.71547652b82fep+0 * 32
		shift   = 0x1.8p+52
		c0      = 0x1.c6af84b912394p-5 / (32 * 32 * 32)
		c1      = 0x1.ebfce50fac4f3p-3 / (32 * 32)
		c2      = 0x1.62e42ff0c52d6p-1 / 32
	)
	bits := math.Float32bits(x)
	if bits>>20&0x7ff >= 0x42b { // |x| >= 88, or NaN
		switch {
		case bits == 0xff800000:
			return 0
		case bits>>20&0x7ff >= 0x7f8:
			return x + x
		case x > 0x1.62e42ep6:
			return float32(math.Inf(1))
		case x < -0x1.9fe368p6:
			return 0
		case x < -0x1.9d1d9ep6:
			return 0x1p-149
		}
	}
	xd := float64(x)
	kd := math.FMA(invLn2N, xd, shift)
	ki := math.Float64bits(kd)
	kd -= shift
	r := math.FMA(invLn2N, xd, -kd)
	s := math.Float64frombits(exp2fTable[ki%32] + ki<<47)
	z := math.FMA(c0, r, c1)
	y := math.FMA(c2, r, 1)
	y = math.FMA(z, r*r, y)
	return float32(y * s)
}

// exp2fTable[i] is the bits of 2^(i/32) rounded to float64, less i<<47,
// so that adding k<<47 for k = 32q + i makes 2^(k/32): computed here as
// the fifth square root of 2^i at 200 bits.
var exp2fTable = func() (t [32]uint64) {
	for i := range t {
		v := new(big.Float).SetPrec(200).SetMantExp(big.NewFloat(1), i)
		for range 5 {
			v.Sqrt(v)
		}
		f, _ := v.Float64()
		t[i] = math.Float64bits(f) - uint64(i)<<47
	}
	return t
}()
