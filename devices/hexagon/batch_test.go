package hexagon

import (
	"log/slog"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
	double "github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

// chain builds x -> sqr -> scale -> ... (n ops), each tensor in a buffer
// of its own when split, so batches see many buffers.
func chain(t *testing.T, dev backend.Device, n int, split bool) (*graph.Graph, *graph.Tensor, *graph.Tensor, []buffer.Buffer) {
	ctx := graph.NewContext(graph.ContextOptions{})
	x := ctx.NewTensor(quant.F32, 64, 2)
	y := x
	for i := range n {
		if i%2 == 0 {
			y = ctx.Scale(y, 0.5)
		} else {
			y = ctx.Sqr(y)
		}
	}
	g, err := ctx.Build(y)
	require.NoError(t, err)
	var bufs []buffer.Buffer
	if split {
		for _, tt := range ctx.Tensors() {
			b, err := dev.BufferType().Alloc(dev.BufferType().AllocSize(tt) + uint64(len(bufs))*4096)
			require.NoError(t, err)
			require.NoError(t, b.AllocTensor(tt, 0))
			bufs = append(bufs, b)
		}
	} else {
		b, err := buffer.AllocContextTensors(ctx, dev.BufferType())
		require.NoError(t, err)
		bufs = append(bufs, b)
	}
	return g, x, y, bufs
}

func chainWant(xs []float32, n int) []float32 {
	out := append([]float32(nil), xs...)
	for i := range n {
		for j := range out {
			if i%2 == 0 {
				out[j] *= 0.5
			} else {
				out[j] *= out[j]
			}
		}
	}
	return out
}

// TestBatching: small batches and a shallow queue split a graph into many
// batches (full batch, more than 16 buffers), with back-pressure when the
// queue is full; buffers are sorted by size with their tensors remapped;
// the result is the same.
func TestBatching(t *testing.T) {
	d := double.Open(t, double.Full)
	d.Configure(t, "delay_us=300")
	o := testOptions(d)
	o.OpBatch, o.OpQueue = 4, 2
	_, devs := openRegistry(t, o)
	for _, split := range []bool{false, true} {
		const n = 40
		g, x, y, bufs := chain(t, devs[0], n, split)
		xs := randF32(rand.New(rand.NewPCG(1, 2)), 128)
		require.NoError(t, buffer.SetTensor(x, quant.F32Bytes(xs), 0))
		b, err := devs[0].Init(backend.Options{})
		require.NoError(t, err)
		d.ClearLog()
		require.NoError(t, backend.Compute(b, g))
		out := make([]byte, y.NBytes())
		require.NoError(t, buffer.GetTensor(y, out, 0))
		requireClose(t, chainWant(xs, n), quant.BytesF32(out), 1e-5)
		batches := regexp.MustCompile(`(?m)^\d+ batch q\d+ id \d+ seq \d+ bufs (\d+) tensors (\d+) ops (\d+)`).FindAllStringSubmatch(d.Log(), -1)
		require.Len(t, batches, n/4, "batches of 4 ops")
		for _, m := range batches {
			require.Equal(t, "4", m[3])
			if split {
				require.Equal(t, "5", m[1], "4 ops over 5 tensors, a buffer each")
			}
		}
		require.Empty(t, d.Violations())
		for _, bb := range bufs {
			require.NoError(t, bb.Free())
		}
	}
}

// TestSortBuffers: the largest buffer comes first and tensors follow
// their buffer; tensors are deduplicated by pointer and by memory+shape.
func TestSortBuffers(t *testing.T) {
	d := double.Open(t, double.Full)
	_, devs := openRegistry(t, testOptions(d))
	dev := devs[0].(*device)
	ctx := graph.NewContext(graph.ContextOptions{})
	small := ctx.NewTensor(quant.F32, 64)
	big := ctx.NewTensor(quant.F32, 64*1024)
	out := ctx.Add(ctx.View1D(big, 64, 0), small)
	var bufs []buffer.Buffer
	for _, tt := range []*graph.Tensor{small, big, out} {
		b, err := dev.BufferType().Alloc(dev.BufferType().AllocSize(tt))
		require.NoError(t, err)
		require.NoError(t, b.AllocTensor(tt, 0))
		bufs = append(bufs, b)
	}
	defer func() {
		for _, b := range bufs {
			_ = b.Free()
		}
	}()
	v := out.Src[0]
	require.NoError(t, bufs[1].InitView(v))
	s := dev.s
	n, err := newNode(out)
	require.NoError(t, err)
	require.NoError(t, s.enqueue(n))
	// The same op again: nothing new but the op; a second view with the
	// same memory and shape is the same tensor.
	v2 := ctx.View1D(big, 64, 0)
	require.NoError(t, bufs[1].InitView(v2))
	n2 := &opNode{op: htp.OpAdd, node: out}
	n2.inputs[0], n2.inputs[1], n2.outputs[0] = v2, small, out
	require.NoError(t, s.enqueue(n2))
	bt := s.batch
	require.Len(t, bt.tens, 3)
	require.Len(t, bt.bufs, 3)
	require.Equal(t, []uint16{0, 1, htp.NoTensor, htp.NoTensor, htp.NoTensor, htp.NoTensor}, bt.ops[1].Src[:htp.MaxInputs])
	before := bt.bufs[bt.tens[0].BI].Size
	bt.sortBuffers()
	require.Greater(t, bt.bufs[0].Size, bt.bufs[1].Size)
	require.GreaterOrEqual(t, bt.bufs[1].Size, bt.bufs[2].Size)
	require.Equal(t, before, bt.bufs[bt.tens[0].BI].Size, "tensor 0 follows its buffer")
	for i, tt := range bt.tens {
		require.Equal(t, uint64(bt.bufs[tt.BI].FD), uint64(bt.blocks[tt.BI].fd), "tensor %d", i)
	}
	require.NoError(t, s.sync())
}

// TestProfiling: with GGML_HEXAGON_PROFILE the profiler is started and
// stopped around the session, and batches still compute (with mode 3
// their trace sections are sent too).
func TestProfiling(t *testing.T) {
	for _, mode := range []int{1, 2, 3} {
		d := double.Open(t, double.Full)
		lb := captureLog(t, slog.LevelInfo)
		o := testOptions(d)
		o.Profile, o.OpTrace = mode, 16
		r, devs := openRegistry(t, o)
		require.NoError(t, backend.Availability(devs[0]))
		checkCompute(t, devs[0])
		require.NoError(t, r.Close())
		// Printed without VERBOSE, as upstream prints for any PROFILE.
		out := lb.String()
		require.Contains(t, out, "profile-op OPBATCH")
		require.Contains(t, out, "op=MUL_MAT")
		if mode == 2 {
			require.Contains(t, out, "pmu=")
		}
		require.Contains(t, d.Log(), "htp_iface_profiler")
		require.Empty(t, d.Violations())
		require.Empty(t, d.Leaks())
	}
}

// TestFitsWidestOp: an op naming as many tensors as its protocol's
// descriptor holds (6 + 4 public, 10 + 4 fence protocol), each in its own
// buffer, passes the fit check and is added; one source more is refused
// with an error. The fit check kept 10 slots and panicked at the 11th.
func TestFitsWidestOp(t *testing.T) {
	for _, proto := range []Protocol{ProtocolPublic, ProtocolFence} {
		t.Run(map[Protocol]string{ProtocolPublic: "public", ProtocolFence: "fence"}[proto], func(t *testing.T) {
			d := double.Open(t, double.Full)
			o := testOptions(d)
			if proto == ProtocolFence {
				d.Configure(t, "protocol=fence")
			}
			o.Protocol = proto
			_, devs := openRegistry(t, o)
			dev := devs[0].(*device)
			s := dev.s
			nIn := s.proto.MaxInputs()
			ctx := graph.NewContext(graph.ContextOptions{})
			var bufs []buffer.Buffer
			newT := func() *graph.Tensor {
				tt := ctx.NewTensor(quant.F32, 32)
				b, err := dev.BufferType().Alloc(dev.BufferType().AllocSize(tt) + uint64(len(bufs))*4096)
				require.NoError(t, err)
				require.NoError(t, b.AllocTensor(tt, 0))
				bufs = append(bufs, b)
				return tt
			}
			n := &opNode{op: htp.OpAdd}
			for i := range nIn {
				n.inputs[i] = newT()
			}
			for i := range n.outputs {
				n.outputs[i] = newT()
			}
			n.node = n.outputs[0]
			t.Cleanup(func() {
				for _, b := range bufs {
					b.Free()
				}
			})
			for _, ts := range [][]*graph.Tensor{n.inputs[:nIn], n.outputs[:]} {
				for _, tt := range ts {
					x, err := extraOf(tt)
					require.NoError(t, err)
					require.NoError(t, s.ensureMapped(x.blk, false))
				}
			}
			s.batch.reset()
			ok, err := s.batch.fits(n)
			require.NoError(t, err)
			require.True(t, ok, "%d tensors in %d buffers fit 16", nIn+len(n.outputs), len(bufs))
			require.NoError(t, s.batch.add(n))
			require.Len(t, s.batch.bufs, nIn+len(n.outputs))
			s.batch.reset()
			if nIn < len(n.inputs) {
				n.inputs[nIn] = n.inputs[0]
				require.ErrorContains(t, s.batch.add(n), "more than the 6 sources")
			}
		})
	}
}
