package ggmlref_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

func TestCPUBufferTypeLimits(t *testing.T) {
	align, maxSize, err := reftest.Lib(t).CPUBufferTypeLimits()
	require.NoError(t, err)
	assert.EqualValues(t, 32, align)
	assert.EqualValues(t, uint64(math.MaxUint64), maxSize)
}

func TestOpCanInplace(t *testing.T) {
	tab, err := reftest.Lib(t).OpCanInplace()
	require.NoError(t, err)
	require.Len(t, tab, ggmlref.OpCount)
	assert.True(t, tab[opAdd])
	assert.False(t, tab[29], "MUL_MAT")
	assert.True(t, tab[50], "CLAMP, new since 0.21.0")
}

// TestGraphAllocator places c = a + b, d = c * c in ggml's compute buffer:
// a and b (leafs) first, c in place over a (its only reader), d where b
// was (c is read twice, so d cannot run in place).
func TestGraphAllocator(t *testing.T) {
	l := reftest.Lib(t)
	ctx, err := l.NewContext(8*l.TensorOverhead()+l.GraphOverhead(8), true)
	require.NoError(t, err)
	defer ctx.Free()
	ne := [4]int64{64, 1, 1, 1}
	ts := make([]*ggmlref.Tensor, 4)
	for i := range ts {
		ts[i], err = ctx.NewTensor(typeF32, ne)
		require.NoError(t, err)
	}
	a, b, c, d := ts[0], ts[1], ts[2], ts[3]
	c.Op, c.Src[0], c.Src[1] = opAdd, a, b
	d.Op, d.Src[0], d.Src[1] = 7, c, c // MUL
	g, err := ctx.NewGraph(8)
	require.NoError(t, err)
	require.NoError(t, g.BuildForwardExpand(d))

	size, err := ctx.ContextTensorsSize()
	require.NoError(t, err)
	assert.EqualValues(t, 4*256, size, "four tensors of 256 bytes, none allocated")

	ga, err := l.NewGraphAllocator()
	require.NoError(t, err)
	assert.Zero(t, ga.BufferSize())
	require.NoError(t, ga.Reserve(g))
	assert.EqualValues(t, 2*256, ga.BufferSize())
	require.NoError(t, ga.AllocGraph(g))
	for _, x := range ts {
		require.NotNil(t, x.Data)
	}
	assert.Equal(t, a.Data, c.Data, "c runs in place over a")
	assert.Equal(t, b.Data, d.Data, "b is dead once c is computed")
	ga.Free()
	ga.Free()
	assert.Zero(t, ga.BufferSize())
	assert.Error(t, ga.Reserve(g), "freed")
	assert.Error(t, ga.AllocGraph(nil))
}
