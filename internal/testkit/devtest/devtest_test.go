package devtest_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func f32s(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// addGraph is x+y of 4 floats, placed in bt.
func addGraph(t *testing.T, bt buffer.Type) (g *graph.Graph, x, y, out *graph.Tensor) {
	t.Helper()
	c := graph.NewContext(graph.ContextOptions{})
	x, y = c.NewTensor(quant.F32, 4), c.NewTensor(quant.F32, 4)
	out = c.Add(x, y)
	g, err := c.Build(out)
	require.NoError(t, err)
	b, err := buffer.AllocContextTensors(c, bt)
	require.NoError(t, err)
	t.Cleanup(func() { b.Free() })
	return g, x, y, out
}

func start(t *testing.T, d backend.Device) *devtest.Backend {
	t.Helper()
	b, err := d.Init(backend.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b.(*devtest.Backend)
}

// The memory is the device's: no Data, reads and writes through the
// backend, and the results are the CPU kernels'.
func TestComputeInDeviceMemory(t *testing.T) {
	for _, async := range []bool{false, true} {
		d := devtest.New(devtest.Config{Type: backend.DeviceGPU, Async: async})
		assert.Equal(t, async, d.Props().Caps.Async)
		be := start(t, d)
		g, x, y, out := addGraph(t, d.BufferType())
		assert.Nil(t, x.Data)
		assert.False(t, d.BufferType().IsHost())
		require.NoError(t, be.SetTensorAsync(x, f32s(1, 2, 3, 4), 0))
		require.NoError(t, be.SetTensorAsync(y, f32s(10, 20, 30, 40), 0))
		require.NoError(t, be.GraphCompute(g))
		got := make([]byte, 16)
		require.NoError(t, be.GetTensorAsync(out, got, 0))
		require.NoError(t, be.Synchronize())
		assert.Equal(t, f32s(11, 22, 33, 44), got)
		assert.Equal(t, []*graph.Tensor{out}, be.Ran())
		assert.Equal(t, [][2]uint64{{0, 16}, {0, 16}}, be.Sets())
	}
}

// GraphCompute takes what it needs before it returns: changing the graph
// while the queue still works on it changes nothing.
func TestGraphComputeSnapshots(t *testing.T) {
	d := devtest.New(devtest.Config{Type: backend.DeviceGPU, Async: true, Faults: devtest.Faults{Delay: 20 * time.Millisecond}})
	be := start(t, d)
	g, x, y, out := addGraph(t, d.BufferType())
	require.NoError(t, be.SetTensorAsync(x, f32s(1, 2, 3, 4), 0))
	require.NoError(t, be.SetTensorAsync(y, f32s(1, 1, 1, 1), 0))
	require.NoError(t, be.GraphCompute(g))
	out.Op, out.Src[1] = ops.Mul, x
	require.NoError(t, be.Synchronize())
	got := make([]byte, 16)
	require.NoError(t, buffer.GetTensor(out, got, 0))
	assert.Equal(t, f32s(2, 3, 4, 5), got)
}

func TestErrors(t *testing.T) {
	d := devtest.New(devtest.Config{Type: backend.DeviceGPU, Async: true, Supports: devtest.F32Ops(ops.Add),
		Faults: devtest.Faults{Compute: func(n *graph.Tensor) error {
			if n.Name == "bad" {
				return devtest.ErrFault
			}
			return nil
		}}})
	be := start(t, d)

	// An operation the device refuses, and operands outside its memory,
	// are errors of the call.
	c := graph.NewContext(graph.ContextOptions{})
	m := c.Mul(c.NewTensor(quant.F32, 4), c.NewTensor(quant.F32, 4))
	g, err := c.Build(m)
	require.NoError(t, err)
	assert.ErrorIs(t, be.GraphCompute(g), backend.ErrUnsupported)
	hg, hx, _, _ := addGraph(t, buffer.CPU())
	assert.ErrorContains(t, be.GraphCompute(hg), "not the device's")
	assert.ErrorContains(t, be.SetTensorAsync(hx, f32s(1), 0), "not the device's")

	// A failure in the queue comes out of the next Synchronize, once.
	g, x, _, out := addGraph(t, d.BufferType())
	assert.ErrorIs(t, be.SetTensorAsync(x, f32s(1, 2, 3, 4, 5), 0), buffer.ErrOutOfBounds)
	out.Name = "bad"
	require.NoError(t, be.GraphCompute(g))
	assert.ErrorIs(t, be.Synchronize(), devtest.ErrFault)
	assert.NoError(t, be.Synchronize())

	require.NoError(t, be.Close())
	assert.ErrorIs(t, be.GraphCompute(g), backend.ErrClosed)
	assert.ErrorIs(t, be.Synchronize(), backend.ErrClosed)
	assert.NoError(t, be.Close())
}

// Only the device with events has the optional interface, and says so in
// its caps.
func TestEventsMatchCaps(t *testing.T) {
	var plain backend.Device = devtest.New(devtest.Config{})
	_, ok := plain.(backend.EventCreator)
	assert.False(t, ok)
	assert.False(t, plain.Props().Caps.Events)
	ed := devtest.NewWithEvents(devtest.Config{Name: "EV0"})
	var withEvents backend.Device = ed
	ec, ok := withEvents.(backend.EventCreator)
	require.True(t, ok)
	assert.True(t, withEvents.Props().Caps.Events)
	assert.True(t, withEvents.Props().Caps.Async)

	be := start(t, withEvents)
	assert.Same(t, ed, be.Device())
	e, err := ec.NewEvent()
	require.NoError(t, err)
	require.NoError(t, e.Record(be))
	require.NoError(t, e.Wait(be))
	require.NoError(t, e.Synchronize())
	assert.Equal(t, []string{"record 0", "wait 0", "sync 0"}, ed.TakeTrace())
	assert.Equal(t, 1, ed.NEvents())
	other := start(t, devtest.New(devtest.Config{Name: "OTHER0"}))
	assert.ErrorIs(t, e.Record(other), backend.ErrArgument)
	require.NoError(t, e.Free())
	assert.ErrorIs(t, e.Free(), backend.ErrArgument)
}

func TestParams(t *testing.T) {
	d := devtest.New(devtest.Config{Name: "P0"})
	opts, err := backend.ParseDeviceSelection("P0:threads=3")
	require.NoError(t, err)
	b, err := d.Init(opts)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	for _, bad := range []string{"P0:threads=0", "P0:threads=x", "P0:thread=2"} {
		opts, err := backend.ParseDeviceSelection(bad)
		require.NoError(t, err)
		_, err = d.Init(opts)
		assert.ErrorIs(t, err, backend.ErrArgument, bad)
	}
	_, err = d.Init(backend.Options{Params: map[string]map[string]string{"OTHER0": {"x": "1"}}})
	assert.NoError(t, err, "another device's parameters are not this one's")
}
