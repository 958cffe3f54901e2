package cpu

import (
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// kernel is one operation's implementation on the CPU device.
type kernel struct {
	// supports decides whether the kernel handles t's types and layout
	// (nil: always). It must agree exactly with compute.
	supports func(t *graph.Tensor) bool
	// compute computes thread p.Ith's share of t (nil: nothing to do, as
	// for views, whose memory already holds the result).
	compute func(p *Params, t *graph.Tensor)
	// workSize is the scratch memory compute needs for t on nth threads
	// (nil: none).
	workSize func(t *graph.Tensor, nth int) int
}

// kernels is indexed by ops.Op. Each family of operations adds its entries
// in its own section.
var kernels = [ops.OpCount]kernel{
	// Views and reshapes: the result is the source's memory.
	ops.None:      {},
	ops.View:      {},
	ops.Reshape:   {},
	ops.Permute:   {},
	ops.Transpose: {},

	// Element-wise: binary, unary, GLU and the math ops.
	ops.Add: {supports: supportsBinary, compute: computeBinary},
	ops.Sub: {supports: supportsBinary, compute: computeBinary},
	ops.Mul: {supports: supportsBinary, compute: computeBinary},
	ops.Div: {supports: supportsBinary, compute: computeBinary},

	// Reductions, norms, softmax, sorting.

	// Copies, layout and indexing.
	ops.Dup:     {supports: supportsCopy, compute: computeCopy},
	ops.Cont:    {supports: supportsCopy, compute: computeCopy},
	ops.Cpy:     {supports: supportsCopy, compute: computeCopy},
	ops.Repeat:  {supports: supportsRepeat, compute: computeRepeat},
	ops.Concat:  {supports: supportsConcat, compute: computeConcat},
	ops.Set:     {supports: supportsSet, compute: computeSet},
	ops.GetRows: {supports: supportsGetRows, compute: computeGetRows},
	ops.SetRows: {supports: supportsSetRows, compute: computeSetRows},
	ops.Diag:    {supports: supportsDiag, compute: computeDiag},
	ops.Pad:     {supports: supportsPad, compute: computePad},
	ops.Im2Col:  {supports: supportsIm2Col, compute: computeIm2Col},
	ops.Pool2D:  {supports: supportsPool2D, compute: computePool2D},

	// Matrix products.

	// Attention, RoPE and sequence ops.
}
