package cpu

import (
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// The product of a repacked weight (repack.go) with F32 activations: the
// activations are quantized to Q8_0 once per operation, each block's scale
// (as a float) and eight times the sum of its quants are kept beside them
// (the aux rows: the unsigned-nibble kernels subtract the Q4_0 offset of 8
// through that sum), and each group of eight weight rows meets four
// columns at a time, the rows in the lanes of the accumulators.

// repackKernel computes groups of rows against activation columns:
// one(nb, x, y, aux, out) sets out[0..rows) for one column (y its Q8_0
// row, aux its aux row), four does so for four columns and must give each
// column exactly one's bits, so the result does not depend on how the
// columns were grouped. four may be nil. tile, where a kernel set has it,
// does the work of both over several groups in one call (repackTile);
// tiles makes it from one and four otherwise.
type repackKernel struct {
	one  func(nb int, x, y, aux []byte, out []float32)
	four func(nb int, x []byte, y, aux *[4][]byte, out *[4][]float32)
	tile repackTile
}

// repackTile sets, for columns c < ncols (1 to 4) and the ngroups groups
// of rows laid one after the other in x (nb blocks each), out[c][rows*g+r]
// to row r of group g times column c; every column gets the bits one
// gives it, whatever ncols and ngroups.
type repackTile func(ncols, nb, ngroups int, x []byte, y, aux *[4][]byte, out *[4][]float32)

// tiles returns k's tile kernel, or one built from one and four.
func (k *repackKernel) tiles() repackTile {
	if k.tile != nil {
		return k.tile
	}
	return func(ncols, nb, ngroups int, x []byte, y, aux *[4][]byte, out *[4][]float32) {
		gsize, rows := len(x)/ngroups, len(out[0])/ngroups
		var o [4][]float32
		for g := range ngroups {
			xg := x[g*gsize : (g+1)*gsize]
			if ncols == 4 && k.four != nil {
				for c := range 4 {
					o[c] = out[c][g*rows : (g+1)*rows]
				}
				k.four(nb, xg, y, aux, &o)
				continue
			}
			for c := range ncols {
				k.one(nb, xg, y[c], aux[c], out[c][g*rows:(g+1)*rows])
			}
		}
	}
}

// genericRepack are the kernels of the generic kernel set.
var genericRepack = map[quant.Type]*repackKernel{
	quant.Q4_0:   {one: gemvQ4_0x8},
	quant.Q8_0:   {one: gemvQ8_0x8},
	quant.IQ4_NL: {one: gemvIQ4_NLx8},
}

// repackKernelFor is ks's repacked kernel of typ; a type ks lacks uses
// the generic one.
func repackKernelFor(ks *kernelSet, typ quant.Type) *repackKernel {
	if k := ks.repack[typ]; k != nil {
		return k
	}
	return genericRepack[typ]
}

// actAux is an activation type and the aux entries the kernels read
// beside its rows: size bytes per block of block elements, written by
// fill(aux, y, nb) for the row y of nb blocks, or by a level's aux entry
// of the type (the same bytes).
type actAux struct {
	vdt         quant.Type
	block, size int
	fill        func(aux, y []byte, nb int)
}

// filler is ax's fill for kernel set ks.
func (ax *actAux) filler(ks *kernelSet) func(aux, y []byte, nb int) {
	if f := ks.aux[ax.vdt]; f != nil {
		return f
	}
	return ax.fill
}

// q8_0Aux: float32 dy, int32 8*sum of the quants per block.
var q8_0Aux = &actAux{vdt: quant.Q8_0, block: 32, size: 8, fill: fillAux}

// supportsRepackedMulMat: a repacked 2-D src0 (not a view) against F32
// src1, as ggml's CPU_REPACK takes MUL_MAT.
func supportsRepackedMulMat(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	_, err := layoutFor(a)
	return err == nil && a.Ne[2] == 1 && a.Ne[3] == 1 && b.Type == quant.F32 && !isHadamard(t)
}

// repackedWorkSize is the scratch of a repacked product: the converted
// activations, then their aux rows, then the threads' tile counter.
func repackedWorkSize(t *graph.Tensor) int {
	return counterOffset(t) + counterBytes
}

// counterOffset is where a repacked product's tile counter lies in its
// scratch, counterBytes from there holding an aligned int64 wherever the
// scratch starts.
func counterOffset(t *graph.Tensor) int {
	b := t.Src[1]
	ax := repackLayouts[t.Src[0].Type].aux
	return auxOffset(b, ax) + int(b.NRows()*(b.Ne[0]/int64(ax.block))*int64(ax.size))
}

const counterBytes = 16

// tileCounter is the int64 at off in work (counterBytes long), aligned.
func tileCounter(work []byte, off int) *atomic.Int64 {
	c := work[off : off+counterBytes]
	skip := (8 - uintptr(unsafe.Pointer(unsafe.SliceData(c)))%8) % 8
	return (*atomic.Int64)(unsafe.Pointer(&c[skip]))
}

func auxOffset(src1 *graph.Tensor, ax *actAux) int { return (conversionSize(src1, ax.vdt) + 63) &^ 63 }

// computeRepackedMulMat computes thread p's share of MUL_MAT t whose src0
// is the repacked weight rp.
func computeRepackedMulMat(p *Params, t *graph.Tensor, rp *repacked) {
	gsize := uint64(rp.layout.rows) * t.Src[0].Nb[1]
	groupedProduct(p, t, repackKernelFor(p.kernels(), t.Src[0].Type), rp.layout, func(g0, g1 int64, _ *groupScratch) []byte {
		return rp.data[uint64(g0)*gsize : uint64(g1)*gsize]
	})
}

// packOnTheFly reports whether MUL_MAT t of plain weights goes through
// the repacked kernels, its groups of rows interleaved as the product
// reaches them: on a set with repacked kernels of the weight's type and
// an interleave of its plain weights (the level's pack: amd64's has no
// Q8_0, whose products there keep the vec_dot order, ggml haswell's), for
// a 2-D weight of a type with a layout, against at least gemmMinCols F32
// columns, where decoding each block once for eight rows and four columns
// pays for the interleave many times over.
func packOnTheFly(ks *kernelSet, t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return packableMulMat(t) && ks.repack[a.Type] != nil && ks.pack[a.Type] != nil && b.NRows() >= gemmMinCols
}

// packableMulMat reports whether MUL_MAT t is of a shape packOnTheFly
// takes, whatever the kernel set (the work size cannot know it).
func packableMulMat(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return repackLayouts[a.Type] != nil && a.Ne[2] == 1 && a.Ne[3] == 1 && b.Type == quant.F32 && !isHadamard(t) &&
		b.NRows() >= gemmMinCols && a.Nb[1] == uint64(a.RowSize())
}

// computePackedMulMat is computeRepackedMulMat for a plain weight: each
// thread interleaves a tile of groups of rows at a time into memory of its
// own, the last group padded with zero rows.
func computePackedMulMat(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	l := repackLayouts[a.Type]
	rs := uint64(a.Nb[1])
	gsize := uint64(l.rows) * rs
	ks := p.kernels()
	pack := l.pack
	if f := ks.pack[a.Type]; f != nil {
		pack = f
	}
	groupedProduct(p, t, repackKernelFor(ks, a.Type), l, func(g0, g1 int64, s *groupScratch) []byte {
		packed := grow(&s.packed, int(uint64(g1-g0)*l.groupSize(gsize)))
		for g := g0; g < g1; g++ {
			lo := uint64(g) * gsize
			src := a.Data[lo:min(lo+gsize, uint64(len(a.Data)))]
			if uint64(len(src)) < gsize {
				pad := grow(&s.pad, int(gsize))
				clear(pad)
				copy(pad, src)
				src = pad
			}
			pack(packed[uint64(g-g0)*l.groupSize(gsize):], src, int(rs))
		}
		return packed
	})
}

// repackTileBytes is the most interleaved weight bytes one tile of
// groups holds: each tile meets every column of the thread's share in
// turn, so its groups are read from cache (a share of a core's L2) once
// per four columns, and the columns from memory once per tile.
const repackTileBytes = 192 << 10

// groupScratch is the memory one groupedProduct call works in, kept
// across calls so that a product allocates nothing.
type groupScratch struct {
	cols        []repackCol
	packed, pad []byte
	spare       [4][]float32
	// The operands of a tile call, here since the call (through a
	// function value) would otherwise move them to the heap each time.
	ys, auxs [4][]byte
	outs     [4][]float32
}

// repackCol is an output column of a grouped product.
type repackCol struct {
	y, aux []byte
	dst    uint64
	ok     bool
}

var groupScratches = sync.Pool{New: func() any { return new(groupScratch) }}

// grow returns (*b)[:n], reallocated when shorter.
func grow[T any](b *[]T, n int) []T {
	if cap(*b) < n {
		*b = make([]T, n)
	}
	return (*b)[:n]
}

// groupedProduct computes thread p's share of MUL_MAT t (src0 2-D, src1
// F32) with k, over the groups of rows group(g0, g1) returns interleaved
// (groups g0 to g1 one after the other, the last one of src0 possibly
// partial), in tiles of groups against runs of up to four columns.
func groupedProduct(p *Params, t *graph.Tensor, k *repackKernel, l *repackLayout, group func(g0, g1 int64, s *groupScratch) []byte) {
	a, b := t.Src[0], t.Src[1]
	rows, ax := l.rows, l.aux
	act := prepareActivations(p, b, ax.vdt)
	nb := int(a.Ne[0]) / ax.block
	auxRow := nb * ax.size
	aux := p.Work[auxOffset(b, ax):]
	fill := ax.filler(p.kernels())
	next := tileCounter(p.Work, counterOffset(t))
	if p.Ith == 0 {
		next.Store(0) // read only after the barrier below
	}
	lo, hi := p.Rows(b.NRows())
	for r := lo; r < hi; r++ {
		y, _ := act.row(r%b.Ne[1], r/b.Ne[1]%b.Ne[2], r/(b.Ne[1]*b.Ne[2]))
		fill(aux[int(r)*auxRow:int(r+1)*auxRow], y, nb)
	}
	p.Barrier()

	s := groupScratches.Get().(*groupScratch)
	defer groupScratches.Put(s)
	ne1, ne2 := t.Ne[1], t.Ne[2]
	ncols := ne1 * ne2 * t.Ne[3]
	ngroups := (a.Ne[1] + int64(rows) - 1) / int64(rows)
	full := a.Ne[1] / int64(rows) // groups with all their rows
	lo0, hi0, lo1, hi1 := splitProduct(p, ngroups, ncols)
	cols := grow(&s.cols, int(hi1-lo1))
	for i := range cols {
		ir1 := lo1 + int64(i)
		i1, i2, i3 := ir1%ne1, ir1/ne1%ne2, ir1/(ne1*ne2)
		y, ok := act.row(i1, i2, i3)
		r := act.index(i1, i2, i3)
		cols[i] = repackCol{y: y, aux: aux[int(r)*auxRow : int(r+1)*auxRow], dst: offset(t, 0, i1, i2, i3), ok: ok}
	}
	if len(cols) == 0 {
		return // a share of no columns (one column, two threads)
	}
	tile := k.tiles()
	gsize := l.groupSize(uint64(rows) * a.Nb[1])
	step := max(1, int64(repackTileBytes/gsize))
	ys, auxs, outs := &s.ys, &s.auxs, &s.outs
	// dstRows is column c's n outputs from row r.
	dstRows := func(c *repackCol, r int64, n int) []float32 {
		off := c.dst + 4*uint64(r)
		return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(t.Data[off:off+4*uint64(n)]))), n)
	}
	// run computes groups [g0, g1) of x for every column, of whose last
	// group valid rows are src0's: the rest of a partial group goes to
	// scratch, its valid rows copied out.
	run := func(x []byte, g0, g1 int64, valid int) {
		n, r0 := int(g1-g0), g0*int64(rows)
		whole := valid == rows
		count := (n-1)*rows + valid
		for i := 0; i < len(cols); {
			if !cols[i].ok {
				o := dstRows(&cols[i], r0, count)
				for j := range o {
					o[j] = float32(math.NaN())
				}
				i++
				continue
			}
			m := 0
			for ; m < 4 && i+m < len(cols) && cols[i+m].ok; m++ {
				c := &cols[i+m]
				ys[m], auxs[m] = c.y, c.aux
				if whole {
					outs[m] = dstRows(c, r0, count)
				} else {
					outs[m] = grow(&s.spare[m], rows)
				}
			}
			tile(m, nb, n, x, ys, auxs, outs)
			if !whole {
				for j := range m {
					copy(dstRows(&cols[i+j], r0, valid), outs[j][:valid])
				}
			}
			i += m
		}
	}
	// tiles runs groups [g0, g1) in tiles of step groups, the partial
	// group on its own.
	tiles := func(g0, g1 int64) {
		for g := g0; g < min(g1, full); g += step {
			e := min(g+step, g1, full)
			run(group(g, e, s), g, e, rows)
		}
		if g0 <= full && full < g1 {
			run(group(full, full+1, s), full, full+1, int(a.Ne[1]-full*int64(rows)))
		}
	}
	if p.Nth > 1 && hi1-lo1 == ncols {
		// The threads share the groups: each takes the next tile as it
		// finishes one (ggml's chunks), so a thread the machine holds
		// back does not keep the others waiting at the end. About four
		// tiles a thread at least.
		chunk := max(1, min(step, (ngroups+4*int64(p.Nth)-1)/(4*int64(p.Nth))))
		for {
			g0 := next.Add(chunk) - chunk
			if g0 >= ngroups {
				return
			}
			tiles(g0, min(g0+chunk, ngroups))
		}
	}
	tiles(lo0, hi0)
}

// fillAux writes the aux row of the Q8_0 row y of nb blocks.
func fillAux(aux, y []byte, nb int) {
	for b := range nb {
		yb := y[b*34 : b*34+34]
		s := sumInt8x32(yb[2:34])
		binary.LittleEndian.PutUint32(aux[b*8:], math.Float32bits(quant.FP16ToFP32(binary.LittleEndian.Uint16(yb))))
		binary.LittleEndian.PutUint32(aux[b*8+4:], uint32(8*s))
	}
}

// sumInt8x32 is the sum of 32 int8 values, eight at a time: each byte
// biased by 128 (x^0x80) to 0..255, pairs added into 16-bit lanes (at most
// 4*510 after four words), the lanes summed by one multiply, the bias
// taken off. Exact; a byte at a time was most of fillAux's time.
func sumInt8x32(q []byte) int32 {
	const bias, lo = 0x8080808080808080, 0x00ff00ff00ff00ff
	_ = q[31]
	var w uint64
	for i := 0; i < 32; i += 8 {
		x := binary.LittleEndian.Uint64(q[i:]) ^ bias
		w += x&lo + x>>8&lo
	}
	return int32(w*0x0001000100010001>>48) - 32*128
}
