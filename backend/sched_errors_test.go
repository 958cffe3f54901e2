package backend_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// cpuBackend starts a one-thread CPU backend closed at the end of the test.
func cpuBackend(t testing.TB) backend.Backend {
	t.Helper()
	d, err := backend.DeviceByName("CPU")
	require.NoError(t, err)
	b, err := d.Init(backend.Options{Threads: 1})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// chain builds x -> x+x -> (x+x)*0.5 -> ... with n nodes after the input,
// in a Context without memory, and returns the graph, its input and its
// output.
func chain(t testing.TB, n int) (*graph.Graph, *graph.Tensor, *graph.Tensor) {
	t.Helper()
	c := graph.NewContext(graph.ContextOptions{})
	x := graph.SetInput(c.NewTensor(quant.F32, 4))
	y := x
	for i := range n {
		if i%2 == 0 {
			y = c.Add(y, y)
		} else {
			y = c.Scale(y, 0.5)
		}
	}
	graph.SetOutput(y)
	g, err := c.Build(y)
	require.NoError(t, err)
	return g, x, y
}

func TestSchedulerRefusesBadBackends(t *testing.T) {
	b := cpuBackend(t)
	_, err := backend.NewScheduler([]backend.Backend{b, b}, backend.SchedulerOptions{})
	require.ErrorIs(t, err, backend.ErrArgument)
	assert.Contains(t, err.Error(), "listed twice")

	// Two backends of one device are two streams, and fine.
	s, err := backend.NewScheduler([]backend.Backend{cpuBackend(t), b}, backend.SchedulerOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

func TestThreadsChecked(t *testing.T) {
	for _, n := range []int{-3, -1, backend.MaxThreads + 1} {
		_, err := backend.Init(backend.Options{Devices: []string{"CPU"}, Threads: n})
		require.ErrorIs(t, err, backend.ErrArgument, "%d threads", n)
		d, err := backend.DeviceByName("CPU")
		require.NoError(t, err)
		_, err = d.Init(backend.Options{Threads: n})
		require.ErrorIs(t, err, backend.ErrArgument, "%d threads, device Init", n)
	}
	b := cpuBackend(t)
	ts, ok := b.(interface{ SetThreads(int) error })
	require.True(t, ok)
	require.ErrorIs(t, ts.SetThreads(-3), backend.ErrArgument)
	require.NoError(t, ts.SetThreads(2))
}

// TestSchedulerComputesOnlyTheAllocatedGraph: after AllocGraph(g1),
// GraphCompute(g2) is refused (ggml would compute g1); g1 computes.
func TestSchedulerComputesOnlyTheAllocatedGraph(t *testing.T) {
	b := cpuBackend(t)
	s, err := backend.NewScheduler([]backend.Backend{b}, backend.SchedulerOptions{})
	require.NoError(t, err)
	defer s.Close()
	g1, x1, y1 := chain(t, 2)
	g2, x2, y2 := chain(t, 3)
	require.NoError(t, s.AllocGraph(g1))
	require.NoError(t, backend.SetFloat32(b, x1, []float32{1, 2, 3, 4}))
	err = s.GraphCompute(g2)
	require.ErrorIs(t, err, backend.ErrArgument)
	assert.Contains(t, err.Error(), "not the one AllocGraph placed")
	require.ErrorIs(t, s.GraphCompute(nil), backend.ErrArgument)

	require.NoError(t, s.GraphCompute(g1))
	got, err := backend.GetFloat32(b, y1)
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, 4}, got)

	// Without AllocGraph, GraphCompute places the graph it is given.
	s.Reset()
	require.NoError(t, s.AllocGraph(g2))
	require.NoError(t, backend.SetFloat32(b, x2, []float32{1, 2, 3, 4}))
	require.NoError(t, s.GraphCompute(g2))
	got, err = backend.GetFloat32(b, y2)
	require.NoError(t, err)
	require.Equal(t, []float32{2, 4, 6, 8}, got)
}

// TestSchedulerCloseTwice: Close is idempotent; using the scheduler
// afterwards is ErrClosed, not a misleading allocator error.
func TestSchedulerCloseTwice(t *testing.T) {
	s, err := backend.NewScheduler([]backend.Backend{cpuBackend(t)}, backend.SchedulerOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	g, _, _ := chain(t, 1)
	require.ErrorIs(t, s.AllocGraph(g), backend.ErrClosed)
	require.ErrorIs(t, s.GraphCompute(g), backend.ErrClosed)
	require.ErrorIs(t, s.Reserve(g), backend.ErrClosed)
	require.ErrorIs(t, s.SplitGraph(g), backend.ErrClosed)
	s.Reset()
}

// TestSchedulerContext: a done context stops the computation before the
// next split, or with an eval callback before the next node group, and
// the error wraps the context's.
func TestSchedulerContext(t *testing.T) {
	b := cpuBackend(t)
	s, err := backend.NewScheduler([]backend.Backend{b}, backend.SchedulerOptions{})
	require.NoError(t, err)
	defer s.Close()
	g, x, _ := chain(t, 6)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.AllocGraph(g))
	require.NoError(t, backend.SetFloat32(b, x, []float32{1, 2, 3, 4}))
	require.ErrorIs(t, s.GraphComputeContext(ctx, g), context.Canceled)

	// Cancelled while computing: the callback sees every node and
	// cancels after the second; the third is never computed.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var seen []*graph.Tensor
	s.SetEvalCallback(func(t *graph.Tensor, ask bool) bool {
		if !ask {
			seen = append(seen, t)
			if len(seen) == 2 {
				cancel()
			}
		}
		return true
	})
	s.Reset()
	require.NoError(t, s.AllocGraph(g))
	require.NoError(t, backend.SetFloat32(b, x, []float32{1, 2, 3, 4}))
	err = s.GraphComputeContext(ctx, g)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), g.Nodes[2].Name)
	require.Len(t, seen, 2)

	// A context that stays live changes nothing.
	s.SetEvalCallback(nil)
	s.Reset()
	require.NoError(t, s.GraphComputeContext(context.Background(), g))
}
