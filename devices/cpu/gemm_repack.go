package cpu

import (
	"encoding/binary"
	"math"
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

// repackKernel computes one group of rows against activation columns:
// one(nb, x, y, aux, out) sets out[0..rows) for one column (y its Q8_0
// row, aux its aux row), four does so for four columns and must give each
// column exactly one's bits, so the result does not depend on how the
// columns were grouped. four may be nil.
type repackKernel struct {
	one  func(nb int, x, y, aux []byte, out []float32)
	four func(nb int, x []byte, y, aux *[4][]byte, out *[4][]float32)
}

// genericRepack are the kernels of the generic kernel set.
var genericRepack = map[quant.Type]*repackKernel{
	quant.Q4_0:   {one: gemvQ4_0x8},
	quant.Q8_0:   {one: gemvQ8_0x8},
	quant.IQ4_NL: {one: gemvIQ4_NLx8},
}

// archRepack, set by an architecture file, are the kernels of its fast
// set; a type it lacks uses the generic one. archPack are faster versions
// of the layouts' pack, with the same bytes, for the fast set.
var (
	archRepack map[quant.Type]*repackKernel
	archPack   map[quant.Type]func(dst, src []byte, rs int)
)

func repackKernelFor(ks *kernelSet, typ quant.Type) *repackKernel {
	if ks != genericKernels {
		if k := archRepack[typ]; k != nil {
			return k
		}
	}
	return genericRepack[typ]
}

// actAux is an activation type and the aux entries the kernels read
// beside its rows: size bytes per block of block elements, written by
// fill(aux, y, nb) for the row y of nb blocks.
type actAux struct {
	vdt         quant.Type
	block, size int
	fill        func(aux, y []byte, nb int)
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
// activations, then their aux rows.
func repackedWorkSize(t *graph.Tensor) int {
	b := t.Src[1]
	ax := repackLayouts[t.Src[0].Type].aux
	return auxOffset(b, ax) + int(b.NRows()*(b.Ne[0]/int64(ax.block))*int64(ax.size))
}

func auxOffset(src1 *graph.Tensor, ax *actAux) int { return (conversionSize(src1, ax.vdt) + 63) &^ 63 }

// computeRepackedMulMat computes thread p's share of MUL_MAT t whose src0
// is the repacked weight rp.
func computeRepackedMulMat(p *Params, t *graph.Tensor, rp *repacked) {
	gsize := uint64(rp.layout.rows) * t.Src[0].Nb[1]
	groupedProduct(p, t, repackKernelFor(p.kernels(), t.Src[0].Type), rp.layout, func(g int64) []byte {
		return rp.data[uint64(g)*gsize : uint64(g+1)*gsize]
	})
}

// packOnTheFly reports whether MUL_MAT t of plain weights goes through
// the repacked kernels, its groups of rows interleaved as the product
// reaches them: on the fast set, for a 2-D weight of a type with a
// layout whose kernels are there, against at least gemmMinCols F32
// columns, where decoding each block once for eight rows and four columns
// pays for the interleave many times over.
func packOnTheFly(ks *kernelSet, t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return packableMulMat(t) && ks != genericKernels && archRepack[a.Type] != nil && b.NRows() >= gemmMinCols
}

// packableMulMat reports whether MUL_MAT t is of a shape packOnTheFly
// takes, whatever the kernel set (the work size cannot know it).
func packableMulMat(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return repackLayouts[a.Type] != nil && a.Ne[2] == 1 && a.Ne[3] == 1 && b.Type == quant.F32 && !isHadamard(t) &&
		b.NRows() >= gemmMinCols && a.Nb[1] == uint64(a.RowSize())
}

// computePackedMulMat is computeRepackedMulMat for a plain weight: each
// thread interleaves its groups of rows one at a time into memory of its
// own, the last group padded with zero rows.
func computePackedMulMat(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	l := repackLayouts[a.Type]
	rs := uint64(a.Nb[1])
	gsize := uint64(l.rows) * rs
	packed := make([]byte, l.groupSize(gsize))
	pad := make([]byte, gsize)
	pack := l.pack
	if f := archPack[a.Type]; f != nil {
		pack = f
	}
	groupedProduct(p, t, repackKernelFor(p.kernels(), a.Type), l, func(g int64) []byte {
		lo := uint64(g) * gsize
		src := a.Data[lo:min(lo+gsize, uint64(len(a.Data)))]
		if uint64(len(src)) < gsize {
			clear(pad)
			copy(pad, src)
			src = pad
		}
		pack(packed, src, int(rs))
		return packed
	})
}

// groupedProduct computes thread p's share of MUL_MAT t (src0 2-D, src1
// F32) with k, over the groups of rows rows group(g) returns interleaved
// (the last one possibly partial).
func groupedProduct(p *Params, t *graph.Tensor, k *repackKernel, l *repackLayout, group func(g int64) []byte) {
	a, b := t.Src[0], t.Src[1]
	rows, ax := l.rows, l.aux
	act := prepareActivations(p, b, ax.vdt)
	nb := int(a.Ne[0]) / ax.block
	auxRow := nb * ax.size
	aux := p.Work[auxOffset(b, ax):]
	lo, hi := p.Rows(b.NRows())
	for r := lo; r < hi; r++ {
		y, _ := act.row(r%b.Ne[1], r/b.Ne[1]%b.Ne[2], r/(b.Ne[1]*b.Ne[2]))
		ax.fill(aux[int(r)*auxRow:int(r+1)*auxRow], y, nb)
	}
	p.Barrier()

	ne1, ne2 := t.Ne[1], t.Ne[2]
	ncols := ne1 * ne2 * t.Ne[3]
	ngroups := (a.Ne[1] + int64(rows) - 1) / int64(rows)
	lo0, hi0, lo1, hi1 := splitProduct(p, ngroups, ncols)
	type col struct {
		y, aux []byte
		dst    uint64
		ok     bool
	}
	cols := make([]col, hi1-lo1)
	for i := range cols {
		ir1 := lo1 + int64(i)
		i1, i2, i3 := ir1%ne1, ir1/ne1%ne2, ir1/(ne1*ne2)
		y, ok := act.row(i1, i2, i3)
		r := act.index(i1, i2, i3)
		cols[i] = col{y: y, aux: aux[int(r)*auxRow : int(r+1)*auxRow], dst: offset(t, 0, i1, i2, i3), ok: ok}
	}
	// The four-column calls' activation operands are the same for every
	// group: set once, as far as the first quad with a column that is not
	// ok (the rest go one column at a time); only the outputs move.
	type quad struct{ ys, auxs [4][]byte }
	var quads []quad
	for c := 0; k.four != nil && c+4 <= len(cols); c += 4 {
		if !cols[c].ok || !cols[c+1].ok || !cols[c+2].ok || !cols[c+3].ok {
			break
		}
		var q quad
		for j := range 4 {
			q.ys[j], q.auxs[j] = cols[c+j].y, cols[c+j].aux
		}
		quads = append(quads, q)
	}
	var out [4][]float32
	var spare [4][8]float32
	for g := lo0; g < hi0; g++ {
		x := group(g)
		valid := min(int64(rows), a.Ne[1]-g*int64(rows))
		partial := valid < int64(rows)
		gOff := 4 * uint64(g) * uint64(rows)
		// dst is column c's output for the group, or spare memory j
		// when the group is partial (copied out by done).
		dst := func(c, j int) []float32 {
			if partial {
				return spare[j][:rows]
			}
			return unsafe.Slice((*float32)(unsafe.Pointer(&t.Data[cols[c].dst+gOff])), rows)
		}
		done := func(c, j int) {
			if partial {
				for r := range valid {
					binary.LittleEndian.PutUint32(t.Data[cols[c].dst+gOff+4*uint64(r):], math.Float32bits(spare[j][r]))
				}
			}
		}
		for qi := range quads {
			c := 4 * qi
			for j := range 4 {
				out[j] = dst(c+j, j)
			}
			k.four(nb, x, &quads[qi].ys, &quads[qi].auxs, &out)
			if partial {
				for j := range 4 {
					done(c+j, j)
				}
			}
		}
		c := 4 * len(quads)
		for ; c < len(cols); c++ {
			o := dst(c, 0)
			if !cols[c].ok {
				for i := range o {
					o[i] = float32(math.NaN())
				}
			} else {
				k.one(nb, x, cols[c].y, cols[c].aux, o)
			}
			done(c, 0)
		}
	}
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
