//go:build !purego

package cpu

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

var avx2Vec = newAsmVec("avx2", asmVecFuncs{
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
})
