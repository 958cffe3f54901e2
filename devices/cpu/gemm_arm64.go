//go:build !purego

package cpu

import (
	"unsafe"

	"github.com/ggml-go/ggml/quant"
)

// The adapters and declarations of the neon and neon-dotprod levels'
// tiled and repacked products (level_neon_arm64.go and
// level_neondotprod_arm64.go list them).

// kTile is a packed K-quant tile (gemmPack's tile).
type kTile func(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)

// kGemms makes a level's tiled kernels from its Q4_K, Q5_K and Q6_K
// tiles. Q5_K's rows are packed to Q4_K's layout (the fifth bit in the
// levels), so its tile is Q4_K's. The tiles take rows in pairs
// (gemm_k_arm64.s says why); a pair for one column and a row left over
// from the pairs go through the level's vec_dot, which has the tile's
// bits (level.build makes those edges).
func kGemms(tiles [3]kTile) map[quant.Type]*plainGemm {
	rows := [3]func(dst, src unsafe.Pointer, stride uintptr, nrows, steps int){packQ4_KNEON, packQ5_KNEON, packQ6_KNEON}
	m := map[quant.Type]*plainGemm{
		quant.F32: {step: 4, rows: 3, tile: gemmF32x3x4NEON, tileCol: gemmF32x3x1NEON, one: gemmF32x1x1NEON},
	}
	for i, typ := range []quant.Type{quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		m[typ] = &plainGemm{
			step: 256, rows: 2, exact: true,
			pack: &gemmPack{
				rowBytes: func(steps int) int { return 336 * steps },
				rows:     rows[i],
				col:      packQ8_KNEON,
				tile:     tiles[i],
			},
		}
	}
	return m
}

// packQ4_KNEON packs nrows Q4_K rows of steps super-blocks, stride bytes
// apart, to dst one after the other (336 bytes a super-block);
// packQ5_KNEON packs Q5_K rows to the same layout and packQ6_KNEON Q6_K
// rows to theirs (gemm_k_arm64.s says how). They need only NEON.
//
//go:noescape
func packQ4_KNEON(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)

//go:noescape
func packQ5_KNEON(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)

//go:noescape
func packQ6_KNEON(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)

// packQ8_KNEON packs a Q8_K row of steps blocks to dst (the same size).
//
//go:noescape
func packQ8_KNEON(dst, src unsafe.Pointer, steps int)

// gemmQ4_KPx4NEON is gemmPack's tile for packed Q4_K (or Q5_K) rows
// against packed Q8_K columns, nrows even, bit for bit dotQ4_KNEON (or
// dotQ5_KNEON); gemmQ6_KPx4NEON is the same for packed Q6_K rows. The SDOT
// forms use dotprod and give the same bits.
//
//go:noescape
func gemmQ4_KPx4NEON(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)

//go:noescape
func gemmQ4_KPx4SDOT(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)

//go:noescape
func gemmQ6_KPx4NEON(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)

//go:noescape
func gemmQ6_KPx4SDOT(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)

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
