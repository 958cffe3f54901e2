//go:build !purego

package cpu

// The declarations of the arm64 vector primitives (neonVecFuncs in
// level_neon_arm64.go lists them, for both levels); the dot products are
// the F32 and F16 matrix kernels. e^x, SwiGLU, the
// F32->F16 conversion and rope's rotations take groups of four (values;
// pairs for NeoX rotations, eight values for adjacent pairs), and flash
// attention's F16 steps one call per query row (attn_arm64.go).
//
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
func ropeNeoxNEON(y, x, cs *float32, half int)

//go:noescape
func ropeNormalNEON(y, x, cs *float32, n int)

//go:noescape
func vecSwiGLUNEON(dst, x, gate *float32, n int)
