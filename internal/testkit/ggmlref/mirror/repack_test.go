package mirror_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// TestLoadRepacked: ggml's CPU_REPACK takes a Q4_0 weight (its product
// agrees with the plain one within ggml's own rounding differences) and
// refuses an F32 one, which stays in plain memory.
func TestLoadRepacked(t *testing.T) {
	e := executor(t)
	rng := rand.New(rand.NewSource(rand.Int63()))
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	wq := c.NewTensor(quant.Q4_0, 256, 16)
	wf := c.NewTensor(quant.F32, 256, 16)
	x := c.NewTensor(quant.F32, 256, 5)
	pq, pf := c.MulMat(wq, x), c.MulMat(wf, x)
	require.NoError(t, c.Err())
	w := make([]float32, 256*16)
	for i := range w {
		w[i] = 2*rng.Float32() - 1
	}
	q, err := quant.Quantize(quant.Q4_0, w, 16, 256, nil)
	require.NoError(t, err)
	copy(wq.Data, q)
	set(wf, w...)
	xs := make([]float32, x.NElements())
	for i := range xs {
		xs[i] = 2*rng.Float32() - 1
	}
	set(x, xs...)
	g, err := c.Build(pq, pf)
	require.NoError(t, err)

	l, err := e.Load(g)
	require.NoError(t, err)
	require.NoError(t, l.Compute())
	l.Read()
	plainQ, plainF := get(pq), get(pf)

	l, placed, err := e.LoadRepacked(g, []*graph.Tensor{wq, wf})
	require.NoError(t, err)
	require.Equal(t, []*graph.Tensor{wq}, placed)
	require.NoError(t, l.Compute())
	l.Read()
	require.Equal(t, plainF, get(pf))
	require.InDeltaSlice(t, plainQ, get(pq), 1e-3)
	require.NotEqual(t, make([]float32, len(plainQ)), get(pq))
}
