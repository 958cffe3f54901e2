//go:build !purego

package cpu

import (
	"unsafe"

	"github.com/ggml-go/ggml/quant"
)

// The amx level's own kernels besides the tiles, in the orders of ggml's
// sapphirerapids build (AVX-512), the build libllama runs on the
// processors that have the level; the levels below keep the haswell
// build's orders (avx512vnni's integers and sums are avx2's).

// sprF32 are the F32 products: ggml_vec_dot_f32's 16-lane order (with
// the four-column and many-row forms), and llamafile's sgemm with 16-lane
// steps where ggml hands it the product (tinyBLAS takes rows of whole
// steps, ggml_vec_dot_f32 the rest).
var (
	sprF32Dot  = asmDot{quant.F32, dotF32AVX512, wrap4(1, dotF32x4AVX512)}
	sprF32Rows = asmRows{quant.F32, rowsSwapped(quant.F32, dotF32x4AVX512, dotF32AVX512)}
	sprF32Gemm = &plainGemm{step: 16, rows: 4, sgemmCols: 2, tile: gemmF32x4x4AVX512, tileCol: gemmF32x4x1AVX512, one: gemmF32x1x1AVX512}
)

// dotF32AVX512 is ggml_vec_dot_f32 of the sapphirerapids build over n
// floats (dot_f32_avx512_linux_amd64.s says its order); dotF32x4AVX512
// sets out[c] to dotF32AVX512(n, x, y[c]), bit for bit.
//
//go:noescape
func dotF32AVX512(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotF32x4AVX512(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

// gemmF32x4x4AVX512 sets, for rows r < 4 of x (stride bytes apart) and
// columns c < 4, the float at out[c]+4r to the product of row r with y[c]
// over steps*16 elements in tinyBLAS<16>'s order; gemmF32x4x1AVX512 does
// so for one column and gemmF32x1x1AVX512 for one row and one column,
// with the same bits.
//
//go:noescape
func gemmF32x4x4AVX512(steps int, x unsafe.Pointer, stride uintptr, y, out *[4]unsafe.Pointer)

//go:noescape
func gemmF32x4x1AVX512(steps int, x unsafe.Pointer, stride uintptr, y, out unsafe.Pointer)

//go:noescape
func gemmF32x1x1AVX512(steps int, x, y, out unsafe.Pointer)

// ggml's vector e^x loops in the sapphirerapids build's 16-lane variant
// (vexp_avx512_linux_amd64.s), over whole groups of 16: as their AVX2
// twins in vec_amd64.go.

//go:noescape
func vsoftmaxAVX512(dst, src *float32, n int, max float32) float64

//go:noescape
func vswigluAVX512(dst, x, gate *float32, n int)

//go:noescape
func vsiluAVX512(dst, x *float32, n int)
