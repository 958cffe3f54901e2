package backend_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// TestTypedTensorData: SetFloat32/GetFloat32 and SetInt32/GetInt32 round
// trip through a backend, a buffer and Go memory, with every conversion the
// type needs, and refuse what they cannot do.
func TestTypedTensorData(t *testing.T) {
	b := cpuBackend(t)
	vs := make([]float32, 64)
	for i := range vs {
		vs[i] = float32(math.Sin(float64(i))) * 3
	}
	for _, tc := range []struct {
		typ quant.Type
		tol float64
	}{{quant.F32, 0}, {quant.F64, 0}, {quant.F16, 2e-3}, {quant.BF16, 2e-2}, {quant.Q8_0, 3e-2}, {quant.Q4_K, 0.3}} {
		c := graph.NewContext(graph.ContextOptions{})
		ne0 := max(32, int64(tc.typ.BlockSize()))
		x := c.NewTensor(tc.typ, ne0, 2)
		require.NoError(t, c.Err())
		bt := b.Device().BufferType()
		buf, err := bt.Alloc(bt.AllocSize(x))
		require.NoError(t, err)
		defer buf.Free()
		require.NoError(t, buf.AllocTensor(x, 0))
		in := vs
		if x.NElements() != int64(len(vs)) {
			in = make([]float32, x.NElements())
			for i := range in {
				in[i] = vs[i%len(vs)]
			}
		}
		for _, via := range []backend.Backend{b, nil} {
			require.NoError(t, backend.SetFloat32(via, x, in), "%s", tc.typ)
			got, err := backend.GetFloat32(via, x)
			require.NoError(t, err)
			require.Len(t, got, len(in))
			for i := range in {
				require.InDelta(t, in[i], got[i], tc.tol+1e-6, "%s element %d", tc.typ, i)
			}
		}
		if tc.typ.IsQuantized() {
			want, err := quant.Quantize(tc.typ, in, int(x.NRows()), int(x.Ne[0]), nil)
			require.NoError(t, err)
			raw := make([]byte, len(want))
			require.NoError(t, buffer.GetTensor(x, raw, 0))
			assert.Equal(t, want, raw, "%s: the bytes are ggml's conversion", tc.typ)
		}
		require.ErrorIs(t, backend.SetFloat32(b, x, in[:1]), backend.ErrArgument)
		require.ErrorIs(t, backend.SetInt32(b, x, make([]int32, len(in))), backend.ErrArgument)
	}

	// Integers, in Go memory (a Context with Alloc), without a backend.
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	for _, typ := range []quant.Type{quant.I8, quant.I16, quant.I32, quant.I64} {
		x := c.NewTensor(typ, 4)
		require.NoError(t, backend.SetInt32(nil, x, []int32{-7, 0, 100, 1}))
		got, err := backend.GetInt32(nil, x)
		require.NoError(t, err)
		require.Equal(t, []int32{-7, 0, 100, 1}, got, "%s", typ)
		_, err = backend.GetFloat32(nil, x)
		require.ErrorIs(t, err, backend.ErrArgument)
	}
	require.ErrorIs(t, backend.SetInt32(nil, c.NewTensor(quant.I8, 1), []int32{300}), backend.ErrArgument)

	// A tensor without memory, nil and a strided view are errors.
	d := graph.NewContext(graph.ContextOptions{}).NewTensor(quant.F32, 4)
	require.ErrorIs(t, backend.SetFloat32(nil, d, make([]float32, 4)), buffer.ErrNotPlaced)
	_, err := backend.GetFloat32(b, nil)
	require.ErrorIs(t, err, backend.ErrArgument)
	a := c.NewTensor(quant.F32, 4, 4)
	_, err = backend.GetFloat32(nil, c.View2D(a, 2, 4, a.Nb[1], 0))
	require.ErrorIs(t, err, backend.ErrArgument)
	assert.Contains(t, err.Error(), "not contiguous")
}
