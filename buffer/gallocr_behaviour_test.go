package buffer_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
)

func TestCanInplaceMatchesGGML(t *testing.T) {
	want, err := reftest.Lib(t).OpCanInplace()
	require.NoError(t, err)
	for op := range ops.OpCount {
		assert.Equal(t, want[op], buffer.CanInplace(op), op.String())
	}
}

// viewInplace reads s, which nothing else reads, through a reshape (a view
// at offset 0): y could take s's memory, but ggml never reuses a source
// through a view, and doing so fragments llama-style graphs (ggml bench
// alloc), so y gets memory of its own.
func viewInplace(c *graph.Context) []*graph.Tensor {
	w1, w2 := weight(c, 1024), weight(c, 32, 32)
	s := c.Mul(input(c, 1024), w1)
	y := c.Mul(c.Reshape(s, 32, 32), w2)
	z := c.Mul(y, c.Reshape(w1, 32, 32))
	return []*graph.Tensor{c.Add(z, w2)}
}

func TestViewSourceNotInPlace(t *testing.T) {
	g, err := build(viewInplace)
	require.NoError(t, err)
	var size uint64
	require.NoError(t, reserveAndAlloc(t, &size)(g))
	require.NoError(t, checkPlacement(g))
	s, y := g.Nodes[0], g.Nodes[2]
	require.Equal(t, ops.Reshape, g.Nodes[1].Op)
	assert.NotEqual(t, addr(s.Data), addr(y.Data), "y does not run in place over s")

	eng := cpu.New(cpu.Options{Threads: 2})
	defer eng.Close()
	require.NoError(t, computeMatches(viewInplace, nil, reserveAndAlloc(t, nil), eng))
	t.Logf("buffer %d bytes", size)
}

func TestReserveWorstCase(t *testing.T) {
	a, err := buffer.NewGraphAllocator(buffer.CPU())
	require.NoError(t, err)
	defer a.Free()
	worst, err := build(llama(2, 16, false))
	require.NoError(t, err)
	require.NoError(t, a.Reserve(worst))
	size := a.BufferSize(0)
	bufs := a.Buffers(0)
	require.Len(t, bufs, 1)

	// A smaller graph of the same structure fits: same buffer, no plan.
	eng := cpu.New(cpu.Options{Threads: 2})
	defer eng.Close()
	require.NoError(t, computeMatches(llama(2, 8, false), nil, a.AllocGraph, eng))
	assert.Equal(t, size, a.BufferSize(0))
	assert.Equal(t, bufs, a.Buffers(0))

	// A larger one is planned again, in a larger buffer.
	larger, err := build(llama(2, 32, false))
	require.NoError(t, err)
	require.NoError(t, a.AllocGraph(larger))
	require.NoError(t, checkPlacement(larger))
	assert.Greater(t, a.BufferSize(0), size)

	// ReserveSizes plans without touching the buffers.
	sizes, err := a.ReserveSizes(worst, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []uint64{size}, sizes)
	assert.Greater(t, a.BufferSize(0), size)
}

func TestStructureChange(t *testing.T) {
	// Same number of nodes and leafs, sizes no larger, other sources:
	// the old plan would overlap live tensors, so the graph is planned
	// again.
	first := func(c *graph.Context) []*graph.Tensor {
		x := input(c, 256)
		a := c.Mul(x, x)
		b := c.Add(a, a)
		return []*graph.Tensor{c.Sub(b, b)}
	}
	second := func(c *graph.Context) []*graph.Tensor {
		x := input(c, 256)
		a := c.Mul(x, x)
		b := c.Add(x, x)
		return []*graph.Tensor{c.Sub(a, b)}
	}
	a, err := buffer.NewGraphAllocator(buffer.CPU())
	require.NoError(t, err)
	defer a.Free()
	g1, err := build(first)
	require.NoError(t, err)
	require.NoError(t, a.Reserve(g1))
	eng := cpu.New(cpu.Options{Threads: 1})
	defer eng.Close()
	require.NoError(t, computeMatches(second, nil, a.AllocGraph, eng))

	two, err := buffer.NewGraphAllocator(buffer.CPU(), hostType(t, "HOST2", 1<<20))
	require.NoError(t, err)
	defer two.Free()
	require.NoError(t, two.Reserve(g1))
	g2, err := build(second)
	require.NoError(t, err)
	assert.ErrorIs(t, two.AllocGraph(g2), buffer.ErrNeedReserve)
	require.NoError(t, two.Reserve(g2))
	require.NoError(t, two.AllocGraph(g2))
	require.NoError(t, checkPlacement(g2))
}

func hostType(t *testing.T, name string, maxSize uint64) *buffer.HostType {
	typ, err := buffer.NewHostType(name, "CPU", 32, maxSize)
	require.NoError(t, err)
	return typ
}

func TestSeveralBufferTypes(t *testing.T) {
	host2 := hostType(t, "HOST2", 1<<20)
	a, err := buffer.NewGraphAllocator(buffer.CPU(), host2)
	require.NoError(t, err)
	defer a.Free()
	// Nodes of the odd layers in the second type.
	place := func(g *graph.Graph) error {
		layer := map[*graph.Tensor]int{}
		for i, n := range g.Nodes {
			layer[n] = i * 2 / len(g.Nodes)
		}
		nodes, leafs := buffer.BufferIDs(g, func(t *graph.Tensor) int { return layer[t] })
		if err := a.ReserveN(g, nodes, leafs); err != nil {
			return err
		}
		return a.AllocGraph(g)
	}
	eng := cpu.New(cpu.Options{Threads: 2})
	defer eng.Close()
	require.NoError(t, computeMatches(llama(2, 8, false), nil, place, eng))
	assert.NotZero(t, a.BufferSize(0))
	assert.NotZero(t, a.BufferSize(1))
	assert.Equal(t, "HOST2", a.Buffers(1)[0].Name())
	assert.Equal(t, buffer.UsageCompute, a.Buffers(1)[0].Usage())

	larger, err := build(llama(2, 16, false))
	require.NoError(t, err)
	assert.ErrorIs(t, a.AllocGraph(larger), buffer.ErrNeedReserve, "several types: no automatic plan")

	g, err := build(llama(1, 8, false))
	require.NoError(t, err)
	assert.ErrorIs(t, a.ReserveN(g, []int{0}, nil), buffer.ErrArgument)
	nodes, _ := buffer.BufferIDs(g, func(*graph.Tensor) int { return 2 })
	assert.ErrorIs(t, a.ReserveN(g, nodes, nil), buffer.ErrArgument)
	assert.ErrorIs(t, a.Reserve(nil), buffer.ErrArgument)
	assert.ErrorIs(t, a.AllocGraph(nil), buffer.ErrArgument)
}

func TestSameTypeTwice(t *testing.T) {
	a, err := buffer.NewGraphAllocator(buffer.CPU(), buffer.CPU())
	require.NoError(t, err)
	defer a.Free()
	g, err := build(llama(1, 8, false))
	require.NoError(t, err)
	nodes, leafs := buffer.BufferIDs(g, func(t *graph.Tensor) int { return len(t.Name) % 2 })
	require.NoError(t, a.ReserveN(g, nodes, leafs))
	require.NoError(t, a.AllocGraph(g))
	require.NoError(t, checkPlacement(g))
	assert.NotZero(t, a.BufferSize(0))
	assert.Zero(t, a.BufferSize(1), "the second index shares the first's buffer")
	assert.Equal(t, a.Buffers(0), a.Buffers(1))

	_, err = buffer.NewGraphAllocator()
	assert.ErrorIs(t, err, buffer.ErrArgument)
	_, err = buffer.NewGraphAllocator(nil)
	assert.ErrorIs(t, err, buffer.ErrArgument)
}

func TestChunks(t *testing.T) {
	// 4 KiB buffers for a graph whose live tensors need more.
	small := hostType(t, "SMALL", 4096)
	var a *buffer.GraphAllocator
	place := func(g *graph.Graph) error {
		var err error
		if a, err = buffer.NewGraphAllocator(small); err != nil {
			return err
		}
		return a.AllocGraph(g)
	}
	eng := cpu.New(cpu.Options{Threads: 2})
	defer eng.Close()
	require.NoError(t, computeMatches(llama(2, 8, false), nil, place, eng))
	defer a.Free()
	chunks := a.Buffers(0)
	require.Greater(t, len(chunks), 1)
	var total uint64
	for _, b := range chunks {
		assert.LessOrEqual(t, b.Size(), uint64(4096))
		total += b.Size()
	}
	assert.Equal(t, total, a.BufferSize(0))

	big := func(c *graph.Context) []*graph.Tensor { return []*graph.Tensor{c.Add(input(c, 2048), input(c, 2048))} }
	g, err := build(big)
	require.NoError(t, err)
	b, err := buffer.NewGraphAllocator(small)
	require.NoError(t, err)
	defer b.Free()
	assert.ErrorIs(t, b.AllocGraph(g), buffer.ErrTooLarge, "a tensor larger than any buffer")
	for _, n := range g.Nodes {
		assert.Nil(t, n.Buffer)
	}
}

func TestExternalTensors(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{})
	weights := []*graph.Tensor{f32(c, 256), f32(c, 256)}
	goMem := f32(c, 256)
	goMem.Data = make([]byte, 1024)
	wb, err := buffer.AllocContextTensors(c, buffer.CPU())
	require.NoError(t, err)
	defer wb.Free()
	x := input(c, 256)
	y := c.Add(c.Mul(x, weights[0]), c.Mul(goMem, weights[1]))
	graph.SetOutput(y)
	g, err := c.Build(y)
	require.NoError(t, err)

	a, err := buffer.NewGraphAllocator(buffer.CPU())
	require.NoError(t, err)
	defer a.Free()
	w0 := addr(weights[0].Data)
	require.NoError(t, a.AllocGraph(g))
	require.NoError(t, checkPlacement(g))
	assert.Same(t, wb, weights[0].Buffer.(buffer.Buffer), "weights stay in their buffer")
	assert.Equal(t, w0, addr(weights[0].Data))
	assert.Nil(t, goMem.Buffer)
	assert.Len(t, goMem.Data, 1024)
	assert.EqualValues(t, 2*1024, a.BufferSize(0), "x, which the first product takes over, and the second product")

	// Placing the same graph again keeps the places; a new graph takes
	// the memory, and the old one's tensors lose it.
	xData := addr(x.Data)
	require.NoError(t, a.AllocGraph(g))
	assert.Equal(t, xData, addr(x.Data))
	other, err := build(viewInplace)
	require.NoError(t, err)
	require.NoError(t, a.AllocGraph(other))
	assert.Nil(t, x.Data)
	assert.Nil(t, x.Buffer)
	assert.Equal(t, w0, addr(weights[0].Data))
}

func TestGraphAllocatorFree(t *testing.T) {
	a, err := buffer.NewGraphAllocator(buffer.CPU())
	require.NoError(t, err)
	g, err := build(llama(1, 8, false))
	require.NoError(t, err)
	require.NoError(t, a.AllocGraph(g))
	b := a.Buffers(0)[0]
	require.NoError(t, a.Free())
	for _, n := range g.Nodes {
		assert.Nil(t, n.Data, n.String())
	}
	assert.ErrorIs(t, b.Clear(0), buffer.ErrFreed)
	assert.ErrorIs(t, a.Free(), buffer.ErrFreed)
	assert.ErrorIs(t, a.AllocGraph(g), buffer.ErrFreed)
	assert.ErrorIs(t, a.Reserve(g), buffer.ErrFreed)
	_, err = a.ReserveSizes(g, nil, nil)
	assert.ErrorIs(t, err, buffer.ErrFreed)
}

// outputView makes an output that is a view read by a later node, flagged
// by hand: graph.SetOutput, as ggml_set_output, also flags the view's
// source, but a flag set directly does not.
func outputView(c *graph.Context) []*graph.Tensor {
	x := input(c, 256)
	s := c.Mul(x, x)
	v := c.View1D(s, 256, 0)
	v.Flags |= graph.FlagOutput
	y := c.Mul(v, v)
	z := c.Mul(y, y)
	return []*graph.Tensor{z}
}

// TestOutputViewKeepsSource: an output view keeps its source's memory to
// the end, even when the source is not flagged. ggml frees the source after
// the view's last reader and places a later tensor over the output.
func TestOutputViewKeepsSource(t *testing.T) {
	eng := cpu.New(cpu.Options{Threads: 1})
	defer eng.Close()
	require.NoError(t, computeMatches(outputView, nil, reserveAndAlloc(t, nil), eng))

	l := reftest.Lib(t)
	g, err := build(outputView)
	require.NoError(t, err)
	_, at, err := mirror.GallocrPlacement(l, g)
	require.NoError(t, err)
	v := g.Nodes[1]
	require.True(t, v.IsView() && v.Flags&graph.FlagOutput != 0 && v.ViewSrc.Flags&graph.FlagOutput == 0)
	var over []string
	for i, n := range g.Nodes[2:] {
		if at[n] < at[v]+uintptr(v.NBytes()) && at[v] < at[n]+uintptr(n.NBytes()) {
			over = append(over, fmt.Sprintf("node %d (%s)", i+2, n.Op))
		}
	}
	t.Logf("ggml places over the output view: %v", over)
	assert.NotEmpty(t, over, "ggml 0.25.1 overwrites the output view")
}

// TestMovingViewOffsets: a graph reading a cache through a view whose
// offset moves from step to step (as llama.cpp's KV cache views do) keeps
// fitting the plan, even where the allocator cannot plan again itself.
func TestMovingViewOffsets(t *testing.T) {
	a, err := buffer.NewGraphAllocator(buffer.CPU(), hostType(t, "HOST2", 1<<20))
	require.NoError(t, err)
	defer a.Free()
	cache := make([]byte, 64*16*4)
	step := func(pos uint64) *graph.Graph {
		c := graph.NewContext(graph.ContextOptions{})
		kv := f32(c, 64, 16)
		kv.Data = cache
		y := graph.SetOutput(c.Mul(c.Add(c.View1D(kv, 64, pos*256), input(c, 64)), weight(c, 64)))
		g, err := c.Build(y)
		require.NoError(t, err)
		return g
	}
	g := step(1)
	nodes, leafs := buffer.BufferIDs(g, func(*graph.Tensor) int { return 1 })
	require.NoError(t, a.ReserveN(g, nodes, leafs))
	for pos := range uint64(16) {
		g := step(pos)
		require.NoError(t, a.AllocGraph(g), "step %d", pos)
		require.NoError(t, checkPlacement(g))
		assert.Equal(t, addr(cache)+uintptr(pos*256), addr(g.Nodes[0].Data))
	}
}

// TestNoInplaceThroughView: a node reading the first rows of its source
// through a view does not run over the source's memory, as in ggml, so a
// graph whose view changes its stride keeps the plan's places.
func TestNoInplaceThroughView(t *testing.T) {
	rows := func(stride uint64) builder {
		return func(c *graph.Context) []*graph.Tensor {
			x := c.Mul(input(c, 64, 8), weight(c, 64, 8))
			a := c.View2D(x, 64, 4, stride*x.Nb[1], 0)
			return []*graph.Tensor{c.Add(a, weight(c, 64, 4))}
		}
	}
	a, err := buffer.NewGraphAllocator(buffer.CPU(), hostType(t, "HOST2", 1<<20))
	require.NoError(t, err)
	defer a.Free()
	dense, err := build(rows(1))
	require.NoError(t, err)
	require.NoError(t, a.Reserve(dense))
	require.NoError(t, a.AllocGraph(dense))
	x, y := dense.Nodes[0], dense.Nodes[2]
	require.NotEqual(t, addr(x.Data), addr(y.Data), "y does not run over the first rows of x")

	gapped, err := build(rows(2))
	require.NoError(t, err)
	require.NoError(t, a.AllocGraph(gapped))
	require.NoError(t, checkPlacement(gapped))
	assert.NotEqual(t, addr(gapped.Nodes[0].Data), addr(gapped.Nodes[2].Data))
}

// inputNode flags a computed node as an input. Inputs are planned before
// the graph's readers are counted, so running one in place would take the
// memory of a source still to be read: ggml does, then plans that source
// anew elsewhere.
func inputNode(c *graph.Context) []*graph.Tensor {
	a := weight(c, 256)
	k := c.Mul(a, weight(c, 256))
	n := graph.SetInput(c.Add(a, weight(c, 256)))
	m := c.Mul(a, n)
	return []*graph.Tensor{c.Add(k, m)}
}

func TestInputNodeNotInPlace(t *testing.T) {
	g, err := build(inputNode)
	require.NoError(t, err)
	var size uint64
	require.NoError(t, reserveAndAlloc(t, &size)(g))
	require.NoError(t, checkPlacement(g))
	assert.EqualValues(t, 4*1024, size, "the three leafs and the input")
	eng := cpu.New(cpu.Options{Threads: 1})
	defer eng.Close()
	require.NoError(t, computeMatches(inputNode, nil, reserveAndAlloc(t, nil), eng))
}

// TestDeviceGraphAllocator places graphs in device memory: no Tensor.Data,
// the device told every tensor's offset, each tensor padded as the device
// asks, small buffers split into chunks.
func TestDeviceGraphAllocator(t *testing.T) {
	for _, maxSize := range []uint64{1 << 20, 8192} {
		dev := &devType{name: "DEV0", pad: 48, maxSize: maxSize}
		a, err := buffer.NewGraphAllocator(dev)
		require.NoError(t, err)
		g, err := build(llama(2, 8, true))
		require.NoError(t, err)
		require.NoError(t, a.AllocGraph(g))
		require.NoError(t, checkPlacement(g))
		for _, n := range g.Nodes {
			require.Nil(t, n.Data, n.String())
			require.NotNil(t, n.Buffer, n.String())
		}
		sizes, err := a.ReserveSizes(g, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, a.BufferSize(0), sizes[0])
		t.Logf("buffers of at most %d bytes: %d of them, %d bytes", maxSize, len(a.Buffers(0)), a.BufferSize(0))
		require.NoError(t, a.Free())
	}
}
