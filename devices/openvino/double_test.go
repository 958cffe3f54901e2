package openvino

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/internal/dynlib"
)

// The test double of libopenvino_c (testdata/, built with cc by
// testdata/build.sh into a temporary folder once per test process).

var doubles struct {
	mu    sync.Mutex
	paths map[string]string
	dir   string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if doubles.dir != "" {
		os.RemoveAll(doubles.dir)
	}
	os.Exit(code)
}

// realLibrary is the real libopenvino_c (file or folder) that
// GGML_OPENVINO_LIB names, or "": when set, the tests run against it
// instead of the double, and those that need the double's fault injection
// (knob, doubleStat, special builds) skip and say so.
func realLibrary() string { return os.Getenv("GGML_OPENVINO_LIB") }

// needsDouble skips t on the real runtime: what it checks only the
// double can be made to do.
func needsDouble(t testing.TB, what string) {
	t.Helper()
	if realLibrary() != "" {
		t.Skipf("needs the double (%s); GGML_OPENVINO_LIB names the real runtime, which cannot be made to do it", what)
	}
}

// buildDouble returns the path of the double built with flags (each set
// of flags is built once), skipping without cc unless GGML_REF_REQUIRED=1.
// With GGML_OPENVINO_LIB set it returns the real library instead (a
// special build skips there).
func buildDouble(t testing.TB, flags ...string) string {
	t.Helper()
	if lib := realLibrary(); lib != "" {
		if len(flags) > 0 {
			needsDouble(t, "a build with "+strings.Join(flags, " "))
		}
		return lib
	}
	doubles.mu.Lock()
	defer doubles.mu.Unlock()
	key := strings.Join(flags, " ")
	if p, ok := doubles.paths[key]; ok {
		return p
	}
	if _, err := exec.LookPath(ccName()); err != nil {
		if os.Getenv("GGML_REF_REQUIRED") == "1" {
			t.Fatalf("the OpenVINO test double needs a C compiler: %v", err)
		}
		t.Skipf("no C compiler (%v): the OpenVINO test double cannot be built", err)
	}
	if doubles.dir == "" {
		d, err := os.MkdirTemp("", "ovdouble-")
		require.NoError(t, err)
		doubles.dir, doubles.paths = d, map[string]string{}
	}
	out := filepath.Join(doubles.dir, "lib"+string(rune('a'+len(doubles.paths))))
	cmd := exec.Command("sh", append(append([]string{filepath.Join("testdata", "build.sh")}, flags...), out)...)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	p := lines[len(lines)-1]
	doubles.paths[key] = p
	return p
}

func ccName() string {
	if cc := os.Getenv("CC"); cc != "" {
		return strings.Fields(cc)[0]
	}
	return "cc"
}

// knob sets one of the double's control knobs (ovdouble_set) in the copy
// at path, restoring "" at the end of the test.
func knob(t *testing.T, path, name, value string) {
	t.Helper()
	needsDouble(t, "its "+name+"="+value+" knob")
	lib, err := dynlib.Open(path)
	require.NoError(t, err)
	sym, err := lib.Sym("ovdouble_set")
	require.NoError(t, err)
	set := func(v string) int32 {
		k, val := cstr(name), cstr(v)
		r, _, _ := purego.SyscallN(sym, uintptr(unsafe.Pointer(k)), uintptr(unsafe.Pointer(val)))
		return int32(uint32(r))
	}
	require.Zero(t, set(value), "ovdouble_set(%s, %s)", name, value)
	t.Cleanup(func() { set(defaultKnob(name)) })
}

func defaultKnob(name string) string {
	switch name {
	case "version":
		return "2025.1"
	case "devices":
		return "CPU"
	}
	return ""
}

// doubleStat reads a counter of the double.
func doubleStat(t *testing.T, path, name string) int64 { return doubleStatTB(t, path, name) }

func doubleStatTB(t testing.TB, path, name string) int64 {
	t.Helper()
	needsDouble(t, "its "+name+" counter")
	lib, err := dynlib.Open(path)
	require.NoError(t, err)
	sym, err := lib.Sym("ovdouble_stat")
	require.NoError(t, err)
	k := cstr(name)
	r, _, _ := purego.SyscallN(sym, uintptr(unsafe.Pointer(k)))
	return int64(r)
}

// openDevice starts the device on the double at path with opts.
func openDevice(t *testing.T, path string, opts Options) *device { return openDeviceTB(t, path, opts) }

func openDeviceTB(t testing.TB, path string, opts Options) *device {
	t.Helper()
	opts.Lib = path
	if opts.Device == "" {
		opts.Device = "CPU"
	}
	if opts.PrefillChunkSize == 0 {
		opts.PrefillChunkSize = 256
	}
	rt, reason := open(opts)
	require.Nil(t, reason)
	d := newDevice(0, rt)
	t.Cleanup(func() { rt.lib.freeCore(rt.core) })
	return d
}

func TestDoubleLoads(t *testing.T) {
	p := buildDouble(t)
	for _, v := range []string{"2025.0", "2025.1", "2026.1"} {
		t.Run(v, func(t *testing.T) {
			knob(t, p, "version", v)
			d := openDevice(t, p, Options{})
			require.Equal(t, v, d.rt.lib.version.String()[:len(v)])
			require.Equal(t, numberingFor(d.rt.lib.version), d.rt.lib.num)
			require.Equal(t, "OpenVINO Runtime", d.Description(), "upstream's description: the version's")
		})
	}
}

// A release older than 2025.0 is refused as unavailable, with the reason.
func TestDoubleTooOld(t *testing.T) {
	p := buildDouble(t)
	knob(t, p, "version", "2024.6")
	_, reason := open(Options{Lib: p, Device: "CPU"})
	require.NotNil(t, reason)
	require.Contains(t, reason.Error(), "version too old")
	require.Contains(t, reason.Error(), "2024.6.0, need 2025.0.0")
}

// The probe catches a numbering that does not match the release: a build
// number saying 2025.0 on a library numbering as 2025.1.
func TestDoubleProbeCatchesWrongNumbering(t *testing.T) {
	p := buildDouble(t)
	knob(t, p, "build_number", "2025.0.0-17942-1f68be9f594-releases/2025/0")
	_, reason := open(Options{Lib: p, Device: "CPU"})
	require.NotNil(t, reason)
	require.ErrorIs(t, reason, ErrProbe)
}

func TestDoubleMissingSymbol(t *testing.T) {
	p := buildDouble(t, "--omit", "ov_infer_request_infer")
	_, reason := open(Options{Lib: p, Device: "CPU"})
	require.NotNil(t, reason)
	require.Equal(t, "ov_infer_request_infer", reason.Symbol)
	require.Contains(t, reason.Error(), "symbol missing")
}

func TestDoubleUnknownDeviceFallsBack(t *testing.T) {
	p := buildDouble(t)
	knob(t, p, "devices", "CPU,GPU.0,NPU")
	d := openDevice(t, p, Options{Device: "GPU.7"})
	require.Equal(t, "CPU", d.rt.device)
	require.Equal(t, KindCPU, d.Kind())
	// On the CPU plugin the device is ACCEL, which InitBest leaves to the
	// CPU device; a GPU or NPU target is a GPU, as upstream reports.
	require.Equal(t, backend.DeviceAccel, d.Type())
	d = openDevice(t, p, Options{Device: "GPU.0"})
	require.Equal(t, backend.DeviceGPU, d.Type())
	d = openDevice(t, p, Options{Device: "NPU"})
	require.Equal(t, KindNPU, d.Kind())
	require.Equal(t, backend.DeviceGPU, d.Type())
	// the NPU configuration goes through the fixed-arity set_property
	require.Positive(t, doubleStat(t, p, "calls.ov_core_set_property"))
}

// TestDoubleTypeHint: the registry's type hint, given before the library
// loads, is the type its device has once discovered (ACCEL on the CPU
// plugin, with no device option or "CPU"), and there is none for a target
// that only discovery can settle (a GPU that may fall back to the CPU).
func TestDoubleTypeHint(t *testing.T) {
	p := buildDouble(t)
	knob(t, p, "devices", "CPU,GPU.0,NPU")
	for _, o := range []Options{{}, {Device: "CPU"}, {Device: "cpu"}} {
		o.Lib = p
		r := NewRegistry(o)
		hint, ok := r.DeviceTypeHint()
		require.True(t, ok, "%+v", o)
		require.Equal(t, backend.DeviceAccel, hint)
		d := r.Devices()[0]
		require.NoError(t, backend.Availability(d))
		require.Equal(t, hint, d.Type(), "%+v", o)
	}
	for _, dev := range []string{"GPU.0", "GPU.7", "NPU"} {
		_, ok := NewRegistry(Options{Lib: p, Device: dev}).DeviceTypeHint()
		require.False(t, ok, dev)
	}
	t.Setenv(EnvPrefix+"DEVICE", "GPU.0")
	_, ok := (&Registry{fromEnv: true}).DeviceTypeHint()
	require.False(t, ok, "the environment's target")
}

// TestDoubleDeviceParams: a backend's parameters (GGML_DEVICE's
// OPENVINO0:key=value) that the device does not know or accept are errors
// naming the device, the key and the value.
func TestDoubleDeviceParams(t *testing.T) {
	d := openDevice(t, buildDouble(t), Options{})
	params := func(k, v string) backend.Options {
		return backend.Options{Params: map[string]map[string]string{d.Name(): {k: v}}}
	}
	_, err := d.Init(params("typo", "1"))
	require.ErrorIs(t, err, backend.ErrArgument)
	require.ErrorContains(t, err, "device "+d.Name()+`: openvino: unknown device parameter "typo" (given typo="1"; `)
	_, err = d.Init(params("prefill_chunk_size", "abc"))
	require.ErrorIs(t, err, backend.ErrArgument)
	require.ErrorContains(t, err, "device "+d.Name()+`: openvino: GGML_OPENVINO_PREFILL_CHUNK_SIZE="abc"`)
	b, err := d.Init(params("disable_cache", "1"))
	require.NoError(t, err)
	require.NoError(t, b.Close())
}

func TestDoubleCoreCreateFailure(t *testing.T) {
	p := buildDouble(t)
	knob(t, p, "fail", "core_create")
	_, reason := open(Options{Lib: p, Device: "CPU"})
	require.NotNil(t, reason)
	require.Contains(t, reason.Error(), "injected failure at core_create")
	require.ErrorIs(t, reason, ErrNative)
}
