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
	// busy is the most threads compute gives work to for t (nil: as many
	// as there are). An operation giving work to one thread runs on the
	// calling thread alone: the others would only skip an empty share,
	// and a thread that has to be woken for that, or is off the processor,
	// holds up the operation (most nodes of a one-token decode are a
	// single row). The one thread computes what thread 0 of many would.
	busy func(t *graph.Tensor) int64
}

// dstRows is busy for kernels splitting t's rows with Params.Rows.
func dstRows(t *graph.Tensor) int64 { return t.NRows() }

// srcRows is busy for kernels splitting their first source's rows.
func srcRows(t *graph.Tensor) int64 { return t.Src[0].NRows() }

// kernels is indexed by ops.Op. Each family of operations adds its entries
// in its own section.
var kernels = [ops.OpCount]kernel{
	// Leafs, views and reshapes have no entry: the result is the
	// source's memory (empty).

	// Element-wise: binary, unary, GLU and the math ops.
	ops.Add:       {supports: supportsBinary, compute: computeBinary, busy: dstRows},
	ops.Sub:       {supports: supportsBinary, compute: computeBinary, busy: dstRows},
	ops.Mul:       {supports: supportsBinary, compute: computeBinary, busy: dstRows},
	ops.Div:       {supports: supportsBinary, compute: computeBinary, busy: dstRows},
	ops.Add1:      {supports: supportsAdd1, compute: computeAdd1},
	ops.AddID:     {supports: supportsAddID, compute: computeAddID},
	ops.Sqr:       {supports: supportsUnary, compute: computeUnary},
	ops.Sqrt:      {supports: supportsUnary, compute: computeUnary},
	ops.Log:       {supports: supportsUnary, compute: computeUnary},
	ops.Sin:       {supports: supportsUnary, compute: computeUnary},
	ops.Cos:       {supports: supportsUnary, compute: computeUnary},
	ops.Unary:     {supports: supportsUnary, compute: computeUnary},
	ops.Scale:     {supports: supportsScale, compute: computeScale},
	ops.Clamp:     {supports: supportsClamp, compute: computeClamp},
	ops.LeakyReLU: {supports: supportsLeakyReLU, compute: computeLeakyReLU},
	ops.Fill:      {supports: supportsFill, compute: computeFill},
	ops.Tri:       {supports: supportsTri, compute: computeTri},
	ops.GLU:       {supports: supportsGLU, compute: computeGLU, busy: dstRows},

	// Reductions, norms, softmax, sorting.
	ops.Sum:       {supports: supportsSum, compute: computeSum, busy: one},
	ops.SumRows:   {supports: supportsRowReduce, compute: computeRowReduce},
	ops.Mean:      {supports: supportsRowReduce, compute: computeRowReduce},
	ops.Argmax:    {supports: supportsArgmax, compute: computeArgmax},
	ops.Cumsum:    {supports: supportsCumsum, compute: computeCumsum},
	ops.Norm:      {supports: supportsNorm, compute: computeNorm, busy: dstRows},
	ops.RMSNorm:   {supports: supportsNorm, compute: computeNorm, busy: dstRows},
	ops.L2Norm:    {supports: supportsNorm, compute: computeNorm, busy: dstRows},
	ops.GroupNorm: {supports: supportsGroupNorm, compute: computeGroupNorm},
	ops.SoftMax:   {supports: supportsSoftMax, compute: computeSoftMax, busy: dstRows},
	ops.Argsort:   {supports: supportsSort, compute: computeArgsort},
	ops.TopK:      {supports: supportsSort, compute: computeTopK},

	// Copies, layout and indexing.
	ops.Dup:     {supports: supportsCopy, compute: computeCopy, busy: srcRows},
	ops.Cont:    {supports: supportsCopy, compute: computeCopy, busy: srcRows},
	ops.Cpy:     {supports: supportsCopy, compute: computeCopy, busy: srcRows},
	ops.Repeat:  {supports: supportsRepeat, compute: computeRepeat},
	ops.Concat:  {supports: supportsConcat, compute: computeConcat},
	ops.Set:     {supports: supportsSet, compute: computeSet},
	ops.GetRows: {supports: supportsGetRows, compute: computeGetRows, busy: getRowsBusy},
	ops.SetRows: {supports: supportsSetRows, compute: computeSetRows, busy: setRowsBusy},
	ops.Diag:    {supports: supportsDiag, compute: computeDiag},
	ops.Pad:     {supports: supportsPad, compute: computePad},
	ops.Im2Col:  {supports: supportsIm2Col, compute: computeIm2Col},
	ops.Pool2D:  {supports: supportsPool2D, compute: computePool2D},

	// Matrix products.
	ops.MulMat:   {supports: supportsMulMat, compute: computeMulMat, workSize: mulMatWorkSize},
	ops.MulMatID: {supports: supportsMulMatID, compute: computeMulMatID, workSize: mulMatIDWorkSize},
	ops.OutProd:  {supports: supportsOutProd, compute: computeOutProd},

	// Attention, RoPE and sequence ops.
	ops.Rope:          {supports: supportsRope, compute: computeRope, workSize: ropeWorkSize, busy: dstRows},
	ops.RopeBack:      {supports: supportsRope, compute: computeRope, workSize: ropeWorkSize, busy: dstRows},
	ops.FlashAttnExt:  {supports: supportsFlashAttnExt, compute: computeFlashAttnExt, workSize: flashAttnWorkSize},
	ops.SSMConv:       {supports: supportsSSMConv, compute: computeSSMConv},
	ops.SolveTri:      {supports: supportsSolveTri, compute: computeSolveTri},
	ops.GatedDeltaNet: {supports: supportsGatedDeltaNet, compute: computeGatedDeltaNet},
}

// one is busy for kernels computed by thread 0 alone.
func one(*graph.Tensor) int64 { return 1 }

// getRowsBusy: GET_ROWS splits the row numbers.
func getRowsBusy(t *graph.Tensor) int64 { return t.Src[1].NElements() }

// setRowsBusy: SET_ROWS splits the destination rows, each thread writing
// the source rows that land in its share, so no more threads write than
// there are source rows.
func setRowsBusy(t *graph.Tensor) int64 { return min(t.Ne[1], t.Src[0].NRows()) }
