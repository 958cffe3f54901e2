package hexagon

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/hexagon/internal/fastrpc"
	double "github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

// TestSessionOpenCodes: each session-open failure users of the C backend
// meet as an abort after a bare code becomes an unavailable device whose
// reason names the step, the code and what it usually means; the other
// device opens, and the failed one leaves nothing behind.
func TestSessionOpenCodes(t *testing.T) {
	for _, c := range []struct {
		name, knobs, arch string
		code              fastrpc.Error
		step, meaning     string
	}{
		{"no fastrpc device", "fail.open=2:0x72", "", fastrpc.EConnRefused, "opening file:///libggml-htp-v73.so", "no FastRPC device"},
		{"queue unsupported", "fail.queue_create=2:0x14", "", fastrpc.EUnsupported, "creating the dspqueue", "no DSP"},
		{"skel not found", "arch=79", "75", fastrpc.DSPOffset + fastrpc.EUnableToLoad, "opening file:///libggml-htp-v75.so", "DSP's search path"},
		{"module refused", "fail.open=2:0x80000414", "", fastrpc.DSPOffset + fastrpc.EUnsupported, "opening", "another Hexagon arch"},
		{"no session left", "fail.session.reserve=1:0x8a", "", fastrpc.ENoSession, "reserving virtual session 1", "no free FastRPC session"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := double.Open(t, double.Full)
			d.Configure(t, c.knobs)
			o := testOptions(d)
			o.Devices = []DeviceConfig{{Name: "HTP0"}, {Name: "HTP0:1", Virtual: 1}}
			if c.arch != "" {
				o.Arch = 75
			}
			r, devs := openRegistry(t, o)
			require.Len(t, devs, 2)
			var fails []backend.Device
			for _, dv := range devs {
				if backend.Availability(dv) != nil {
					fails = append(fails, dv)
				}
			}
			want := 1
			if c.arch != "" || c.code == 0 {
				want = 2 // every session meets the wrong arch, or the odd DSP answer
			}
			require.Len(t, fails, want, d.Log())
			failed := fails[0]
			err := backend.Availability(failed)
			var se *SessionError
			require.ErrorAs(t, err, &se)
			require.Contains(t, se.Step, c.step)
			msg := err.Error()
			require.Contains(t, msg, c.meaning)
			if c.code != 0 {
				var fe fastrpc.Error
				require.ErrorAs(t, err, &fe)
				require.Equal(t, c.code, fe)
				require.Contains(t, msg, fe.Name())
			}
			if want == 1 {
				// The other device computes.
				for _, dv := range devs {
					if dv != failed {
						checkCompute(t, dv)
					}
				}
			}
			require.NoError(t, r.Close())
			require.Empty(t, d.Leaks(), "a failed bring-up is undone\n%s", d.Log())
			require.Empty(t, d.Violations())
		})
	}
}

// checkCompute runs one quantized matmul on dev and checks the result.
func checkCompute(t *testing.T, dev backend.Device) {
	t.Helper()
	b, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	mg := newMMGraph(t, dev, rand.New(rand.NewPCG(5, 6)), quant.Q4_0, 64, 32, 2)
	require.NoError(t, backend.Compute(b, mg.g))
	got := make([]byte, mg.out.NBytes())
	require.NoError(t, b.GetTensorAsync(mg.out, got, 0))
	requireClose(t, mg.want(t), quant.BytesF32(got), 1e-3)
	require.NoError(t, b.Close())
	mg.free()
}

// TestNoDSP: with the double answering as the open-source library on a
// machine without a DSP, HTP0 is unavailable with the DSP's code.
func TestNoDSP(t *testing.T) {
	d := double.Open(t, double.NoSysReq)
	d.Configure(t, "nodsp=1")
	r, devs := openRegistry(t, testOptions(d))
	require.Len(t, devs, 1)
	err := backend.Availability(devs[0])
	require.ErrorIs(t, err, backend.ErrUnavailable)
	require.ErrorIs(t, err, fastrpc.EConnRefused)
	require.Contains(t, err.Error(), "ECONNREFUSED")
	require.Equal(t, 73, r.Arch(), "the capability query fails: v73")
	require.NoError(t, r.Close())
	require.Empty(t, d.Leaks())
}

// TestNoAlloc2: without rpcmem_alloc2 (older phones) blocks come from
// rpcmem_alloc, and one beyond its int size is a clear error.
func TestNoAlloc2(t *testing.T) {
	d := double.Open(t, double.NoAlloc2)
	_, devs := openRegistry(t, testOptions(d))
	require.NoError(t, backend.Availability(devs[0]))
	checkCompute(t, devs[0])
	log := d.Log()
	require.Contains(t, log, "rpcmem_alloc(")
	require.NotContains(t, log, "rpcmem_alloc2(")
	_, err := devs[0].BufferType().Alloc(5 << 29)
	require.ErrorContains(t, err, "rpcmem_alloc2")
}

func TestLibraryMissing(t *testing.T) {
	o := DefaultOptions()
	o.Lib = filepath.Join(t.TempDir(), "libnothere.so")
	_, devs := openRegistry(t, o)
	err := backend.Availability(devs[0])
	require.ErrorIs(t, err, backend.ErrLibraryNotFound)
	var r backend.Reason
	require.ErrorAs(t, err, &r)
	require.Equal(t, []string{o.Lib, "libnothere.so (system search path)"}, r.Tried)
	require.Contains(t, err.Error(), o.Lib)
}
