package graph

import (
	"math"
	"testing"
	"unsafe"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// fuzzInput reads the fuzzer's bytes as choices; past the end every choice
// is zero.
type fuzzInput struct {
	b []byte
}

func (in *fuzzInput) byte() byte {
	if len(in.b) == 0 {
		return 0
	}
	v := in.b[0]
	in.b = in.b[1:]
	return v
}

func (in *fuzzInput) n(k int) int { return int(in.byte()) % k }

// fuzzBuilder interprets fuzz input as builder calls on earlier results.
type fuzzBuilder struct {
	t     *testing.T
	in    *fuzzInput
	alloc bool
	c     *Context
	pool  []*Tensor
}

// tensor picks an earlier result, or now and then nil.
func (f *fuzzBuilder) tensor() *Tensor {
	k := f.in.n(256)
	if len(f.pool) == 0 || k == 255 {
		return nil
	}
	return f.pool[k%len(f.pool)]
}

// dim draws a dimension for a type of block size bs: mostly a few blocks,
// sometimes empty or a partial block, rarely negative, and (without
// allocation, where nothing is materialized) now and then huge.
func (f *fuzzBuilder) dim(bs int64) int64 {
	switch k := f.in.n(64); {
	case k < 44:
		return bs * int64(1+k%4)
	case k < 48:
		return 0
	case k < 51:
		return 1 + int64(k%2)
	case k == 51:
		return -1
	case f.alloc:
		return bs * 5
	case k < 55:
		return 1 << 31
	case k < 58:
		return 1 << 40
	case k == 58:
		return math.MaxInt64
	default:
		return int64(f.in.byte()) << 24
	}
}

func (f *fuzzBuilder) dims(bs int64) []int64 {
	n := 1 + f.in.n(4)
	if f.in.n(64) == 0 {
		n = f.in.n(6) // maybe none, or five
	}
	ne := make([]int64, n)
	for i := range ne {
		b := int64(1)
		if i == 0 {
			b = bs
		}
		ne[i] = f.dim(b)
	}
	return ne
}

// shapeOf draws a shape of n elements whose first dimension is a multiple
// of bs, or arbitrary dimensions now and then.
func (f *fuzzBuilder) shapeOf(n, bs int64) []int64 {
	if n <= 0 || bs <= 0 || n%bs != 0 || f.in.n(8) == 0 {
		return f.dims(bs)
	}
	ne := []int64{bs, 1, 1, 1}
	rest := n / bs
	for i := range ne {
		if i == 3 {
			ne[i] *= rest
			break
		}
		for d := 1 + int64(f.in.n(8)); d > 1; d-- {
			if rest%d == 0 {
				ne[i] *= d
				rest /= d
				break
			}
		}
	}
	last := 0
	for i, d := range ne {
		if d != 1 {
			last = i
		}
	}
	return ne[:last+1+f.in.n(MaxDims-last)]
}

// stride draws a byte stride or offset for a view of a: one of a's own
// strides times a small factor, a multiple of the element size, or a value
// meant to overflow.
func (f *fuzzBuilder) stride(a *Tensor, ts uint64) uint64 {
	switch k := f.in.n(16); {
	case k < 6 && a != nil:
		return a.Nb[k%MaxDims] * uint64(f.in.n(3))
	case k < 12:
		return ts * uint64(f.in.n(16))
	case k == 12:
		return uint64(f.in.byte())
	case k == 13:
		return 1 << 62
	case k == 14:
		return math.MaxUint64 - uint64(f.in.byte())
	default:
		return ts << (f.in.byte() % 64)
	}
}

func (f *fuzzBuilder) typ() quant.Type {
	switch k := f.in.n(64); {
	case k < 40:
		return []quant.Type{quant.F32, quant.F16, quant.BF16, quant.I32}[k%4]
	case k < 63:
		types := quant.Types()
		return types[f.in.n(len(types))]
	default:
		return quant.Type(f.in.n(int(quant.TypeCount) + 2)) // removed or unknown, now and then
	}
}

// partner picks an earlier result that suits a for a binary op (broadcasts
// to a) or a copy (as many elements), or any result now and then.
func (f *fuzzBuilder) partner(a *Tensor, suits func(a, b *Tensor) bool) *Tensor {
	if a == nil || f.in.n(8) == 0 {
		return f.tensor()
	}
	var fit []*Tensor
	for _, b := range f.pool {
		if suits(a, b) {
			fit = append(fit, b)
		}
	}
	if len(fit) == 0 {
		return f.tensor()
	}
	return fit[f.in.n(256)%len(fit)]
}

var fuzzBinary = []func(c *Context, a, b *Tensor) *Tensor{
	(*Context).Add, (*Context).Sub, (*Context).Mul, (*Context).Div,
	(*Context).AddInplace, (*Context).SubInplace, (*Context).MulInplace, (*Context).DivInplace,
}

// call makes one call and returns its result, and whether it is a builder
// (SetName, SetInput and SetOutput return what they are given, nil or not).
func (f *fuzzBuilder) call() (*Tensor, bool) {
	a := f.tensor()
	switch f.in.n(16) {
	case 0:
		return f.c.SetName(a, string(make([]byte, f.in.n(80)))), false
	case 1:
		return SetInput(a), false
	case 2:
		return SetOutput(a), false
	case 3: // these set a MUL_MAT's parameters and may fail, but return nothing
		if f.in.n(2) == 0 {
			f.c.MulMatSetPrec(a, ops.Prec(f.in.n(4)-1))
		} else {
			f.c.MulMatSetHint(a, ops.OpHint(f.in.n(4)-1))
		}
		return a, false
	}
	return f.build(a), true
}

// build makes one builder call on a (and other earlier results).
func (f *fuzzBuilder) build(a *Tensor) *Tensor {
	c, in := f.c, f.in
	var bs, n int64 = 1, 0
	var ts uint64 = 4
	if a != nil && a.Type.Valid() {
		bs, ts, n = int64(a.Type.BlockSize()), uint64(a.Type.TypeSize()), a.NElements()
	}
	op := in.n(24)
	if len(f.pool) == 0 {
		op = 0 // something to build on
	}
	switch op {
	case 0, 1:
		typ := f.typ()
		b := int64(1)
		if typ.Valid() {
			b = int64(typ.BlockSize())
		}
		return c.NewTensor(typ, f.dims(b)...)
	case 2:
		return c.View1D(a, f.dim(bs), f.stride(a, ts))
	case 3:
		return c.View2D(a, f.dim(bs), f.dim(1), f.stride(a, ts), f.stride(a, ts))
	case 4:
		return c.View3D(a, f.dim(bs), f.dim(1), f.dim(1), f.stride(a, ts), f.stride(a, ts), f.stride(a, ts))
	case 5:
		return c.View4D(a, f.dim(bs), f.dim(1), f.dim(1), f.dim(1), f.stride(a, ts), f.stride(a, ts), f.stride(a, ts), f.stride(a, ts))
	case 6:
		return c.ViewTensor(a)
	case 7:
		if in.n(4) == 0 {
			return c.ReshapeAs(a, f.partner(a, func(a, b *Tensor) bool { return a.NElements() == b.NElements() }))
		}
		return c.Reshape(a, f.shapeOf(n, bs)...)
	case 8:
		if in.n(8) == 0 {
			return c.Permute(a, in.n(5), in.n(5), in.n(5), in.n(5))
		}
		p := [][4]int{{0, 1, 2, 3}, {1, 0, 2, 3}, {0, 2, 1, 3}, {2, 0, 1, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}}[in.n(6)]
		return c.Permute(a, p[0], p[1], p[2], p[3])
	case 9:
		return c.Transpose(a)
	case 10:
		if in.n(2) == 0 {
			return c.Cont(a)
		}
		return c.Cont(a, f.shapeOf(n, bs)...)
	case 11:
		return c.Cpy(a, f.partner(a, func(a, b *Tensor) bool { return a.NElements() == b.NElements() }))
	case 12:
		return c.Dup(a)
	case 13, 14:
		return fuzzBinary[in.n(len(fuzzBinary))](c, a, f.partner(a, func(a, b *Tensor) bool { return CanRepeat(b, a) }))
	case 15, 16:
		return f.reduce(a)
	case 17, 18:
		return f.elementwise(a)
	case 19, 20:
		return f.layout(a)
	case 21:
		switch f.in.n(3) {
		case 0:
			return c.MulMat(a, f.partner(a, func(a, b *Tensor) bool { return a.Ne[0] == b.Ne[0] }))
		case 1:
			return c.MulMatID(a, f.tensor(), f.tensor())
		default:
			return c.OutProd(a, f.partner(a, func(a, b *Tensor) bool { return a.Ne[1] == b.Ne[1] }))
		}
	default:
		// A raw operation node: any op number, type, shape and sources.
		var ne [MaxDims]int64
		for i := range ne {
			ne[i] = f.dim(1)
		}
		srcs := make([]*Tensor, in.n(12))
		for i := range srcs {
			srcs[i] = f.tensor()
		}
		return c.NewOp(ops.Op(in.n(int(ops.OpCount)+2)-1), f.typ(), ne, ops.Params{}, srcs...)
	}
}

// fuzzEps draws a norm's epsilon or a softmax scale: ordinary, zero,
// negative or not finite.
func (f *fuzzBuilder) fuzzEps() float32 {
	return []float32{1e-5, 0, -1, 0.125, float32(math.Inf(1)), float32(math.NaN())}[f.in.n(6)]
}

// reduce makes one call of the reductions, norms, softmax and sorting.
func (f *fuzzBuilder) reduce(a *Tensor) *Tensor {
	c, in := f.c, f.in
	k := int(f.dim(1))
	switch in.n(20) {
	case 0:
		return c.Sum(a)
	case 1:
		return c.SumRows(a)
	case 2:
		return c.Cumsum(a)
	case 3:
		return c.Mean(a)
	case 4:
		return c.Argmax(a)
	case 5:
		return c.Norm(a, f.fuzzEps())
	case 6:
		return c.NormInplace(a, f.fuzzEps())
	case 7:
		return c.RMSNorm(a, f.fuzzEps())
	case 8:
		return c.RMSNormInplace(a, f.fuzzEps())
	case 9:
		return c.L2Norm(a, f.fuzzEps())
	case 10:
		return c.L2NormInplace(a, f.fuzzEps())
	case 11:
		return c.GroupNorm(a, k, f.fuzzEps())
	case 12:
		return c.GroupNormInplace(a, k, f.fuzzEps())
	case 13:
		return c.SoftMax(a)
	case 14:
		return c.SoftMaxInplace(a)
	case 15:
		var mask *Tensor
		if in.n(4) > 0 {
			mask = f.tensor()
		}
		if in.n(2) == 0 {
			return c.SoftMaxExtInplace(a, mask, f.fuzzEps(), f.fuzzEps())
		}
		return c.SoftMaxExt(a, mask, f.fuzzEps(), f.fuzzEps())
	case 16:
		return c.SoftMaxAddSinks(a, f.tensor())
	case 17:
		return c.Argsort(a, ops.SortOrder(in.n(3)))
	case 18:
		return c.ArgsortTopK(a, k)
	default:
		return c.TopK(a, k)
	}
}

// small draws a small signed integer parameter (a stride, a padding, a
// dimension index), or now and then one that does not fit in int32.
func (f *fuzzBuilder) small() int {
	if f.in.n(32) == 0 {
		return []int{math.MaxInt32 + 1, math.MinInt32 - 1, math.MaxInt}[f.in.n(3)]
	}
	return f.in.n(9) - 2
}

// elementwise makes one call of the element-wise family: math, unary and
// GLU operations with any parameters.
func (f *fuzzBuilder) elementwise(a *Tensor) *Tensor {
	c, in := f.c, f.in
	b := f.partner(a, func(a, b *Tensor) bool { return SameShape(a, b) })
	inplace := in.n(2) == 0
	switch in.n(12) {
	case 0:
		ms := []func(*Context, *Tensor) *Tensor{
			(*Context).Sqr, (*Context).SqrInplace, (*Context).Sqrt, (*Context).SqrtInplace,
			(*Context).Log, (*Context).LogInplace, (*Context).Sin, (*Context).SinInplace,
			(*Context).Cos, (*Context).CosInplace,
		}
		return ms[in.n(len(ms))](c, a)
	case 1:
		if inplace {
			return c.ScaleBiasInplace(a, f.fuzzEps(), f.fuzzEps())
		}
		return c.ScaleBias(a, f.fuzzEps(), f.fuzzEps())
	case 2:
		if inplace {
			return c.ClampInplace(a, f.fuzzEps(), f.fuzzEps())
		}
		return c.Clamp(a, f.fuzzEps(), f.fuzzEps())
	case 3:
		return c.LeakyReLU(a, f.fuzzEps(), inplace)
	case 4:
		if inplace {
			return c.FillInplace(a, f.fuzzEps())
		}
		return c.Fill(a, f.fuzzEps())
	case 5:
		return c.Tri(a, ops.TriType(in.n(6)-1))
	case 6:
		u := ops.UnaryOp(in.n(int(ops.UnaryOpCount)+2) - 1)
		if inplace {
			return c.UnaryInplace(a, u)
		}
		return c.Unary(a, u)
	case 7:
		return c.XIELU(a, f.fuzzEps(), f.fuzzEps(), f.fuzzEps(), f.fuzzEps())
	case 8:
		return c.GLU(a, ops.GluOp(in.n(int(ops.GluOpCount)+2)-1), inplace)
	case 9:
		return c.GLUSplit(a, b, ops.GluOp(in.n(int(ops.GluOpCount)+2)-1))
	case 10:
		return c.SwiGLUOAI(a, b, f.fuzzEps(), f.fuzzEps())
	default:
		return c.SwiGLUClamp(a, b, f.fuzzEps())
	}
}

// layout makes one call of the layout family: repeat, concat, set, cast,
// get/set rows, diag, pad, im2col and pooling, with any parameters.
func (f *fuzzBuilder) layout(a *Tensor) *Tensor {
	c, in := f.c, f.in
	b := f.tensor()
	var ts uint64 = 4
	if a != nil && a.Type.Valid() {
		ts = uint64(a.Type.TypeSize())
	}
	switch in.n(13) {
	case 0:
		return c.Repeat(a, f.partner(a, func(a, b *Tensor) bool { return CanRepeat(a, b) }))
	case 1:
		return c.Repeat4D(a, f.dim(1), f.dim(1), f.dim(1), f.dim(1))
	case 2:
		return c.Concat(a, b, f.small())
	case 3:
		st := func() uint64 { return f.stride(a, ts) }
		switch in.n(6) {
		case 0:
			return c.Set(a, b, st(), st(), st(), st())
		case 1:
			return c.SetInplace(a, b, st(), st(), st(), st())
		case 2:
			return c.Set1D(a, b, st())
		case 3:
			return c.Set1DInplace(a, b, st())
		case 4:
			return c.Set2D(a, b, st(), st())
		default:
			return c.Set2DInplace(a, b, st(), st())
		}
	case 4:
		return c.DupInplace(a)
	case 5:
		return c.Cast(a, f.typ())
	case 6:
		return c.GetRows(a, b)
	case 7:
		return c.SetRows(a, b, f.tensor())
	case 8:
		return c.Diag(a)
	case 9:
		switch in.n(4) {
		case 0:
			return c.Pad(a, f.small(), f.small(), f.small(), f.small())
		case 1:
			return c.PadCircular(a, f.small(), f.small(), f.small(), f.small())
		case 2:
			return c.PadExt(a, f.small(), f.small(), f.small(), f.small(), f.small(), f.small(), f.small(), f.small())
		default:
			return c.PadExtCircular(a, f.small(), f.small(), f.small(), f.small(), f.small(), f.small(), f.small(), f.small())
		}
	case 10:
		return c.Im2Col(a, b, f.small(), f.small(), f.small(), f.small(), f.small(), f.small(), in.n(2) == 0, f.typ())
	default:
		p := func() float32 { return []float32{0, 1, 0.5, -1, float32(math.Inf(1)), 3e9}[in.n(6)] }
		return c.Pool2D(a, ops.PoolOp(in.n(4)-1), f.small(), f.small(), f.small(), f.small(), p(), p())
	}
}

// FuzzBuilder interprets its input as sequences of builder calls on
// earlier results, each in a new Context. No call may panic; a nil result
// leaves an error, which stays the first one (later calls return nil, and
// Build returns it); without an error the results build into a graph whose
// tensors hold exactly their memory.
func FuzzBuilder(f *testing.F) {
	f.Add([]byte{1, 0, 0, 5, 4, 3, 0, 1, 13, 0, 0, 1})
	f.Add([]byte{1, 0, 0, 4, 2, 2, 6, 2, 2, 0, 1, 1, 5, 1, 1, 2, 3, 9, 1, 0, 10, 1, 2})
	f.Add([]byte{0, 1, 0, 3, 10, 11, 12, 5, 0, 0, 3, 2, 10, 3, 0, 9, 0})
	f.Add([]byte{1, 0, 4, 4, 6, 7, 8, 6, 9, 0, 0, 9, 0, 12, 0, 10, 1, 0, 8, 1, 3, 0, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{b: data}
		for segment := 0; len(in.b) > 0 && segment < 8; segment++ {
			fuzzSegment(t, in)
		}
	})
}

// fuzzSegment runs builder calls in a new Context until an error, the end
// of the input or 48 calls, and checks the outcome.
func fuzzSegment(t *testing.T, in *fuzzInput) {
	fb := &fuzzBuilder{t: t, in: in, alloc: in.n(2) == 1}
	fb.c = NewContext(ContextOptions{Alloc: fb.alloc})
	var first error
	extra := 3 // calls after the first error, all of which must fail alike
	for steps := 0; len(in.b) > 0 && steps < 48 && extra > 0; steps++ {
		before := len(fb.c.Tensors())
		r, builder := fb.call()
		err := fb.c.Err()
		switch {
		case first != nil && err != first:
			t.Fatalf("error changed from %v to %v", first, err)
		case first != nil && builder && r != nil:
			t.Fatalf("a builder returned %s after the error %v", r, first)
		case !builder:
		case r == nil && err == nil:
			t.Fatal("a builder returned nil without recording an error")
		case r != nil && err == nil:
			fb.pool = append(fb.pool, r)
		}
		if err != nil && len(fb.c.Tensors()) > before {
			t.Fatalf("a failed call left %d tensors", len(fb.c.Tensors())-before)
		}
		if first = err; first != nil {
			extra--
		}
	}
	var outs []*Tensor
	for range 1 + in.n(3) {
		if o := fb.tensor(); o != nil {
			outs = append(outs, o)
		}
	}
	g, err := fb.c.Build(outs...)
	if first != nil {
		if err != first {
			t.Fatalf("Build returned %v, want the first error %v", err, first)
		}
		return
	}
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	checkTensors(t, fb.c, fb.alloc)
	checkGraph(t, g)
}

// checkTensors: every tensor's memory is exactly NBytes, and a view's lies
// inside its source's memory.
func checkTensors(t *testing.T, c *Context, alloc bool) {
	for _, x := range c.Tensors() {
		partial := x.Ne[0]%int64(x.Type.BlockSize()) != 0
		if x.ViewSrc != nil {
			if x.ViewSrc.ViewSrc != nil {
				t.Fatalf("%s views a view", x)
			}
			if n := x.NBytes(); !partial && n > 0 && (x.ViewOffs > x.ViewSrc.NBytes() || n > x.ViewSrc.NBytes()-x.ViewOffs) {
				t.Fatalf("%s: %d bytes at %d exceed its source's %d", x, n, x.ViewOffs, x.ViewSrc.NBytes())
			}
		}
		if !alloc {
			if x.Data != nil {
				t.Fatalf("%s has memory without Alloc", x)
			}
			continue
		}
		if x.Data == nil {
			t.Fatalf("%s has no memory", x)
		}
		if !partial && uint64(len(x.Data)) != x.NBytes() {
			t.Fatalf("%s has %d bytes of memory, NBytes %d", x, len(x.Data), x.NBytes())
		}
		if x.ViewSrc != nil && len(x.Data) > 0 && unsafe.SliceData(x.Data) != &x.ViewSrc.Data[x.ViewOffs] {
			t.Fatalf("%s does not start at offset %d of its source", x, x.ViewOffs)
		}
	}
}

// checkGraph: sources come first, nodes are marked for computing, and the
// views and hash work.
func checkGraph(t *testing.T, g *Graph) {
	seen := map[*Tensor]bool{}
	for _, l := range g.Leafs {
		if l.Op != ops.None || seen[l] {
			t.Fatalf("bad leaf %s", l)
		}
		seen[l] = true
	}
	for _, n := range g.Nodes {
		for _, s := range n.Src {
			if s != nil && !g.Contains(s) {
				t.Fatalf("source %s of %s is not in the graph", s, n)
			}
			// Cast's result is its own second source, as in ggml.
			if s != nil && s != n && s.Op != ops.None && !seen[s] {
				t.Fatalf("source %s of %s comes after it", s, n)
			}
		}
		if seen[n] || (n.Op != ops.None && n.Flags&FlagCompute == 0) {
			t.Fatalf("bad node %s", n)
		}
		seen[n] = true
	}
	v, err := g.View(0, len(g.Nodes))
	if err != nil || len(v.Nodes) != len(g.Nodes) {
		t.Fatalf("View: %v", err)
	}
	_ = g.Hash()
	_ = v.Hash()
}
