package graph

import (
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// broadcasts reports whether a's dimensions 2 and 3 divide b's, the batch
// broadcast of ggml_can_mul_mat and ggml_can_out_prod. ggml divides by a's
// sizes unchecked; an empty batch dimension here is a shape error.
func broadcasts(a, b *Tensor) bool {
	return a.Ne[2] > 0 && a.Ne[3] > 0 && b.Ne[2]%a.Ne[2] == 0 && b.Ne[3]%a.Ne[3] == 0
}

// MulMat is the matrix product of ggml_mul_mat: with a of shape [k, m, ...]
// and b of shape [k, n, ...] the result is [m, n, b.ne2, b.ne3] in F32,
// result[i, j] = dot(row i of a, row j of b), a broadcast over b's
// dimensions 2 and 3.
//
// With quantized weights a, the CPU device, as ggml's CPU backend, first
// converts the activations b to a's dot type (quant.Type.VecDotType: Q8_0
// for Q4_0 and Q8_0, Q8_K for the K-quants) and multiplies block by block,
// so the result carries b's quantization error as well as a's: for Q4_0
// weights and a random 256-wide b, 3e-5 NMSE from the product of the
// dequantized weights with b in F32 (backend's TestLoadWeights). Devices
// that dequantize a instead differ from the CPU by that much.
func (c *Context) MulMat(a, b *Tensor) *Tensor {
	const name = "MUL_MAT"
	if !c.ok(name, a, b) {
		return nil
	}
	if a.Ne[0] != b.Ne[0] || !broadcasts(a, b) {
		c.failf(ErrShape, name, "cannot multiply %s by %s", a, b)
		return nil
	}
	if a.IsTransposed() {
		c.failf(ErrShape, name, "%s is transposed", a)
		return nil
	}
	ne := [MaxDims]int64{a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]}
	return c.NewOp(ops.MulMat, quant.F32, ne, ops.Params{}, a, b)
}

// mulMatParams checks that t is a MUL_MAT result for a setter of its
// parameters, as ggml_mul_mat_set_prec and _set_hint assert.
func (c *Context) mulMatParams(builder string, t *Tensor) bool {
	if !c.ok(builder, t) {
		return false
	}
	if t.Op != ops.MulMat {
		c.failf(ErrArgument, builder, "%s is not a MUL_MAT", t)
		return false
	}
	return true
}

// MulMatSetPrec sets the precision of MUL_MAT result t (ggml_mul_mat_set_prec).
func (c *Context) MulMatSetPrec(t *Tensor, prec ops.Prec) {
	if c.mulMatParams("MulMatSetPrec", t) {
		p := ops.MulMatParamsOf(t.Params)
		p.Prec = prec
		t.Params = p.Params()
	}
}

// MulMatSetHint sets the hint of MUL_MAT result t (ggml_mul_mat_set_hint).
func (c *Context) MulMatSetHint(t *Tensor, hint ops.OpHint) {
	if c.mulMatParams("MulMatSetHint", t) {
		p := ops.MulMatParamsOf(t.Params)
		p.Hint = hint
		t.Params = p.Params()
	}
}

// MulMatID is ggml_mul_mat_id, the product with experts chosen per token:
// as holds one [k, m] matrix per expert, b is [k, n_b, n_tokens], and ids
// (I32, [n_used, n_tokens]) names the experts each token uses. The result
// is [m, n_used, n_tokens] in F32 with result[:, e, t] = as[:, :, ids[e, t]]
// times b[:, e % n_b, t], so a b with n_b = 1 is shared by all experts.
func (c *Context) MulMatID(as, b, ids *Tensor) *Tensor {
	const name = "MUL_MAT_ID"
	if !c.ok(name, as, b, ids) {
		return nil
	}
	if as.IsTransposed() {
		c.failf(ErrShape, name, "%s is transposed", as)
		return nil
	}
	if ids.Type != quant.I32 {
		c.failf(ErrType, name, "ids %s is not i32", ids)
		return nil
	}
	switch {
	case as.Ne[3] != 1:
		c.failf(ErrShape, name, "experts %s are not 3-dimensional", as)
	case b.Ne[3] != 1:
		c.failf(ErrShape, name, "%s is not 3-dimensional", b)
	case ids.Ne[2] != 1 || ids.Ne[3] != 1:
		c.failf(ErrShape, name, "ids %s are not 2-dimensional", ids)
	case ids.Ne[1] != b.Ne[2]:
		c.failf(ErrShape, name, "ids %s do not give one expert list per token of %s", ids, b)
	case as.Ne[0] != b.Ne[0]:
		c.failf(ErrShape, name, "cannot multiply %s by %s", as, b)
	case b.Ne[1] == 0 || ids.Ne[0]%b.Ne[1] != 0:
		c.failf(ErrShape, name, "%s does not broadcast over the %d experts used", b, ids.Ne[0])
	default:
		ne := [MaxDims]int64{as.Ne[1], ids.Ne[0], b.Ne[2], 1}
		return c.NewOp(ops.MulMatID, quant.F32, ne, ops.Params{}, as, b, ids)
	}
	return nil
}

// OutProd is ggml_out_prod: with a of shape [m, k, ...] and b of shape
// [n, k, ...] the result is [m, n, b.ne2, b.ne3] in F32, the sum over k of
// the outer products of a's and b's rows, a broadcast over b's dimensions
// 2 and 3.
func (c *Context) OutProd(a, b *Tensor) *Tensor {
	const name = "OUT_PROD"
	if !c.ok(name, a, b) {
		return nil
	}
	if a.Ne[1] != b.Ne[1] || !broadcasts(a, b) {
		c.failf(ErrShape, name, "no outer product of %s and %s", a, b)
		return nil
	}
	if a.IsTransposed() {
		c.failf(ErrShape, name, "%s is transposed", a)
		return nil
	}
	ne := [MaxDims]int64{a.Ne[0], b.Ne[0], b.Ne[2], b.Ne[3]}
	return c.NewOp(ops.OutProd, quant.F32, ne, ops.Params{}, a, b)
}
