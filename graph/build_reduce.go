package graph

import (
	"math"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Reductions, norms, softmax and sorting, as ggml.c builds them.

// Sum is the sum of all elements of a: a one-element tensor of a's type.
func (c *Context) Sum(a *Tensor) *Tensor {
	if !c.ok("SUM", a) {
		return nil
	}
	return c.NewOp(ops.Sum, a.Type, [MaxDims]int64{1, 1, 1, 1}, ops.Params{}, a)
}

// SumRows sums each row of a: shape [1, ne1, ne2, ne3], a's type.
func (c *Context) SumRows(a *Tensor) *Tensor {
	if !c.ok("SUM_ROWS", a) {
		return nil
	}
	return c.NewOp(ops.SumRows, a.Type, [MaxDims]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}, ops.Params{}, a)
}

// Cumsum is the running sum along each row of a, which must be F32.
func (c *Context) Cumsum(a *Tensor) *Tensor {
	if !c.ok("CUMSUM", a) {
		return nil
	}
	if a.Type != quant.F32 {
		c.failf(ErrType, "CUMSUM", "%s is not F32", a)
		return nil
	}
	return c.NewOp(ops.Cumsum, a.Type, a.Ne, ops.Params{}, a)
}

// Mean is the mean of each row of a: F32 of shape [1, ne1, ne2, ne3].
func (c *Context) Mean(a *Tensor) *Tensor {
	if !c.ok("MEAN", a) {
		return nil
	}
	return c.NewOp(ops.Mean, quant.F32, [MaxDims]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}, ops.Params{}, a)
}

// Argmax is the index of the largest element of each row of the matrix a:
// an I32 vector of ne1 elements.
func (c *Context) Argmax(a *Tensor) *Tensor {
	if !c.ok("ARGMAX", a) {
		return nil
	}
	if a.Ne[2] != 1 || a.Ne[3] != 1 {
		c.failf(ErrShape, "ARGMAX", "%s is not a matrix", a)
		return nil
	}
	if a.Ne[0] > math.MaxInt32 {
		c.failf(ErrShape, "ARGMAX", "rows of %d elements exceed int32 indices", a.Ne[0])
		return nil
	}
	return c.NewOp(ops.Argmax, quant.I32, [MaxDims]int64{a.Ne[1], 1, 1, 1}, ops.Params{}, a)
}

// normOp creates the result of a norm with a's type and shape: a new
// tensor, or a view of a when inplace (ggml_dup_tensor / ggml_view_tensor).
func (c *Context) normOp(op ops.Op, a *Tensor, p ops.Params, inplace bool) *Tensor {
	if !c.ok(op.String(), a) {
		return nil
	}
	if inplace {
		return c.newInplace(op, a, p, a)
	}
	return c.NewOp(op, a.Type, a.Ne, p, a)
}

// Norm normalizes each row of a to zero mean and unit variance, eps added
// to the variance.
func (c *Context) Norm(a *Tensor, eps float32) *Tensor {
	return c.normOp(ops.Norm, a, ops.NormParams{Eps: eps}.Params(), false)
}

// NormInplace is Norm writing into a.
func (c *Context) NormInplace(a *Tensor, eps float32) *Tensor {
	return c.normOp(ops.Norm, a, ops.NormParams{Eps: eps}.Params(), true)
}

// RMSNorm divides each row of a by its root mean square, eps added to the
// mean square.
func (c *Context) RMSNorm(a *Tensor, eps float32) *Tensor {
	return c.normOp(ops.RMSNorm, a, ops.NormParams{Eps: eps}.Params(), false)
}

// RMSNormInplace is RMSNorm writing into a.
func (c *Context) RMSNormInplace(a *Tensor, eps float32) *Tensor {
	return c.normOp(ops.RMSNorm, a, ops.NormParams{Eps: eps}.Params(), true)
}

// L2Norm divides each row of a by its Euclidean norm, or by eps when the
// norm is smaller.
func (c *Context) L2Norm(a *Tensor, eps float32) *Tensor {
	return c.normOp(ops.L2Norm, a, ops.NormParams{Eps: eps}.Params(), false)
}

// L2NormInplace is L2Norm writing into a.
func (c *Context) L2NormInplace(a *Tensor, eps float32) *Tensor {
	return c.normOp(ops.L2Norm, a, ops.NormParams{Eps: eps}.Params(), true)
}

// GroupNorm splits the channels (dimension 2) of a into nGroups groups and
// normalizes each group of each sample (dimension 3) to zero mean and unit
// variance.
func (c *Context) GroupNorm(a *Tensor, nGroups int, eps float32) *Tensor {
	return c.normOp(ops.GroupNorm, a, ops.GroupNormParams{Groups: int32(nGroups), Eps: eps}.Params(), false)
}

// GroupNormInplace is GroupNorm writing into a.
func (c *Context) GroupNormInplace(a *Tensor, nGroups int, eps float32) *Tensor {
	return c.normOp(ops.GroupNorm, a, ops.GroupNormParams{Groups: int32(nGroups), Eps: eps}.Params(), true)
}

// softMax is ggml_soft_max_impl: a must be contiguous; the optional mask
// (F16 or F32, contiguous) has a's row length, at least a's rows, and
// broadcasts over dimensions 2 and 3; ALiBi (maxBias > 0) needs a mask.
func (c *Context) softMax(a, mask *Tensor, scale, maxBias float32, inplace bool) *Tensor {
	const name = "SOFT_MAX"
	if !c.ok(name, a) {
		return nil
	}
	if !a.IsContiguous() {
		c.failf(ErrShape, name, "%s is not contiguous", a)
		return nil
	}
	if mask != nil {
		switch {
		case mask.Type != quant.F16 && mask.Type != quant.F32:
			c.failf(ErrType, name, "mask %s is not F16 or F32", mask)
			return nil
		case !mask.IsContiguous():
			c.failf(ErrShape, name, "mask %s is not contiguous", mask)
			return nil
		case mask.Ne[0] != a.Ne[0] || mask.Ne[1] < a.Ne[1]:
			c.failf(ErrShape, name, "mask %s does not cover the rows of %s", mask, a)
			return nil
		case mask.Ne[2] == 0 || mask.Ne[3] == 0 || a.Ne[2]%mask.Ne[2] != 0 || a.Ne[3]%mask.Ne[3] != 0:
			c.failf(ErrShape, name, "mask %s does not broadcast over %s", mask, a)
			return nil
		}
	}
	if maxBias > 0 && mask == nil {
		c.failf(ErrArgument, name, "ALiBi (max_bias %g) needs a mask", maxBias)
		return nil
	}
	p := ops.SoftMaxParams{Scale: scale, MaxBias: maxBias}.Params()
	var t *Tensor
	if inplace {
		t = c.newInplace(ops.SoftMax, a, p, a)
	} else {
		t = c.NewOp(ops.SoftMax, a.Type, a.Ne, p, a)
	}
	if t != nil {
		t.Src[1] = mask
	}
	return t
}

// SoftMax is the softmax of each row of a.
func (c *Context) SoftMax(a *Tensor) *Tensor { return c.softMax(a, nil, 1, 0, false) }

// SoftMaxInplace is SoftMax writing into a.
func (c *Context) SoftMaxInplace(a *Tensor) *Tensor { return c.softMax(a, nil, 1, 0, true) }

// SoftMaxExt is softmax(a*scale + slope*mask) of each row, where mask
// (optional) is broadcast over dimensions 2 and 3 of a and slope is the
// ALiBi slope of the head (dimension 2), or 1 when maxBias is 0.
func (c *Context) SoftMaxExt(a, mask *Tensor, scale, maxBias float32) *Tensor {
	return c.softMax(a, mask, scale, maxBias, false)
}

// SoftMaxExtInplace is SoftMaxExt writing into a.
func (c *Context) SoftMaxExtInplace(a, mask *Tensor, scale, maxBias float32) *Tensor {
	return c.softMax(a, mask, scale, maxBias, true)
}

// SoftMaxAddSinks gives the SOFT_MAX tensor t attention sinks: an F32
// vector of one logit per head (dimension 2 of t's input) that takes part
// in each row's normalization without an output of its own. A nil sinks
// removes them. It returns t.
func (c *Context) SoftMaxAddSinks(t, sinks *Tensor) *Tensor {
	const name = "SoftMaxAddSinks"
	if !c.ok(name, t) {
		return nil
	}
	if sinks == nil {
		t.Src[2] = nil
		return t
	}
	switch {
	case t.Op != ops.SoftMax || t.Src[0] == nil: // NewOp makes SOFT_MAX nodes without input
		c.failf(ErrArgument, name, "%s is not a SOFT_MAX of an input", t)
		return nil
	case t.Src[2] != nil:
		c.failf(ErrArgument, name, "%s already has sinks", t)
		return nil
	case t.Src[0].Ne[2] != sinks.Ne[0]:
		c.failf(ErrShape, name, "sinks %s do not match the %d heads of %s", sinks, t.Src[0].Ne[2], t)
		return nil
	case sinks.Type != quant.F32:
		c.failf(ErrType, name, "sinks %s are not F32", sinks)
		return nil
	}
	t.Src[2] = sinks
	return t
}

// Argsort is, for each row of a, the I32 indices that sort it in order.
func (c *Context) Argsort(a *Tensor, order ops.SortOrder) *Tensor {
	if !c.ok("ARGSORT", a) {
		return nil
	}
	if a.Ne[0] > math.MaxInt32 {
		c.failf(ErrShape, "ARGSORT", "rows of %d elements exceed int32 indices", a.Ne[0])
		return nil
	}
	return c.NewOp(ops.Argsort, quant.I32, a.Ne, ops.ArgsortParams{Order: order}.Params(), a)
}

// ArgsortTopK is a view of the first k indices of a descending Argsort of
// a: the indices of each row's k largest elements, largest first.
func (c *Context) ArgsortTopK(a *Tensor, k int) *Tensor {
	if !c.ok("ArgsortTopK", a) {
		return nil
	}
	if k < 0 || a.Ne[0] < int64(k) {
		c.failf(ErrShape, "ArgsortTopK", "k = %d is negative or exceeds the rows of %s", k, a)
		return nil
	}
	t := c.Argsort(a, ops.SortDesc)
	if t == nil {
		return nil
	}
	return c.View4D(t, int64(k), t.Ne[1], t.Ne[2], t.Ne[3], t.Nb[1], t.Nb[2], t.Nb[3], 0)
}

// TopK is, for each row of a, the I32 indices of its k largest elements,
// in no particular order.
func (c *Context) TopK(a *Tensor, k int) *Tensor {
	if !c.ok("TOP_K", a) {
		return nil
	}
	if a.Ne[0] < int64(k) {
		c.failf(ErrShape, "TOP_K", "k = %d exceeds the rows of %s", k, a)
		return nil
	}
	return c.NewOp(ops.TopK, quant.I32, [MaxDims]int64{int64(k), a.Ne[1], a.Ne[2], a.Ne[3]}, ops.Params{}, a)
}
