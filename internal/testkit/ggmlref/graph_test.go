package ggmlref_test

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

const (
	typeF32 = 0
	opAdd   = 2
)

func f32s(l *ggmlref.Lib, t *ggmlref.Tensor) []float32 {
	return unsafe.Slice((*float32)(t.Data), l.NBytes(t)/4)
}

// TestRawAdd builds c = a + b by writing the C tensor fields directly and
// computes it on the CPU backend.
func TestRawAdd(t *testing.T) {
	l := reftest.Lib(t)
	ctx, err := l.NewContext(3*(l.TensorOverhead()+64)+l.GraphOverhead(8)+l.GraphOverhead(1), false)
	require.NoError(t, err)
	defer ctx.Free()

	ne := [4]int64{3, 2, 1, 1}
	a, err := ctx.NewTensor(typeF32, ne)
	require.NoError(t, err)
	b, err := ctx.NewTensor(typeF32, ne)
	require.NoError(t, err)
	c, err := ctx.NewTensor(typeF32, ne)
	require.NoError(t, err)
	require.Equal(t, [4]uint64{4, 12, 24, 24}, c.Nb)
	require.EqualValues(t, 24, l.NBytes(c))
	for i := range 6 {
		f32s(l, a)[i] = float32(i)
		f32s(l, b)[i] = 10 * float32(i)
	}
	c.Op = opAdd
	c.Src[0], c.Src[1] = a, b
	c.SetName("sum of a and b")
	require.Equal(t, "sum of a and b", c.GetName())

	_, err = ctx.NewTensor(typeF32, [4]int64{1 << 20, 1, 1, 1})
	require.ErrorIs(t, err, ggmlref.ErrContextFull)
	_, err = ctx.NewTensor(4, ne) // Q4_2 was removed: no layout
	require.Error(t, err)
	_, err = ctx.NewTensor(99, ne)
	require.Error(t, err)

	g, err := ctx.NewGraph(8)
	require.NoError(t, err)
	require.NoError(t, g.BuildForwardExpand(c))
	require.Error(t, g.BuildForwardExpand(nil))
	small, err := ctx.NewGraph(1)
	require.NoError(t, err)
	var ae *ggmlref.AbortError
	require.ErrorAs(t, small.BuildForwardExpand(c), &ae, "two leafs do not fit a graph of size 1")
	require.Equal(t, 1, g.NNodes())
	require.Same(t, c, g.Node(0))
	require.Nil(t, g.Node(1))

	be, err := l.NewCPUBackend(2)
	require.NoError(t, err)
	defer be.Free()
	require.True(t, be.SupportsOp(c))
	require.NoError(t, be.Compute(g))
	require.Equal(t, []float32{0, 11, 22, 33, 44, 55}, f32s(l, c))

	c.Op = ggmlref.OpCount
	require.False(t, be.SupportsOp(c))
}

func TestNameTruncated(t *testing.T) {
	var x ggmlref.Tensor
	for i := range x.Name {
		x.Name[i] = 'x'
	}
	x.SetName("ab")
	require.Equal(t, "ab", x.GetName())
	x.SetName(strings.Repeat("0123456789", 7))
	require.Len(t, x.GetName(), ggmlref.MaxName-1)
}

// TestAbortCaught makes ggml's ADD kernel assert (b does not broadcast to
// a, which only the builder would have checked) and expects an error, not a
// dead process; a new backend computes again.
func TestAbortCaught(t *testing.T) {
	l := reftest.Lib(t)
	ctx, err := l.NewContext(4*(l.TensorOverhead()+64)+l.GraphOverhead(8), false)
	require.NoError(t, err)
	defer ctx.Free()
	a, err := ctx.NewTensor(typeF32, [4]int64{3, 2, 1, 1})
	require.NoError(t, err)
	b, err := ctx.NewTensor(typeF32, [4]int64{2, 1, 1, 1})
	require.NoError(t, err)
	c, err := ctx.NewTensor(typeF32, a.Ne)
	require.NoError(t, err)
	c.Op = opAdd
	c.Src[0], c.Src[1] = a, b
	g, err := ctx.NewGraph(8)
	require.NoError(t, err)
	require.NoError(t, g.BuildForwardExpand(c))

	be, err := l.NewCPUBackend(1)
	require.NoError(t, err)
	defer be.Free()
	err = be.Compute(g)
	var ae *ggmlref.AbortError
	require.ErrorAs(t, err, &ae)
	require.Regexp(t, `^\S+:\d+: GGML_ASSERT\(.*\) failed$`, ae.Message)
	require.Error(t, be.Compute(g), "an aborted backend refuses to compute")
	require.Equal(t, err, be.Aborted())
	be.Free()

	b.Ne[0], b.Nb[1], b.Nb[2], b.Nb[3] = 1, 4, 4, 4 // now it broadcasts
	be2, err := l.NewCPUBackend(1)
	require.NoError(t, err)
	defer be2.Free()
	require.NoError(t, be2.Compute(g))
}
