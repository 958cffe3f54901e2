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
	double "github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

// computeErr runs a matmul graph on dev and returns compute's and then
// synchronize's error.
func computeErr(t *testing.T, dev backend.Device) error {
	t.Helper()
	b, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	return computeOn(t, dev, b)
}

func computeOn(t *testing.T, dev backend.Device, b backend.Backend) error {
	t.Helper()
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
		// @o8: MUL_MAT_ADD, the matmul fused with its ADD.
		{"vtcm", "fail.op=1:5@o8", func(t *testing.T, err error) {
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
		{"dsp crash", "fail.crash=1", func(t *testing.T, err error) {
			require.ErrorIs(t, err, fastrpc.EBadState)
			require.ErrorContains(t, err, "dspqueue_read")
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
			failed, err := bad.Init(backend.Options{})
			require.NoError(t, err)
			err = computeOn(t, bad, failed)
			require.Error(t, err, d.Log())
			require.ErrorIs(t, err, ErrSession)
			c.check(t, err)
			// Marked: the backend's next calls fail at once.
			start := time.Now()
			require.ErrorIs(t, failed.Synchronize(), ErrSession)
			require.ErrorIs(t, failed.GraphCompute(&graph.Graph{}), ErrSession)
			require.Less(t, time.Since(start), time.Second)
			d.Configure(t, "fail.op=off;fail.queue_write=off;fail.queue_read=off;fail.rsp_size=off;fail.crash=off;delay_us=0")
			// A new backend reopens the session and computes; the old
			// one still reports the failure.
			checkCompute(t, bad)
			require.ErrorIs(t, failed.Synchronize(), ErrSession)
			for _, dv := range devs {
				if dv != bad {
					checkCompute(t, dv)
				}
			}
			require.NoError(t, r.Close())
			if c.name != "no answer" && c.name != "dsp crash" {
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

// TestPerCallDSPErrors: with dsp_errors=per_call a failure status fails
// the call that reads it and the session goes on; unknown parameters are
// refused.
func TestPerCallDSPErrors(t *testing.T) {
	d := double.Open(t, double.Full)
	_, devs := openRegistry(t, testOptions(d))
	params := func(kv map[string]string) backend.Options {
		return backend.Options{Params: map[string]map[string]string{"HTP0": kv}}
	}
	_, err := devs[0].Init(params(map[string]string{"nosuch": "1"}))
	require.ErrorIs(t, err, backend.ErrArgument)
	require.ErrorContains(t, err, `device HTP0 has no parameter "nosuch" (given nosuch="1"; it has dsp_errors)`)
	_, err = devs[0].Init(params(map[string]string{"dsp_errors": "never"}))
	require.ErrorIs(t, err, backend.ErrArgument)
	require.ErrorContains(t, err, `device HTP0: parameter dsp_errors="never": want sticky or per_call`)
	b, err := devs[0].Init(params(map[string]string{"dsp_errors": "per_call"}))
	require.NoError(t, err)
	d.Configure(t, "fail.op=1:3")
	err = computeOn(t, devs[0], b)
	var de *DSPError
	require.ErrorAs(t, err, &de)
	require.NotErrorIs(t, err, ErrSession)
	require.NoError(t, computeOn(t, devs[0], b), "the session goes on")
}
