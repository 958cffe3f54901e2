package cpu

import (
	"math"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Register-tiled products of plain weights (ggml's llamafile sgemm
// plays this part): three weight rows by four activation columns per
// step, each pair in its own vector accumulator, so that each load feeds
// several FMAs and the product is bound by arithmetic rather than by
// loads. The edge kernels (three rows by one column, one by one) run the
// same sequence for each pair, so every output has the same bits whichever
// kernel computed it. A product takes this path when it has at least
// gemmMinCols columns in all (a per-operation choice: the threads' shares
// do not change it) and its rows are whole steps; narrower products keep
// the vec_dot kernels, which suit a memory-bound product better.
type plainGemm struct {
	step    int // elements per step; rows must be whole steps
	tile3x4 func(steps int, x unsafe.Pointer, stride uintptr, y, out *[4]unsafe.Pointer)
	tile3x1 func(steps int, x unsafe.Pointer, stride uintptr, y, out unsafe.Pointer)
	one     func(steps int, x, y, out unsafe.Pointer)
}

// archGemm, set by an architecture file, are the tiled kernels of its
// fast kernel set.
var archGemm map[quant.Type]*plainGemm

const (
	gemmMinCols = 4
	gemmRows    = 3
	// gemmRowTile rows are walked against every column of a column tile
	// before the next rows: a multiple of gemmRows.
	gemmRowTile = 8 * gemmRows
)

// gemmFor returns the tiled kernels for a product of src0 by ncols
// columns computed with ks, or nil.
func gemmFor(ks *kernelSet, src0 *graph.Tensor, ncols int64) *plainGemm {
	if ks == genericKernels || ncols < gemmMinCols {
		return nil
	}
	g := archGemm[src0.Type]
	if g == nil || src0.Ne[0]%int64(g.step) != 0 {
		return nil
	}
	return g
}

// productGemm is product (same arguments) through g's tiles.
func productGemm(g *plainGemm, ks *kernelSet, t, src0 *graph.Tensor, lo0, hi0, lo1, hi1 int64, col func(ir1 int64) column) {
	steps := int(src0.Ne[0]) / g.step
	rs, nb1 := src0.RowSize(), src0.Nb[1]
	stride := uintptr(nb1)
	tile := colTile(uint64(ks.traits[src0.Type].vecDotType.RowSize(src0.Ne[0])))
	nan := float32(math.NaN())
	var cols [maxColTile]column
	// rowsAt is the first of n rows from ir0 of column c's matrix, its
	// bounds checked here since the assembly trusts them.
	rowsAt := func(c *column, ir0 int64, n uint64) unsafe.Pointer {
		off := c.x0 + uint64(ir0)*nb1
		return unsafe.Pointer(unsafe.SliceData(src0.Data[off : off+(n-1)*nb1+rs]))
	}
	outAt := func(c *column, ir0 int64, n uint64) unsafe.Pointer {
		off := c.dst + 4*uint64(ir0)
		return unsafe.Pointer(unsafe.SliceData(t.Data[off : off+4*n]))
	}
	setNaN := func(c *column, ir0 int64, n uint64) {
		o := unsafe.Slice((*float32)(outAt(c, ir0, n)), n)
		for i := range o {
			o[i] = nan
		}
	}
	var ys, outs [4]unsafe.Pointer
	for t1 := lo1; t1 < hi1; t1 += tile {
		n1 := min(t1+tile, hi1) - t1
		for i := range n1 {
			cols[i] = col(t1 + i)
		}
		for t0 := lo0; t0 < hi0; t0 += gemmRowTile {
			e0 := min(t0+gemmRowTile, hi0)
			r := t0
			for ; r+gemmRows <= e0; r += gemmRows {
				for i := int64(0); i < n1; {
					if i+4 <= n1 && groupable(cols[i:i+4]) {
						for j := range 4 {
							ys[j], outs[j] = unsafe.Pointer(unsafe.SliceData(cols[i+int64(j)].y)), outAt(&cols[i+int64(j)], r, gemmRows)
						}
						g.tile3x4(steps, rowsAt(&cols[i], r, gemmRows), stride, &ys, &outs)
						i += 4
						continue
					}
					c := &cols[i]
					if c.ok {
						g.tile3x1(steps, rowsAt(c, r, gemmRows), stride, unsafe.Pointer(unsafe.SliceData(c.y)), outAt(c, r, gemmRows))
					} else {
						setNaN(c, r, gemmRows)
					}
					i++
				}
			}
			for ; r < e0; r++ {
				for i := range n1 {
					c := &cols[i]
					if c.ok {
						g.one(steps, rowsAt(c, r, 1), unsafe.Pointer(unsafe.SliceData(c.y)), outAt(c, r, 1))
					} else {
						setNaN(c, r, 1)
					}
				}
			}
		}
	}
}
