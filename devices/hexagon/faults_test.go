package hexagon

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/hexagon/internal/fastrpc"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
	double "github.com/ggml-go/ggml/internal/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

// computeErr runs a matmul graph on dev and returns compute's and then
// synchronize's error.
func computeErr(t *testing.T, dev backend.Device) error {
	t.Helper()
	b, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	mg := newMMGraph(t, dev, rand.New(rand.NewPCG(7, 8)), quant.Q8_0, 64, 32, 2)
	defer mg.free()
	if err := b.GraphCompute(mg.g); err != nil {
		return err
	}
	return b.Synchronize()
}

// TestDSPFaults: a failure status, a queue error, a malformed or missing
// answer become Go errors that mark the session; later calls report it
// at once; the process and the other session go on.
func TestDSPFaults(t *testing.T) {
	for _, c := range []struct {
		name, knobs string
		check       func(t *testing.T, err error)
	}{
		{"op status", "fail.op=1:3", func(t *testing.T, err error) {
			var de *DSPError
			require.ErrorAs(t, err, &de)
			require.Equal(t, htp.StatusNoSupport, de.Status)
		}},
		{"vtcm", "fail.op=1:5@o4", func(t *testing.T, err error) {
			var de *DSPError
			require.ErrorAs(t, err, &de)
			require.Equal(t, htp.StatusVTCMTooSmall, de.Status)
		}},
		{"write on second session", "fail.queue_write=1x0:0xe@q2", func(t *testing.T, err error) {
			require.ErrorIs(t, err, fastrpc.EBadParm)
			require.ErrorContains(t, err, "dspqueue_write")
			require.ErrorContains(t, err, "not mapped into this session")
		}},
		{"read interrupted", "fail.queue_read=1:0x2e", func(t *testing.T, err error) {
			require.ErrorIs(t, err, fastrpc.EInterrupted)
		}},
		{"short answer", "fail.rsp_size=1:80", func(t *testing.T, err error) {
			require.ErrorContains(t, err, "bad answer: 80 bytes")
		}},
		{"no answer", "delay_us=900000", func(t *testing.T, err error) {
			require.ErrorContains(t, err, "no answer")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := double.Open(t, double.Full)
			o := testOptions(d)
			o.ResponseTimeout = 300 * time.Millisecond
			o.Devices = []DeviceConfig{{Name: "HTP0"}, {Name: "HTP0:1", Virtual: 1}}
			r, devs := openRegistry(t, o)
			for _, dv := range devs {
				require.NoError(t, backend.Availability(dv))
			}
			d.Configure(t, c.knobs)
			bad := devs[0]
			if c.name == "write on second session" {
				bad = devs[1]
			}
			err := computeErr(t, bad)
			require.Error(t, err, d.Log())
			require.ErrorIs(t, err, ErrSession)
			c.check(t, err)
			// Marked: the next calls fail at once with the same error.
			b, _ := bad.Init(backend.Options{})
			require.ErrorIs(t, b.Synchronize(), ErrSession)
			start := time.Now()
			require.ErrorIs(t, computeErr(t, bad), ErrSession)
			require.Less(t, time.Since(start), time.Second)
			d.Configure(t, "fail.op=off;fail.queue_write=off;fail.queue_read=off;fail.rsp_size=off;delay_us=0")
			for _, dv := range devs {
				if dv != bad {
					checkCompute(t, dv)
				}
			}
			require.NoError(t, r.Close())
			if c.name != "no answer" {
				require.Empty(t, d.Leaks(), d.Log())
			}
		})
	}
}

// TestQueueRetries: EEXPIRED and EWOULDBLOCK reads are retried.
func TestQueueRetries(t *testing.T) {
	d := double.Open(t, double.Full)
	_, devs := openRegistry(t, testOptions(d))
	d.Configure(t, "fail.queue_read=1x3:0xc;delay_us=2000")
	require.NoError(t, computeErr(t, devs[0]))
	d.Configure(t, "fail.queue_read=1x2:0x204")
	require.NoError(t, computeErr(t, devs[0]))
	require.Equal(t, uint64(5), d.Stat("faults_fired"))
}

// TestDoubleCatchesBadBatches: the double fails our code when a batch is
// wrong (a tensor offset past its buffer, an unmapped fd, a stale
// sequence number): the batch is rejected and the session marked.
func TestDoubleCatchesBadBatches(t *testing.T) {
	for _, c := range []struct {
		name   string
		breakf func(t *testing.T, s *session, mg *mmGraph)
	}{
		{"offset past buffer", func(t *testing.T, s *session, mg *mmGraph) {
			x, err := extraOf(mg.y)
			require.NoError(t, err)
			x.at = x.blk.size - 16
		}},
		{"unmapped fd", func(t *testing.T, s *session, mg *mmGraph) {
			x, err := extraOf(mg.y)
			require.NoError(t, err)
			blk, err := allocBlock(s.lib, 1<<16, false)
			require.NoError(t, err)
			t.Cleanup(func() { _ = blk.free() })
			// A block the session believes mapped but FastRPC never saw.
			blk.maps[s] = false
			x.blk, x.at = blk, 0
		}},
		{"stale sequence", func(t *testing.T, s *session, mg *mmGraph) {
			// Resend batch 1 while batch 1 is unanswered: the id is in
			// flight.
			require.NoError(t, s.enqueue(mustNode(t, mg.out)))
			require.NoError(t, s.flushBatch())
			s.reqSeq--
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := double.Open(t, double.Full)
			d.Configure(t, "delay_us=20000")
			r, devs := openRegistry(t, testOptions(d))
			dev := devs[0].(*device)
			mg := newMMGraph(t, dev, rand.New(rand.NewPCG(9, 9)), quant.Q4_0, 64, 32, 2)
			c.breakf(t, dev.s, mg)
			b, err := dev.Init(backend.Options{})
			require.NoError(t, err)
			err = backend.Compute(b, mg.g)
			if err == nil {
				// The stale batch's own answer arrives after the one
				// expected: the next run reads it.
				err = backend.Compute(b, mg.g)
			}
			require.Error(t, err, d.Log())
			require.ErrorIs(t, err, ErrSession)
			require.NotEmpty(t, d.Violations(), "the double saw the fault")
			t.Log(d.Violations())
			mg.free()
			require.NoError(t, r.Close())
		})
	}
}

func mustNode(t *testing.T, tt *graph.Tensor) *opNode {
	t.Helper()
	n, err := newNode(tt)
	require.NoError(t, err)
	return n
}
