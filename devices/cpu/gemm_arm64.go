//go:build !purego

package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/quant"
)

// The tiled and repacked kernels join the fast set where it runs
// (arm64Kernels needs the same features), the integer ones with dotprod
// exactly where the fast set's vec_dot kernels have it.
func init() {
	if !cpu.ARM64.HasASIMD {
		return
	}
	archGemm = map[quant.Type]*plainGemm{
		quant.F32: {step: 4, rows: 3, tile: gemmF32x3x4NEON, tileCol: gemmF32x3x1NEON, one: gemmF32x1x1NEON},
	}
	archRepack = neonRepack
	archPack = map[quant.Type]func(dst, src []byte, rs int){
		quant.Q4_0:   packX8(18, xposeX8NEON),
		quant.Q8_0:   packX8(34, xposeX8NEON),
		quant.IQ4_NL: packX8(18, xposeX8NEON),
	}
	if cpu.ARM64.HasASIMDDP {
		archRepack = sdotRepack
	}
}

// neonRepack and sdotRepack are the repacked kernels without and with
// dotprod.
var (
	neonRepack = map[quant.Type]*repackKernel{
		quant.Q4_0:   {one: repack1(gemmQ4_0x8x1NEON), four: repack4(gemmQ4_0x8x4NEON)},
		quant.Q8_0:   {one: repack1(gemmQ8_0x8x1NEON), four: repack4(gemmQ8_0x8x4NEON)},
		quant.IQ4_NL: {one: repack1(gemmIQ4_NLx8x1NEON), four: repack4(gemmIQ4_NLx8x4NEON)},
	}
	sdotRepack = map[quant.Type]*repackKernel{
		quant.Q4_0:   {one: repack1(gemmQ4_0x8x1SDOT), four: repack4(gemmQ4_0x8x4SDOT)},
		quant.Q8_0:   {one: repack1(gemmQ8_0x8x1SDOT), four: repack4(gemmQ8_0x8x4SDOT)},
		quant.IQ4_NL: {one: repack1(gemmIQ4_NLx8x1SDOT), four: repack4(gemmIQ4_NLx8x4SDOT)},
	}
)

// xposeX8NEON interleaves nb blocks of blockBytes bytes of the eight rows
// rs bytes apart at src into x8Layout's bytes at dst (packX8).
//
//go:noescape
func xposeX8NEON(dst, src unsafe.Pointer, rs uintptr, nb, blockBytes int)

// gemmQ4_0x8x1NEON sets out[0..8) to the eight rows of the repacked Q4_0
// group x (n blocks) times one Q8_0 column y with its aux row;
// gemmQ4_0x8x4NEON does so for four columns, each with the single-column
// kernel's instructions, so with its bits. The SDOT forms use dotprod and
// give the same bits (the integer sums are exact either way). The Q8_0
// and IQ4_NL kernels are the same for their repacked types.
//
//go:noescape
func gemmQ4_0x8x1NEON(n int, x, y, aux, out unsafe.Pointer)

//go:noescape
func gemmQ4_0x8x4NEON(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)

//go:noescape
func gemmQ4_0x8x1SDOT(n int, x, y, aux, out unsafe.Pointer)

//go:noescape
func gemmQ4_0x8x4SDOT(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)

//go:noescape
func gemmQ8_0x8x1NEON(n int, x, y, aux, out unsafe.Pointer)

//go:noescape
func gemmQ8_0x8x4NEON(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)

//go:noescape
func gemmQ8_0x8x1SDOT(n int, x, y, aux, out unsafe.Pointer)

//go:noescape
func gemmQ8_0x8x4SDOT(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)

//go:noescape
func gemmIQ4_NLx8x1NEON(n int, x, y, aux, out unsafe.Pointer)

//go:noescape
func gemmIQ4_NLx8x4NEON(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)

//go:noescape
func gemmIQ4_NLx8x1SDOT(n int, x, y, aux, out unsafe.Pointer)

//go:noescape
func gemmIQ4_NLx8x4SDOT(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)

// gemmF32x3x4NEON sets, for rows r < 3 of x (stride bytes apart) and
// columns c < 4, the float at out[c]+4r to the dot product of row r with
// y[c], over steps*4 elements; gemmF32x3x1NEON does so for one column and
// gemmF32x1x1NEON for one row and one column, each pair with the same
// instructions (plainGemm).
//
//go:noescape
func gemmF32x3x4NEON(steps int, x unsafe.Pointer, stride uintptr, y, out *[4]unsafe.Pointer)

//go:noescape
func gemmF32x3x1NEON(steps int, x unsafe.Pointer, stride uintptr, y, out unsafe.Pointer)

//go:noescape
func gemmF32x1x1NEON(steps int, x, y, out unsafe.Pointer)

// repack1 and repack4 adapt the NEON repacked gemm assembly to
// repackKernel's one and four (amd64 has tile kernels instead); the
// product has sized every operand (a group of nb blocks, Q8_0 rows and
// aux rows of nb blocks, eight outputs per column).
func repack1(k func(nb int, x, y, aux, out unsafe.Pointer)) func(int, []byte, []byte, []byte, []float32) {
	return func(nb int, x, y, aux []byte, out []float32) {
		k(nb, ptr(x), ptr(y), ptr(aux), unsafe.Pointer(unsafe.SliceData(out)))
	}
}

func repack4(k func(nb int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)) func(int, []byte, *[4][]byte, *[4][]byte, *[4][]float32) {
	return func(nb int, x []byte, y, aux *[4][]byte, out *[4][]float32) {
		var yp, ap, op [4]unsafe.Pointer
		for c := range 4 {
			yp[c], ap[c], op[c] = ptr(y[c]), ptr(aux[c]), unsafe.Pointer(unsafe.SliceData(out[c]))
		}
		k(nb, ptr(x), &yp, &ap, &op)
	}
}
