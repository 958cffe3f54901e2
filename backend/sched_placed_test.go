package backend_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/quant"
)

// placements is what fake backend b was given since mark: the ids of its
// computations (0: no promise).
func placements(b backend.Backend, mark int) []backend.PlacementID {
	return b.(*devtest.Backend).Placements()[mark:]
}

// The scheduler promises an unchanged graph (PlacedGraphComputer) only
// while the placement is the same: every recompute of the placed graph
// carries the ids of its first compute, and Reset, AllocGraph, SplitGraph,
// Reserve, another graph, a graph computed without AllocGraph after
// Reset, and the eval callback's groups never do. devtest checks every
// promise it is given besides (a later call with an id must see the
// graph of the first, unchanged), so every scheduler test on a fake
// device fails if the scheduler promises what is not so.
func TestSchedulerPlacementPromise(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(map[bool]string{false: "serial", true: "parallel"}[parallel], func(t *testing.T) {
			fake, host := fakeAndCPU(t)
			tc := schedCases()[1] // chain with a device weight: FAKE0, CPU, FAKE0
			s, g, want := run(t, []backend.Backend{fake, host}, backend.SchedulerOptions{Parallel: parallel}, fakeMem, tc.net, nil)
			require.Equal(t, 3, s.NSplits())
			first := placements(fake, 0)
			require.Len(t, first, 2, "two device splits")
			require.NotZero(t, first[0])
			require.NotEqual(t, first[0], first[1], "one id per split")

			// The placed graph again, with its inputs set again: the same ids.
			mark := len(placements(fake, 0))
			setInputs := func() {
				for _, x := range g.Leafs {
					if k, ok := x.Extra.(int); ok && x.Flags&graph.FlagInput != 0 {
						require.NoError(t, buffer.SetTensor(x, values(k, x.NElements()), 0))
					}
				}
			}
			setInputs()
			require.NoError(t, s.GraphCompute(g))
			setInputs()
			require.NoError(t, s.GraphCompute(g))
			assert.Equal(t, append(append([]backend.PlacementID{}, first...), first...), placements(fake, mark))
			got := make([]byte, len(want))
			out := g.Nodes[len(g.Nodes)-1]
			require.NoError(t, buffer.GetTensor(out, got, 0))
			assert.Equal(t, want, got)

			seen := map[backend.PlacementID]bool{first[0]: true, first[1]: true}
			fresh := func(what string) {
				t.Helper()
				ids := placements(fake, mark)
				require.Len(t, ids, 2, what)
				for _, id := range ids {
					assert.NotZero(t, id, what)
					assert.False(t, seen[id], "%s: id %d promised again", what, id)
					seen[id] = true
				}
				mark += len(ids)
			}
			mark = len(placements(fake, 0))
			s.Reset()
			require.NoError(t, s.AllocGraph(g))
			require.NoError(t, s.GraphCompute(g))
			fresh("Reset and AllocGraph of the same graph")

			s.Reset()
			require.NoError(t, s.GraphCompute(g))
			fresh("GraphCompute alone after Reset")

			require.NoError(t, s.SplitGraph(g))
			require.NoError(t, s.GraphCompute(g))
			fresh("SplitGraph of the placed graph")

			require.NoError(t, s.Reserve(g))
			require.NoError(t, s.GraphCompute(g))
			fresh("Reserve")

			_, g2, _ := run(t, []backend.Backend{fake, host}, backend.SchedulerOptions{Parallel: parallel}, fakeMem, tc.net, nil)
			mark = len(placements(fake, 0))
			s.Reset()
			require.NoError(t, s.AllocGraph(g2))
			require.NoError(t, s.GraphCompute(g2))
			fresh("another graph")

			s.SetEvalCallback(func(*graph.Tensor, bool) bool { return true })
			require.NoError(t, s.GraphCompute(g2))
			for _, id := range placements(fake, mark) {
				assert.Zero(t, id, "the eval callback's groups carry no promise")
			}
			s.SetEvalCallback(nil)
		})
	}
}

// A placed graph whose node list changed (a node expanded into it after
// AllocGraph) is refused rather than computed from the old splits under
// the old promise; Reset and AllocGraph place it anew.
func TestSchedulerRefusesChangedPlacedGraph(t *testing.T) {
	fake, host := fakeAndCPU(t)
	s, err := backend.NewScheduler([]backend.Backend{fake, host}, backend.SchedulerOptions{})
	require.NoError(t, err)
	defer s.Close()
	c := graph.NewContext(graph.ContextOptions{})
	x := graph.SetInput(c.NewTensor(quant.F32, 4))
	a := c.Add(x, x)
	g, err := c.Build(a)
	require.NoError(t, err)
	require.NoError(t, s.AllocGraph(g))
	require.NoError(t, buffer.SetTensor(x, values(1, 4), 0))
	require.NoError(t, s.GraphCompute(g))
	require.NoError(t, g.Expand(c.Mul(a, a)))
	err = s.GraphCompute(g)
	require.True(t, errors.Is(err, backend.ErrArgument), "%v", err)
	s.Reset()
	require.NoError(t, s.AllocGraph(g))
	require.NoError(t, buffer.SetTensor(x, values(1, 4), 0))
	require.NoError(t, s.GraphCompute(g))
}

// devtest's check of the promise can fail: a graph whose node changed
// under an id it was computed with before is an error.
func TestDevtestChecksPromise(t *testing.T) {
	fake := initFake(t, fakeDev)
	c := graph.NewContext(graph.ContextOptions{})
	x := c.NewTensor(quant.F32, 4)
	y := c.Add(x, x)
	g, err := c.Build(y)
	require.NoError(t, err)
	buf, err := buffer.AllocContextTensors(c, fakeMem)
	require.NoError(t, err)
	defer buf.Free()
	p := fake.(backend.PlacedGraphComputer)
	const id = backend.PlacementID(1 << 62)
	require.NoError(t, p.GraphComputePlaced(g, id))
	require.NoError(t, p.GraphComputePlaced(g, id))
	y.Name = "renamed"
	require.ErrorContains(t, p.GraphComputePlaced(g, id), "placement")
	require.NoError(t, p.GraphComputePlaced(g, id+1), "a new id is a new promise")
}
