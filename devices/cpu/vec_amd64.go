//go:build !purego

package cpu

import (
	"math"
	"unsafe"
)

// The amd64 primitives need what the matrix kernels do (hasAVX2Set: AVX2,
// FMA and F16C).
func init() {
	if hasAVX2Set() {
		vec = avx2Vec
	}
}

// avx2Vec is the AVX2 set: newAsmVec's wrappers; SwiGLU, e^x and the
// F32->F16 conversion, whose assembly takes whole groups of eight (four
// for e^x) and leaves the rest to the generic loop; and flash attention's
// fused steps (attn_amd64.go).
var avx2Vec = func() vecKernels {
	k := newAsmVec("avx2", avx2VecFuncs)
	k.swiglu = func(dst, x, g []float32) {
		n := len(dst) &^ 7
		if n > 0 {
			x, g = x[:len(dst)], g[:len(dst)]
			vecSwiGLUAVX2(unsafe.SliceData(dst), unsafe.SliceData(x), unsafe.SliceData(g), n)
		}
		vecGenericSwiGLU(dst[n:], x[n:], g[n:])
	}
	k.expf = func(dst, src []float32) {
		n := len(dst) &^ 3
		if n > 0 {
			src = src[:len(dst)]
			expfAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), n)
		}
		genericVec.expf(dst[n:], src[n:])
	}
	k.f32ToF16 = func(dst []uint16, src []float32) {
		n := len(dst) &^ 7
		if n > 0 {
			src = src[:len(dst)]
			vecF32ToF16AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), n)
		}
		genericVec.f32ToF16(dst[n:], src[n:])
	}
	k.attnScoresF16 = attnScoresF16Fused
	k.attnScoresMaxF16 = attnScoresMaxF16Fused
	k.attnAccF16 = attnAccF16Fused
	k.sincos = func(s, c, x []float64) {
		s, c = s[:len(x)], c[:len(x)]
		n := len(x) &^ 3
		if n > 0 && sincosAVX2(unsafe.SliceData(s), unsafe.SliceData(c), unsafe.SliceData(x), n) != 0 {
			// The angles the assembly does not reduce (and zeros,
			// whose signs it does not keep): math.Sincos itself.
			for i, v := range x[:n] {
				if v == 0 || !(math.Abs(v) < 1<<29) {
					s[i], c[i] = math.Sincos(v)
				}
			}
		}
		genericVec.sincos(s[n:], c[n:], x[n:])
	}
	k.ropeNeox = func(y, x, cs []float32) {
		h := len(x) / 2
		y, cs = y[:2*h], cs[:2*h]
		n := h &^ 7
		if n > 0 {
			ropeNeoxAVX2(unsafe.SliceData(y), unsafe.SliceData(x), unsafe.SliceData(cs), h)
		}
		ropeNeoxFrom(y, x, cs, n)
	}
	k.ropeNormal = func(y, x, cs []float32) {
		y, cs = y[:len(x)], cs[:len(x)]
		n := len(x) &^ 7
		if n > 0 {
			ropeNormalAVX2(unsafe.SliceData(y), unsafe.SliceData(x), unsafe.SliceData(cs), n)
		}
		genericVec.ropeNormal(y[n:], x[n:], cs[n:])
	}
	return k
}()

//go:noescape
func expfAVX2(dst, src *float32, n int)

//go:noescape
func sincosAVX2(s, c, x *float64, n int) (other int)

//go:noescape
func ropeNeoxAVX2(y, x, cs *float32, half int)

//go:noescape
func ropeNormalAVX2(y, x, cs *float32, n int)

//go:noescape
func vecF32ToF16AVX2(dst *uint16, src *float32, n int)

//go:noescape
func vecAddAVX2(dst, x, y *float32, n int)

//go:noescape
func vecSubAVX2(dst, x, y *float32, n int)

//go:noescape
func vecMulAVX2(dst, x, y *float32, n int)

//go:noescape
func vecDivAVX2(dst, x, y *float32, n int)

//go:noescape
func vecScaleAVX2(x *float32, n int, s float32)

//go:noescape
func vecMadAVX2(y, x *float32, n int, s float32)

//go:noescape
func vecDotAVX2(x, y *float32, n int) float32

//go:noescape
func vecDotF16AVX2(x, y *uint16, n int) float32

//go:noescape
func vecMadF16AVX2(y, x *uint16, n int, s float32)

//go:noescape
func vecScaleF16AVX2(y *uint16, n int, s float32)

//go:noescape
func vecF16ToF32AVX2(dst *float32, src *uint16, n int)

//go:noescape
func vecSwiGLUAVX2(dst, x, gate *float32, n int)

var avx2VecFuncs = asmVecFuncs{
	add:      vecAddAVX2,
	sub:      vecSubAVX2,
	mul:      vecMulAVX2,
	div:      vecDivAVX2,
	scale:    vecScaleAVX2,
	mad:      vecMadAVX2,
	dot:      vecDotAVX2,
	dotF16:   vecDotF16AVX2,
	madF16:   vecMadF16AVX2,
	scaleF16: vecScaleF16AVX2,
	f16ToF32: vecF16ToF32AVX2,
}
