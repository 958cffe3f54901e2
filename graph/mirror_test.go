package graph

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// mirror makes the same random builder calls here and in a ggml context,
// keeping the pairs of results, so every field of every tensor and the
// graphs built from them can be compared. Some calls are invalid on
// purpose: ggml must abort (caught by ggmlref.Catch) exactly when the
// builder here records an error, except where the builders here are
// knowingly stricter than ggml.
type mirror struct {
	t   *testing.T
	rng *rand.Rand
	rc  *refCtx
	gs  []*Tensor
	cs  []*cTensor
	log []string
	// refused counts calls both sides refused; stricter, by reason, calls
	// only this side refused.
	refused  int
	stricter map[string]int
}

func newMirror(t *testing.T, seed int64) *mirror {
	return &mirror{t: t, rng: rand.New(rand.NewSource(seed)), rc: newRefCtx(t), stricter: map[string]int{}}
}

func (m *mirror) trace() string { return strings.Join(m.log, "\n") }

// call makes one builder call on both sides. goCall gets a Context of its
// own, so that a refused call ends nothing: builders take sources from any
// Context. stricter names the check by which this side may refuse a call
// ggml accepts ("" when both must accept it).
func (m *mirror) call(what, stricter string, goCall func(c *Context) *Tensor, cCall func() *cTensor) {
	m.t.Helper()
	m.log = append(m.log, what)
	c := NewContext(ContextOptions{})
	g := goCall(c)
	var ct *cTensor
	abort := ggmlref.Catch(func() { ct = cCall() })
	switch {
	case abort != nil:
		require.Nil(m.t, g, "ggml refused %s (%v) but we made it\n%s", what, abort, m.trace())
		require.Error(m.t, c.Err())
		m.refused++
	case g == nil:
		require.NotEmpty(m.t, stricter, "we refused %s (%v), ggml made it\n%s", what, c.Err(), m.trace())
		require.Error(m.t, c.Err())
		m.stricter[stricter]++
	default:
		require.NoError(m.t, c.Err(), m.trace())
		m.adopt(g, ct)
	}
}

// adopt pairs g with c and, first, any sources a composite builder made
// on the way (ArgsortTopK's ARGSORT).
func (m *mirror) adopt(g *Tensor, c *cTensor) {
	m.t.Helper()
	for i, s := range c.Src {
		if s != nil && g.Src[i] != nil && !slices.Contains(m.cs, s) {
			m.adopt(g.Src[i], s)
		}
	}
	m.gs, m.cs = append(m.gs, g), append(m.cs, c)
	m.compare(g, c)
}

// goOf is the Go tensor paired with ggml tensor c (nil for nil).
func (m *mirror) goOf(c *cTensor) *Tensor {
	if c == nil {
		return nil
	}
	for i, x := range m.cs {
		if x == c {
			return m.gs[i]
		}
	}
	m.t.Fatalf("ggml tensor %p is not mirrored\n%s", c, m.trace())
	return nil
}

// compare requires every field ggml has to agree.
func (m *mirror) compare(g *Tensor, c *cTensor) {
	m.t.Helper()
	msg := fmt.Sprintf("%s vs ggml %q\n%s", g, c.GetName(), m.trace())
	require.EqualValues(m.t, c.Type, g.Type, msg)
	require.Equal(m.t, c.Ne, g.Ne, msg)
	require.Equal(m.t, c.Nb, g.Nb, msg)
	require.EqualValues(m.t, c.Op, g.Op, msg)
	require.Equal(m.t, ops.Params(c.OpParams), g.Params, msg)
	require.EqualValues(m.t, c.Flags, g.Flags, msg)
	for i := range MaxSrc {
		require.Same(m.t, m.goOf(c.Src[i]), g.Src[i], "src %d of %s", i, msg)
	}
	require.Same(m.t, m.goOf(c.ViewSrc), g.ViewSrc, "view_src of %s", msg)
	require.Equal(m.t, c.ViewOffs, g.ViewOffs, msg)
	require.Equal(m.t, c.GetName(), g.Name, msg)
}

// compareAll compares every pair again (flags and names change later).
func (m *mirror) compareAll() {
	m.t.Helper()
	for i := range m.gs {
		m.compare(m.gs[i], m.cs[i])
	}
}

// pick draws an earlier result, a recent one half of the time so that
// chains grow deep.
func (m *mirror) pick() int {
	if m.rng.Intn(2) == 0 {
		return len(m.gs) - 1 - m.rng.Intn(min(len(m.gs), 4))
	}
	return m.rng.Intn(len(m.gs))
}

// shape draws a small shape for typ.
func (m *mirror) shape(typ quant.Type) [MaxDims]int64 {
	var ne [MaxDims]int64
	for i := range ne {
		ne[i] = 1 + m.rng.Int63n(4)
		if m.rng.Intn(3) == 0 {
			ne[i] = 1
		}
	}
	ne[0] *= int64(typ.BlockSize())
	return ne
}

// factor draws a shape of n elements whose first dimension is a multiple
// of bs (n itself is one).
func (m *mirror) factor(n, bs int64) [MaxDims]int64 {
	ne := [MaxDims]int64{1, 1, 1, 1}
	d := divisors(n / bs)
	ne[0] = bs * d[m.rng.Intn(len(d))]
	rest := n / ne[0]
	for i := 1; i < MaxDims-1; i++ {
		d := divisors(rest)
		ne[i] = d[m.rng.Intn(len(d))]
		rest /= ne[i]
	}
	ne[MaxDims-1] = rest
	return ne
}

// misfactor is factor with one dimension off by one: a wrong count.
func (m *mirror) misfactor(n, bs int64) [MaxDims]int64 {
	ne := m.factor(n, bs)
	ne[1+m.rng.Intn(MaxDims-1)]++
	return ne
}

func divisors(n int64) []int64 {
	var out []int64
	for d := int64(1); d <= n; d++ {
		if n%d == 0 {
			out = append(out, d)
		}
	}
	return out
}

var mirrorTypes = []quant.Type{quant.F32, quant.F32, quant.F16, quant.BF16, quant.I32, quant.Q8_0, quant.Q4_K}

func (m *mirror) newTensor() {
	typ := mirrorTypes[m.rng.Intn(len(mirrorTypes))]
	ne := m.shape(typ)
	nd := 1 + m.rng.Intn(MaxDims)
	for i := nd; i < MaxDims; i++ {
		ne[i] = 1
	}
	why := ""
	switch bad := m.rng.Intn(20); {
	case bad == 0 && typ.BlockSize() > 1:
		ne[0]--
		why = "partial block"
	case bad == 1:
		ne[m.rng.Intn(nd)] = -1
		why = "negative"
	}
	m.call(fmt.Sprintf("NewTensor(%s, %v)", typ, ne[:nd]), why,
		func(c *Context) *Tensor { return c.NewTensor(typ, ne[:nd]...) },
		func() *cTensor { return m.rc.newTensor(typ, ne[:nd]...) })
}

// step makes one random builder call, valid or now and then not.
func (m *mirror) step() {
	if len(m.gs) == 0 || m.rng.Intn(6) == 0 {
		m.newTensor()
		return
	}
	i := m.pick()
	a, ca := m.gs[i], m.cs[i]
	r, cc := m.rc.r, m.rc.ctx
	name := func(op string) string { return fmt.Sprintf("%s(#%d)", op, i) }
	bad := m.rng.Intn(8) == 0
	bs := int64(a.Type.BlockSize())
	// A transposed quantized tensor has rows of partial blocks: ggml makes
	// nonsense of a new tensor of that shape, where we report an error.
	dense := ""
	if a.Ne[0]%bs != 0 {
		dense = "partial block"
	}
	switch m.rng.Intn(16) {
	case 14, 15:
		m.reduce(i, bad)
	case 0, 1:
		m.binary(i, bad, dense)
	case 2, 3:
		m.view(i, bad)
	case 4:
		m.call(name("ViewTensor"), "",
			func(c *Context) *Tensor { return c.ViewTensor(a) },
			func() *cTensor { return r.ViewTensor(cc, ca) })
	case 5:
		if a.IsEmpty() {
			return
		}
		ne := m.factor(a.NElements(), bs)
		if bad {
			ne = m.misfactor(a.NElements(), bs)
		}
		m.call(name(fmt.Sprintf("Reshape%v", ne)), "",
			func(c *Context) *Tensor { return c.Reshape(a, ne[:]...) },
			func() *cTensor { return r.Reshape4D(cc, ca, ne[0], ne[1], ne[2], ne[3]) })
	case 6:
		p := m.rng.Perm(MaxDims)
		if bad {
			p[m.rng.Intn(MaxDims)] = []int{4, p[(m.rng.Intn(3)+1)%MaxDims]}[m.rng.Intn(2)]
		}
		m.call(name(fmt.Sprintf("Permute%v", p)), "",
			func(c *Context) *Tensor { return c.Permute(a, p[0], p[1], p[2], p[3]) },
			func() *cTensor { return r.Permute(cc, ca, int32(p[0]), int32(p[1]), int32(p[2]), int32(p[3])) })
	case 7:
		m.call(name("Transpose"), "",
			func(c *Context) *Tensor { return c.Transpose(a) },
			func() *cTensor { return r.Transpose(cc, ca) })
	case 8:
		if !bad && (m.rng.Intn(2) == 0 || a.IsEmpty()) {
			m.call(name("Cont"), dense,
				func(c *Context) *Tensor { return c.Cont(a) },
				func() *cTensor { return r.Cont(cc, ca) })
			return
		}
		if a.IsEmpty() {
			return
		}
		ne := m.factor(a.NElements(), bs)
		if bad {
			ne = m.misfactor(a.NElements(), bs)
		}
		m.call(name(fmt.Sprintf("Cont%v", ne)), "",
			func(c *Context) *Tensor { return c.Cont(a, ne[:]...) },
			func() *cTensor { return r.Cont4D(cc, ca, ne[0], ne[1], ne[2], ne[3]) })
	case 9:
		// Copy into a new tensor of another shape and plain type, or into
		// an existing tensor of as many elements (or not, when bad).
		j := m.pick()
		if (m.gs[j].NElements() != a.NElements()) != bad || m.rng.Intn(2) == 0 {
			typ := mirrorTypes[m.rng.Intn(4)]
			ne := a.Ne
			if !a.IsEmpty() {
				ne = m.factor(a.NElements(), 1)
				if bad {
					ne = m.misfactor(a.NElements(), 1)
				}
			}
			n := len(m.gs)
			m.call(fmt.Sprintf("NewTensor(%s, %v)", typ, ne), "",
				func(c *Context) *Tensor { return c.NewTensor(typ, ne[:]...) },
				func() *cTensor { return m.rc.newTensor(typ, ne[:]...) })
			if len(m.gs) == n {
				return
			}
			j = n
		}
		b, cb := m.gs[j], m.cs[j]
		m.call(fmt.Sprintf("Cpy(#%d, #%d)", i, j), "",
			func(c *Context) *Tensor { return c.Cpy(a, b) },
			func() *cTensor { return r.Cpy(cc, ca, cb) })
	case 10:
		m.call(name("Dup"), dense,
			func(c *Context) *Tensor { return c.Dup(a) },
			func() *cTensor { return r.Dup(cc, ca) })
	case 11:
		n := m.rng.Intn(70)
		s := strings.Repeat(string(rune('a'+m.rng.Intn(26))), n)
		m.log = append(m.log, fmt.Sprintf("SetName(#%d, %d bytes)", i, n))
		(&Context{}).SetName(a, s)
		r.SetName(ca, s)
		m.compare(a, ca)
	case 12:
		m.log = append(m.log, fmt.Sprintf("SetInput/SetOutput(#%d)", i))
		if m.rng.Intn(2) == 0 {
			SetInput(a)
			r.SetInput(ca)
		} else {
			SetOutput(a)
			r.SetOutput(ca)
		}
		m.compareAll() // SetOutput marks what a views, too
	case 13:
		if a.Op != ops.None {
			return
		}
		m.log = append(m.log, fmt.Sprintf("SetParam(#%d)", i))
		a.Flags |= FlagParam
		r.SetParam(ca)
		m.compare(a, ca)
	}
}

// binary adds a random binary op of tensor i and one that broadcasts to it
// (or, when bad, one that does not).
func (m *mirror) binary(i int, bad bool, dense string) {
	a := m.gs[i]
	var bs []int
	for j, b := range m.gs {
		if CanRepeat(b, a) != bad {
			bs = append(bs, j)
		}
	}
	if len(bs) == 0 {
		return
	}
	j := bs[m.rng.Intn(len(bs))]
	type bin struct {
		name string
		g    func(c *Context, a, b *Tensor) *Tensor
		c    func(ctx uintptr, a, b *cTensor) *cTensor
	}
	r := m.rc.r
	all := []bin{
		{"Add", (*Context).Add, r.Add}, {"Sub", (*Context).Sub, r.Sub},
		{"Mul", (*Context).Mul, r.Mul}, {"Div", (*Context).Div, r.Div},
		{"AddInplace", (*Context).AddInplace, r.AddInplace}, {"SubInplace", (*Context).SubInplace, r.SubInplace},
		{"MulInplace", (*Context).MulInplace, r.MulInplace}, {"DivInplace", (*Context).DivInplace, r.DivInplace},
	}
	o := all[m.rng.Intn(len(all))]
	if strings.HasSuffix(o.name, "Inplace") {
		dense = "" // a view of a, no new tensor
	}
	b, ca, cb := m.gs[j], m.cs[i], m.cs[j]
	m.call(fmt.Sprintf("%s(#%d, #%d)", o.name, i, j), dense,
		func(c *Context) *Tensor { return o.g(c, a, b) },
		func() *cTensor { return o.c(m.rc.ctx, ca, cb) })
}

// reduce adds a random reduction, norm, softmax or sort of tensor i (the
// reduce family's builders). Invalid arguments come from a itself (not F32,
// not contiguous, not a matrix), or from bad: a mask that does not fit, or
// k past the row.
func (m *mirror) reduce(i int, bad bool) {
	a, ca := m.gs[i], m.cs[i]
	r, cc := m.rc.r, m.rc.ctx
	eps := []float32{1e-5, 1e-6, 0.25}[m.rng.Intn(3)]
	k := int(m.rng.Int63n(a.Ne[0] + 1))
	if bad {
		k = int(a.Ne[0]) + 1 + m.rng.Intn(3)
	}
	type op struct {
		name string
		g    func(c *Context) *Tensor
		c    func() *cTensor
		// row is the length of the result's rows when it has a's type,
		// else 0: a partial block there is refused here.
		row int64
	}
	all := []op{
		{"Sum", func(c *Context) *Tensor { return c.Sum(a) }, func() *cTensor { return r.Sum(cc, ca) }, 1},
		{"SumRows", func(c *Context) *Tensor { return c.SumRows(a) }, func() *cTensor { return r.SumRows(cc, ca) }, 1},
		{"Cumsum", func(c *Context) *Tensor { return c.Cumsum(a) }, func() *cTensor { return r.Cumsum(cc, ca) }, a.Ne[0]},
		{"Mean", func(c *Context) *Tensor { return c.Mean(a) }, func() *cTensor { return r.Mean(cc, ca) }, 0},
		{"Argmax", func(c *Context) *Tensor { return c.Argmax(a) }, func() *cTensor { return r.Argmax(cc, ca) }, 0},
		{"Norm", func(c *Context) *Tensor { return c.Norm(a, eps) }, func() *cTensor { return r.Norm(cc, ca, eps) }, a.Ne[0]},
		{"NormInplace", func(c *Context) *Tensor { return c.NormInplace(a, eps) }, func() *cTensor { return r.NormInplace(cc, ca, eps) }, 0},
		{"RMSNorm", func(c *Context) *Tensor { return c.RMSNorm(a, eps) }, func() *cTensor { return r.RMSNorm(cc, ca, eps) }, a.Ne[0]},
		{"RMSNormInplace", func(c *Context) *Tensor { return c.RMSNormInplace(a, eps) }, func() *cTensor { return r.RMSNormInplace(cc, ca, eps) }, 0},
		{"L2Norm", func(c *Context) *Tensor { return c.L2Norm(a, eps) }, func() *cTensor { return r.L2Norm(cc, ca, eps) }, a.Ne[0]},
		{"L2NormInplace", func(c *Context) *Tensor { return c.L2NormInplace(a, eps) }, func() *cTensor { return r.L2NormInplace(cc, ca, eps) }, 0},
		{"GroupNorm", func(c *Context) *Tensor { return c.GroupNorm(a, k, eps) }, func() *cTensor { return r.GroupNorm(cc, ca, int32(k), eps) }, a.Ne[0]},
		{"GroupNormInplace", func(c *Context) *Tensor { return c.GroupNormInplace(a, k, eps) },
			func() *cTensor { return r.GroupNormInplace(cc, ca, int32(k), eps) }, 0},
		{"Argsort", func(c *Context) *Tensor { return c.Argsort(a, ops.SortOrder(k%2)) },
			func() *cTensor { return r.Argsort(cc, ca, int32(k%2)) }, 0},
		{"ArgsortTopK", func(c *Context) *Tensor { return c.ArgsortTopK(a, k) }, func() *cTensor { return r.ArgsortTopK(cc, ca, int32(k)) }, 0},
		{"TopK", func(c *Context) *Tensor { return c.TopK(a, k) }, func() *cTensor { return r.TopK(cc, ca, int32(k)) }, 0},
	}
	// Softmax, with a mask drawn from the results (fitting unless bad) and
	// ALiBi now and then, and sinks added afterwards.
	scale, maxBias := []float32{1, 0.125}[m.rng.Intn(2)], []float32{0, 0, 8}[m.rng.Intn(3)]
	var mask *Tensor
	var cmask *cTensor
	if m.rng.Intn(3) > 0 {
		var fit []int
		for j, x := range m.gs {
			ok := (x.Type == quant.F32 || x.Type == quant.F16) && x.IsContiguous() && x.Ne[0] == a.Ne[0] && x.Ne[1] >= a.Ne[1] &&
				x.Ne[2] > 0 && x.Ne[3] > 0 && a.Ne[2]%x.Ne[2] == 0 && a.Ne[3]%x.Ne[3] == 0
			if ok != bad {
				fit = append(fit, j)
			}
		}
		if len(fit) > 0 {
			j := fit[m.rng.Intn(len(fit))]
			mask, cmask = m.gs[j], m.cs[j]
		}
	}
	inplace := m.rng.Intn(2) == 0
	all = append(all, op{fmt.Sprintf("SoftMaxExt(mask %v, %g, %g, inplace %v)", mask, scale, maxBias, inplace),
		func(c *Context) *Tensor {
			if inplace {
				return c.SoftMaxExtInplace(a, mask, scale, maxBias)
			}
			return c.SoftMaxExt(a, mask, scale, maxBias)
		},
		func() *cTensor {
			if inplace {
				return r.SoftMaxExtInpl(cc, ca, cmask, scale, maxBias)
			}
			return r.SoftMaxExt(cc, ca, cmask, scale, maxBias)
		}, a.Ne[0] * int64(b2i(!inplace))})
	o := all[m.rng.Intn(len(all))]
	why := ""
	if o.row%int64(a.Type.BlockSize()) != 0 {
		why = "partial block"
	}
	m.call(fmt.Sprintf("%s(#%d) k=%d", o.name, i, k), why, o.g, o.c)
	if !strings.HasPrefix(o.name, "SoftMax") || m.gs[len(m.gs)-1].Op != ops.SoftMax || m.rng.Intn(2) == 0 {
		return
	}
	// Sinks: one F32 logit per head, or (when bad) a count that does not match.
	t, ct := m.gs[len(m.gs)-1], m.cs[len(m.cs)-1]
	if t.Src[2] != nil {
		return
	}
	heads := a.Ne[2]
	if bad {
		heads++
	}
	m.call(fmt.Sprintf("NewTensor(f32, [%d])", heads), "",
		func(c *Context) *Tensor { return c.NewTensor(quant.F32, heads) },
		func() *cTensor { return m.rc.newTensor(quant.F32, heads) })
	s, cs := m.gs[len(m.gs)-1], m.cs[len(m.cs)-1]
	m.log = append(m.log, "SoftMaxAddSinks")
	abort := ggmlref.Catch(func() { r.SoftMaxAddSinks(ct, cs) })
	got := NewContext(ContextOptions{}).SoftMaxAddSinks(t, s)
	require.Equal(m.t, abort == nil, got != nil, "ggml: %v\n%s", abort, m.trace())
	m.compare(t, ct)
}

// view adds a random 1-4D view of tensor i. Both sides check a view
// against the memory of the tensor it finally views (the root), from i's
// offset in it: a good view fits there, so both ggml's check (the dense
// size) and ours (the strided extent) pass; a bad one fails ggml's too, or
// only ours.
func (m *mirror) view(i int, bad bool) {
	a, ca := m.gs[i], m.cs[i]
	n := a.NBytes()
	if root := a.ViewSrc; root != nil {
		if a.ViewOffs >= root.NBytes() {
			return
		}
		n = root.NBytes() - a.ViewOffs
	}
	ts, bs := uint64(a.Type.TypeSize()), a.Type.BlockSize()
	if n < ts {
		return
	}
	nd := 1 + m.rng.Intn(MaxDims)
	for range 20 {
		v := &Tensor{Type: a.Type, Ne: [MaxDims]int64{1, 1, 1, 1}}
		for d := range nd {
			v.Ne[d] = 1 + m.rng.Int63n(3)
		}
		v.Ne[0] *= int64(bs)
		v.Nb[0] = ts
		v.Nb[1] = v.RowSize() + ts*uint64(m.rng.Intn(3))
		v.Nb[2] = v.Nb[1]*uint64(v.Ne[1]) + ts*uint64(m.rng.Intn(3))
		v.Nb[3] = v.Nb[2]*uint64(v.Ne[2]) + ts*uint64(m.rng.Intn(3))
		switch nd { // the strides the builders derive themselves
		case 1:
			v.Nb[1] = v.RowSize()
			v.Nb[2], v.Nb[3] = v.Nb[1], v.Nb[1]
		case 2:
			v.Nb[2] = v.Nb[1] * uint64(v.Ne[1])
			v.Nb[3] = v.Nb[2]
		case 3:
			v.Nb[3] = v.Nb[2] * uint64(v.Ne[2])
		}
		dense := v.RowSize() * uint64(v.Ne[1]*v.Ne[2]*v.Ne[3])
		extent := v.NBytes()
		why := ""
		var offs uint64
		switch {
		case !bad:
			if max(extent, dense) > n {
				continue
			}
			offs = ts * uint64(m.rng.Int63n(int64((n-max(extent, dense))/ts)+1))
		case dense <= n && extent > n:
			why = "strided extent" // ggml checks only the dense size
			offs = ts * uint64(m.rng.Int63n(int64((n-dense)/ts)+1))
		default: // the dense size does not fit either
			offs = n - min(dense, n) + ts*uint64(1+m.rng.Intn(3))
		}
		ne, nb := v.Ne, v.Nb
		what := fmt.Sprintf("View%dD(#%d, %v, %v, %d)", nd, i, ne, nb, offs)
		r, cc := m.rc.r, m.rc.ctx
		var g func(c *Context) *Tensor
		var c func() *cTensor
		switch nd {
		case 1:
			g = func(c *Context) *Tensor { return c.View1D(a, ne[0], offs) }
			c = func() *cTensor { return r.View1D(cc, ca, ne[0], uintptr(offs)) }
		case 2:
			g = func(c *Context) *Tensor { return c.View2D(a, ne[0], ne[1], nb[1], offs) }
			c = func() *cTensor { return r.View2D(cc, ca, ne[0], ne[1], uintptr(nb[1]), uintptr(offs)) }
		case 3:
			g = func(c *Context) *Tensor { return c.View3D(a, ne[0], ne[1], ne[2], nb[1], nb[2], offs) }
			c = func() *cTensor {
				return r.View3D(cc, ca, ne[0], ne[1], ne[2], uintptr(nb[1]), uintptr(nb[2]), uintptr(offs))
			}
		case 4:
			g = func(c *Context) *Tensor { return c.View4D(a, ne[0], ne[1], ne[2], ne[3], nb[1], nb[2], nb[3], offs) }
			c = func() *cTensor {
				return r.View4D(cc, ca, ne[0], ne[1], ne[2], ne[3], uintptr(nb[1]), uintptr(nb[2]), uintptr(nb[3]), uintptr(offs))
			}
		}
		m.call(what, why, g, c)
		return
	}
}

// TestBuildersMatchGGML makes random chains of builder calls on both sides
// and compares every field of every result with ggml's: shapes, strides,
// op, op_params, sources, view source and offset, flags and names; and
// requires an error here wherever ggml fails an assertion.
func TestBuildersMatchGGML(t *testing.T) {
	refused, stricter := 0, map[string]int{}
	for seed := range int64(300) {
		m := newMirror(t, seed)
		for range 40 {
			m.step()
		}
		m.compareAll()
		refused += m.refused
		for k, v := range m.stricter {
			stricter[k] += v
		}
	}
	t.Logf("calls both refused: %d; refused only here: %v", refused, stricter)
	require.Positive(t, refused)
	require.Len(t, stricter, 3)
}

// TestBuildMatchesGGML builds graphs from random outputs of random builder
// chains with Build and with ggml_build_forward_expand and compares the
// node and leaf order, the tensors' names and flags after the build, and
// every use count.
func TestBuildMatchesGGML(t *testing.T) {
	var nodes, leafs int
	for seed := range int64(300) {
		m := newMirror(t, 1000+seed)
		for range 10 + m.rng.Intn(90) {
			m.step()
		}
		if len(m.gs) == 0 {
			continue
		}
		var outs []*Tensor
		var couts []*cTensor
		for range 1 + m.rng.Intn(3) {
			i := m.pick()
			outs, couts = append(outs, m.gs[i]), append(couts, m.cs[i])
			m.log = append(m.log, fmt.Sprintf("output #%d", i))
		}
		g, err := NewContext(ContextOptions{}).Build(outs...)
		require.NoError(t, err)
		want := m.rc.build(couts...)
		msg := m.trace()
		require.Len(t, g.Nodes, len(want.Nodes), msg)
		require.Len(t, g.Leafs, len(want.Leafs), msg)
		for i, n := range want.Nodes {
			require.Same(t, m.goOf(n), g.Nodes[i], "node %d\n%s", i, msg)
		}
		for i, l := range want.Leafs {
			require.Same(t, m.goOf(l), g.Leafs[i], "leaf %d\n%s", i, msg)
		}
		m.compareAll()
		for i, x := range m.gs {
			in := g.Contains(x)
			require.Equal(t, want.useCount(m.cs[i]) >= 0, in, "membership of #%d\n%s", i, msg)
			if in {
				require.Equal(t, want.useCount(m.cs[i]), g.UseCount(x), "use count of #%d\n%s", i, msg)
			} else {
				require.Zero(t, g.UseCount(x))
			}
		}
		nodes += len(g.Nodes)
		leafs += len(g.Leafs)
	}
	t.Logf("%d nodes and %d leafs in 300 graphs", nodes, leafs)
}
