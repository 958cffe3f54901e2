package buffer_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/internal/testkit/optest"
)

// reserveAndAlloc returns a place function for computeMatches: a new CPU
// graph allocator (freed with the test) reserving and placing the graph.
func reserveAndAlloc(t *testing.T, size *uint64) func(*graph.Graph) error {
	return func(g *graph.Graph) error {
		a, err := buffer.NewGraphAllocator(buffer.CPU())
		if err != nil {
			return err
		}
		t.Cleanup(func() { require.NoError(t, a.Free()) })
		if err := a.Reserve(g); err != nil {
			return err
		}
		if err := a.AllocGraph(g); err != nil {
			return err
		}
		if size != nil {
			*size = a.BufferSize(0)
		}
		return nil
	}
}

// weightsApart returns a place function that first puts g's leafs that
// are not inputs (weights, caches) in a CPU buffer of their own, as a
// model's weights are loaded, then does place.
func weightsApart(t *testing.T, place func(*graph.Graph) error) func(*graph.Graph) error {
	return func(g *graph.Graph) error {
		var ws []*graph.Tensor
		var size uint64
		for _, l := range g.Leafs {
			if l.Flags&graph.FlagInput == 0 && l.ViewSrc == nil && l.Buffer == nil && l.Data == nil {
				ws = append(ws, l)
				size += (l.NBytes() + buffer.TensorAlignment - 1) / buffer.TensorAlignment * buffer.TensorAlignment
			}
		}
		b, err := buffer.CPU().Alloc(size)
		if err != nil {
			return err
		}
		b.SetUsage(buffer.UsageWeights)
		t.Cleanup(func() { require.NoError(t, b.Free()) })
		ta, err := buffer.NewTensorAllocator(b)
		if err != nil {
			return err
		}
		for _, w := range ws {
			if err := ta.Alloc(w); err != nil {
				return err
			}
		}
		return place(g)
	}
}

// TestGraphAllocatorGraphs places each test graph and requires that no two
// live tensors share memory and that the CPU device computes the same bytes
// in the placed memory as in memory of their own.
func TestGraphAllocatorGraphs(t *testing.T) {
	eng := cpu.New(cpu.Options{Threads: 2})
	defer eng.Close()
	for _, tg := range testGraphs {
		t.Run(tg.name, func(t *testing.T) {
			g, err := build(tg.build)
			require.NoError(t, err)
			var size uint64
			require.NoError(t, reserveAndAlloc(t, &size)(g))
			require.NoError(t, checkPlacement(g))
			t.Logf("%s: %d nodes, buffer %d bytes", tg.name, len(g.Nodes), size)
			if !supported(g) {
				t.Logf("%s: not computed, the CPU device lacks an operation", tg.name)
				return
			}
			require.NoError(t, computeMatches(tg.build, tokenIDs, reserveAndAlloc(t, nil), eng))
			require.NoError(t, computeMatches(tg.build, tokenIDs, weightsApart(t, reserveAndAlloc(t, nil)), eng))
		})
	}
}

// TestGraphAllocatorOptestCases does the same for every quick case of the
// op-conformance suite.
func TestGraphAllocatorOptestCases(t *testing.T) {
	eng := cpu.New(cpu.Options{Threads: 3})
	defer eng.Close()
	computed := 0
	cases := optest.Cases(false, nil)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		g, err := build(c.Build)
		if err != nil {
			continue
		}
		require.NoError(t, reserveAndAlloc(t, nil)(g), c.Name)
		require.NoError(t, checkPlacement(g), c.Name)
		if supported(g) {
			require.NoError(t, computeMatches(c.Build, c.Init, reserveAndAlloc(t, nil), eng), c.Name)
			computed++
		}
	}
	t.Logf("%d cases placed, %d computed", len(cases), computed)
}

// TestGraphAllocatorVsGGML requires, for each test graph and quick
// conformance case, a compute buffer no larger than the one ggml's
// gallocr plans for the same graph.
func TestGraphAllocatorVsGGML(t *testing.T) {
	l := reftest.Lib(t)
	compare := func(name string, b builder, apart bool) (ours, theirs uint64) {
		g, err := build(b)
		require.NoError(t, err, name)
		place := reserveAndAlloc(t, &ours)
		if apart {
			place = weightsApart(t, place)
		}
		require.NoError(t, place(g), name)
		for _, x := range mirror.Reachable(g) {
			if x.Buffer != nil && x.Buffer.(buffer.Buffer).Usage() == buffer.UsageCompute {
				x.Buffer, x.Data = nil, nil // ggml places these anew
			}
		}
		theirs, err = mirror.GallocrSize(l, g)
		require.NoError(t, err, name)
		require.LessOrEqual(t, ours, theirs, "%s: our buffer is larger than ggml's", name)
		return ours, theirs
	}
	t.Logf("%-22s %24s %24s", "compute buffer bytes", "with the weights", "weights apart")
	for _, tg := range testGraphs {
		ours, theirs := compare(tg.name, tg.build, false)
		oursApart, theirsApart := compare(tg.name, tg.build, true)
		t.Logf("%-22s ours %7d ggml %7d  ours %7d ggml %7d", tg.name, ours, theirs, oursApart, theirsApart)
	}
	var n, smaller int
	var sumOurs, sumTheirs uint64
	for _, c := range optest.Cases(false, nil) {
		if _, err := build(c.Build); err != nil {
			continue
		}
		ours, theirs := compare(c.Name, c.Build, false)
		n++
		if ours < theirs {
			smaller++
		}
		sumOurs += ours
		sumTheirs += theirs
	}
	t.Logf("%d conformance cases: %d with a smaller buffer than ggml's; total ours %d, ggml %d", n, smaller, sumOurs, sumTheirs)
}

// TestRandomGraphsVsGGML compares buffer sizes with ggml's on random graphs
// (FuzzGraphAllocator's, without Go memory of their own): never larger.
func TestRandomGraphsVsGGML(t *testing.T) {
	l := reftest.Lib(t)
	rng := rand.New(rand.NewSource(2))
	var n, smaller int
	for range 2000 {
		data := make([]byte, rng.Intn(80))
		rng.Read(data)
		g, err := build(fuzzGraph(data))
		if err != nil {
			continue
		}
		for _, x := range mirror.Reachable(g) {
			x.Data = nil
		}
		theirs, err := mirror.GallocrSize(l, g)
		require.NoError(t, err)
		var ours uint64
		require.NoError(t, reserveAndAlloc(t, &ours)(g))
		n++
		require.LessOrEqual(t, ours, theirs, "graph %v", data)
		if ours < theirs {
			smaller++
		}
	}
	t.Logf("%d graphs: %d with a smaller buffer than ggml's, the rest equal", n, smaller)
}
