//go:build !purego

package cpu

import (
	"fmt"
	"unsafe"

	"github.com/ggml-go/ggml/quant"
)

// The adapters and declarations of the avx2 level's vec_dot kernels
// (level_avx2_amd64.go lists them).

// wrapRows adapts a kernel that walks the rows itself, with the column
// scales converted once into scratch, to vecDot4. It checks the lengths
// the assembly cannot.
func wrapRows(typ quant.Type, k func(int, unsafe.Pointer, uintptr, int, *[4]unsafe.Pointer, *float32, *float32)) func(int, []byte, uint64, int, *[4][]byte, []float32, []float32) {
	return func(n int, x []byte, stride uint64, nrows int, y *[4][]byte, scratch, out []float32) {
		nb := n / 32
		if nrows < 1 || len(scratch) < 4*nb+1 || len(out) < 4*nrows ||
			uint64(len(x)) < uint64(nrows-1)*stride+uint64(typ.RowSize(int64(n))) {
			panic(fmt.Sprintf("cpu: %s vecDot4 of %d rows: operands too short", typ, nrows))
		}
		ys := [4]unsafe.Pointer{ptr(y[0]), ptr(y[1]), ptr(y[2]), ptr(y[3])}
		k(nb, ptr(x), uintptr(stride), nrows, &ys, unsafe.SliceData(scratch), unsafe.SliceData(out))
	}
}

// checkRows panics (the pool turns it into an error) unless x holds nrows
// rows of n elements of typ stride bytes apart, y one row of typ's vec_dot
// type, and out and scratch are long enough: the assembly cannot check.
func checkRows(typ quant.Type, n int, x []byte, stride uint64, nrows int, y []byte, scratch, out []float32) {
	if nrows < 1 || len(out) < nrows || len(scratch) < rowsScratch(n) ||
		int64(len(y)) < typ.VecDotType().RowSize(int64(n)) ||
		uint64(len(x)) < uint64(nrows-1)*stride+uint64(typ.RowSize(int64(n))) {
		panic(fmt.Sprintf("cpu: %s vecDotRows of %d rows: operands too short", typ, nrows))
	}
}

// Both kinds of vecDotRows walk the rows in groups of four far apart, row
// g of each quarter of the range: four long sequential streams, which one
// core fetches faster than one (dot_rows_amd64.s). The rows short of four
// quarters go through the single kernel.

// rowsSwapped makes vecDotRows for a type whose dot is the same bit for
// bit with its operands swapped (F32, F16 and BF16 against their own
// type: the products are commutative and both sides are converted alike)
// from its four-column kernel: the column takes the row's place, and four
// rows the four columns'.
func rowsSwapped(typ quant.Type, k4 func(int, unsafe.Pointer, *[4]unsafe.Pointer, *[4]float32), k1 func(int, unsafe.Pointer, unsafe.Pointer) float32) func(int, []byte, uint64, int, []byte, []float32, []float32) {
	return func(n int, x []byte, stride uint64, nrows int, y []byte, scratch, out []float32) {
		checkRows(typ, n, x, stride, nrows, y, scratch, out)
		q := nrows / 4
		gap := uint64(q) * stride
		var o [4]float32
		for g := range q {
			r0 := uint64(g) * stride
			xs := [4]unsafe.Pointer{ptr(x[r0:]), ptr(x[r0+gap:]), ptr(x[r0+2*gap:]), ptr(x[r0+3*gap:])}
			k4(n, ptr(y), &xs, &o)
			out[g], out[g+q], out[g+2*q], out[g+3*q] = o[0], o[1], o[2], o[3]
		}
		for r := 4 * q; r < nrows; r++ {
			out[r] = k1(n, ptr(x[uint64(r)*stride:]), ptr(y))
		}
	}
}

// rows4 adapts a four-row kernel (dot_rows_amd64.s) to vecDotRows.
func rows4(typ quant.Type, k func(int, unsafe.Pointer, uintptr, uintptr, int, unsafe.Pointer, *float32, *float32, uintptr), k1 func(int, unsafe.Pointer, unsafe.Pointer) float32) func(int, []byte, uint64, int, []byte, []float32, []float32) {
	per := int(typ.BlockSize())
	return func(n int, x []byte, stride uint64, nrows int, y []byte, scratch, out []float32) {
		checkRows(typ, n, x, stride, nrows, y, scratch, out)
		q := nrows / 4
		if q > 0 {
			k(n/per, ptr(x), uintptr(stride), uintptr(q)*uintptr(stride), q, ptr(y), unsafe.SliceData(scratch), unsafe.SliceData(out), 4*uintptr(q))
		}
		for r := 4 * q; r < nrows; r++ {
			out[r] = k1(n/per, ptr(x[uint64(r)*stride:]), ptr(y))
		}
	}
}

// The assembly kernels. dotTAVX2(n, x, y) is the dot product of n units
// (blocks; elements for F32 and F16) of type T at x with n units of its
// vec_dot type at y; dotTx4AVX2(n, x, y, out) sets out[c] to
// dotTAVX2(n, x, y[c]) for the four y, bit for bit. The Q8_0-activation
// ones walk nrows rows of x stride bytes apart themselves, out[4r+c]
// getting row r's, after converting the four columns' scales into dy
// (4n floats). Q8_0 activations must
// hold quants in [-127, 127], as every Q8_0 quantizer writes: -128 does
// not survive the sign trick (as in ggml's AVX2 kernels).

//go:noescape
func dotF32AVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotF32x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotF32RowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotF16AVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotF16x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ8_0AVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ8_0x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)

//go:noescape
func dotQ4_0AVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_0x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)

//go:noescape
func dotQ5_0AVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_0x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)

//go:noescape
func dotIQ4_NLAVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotIQ4_NLx4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)

//go:noescape
func dotMXFP4AVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_KAVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_Kx4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ6_KAVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ6_Kx4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotBF16AVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotBF16x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_1AVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_1x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)

//go:noescape
func dotQ5_1AVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_1x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)

//go:noescape
func dotQ5_KAVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_Kx4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ2_KAVX2(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ3_KAVX2(n int, x, y unsafe.Pointer) float32

// The four-row kernels (dot_rows_amd64.s).

//go:noescape
func dotQ8_0RowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ4_0RowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ5_0RowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotIQ4_NLRowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ4_1RowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ5_1RowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ4_KRowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ5_KRowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ6_KRowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
