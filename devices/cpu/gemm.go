package cpu

import (
	"math"
	"sync"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// Register-tiled products of plain weights (ggml's llamafile sgemm
// plays this part): a few weight rows by four activation columns per
// step, each pair in its own vector accumulator, so that each load feeds
// several products and the product is bound by arithmetic rather than by
// loads. The edge kernels (the rows by one column, one by one) run the
// same sequence for each pair, so every output has the same bits whichever
// kernel computed it. A product takes this path when it has at least
// gemmMinCols columns in all (a per-operation choice: the threads' shares
// do not change it) and its rows are whole steps; narrower products keep
// the vec_dot kernels, which suit a memory-bound product better.
//
// tile(steps, x, stride, y, out) sets, for rows r < rows of x (stride
// bytes apart) and columns c < 4, the float at out[c]+4r to the product of
// row r with the activation row y[c] over steps steps; tileCol does so for
// one column, one for one row and one column. With pack set, pack.tile
// takes tile's place. With exact set every output is also bit for bit the
// type's vec_dot.
//
// With sgemmCols set the tiles are instead llamafile sgemm's order of
// summation (one vector accumulator per output over whole steps, then
// its horizontal sum), and the type's vec_dot is ggml_vec_dot_f32's: the
// product takes the tiles exactly where ggml's CPU backend gives it to
// llamafile_sgemm, so that each output has ggml's bits (sgemmTakes).
type plainGemm struct {
	step      int // elements per step; rows must be whole steps
	rows      int // rows of a tile
	exact     bool
	sgemmCols int64 // the fewest columns per matrix llamafile_sgemm takes, or 0
	pack      *gemmPack
	tile      func(steps int, x unsafe.Pointer, stride uintptr, y, out *[4]unsafe.Pointer)
	tileCol   func(steps int, x unsafe.Pointer, stride uintptr, y, out unsafe.Pointer)
	one       func(steps int, x, y, out unsafe.Pointer)
}

// gemmPack rewrites weight rows and activation columns into the layouts
// its tile kernel reads: rows packs nrows rows of steps steps (stride
// bytes apart) to rowBytes(steps) bytes each, one after the other (a
// layout may interleave a few rows' blocks in their bytes); col packs an
// activation row into colBytes(steps) bytes (nil: the row's own size);
// tile is plainGemm's tile over nrows packed rows (a multiple of the
// tile's rows, stride bytes apart) and four packed columns, in one call. Each row is packed once per
// tile of rows and columns, each column once per tile of columns, and
// both are then read many times.
type gemmPack struct {
	rowBytes func(steps int) int
	colBytes func(steps int) int
	rows     func(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)
	col      func(dst, src unsafe.Pointer, steps int)
	tile     func(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)
}

// gemmScratch is the packed rows and columns of a productGemm call, kept
// across calls so that a product allocates nothing.
type gemmScratch struct{ rows, cols []byte }

var gemmScratches = sync.Pool{New: func() any { return new(gemmScratch) }}

// gemmMinCols is the fewest columns a product takes the tiles with, and
// packMinCols the fewest it takes packed tiles with: a packed row must
// serve two groups of four columns to pay for its packing (4096x4096, one
// thread, the best of eight rounds: Q4_K at 4 columns 2.21 ms packed
// against 1.71 through vec_dot, even at 8, 9.3 against 12.7 at 32; Q6_K
// 2.32 against 2.02 at 4, 3.73 against 4.57 at 8). gemmRowTiles tiles of
// rows are walked against every column of a column tile before the next
// rows.
const (
	gemmMinCols  = 4
	packMinCols  = 8
	gemmRowTiles = 8
)

// gemmFor returns the tiled kernels for product t (MUL_MAT or
// MUL_MAT_ID) of src0 by ncols columns in all computed with ks, or nil.
func gemmFor(ks *kernelSet, t, src0 *graph.Tensor, ncols int64) *plainGemm {
	g := ks.gemm[src0.Type]
	if g == nil || src0.Ne[0]%int64(g.step) != 0 {
		return nil
	}
	if g.sgemmCols > 0 {
		if !sgemmTakes(t, g.sgemmCols) {
			return nil
		}
		return g
	}
	if ncols < gemmMinCols || g.pack != nil && ncols < packMinCols {
		return nil
	}
	return g
}

// sgemmTakes reports whether ggml's CPU backend computes product t
// through llamafile_sgemm (upstream ggml backend, ggml-cpu.c and
// llamafile/sgemm.cpp, 2025), given that its rows are whole steps of the
// kernel: a MUL_MAT (MUL_MAT_ID never goes there) whose src1 is
// contiguous, of at least minCols columns per matrix, with a multiple of
// 4 weight rows (tinyBLAS's tile sizes; it refuses other counts).
func sgemmTakes(t *graph.Tensor, minCols int64) bool {
	return t.Op == ops.MulMat && t.Src[1].IsContiguous() && t.Src[1].Ne[1] >= minCols && t.Src[0].Ne[1]%4 == 0
}

// productGemm is product (same arguments) through g's tiles.
func productGemm(g *plainGemm, ks *kernelSet, t, src0 *graph.Tensor, lo0, hi0, lo1, hi1 int64, col func(ir1 int64) column) {
	steps := int(src0.Ne[0]) / g.step
	rows := int64(g.rows)
	rowTile := gemmRowTiles * rows
	rs, nb1 := src0.RowSize(), src0.Nb[1]
	yrs := int(ks.traits[src0.Type].vecDotType.RowSize(src0.Ne[0]))
	tile := colTile(uint64(yrs))
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
	// The tile's rows: src0's, or packed (prows, pbytes apart, from row
	// t0 of the matrix at x0).
	var prows, pcols []byte
	var pbytes int
	cbytes := yrs // a packed column
	if g.pack != nil {
		s := gemmScratches.Get().(*gemmScratch)
		defer gemmScratches.Put(s)
		pbytes = g.pack.rowBytes(steps)
		if g.pack.colBytes != nil {
			cbytes = g.pack.colBytes(steps)
		}
		prows, pcols = grow(&s.rows, int(rowTile)*pbytes), grow(&s.cols, int(tile)*cbytes)
	}
	var ys, outs [4]unsafe.Pointer
	for t1 := lo1; t1 < hi1; t1 += tile {
		n1 := min(t1+tile, hi1) - t1
		for i := range n1 {
			cols[i] = col(t1 + i)
			if c := &cols[i]; g.pack != nil && c.ok {
				dst, src := pcols[int(i)*cbytes:int(i+1)*cbytes], c.y[:yrs]
				g.pack.col(unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src)), steps)
			}
		}
		for t0 := lo0; t0 < hi0; t0 += rowTile {
			e0 := min(t0+rowTile, hi0)
			whole := t0 + (e0-t0)/rows*rows // the end of the whole tiles
			packed, packedX0 := false, uint64(0)
			// Each group of columns meets every row of the row tile
			// before the next group: its activations stay in L1, the
			// row tile in L2.
			for i := int64(0); i < n1; {
				n := int64(1)
				c := &cols[i]
				if i+4 <= n1 && groupable(cols[i:i+4]) {
					n = 4
					for j := range 4 {
						ys[j] = unsafe.Pointer(unsafe.SliceData(cols[i+int64(j)].y))
						if g.pack != nil {
							ys[j] = unsafe.Pointer(&pcols[(int(i)+j)*cbytes])
						}
					}
					if g.pack != nil && whole > t0 && (!packed || packedX0 != c.x0) {
						g.pack.rows(unsafe.Pointer(unsafe.SliceData(prows)), rowsAt(c, t0, uint64(whole-t0)), uintptr(nb1), int(whole-t0), steps)
						packed, packedX0 = true, c.x0
					}
				}
				if n == 4 && g.pack != nil && whole > t0 {
					for j := range 4 {
						outs[j] = outAt(&cols[i+int64(j)], t0, uint64(whole-t0))
					}
					g.pack.tile(steps, unsafe.Pointer(unsafe.SliceData(prows[:int(whole-t0)*pbytes])), uintptr(pbytes), int(whole-t0), &ys, &outs)
				}
				for r := t0; r < whole && (n == 1 || g.pack == nil); r += rows {
					switch {
					case n == 4:
						for j := range 4 {
							outs[j] = outAt(&cols[i+int64(j)], r, uint64(rows))
						}
						g.tile(steps, rowsAt(c, r, uint64(rows)), uintptr(nb1), &ys, &outs)
					case c.ok:
						g.tileCol(steps, rowsAt(c, r, uint64(rows)), uintptr(nb1), unsafe.Pointer(unsafe.SliceData(c.y)), outAt(c, r, uint64(rows)))
					default:
						setNaN(c, r, uint64(rows))
					}
				}
				for r := whole; r < e0; r++ {
					for j := i; j < i+n; j++ {
						if c := &cols[j]; c.ok {
							g.one(steps, rowsAt(c, r, 1), unsafe.Pointer(unsafe.SliceData(c.y)), outAt(c, r, 1))
						} else {
							setNaN(c, r, 1)
						}
					}
				}
				i += n
			}
		}
	}
}
