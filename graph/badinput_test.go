package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// TestNewTensorMemSize: an Alloc Context refuses a tensor past its memory
// limit with ErrNoSpace (it used to die in make), and counts every
// allocation against it.
func TestNewTensorMemSize(t *testing.T) {
	c := NewContext(ContextOptions{Alloc: true})
	require.Nil(t, c.NewTensor(quant.F32, 1<<18, 1<<18))
	require.ErrorIs(t, c.Err(), ErrNoSpace)
	assert.Contains(t, c.Err().Error(), "MemSize")

	c = NewContext(ContextOptions{Alloc: true, MemSize: 1000})
	a := c.NewTensor(quant.F32, 100)
	require.NotNil(t, a)
	require.Len(t, a.Data, 400)
	require.NotNil(t, c.NewTensor(quant.F32, 150), "exactly the 600 bytes left")
	require.NotNil(t, c.View1D(a, 10, 0), "views take no memory")
	require.NoError(t, c.Err())
	require.Nil(t, c.NewTensor(quant.F32, 1))
	require.ErrorIs(t, c.Err(), ErrNoSpace)

	// Without Alloc, tensors are descriptions of any size.
	c = NewContext(ContextOptions{MemSize: 1})
	require.NotNil(t, c.NewTensor(quant.F32, 1<<18, 1<<18))
	require.NoError(t, c.Err())
}

// TestExpandNil: Expand(nil) is an error that leaves the graph as it was;
// the zero Graph can be expanded.
func TestExpandNil(t *testing.T) {
	var g Graph
	require.ErrorIs(t, g.Expand(nil), ErrNil)
	c := NewContext(ContextOptions{})
	a := c.NewTensor(quant.F32, 4)
	s := c.Add(a, a)
	require.NoError(t, g.Expand(s))
	require.Equal(t, []*Tensor{s}, g.Nodes)
	require.Equal(t, []*Tensor{a}, g.Leafs)
	require.Equal(t, 2, g.UseCount(a))
	require.ErrorIs(t, g.Expand(nil), ErrNil)
	require.Len(t, g.Nodes, 1)
}

// TestNilTensorAccessors: a nil *Tensor is a tensor of no elements to
// every method, as the Tensor doc says, instead of a nil dereference.
func TestNilTensorAccessors(t *testing.T) {
	var x *Tensor
	assert.Zero(t, x.NElements())
	assert.Zero(t, x.NRows())
	assert.Zero(t, x.NDims())
	assert.Zero(t, x.NBytes())
	assert.Zero(t, x.RowSize())
	assert.True(t, x.IsEmpty())
	for name, p := range map[string]func() bool{
		"IsView": x.IsView, "IsContiguous": x.IsContiguous, "IsContiguousRows": x.IsContiguousRows,
		"IsContiguous1": x.IsContiguous1, "IsContiguous2": x.IsContiguous2,
		"IsContiguousTo":          func() bool { return x.IsContiguousTo(2) },
		"IsContiguouslyAllocated": x.IsContiguouslyAllocated, "IsTransposed": x.IsTransposed,
		"IsPermuted": x.IsPermuted,
	} {
		assert.False(t, p(), name)
	}
	a := NewContext(ContextOptions{}).NewTensor(quant.F32, 4)
	assert.False(t, SameShape(x, a))
	assert.False(t, SameShape(a, x))
	assert.False(t, SameStride(x, a))
	assert.False(t, CanRepeat(x, a))
	assert.False(t, CanRepeatRows(a, x))
	assert.Equal(t, "<nil tensor>", x.String())
}

// TestRopeNDims: a ROPE that no kernel can compute (n_dims odd, zero or
// past the row) is refused by the builder with the reason, not at compute.
func TestRopeNDims(t *testing.T) {
	for _, tc := range []struct {
		nDims int32
		mode  ops.RopeMode
		err   error
		says  string
	}{
		{nDims: 3, err: ErrArgument, says: "even"},
		{nDims: 0, err: ErrArgument, says: "positive"},
		{nDims: -2, err: ErrArgument, says: "positive"},
		{nDims: 18, err: ErrShape, says: "larger than the rows"},
		{nDims: 16, mode: ops.RopeNeox},
		{nDims: 8},
	} {
		c := NewContext(ContextOptions{})
		a := c.NewTensor(quant.F32, 16, 2, 3)
		pos := c.NewTensor(quant.I32, 3)
		r := c.Rope(a, pos, tc.nDims, tc.mode)
		if tc.err == nil {
			require.NotNil(t, r, "n_dims %d", tc.nDims)
			require.NoError(t, c.Err())
			continue
		}
		require.Nil(t, r, "n_dims %d", tc.nDims)
		require.ErrorIs(t, c.Err(), tc.err)
		assert.Contains(t, c.Err().Error(), tc.says)
	}

	c := NewContext(ContextOptions{})
	a := c.NewTensor(quant.F32, 16, 2, 3)
	pos := c.NewTensor(quant.I32, 3)
	require.NotNil(t, c.RopeSetOffset(c.Rope(a, pos, 8, ops.RopeNeox), 8))
	require.Nil(t, c.RopeSetOffset(c.Rope(a, pos, 8, ops.RopeNeox), 10))
	require.ErrorIs(t, c.Err(), ErrShape)
}
