package buffer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// TestNilArguments: every entry point that takes a tensor, a graph or a
// context refuses nil with an error instead of a nil dereference.
func TestNilArguments(t *testing.T) {
	typ := buffer.CPU()
	assert.Zero(t, typ.AllocSize(nil))
	b, err := typ.Alloc(256)
	require.NoError(t, err)
	defer b.Free()
	x := graph.NewContext(graph.ContextOptions{}).NewTensor(quant.F32, 4)
	require.NoError(t, b.AllocTensor(x, 0))

	for name, err := range map[string]error{
		"AllocTensor":     b.AllocTensor(nil, 0),
		"InitView":        b.InitView(nil),
		"SetTensor":       b.SetTensor(nil, []byte{1}, 0),
		"GetTensor":       b.GetTensor(nil, []byte{1}, 0),
		"SetTensor2D":     b.SetTensor2D(nil, []byte{1}, 0, 1, 1, 1, 1),
		"GetTensor2D":     b.GetTensor2D(nil, []byte{1}, 0, 1, 1, 1, 1),
		"MemsetTensor":    b.MemsetTensor(nil, 0, 0, 1),
		"CopyTensor":      b.CopyTensor(nil, x),
		"CopyTensor2":     b.CopyTensor(x, nil),
		"pkg SetTensor":   buffer.SetTensor(nil, []byte{1}, 0),
		"pkg GetTensor":   buffer.GetTensor(nil, []byte{1}, 0),
		"pkg CopyTensor":  buffer.CopyTensor(nil, x),
		"pkg CopyTensor2": buffer.CopyTensor(x, nil),
	} {
		assert.Error(t, err, name)
	}
	ta, err := buffer.NewTensorAllocator(b)
	require.NoError(t, err)
	assert.Error(t, ta.Alloc(nil))
	_, err = buffer.NewTensorAllocator(nil)
	assert.Error(t, err)
	_, err = buffer.AllocContextTensors(nil, typ)
	assert.Error(t, err)
	_, err = buffer.ContextTensorsSize(nil, typ)
	assert.Error(t, err)

	ga, err := buffer.NewGraphAllocator(typ)
	require.NoError(t, err)
	defer ga.Free()
	assert.Error(t, ga.AllocGraph(nil))
	assert.Error(t, ga.Reserve(nil))
	_, err = buffer.NewGraphAllocator(nil)
	assert.Error(t, err)
}
