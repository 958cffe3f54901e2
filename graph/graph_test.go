package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func TestBuildErrors(t *testing.T) {
	c := NewContext(ContextOptions{})
	a := c.NewTensor(quant.F32, 4)
	g, err := c.Build(a, nil)
	require.Nil(t, g)
	require.ErrorIs(t, err, ErrNil)
	require.NoError(t, c.Err(), "a bad Build argument does not poison the Context")
	g, err = c.Build()
	require.Nil(t, g)
	require.ErrorIs(t, err, ErrArgument, "a graph of nothing is a mistake; NewGraph makes an empty one on purpose")
}

// TestBuildOrder: sources before users, left to right, each tensor once;
// leafs named leaf_N and nodes node_N unless named.
func TestBuildOrder(t *testing.T) {
	c := NewContext(ContextOptions{})
	x := c.NewTensor(quant.F32, 4, 2)
	y := c.SetName(c.NewTensor(quant.F32, 4), "y")
	s := c.Add(x, y)
	p := c.Mul(s, s)
	q := c.SetName(c.Sub(p, x), "q")
	w := c.NewTensor(quant.F32, 4, 2)
	w.Flags |= FlagParam // a parameter is a node, though it has no op
	r := c.Div(q, w)
	g, err := c.Build(r, s)
	require.NoError(t, err)
	require.Equal(t, []*Tensor{x, y}, g.Leafs)
	require.Equal(t, []*Tensor{s, p, q, w, r}, g.Nodes)
	require.Equal(t, "leaf_0", x.Name)
	require.Equal(t, "y", y.Name)
	require.Equal(t, []string{"node_0", "node_1", "q", "node_3", "node_4"},
		[]string{s.Name, p.Name, q.Name, w.Name, r.Name})
	for _, n := range []*Tensor{s, p, q, r} {
		require.Equal(t, FlagCompute, n.Flags&FlagCompute, "%s", n)
	}
	require.Zero(t, w.Flags&FlagCompute)
	require.Zero(t, x.Flags&FlagCompute)
	require.Equal(t, 2, g.UseCount(x))
	require.Equal(t, 1, g.UseCount(y))
	require.Equal(t, 2, g.UseCount(s))
	require.Equal(t, 1, g.UseCount(p))
	require.Equal(t, 0, g.UseCount(r))
	unused := c.NewTensor(quant.F32, 1)
	require.False(t, g.Contains(unused))
	require.Zero(t, g.UseCount(unused))

	// Expanding again adds nothing.
	g.Expand(r)
	g.Expand(x)
	require.Len(t, g.Nodes, 5)
	require.Len(t, g.Leafs, 2)
	require.Equal(t, 2, g.UseCount(x))
}

// TestBuildDeepChain: a long chain builds without deep recursion.
func TestBuildDeepChain(t *testing.T) {
	c := NewContext(ContextOptions{})
	x := c.NewTensor(quant.F32, 2)
	y := x
	const n = 200000
	for range n {
		y = c.Add(y, x)
	}
	g, err := c.Build(y)
	require.NoError(t, err)
	require.Len(t, g.Nodes, n)
	require.Equal(t, []*Tensor{x}, g.Leafs)
	require.Equal(t, n+1, g.UseCount(x))
	require.Same(t, y, g.Nodes[n-1])
}

func TestGraphView(t *testing.T) {
	c := NewContext(ContextOptions{})
	x := c.NewTensor(quant.F32, 4)
	a := c.Add(x, x)
	b := c.Mul(a, x)
	d := c.Sub(b, a)
	g, err := c.Build(d)
	require.NoError(t, err)
	v, err := g.View(1, 3)
	require.NoError(t, err)
	require.Equal(t, []*Tensor{b, d}, v.Nodes)
	require.Empty(t, v.Leafs)
	require.True(t, v.Contains(b))
	require.False(t, v.Contains(a))
	require.False(t, v.Contains(x))
	// Use counts are the whole graph's, as ggml_graph_view shares them: a
	// is used by b and d, though only d and b are in the view.
	require.Equal(t, 2, v.UseCount(a))
	require.Equal(t, 3, v.UseCount(x))
	require.Equal(t, 1, v.UseCount(b))
	// Appending to the view must not write into g.
	v.Nodes = append(v.Nodes, x)
	require.Len(t, g.Nodes, 3)

	for _, r := range [][2]int{{0, 0}, {3, 3}, {0, 3}} {
		v, err := g.View(r[0], r[1])
		require.NoError(t, err)
		require.Len(t, v.Nodes, r[1]-r[0])
	}
	for _, r := range [][2]int{{-1, 1}, {0, 4}, {2, 1}, {4, 4}} {
		_, err := g.View(r[0], r[1])
		require.ErrorIs(t, err, ErrArgument, "%v", r)
	}
}

// hashProgram builds the same small graph each call; mutate may change one
// thing in it before the build.
func hashProgram(mutate func(c *Context, ts map[string]*Tensor)) *Graph {
	c := NewContext(ContextOptions{Alloc: true})
	ts := map[string]*Tensor{}
	ts["x"] = c.NewTensor(quant.F32, 8, 4)
	ts["y"] = c.NewTensor(quant.F32, 8)
	ts["z"] = c.NewTensor(quant.F32, 8)
	ts["s"] = c.Add(ts["x"], ts["y"])
	ts["v"] = c.View2D(ts["s"], 4, 4, 32, 16)
	ts["m"] = c.Mul(ts["v"], c.View1D(ts["z"], 4, 0))
	ts["out"] = c.Cont(c.Transpose(ts["m"]))
	if mutate != nil {
		mutate(c, ts)
	}
	g, err := c.Build(ts["out"])
	if err != nil {
		panic(err)
	}
	return g
}

func TestHash(t *testing.T) {
	base := hashProgram(nil).Hash()
	require.Equal(t, base, hashProgram(nil).Hash(), "deterministic")
	same := map[string]func(c *Context, ts map[string]*Tensor){
		"names": func(c *Context, ts map[string]*Tensor) {
			for k, x := range ts {
				c.SetName(x, "renamed "+k)
			}
		},
		"data": func(c *Context, ts map[string]*Tensor) {
			ts["x"].Data[0], ts["z"].Data[3] = 1, 2
		},
		"extra":          func(c *Context, ts map[string]*Tensor) { ts["x"].Extra = 7 },
		"compute flag":   func(c *Context, ts map[string]*Tensor) { ts["out"].Flags |= FlagCompute },
		"unused tensors": func(c *Context, ts map[string]*Tensor) { c.Add(ts["x"], ts["x"]) },
	}
	for name, f := range same {
		require.Equal(t, base, hashProgram(f).Hash(), name)
	}
	differ := map[string]func(c *Context, ts map[string]*Tensor){
		"op": func(c *Context, ts map[string]*Tensor) { ts["s"].Op = ops.Sub },
		"param": func(c *Context, ts map[string]*Tensor) {
			ts["s"].Params.SetI32(15, 1)
		},
		"type": func(c *Context, ts map[string]*Tensor) {
			ts["out"] = c.Cpy(ts["out"], c.NewTensor(quant.F16, 4, 4))
		},
		"leaf type": func(c *Context, ts map[string]*Tensor) { ts["y"].Type = quant.F16 },
		"shape": func(c *Context, ts map[string]*Tensor) {
			ts["out"] = c.Cont(ts["m"], 16)
		},
		"stride": func(c *Context, ts map[string]*Tensor) { ts["v"].Nb[1] = 28 },
		"offset": func(c *Context, ts map[string]*Tensor) { ts["v"].ViewOffs = 0 },
		"input":  func(c *Context, ts map[string]*Tensor) { SetInput(ts["x"]) },
		"output": func(c *Context, ts map[string]*Tensor) { SetOutput(ts["out"]) },
		"source": func(c *Context, ts map[string]*Tensor) { ts["s"].Src[1] = ts["z"] },
		"swap":   func(c *Context, ts map[string]*Tensor) { ts["s"].Src[0], ts["s"].Src[1] = ts["y"], ts["x"] },
		"more": func(c *Context, ts map[string]*Tensor) {
			ts["out"] = c.Add(ts["out"], ts["out"])
		},
	}
	seen := map[uint64]string{base: "base"}
	for name, f := range differ {
		h := hashProgram(f).Hash()
		prev, dup := seen[h]
		require.False(t, dup, "%s hashes as %s", name, prev)
		seen[h] = name
	}
}

// TestHashOfViews: in a graph view, sources outside it count by layout and
// by which of them coincide.
func TestHashOfViews(t *testing.T) {
	hash := func(typ quant.Type, sameSrc bool) uint64 {
		c := NewContext(ContextOptions{})
		x := c.NewTensor(quant.F32, 4)
		a := c.Dup(x)
		b := c.Cpy(x, c.NewTensor(typ, 4))
		if sameSrc {
			b = a
		}
		s := c.Add(a, b)
		g, err := c.Build(s)
		if err != nil {
			panic(err)
		}
		v, err := g.View(len(g.Nodes)-1, len(g.Nodes))
		if err != nil {
			panic(err)
		}
		return v.Hash()
	}
	require.Equal(t, hash(quant.F32, false), hash(quant.F32, false))
	require.NotEqual(t, hash(quant.F32, false), hash(quant.F16, false), "an outside source's type")
	require.NotEqual(t, hash(quant.F32, false), hash(quant.F32, true), "Add(a, b) is not Add(a, a)")
}
