package graph

import "github.com/ggml-go/ggml/ops"

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
