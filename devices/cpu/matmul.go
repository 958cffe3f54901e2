package cpu

import (
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Matrix products. MUL_MAT and MUL_MAT_ID follow ggml's CPU backend: src1's
// rows are first converted to the vec_dot type of src0 (Q8_0 for Q4_0, Q8_K
// for the K-quants, F16 for F16, ...) into the scratch memory, the threads
// meet at a barrier, and then each output element is one vec_dot of a row
// of src0 with a converted row of src1. Every element is computed by exactly
// one call whatever the thread count, so results do not depend on it.
// Products of four columns or more on the fast kernel set go through
// register tiles instead (gemm.go; F32's exactly where ggml hands the
// product to llamafile's sgemm, from two columns; the K-quants' and, on
// the avx512vnni level, Q8_0's from eight columns, on packed rows, each
// output the vec_dot's bits, which for Q8_0 are also those of ggml's
// tinyBLAS_Q0_AVX) or through the interleaved layouts of eight rows
// (gemm_repack.go: Q4_0, IQ4_NL, and Q8_0 but on amd64, the weight
// interleaved as the product reaches it, in an order of summation of their
// own), and
// with the amx level those of 16 or more through its tiles
// (level_amx_linux_amd64.go); weights stored repacked (repack.go) take the
// interleaved kernels too. All keep the same rule: an element's bits do
// not depend on the threads or on which columns were grouped.

// dstOrdered reports whether a product's F32 result is neither transposed
// nor permuted, as ggml's MUL_MAT and MUL_MAT_ID kernels assert.
func dstOrdered(t *graph.Tensor) bool {
	return t.Nb[0] == 4 && t.Nb[0] <= t.Nb[1] && t.Nb[1] <= t.Nb[2] && t.Nb[2] <= t.Nb[3]
}

// batchBroadcast reports whether a's dimensions 2 and 3 divide b's.
func batchBroadcast(a, b *graph.Tensor) bool {
	return a.Ne[2] > 0 && a.Ne[3] > 0 && b.Ne[2]%a.Ne[2] == 0 && b.Ne[3]%a.Ne[3] == 0
}

// canDot reports whether rows of a (src0) can be multiplied with rows of
// type b (src1) of a product: a has a vec_dot, and b is either F32, to be
// converted, or already a's vec_dot type.
func canDot(a *graph.Tensor, b quant.Type) bool {
	vdt := a.Type.VecDotType()
	return quant.DotKernel(a.Type) != nil && (b == quant.F32 || b == vdt) && vdt.RowSize(a.Ne[0]) >= 0
}

// activations are src1's rows in the vec_dot type: src1's own memory when
// it already has that type, else the rows converted densely into scratch.
type activations struct {
	data    []byte
	nb      [graph.MaxDims]uint64
	rowSize uint64
	// bad flags each converted row whose source held NaN or infinity,
	// which the quantized vec_dot types cannot represent: every product
	// with such a row is NaN. It is nil when nothing was converted.
	bad []byte
	ne1 int64
	ne2 int64
}

// conversionSize is the scratch memory needed to convert src1 to vdt:
// the converted rows (convertedStride apart, after actSkew bytes), then
// one flag byte per row.
func conversionSize(src1 *graph.Tensor, vdt quant.Type) int {
	if src1.Type == vdt {
		return 0
	}
	n := src1.NRows()
	return int(actSkew + n*int64(convertedStride(vdt, src1.Ne[0])) + n)
}

// Converted rows are placed so that their addresses do not share their
// low 12 bits with one another or with a page-aligned weight row: loads
// from such 4 KiB-aliased streams measured 3x slower (F32 rows of 4096,
// AMD EPYC), and F32 and F16 rows of 1024 or more elements are whole pages.
const (
	actSkew = 2048 + 64 // the first row's offset
	actPad  = 64        // added to a row stride that is a multiple of 4 KiB
)

// convertedStride is the distance between rows of ne0 elements converted
// to vdt.
func convertedStride(vdt quant.Type, ne0 int64) uint64 {
	rs := uint64(vdt.RowSize(ne0))
	if rs%4096 == 0 {
		rs += actPad
	}
	return rs
}

// prepareActivations converts thread p's share of src1's rows to vdt in
// p.Work (laid out as conversionSize says) and waits for the other threads,
// or returns src1 itself when it already has the type. A single row (a
// decode step's product) each thread converts alone into memory of its
// own, without the barrier: converting a row costs less than the wait,
// and a thread that is late or off the processor then holds up nothing
// (the caller runs the share it has not claimed).
func prepareActivations(p *Params, src1 *graph.Tensor, vdt quant.Type) activations {
	if src1.Type == vdt {
		return activations{data: src1.Data, nb: src1.Nb, rowSize: src1.RowSize()}
	}
	rs := uint64(vdt.RowSize(src1.Ne[0]))
	st := convertedStride(vdt, src1.Ne[0])
	n := uint64(src1.NRows())
	end := actSkew + n*st
	work, alone := p.Work, n == 1 && p.Nth > 1
	if alone {
		work = p.ownScratch(conversionSize(src1, vdt))
	}
	act := activations{
		data:    work[actSkew:end],
		bad:     work[end : end+n],
		rowSize: rs,
		ne1:     src1.Ne[1],
		ne2:     src1.Ne[2],
	}
	act.nb = [graph.MaxDims]uint64{uint64(vdt.TypeSize()), st, st * uint64(src1.Ne[1]), st * uint64(src1.Ne[1]*src1.Ne[2])}
	var x []float32
	if !viewsF32Rows(src1) {
		x = make([]float32, src1.Ne[0])
	}
	fromFloat := p.kernels().traits[vdt].fromFloat
	convert := func(i1, i2, i3 int64) {
		r := act.index(i1, i2, i3)
		err := fromFloat(act.data[uint64(r)*st:uint64(r)*st+rs], rowF32(src1, i1, i2, i3, x))
		act.bad[r] = 0
		if err != nil {
			if !errors.Is(err, quant.ErrNonFinite) {
				panic(err)
			}
			act.bad[r] = 1
		}
	}
	if alone {
		convert(0, 0, 0)
		return act
	}
	forRows(p, src1, convert)
	p.Barrier()
	return act
}

// index is the position of converted row (i1, i2, i3).
func (a *activations) index(i1, i2, i3 int64) int64 { return i1 + a.ne1*(i2+a.ne2*i3) }

// row returns activation row (i1, i2, i3) and whether it is finite.
func (a *activations) row(i1, i2, i3 int64) ([]byte, bool) {
	off := uint64(i1)*a.nb[1] + uint64(i2)*a.nb[2] + uint64(i3)*a.nb[3]
	y := a.data[off : off+a.rowSize : off+a.rowSize]
	return y, a.bad == nil || a.bad[a.index(i1, i2, i3)] == 0
}

// column is what output column ir1 of a product needs: the activation row,
// the byte offset of the src0 matrix it meets, and where its first output
// element goes. ok is false when the column's result is NaN (non-finite
// activations, or an expert id out of range).
type column struct {
	y   []byte
	x0  uint64
	dst uint64
	ok  bool
}

// productTile is the number of src0 rows walked together: ggml's block
// size for a product's output.
const productTile = 16

// Columns are walked in tiles of as many activation rows as fit in
// colTileBytes (a share of a core's L2), at least 4 and at most
// maxColTile, so that each tile of src0 rows is read from memory once per
// column tile and then reused from cache by every column in it.
const (
	colTileBytes = 256 << 10
	maxColTile   = 64
)

// colTile is the column tile for activation rows of rowBytes bytes.
func colTile(rowBytes uint64) int64 {
	return int64(min(maxColTile, max(4, colTileBytes/max(rowBytes, 1)&^3)))
}

// product computes out[ir0, ir1] = dot(row ir0 of the src0 matrix of
// column ir1, activation row of column ir1) for ir0 in [lo0, hi0) and ir1
// in [lo1, hi1), in tiles so a block of src0 rows stays in cache. Within a
// tile, four columns that meet the same src0 matrix go through the type's
// vecDot4 when it has one, which reads each src0 row once for all four.
//
// A product of ncols columns in all goes through the type's register
// tiles (gemm.go) where the kernel set has them.
func product(ks *kernelSet, t, src0 *graph.Tensor, lo0, hi0, lo1, hi1, ncols int64, col func(ir1 int64) column) {
	if g := gemmFor(ks, t, src0, ncols); g != nil {
		productGemm(g, ks, t, src0, lo0, hi0, lo1, hi1, col)
		return
	}
	tr := &ks.traits[src0.Type]
	dot, dot4 := tr.vecDot, tr.vecDot4
	k := int(src0.Ne[0])
	rs := src0.RowSize()
	nan := math.Float32bits(float32(math.NaN()))
	ps := productScratches.Get().(*productScratch)
	defer productScratches.Put(ps)
	if hi1-lo1 == 1 && tr.vecDotRows != nil {
		// One column (a product with N = 1, or a thread's share of one
		// split by rows): the whole range in one call, so the kernel
		// can stream long stretches of rows.
		if c := col(lo1); c.ok {
			productRows(tr.vecDotRows, k, t, src0, lo0, hi0, &c, ps.floats(rowsScratch(k)))
			return
		}
	}
	if tr.rowsPrepare {
		productPrepared(tr, k, t, src0, lo0, hi0, lo1, hi1, col, ps)
		return
	}
	var cols [maxColTile]column
	tile := colTile(uint64(tr.vecDotType.RowSize(src0.Ne[0])))
	var scratch []float32
	if dot4 != nil || tr.vecDotRows != nil {
		scratch = ps.floats(max(k/8+1, rowsScratch(k)+productTile))
	}
	for t1 := lo1; t1 < hi1; t1 += tile {
		n1 := min(t1+tile, hi1) - t1
		for i := range n1 {
			cols[i] = col(t1 + i)
		}
		for t0 := lo0; t0 < hi0; t0 += productTile {
			e0 := min(t0+productTile, hi0)
			for i := int64(0); i < n1; {
				if dot4 != nil && i+4 <= n1 && groupable(cols[i:i+4]) {
					productGroup(dot4, k, t, src0, t0, e0, cols[i:i+4], scratch, ps)
					i += 4
					continue
				}
				c := &cols[i]
				if tr.vecDotRows != nil && c.ok {
					productRows(tr.vecDotRows, k, t, src0, t0, e0, c, scratch)
					i++
					continue
				}
				for ir0 := t0; ir0 < e0; ir0++ {
					v := nan
					if c.ok {
						off := c.x0 + uint64(ir0)*src0.Nb[1]
						v = math.Float32bits(dot(k, src0.Data[off:off+rs:off+rs], c.y))
					}
					binary.LittleEndian.PutUint32(t.Data[c.dst+4*uint64(ir0):], v)
				}
				i++
			}
		}
	}
}

// groupable reports whether four columns can share one vecDot4: all have
// finite activations and meet the same src0 matrix.
func groupable(cs []column) bool {
	for _, c := range cs {
		if !c.ok || c.x0 != cs[0].x0 {
			return false
		}
	}
	return true
}

// productScratch is the memory one product call works in, kept across
// calls so that a product allocates nothing: a graph of small products
// otherwise keeps the garbage collector busy.
type productScratch struct {
	f   []float32
	out [4 * productTile]float32
	y   [4][]byte
}

var productScratches = sync.Pool{New: func() any { return new(productScratch) }}

// floats returns n float32s of scratch (not cleared).
func (ps *productScratch) floats(n int) []float32 {
	if cap(ps.f) < n {
		ps.f = make([]float32, n)
	}
	return ps.f[:n]
}

// productGroup computes rows [lo0, hi0) of four columns with vecDot4.
func productGroup(dot4 func(int, []byte, uint64, int, *[4][]byte, []float32, []float32), k int, t, src0 *graph.Tensor, lo0, hi0 int64, cs []column, scratch []float32, ps *productScratch) {
	out := &ps.out
	n := int(hi0 - lo0)
	first := cs[0].x0 + uint64(lo0)*src0.Nb[1]
	end := cs[0].x0 + uint64(hi0-1)*src0.Nb[1] + src0.RowSize()
	ps.y = [4][]byte{cs[0].y, cs[1].y, cs[2].y, cs[3].y}
	dot4(k, src0.Data[first:end:end], src0.Nb[1], n, &ps.y, scratch, out[:4*n])
	for r := range n {
		ir0 := uint64(lo0) + uint64(r)
		for c := range cs {
			binary.LittleEndian.PutUint32(t.Data[cs[c].dst+4*ir0:], math.Float32bits(out[4*r+c]))
		}
	}
}

// productRows computes rows [lo0, hi0) of one column with vecDotRows,
// straight into the column's output (as the register tiles write theirs):
// a copy through scratch cost Gemma 3's 262,144-row output product 3% of
// a decode step. scratch holds at least rowsScratch(k) floats.
func productRows(rows func(int, []byte, uint64, int, []byte, []float32, []float32), k int, t, src0 *graph.Tensor, lo0, hi0 int64, c *column, scratch []float32) {
	n := int(hi0 - lo0)
	off := c.dst + 4*uint64(lo0)
	out := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(t.Data[off:off+4*uint64(n)]))), n)
	first := c.x0 + uint64(lo0)*src0.Nb[1]
	end := c.x0 + uint64(hi0-1)*src0.Nb[1] + src0.RowSize()
	rows(k, src0.Data[first:end:end], src0.Nb[1], n, c.y, scratch, out)
}

// splitProduct gives thread p its share of an n0 x n1 output: ggml's plan
// for too few chunks, which splits the longer side among the threads.
func splitProduct(p *Params, n0, n1 int64) (lo0, hi0, lo1, hi1 int64) {
	if n0 > n1 {
		lo0, hi0 = p.Rows(n0)
		return lo0, hi0, 0, n1
	}
	lo1, hi1 = p.Rows(n1)
	return 0, n0, lo1, hi1
}

// isHadamard reports whether MUL_MAT t carries the hint that src0 is a
// Hadamard matrix, which makes ggml's CPU backend take its FWHT path.
func isHadamard(t *graph.Tensor) bool {
	return ops.MulMatParamsOf(t.Params).Hint == ops.HintSrc0IsHadamard
}

// supportsMulMat: src0 of any type with a vec_dot, src1 F32 or src0's
// vec_dot type, dense rows, src0 broadcast over src1's batch dimensions,
// any strides between rows. With the Hadamard hint, the FWHT of F32 rows
// whose length is a power of two.
func supportsMulMat(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || t.Type != quant.F32 ||
		t.Ne != [graph.MaxDims]int64{a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]} ||
		a.Ne[0] != b.Ne[0] || !batchBroadcast(a, b) || !dstOrdered(t) {
		return false
	}
	if isHadamard(t) {
		n := b.Ne[0]
		return b.Type == quant.F32 && rowsPacked(b) && n&(n-1) == 0 && a.Ne[1] == n
	}
	if inRepackBuffer(a) && !supportsRepackedMulMat(t) {
		return false
	}
	return canDot(a, b.Type) && rowsPacked(a) && rowsPacked(b)
}

func mulMatWorkSize(t *graph.Tensor, _ int) int {
	if isHadamard(t) {
		return 0
	}
	if inRepackBuffer(t.Src[0]) || packableMulMat(t) {
		return repackedWorkSize(t)
	}
	return conversionSize(t.Src[1], t.Src[0].Type.VecDotType())
}

func computeMulMat(p *Params, t *graph.Tensor) {
	if isHadamard(t) {
		computeFWHT(p, t)
		return
	}
	a, b := t.Src[0], t.Src[1]
	if rp, ok := repackedOf(a); ok {
		computeRepackedMulMat(p, t, rp)
		return
	}
	if tm := p.kernels().tileMulMat; tm != nil && tm(p, t) {
		return
	}
	if packOnTheFly(p.kernels(), t) {
		computePackedMulMat(p, t)
		return
	}
	act := prepareActivations(p, b, a.Type.VecDotType())
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	ne1, ne2 := t.Ne[1], t.Ne[2]
	lo0, hi0, lo1, hi1 := splitProduct(p, t.Ne[0], ne1*ne2*t.Ne[3])
	product(p.kernels(), t, a, lo0, hi0, lo1, hi1, ne1*ne2*t.Ne[3], func(ir1 int64) column {
		i1, i2, i3 := ir1%ne1, ir1/ne1%ne2, ir1/(ne1*ne2)
		y, ok := act.row(i1, i2, i3)
		return column{
			y:   y,
			x0:  uint64(i2/r2)*a.Nb[2] + uint64(i3/r3)*a.Nb[3],
			dst: offset(t, 0, i1, i2, i3),
			ok:  ok,
		}
	})
}

// computeFWHT is ggml's shortcut for a MUL_MAT whose src0 is hinted to be
// the scaled Sylvester-Hadamard matrix: each row of src1 is scaled by
// 1/sqrt(n) and transformed in place with the butterflies of the fast
// Walsh-Hadamard transform, in float32, never reading src0.
func computeFWHT(p *Params, t *graph.Tensor) {
	b := t.Src[1]
	n := int(b.Ne[0])
	scale := 1 / float32(math.Sqrt(float64(n)))
	x := make([]float32, n)
	forRows(p, b, func(i1, i2, i3 int64) {
		loadRow(b, i1, i2, i3, x)
		for j := range x {
			x[j] *= scale
		}
		for h := 1; h < n; h <<= 1 {
			for i := 0; i < n; i += 2 * h {
				for j := i; j < i+h; j++ {
					u, v := x[j], x[j+h]
					x[j], x[j+h] = u+v, u-v
				}
			}
		}
		storeRow(t, i1, i2, i3, x)
	})
}

// supportsMulMatID: the types and layouts of supportsMulMat, with src0 a
// stack of expert matrices and I32 expert ids of any strides.
func supportsMulMatID(t *graph.Tensor) bool {
	as, b, ids := t.Src[0], t.Src[1], t.Src[2]
	if as == nil || b == nil || ids == nil || t.Type != quant.F32 || ids.Type != quant.I32 ||
		t.Ne != [graph.MaxDims]int64{as.Ne[1], ids.Ne[0], b.Ne[2], 1} ||
		as.Ne[0] != b.Ne[0] || as.Ne[3] != 1 || b.Ne[3] != 1 ||
		ids.Ne[1] != b.Ne[2] || ids.Ne[2] != 1 || ids.Ne[3] != 1 ||
		b.Ne[1] == 0 || ids.Ne[0]%b.Ne[1] != 0 {
		return false
	}
	return canDot(as, b.Type) && rowsPacked(as) && rowsPacked(b) && dstOrdered(t)
}

func mulMatIDWorkSize(t *graph.Tensor, _ int) int {
	return conversionSize(t.Src[1], t.Src[0].Type.VecDotType())
}

// computeMulMatID: output column (e, tok) is expert ids[e, tok]'s matrix
// times activation row (e mod n_b, tok). An id outside the experts (ggml
// reads out of bounds) gives a NaN column.
func computeMulMatID(p *Params, t *graph.Tensor) {
	as, b, ids := t.Src[0], t.Src[1], t.Src[2]
	act := prepareActivations(p, b, as.Type.VecDotType())
	nUsed := ids.Ne[0]
	lo0, hi0, lo1, hi1 := splitProduct(p, t.Ne[0], nUsed*ids.Ne[1])
	product(p.kernels(), t, as, lo0, hi0, lo1, hi1, nUsed*ids.Ne[1], func(ir1 int64) column {
		e, tok := ir1%nUsed, ir1/nUsed
		expert := int64(getI32(ids.Data, offset(ids, e, tok, 0, 0)))
		y, ok := act.row(e%b.Ne[1], tok, 0)
		ok = ok && expert >= 0 && expert < as.Ne[2]
		return column{
			y:   y,
			x0:  uint64(max(expert, 0)) * as.Nb[2],
			dst: offset(t, 0, e, tok, 0),
			ok:  ok,
		}
	})
}

// outProdSrc0 reports whether ggml's CPU OUT_PROD has a kernel for src0 of
// type typ: F32, F16, and the quantized types with a to_float.
func outProdSrc0(typ quant.Type) bool {
	return typ == quant.F32 || typ == quant.F16 || hasToFloat(typ)
}

// supportsOutProd: F32 src1 of any strides; src0 F32 broadcast over the
// batch dimensions, or F16 or quantized with the same batch dimensions as
// src1 (ggml's only kernels), with dense rows.
func supportsOutProd(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || t.Type != quant.F32 || b.Type != quant.F32 ||
		t.Ne != [graph.MaxDims]int64{a.Ne[0], b.Ne[0], b.Ne[2], b.Ne[3]} ||
		a.Ne[1] != b.Ne[1] || !batchBroadcast(a, b) || t.Nb[0] != 4 || !rowsPacked(a) ||
		!outProdSrc0(a.Type) {
		return false
	}
	return a.Type == quant.F32 || a.Ne[2] == b.Ne[2] && a.Ne[3] == b.Ne[3]
}

// computeOutProd: dst[:, i1, i2, i3] = sum over j of row j of src0's matrix
// (converted to float) times src1[i1, j, i2, i3], accumulated in float32 in
// order of j, as ggml's vec_mad loops.
func computeOutProd(p *Params, t *graph.Tensor) {
	a, b := t.Src[0], t.Src[1]
	d2, d3 := t.Ne[2]/a.Ne[2], t.Ne[3]/a.Ne[3]
	rs := a.RowSize()
	x := make([]float32, a.Ne[0])
	acc := make([]float32, a.Ne[0])
	forRows(p, t, func(i1, i2, i3 int64) {
		clear(acc)
		for j := range a.Ne[1] {
			off := offset(a, 0, j, i2/d2, i3/d3)
			if err := quant.DequantizeInto(x, a.Type, a.Data[off:off+rs]); err != nil {
				panic(err)
			}
			s := getF(quant.F32, b.Data, offset(b, i1, j, i2, i3))
			for i, v := range x {
				acc[i] += float32(v * s)
			}
		}
		storeRow(t, i1, i2, i3, acc)
	})
}
