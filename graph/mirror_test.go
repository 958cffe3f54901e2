package graph

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// mirror runs the same random builder calls on a Context and on a ggml
// context, keeping the pairs of tensors, so every field of every tensor and
// the graphs built from them can be compared. It only makes calls ggml
// accepts: an assertion in ggml would end the test process.
type mirror struct {
	t   *testing.T
	rng *rand.Rand
	rc  *refCtx
	ctx *Context
	gs  []*Tensor
	cs  []uintptr
	log []string
}

func newMirror(t *testing.T, seed int64) *mirror {
	return &mirror{t: t, rng: rand.New(rand.NewSource(seed)), rc: newRefCtx(t), ctx: NewContext(ContextOptions{})}
}

// add records the result of one call on both sides and compares them.
func (m *mirror) add(what string, g *Tensor, c uintptr) {
	m.t.Helper()
	m.log = append(m.log, what)
	require.NoError(m.t, m.ctx.Err(), m.trace())
	require.NotNil(m.t, g, m.trace())
	m.gs, m.cs = append(m.gs, g), append(m.cs, c)
	m.compare(g, c)
}

func (m *mirror) trace() string { return strings.Join(m.log, "\n") }

// goOf is the Go tensor paired with ggml tensor c (nil for nil).
func (m *mirror) goOf(c uintptr) *Tensor {
	if c == 0 {
		return nil
	}
	for i, x := range m.cs {
		if x == c {
			return m.gs[i]
		}
	}
	m.t.Fatalf("ggml tensor %#x is not mirrored\n%s", c, m.trace())
	return nil
}

// compare requires every field ggml has to agree.
func (m *mirror) compare(g *Tensor, c uintptr) {
	m.t.Helper()
	w := readTensor(c)
	msg := fmt.Sprintf("%s vs ggml %q\n%s", g, w.Name, m.trace())
	require.Equal(m.t, w.Type, g.Type, msg)
	require.Equal(m.t, w.Ne, g.Ne, msg)
	require.Equal(m.t, w.Nb, g.Nb, msg)
	require.Equal(m.t, w.Op, g.Op, msg)
	require.Equal(m.t, w.Params, g.Params, msg)
	require.Equal(m.t, w.Flags, g.Flags, msg)
	for i := range MaxSrc {
		require.Same(m.t, m.goOf(w.Src[i]), g.Src[i], "src %d of %s", i, msg)
	}
	require.Same(m.t, m.goOf(w.ViewSrc), g.ViewSrc, "view_src of %s", msg)
	require.Equal(m.t, w.ViewOffs, g.ViewOffs, msg)
	require.Equal(m.t, w.Name, g.Name, msg)
}

// compareAll compares every pair again (flags and names change later).
func (m *mirror) compareAll() {
	m.t.Helper()
	for i := range m.gs {
		m.compare(m.gs[i], m.cs[i])
	}
}

func (m *mirror) pick() int { return m.rng.Intn(len(m.gs)) }

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
	blocks := n / bs
	d := divisors(blocks)
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
	m.add(fmt.Sprintf("NewTensor(%s, %v)", typ, ne[:nd]), m.ctx.NewTensor(typ, ne[:nd]...), m.rc.newTensor(typ, ne[:nd]...))
}

// step makes one random builder call on both sides.
func (m *mirror) step() {
	if len(m.gs) == 0 || m.rng.Intn(6) == 0 {
		m.newTensor()
		return
	}
	i := m.pick()
	a, ca := m.gs[i], m.cs[i]
	r, ctx, cc := m.rc.r, m.ctx, m.rc.ctx
	name := func(op string) string { return fmt.Sprintf("%s(#%d)", op, i) }
	// A transposed quantized tensor has rows of partial blocks: ggml makes
	// nonsense of a new tensor of that shape, where we report an error.
	partial := a.Ne[0]%int64(a.Type.BlockSize()) != 0
	op := m.rng.Intn(14)
	if partial && (op <= 1 || op == 8 || op == 10) {
		return
	}
	switch op {
	case 0, 1:
		m.binary(i)
	case 2, 3:
		m.view(i)
	case 4:
		m.add(name("ViewTensor"), ctx.ViewTensor(a), r.ViewTensor(cc, ca))
	case 5:
		if !a.IsContiguous() || a.IsEmpty() {
			return
		}
		ne := m.factor(a.NElements(), int64(a.Type.BlockSize()))
		m.add(name(fmt.Sprintf("Reshape%v", ne)), ctx.Reshape(a, ne[:]...), r.Reshape4D(cc, ca, ne[0], ne[1], ne[2], ne[3]))
	case 6:
		p := m.rng.Perm(MaxDims)
		m.add(name(fmt.Sprintf("Permute%v", p)), ctx.Permute(a, p[0], p[1], p[2], p[3]),
			r.Permute(cc, ca, int32(p[0]), int32(p[1]), int32(p[2]), int32(p[3])))
	case 7:
		m.add(name("Transpose"), ctx.Transpose(a), r.Transpose(cc, ca))
	case 8:
		if m.rng.Intn(2) == 0 || a.IsEmpty() {
			m.add(name("Cont"), ctx.Cont(a), r.Cont(cc, ca))
			return
		}
		ne := m.factor(a.NElements(), int64(a.Type.BlockSize()))
		m.add(name(fmt.Sprintf("Cont%v", ne)), ctx.Cont(a, ne[:]...), r.Cont4D(cc, ca, ne[0], ne[1], ne[2], ne[3]))
	case 9:
		// Copy into a new tensor of another shape and plain type, or into
		// an existing tensor of as many elements.
		j := m.pick()
		if m.gs[j].NElements() != a.NElements() || m.rng.Intn(2) == 0 {
			typ := mirrorTypes[m.rng.Intn(4)]
			ne := m.factor(a.NElements(), 1)
			if a.IsEmpty() {
				ne = a.Ne
			}
			m.add(fmt.Sprintf("NewTensor(%s, %v)", typ, ne), ctx.NewTensor(typ, ne[:]...), m.rc.newTensor(typ, ne[:]...))
			j = len(m.gs) - 1
		}
		m.add(fmt.Sprintf("Cpy(#%d, #%d)", i, j), ctx.Cpy(a, m.gs[j]), r.Cpy(cc, ca, m.cs[j]))
	case 10:
		m.add(name("Dup"), ctx.Dup(a), r.Dup(cc, ca))
	case 11:
		n := m.rng.Intn(70)
		s := strings.Repeat(string(rune('a'+m.rng.Intn(26))), n)
		m.log = append(m.log, fmt.Sprintf("SetName(#%d, %d bytes)", i, n))
		ctx.SetName(a, s)
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
		m.compare(a, ca)
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

// binary adds a random binary op of tensor i and a tensor that broadcasts to it.
func (m *mirror) binary(i int) {
	a := m.gs[i]
	var bs []int
	for j, b := range m.gs {
		if CanRepeat(b, a) {
			bs = append(bs, j)
		}
	}
	j := bs[m.rng.Intn(len(bs))]
	type bin struct {
		name string
		g    func(c *Context, a, b *Tensor) *Tensor
		c    func(ctx, a, b uintptr) uintptr
	}
	r := m.rc.r
	all := []bin{
		{"Add", (*Context).Add, r.Add}, {"Sub", (*Context).Sub, r.Sub},
		{"Mul", (*Context).Mul, r.Mul}, {"Div", (*Context).Div, r.Div},
		{"AddInplace", (*Context).AddInplace, r.AddInplace}, {"SubInplace", (*Context).SubInplace, r.SubInplace},
		{"MulInplace", (*Context).MulInplace, r.MulInplace}, {"DivInplace", (*Context).DivInplace, r.DivInplace},
	}
	o := all[m.rng.Intn(len(all))]
	m.add(fmt.Sprintf("%s(#%d, #%d)", o.name, i, j), o.g(m.ctx, a, m.gs[j]), o.c(m.rc.ctx, m.cs[i], m.cs[j]))
}

// view adds a random 1-4D view that fits in tensor i's own extent, so both
// ggml's check (dense size) and ours (strided extent) pass.
func (m *mirror) view(i int) {
	a, ca := m.gs[i], m.cs[i]
	n := a.NBytes()
	// NBytes means little for a transposed quantized tensor: stay inside
	// the memory a views, too.
	if root := a.ViewSrc; root != nil {
		if a.ViewOffs >= root.NBytes() {
			return
		}
		n = min(n, root.NBytes()-a.ViewOffs)
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
		size := max(v.NBytes(), dense)
		if size > n {
			continue
		}
		offs := ts * uint64(m.rng.Int63n(int64((n-size)/ts)+1))
		ne, nb := v.Ne, v.Nb
		what := fmt.Sprintf("View%dD(#%d, %v, %v, %d)", nd, i, ne, nb, offs)
		ctx, r, cc := m.ctx, m.rc.r, m.rc.ctx
		switch nd {
		case 1:
			m.add(what, ctx.View1D(a, ne[0], offs), r.View1D(cc, ca, ne[0], uintptr(offs)))
		case 2:
			m.add(what, ctx.View2D(a, ne[0], ne[1], nb[1], offs), r.View2D(cc, ca, ne[0], ne[1], uintptr(nb[1]), uintptr(offs)))
		case 3:
			m.add(what, ctx.View3D(a, ne[0], ne[1], ne[2], nb[1], nb[2], offs),
				r.View3D(cc, ca, ne[0], ne[1], ne[2], uintptr(nb[1]), uintptr(nb[2]), uintptr(offs)))
		case 4:
			m.add(what, ctx.View4D(a, ne[0], ne[1], ne[2], ne[3], nb[1], nb[2], nb[3], offs),
				r.View4D(cc, ca, ne[0], ne[1], ne[2], ne[3], uintptr(nb[1]), uintptr(nb[2]), uintptr(nb[3]), uintptr(offs)))
		}
		return
	}
}

// TestBuildersMatchGGML makes random chains of builder calls on both sides
// and compares every field of every result with ggml's: shapes, strides,
// op, op_params, sources, view source and offset, flags and names.
func TestBuildersMatchGGML(t *testing.T) {
	for seed := range int64(200) {
		m := newMirror(t, seed)
		for range 40 {
			m.step()
		}
		m.compareAll()
	}
}

// TestBuildMatchesGGML builds graphs from random outputs of random builder
// chains with Build and with ggml_build_forward_expand and compares the
// node and leaf order, the tensors' names and flags after the build, and
// every use count.
func TestBuildMatchesGGML(t *testing.T) {
	for seed := range int64(300) {
		m := newMirror(t, 1000+seed)
		for range 10 + m.rng.Intn(50) {
			m.step()
		}
		var outs []*Tensor
		var couts []uintptr
		for range 1 + m.rng.Intn(3) {
			i := m.pick()
			outs, couts = append(outs, m.gs[i]), append(couts, m.cs[i])
			m.log = append(m.log, fmt.Sprintf("output #%d", i))
		}
		g, err := m.ctx.Build(outs...)
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
	}
}
