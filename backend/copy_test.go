package backend

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// copyingBackend copies device to device when allowed, and records the
// calls it sees.
type copyingBackend struct {
	fakeBackend
	direct bool
	copies int
	syncs  int
}

func (b *copyingBackend) Synchronize() error { b.syncs++; return nil }

func (b *copyingBackend) CopyTensorAsync(_ Backend, src, dst *graph.Tensor) error {
	if !b.direct {
		return fmt.Errorf("%w: not between these backends", ErrUnsupported)
	}
	b.copies++
	return nil
}

func TestCopyTensorAsync(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{})
	src, dst := c.NewTensor(quant.F32, 4), c.NewTensor(quant.F32, 4)
	buf, err := buffer.CPU().Alloc(256)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, buf.Free()) })
	require.NoError(t, buf.AllocTensor(src, 0))
	require.NoError(t, buf.AllocTensor(dst, 128))
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	require.NoError(t, buffer.SetTensor(src, want, 0))

	from := &copyingBackend{fakeBackend: fakeBackend{dev: cpuDev}}
	direct := &copyingBackend{fakeBackend: fakeBackend{dev: cpuDev}, direct: true}
	require.NoError(t, CopyTensorAsync(from, direct, src, dst))
	require.Equal(t, 1, direct.copies, "the destination's own copy")
	require.Zero(t, from.syncs+direct.syncs, "and no waiting")
	require.Equal(t, make([]byte, 16), dst.Data)

	refusing := &copyingBackend{fakeBackend: fakeBackend{dev: cpuDev}}
	require.NoError(t, CopyTensorAsync(from, refusing, src, dst))
	require.Equal(t, 1, from.syncs, "the fallback waits for the source")
	require.Equal(t, 1, refusing.syncs, "and the destination")
	require.Equal(t, want, dst.Data, "then copies through the host")

	// A plain backend (no TensorCopier) takes the host path too.
	other := c.NewTensor(quant.F32, 2)
	require.Error(t, CopyTensorAsync(from, &fakeBackend{dev: cpuDev}, src, other), "layouts differ")
}

func TestCompute(t *testing.T) {
	b := &copyingBackend{fakeBackend: fakeBackend{dev: cpuDev}}
	require.NoError(t, Compute(b, graph.NewGraph()))
	require.Equal(t, 1, b.syncs, "Compute waits for the graph")
}
