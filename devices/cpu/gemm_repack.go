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
	quant.Q4_0: {one: gemvQ4_0x8},
}

// archRepack, set by an architecture file, are the kernels of its fast
// set; a type it lacks uses the generic one.
var archRepack map[quant.Type]*repackKernel

func repackKernelFor(ks *kernelSet, typ quant.Type) *repackKernel {
	if ks != genericKernels {
		if k := archRepack[typ]; k != nil {
			return k
		}
	}
	return genericRepack[typ]
}

// auxBlock is the size of one block's aux entry: float32 dy, int32 8*sum.
const auxBlock = 8

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
	return auxOffset(b) + int(b.NRows()*(b.Ne[0]/32)*auxBlock)
}

func auxOffset(src1 *graph.Tensor) int { return (conversionSize(src1, quant.Q8_0) + 63) &^ 63 }

// computeRepackedMulMat computes thread p's share of MUL_MAT t whose src0
// is the repacked weight rp.
func computeRepackedMulMat(p *Params, t *graph.Tensor, rp *repacked) {
	a, b := t.Src[0], t.Src[1]
	act := prepareActivations(p, b, quant.Q8_0)
	nb := int(a.Ne[0] / 32)
	aux := p.Work[auxOffset(b):]
	lo, hi := p.Rows(b.NRows())
	for r := lo; r < hi; r++ {
		y, _ := act.row(r%b.Ne[1], r/b.Ne[1]%b.Ne[2], r/(b.Ne[1]*b.Ne[2]))
		fillAux(aux[int(r)*nb*auxBlock:int(r+1)*nb*auxBlock], y, nb)
	}
	p.Barrier()

	k := repackKernelFor(p.kernels(), a.Type)
	rows := rp.layout.rows
	gsize := uint64(rows) * a.Nb[1]
	ne1, ne2 := t.Ne[1], t.Ne[2]
	lo0, hi0, lo1, hi1 := splitProduct(p, a.Ne[1]/int64(rows), ne1*ne2*t.Ne[3])
	type col struct {
		y, aux []byte
		dst    uint64
		ok     bool
	}
	var cols [maxColTile]col
	var out [4][]float32
	var ys, auxs [4][]byte
	for t1 := lo1; t1 < hi1; t1 += maxColTile {
		n1 := min(t1+maxColTile, hi1) - t1
		for i := range n1 {
			ir1 := t1 + i
			i1, i2, i3 := ir1%ne1, ir1/ne1%ne2, ir1/(ne1*ne2)
			y, ok := act.row(i1, i2, i3)
			r := act.index(i1, i2, i3)
			cols[i] = col{y: y, aux: aux[int(r)*nb*auxBlock : int(r+1)*nb*auxBlock], dst: offset(t, 0, i1, i2, i3), ok: ok}
		}
		for g := lo0; g < hi0; g++ {
			x := rp.data[uint64(g)*gsize : uint64(g+1)*gsize]
			dst := func(c int64) []float32 {
				return unsafe.Slice((*float32)(unsafe.Pointer(&t.Data[cols[c].dst+4*uint64(g)*uint64(rows)])), rows)
			}
			c := int64(0)
			for ; k.four != nil && c+4 <= n1; c += 4 {
				if !cols[c].ok || !cols[c+1].ok || !cols[c+2].ok || !cols[c+3].ok {
					break
				}
				for j := range 4 {
					ys[j], auxs[j], out[j] = cols[c+int64(j)].y, cols[c+int64(j)].aux, dst(c+int64(j))
				}
				k.four(nb, x, &ys, &auxs, &out)
			}
			for ; c < n1; c++ {
				o := dst(c)
				if !cols[c].ok {
					for i := range o {
						o[i] = float32(math.NaN())
					}
					continue
				}
				k.one(nb, x, cols[c].y, cols[c].aux, o)
			}
		}
	}
}

// fillAux writes the aux row of the Q8_0 row y of nb blocks.
func fillAux(aux, y []byte, nb int) {
	for b := range nb {
		yb := y[b*34 : b*34+34]
		var s int32
		for _, q := range yb[2:] {
			s += int32(int8(q))
		}
		binary.LittleEndian.PutUint32(aux[b*auxBlock:], math.Float32bits(quant.FP16ToFP32(binary.LittleEndian.Uint16(yb))))
		binary.LittleEndian.PutUint32(aux[b*auxBlock+4:], uint32(8*s))
	}
}
