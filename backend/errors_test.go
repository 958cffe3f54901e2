package backend_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// TestUnsupportedIsOneError: every package's unsupported error, as the
// package returns it, matches backend.ErrUnsupported (the standard
// errors.ErrUnsupported) and still its own package's sentinel.
func TestUnsupportedIsOneError(t *testing.T) {
	_, qerr := quant.Quantize(quant.IQ2_XXS, make([]float32, 256), 1, 256, nil)

	bt := cpu.Device().BufferType()
	b1, err := bt.Alloc(64)
	require.NoError(t, err)
	defer b1.Free()
	multi, err := buffer.NewMulti(b1)
	require.NoError(t, err)
	c := graph.NewContext(graph.ContextOptions{})
	berr := multi.AllocTensor(c.NewTensor(quant.F32, 4), 0)

	ca := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := ca.NewTensor(quant.F32, 4, 4)
	x := ca.NewOp(ops.SSMScan, quant.F32, a.Ne, ops.Params{}, a, a)
	e := cpu.New(cpu.Options{Threads: 1})
	defer e.Close()
	cerr := e.ComputeNode(x)

	for _, tc := range []struct {
		err, own error
	}{{qerr, quant.ErrUnsupported}, {berr, buffer.ErrUnsupported}, {cerr, cpu.ErrUnsupported}} {
		require.Error(t, tc.err)
		assert.ErrorIs(t, tc.err, tc.own)
		assert.ErrorIs(t, tc.err, backend.ErrUnsupported, "%v", tc.err)
		assert.ErrorIs(t, tc.err, errors.ErrUnsupported)
	}
	assert.NotErrorIs(t, qerr, cpu.ErrUnsupported, "the sentinels still tell the packages apart")
}
