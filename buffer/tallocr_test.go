package buffer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant"
)

func TestTensorAllocator(t *testing.T) {
	b := cpuBuffer(t, 256)
	defer b.Free()
	ta, err := buffer.NewTensorAllocator(b)
	require.NoError(t, err)
	c := graph.NewContext(graph.ContextOptions{})
	x, y, z := f32(c, 3), f32(c, 20), f32(c, 33)
	require.NoError(t, ta.Alloc(x))
	require.NoError(t, ta.Alloc(y))
	assert.Equal(t, b.Base()+32, addr(y.Data), "each tensor aligned to 32")
	assert.EqualValues(t, 32+96, ta.Used())
	v := c.View1D(y, 4, 8)
	v.Buffer, v.Data = nil, nil
	require.NoError(t, ta.Alloc(v), "a view gets its source's memory")
	assert.Equal(t, addr(y.Data)+8, addr(v.Data))
	assert.EqualValues(t, 32+96, ta.Used(), "and takes none")
	assert.ErrorIs(t, ta.Alloc(z), buffer.ErrNoSpace)
	assert.Nil(t, z.Buffer)
	assert.EqualValues(t, 32+96, ta.Used(), "a tensor that does not fit takes nothing")
	require.NoError(t, ta.Alloc(f32(c, 32)), "what fits still does")
	assert.ErrorIs(t, ta.Alloc(x), buffer.ErrPlaced)
	assert.ErrorIs(t, ta.Alloc(c.View1D(f32(c, 4), 2, 0)), buffer.ErrNotPlaced)
	_, err = buffer.NewTensorAllocator(nil)
	assert.ErrorIs(t, err, buffer.ErrArgument)
}

// ctxTensors makes a context of weights of various types and sizes, and
// views of some.
func ctxTensors() *graph.Context {
	c := graph.NewContext(graph.ContextOptions{})
	for i, typ := range []quant.Type{quant.F32, quant.F16, quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.I32, quant.BF16} {
		w := c.NewTensor(typ, 256, int64(i+1))
		c.View1D(w, 32, 0)
		c.NewTensor(quant.F32, int64(7*i+1))
	}
	return c
}

func TestAllocContextTensors(t *testing.T) {
	c := ctxTensors()
	size, err := buffer.ContextTensorsSize(c, buffer.CPU())
	require.NoError(t, err)
	b, err := buffer.AllocContextTensors(c, buffer.CPU())
	require.NoError(t, err)
	defer b.Free()
	assert.Equal(t, size, b.Size())
	for _, x := range c.Tensors() {
		require.Same(t, b, x.Buffer.(buffer.Buffer), x.String())
		require.Len(t, x.Data, int(x.NBytes()), x.String())
		require.Zero(t, addr(x.Data)%buffer.TensorAlignment, x.String())
	}
	again, err := buffer.AllocContextTensors(c, buffer.CPU())
	require.NoError(t, err)
	assert.Nil(t, again, "every tensor has memory: nothing to allocate")

	// A type whose buffers hold at most 1 KiB splits the tensors over
	// several, each under the limit unless one tensor alone exceeds it.
	small, err := buffer.NewHostType("SMALL", "CPU", 32, 1024)
	require.NoError(t, err)
	c2 := ctxTensors()
	_, err = buffer.AllocContextTensors(c2, small)
	require.ErrorIs(t, err, buffer.ErrTooLarge, "the Q8_0 weights take 1088 bytes alone")
	for _, x := range c2.Tensors() {
		require.Nil(t, x.Buffer, "a failed allocation leaves no tensor placed")
	}
	small, err = buffer.NewHostType("SMALL", "CPU", 32, 2048)
	require.NoError(t, err)
	size2, err := buffer.ContextTensorsSize(c2, small)
	require.NoError(t, err)
	mb, err := buffer.AllocContextTensors(c2, small)
	require.NoError(t, err)
	m, ok := mb.(*buffer.Multi)
	require.True(t, ok, "a multi-buffer, got %T", mb)
	assert.Greater(t, len(m.Parts()), 2)
	assert.Equal(t, size2, m.Size())
	for _, p := range m.Parts() {
		assert.LessOrEqual(t, p.Size(), uint64(2048))
	}
	for _, x := range c2.Tensors() {
		require.NotNil(t, x.Data, x.String())
		require.NoError(t, m.MemsetTensor(x, 1, 0, x.NBytes()), "the multi-buffer reaches every tensor")
	}
	require.NoError(t, m.Free())
	for _, x := range c2.Tensors() {
		require.Nil(t, x.Data)
	}
}

// TestContextTensorsSizeVsGGML compares the size with
// ggml_backend_alloc_ctx_tensors_from_buft_size on the same tensors.
func TestContextTensorsSizeVsGGML(t *testing.T) {
	l := reftest.Lib(t)
	c := ctxTensors()
	ours, err := buffer.ContextTensorsSize(c, buffer.CPU())
	require.NoError(t, err)
	gctx, err := l.NewContext(uint64(len(c.Tensors())+1)*l.TensorOverhead(), true)
	require.NoError(t, err)
	defer gctx.Free()
	for _, x := range c.Tensors() {
		if x.ViewSrc != nil {
			continue // views take no memory of their own
		}
		_, err := gctx.NewTensor(uint32(x.Type), x.Ne)
		require.NoError(t, err)
	}
	theirs, err := gctx.ContextTensorsSize()
	require.NoError(t, err)
	assert.Equal(t, theirs, ours)
}

// perTensor is a TensorPlanner giving every tensor a buffer of its own.
type perTensor struct{ *buffer.HostType }

func (p perTensor) AllocTensors(ts []*graph.Tensor) (buffer.Buffer, error) {
	var parts []buffer.Buffer
	for _, t := range ts {
		if t.ViewSrc != nil {
			continue
		}
		b, err := p.Alloc(p.AllocSize(t))
		if err != nil {
			return nil, err
		}
		if err := b.AllocTensor(t, 0); err != nil {
			return nil, err
		}
		parts = append(parts, b)
	}
	return buffer.NewMulti(parts...)
}

func (p perTensor) TensorsSize(ts []*graph.Tensor) uint64 {
	var n uint64
	for _, t := range ts {
		if t.ViewSrc == nil {
			n += p.AllocSize(t)
		}
	}
	return n
}

func TestTensorPlanner(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{})
	f32(c, 3)
	f32(c, 5)
	typ := perTensor{buffer.CPU()}
	size, err := buffer.ContextTensorsSize(c, typ)
	require.NoError(t, err)
	assert.EqualValues(t, 32, size, "the planner's size, unpadded")
	b, err := buffer.AllocContextTensors(c, typ)
	require.NoError(t, err)
	assert.Len(t, b.(*buffer.Multi).Parts(), 2)
	require.NoError(t, b.Free())
}
