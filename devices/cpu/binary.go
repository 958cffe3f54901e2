package cpu

import (
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// binaryTypes reports whether (src0, src1, dst) is one of the type
// combinations ggml's CPU binary kernels compute: all F32, all F16, all
// BF16, or an F16/BF16 src0 with an F32 src1 into src0's type or F32.
func binaryTypes(a, b, dst quant.Type) bool {
	if a == b && b == dst {
		return isFloatType(a)
	}
	return (a == quant.F16 || a == quant.BF16) && b == quant.F32 && (dst == a || dst == quant.F32)
}

// supportsBinary: ADD, SUB, MUL and DIV with src1 broadcast over src0. src0
// and dst need adjacent elements; src1 may have any strides. ADD also takes
// a quantized src0 (see supportsAddQuant).
func supportsBinary(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || !graph.SameShape(t, a) {
		return false
	}
	if t.Op == ops.Add && a.Type.IsQuantized() {
		return supportsAddQuant(t)
	}
	// Equal shapes first: CanRepeat divides, and most binary ops in a
	// graph combine tensors of one shape.
	return binaryTypes(a.Type, b.Type, t.Type) && (a.Ne == b.Ne || graph.CanRepeat(b, a)) && ewDenseElems(a) && ewDenseElems(t)
}

// supportsAddQuant: ADD with a quantized src0 (ggml_compute_forward_add_q_f32):
// src1 F32 of the same shape with adjacent elements, dst any type with a
// from_float, not permuted.
func supportsAddQuant(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return hasToFloat(a.Type) && b.Type == quant.F32 && (hasFromFloat(t.Type) && t.Type != quant.I32) &&
		graph.SameShape(a, b) && graph.SameShape(a, t) &&
		ewDenseElems(a) && ewDenseElems(b) && ewDenseElems(t) && ewNotPermuted(t)
}

func binaryFunc(op ops.Op) func(x, y float32) float32 {
	switch op {
	case ops.Add:
		return func(x, y float32) float32 { return x + y }
	case ops.Sub:
		return func(x, y float32) float32 { return x - y }
	case ops.Mul:
		return func(x, y float32) float32 { return x * y }
	case ops.Div:
		return func(x, y float32) float32 { return x / y }
	}
	return nil
}

// binaryVec is op's row primitive.
func binaryVec(op ops.Op) func(dst, x, y []float32) {
	switch op {
	case ops.Add:
		return vec.add
	case ops.Sub:
		return vec.sub
	case ops.Mul:
		return vec.mul
	}
	return vec.div
}

func computeBinary(p *Params, t *graph.Tensor) {
	a, b := t.Src[0], t.Src[1]
	if a.Type == quant.F32 && b.Type == quant.F32 && t.Type == quant.F32 && b.Nb[0] == 4 && computeBinaryF32(p, t) {
		return
	}
	f := binaryFunc(t.Op)
	x := make([]float32, t.Ne[0])
	y := make([]float32, b.Ne[0])
	forRows(p, t, func(i1, i2, i3 int64) {
		ewReadRow(a, ewRowOffset(a, i1, i2, i3), x)
		ewReadRow(b, ewRowOffset(b, i1%b.Ne[1], i2%b.Ne[2], i3%b.Ne[3]), y)
		for i := range x {
			x[i] = f(x[i], y[i%len(y)])
		}
		ewWriteRow(t, ewRowOffset(t, i1, i2, i3), x)
	})
}

// computeBinaryF32 is the F32 path: rows viewed in place and combined by
// a vector primitive, src1's row repeated along it when it is shorter. It
// returns false, having done nothing, when some row is not 4-byte aligned.
func computeBinaryF32(p *Params, t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if !f32Aligned(a) || !f32Aligned(b) || !f32Aligned(t) || b.Ne[0] == 0 {
		return false
	}
	op := binaryVec(t.Op)
	n, nb := t.Ne[0], b.Ne[0]
	lo, hi := p.Rows(t.NRows())
	if lo >= hi {
		return true
	}
	var ri, bi rowIndex
	ri.start(t, lo)
	bi.startWith(b, &ri)
	for range hi - lo {
		dst := f32Row(t.Data, ewRowOffset(t, ri.i1, ri.i2, ri.i3), n)
		x := f32Row(a.Data, ewRowOffset(a, ri.i1, ri.i2, ri.i3), n)
		y := f32Row(b.Data, ewRowOffset(b, bi.i1, bi.i2, bi.i3), nb)
		for i := int64(0); i < n; i += nb {
			op(dst[i:i+nb], x[i:i+nb], y)
		}
		bi.nextWith(&ri)
	}
	return true
}

// rowIndex walks the rows (i1, i2, i3) of a tensor in order without the
// divisions of splitting each row number: an op on a few elements costs
// less than the divisions did.
type rowIndex struct {
	i1, i2, i3    int64
	ne1, ne2, ne3 int64
}

// start places the walk at row r of t.
func (w *rowIndex) start(t *graph.Tensor, r int64) {
	w.ne1, w.ne2, w.ne3 = t.Ne[1], t.Ne[2], t.Ne[3]
	if r == 0 {
		w.i1, w.i2, w.i3 = 0, 0, 0
		return
	}
	w.i1, w.i2, w.i3 = r%w.ne1, r/w.ne1%w.ne2, r/(w.ne1*w.ne2)
}

// startWith places the walk of b, a source broadcast into r's tensor, at
// r's row (dividing only where r's index is past b's extent).
func (w *rowIndex) startWith(b *graph.Tensor, r *rowIndex) {
	w.ne1, w.ne2, w.ne3 = b.Ne[1], b.Ne[2], b.Ne[3]
	w.i1, w.i2, w.i3 = wrapIndex(r.i1, w.ne1), wrapIndex(r.i2, w.ne2), wrapIndex(r.i3, w.ne3)
}

func wrapIndex(i, n int64) int64 {
	if i < n {
		return i
	}
	return i % n
}

// next moves to the following row; it reports the dimensions that wrapped
// (0: none, 1: i1, 2: i1 and i2).
func (w *rowIndex) next() int {
	if w.i1++; w.i1 < w.ne1 {
		return 0
	}
	w.i1 = 0
	if w.i2++; w.i2 < w.ne2 {
		return 1
	}
	w.i2 = 0
	w.i3++
	return 2
}

// nextWith moves w, the broadcast row of a source whose shape repeats
// into r's, along with r to r's following row: each index of w is r's
// modulo w's extent, and advances where r's does.
func (w *rowIndex) nextWith(r *rowIndex) {
	wrapped := r.next()
	if w.i1++; w.i1 == w.ne1 {
		w.i1 = 0
	}
	if wrapped > 0 {
		if w.i2++; w.i2 == w.ne2 {
			w.i2 = 0
		}
	}
	if wrapped > 1 {
		if w.i3++; w.i3 == w.ne3 {
			w.i3 = 0
		}
	}
}

// f32Aligned reports whether every row of the F32 tensor t starts 4-byte
// aligned (its memory and strides are), so f32Row views all of them.
func f32Aligned(t *graph.Tensor) bool {
	if len(t.Data) > 0 && uintptr(unsafe.Pointer(&t.Data[0]))%4 != 0 {
		return false
	}
	return t.Nb[1]%4 == 0 && t.Nb[2]%4 == 0 && t.Nb[3]%4 == 0
}

// supportsAdd1: ADD1 of a scalar src1. F32 needs an F32 scalar; F16 and
// BF16 take their own type or F32; a quantized src0 (ggml_compute_forward_
// add1_q_f32) takes F32 and stays in its type. (ggml's quantized kernel
// places row (i1, i2, i3) at i3*nb0 instead of i3*nb3, so it is wrong when
// ne3 > 1; this kernel is not.)
func supportsAdd1(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || b.NElements() != 1 || !graph.SameShape(a, t) || a.Type != t.Type || !ewDenseElems(a) {
		return false
	}
	switch a.Type {
	case quant.F32:
		return b.Type == quant.F32 && ewDenseElems(t)
	case quant.F16, quant.BF16:
		return (b.Type == a.Type || b.Type == quant.F32) && ewDenseElems(t)
	}
	return hasToFloat(a.Type) && (hasFromFloat(a.Type) && a.Type != quant.I32) && b.Type == quant.F32 && ewDenseElems(t) && ewNotPermuted(t)
}

func computeAdd1(p *Params, t *graph.Tensor) {
	b := t.Src[1]
	v := getF(b.Type, b.Data, 0)
	ewMap(p, t, func(x float32) float32 { return x + v })
}

// supportsAddID: F32 rows with adjacent elements and I32 ids indexing the
// rows of src1 by (i1, i2) of src0, shaped as ggml_add_id checks.
func supportsAddID(t *graph.Tensor) bool {
	a, b, ids := t.Src[0], t.Src[1], t.Src[2]
	return a != nil && b != nil && ids != nil &&
		t.Type == quant.F32 && a.Type == quant.F32 && b.Type == quant.F32 && ids.Type == quant.I32 &&
		graph.SameShape(a, t) && a.Ne[0] == b.Ne[0] && ids.Ne[0] == a.Ne[1] && ids.Ne[1] == a.Ne[2] &&
		ewDenseElems(a) && ewDenseElems(b) && ewDenseElems(t)
}

func computeAddID(p *Params, t *graph.Tensor) {
	a, b, ids := t.Src[0], t.Src[1], t.Src[2]
	x := make([]float32, t.Ne[0])
	y := make([]float32, t.Ne[0])
	forRows(p, t, func(i1, i2, i3 int64) {
		id := int64(getI32(ids.Data, uint64(i1)*ids.Nb[0]+uint64(i2)*ids.Nb[1]))
		if id < 0 || id >= b.Ne[1] {
			// A data error, not a layout one: ggml aborts here too.
			panic("ADD_ID: id out of range")
		}
		ewReadRow(a, ewRowOffset(a, i1, i2, i3), x)
		ewReadRow(b, uint64(id)*b.Nb[1], y)
		for i := range x {
			x[i] += y[i]
		}
		ewWriteRow(t, ewRowOffset(t, i1, i2, i3), x)
	})
}
