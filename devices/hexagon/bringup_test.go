package hexagon

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/hexagon/internal/fastrpc"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	double "github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

// logBuffer collects slog output for one test (the package's tests are
// not parallel, so the default logger can be swapped).
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// captureLog sends slog's records of level and above to a buffer for the
// rest of the test.
func captureLog(t *testing.T, level slog.Level) *logBuffer {
	t.Helper()
	lb := &logBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: level})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return lb
}

// A bring-up step's failure is one of three kinds for the user: the
// device is unavailable with the step and the code (fatal), the device
// works and a warning says what is missing (warn), or nothing shows and
// the session works on a fallback (silent).
const (
	fatal = iota
	warn
	silent
)

// bringUpFaults is the table of devices/hexagon/README.md "Bring-up and
// release failures": each step's failure injected in the double, what the
// user sees. Every row fails if the host ignores the failure: a fatal one
// names its step and code, a warned one its warning, a silent one must
// still compute (ignoring the failure would use the call's unset answer).
var bringUpFaults = []struct {
	step, knobs string
	opts        func(o *Options)
	kind        int
	// see is the step (fatal) or the warning (warn); code the code a
	// fatal step reports.
	see  string
	code fastrpc.Error
	// logged is a line the double's log must show (the fallback used).
	logged string
}{
	{"FASTRPC_RESERVE_NEW_SESSION", "fail.session.reserve=1:0x8a", virtual, fatal,
		"reserving virtual session 1 on cdsp", fastrpc.ENoSession, ""},
	{"FASTRPC_GET_EFFECTIVE_DOMAIN_ID", "fail.session.effective=1:0xe", nil, silent, "", 0,
		"dspqueue_create(domain 3,"},
	{"DSPRPC_CONTROL_UNSIGNED_MODULE", "fail.session.unsigned=1:0xe", nil, fatal,
		"enabling unsigned modules", fastrpc.EBadParm, ""},
	{"FASTRPC_GET_URI", "fail.session.uri=1:0x4d", virtual, warn,
		"FASTRPC_GET_URI failed, using the single-session URI", 0, "&_dom=cdsp&_session=1) -> 0x0"},
	{"remote_handle64_open", "fail.open=1:0x72", nil, fatal, "opening file:///libggml-htp-v73.so", fastrpc.EConnRefused, ""},
	{"htp_iface_hwinfo", "fail.iface.hwinfo=1", nil, warn, "hwinfo failed, using defaults", 0, "n_hvx 8, n_hmx 1"},
	// An answer no DSP gives (another IDL's garbage) is a failure too;
	// upstream's defaults honour NHVX.
	{"htp_iface_hwinfo implausible", "hw_hmx=20", func(o *Options) { o.NHVX = 2 }, warn, "implausible answer", 0,
		"n_hvx 2, n_hmx 1"},
	{"DSPRPC_CONTROL_LATENCY", "fail.latency=1:0xe", nil, warn, "no FastRPC QoS latency mode", 0, ""},
	{"dspqueue_create", "fail.queue_create=1:0x14", nil, fatal, "creating the dspqueue", fastrpc.EUnsupported, ""},
	{"dspqueue_export", "fail.queue_export=1:0xe", nil, fatal, "exporting the dspqueue", fastrpc.EBadParm, ""},
	{"htp_iface_etm (ETM=1)", "fail.iface.etm=1", func(o *Options) { o.ETM = true }, warn, "ETM tracing not enabled", 0, ""},
	{"rpcmem_alloc (op queue)", "fail.rpcmem_alloc=1", nil, fatal, "allocating the op queue's shared memory", 0, ""},
	{"fastrpc_mmap (op queue)", "fail.fastrpc_mmap=1:0x2", nil, fatal, "allocating the op queue's shared memory", fastrpc.ENoMemory, ""},
	{"rpcmem_alloc (fence buffer)", "fail.rpcmem_alloc=2", nil, fatal, "allocating the fence buffer", 0, ""},
	{"fastrpc_mmap (fence buffer)", "fail.fastrpc_mmap=2:0x2", nil, fatal, "allocating the fence buffer", fastrpc.ENoMemory, ""},
	{"htp_iface_start", "fail.iface.start=1", nil, fatal, "starting the DSP side (htp_iface_start)", fastrpc.EFailed, ""},
	{"htp_iface_profiler (PROFILE=1)", "fail.iface.profiler=1", func(o *Options) { o.Profile = htp.ProfBasic }, warn,
		"profiling not enabled", 0, ""},
	// At release: ETM is turned off before the queue closes.
	{"htp_iface_etm off (ETM=1)", "fail.iface.etm=2", func(o *Options) { o.ETM = true }, warn, "disabling ETM", 0, ""},
}

func virtual(o *Options) { o.Devices = []DeviceConfig{{Name: "HTP0:1", Virtual: 1}} }

// TestBringUpFaults: every bring-up step's failure, injected in the
// double, is seen by the user as the table says, and leaves nothing
// behind.
func TestBringUpFaults(t *testing.T) {
	for _, c := range bringUpFaults {
		t.Run(c.step, func(t *testing.T) {
			d := double.Open(t, double.Full)
			d.Configure(t, c.knobs)
			lb := captureLog(t, slog.LevelWarn)
			o := testOptions(d)
			if c.opts != nil {
				c.opts(&o)
			}
			r, devs := openRegistry(t, o)
			require.Len(t, devs, 1)
			err := backend.Availability(devs[0])
			switch c.kind {
			case fatal:
				var se *SessionError
				require.ErrorAs(t, err, &se, d.Log())
				require.Contains(t, se.Step, c.see)
				if c.code != 0 {
					require.ErrorIs(t, err, c.code)
					require.Contains(t, err.Error(), c.code.Name())
				}
			case warn, silent:
				require.NoError(t, err, d.Log())
				checkCompute(t, devs[0])
				require.NoError(t, r.Close())
				if c.kind == warn {
					require.Contains(t, lb.String(), c.see)
				} else {
					require.Empty(t, lb.String())
				}
				if c.logged != "" {
					require.Contains(t, d.Log(), c.logged)
				}
			}
			require.NoError(t, r.Close())
			if strings.HasPrefix(c.knobs, "fail.") {
				require.Equal(t, uint64(1), d.Stat("faults_fired"), "the fault fired once\n%s", d.Log())
			}
			require.Empty(t, d.Leaks(), "a failed step is undone\n%s", d.Log())
			require.Empty(t, d.Violations())
		})
	}
}

// releaseFaults is the release half of the README's table: each failure
// makes Registry.Close return an error naming the call and its code (the
// later steps still run), where ignoring it would return nil.
var releaseFaults = []struct {
	step, knobs, see string
	code             fastrpc.Error
}{
	{"htp_iface_munmap (a buffer)", "fail.iface.munmap=1", "htp_iface_munmap", fastrpc.EFailed},
	{"htp_iface_stop", "fail.iface.stop=1", "htp_iface_stop", fastrpc.EFailed},
	{"fastrpc_munmap", "fail.fastrpc_munmap=1:0xe", "fastrpc_munmap", fastrpc.EBadParm},
	{"dspqueue_close", "fail.queue_close=1:0x200", "dspqueue_close", fastrpc.ERPC},
	{"remote_handle64_close", "fail.close=1", "closing the session", fastrpc.EFailed},
}

// TestReleaseFaults: every release step's failure reaches the caller of
// Close; what the failed call left behind in the double is then released
// by hand, so the test also shows what a real library would keep.
func TestReleaseFaults(t *testing.T) {
	for _, c := range releaseFaults {
		t.Run(c.step, func(t *testing.T) {
			d := double.Open(t, double.Full)
			r, devs := openRegistry(t, testOptions(d))
			dev := devs[0].(*device)
			b, err := dev.Init(backend.Options{})
			require.NoError(t, err)
			// A buffer the DSP has used and that is still allocated at
			// Close, so its DSP-side mapping is undone there.
			mg := newMMGraph(t, dev, rand.New(rand.NewPCG(3, 4)), quant.Q4_0, 64, 32, 2)
			require.NoError(t, backend.Compute(b, mg.g))
			require.NoError(t, b.Close())
			s := dev.s
			q, h, dom := s.queue, s.handle, s.domainID
			blocks := []*block{s.opq.blk, s.fence.blk}
			for bl := range s.mappings {
				blocks = append(blocks, bl)
			}
			type mapping struct {
				fd   int32
				base uintptr
				size uint64
			}
			var maps []mapping
			for _, bl := range blocks {
				maps = append(maps, mapping{bl.fd, bl.base, bl.size})
			}
			d.Configure(t, c.knobs)
			err = r.Close()
			require.Equal(t, uint64(1), d.Stat("faults_fired"), d.Log())
			require.Error(t, err, "Close ignored the failure\n%s", d.Log())
			require.ErrorContains(t, err, c.see)
			require.ErrorIs(t, err, c.code)
			mg.free()
			// What the failed call kept; the errors are those of calls
			// that succeeded the first time.
			_, _ = s.lib.Invoke(h, htp.StopCall())
			for _, m := range maps {
				_ = s.lib.Munmap(dom, m.fd, m.base, m.size)
			}
			_ = s.lib.CloseQueue(q)
			_ = s.lib.CloseHandle(h)
			require.Empty(t, d.Leaks(), d.Log())
		})
	}
}

// TestStartArgs: htp_iface_start carries what the protocol's IDL declares,
// from the options as upstream sends them: under the public protocol
// d99724f's five arguments (threads, the NHMX option, max vmem), under the
// fence protocol upstream's seven (also VTCM_SIZE and POWER_MODE). The
// double logs what it unpacked.
func TestStartArgs(t *testing.T) {
	for _, c := range []struct {
		proto Protocol
		knobs string
		want  string
	}{
		{ProtocolPublic, "", "n_hvx 3, n_hmx 2, vtcm 8388608, max_vmem %d, power 0) form snapshot"},
		{ProtocolFence, "protocol=fence", "n_hvx 3, n_hmx 2, vtcm 4194304, max_vmem %d, power 4) form upstream"},
	} {
		t.Run(c.proto.String(), func(t *testing.T) {
			d := double.Open(t, double.Full)
			d.Configure(t, c.knobs)
			o := testOptions(d)
			o.Protocol = c.proto
			o.NHVX, o.NHMX, o.VTCMSize, o.PowerMode, o.Vmem = 3, 2, 4*MiB, PowerBalanced, GiB
			r, devs := openRegistry(t, o)
			require.NoError(t, backend.Availability(devs[0]), d.Log())
			require.Contains(t, d.Log(), fmt.Sprintf(c.want, devs[0].(*device).s.maxVmem))
			require.NoError(t, r.Close())
		})
	}
}
