package graph

import (
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// binary is ggml_add_impl and its siblings: b must broadcast to a's shape
// (ggml_can_repeat); the result has a's type and shape, or is a view of a
// when inplace.
func (c *Context) binary(op ops.Op, a, b *Tensor, inplace bool) *Tensor {
	name := op.String()
	if !c.ok(name, a, b) {
		return nil
	}
	if !CanRepeat(b, a) {
		c.failf(ErrShape, name, "%s does not broadcast to %s", b, a)
		return nil
	}
	if inplace {
		return c.newInplace(op, a, ops.Params{}, a, b)
	}
	return c.NewOp(op, a.Type, a.Ne, ops.Params{}, a, b)
}

// Add is a + b, b broadcast over a.
func (c *Context) Add(a, b *Tensor) *Tensor { return c.binary(ops.Add, a, b, false) }

// AddInplace is Add writing into a.
func (c *Context) AddInplace(a, b *Tensor) *Tensor { return c.binary(ops.Add, a, b, true) }

// AddCast is a + b with a result of type typ, as ggml_add_cast: a must be
// quantized, F16 or BF16, and b's rows must repeat over a's (same row
// length).
func (c *Context) AddCast(a, b *Tensor, typ quant.Type) *Tensor {
	if !c.ok("AddCast", a, b) {
		return nil
	}
	if !CanRepeatRows(b, a) {
		c.failf(ErrShape, "AddCast", "rows of %s do not repeat over %s", b, a)
		return nil
	}
	if !a.Type.IsQuantized() && a.Type != quant.F16 && a.Type != quant.BF16 {
		c.failf(ErrType, "AddCast", "%s must be quantized, F16 or BF16", a)
		return nil
	}
	return c.NewOp(ops.Add, typ, a.Ne, ops.Params{}, a, b)
}

// AddID adds to each row (i1, i2) of a the row ids[i1, i2] of b, as
// ggml_add_id (the expert biases of a mixture of experts).
func (c *Context) AddID(a, b, ids *Tensor) *Tensor {
	if !c.ok("AddID", a, b, ids) {
		return nil
	}
	switch {
	case a.Ne[0] != b.Ne[0]:
		c.failf(ErrShape, "AddID", "rows of %s and %s differ in length", a, b)
	case a.Ne[1] != ids.Ne[0] || a.Ne[2] != ids.Ne[1]:
		c.failf(ErrShape, "AddID", "ids %s do not match the rows of %s", ids, a)
	case ids.Type != quant.I32:
		c.failf(ErrType, "AddID", "ids %s must be I32", ids)
	default:
		return c.NewOp(ops.AddID, a.Type, a.Ne, ops.Params{}, a, b, ids)
	}
	return nil
}

// add1 is ggml_add1_impl: b must be a scalar and a padded 1-D (rows
// contiguous and evenly spaced).
func (c *Context) add1(a, b *Tensor, inplace bool) *Tensor {
	if !c.ok("Add1", a, b) {
		return nil
	}
	if !isScalar(b) {
		c.failf(ErrShape, "Add1", "%s is not a scalar", b)
		return nil
	}
	if !isPadded1D(a) {
		c.failf(ErrShape, "Add1", "%s is not padded 1-D", a)
		return nil
	}
	if inplace {
		return c.newInplace(ops.Add1, a, ops.Params{}, a, b)
	}
	return c.NewOp(ops.Add1, a.Type, a.Ne, ops.Params{}, a, b)
}

// Add1 adds the scalar b to every element of a.
func (c *Context) Add1(a, b *Tensor) *Tensor { return c.add1(a, b, false) }

// Add1Inplace is Add1 writing into a.
func (c *Context) Add1Inplace(a, b *Tensor) *Tensor { return c.add1(a, b, true) }

// Sub is a - b, b broadcast over a.
func (c *Context) Sub(a, b *Tensor) *Tensor { return c.binary(ops.Sub, a, b, false) }

// SubInplace is Sub writing into a.
func (c *Context) SubInplace(a, b *Tensor) *Tensor { return c.binary(ops.Sub, a, b, true) }

// Mul is a * b element-wise, b broadcast over a.
func (c *Context) Mul(a, b *Tensor) *Tensor { return c.binary(ops.Mul, a, b, false) }

// MulInplace is Mul writing into a.
func (c *Context) MulInplace(a, b *Tensor) *Tensor { return c.binary(ops.Mul, a, b, true) }

// Div is a / b element-wise, b broadcast over a.
func (c *Context) Div(a, b *Tensor) *Tensor { return c.binary(ops.Div, a, b, false) }

// DivInplace is Div writing into a.
func (c *Context) DivInplace(a, b *Tensor) *Tensor { return c.binary(ops.Div, a, b, true) }

// isScalar is ggml_is_scalar: a single element.
func isScalar(t *Tensor) bool { return t.Ne == [MaxDims]int64{1, 1, 1, 1} }

// isPadded1D is ggml_is_padded_1d: elements adjacent and dimensions 2 and
// 3 following dimension 1 without gaps (rows may be padded).
func isPadded1D(t *Tensor) bool {
	return t.Nb[0] == uint64(t.Type.TypeSize()) &&
		t.Nb[2] == t.Nb[1]*uint64(t.Ne[1]) &&
		t.Nb[3] == t.Nb[2]*uint64(t.Ne[2])
}
