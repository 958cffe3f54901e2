//go:build !purego

package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/internal/cpuid"

	"github.com/ggml-go/ggml/quant"
)

// The amd64 primitives need AVX2, FMA and F16C, ggml's baseline for its
// fast x86 builds.
func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpuid.HasF16C() {
		vec = avx2Vec
	}
}

//go:noescape
func addAVX2(dst, x, y *float32, n int)

//go:noescape
func subAVX2(dst, x, y *float32, n int)

//go:noescape
func mulAVX2(dst, x, y *float32, n int)

//go:noescape
func divAVX2(dst, x, y *float32, n int)

//go:noescape
func scaleAVX2(x *float32, n int, s float32)

//go:noescape
func madAVX2(y, x *float32, n int, s float32)

//go:noescape
func dotAVX2(x, y *float32, n int) float32

//go:noescape
func dotF16AVX2(x, y *uint16, n int) float32

//go:noescape
func madF16AVX2(y, x *uint16, n int, s float32)

//go:noescape
func scaleF16AVX2(y *uint16, n int, s float32)

//go:noescape
func f16ToF32AVX2(dst *float32, src *uint16, n int)

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
	add:  avx2Binary(addAVX2),
	sub:  avx2Binary(subAVX2),
	mul:  avx2Binary(mulAVX2),
	div:  avx2Binary(divAVX2),
	scale: func(x []float32, s float32) {
		if len(x) > 0 {
			scaleAVX2(unsafe.SliceData(x), len(x), s)
		}
	},
	mad: func(y, x []float32, s float32) {
		if len(y) > 0 {
			x = x[:len(y)]
			madAVX2(unsafe.SliceData(y), unsafe.SliceData(x), len(y), s)
		}
	},
	dot: func(x, y []float32) float32 {
		if len(x) == 0 {
			return 0
		}
		y = y[:len(x)]
		return dotAVX2(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
	},
	dotF16: func(x, y []uint16) float32 {
		if len(x) == 0 {
			return 0
		}
		y = y[:len(x)]
		return dotF16AVX2(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
	},
	madF16: func(y, x []uint16, s float32) {
		if len(y) > 0 {
			x = x[:len(y)]
			madF16AVX2(unsafe.SliceData(y), unsafe.SliceData(x), len(y), s)
		}
	},
	scaleF16: func(y []uint16, s float32) {
		if len(y) > 0 {
			scaleF16AVX2(unsafe.SliceData(y), len(y), s)
		}
	},
	f16ToF32: func(dst []float32, src []uint16) {
		if len(dst) > 0 {
			src = src[:len(dst)]
			f16ToF32AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(dst))
		}
	},
	// ggml's scalar conversion, not F16C: the two differ on NaN payloads,
	// and copies must match ggml's generic build there.
	f32ToF16: quant.FP32ToFP16Slice,
}
