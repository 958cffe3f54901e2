//go:build !purego

package cpu

import (
	"unsafe"

	"github.com/ggml-go/ggml/quant"
)

// The repacked kernels join the fast set where it runs (amd64Kernels
// needs the same features).
func init() {
	if hasAVX2Set() {
		archRepack = map[quant.Type]*repackKernel{
			quant.Q4_0:   {one: repack1(gemmQ4_0x8x1AVX2), four: repack4(gemmQ4_0x8x4AVX2)},
			quant.Q8_0:   {one: repack1(gemmQ8_0x8x1AVX2), four: repack4(gemmQ8_0x8x4AVX2)},
			quant.IQ4_NL: {one: repack1(gemmIQ4_NLx8x1AVX2), four: repack4(gemmIQ4_NLx8x4AVX2)},
		}
		archPack = map[quant.Type]func(dst, src []byte, rs int){
			quant.Q4_0:   packX8(18, x8AVX2),
			quant.Q8_0:   packX8(34, x8AVX2),
			quant.IQ4_NL: packX8(18, x8AVX2),
		}
		archGemm = map[quant.Type]*plainGemm{
			quant.F32: {step: 8, tile3x4: gemmF32x3x4AVX2, tile3x1: gemmF32x3x1AVX2, one: gemmF32x1x1AVX2},
		}
	}
}

// x8AVX2 is xposeX8AVX2 set for x8Layout (packX8): the scales, then runs
// of four quant words from byte 2.
func x8AVX2(dst, src unsafe.Pointer, rs uintptr, nb, blockBytes int) {
	xposeX8AVX2(dst, src, rs, nb, blockBytes, 8*blockBytes, 2, 16, (blockBytes-2)/16, 1)
}

// xposeX8AVX2 interleaves nb blocks of eight rows (the assembly says how).
//
//go:noescape
func xposeX8AVX2(dst, src unsafe.Pointer, rs uintptr, nb, sblk, dblk, sq, dq, nx, hdr int)

// gemmQ4_0x8x1AVX2 sets out[0..8) to the eight rows of the repacked Q4_0
// group x (nb blocks) times one Q8_0 column y with its aux row;
// gemmQ4_0x8x4AVX2 does so for four columns, each with the single-column
// kernel's instructions, so with its bits.
//
//go:noescape
func gemmQ4_0x8x1AVX2(nb int, x, y, aux, out unsafe.Pointer)

//go:noescape
func gemmQ4_0x8x4AVX2(nb int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)

// gemmQ8_0x8x1AVX2 and gemmQ8_0x8x4AVX2 are the same for repacked Q8_0
// (aux's sums unused).
//
//go:noescape
func gemmQ8_0x8x1AVX2(nb int, x, y, aux, out unsafe.Pointer)

//go:noescape
func gemmQ8_0x8x4AVX2(nb int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)

// gemmIQ4_NLx8x1AVX2 and gemmIQ4_NLx8x4AVX2 are the same for repacked
// IQ4_NL.
//
//go:noescape
func gemmIQ4_NLx8x1AVX2(nb int, x, y, aux, out unsafe.Pointer)

//go:noescape
func gemmIQ4_NLx8x4AVX2(nb int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)

// gemmF32x3x4AVX2 sets, for rows r < 3 of x (stride bytes apart) and
// columns c < 4, the float at out[c]+4r to the dot product of row r with
// y[c], over steps*8 elements; gemmF32x3x1AVX2 does so for one column and
// gemmF32x1x1AVX2 for one row and one column, each pair with the same
// instructions (plainGemm).
//
//go:noescape
func gemmF32x3x4AVX2(steps int, x unsafe.Pointer, stride uintptr, y, out *[4]unsafe.Pointer)

//go:noescape
func gemmF32x3x1AVX2(steps int, x unsafe.Pointer, stride uintptr, y, out unsafe.Pointer)

//go:noescape
func gemmF32x1x1AVX2(steps int, x, y, out unsafe.Pointer)
