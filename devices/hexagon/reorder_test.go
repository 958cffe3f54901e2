package hexagon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

func names(ts []*graph.Tensor) []string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Name)
	}
	return s
}

// TestGraphOptimize: quantized matmuls sharing src1 are stacked, fused
// pairs move together, and a matmul is not moved across a node that
// writes what it reads.
func TestGraphOptimize(t *testing.T) {
	b := &hexBackend{dev: &device{opts: DefaultOptions()}}
	ctx := graph.NewContext(graph.ContextOptions{})
	x := ctx.NewTensor(quant.F32, 64, 2)
	w := func() *graph.Tensor { return ctx.NewTensor(quant.Q4_0, 64, 32) }
	k := ctx.SetName(ctx.MulMat(w(), x), "k")
	kr := ctx.SetName(ctx.Sqr(k), "kr")
	v := ctx.SetName(ctx.MulMat(w(), x), "v")
	vb := ctx.SetName(ctx.Add(v, ctx.NewTensor(quant.F32, 32, 2)), "vb") // fused with v
	q := ctx.SetName(ctx.MulMat(w(), x), "q")
	f := ctx.SetName(ctx.MulMat(ctx.NewTensor(quant.F16, 64, 32), x), "f16") // not quantized: stays
	g, err := ctx.Build(kr, vb, q, f)
	require.NoError(t, err)
	require.Equal(t, []string{"k", "kr", "v", "vb", "q", "f16"}, names(g.Nodes))
	require.NoError(t, b.GraphOptimize(g))
	require.Equal(t, []string{"k", "v", "vb", "q", "kr", "f16"}, names(g.Nodes))

	// A CPY into x between two matmuls of x keeps the second after it.
	ctx = graph.NewContext(graph.ContextOptions{})
	x = ctx.NewTensor(quant.F32, 64, 2)
	a := ctx.SetName(ctx.MulMat(w(), x), "a")
	cp := ctx.SetName(ctx.Cpy(ctx.NewTensor(quant.F32, 64, 2), x), "cpy")
	c := ctx.SetName(ctx.MulMat(w(), x), "c")
	g, err = ctx.Build(a, cp, c)
	require.NoError(t, err)
	before := names(g.Nodes)
	require.NoError(t, b.GraphOptimize(g))
	require.Equal(t, before, names(g.Nodes))
}
