//go:build !purego

package cpu

import (
	"unsafe"

	"github.com/ggml-go/ggml/quant"
)

// The amd64 primitives need what the matrix kernels do (hasAVX2Set: AVX2,
// FMA and F16C).
func init() {
	if hasAVX2Set() {
		vec = avx2Vec
	}
}

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

// avx2Binary wraps one of the binary assembly loops; the slices are cut
// to dst's length first, so a short x or y panics instead of being
// overread.
func avx2Binary(op func(dst, x, y *float32, n int)) func(dst, x, y []float32) {
	return func(dst, x, y []float32) {
		if len(dst) == 0 {
			return
		}
		x, y = x[:len(dst)], y[:len(dst)]
		op(unsafe.SliceData(dst), unsafe.SliceData(x), unsafe.SliceData(y), len(dst))
	}
}

var avx2Vec = vecKernels{
	name: "avx2",
	add:  avx2Binary(vecAddAVX2),
	sub:  avx2Binary(vecSubAVX2),
	mul:  avx2Binary(vecMulAVX2),
	div:  avx2Binary(vecDivAVX2),
	scale: func(x []float32, s float32) {
		if len(x) > 0 {
			vecScaleAVX2(unsafe.SliceData(x), len(x), s)
		}
	},
	mad: func(y, x []float32, s float32) {
		if len(y) > 0 {
			x = x[:len(y)]
			vecMadAVX2(unsafe.SliceData(y), unsafe.SliceData(x), len(y), s)
		}
	},
	dot: func(x, y []float32) float32 {
		if len(x) == 0 {
			return 0
		}
		y = y[:len(x)]
		return vecDotAVX2(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
	},
	dotF16: func(x, y []uint16) float32 {
		if len(x) == 0 {
			return 0
		}
		y = y[:len(x)]
		return vecDotF16AVX2(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
	},
	madF16: func(y, x []uint16, s float32) {
		if len(y) > 0 {
			x = x[:len(y)]
			vecMadF16AVX2(unsafe.SliceData(y), unsafe.SliceData(x), len(y), s)
		}
	},
	scaleF16: func(y []uint16, s float32) {
		if len(y) > 0 {
			vecScaleF16AVX2(unsafe.SliceData(y), len(y), s)
		}
	},
	f16ToF32: func(dst []float32, src []uint16) {
		if len(dst) > 0 {
			src = src[:len(dst)]
			vecF16ToF32AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(dst))
		}
	},
	// ggml's scalar conversion, not F16C: the two differ on NaN payloads,
	// and copies must match ggml's generic build there.
	f32ToF16: quant.FP32ToFP16Slice,
	// The assembly takes whole groups of eight, the generic loop the rest.
	swiglu: func(dst, x, g []float32) {
		n := len(dst) &^ 7
		if n > 0 {
			x, g = x[:len(dst)], g[:len(dst)]
			vecSwiGLUAVX2(unsafe.SliceData(dst), unsafe.SliceData(x), unsafe.SliceData(g), n)
		}
		vecGenericSwiGLU(dst[n:], x[n:], g[n:])
	},
}
