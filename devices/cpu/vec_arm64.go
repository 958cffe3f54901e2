//go:build !purego

package cpu

import "unsafe"

// The arm64 primitives need only NEON, which every arm64 core has; the
// dot products are the F32 and F16 matrix kernels. e^x, SwiGLU, the
// F32->F16 conversion and rope's rotations take groups of four (values;
// pairs for NeoX rotations, eight values for adjacent pairs), sincos
// groups of two, and flash attention's F16 steps one call per query row
// (attn_arm64.go).
func init() { useVec(neonVec) }

var neonVec = newAsmVec("neon", asmVecFuncs{
	add:   vecAddNEON,
	sub:   vecSubNEON,
	mul:   vecMulNEON,
	div:   vecDivNEON,
	scale: vecScaleNEON,
	mad:   vecMadNEON,
	dot: func(x, y *float32, n int) float32 {
		return dotF32NEON(n, unsafe.Pointer(x), unsafe.Pointer(y))
	},
	dotF16: func(x, y *uint16, n int) float32 {
		return dotF16NEON(n, unsafe.Pointer(x), unsafe.Pointer(y))
	},
	madF16:   vecMadF16NEON,
	scaleF16: vecScaleF16NEON,
	f16ToF32: vecF16ToF32NEON,

	swiglu:     by(4, vecSwiGLUNEON),
	expf:       by(4, expfNEON),
	f32ToF16:   by(4, vecF32ToF16NEON),
	sincos:     by(2, sincosNEON),
	ropeNeox:   by(4, ropeNeoxNEON),
	ropeNormal: by(8, ropeNormalNEON),
	attnScores: attnScoresF16NEON,
	attnAcc:    attnAccF16NEON,
})

//go:noescape
func vecAddNEON(dst, x, y *float32, n int)

//go:noescape
func vecSubNEON(dst, x, y *float32, n int)

//go:noescape
func vecMulNEON(dst, x, y *float32, n int)

//go:noescape
func vecDivNEON(dst, x, y *float32, n int)

//go:noescape
func vecScaleNEON(y *float32, n int, s float32)

//go:noescape
func vecMadNEON(y, x *float32, n int, s float32)

//go:noescape
func vecMadF16NEON(y, x *uint16, n int, s float32)

//go:noescape
func vecScaleF16NEON(y *uint16, n int, s float32)

//go:noescape
func vecF16ToF32NEON(dst *float32, src *uint16, n int)

//go:noescape
func expfNEON(dst, src *float32, n int)

//go:noescape
func vecF32ToF16NEON(dst *uint16, src *float32, n int)

//go:noescape
func sincosNEON(s, c, x *float64, n int) (other int)

//go:noescape
func ropeNeoxNEON(y, x, cs *float32, half int)

//go:noescape
func ropeNormalNEON(y, x, cs *float32, n int)

//go:noescape
func vecSwiGLUNEON(dst, x, gate *float32, n int)
