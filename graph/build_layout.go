package graph

import (
	"math"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Builders of the copy, layout and indexing operations: REPEAT, CONCAT,
// SET, DUP (in place), CPY by type (Cast), GET_ROWS, SET_ROWS, DIAG, PAD,
// IM2COL and POOL_2D. The views, CONT, CPY and DUP live in context.go.

// Repeat tiles a to b's shape (ggml_repeat): every dimension of b must be
// a multiple of a's. Only b's shape is used.
func (c *Context) Repeat(a, b *Tensor) *Tensor {
	if !c.ok("Repeat", a, b) {
		return nil
	}
	if !CanRepeat(a, b) {
		c.failf(ErrShape, "Repeat", "%s does not tile %s", a, b)
		return nil
	}
	return c.NewOp(ops.Repeat, a.Type, b.Ne, ops.Params{}, a)
}

// Repeat4D tiles a to the shape ne0 x ne1 x ne2 x ne3 (ggml_repeat_4d).
func (c *Context) Repeat4D(a *Tensor, ne0, ne1, ne2, ne3 int64) *Tensor {
	if !c.ok("Repeat4D", a) {
		return nil
	}
	ne := [MaxDims]int64{ne0, ne1, ne2, ne3}
	if !a.IsEmpty() {
		for i := range MaxDims {
			if ne[i]%a.Ne[i] != 0 {
				c.failf(ErrShape, "Repeat4D", "%s does not tile %v", a, ne)
				return nil
			}
		}
	}
	return c.NewOp(ops.Repeat, a.Type, ne, ops.Params{}, a)
}

// Concat joins a and b, of the same type, along dimension dim; their other
// dimensions must agree (ggml_concat).
func (c *Context) Concat(a, b *Tensor, dim int) *Tensor {
	if !c.ok("Concat", a, b) {
		return nil
	}
	if dim < 0 || dim >= MaxDims {
		c.failf(ErrArgument, "Concat", "dimension %d", dim)
		return nil
	}
	if a.Type != b.Type {
		c.failf(ErrType, "Concat", "%s and %s differ in type", a, b)
		return nil
	}
	ne := a.Ne
	for d := range MaxDims {
		if d == dim {
			ne[d] = a.Ne[d] + b.Ne[d]
		} else if a.Ne[d] != b.Ne[d] {
			c.failf(ErrShape, "Concat", "%s and %s differ in dimension %d", a, b, d)
			return nil
		}
	}
	return c.NewOp(ops.Concat, a.Type, ne, ops.ConcatParams{Dim: int32(dim)}.Params(), a, b)
}

// set is ggml_set_impl: a copy of a (or a itself when inplace) with b
// written into the view of it with strides nb1, nb2, nb3 at byte offset
// offset. ggml keeps the strides and offset as int32; values that do not
// fit, which ggml would silently truncate, are refused here.
func (c *Context) set(builder string, a, b *Tensor, nb1, nb2, nb3, offset uint64, inplace bool) *Tensor {
	if !c.ok(builder, a, b) {
		return nil
	}
	if a.NElements() < b.NElements() {
		c.failf(ErrShape, builder, "%s has fewer elements than %s", a, b)
		return nil
	}
	if offset >= 1<<30 {
		c.failf(ErrArgument, builder, "offset %d is not below 2^30", offset)
		return nil
	}
	for _, v := range [...]uint64{nb1, nb2, nb3} {
		if v > math.MaxInt32 {
			c.failf(ErrArgument, builder, "stride %d does not fit in int32", v)
			return nil
		}
	}
	p := ops.SetParams{Nb1: int32(nb1), Nb2: int32(nb2), Nb3: int32(nb3), Offset: int32(offset), Inplace: inplace}.Params()
	if inplace {
		return c.newInplace(ops.Set, a, p, a, b)
	}
	return c.NewOp(ops.Set, a.Type, a.Ne, p, a, b)
}

// Set returns a copy of a in which the view with strides nb1, nb2, nb3 at
// byte offset offset holds b (ggml_set).
func (c *Context) Set(a, b *Tensor, nb1, nb2, nb3, offset uint64) *Tensor {
	return c.set("Set", a, b, nb1, nb2, nb3, offset, false)
}

// SetInplace is Set writing into a.
func (c *Context) SetInplace(a, b *Tensor, nb1, nb2, nb3, offset uint64) *Tensor {
	return c.set("SetInplace", a, b, nb1, nb2, nb3, offset, true)
}

// Set1D is Set with a's own strides (ggml_set_1d).
func (c *Context) Set1D(a, b *Tensor, offset uint64) *Tensor {
	if !c.ok("Set1D", a, b) {
		return nil
	}
	return c.set("Set1D", a, b, a.Nb[1], a.Nb[2], a.Nb[3], offset, false)
}

// Set1DInplace is Set1D writing into a.
func (c *Context) Set1DInplace(a, b *Tensor, offset uint64) *Tensor {
	if !c.ok("Set1DInplace", a, b) {
		return nil
	}
	return c.set("Set1DInplace", a, b, a.Nb[1], a.Nb[2], a.Nb[3], offset, true)
}

// Set2D is Set with row stride nb1 and a's other strides (ggml_set_2d).
func (c *Context) Set2D(a, b *Tensor, nb1, offset uint64) *Tensor {
	if !c.ok("Set2D", a, b) {
		return nil
	}
	return c.set("Set2D", a, b, nb1, a.Nb[2], a.Nb[3], offset, false)
}

// Set2DInplace is Set2D writing into a.
func (c *Context) Set2DInplace(a, b *Tensor, nb1, offset uint64) *Tensor {
	if !c.ok("Set2DInplace", a, b) {
		return nil
	}
	return c.set("Set2DInplace", a, b, nb1, a.Nb[2], a.Nb[3], offset, true)
}

// DupInplace is Dup writing into a (ggml_dup_inplace), a DUP node viewing a.
func (c *Context) DupInplace(a *Tensor) *Tensor {
	if !c.ok("DupInplace", a) {
		return nil
	}
	return c.newInplace(ops.Dup, a, ops.Params{}, a)
}

// Cast converts a to type typ, a CPY into a new tensor of a's shape
// (ggml_cast). As in ggml, the result is its own second source.
func (c *Context) Cast(a *Tensor, typ quant.Type) *Tensor {
	if !c.ok("Cast", a) {
		return nil
	}
	t := c.NewOp(ops.Cpy, typ, a.Ne, ops.Params{}, a)
	if t == nil {
		return nil
	}
	t.Name = a.Name + " (copy)"
	t.Src[1] = t
	return t
}

// GetRows gathers rows of a: row b[i, j, k] of a's matrix (j, k) becomes
// row (i, j, k) of the result (ggml_get_rows). b holds I32 row numbers with
// one column per matrix of a. The result is F32, or I32 when a is.
func (c *Context) GetRows(a, b *Tensor) *Tensor {
	if !c.ok("GetRows", a, b) {
		return nil
	}
	if a.Ne[2] != b.Ne[1] || a.Ne[3] != b.Ne[2] || b.Ne[3] != 1 {
		c.failf(ErrShape, "GetRows", "rows %s do not index %s", b, a)
		return nil
	}
	if b.Type != quant.I32 {
		c.failf(ErrType, "GetRows", "row numbers %s are not i32", b)
		return nil
	}
	typ := quant.F32
	if a.Type == quant.I32 {
		typ = quant.I32
	}
	return c.NewOp(ops.GetRows, typ, [MaxDims]int64{a.Ne[0], b.Ne[0], b.Ne[1], b.Ne[2]}, ops.Params{}, a, b)
}

// SetRows writes the rows of b into a, converting them to a's type: row
// (i, j, k) of b goes to row c[i, j mod c.Ne[1], k mod c.Ne[2]] of a's
// matrix (j, k) (ggml_set_rows). c holds I32 or I64 row numbers. The result
// is a view of a; as in ggml its sources are b, c and a, in that order.
func (c *Context) SetRows(a, b, idx *Tensor) *Tensor {
	if !c.ok("SetRows", a, b, idx) {
		return nil
	}
	if a.Ne[0] != b.Ne[0] || a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3] ||
		b.Ne[1] != idx.Ne[0] || idx.Ne[3] != 1 || idx.Ne[1] == 0 || idx.Ne[2] == 0 ||
		b.Ne[2]%idx.Ne[1] != 0 || b.Ne[3]%idx.Ne[2] != 0 {
		c.failf(ErrShape, "SetRows", "rows %s with row numbers %s do not fit %s", b, idx, a)
		return nil
	}
	if b.Type != quant.F32 && b.Type != quant.F16 {
		c.failf(ErrType, "SetRows", "rows %s are neither f32 nor f16", b)
		return nil
	}
	if idx.Type != quant.I64 && idx.Type != quant.I32 {
		c.failf(ErrType, "SetRows", "row numbers %s are neither i64 nor i32", idx)
		return nil
	}
	if !a.IsContiguousRows() || !b.IsContiguousRows() {
		c.failf(ErrShape, "SetRows", "%s or %s has non-contiguous rows", a, b)
		return nil
	}
	return c.newInplace(ops.SetRows, a, ops.Params{}, b, idx, a)
}

// Diag makes a diagonal matrix of each row of a, which must have one row
// per matrix (ggml_diag).
func (c *Context) Diag(a *Tensor) *Tensor {
	if !c.ok("Diag", a) {
		return nil
	}
	if a.Ne[1] != 1 {
		c.failf(ErrShape, "Diag", "%s has more than one row per matrix", a)
		return nil
	}
	return c.NewOp(ops.Diag, a.Type, [MaxDims]int64{a.Ne[0], a.Ne[0], a.Ne[2], a.Ne[3]}, ops.Params{}, a)
}

// Pad appends p0..p3 zeros to the end of each dimension of a (ggml_pad).
func (c *Context) Pad(a *Tensor, p0, p1, p2, p3 int) *Tensor {
	return c.pad("Pad", a, [4]int{0, 0, 0, 0}, [4]int{p0, p1, p2, p3}, false)
}

// PadCircular is Pad with the padding taken from the other end of a, as on
// a torus (ggml_pad_circular).
func (c *Context) PadCircular(a *Tensor, p0, p1, p2, p3 int) *Tensor {
	return c.pad("PadCircular", a, [4]int{0, 0, 0, 0}, [4]int{p0, p1, p2, p3}, true)
}

// PadExt pads each dimension i of a with lp[i] zeros before and rp[i]
// after (ggml_pad_ext). Negative padding crops.
func (c *Context) PadExt(a *Tensor, lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3 int) *Tensor {
	return c.pad("PadExt", a, [4]int{lp0, lp1, lp2, lp3}, [4]int{rp0, rp1, rp2, rp3}, false)
}

// PadExtCircular is PadExt with wrapped-around padding (ggml_pad_ext_circular).
func (c *Context) PadExtCircular(a *Tensor, lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3 int) *Tensor {
	return c.pad("PadExtCircular", a, [4]int{lp0, lp1, lp2, lp3}, [4]int{rp0, rp1, rp2, rp3}, true)
}

func (c *Context) pad(builder string, a *Tensor, lp, rp [4]int, circular bool) *Tensor {
	if !c.ok(builder, a) {
		return nil
	}
	var p ops.PadParams
	ne := a.Ne
	for i := range MaxDims {
		if !fitsInt32(lp[i]) || !fitsInt32(rp[i]) {
			c.failf(ErrArgument, builder, "padding %d, %d of dimension %d does not fit in int32", lp[i], rp[i], i)
			return nil
		}
		p.LP[i], p.RP[i] = int32(lp[i]), int32(rp[i])
		ne[i] += int64(lp[i]) + int64(rp[i])
	}
	p.Circular = circular
	return c.NewOp(ops.Pad, a.Type, ne, p.Params(), a)
}

func fitsInt32(v int) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

// convOutputSize is the number of positions a kernel of size ks takes over
// ins inputs with stride s, padding p and dilation d.
func convOutputSize(ins, ks int64, s, p, d int) int64 {
	return (ins+2*int64(p)-int64(d)*(ks-1)-1)/int64(s) + 1
}

// Im2Col unfolds the patches that kernel a (only its shape is used) sees
// in input b into rows of the result, of type dstType (ggml_im2col). In
// 2-D, a is [KW, KH, IC, OC] and b [IW, IH, IC, N], and the result is
// [IC*KH*KW, OW, OH, N]; in 1-D, a is [KW, IC, OC] and b [IW, IC, N], and
// the result [IC*KW, OW, N]. s, p and d are stride, padding and dilation
// along the width (0) and height (1).
func (c *Context) Im2Col(a, b *Tensor, s0, s1, p0, p1, d0, d1 int, is2D bool, dstType quant.Type) *Tensor {
	if !c.ok("Im2Col", a, b) {
		return nil
	}
	if is2D {
		if a.Ne[2] != b.Ne[2] {
			c.failf(ErrShape, "Im2Col", "kernel %s and input %s differ in channels", a, b)
			return nil
		}
	} else if b.Ne[1] != a.Ne[1] || b.Ne[3] != 1 {
		c.failf(ErrShape, "Im2Col", "kernel %s does not fit input %s", a, b)
		return nil
	}
	for _, v := range [...]int{s0, s1, p0, p1, d0, d1} {
		if !fitsInt32(v) {
			c.failf(ErrArgument, "Im2Col", "parameter %d does not fit in int32", v)
			return nil
		}
	}
	// ggml divides by the strides unchecked.
	if s0 == 0 || (is2D && s1 == 0) {
		c.failf(ErrArgument, "Im2Col", "zero stride")
		return nil
	}
	var oh int64
	if is2D {
		oh = convOutputSize(b.Ne[1], a.Ne[1], s1, p1, d1)
	}
	ow := convOutputSize(b.Ne[0], a.Ne[0], s0, p0, d0)
	if (is2D && oh <= 0) || ow <= 0 {
		c.failf(ErrShape, "Im2Col", "input %s is too small for kernel %s", b, a)
		return nil
	}
	ne := [MaxDims]int64{a.Ne[1] * a.Ne[0], ow, b.Ne[2], 1}
	if is2D {
		ne = [MaxDims]int64{a.Ne[2] * a.Ne[1] * a.Ne[0], ow, oh, b.Ne[3]}
	}
	p := ops.Im2ColParams{
		S0: int32(s0), S1: int32(s1), P0: int32(p0), P1: int32(p1), D0: int32(d0), D1: int32(d1), Is2D: is2D,
	}
	return c.NewOp(ops.Im2Col, dstType, ne, p.Params(), a, b)
}

// Roll shifts a cyclically by s0..s3 elements along each dimension
// (ggml_roll): element i of the result along dimension d is element
// (i - s_d) mod ne_d of a. a's rows must be contiguous and each shift
// smaller than its dimension, as ggml asserts.
func (c *Context) Roll(a *Tensor, s0, s1, s2, s3 int) *Tensor {
	if !c.ok("Roll", a) {
		return nil
	}
	if a.Nb[0] != uint64(a.Type.TypeSize()) {
		c.failf(ErrShape, "Roll", "%s has rows that are not contiguous", a)
		return nil
	}
	var p ops.Params
	for i, sh := range [...]int{s0, s1, s2, s3} {
		if sh <= -int(max(a.Ne[i], 1)) || sh >= int(max(a.Ne[i], 1)) {
			c.failf(ErrArgument, "Roll", "shift %d of dimension %d of %s is not smaller than it", sh, i, a)
			return nil
		}
		p.SetI32(i, int32(sh))
	}
	return c.NewOp(ops.Roll, a.Type, a.Ne, p, a)
}

// poolOutputSize is ggml_calc_pool_output_size, computed in float32 as
// ggml does (the conversions keep the compiler from fusing operations).
func poolOutputSize(ins int64, ks, s int32, p float32) int64 {
	x := float32(float32(ins)+float32(2*p)) - float32(ks)
	return int64(float32(x/float32(s)) + 1)
}

// Pool2D reduces each k0 x k1 window of every matrix of a, moved by s0, s1
// over a padded by p0, p1, to its maximum or mean (ggml_pool_2d). The
// result is F32. Padded positions count in the mean's divisor.
func (c *Context) Pool2D(a *Tensor, op ops.PoolOp, k0, k1, s0, s1 int, p0, p1 float32) *Tensor {
	if !c.ok("Pool2D", a) {
		return nil
	}
	if op != ops.PoolMax && op != ops.PoolAvg {
		c.failf(ErrArgument, "Pool2D", "pooling %v", op)
		return nil
	}
	for _, v := range [...]int{k0, k1, s0, s1} {
		if !fitsInt32(v) {
			c.failf(ErrArgument, "Pool2D", "parameter %d does not fit in int32", v)
			return nil
		}
	}
	for _, p := range [...]float32{p0, p1} {
		if !(math.Abs(float64(p)) < math.MaxInt32) {
			c.failf(ErrArgument, "Pool2D", "padding %v", p)
			return nil
		}
	}
	// ggml divides by the strides unchecked.
	if s0 == 0 || s1 == 0 {
		c.failf(ErrArgument, "Pool2D", "zero stride")
		return nil
	}
	ne := [MaxDims]int64{
		poolOutputSize(a.Ne[0], int32(k0), int32(s0), p0),
		poolOutputSize(a.Ne[1], int32(k1), int32(s1), p1),
		a.Ne[2], a.Ne[3],
	}
	if ne[0] <= 0 || ne[1] <= 0 {
		c.failf(ErrShape, "Pool2D", "%s is too small for a %d x %d window", a, k0, k1)
		return nil
	}
	p := ops.Pool2DParams{
		Op: op, K0: int32(k0), K1: int32(k1), S0: int32(s0), S1: int32(s1), P0: int32(p0), P1: int32(p1),
	}
	return c.NewOp(ops.Pool2D, quant.F32, ne, p.Params(), a)
}
