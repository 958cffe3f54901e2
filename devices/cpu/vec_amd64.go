//go:build !purego

package cpu

// The amd64 primitives need what the matrix kernels do (hasAVX2Set: AVX2,
// FMA and F16C).
func init() {
	if hasAVX2Set() {
		useVec(avx2Vec)
	}
}

// avx2Vec is the AVX2 set: newAsmVec's wrappers, e^x and sincos over
// groups of four, SwiGLU, the F32->F16 conversion and rope's rotations
// over groups of eight, and flash attention's fused steps (attn_amd64.go).
var avx2Vec = newAsmVec("avx2", avx2VecFuncs)

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

	swiglu:     by(8, vecSwiGLUAVX2),
	expf:       by(4, expfAVX2),
	f32ToF16:   by(8, vecF32ToF16AVX2),
	sincos:     by(4, sincosAVX2),
	ropeNeox:   by(8, ropeNeoxAVX2),
	ropeNormal: by(8, ropeNormalAVX2),
	attnScores: attnScoresF16AVX2,
	attnAcc:    attnAccF16AVX2,
}
