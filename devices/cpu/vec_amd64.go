//go:build !purego

package cpu

// The declarations of the avx2 level's vector primitives
// (level_avx2_amd64.go lists them): newAsmVec's wrappers, e^x over groups
// of four, the F32->F16 conversion and rope's
// rotations over groups of eight, and flash attention's fused steps
// (attn_amd64.go).

//go:noescape
func expfAVX2(dst, src *float32, n int)

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

// ggml's vector e^x loops (vexp_amd64.s), over whole groups of eight.

//go:noescape
func vsoftmaxAVX2(dst, src *float32, n int, max float32) float64

//go:noescape
func vswigluAVX2(dst, x, gate *float32, n int)

//go:noescape
func vsiluAVX2(dst, x *float32, n int)
