//go:build !purego

package cpu

import (
	"fmt"
	"unsafe"
)

// The adapters and declarations of the avx2 level's tiled and repacked
// products (level_avx2_amd64.go lists them).

// fillQ8_0AuxAVX2 is fillAux for nb Q8_0 blocks (the same bytes).
func fillQ8_0AuxAVX2(aux, y []byte, nb int) {
	_, _ = aux[8*nb-1], y[34*nb-1]
	fillAuxAVX2(ptr(aux), ptr(y), nb)
}

// x8AVX2 is xposeX8AVX2 set for x8Layout (packX8): the scales, then runs
// of four quant words from byte 2.
func x8AVX2(dst, src unsafe.Pointer, rs uintptr, nb, blockBytes int) {
	xposeX8AVX2(dst, src, rs, nb, blockBytes, 8*blockBytes, 2, 16, (blockBytes-2)/16, 1)
}

// tileAsm is a tile kernel of the assembly for one column count
// (gemm_amd64.s): nb blocks per group, ngroups groups of groupBytes bytes
// from x, the columns' activation rows y0..y3, aux rows a0..a3 and
// outputs o0..o3, passed by value so that no array of them is made on
// the heap for each call.
type tileAsm func(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

// asmRepack makes the repackKernel of the assembly kernels ks (ks[n-1]
// for n columns) over groups of groupBytes bytes per block: its tile
// checks what the assembly trusts (every operand long enough), and one
// and four are tile's for a group.
func asmRepack(groupBytes int, ks [4]tileAsm) *repackKernel {
	tile := func(ncols, nb, ngroups int, x []byte, y, aux *[4][]byte, out *[4][]float32) {
		if ncols < 1 || ncols > 4 || ngroups < 1 || len(x) < ngroups*nb*groupBytes {
			panic(fmt.Sprintf("cpu: repacked tile of %d columns, %d groups of %d blocks: operands too short", ncols, ngroups, nb))
		}
		var yp, ap, op [4]unsafe.Pointer
		for c := range 4 {
			// Slots past ncols repeat column 0: the assembly loads
			// every slot's pointers but uses only its own.
			src := c
			if c >= ncols {
				src = 0
			}
			if len(y[src]) < 34*nb || len(aux[src]) < 8*nb || len(out[src]) < 8*ngroups {
				panic(fmt.Sprintf("cpu: repacked tile of %d groups of %d blocks: column %d too short", ngroups, nb, src))
			}
			yp[c], ap[c], op[c] = ptr(y[src]), ptr(aux[src]), unsafe.Pointer(unsafe.SliceData(out[src]))
		}
		ks[ncols-1](nb, ngroups, ptr(x), yp[0], yp[1], yp[2], yp[3], ap[0], ap[1], ap[2], ap[3], op[0], op[1], op[2], op[3])
	}
	return &repackKernel{
		tile: tile,
		one: func(nb int, x, y, aux []byte, out []float32) {
			tile(1, nb, 1, x, &[4][]byte{y}, &[4][]byte{aux}, &[4][]float32{out})
		},
		four: func(nb int, x []byte, y, aux *[4][]byte, out *[4][]float32) { tile(4, nb, 1, x, y, aux, out) },
	}
}

// fillAuxAVX2 is fillAux for nb blocks (the same bytes).
//
//go:noescape
func fillAuxAVX2(aux, y unsafe.Pointer, nb int)

// xposeX8AVX2 interleaves nb blocks of eight rows (the assembly says how).
//
//go:noescape
func xposeX8AVX2(dst, src unsafe.Pointer, rs uintptr, nb, sblk, dblk, sq, dq, nx, hdr int)

// gemmQ4_0x8xNAVX2 (N columns, 1 to 4) are the tile kernels of
// repacked Q4_0 against Q8_0 columns with their aux rows, the
// gemmQ8_0x8xNAVX2 those of repacked Q8_0 (aux's sums unused) and the
// gemmIQ4_NLx8xNAVX2 those of repacked IQ4_NL (tileAsm says how they are
// called).
//
//go:noescape
func gemmQ4_0x8x1AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmQ4_0x8x2AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmQ4_0x8x3AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmQ4_0x8x4AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmQ8_0x8x1AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmQ8_0x8x2AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmQ8_0x8x3AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmQ8_0x8x4AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmIQ4_NLx8x1AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmIQ4_NLx8x2AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmIQ4_NLx8x3AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

//go:noescape
func gemmIQ4_NLx8x4AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)

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

// q4_KPack packs Q4_K rows and Q8_K columns for gemmQ4_KPx4AVX2
// (gemm_k_amd64.s says how): 320 bytes a packed super-block.
var q4_KPack = &gemmPack{
	rowBytes: func(steps int) int { return 320 * steps },
	rows:     packQ4_KAVX2,
	col:      packQ8_KAVX2,
	tile:     gemmQ4_KPx4AVX2,
}

// q5_KPack packs Q5_K rows to q4_KPack's layout (levels 0..31: four
// products of at most 31*128 still fit the tile's int16 sums), for the
// same tile, bit for bit dotQ5_KAVX2 (Q5_K's dot is Q4_K's with the fifth
// bit in the levels).
var q5_KPack = &gemmPack{
	rowBytes: q4_KPack.rowBytes,
	rows:     packQ5_KAVX2,
	col:      packQ8_KAVX2,
	tile:     gemmQ4_KPx4AVX2,
}

// q6_KPack packs Q6_K rows and Q8_K columns for gemmQ6_KPx4AVX2: 448
// bytes a packed super-block, the columns as for Q4_K.
var q6_KPack = &gemmPack{
	rowBytes: func(steps int) int { return 448 * steps },
	rows:     packQ6_KAVX2,
	col:      packQ8_KAVX2,
	tile:     gemmQ6_KPx4AVX2,
}

// packQ4_KAVX2 packs nrows Q4_K rows of steps super-blocks, stride bytes
// apart, to dst one after the other.
//
//go:noescape
func packQ4_KAVX2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)

// packQ5_KAVX2 is packQ4_KAVX2 for Q5_K rows.
//
//go:noescape
func packQ5_KAVX2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)

// packQ6_KAVX2 is packQ4_KAVX2 for Q6_K rows.
//
//go:noescape
func packQ6_KAVX2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)

// packQ8_KAVX2 packs a Q8_K row of steps blocks to dst (the same size).
//
//go:noescape
func packQ8_KAVX2(dst, src unsafe.Pointer, steps int)

// gemmQ4_KPx4AVX2 is gemmPack's tile for packed Q4_K rows against packed
// Q8_K columns, bit for bit dotQ4_KAVX2.
//
//go:noescape
func gemmQ4_KPx4AVX2(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)

// gemmQ6_KPx4AVX2 is gemmQ4_KPx4AVX2 for packed Q6_K rows, bit for bit
// dotQ6_KAVX2.
//
//go:noescape
func gemmQ6_KPx4AVX2(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)
