package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Copies, layout and indexing: DUP, CONT, CPY, REPEAT, CONCAT, SET,
// GET_ROWS, SET_ROWS, DIAG, PAD, IM2COL and POOL_2D.
//
// Each supports rule accepts exactly the types and layouts ggml's CPU
// backend computes correctly. ggml's own supports_op accepts nearly
// everything and then aborts (or, where it only asserts in debug builds,
// reads or writes out of place) on the rest; those cases are refused here.

// typeSize is the size of typ's unit (an element, or a block), as a stride.
func typeSize(typ quant.Type) uint64 { return uint64(typ.TypeSize()) }

// units is the number of units (elements, or blocks) in one of t's rows.
func units(t *graph.Tensor) int64 { return t.Ne[0] / int64(t.Type.BlockSize()) }

// wholeBlocks reports whether t's rows hold whole blocks of its type.
func wholeBlocks(t *graph.Tensor) bool { return t.Ne[0]%int64(t.Type.BlockSize()) == 0 }

// cursor walks a tensor's units in row-major order, as ggml's copy kernels
// walk their destination with a set of counters.
type cursor struct {
	t   *graph.Tensor
	n0  int64
	i   [graph.MaxDims]int64
	off uint64
}

// newCursor returns a cursor at t's unit number k (counting in row-major order).
func newCursor(t *graph.Tensor, k int64) *cursor {
	c := &cursor{t: t, n0: units(t)}
	c.i[0], k = k%c.n0, k/c.n0
	c.i[1], k = k%t.Ne[1], k/t.Ne[1]
	c.i[2], c.i[3] = k%t.Ne[2], k/t.Ne[2]
	c.off = offset(t, c.i[0], c.i[1], c.i[2], c.i[3])
	return c
}

// next moves to the following unit.
func (c *cursor) next() {
	if c.i[0]++; c.i[0] < c.n0 {
		c.off += c.t.Nb[0]
		return
	}
	c.i[0] = 0
	for d := 1; d < graph.MaxDims; d++ {
		if c.i[d]++; c.i[d] < c.t.Ne[d] || d == graph.MaxDims-1 {
			break
		}
		c.i[d] = 0
	}
	c.off = offset(c.t, c.i[0], c.i[1], c.i[2], c.i[3])
}

// f32ToI32 converts as C's float-to-int32 cast does on x86: truncation
// towards zero, and INT32_MIN for NaN and values out of range.
func f32ToI32(v float32) int32 {
	if !(v >= -(1<<31) && v < 1<<31) {
		return math.MinInt32
	}
	return int32(v)
}

// decodeRow reads the n = len(dst) elements of t starting at byte offset
// off, whose units are nb0 apart, as floats.
func decodeRow(t *graph.Tensor, off, nb0 uint64, dst []float32) {
	typ := t.Type
	switch {
	case typ == quant.I32:
		for i := range dst {
			dst[i] = float32(getI32(t.Data, off+uint64(i)*nb0))
		}
	case typ.BlockSize() > 1:
		bs := typ.BlockSize()
		for k := 0; k < len(dst)/bs; k++ {
			mustDequantize(dst[k*bs:(k+1)*bs], typ, t.Data[off+uint64(k)*nb0:])
		}
	case nb0 == typeSize(typ):
		mustDequantize(dst, typ, t.Data[off:])
	default:
		for i := range dst {
			dst[i] = getF(typ, t.Data, off+uint64(i)*nb0)
		}
	}
}

func mustDequantize(dst []float32, typ quant.Type, src []byte) {
	if err := quant.DequantizeInto(dst, typ, src); err != nil {
		panic(fmt.Sprintf("cpu: converting %s to floats: %v", typ, err))
	}
}

// setElem stores v at byte offset off of a tensor of type typ (a float type
// or I32), converting as ggml's element-wise copies do.
func setElem(typ quant.Type, b []byte, off uint64, v float32) {
	if typ == quant.I32 {
		setI32(b, off, f32ToI32(v))
		return
	}
	setF(typ, b, off, v)
}

// --- DUP, CONT, CPY ---------------------------------------------------------

// supportsCopy: DUP, CONT and CPY (t is the destination; for CPY a view of
// Src[1]) copy Src[0]'s elements in row-major order into t's, whatever
// either's shape and strides, as ggml_compute_forward_dup does:
//   - same type: any type, unit by unit (a quantized copy whose source is
//     not contiguous into a contiguous destination of another shape is
//     refused: ggml's row copy mis-sizes quantized rows there), except that
//     ggml refuses any CPY into a lattice type;
//   - between F32, F16 and BF16, and F32 <-> I32: element by element;
//   - F32, F16 or BF16 into a type with a CPU from_float (the quantized
//     types but the lattice ones; and I32 from F16 or
//     BF16): row by row,
//     into a contiguous destination, from rows of whole blocks with
//     adjacent elements;
//   - a quantized type with a to_float into F32: block by block, into a
//     destination with adjacent elements whose rows hold whole blocks (or
//     that is contiguous).
func supportsCopy(t *graph.Tensor) bool {
	src := t.Src[0]
	if src == nil || src.NElements() != t.NElements() || !wholeBlocks(src) || !wholeBlocks(t) {
		return false
	}
	s, d := src.Type, t.Type
	switch {
	case t.Op == ops.Cpy && latticeType(d):
		return false
	case s == d:
		if d.BlockSize() == 1 {
			return true
		}
		ts := typeSize(d)
		return (src.IsContiguous() && t.IsContiguous()) ||
			(graph.SameShape(src, t) && src.Nb[0] == ts && t.Nb[0] == ts) ||
			!t.IsContiguous()
	case isFloatType(s) && isFloatType(d), s == quant.F32 && d == quant.I32, s == quant.I32 && d == quant.F32:
		return true
	case isFloatType(s) && hasFromFloat(d):
		return t.IsContiguous() && src.Nb[0] == typeSize(s) && src.Ne[0]%int64(d.BlockSize()) == 0
	case hasToFloat(s) && d == quant.F32:
		return t.Nb[0] == typeSize(d) && (t.Ne[0]%int64(s.BlockSize()) == 0 || t.IsContiguous())
	}
	return false
}

func computeCopy(p *Params, t *graph.Tensor) {
	if t.Src[0].Type == t.Type {
		copyUnits(p, t)
	} else {
		convertRows(p, t)
	}
}

// copyUnits copies the units of t.Src[0] into t's in row-major order,
// byte for byte; each thread takes a range of source rows.
func copyUnits(p *Params, t *graph.Tensor) {
	src := t.Src[0]
	lo, hi := p.Rows(src.NRows())
	if lo >= hi {
		return
	}
	ts := typeSize(t.Type)
	n0 := units(src)
	rowBytes := uint64(n0) * ts
	dense := t.IsContiguous() && src.Nb[0] == ts
	var dc *cursor
	if !dense {
		dc = newCursor(t, lo*n0)
	}
	for r := lo; r < hi; r++ {
		so := offset(src, 0, r%src.Ne[1], r/src.Ne[1]%src.Ne[2], r/(src.Ne[1]*src.Ne[2]))
		if dense {
			do := uint64(r) * rowBytes
			copy(t.Data[do:do+rowBytes], src.Data[so:so+rowBytes])
			continue
		}
		for j := range n0 {
			o := so + uint64(j)*src.Nb[0]
			copy(t.Data[dc.off:dc.off+ts], src.Data[o:o+ts])
			dc.next()
		}
	}
}

// convertRows converts t.Src[0] into t's type: each source row is read as
// floats and written to the elements of t at the same row-major position.
func convertRows(p *Params, t *graph.Tensor) {
	src := t.Src[0]
	lo, hi := p.Rows(src.NRows())
	if lo >= hi {
		return
	}
	n := src.Ne[0]
	var row []float32 // made when a row must be decoded (not for the in-place rows)
	dense := t.IsContiguous()
	var dc *cursor
	if !dense {
		dc = newCursor(t, lo*n)
	}
	bs := int64(t.Type.BlockSize())
	rowBytes := uint64(t.Type.RowSize(n))
	// Dense F32 rows are converted from where they lie (the KV cache
	// copies of a decoder block) unless the destination may overwrite
	// them first.
	inPlace := dense && src.Type == quant.F32 && src.Nb[0] == 4 && !overlaps(src.Data, t.Data)
	for r := lo; r < hi; r++ {
		so := offset(src, 0, r%src.Ne[1], r/src.Ne[1]%src.Ne[2], r/(src.Ne[1]*src.Ne[2]))
		if inPlace {
			if x := f32Row(src.Data, so, n); x != nil {
				do := uint64(r*n/bs) * typeSize(t.Type)
				fromFloat(t.Type, t.Data[do:do+rowBytes], x)
				continue
			}
		}
		if row == nil {
			row = make([]float32, n)
		}
		decodeRow(src, so, src.Nb[0], row)
		if dense {
			do := uint64(r*n/bs) * typeSize(t.Type)
			fromFloat(t.Type, t.Data[do:do+rowBytes], row)
			continue
		}
		for _, v := range row {
			setElem(t.Type, t.Data, dc.off, v)
			dc.next()
		}
	}
}

// --- REPEAT -------------------------------------------------------------------

// supportsRepeat: REPEAT of F32, F16, BF16, I32 or I16 tensors whose
// elements are adjacent in each row (ggml has no kernel for other types and
// asserts the layout).
func supportsRepeat(t *graph.Tensor) bool {
	a := t.Src[0]
	if a == nil || a.Type != t.Type || !graph.CanRepeat(a, t) {
		return false
	}
	switch a.Type {
	case quant.F32, quant.F16, quant.BF16, quant.I32, quant.I16:
	default:
		return false
	}
	ts := typeSize(a.Type)
	return a.Nb[0] == ts && t.Nb[0] == ts
}

func computeRepeat(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	rowBytes := uint64(a.Ne[0]) * typeSize(a.Type)
	forRows(p, t, func(i1, i2, i3 int64) {
		so := offset(a, 0, i1%a.Ne[1], i2%a.Ne[2], i3%a.Ne[3])
		do := offset(t, 0, i1, i2, i3)
		for k := int64(0); k < t.Ne[0]/a.Ne[0]; k++ {
			o := do + uint64(k)*rowBytes
			copy(t.Data[o:o+rowBytes], a.Data[so:so+rowBytes])
		}
	})
}

// --- CONCAT -------------------------------------------------------------------

// supportsConcat: CONCAT of two tensors of any one type along any
// dimension, with any strides; quantized sources need adjacent blocks in
// their rows, as ggml asserts.
func supportsConcat(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	dim := ops.ConcatParamsOf(t.Params).Dim
	if a == nil || b == nil || a.Type != t.Type || b.Type != t.Type || dim < 0 || dim >= graph.MaxDims {
		return false
	}
	for d := range graph.MaxDims {
		if (int32(d) == dim && t.Ne[d] != a.Ne[d]+b.Ne[d]) || (int32(d) != dim && (t.Ne[d] != a.Ne[d] || t.Ne[d] != b.Ne[d])) {
			return false
		}
	}
	if t.Type.BlockSize() > 1 {
		return a.IsContiguousRows() && b.IsContiguousRows() && wholeBlocks(a) && wholeBlocks(b)
	}
	return true
}

func computeConcat(p *Params, t *graph.Tensor) {
	a, b := t.Src[0], t.Src[1]
	dim := ops.ConcatParamsOf(t.Params).Dim
	// o is where b starts in t, in units.
	var o [graph.MaxDims]int64
	o[dim] = a.Ne[dim]
	if dim == 0 {
		o[0] = units(a)
	}
	na := [graph.MaxDims]int64{units(a), a.Ne[1], a.Ne[2], a.Ne[3]}
	ts := typeSize(t.Type)
	forRows(p, t, func(i1, i2, i3 int64) {
		for i0 := range units(t) {
			var x []byte
			if i0 < na[0] && i1 < na[1] && i2 < na[2] && i3 < na[3] {
				x = a.Data[offset(a, i0, i1, i2, i3):]
			} else {
				x = b.Data[offset(b, i0-o[0], i1-o[1], i2-o[2], i3-o[3]):]
			}
			do := offset(t, i0, i1, i2, i3)
			copy(t.Data[do:do+ts], x[:ts])
		}
	})
}

// --- SET ----------------------------------------------------------------------

// supportsSet: SET of F32 or I32 tensors: contiguous destination and
// source Src[0], a source Src[1] of the same type with adjacent elements in
// its rows, and a view (strides and offset in the parameters) that stays
// inside the destination.
func supportsSet(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || (a.Type != quant.F32 && a.Type != quant.I32) || b.Type != a.Type || t.Type != a.Type {
		return false
	}
	ts := typeSize(a.Type)
	if !graph.SameShape(a, t) || !a.IsContiguous() || !t.IsContiguous() || b.Nb[0] != ts {
		return false
	}
	sp := ops.SetParamsOf(t.Params)
	if sp.Nb1 < 0 || sp.Nb2 < 0 || sp.Nb3 < 0 || sp.Offset < 0 {
		return false
	}
	if b.IsEmpty() {
		return true
	}
	last := uint64(sp.Offset) + uint64(b.Ne[0]-1)*ts + uint64(b.Ne[1]-1)*uint64(sp.Nb1) +
		uint64(b.Ne[2]-1)*uint64(sp.Nb2) + uint64(b.Ne[3]-1)*uint64(sp.Nb3)
	return last+ts <= t.NBytes()
}

func computeSet(p *Params, t *graph.Tensor) {
	a, b := t.Src[0], t.Src[1]
	sp := ops.SetParamsOf(t.Params)
	if !sp.Inplace {
		lo, hi := p.Rows(int64(len(t.Data)))
		copy(t.Data[lo:hi], a.Data[lo:hi])
		// Every byte of a must be in place before any row of b lands.
		p.Barrier()
	}
	rowBytes := uint64(b.Ne[0]) * typeSize(b.Type)
	forRows(p, b, func(i1, i2, i3 int64) {
		do := uint64(sp.Offset) + uint64(i1)*uint64(sp.Nb1) + uint64(i2)*uint64(sp.Nb2) + uint64(i3)*uint64(sp.Nb3)
		so := offset(b, 0, i1, i2, i3)
		copy(t.Data[do:do+rowBytes], b.Data[so:so+rowBytes])
	})
}

// --- GET_ROWS -----------------------------------------------------------------

// supportsGetRows: GET_ROWS from F32, F16, BF16, I32 or any quantized type
// with a to_float, with adjacent units in each row, into F32 (I32 from
// I32); I32 row numbers with any strides.
func supportsGetRows(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || b.Type != quant.I32 {
		return false
	}
	want := quant.F32
	switch {
	case a.Type == quant.I32:
		want = quant.I32
	case isFloatType(a.Type), hasToFloat(a.Type):
	default:
		return false
	}
	return t.Type == want && t.Ne == [graph.MaxDims]int64{a.Ne[0], b.Ne[0], b.Ne[1], b.Ne[2]} &&
		a.Ne[2] == b.Ne[1] && a.Ne[3] == b.Ne[2] && b.Ne[3] == 1 &&
		a.Nb[0] == typeSize(a.Type) && t.Nb[0] == typeSize(t.Type)
}

func computeGetRows(p *Params, t *graph.Tensor) {
	a, b := t.Src[0], t.Src[1]
	lo, hi := p.Rows(b.NElements())
	raw := a.Type == quant.F32 || a.Type == quant.I32
	rowBytes := uint64(t.Ne[0]) * 4
	var row []float32
	if !raw {
		row = make([]float32, t.Ne[0])
	}
	for i := lo; i < hi; i++ {
		i10, i11, i12 := i%b.Ne[0], i/b.Ne[0]%b.Ne[1], i/(b.Ne[0]*b.Ne[1])
		r := int64(getI32(b.Data, offset(b, i10, i11, i12, 0)))
		if r < 0 || r >= a.Ne[1] {
			panic(fmt.Sprintf("cpu: GET_ROWS: row %d of a %d-row source", r, a.Ne[1]))
		}
		so := offset(a, 0, r, i11, i12)
		do := offset(t, 0, i10, i11, i12)
		if raw {
			copy(t.Data[do:do+rowBytes], a.Data[so:so+rowBytes])
			continue
		}
		decodeRow(a, so, a.Nb[0], row)
		fromFloat(quant.F32, t.Data[do:do+rowBytes], row)
	}
}

// --- SET_ROWS -----------------------------------------------------------------

// supportsSetRows: SET_ROWS of F32 or F16 rows into any type with a CPU
// from_float (see hasFromFloat) (t, a view of Src[2]), with
// I32 or I64 row numbers; rows of both sides must have adjacent units.
func supportsSetRows(t *graph.Tensor) bool {
	b, idx, a := t.Src[0], t.Src[1], t.Src[2]
	if b == nil || idx == nil || a == nil || t.Type != a.Type || !hasFromFloat(t.Type) ||
		(b.Type != quant.F32 && b.Type != quant.F16) || (idx.Type != quant.I32 && idx.Type != quant.I64) {
		return false
	}
	return t.Ne[0] == b.Ne[0] && t.Ne[2] == b.Ne[2] && t.Ne[3] == b.Ne[3] &&
		b.Ne[1] == idx.Ne[0] && idx.Ne[3] == 1 && idx.Ne[1] > 0 && idx.Ne[2] > 0 &&
		b.Ne[2]%idx.Ne[1] == 0 && b.Ne[3]%idx.Ne[2] == 0 &&
		wholeBlocks(t) && t.IsContiguousRows() && b.Nb[0] == typeSize(b.Type)
}

// computeSetRows splits the destination rows between threads: each thread
// reads every row number and writes the rows that land in its share, in
// source order. A destination row named twice thus gets the last source
// row, whatever the thread count (ggml's threads race there).
func computeSetRows(p *Params, t *graph.Tensor) {
	b, idx := t.Src[0], t.Src[1]
	lo, hi := p.Rows(t.Ne[1])
	if lo >= hi {
		return
	}
	rowBytes := t.RowSize()
	same := b.Type == t.Type
	var row []float32
	if !same {
		row = make([]float32, b.Ne[0])
	}
	for i3 := range b.Ne[3] {
		for i2 := range b.Ne[2] {
			ib := offset(idx, 0, i2%idx.Ne[1], i3%idx.Ne[2], 0)
			sb, db := offset(b, 0, 0, i2, i3), offset(t, 0, 0, i2, i3)
			for i := range b.Ne[1] {
				r := idxRow(idx, ib+uint64(i)*idx.Nb[0])
				if r < 0 || r >= t.Ne[1] {
					panic(fmt.Sprintf("cpu: SET_ROWS: row %d of a %d-row destination", r, t.Ne[1]))
				}
				if r < lo || r >= hi {
					continue
				}
				so, do := sb+uint64(i)*b.Nb[1], db+uint64(r)*t.Nb[1]
				switch {
				case same && rowBytes == 4:
					// The transposed V cache's rows of one value, a
					// decode step's hundreds: no memmove call each.
					binary.LittleEndian.PutUint32(t.Data[do:], binary.LittleEndian.Uint32(b.Data[so:]))
					continue
				case same:
					copy(t.Data[do:do+rowBytes], b.Data[so:so+rowBytes])
					continue
				}
				decodeRow(b, so, b.Nb[0], row)
				fromFloat(t.Type, t.Data[do:do+rowBytes], row)
			}
		}
	}
}

// idxRow is the row number at byte offset off of SET_ROWS's index
// tensor idx (I32 or I64).
func idxRow(idx *graph.Tensor, off uint64) int64 {
	if idx.Type == quant.I64 {
		return getI64(idx.Data, off)
	}
	return int64(getI32(idx.Data, off))
}

// --- DIAG ---------------------------------------------------------------------

// supportsDiag: DIAG of F32 vectors with adjacent elements.
func supportsDiag(t *graph.Tensor) bool {
	a := t.Src[0]
	return a != nil && a.Type == quant.F32 && t.Type == quant.F32 && a.Ne[1] == 1 &&
		t.Ne == [graph.MaxDims]int64{a.Ne[0], a.Ne[0], a.Ne[2], a.Ne[3]} &&
		a.Nb[0] == 4 && t.Nb[0] == 4
}

func computeDiag(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	forRows(p, t, func(i1, i2, i3 int64) {
		for i0 := range t.Ne[0] {
			var v float32
			if i0 == i1 {
				v = getF(quant.F32, a.Data, offset(a, i1, 0, i2, i3))
			}
			setF(quant.F32, t.Data, offset(t, i0, i1, i2, i3), v)
		}
	})
}

// --- PAD ----------------------------------------------------------------------

// supportsPad: PAD of F32 tensors with any strides into a contiguous
// result. Circular padding must not reach further than one copy of the
// source before it (ggml would read before the source there) and needs a
// non-empty source.
func supportsPad(t *graph.Tensor) bool {
	a := t.Src[0]
	if a == nil || a.Type != quant.F32 || t.Type != quant.F32 || !t.IsContiguous() {
		return false
	}
	pp := ops.PadParamsOf(t.Params)
	for i := range graph.MaxDims {
		if t.Ne[i] != a.Ne[i]+int64(pp.LP[i])+int64(pp.RP[i]) {
			return false
		}
		if pp.Circular && (a.Ne[i] == 0 || int64(pp.LP[i]) > a.Ne[i]) {
			return false
		}
	}
	return true
}

func computePad(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	pp := ops.PadParamsOf(t.Params)
	var lp, rp [graph.MaxDims]int64
	for i := range graph.MaxDims {
		lp[i], rp[i] = int64(pp.LP[i]), int64(pp.RP[i])
	}
	inside := func(d, i int64) bool { return i >= lp[d] && i < t.Ne[d]-rp[d] }
	wrap := func(d, i int64) int64 { return (i - lp[d] + a.Ne[d]) % a.Ne[d] }
	forRows(p, t, func(i1, i2, i3 int64) {
		for i0 := range t.Ne[0] {
			var v float32
			switch {
			case pp.Circular:
				v = getF(quant.F32, a.Data, offset(a, wrap(0, i0), wrap(1, i1), wrap(2, i2), wrap(3, i3)))
			case inside(0, i0) && inside(1, i1) && inside(2, i2) && inside(3, i3):
				v = getF(quant.F32, a.Data, offset(a, i0-lp[0], i1-lp[1], i2-lp[2], i3-lp[3]))
			}
			setF(quant.F32, t.Data, offset(t, i0, i1, i2, i3), v)
		}
	})
}

// --- IM2COL -------------------------------------------------------------------

// im2colDims are the sizes IM2COL works with: batch, input channels,
// input height and width, kernel height and width (height 1 in 1-D).
type im2colDims struct {
	n, ic, ih, iw, kh, kw int64
	// ofsN and ofsC are the input's strides between batches and channels.
	ofsN, ofsC uint64
}

func im2colDimsOf(t *graph.Tensor, is2D bool) im2colDims {
	a, b := t.Src[0], t.Src[1]
	if is2D {
		return im2colDims{n: b.Ne[3], ic: b.Ne[2], ih: b.Ne[1], iw: b.Ne[0], kh: a.Ne[1], kw: a.Ne[0], ofsN: b.Nb[3], ofsC: b.Nb[2]}
	}
	return im2colDims{n: b.Ne[2], ic: b.Ne[1], ih: 1, iw: b.Ne[0], kh: 1, kw: a.Ne[0], ofsN: b.Nb[2], ofsC: b.Nb[1]}
}

// supportsIm2Col: IM2COL of an F32 input into F32, or of an F32 or F16
// input into F16, with each input channel's image contiguous, into a
// contiguous result whose shape fits the kernel (Src[0], whose type does
// not matter) and the input (Src[1]).
func supportsIm2Col(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || !t.IsContiguous() {
		return false
	}
	switch {
	case t.Type == quant.F32 && b.Type == quant.F32:
	case t.Type == quant.F16 && (b.Type == quant.F32 || b.Type == quant.F16):
	default:
		return false
	}
	is2D := ops.Im2ColParamsOf(t.Params).Is2D
	d := im2colDimsOf(t, is2D)
	ts := typeSize(b.Type)
	if b.Nb[0] != ts || (d.ih > 1 && b.Nb[1] != uint64(d.iw)*ts) {
		return false
	}
	if is2D {
		return t.Ne[0] == d.ic*d.kh*d.kw && t.Ne[3] == d.n
	}
	return b.Ne[3] == 1 && t.Ne[0] == d.ic*d.kw && t.Ne[2] == d.n && t.Ne[3] == 1
}

func computeIm2Col(p *Params, t *graph.Tensor) {
	b := t.Src[1]
	ip := ops.Im2ColParamsOf(t.Params)
	d := im2colDimsOf(t, ip.Is2D)
	s0, s1, p0, p1, d0, d1 := int64(ip.S0), int64(ip.S1), int64(ip.P0), int64(ip.P1), int64(ip.D0), int64(ip.D1)
	bs, ts := typeSize(b.Type), typeSize(t.Type)
	// Each result row is one output position (iow, ioh) of one batch item
	// (in 1-D the batch is dimension 2).
	forRows(p, t, func(iow, ioh, in int64) {
		row := offset(t, 0, iow, ioh, in)
		if !ip.Is2D {
			ioh, in = 0, ioh
		}
		for ic := range d.ic {
			img := uint64(in)*d.ofsN + uint64(ic)*d.ofsC
			for kh := range d.kh {
				for kw := range d.kw {
					iiw := iow*s0 + kw*d0 - p0
					iih := ioh*s1 + kh*d1 - p1
					do := row + uint64((ic*d.kh+kh)*d.kw+kw)*ts
					switch {
					case iih < 0 || iih >= d.ih || iiw < 0 || iiw >= d.iw:
						setF(t.Type, t.Data, do, 0)
					case b.Type == t.Type:
						so := img + uint64(iih*d.iw+iiw)*bs
						copy(t.Data[do:do+ts], b.Data[so:so+bs])
					default:
						setF(t.Type, t.Data, do, getF(b.Type, b.Data, img+uint64(iih*d.iw+iiw)*bs))
					}
				}
			}
		}
	})
}

// --- POOL_2D ------------------------------------------------------------------

// supportsPool2D: POOL_2D (max or average) of F32 or F16 matrices with
// adjacent elements in each row, laid out as ggml walks them: one matrix
// after another at the stride of dimension 2, each within that stride.
func supportsPool2D(t *graph.Tensor) bool {
	a := t.Src[0]
	if a == nil || (a.Type != quant.F32 && a.Type != quant.F16) || t.Type != quant.F32 || !t.IsContiguous() {
		return false
	}
	pp := ops.Pool2DParamsOf(t.Params)
	if pp.Op != ops.PoolMax && pp.Op != ops.PoolAvg {
		return false
	}
	ts := typeSize(a.Type)
	if a.Nb[0] != ts || t.Ne[2] != a.Ne[2] || t.Ne[3] != a.Ne[3] {
		return false
	}
	if a.IsEmpty() {
		return true
	}
	matrix := uint64(a.Ne[1]-1)*a.Nb[1] + uint64(a.Ne[0])*ts
	return (a.Ne[3] == 1 || a.Nb[3] == a.Nb[2]*uint64(a.Ne[2])) && matrix <= a.Nb[2]
}

func computePool2D(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	pp := ops.Pool2DParamsOf(t.Params)
	k0, k1, s0, s1 := int64(pp.K0), int64(pp.K1), int64(pp.S0), int64(pp.S1)
	ka := float32(pp.K0 * pp.K1)
	forRows(p, t, func(oy, i2, i3 int64) {
		for ox := range t.Ne[0] {
			var res float32
			if pp.Op == ops.PoolMax {
				res = -math.MaxFloat32
			}
			ix, iy := ox*s0-int64(pp.P0), oy*s1-int64(pp.P1)
			for ky := range k1 {
				if iy+ky < 0 || iy+ky >= a.Ne[1] {
					continue
				}
				for kx := range k0 {
					j := ix + kx
					if j < 0 || j >= a.Ne[0] {
						continue
					}
					v := getF(a.Type, a.Data, offset(a, j, iy+ky, i2, i3))
					if pp.Op == ops.PoolAvg {
						res += v
					} else if !(v < res) {
						res = v
					}
				}
			}
			if pp.Op == ops.PoolAvg {
				res /= ka
			}
			setF(quant.F32, t.Data, offset(t, ox, oy, i2, i3), res)
		}
	})
}

// overlaps reports whether byte slices a and b share any memory.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b)) && b0 < a0+uintptr(len(a))
}
