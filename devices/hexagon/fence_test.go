package hexagon

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

// fenceRegistry opens devices (a DEVICES list) on the double speaking the
// fence protocol with cores NSPs.
func fenceRegistry(t *testing.T, cores int, devices string) (*hexdouble.Double, *Registry, []backend.Device) {
	t.Helper()
	d := hexdouble.Open(t, hexdouble.Full)
	d.Configure(t, fmt.Sprintf("protocol=fence; cores=%d; fence_timeout_us=2000000", cores))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(d.Log())
		}
	})
	o := testOptions(d)
	o.Protocol = ProtocolFence
	cfgs, _, err := ParseDevices(devices)
	require.NoError(t, err)
	o.Devices = cfgs
	r, devs := openRegistry(t, o)
	for _, dv := range devs {
		require.NoError(t, backend.Availability(dv), dv.Name())
	}
	return d, r, devs
}

// scaled builds y = k * x on dev: x, y and the graph.
func scaled(t *testing.T, dev backend.Device, n int, k float32) (x, y *graph.Tensor, g *graph.Graph, buf buffer.Buffer) {
	t.Helper()
	ctx := graph.NewContext(graph.ContextOptions{})
	x = ctx.NewTensor(quant.F32, int64(n))
	y = ctx.Scale(x, k)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	buf, err = buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	// A failed check skips the caller's Free; the double's rpcmem blocks
	// are process-wide, so a leak would fail the next test's leak check.
	t.Cleanup(func() { _ = buf.Free() })
	return x, y, g, buf
}

// TestFenceProtocol: with ProtocolFence, events, copies across
// sessions, a two-core group and the all-reduce run on the double's DSP
// side with upstream's ops (FENCE, CPY_FENCE, MDEV_GROUP, ALLREDUCE), with
// correct results and nothing left after Close.
func TestFenceProtocol(t *testing.T) {
	d, r, devs := fenceRegistry(t, 2, "HTP0,HTP0:1,G[0-1],HTP1")
	require.Len(t, devs, 4)
	require.Contains(t, d.CallLog(t), "fastrpc_mmap(domain 3, fd", "fence buffers mapped")
	for _, dv := range devs {
		checkCompute(t, dv)
		require.Empty(t, d.Violations(), dv.Name())
	}
	require.NotZero(t, d.Stat("op.MDEV_GROUP"), "G's batches start with MDEV_GROUP")
	require.Equal(t, 2*d.Stat("op.MDEV_GROUP")/2, d.Stat("op.MDEV_GROUP"))
	require.NotZero(t, d.Stat("mdev_shares"), "both of G's cores wrote their share of the output")

	rng := rand.New(rand.NewPCG(31, 32))
	b0, err := devs[0].Init(backend.Options{})
	require.NoError(t, err)
	for _, dst := range []backend.Device{devs[1], devs[3]} {
		d.ClearLog()
		fences, cpyFences := d.Stat("op.FENCE"), d.Stat("op.CPY_FENCE")
		b1, err := dst.Init(backend.Options{})
		require.NoError(t, err)
		a, sq, g0, buf0 := scaled(t, devs[0], 512, 3)
		c, s, g1, buf1 := scaled(t, dst, 512, 2)
		xs := randF32(rng, 512)
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
		for i, v := range quant.BytesF32(out) {
			require.InDelta(t, 6*xs[i], v, 1e-4)
		}
		require.NoError(t, ev.Synchronize())
		require.NoError(t, ev.Free())
		// The DSP counts a batch's ops when the whole batch is done, and
		// the copy's CPY_FENCE releases b1 before b0's batch ends: only
		// b0's answer says its ops are all counted.
		require.NoError(t, b0.Synchronize())
		if dst == devs[3] {
			// Another core: the event's FENCE signal and wait, and the
			// copy's CPY_FENCE and FENCE wait, all on the DSPs.
			require.Equal(t, fences+3, d.Stat("op.FENCE"), d.Log())
			require.Equal(t, cpyFences+1, d.Stat("op.CPY_FENCE"))
		} else {
			// A virtual session of the same core: the signal only; the
			// copy runs on HTP0:1 after HTP0's work.
			require.Equal(t, fences+1, d.Stat("op.FENCE"), d.Log())
			require.Equal(t, cpyFences, d.Stat("op.CPY_FENCE"))
		}
		require.NoError(t, b1.Close())
		require.NoError(t, buf0.Free())
		require.NoError(t, buf1.Free())
	}

	b3, err := devs[3].Init(backend.Options{})
	require.NoError(t, err)
	checkAllReduce(t, d, r, rng, []backend.Backend{b0, b3}, []backend.Device{devs[0], devs[3]})
	require.NoError(t, b0.Close())
	require.NoError(t, b3.Close())
	require.NoError(t, r.Close())
	require.Empty(t, d.Violations())
	require.Empty(t, d.Leaks(), "no rpcmem blocks, mappings or queues left")
}

// checkAllReduce sums a random vector per rank on the DSPs, twice (the
// fence values move on), and checks every rank's result.
func checkAllReduce(t *testing.T, d *hexdouble.Double, r *Registry, rng *rand.Rand, bs []backend.Backend, devs []backend.Device) {
	t.Helper()
	before := d.Stat("op.ALLREDUCE")
	comm, err := r.NewComm(bs...)
	require.NoError(t, err)
	var ts []*graph.Tensor
	var bufs []buffer.Buffer
	for _, dv := range devs {
		ctx := graph.NewContext(graph.ContextOptions{})
		x := ctx.NewTensor(quant.F32, 300)
		buf, err := buffer.AllocContextTensors(ctx, dv.BufferType())
		require.NoError(t, err)
		bufs, ts = append(bufs, buf), append(ts, x)
	}
	for round := range 2 {
		want := make([]float32, 300)
		for _, x := range ts {
			v := randF32(rng, 300)
			for i := range v {
				want[i] += v[i]
			}
			require.NoError(t, backend.SetFloat32(nil, x, v))
		}
		require.NoError(t, comm.AllReduce(ts))
		for _, b := range bs {
			require.NoError(t, b.Synchronize())
		}
		for k, x := range ts {
			got, err := backend.GetFloat32(nil, x)
			require.NoError(t, err)
			for i := range got {
				require.InDelta(t, want[i], got[i], 1e-5, "round %d rank %d element %d", round, k, i)
			}
		}
	}
	require.Equal(t, before+2*uint64(len(bs)), d.Stat("op.ALLREDUCE"), "reduced on the DSPs")
	comm.Free()
	require.Error(t, comm.AllReduce(ts), "freed")
	for _, b := range bufs {
		require.NoError(t, b.Free())
	}
}

// TestFenceAllReduce: the DSP all-reduce over 3 and 4 cores.
func TestFenceAllReduce(t *testing.T) {
	for _, n := range []int{3, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var names []string
			for i := range n {
				names = append(names, fmt.Sprintf("HTP%d", i))
			}
			d, r, devs := fenceRegistry(t, n, strings.Join(names, ","))
			var bs []backend.Backend
			for _, dv := range devs {
				b, err := dv.Init(backend.Options{})
				require.NoError(t, err)
				bs = append(bs, b)
			}
			checkAllReduce(t, d, r, rand.New(rand.NewPCG(uint64(n), 7)), bs, devs)
			for _, b := range bs {
				require.NoError(t, b.Close())
			}
			require.NoError(t, r.Close())
			require.Empty(t, d.Violations())
			require.Empty(t, d.Leaks())
		})
	}
}

// TestFencesCatchBugs: fence mistakes in our code are caught, by the
// double's DSP side or by the host's wait, instead of passing or hanging.
func TestFencesCatchBugs(t *testing.T) {
	setup := func(t *testing.T) (*hexdouble.Double, []backend.Device, backend.Backend, backend.Backend, *event) {
		d, _, devs := fenceRegistry(t, 2, "HTP0,HTP1")
		d.Configure(t, "fence_timeout_us=50000")
		b0, err := devs[0].Init(backend.Options{})
		require.NoError(t, err)
		b1, err := devs[1].Init(backend.Options{})
		require.NoError(t, err)
		ev, err := devs[0].(backend.EventCreator).NewEvent()
		require.NoError(t, err)
		return d, devs, b0, b1, ev.(*event)
	}
	t.Run("stale fence value", func(t *testing.T) {
		d, _, b0, _, e := setup(t)
		require.NoError(t, e.Record(b0))
		require.NoError(t, e.Synchronize())
		// A counter that did not move on: the next signal repeats the
		// value the slot holds, which would release a waiter early.
		e.s.fenceSeq--
		require.NoError(t, e.Record(b0))
		// The host's poll may well return at once: the slot holds the
		// value already, the very hazard. The DSP refused the signal, and
		// the session reports it.
		_ = e.Synchronize()
		err := b0.Synchronize()
		require.ErrorIs(t, err, ErrSession)
		var de *DSPError
		require.ErrorAs(t, err, &de, "%v", err)
		require.Equal(t, "INVAL-PARAMS", de.Status.String())
		require.Contains(t, d.Violations(), "stale fence")
	})
	t.Run("misplaced fence tensor", func(t *testing.T) {
		d, _, b0, _, e := setup(t)
		s := e.fs
		f := s.fence.tensor(e.slot, 1)
		f.Extra.(*extra).at += 8 // a slot index computed in bytes wrongly
		s.work.Lock()
		err := s.enqueueFence(f, s.nextFenceSeq(), false)
		s.work.Unlock()
		require.NoError(t, err)
		err = b0.Synchronize()
		require.ErrorIs(t, err, ErrSession)
		require.Contains(t, d.Violations(), "not whole slots at a slot boundary")
	})
	t.Run("wrong fence slot", func(t *testing.T) {
		_, _, b0, _, e := setup(t)
		require.NoError(t, e.Record(b0))
		other, err := e.fs.allocFence(1)
		require.NoError(t, err)
		e.slot = other // the host polls a slot the DSP never signals
		err = e.Synchronize()
		require.ErrorContains(t, err, "stale fence")
	})
	t.Run("wait never signalled", func(t *testing.T) {
		_, devs, b0, b1, e := setup(t)
		require.NoError(t, e.Record(b0))
		e.fseq += 5 // a value no DSP signals: HTP1's DSP waits in vain
		require.NoError(t, e.Wait(b1))
		checkFails := func() error {
			x, y, g, buf := scaled(t, devs[1], 64, 2)
			defer buf.Free()
			require.NoError(t, backend.SetFloat32(nil, x, make([]float32, 64)))
			if err := b1.GraphCompute(g); err != nil {
				return err
			}
			_ = y
			return b1.Synchronize()
		}
		err := checkFails()
		var de *DSPError
		require.ErrorAs(t, err, &de, "%v", err)
		require.Equal(t, "INTERNAL-ERROR", de.Status.String(), "the DSP's fence wait timed out")
	})
}

// TestFenceGroupCatchesBugs: a group batch whose second core is told the
// wrong index, or that goes twice to the first core and never to the
// second, fails (a barrier that times out, a repeated batch) instead of
// computing half an output.
func TestFenceGroupCatchesBugs(t *testing.T) {
	for _, c := range []struct {
		name   string
		breakf func(s *session)
	}{
		{"index used twice", func(s *session) { s.group[0].index = 0 }},
		{"batch sent to one core twice", func(s *session) { s.all = []*session{s, s} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, _, devs := fenceRegistry(t, 2, "G[0-1]")
			d.Configure(t, "fence_timeout_us=50000")
			dev := devs[0].(*device)
			checkCompute(t, dev)
			c.breakf(dev.s)
			b, err := dev.Init(backend.Options{})
			require.NoError(t, err)
			mg := newMMGraph(t, dev, rand.New(rand.NewPCG(5, 6)), quant.Q4_0, 64, 32, 2)
			err = backend.Compute(b, mg.g)
			var de *DSPError
			require.ErrorAs(t, err, &de, "%v", err)
			t.Log(err, d.Violations())
		})
	}
}
