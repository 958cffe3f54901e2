package hexagon

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	double "github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

// TestMultiSession: HTP0 and HTP0:1 (a virtual session, effective domain
// 11) and a two-core group G[0-1] open, compute, copy between sessions
// on the DSP with events, all-reduce over two cores, and leave nothing
// behind after Close.
func TestMultiSession(t *testing.T) {
	d := double.Open(t, double.Full)
	d.Configure(t, "cores=2")
	o := testOptions(d)
	cfgs, _, err := ParseDevices("HTP0,HTP0:1,G[0-1],HTP1")
	require.NoError(t, err)
	o.Devices = cfgs
	r, devs := openRegistry(t, o)
	require.Len(t, devs, 4)
	for _, dv := range devs {
		require.NoError(t, backend.Availability(dv), dv.Name())
		checkCompute(t, dv)
	}
	log := d.CallLog(t)
	require.Contains(t, log, "RESERVE_NEW_SESSION")
	require.Contains(t, log, "dspqueue_create(domain 11")
	require.Contains(t, log, "dspqueue_create(domain 4")
	require.Equal(t, uint64(5), d.Stat("queues_live"), "HTP0, HTP0:1, G's two cores, HTP1")
	require.Same(t, devs[0].BufferType(), r.SplitBufferType(0))

	// A tensor computed on HTP0 copied by HTP0:1 and by HTP1, ordered by
	// an event, then used there.
	b0, err := devs[0].Init(backend.Options{})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, dst := range []backend.Device{devs[1], devs[3]} {
		b1, err := dst.Init(backend.Options{})
		require.NoError(t, err)
		ctx0 := graph.NewContext(graph.ContextOptions{})
		a := ctx0.NewTensor(quant.F32, 256, 4)
		sq := ctx0.Sqr(a)
		g0, err := ctx0.Build(sq)
		require.NoError(t, err)
		buf0, err := buffer.AllocContextTensors(ctx0, devs[0].BufferType())
		require.NoError(t, err)
		ctx1 := graph.NewContext(graph.ContextOptions{})
		c := ctx1.NewTensor(quant.F32, 256, 4)
		s := ctx1.Scale(c, 2)
		g1, err := ctx1.Build(s)
		require.NoError(t, err)
		buf1, err := buffer.AllocContextTensors(ctx1, dst.BufferType())
		require.NoError(t, err)
		xs := randF32(rng, 1024)
		require.NoError(t, b0.SetTensorAsync(a, quant.F32Bytes(xs), 0))
		require.NoError(t, b0.GraphCompute(g0))
		ev, err := devs[0].(backend.EventCreator).NewEvent()
		require.NoError(t, err)
		require.NoError(t, ev.Record(b0))
		require.NoError(t, ev.Wait(b1))
		require.NoError(t, backend.CopyTensorAsync(b0, b1, sq, c))
		require.NoError(t, b1.GraphCompute(g1))
		out := make([]byte, s.NBytes())
		require.NoError(t, b1.GetTensorAsync(s, out, 0))
		got := quant.BytesF32(out)
		for i, x := range xs {
			require.InDelta(t, 2*x*x, got[i], 1e-5)
		}
		require.NoError(t, ev.Synchronize())
		require.NoError(t, ev.Free())
		require.NoError(t, b1.Close())
		require.NoError(t, buf0.Free())
		require.NoError(t, buf1.Free())
	}
	require.Equal(t, uint64(2), d.Stat("op.CPY"), "copied on the DSP")

	// All-reduce over HTP0 and HTP1 (distinct cores); HTP0 and HTP0:1
	// share a core and are refused.
	b3, err := devs[3].Init(backend.Options{})
	require.NoError(t, err)
	b1, err := devs[1].Init(backend.Options{})
	require.NoError(t, err)
	_, err = NewComm(b0, b1)
	require.ErrorIs(t, err, backend.ErrUnsupported)
	var cm Communicator = r
	comm, err := cm.NewComm(b0, b3)
	require.NoError(t, err)
	var ts []*graph.Tensor
	var vals [][]float32
	var bufs []buffer.Buffer
	for _, dv := range []backend.Device{devs[0], devs[3]} {
		ctx := graph.NewContext(graph.ContextOptions{})
		x := ctx.NewTensor(quant.F32, 100)
		buf, err := buffer.AllocContextTensors(ctx, dv.BufferType())
		require.NoError(t, err)
		bufs = append(bufs, buf)
		v := randF32(rng, 100)
		require.NoError(t, backend.SetFloat32(nil, x, v))
		ts, vals = append(ts, x), append(vals, v)
	}
	require.NoError(t, comm.AllReduce(ts))
	for _, x := range ts {
		got, err := backend.GetFloat32(nil, x)
		require.NoError(t, err)
		for i := range got {
			require.InDelta(t, vals[0][i]+vals[1][i], got[i], 1e-6)
		}
	}
	comm.Free()
	require.Error(t, comm.AllReduce(ts), "freed")
	for _, b := range bufs {
		require.NoError(t, b.Free())
	}
	require.NoError(t, b0.Close())
	require.NoError(t, r.Close())
	require.Empty(t, d.Violations())
	require.Empty(t, d.Leaks(), "no rpcmem blocks, mappings or queues left")
}
