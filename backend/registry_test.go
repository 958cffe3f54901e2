package backend

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// fakeDevice is a usable device whose Init can be made to fail.
type fakeDevice struct {
	name    string
	typ     DeviceType
	initErr error
}

func (d *fakeDevice) Name() string                        { return d.name }
func (d *fakeDevice) Description() string                 { return "fake " + d.name }
func (d *fakeDevice) Memory() (free, total uint64)        { return 1, 2 }
func (d *fakeDevice) Type() DeviceType                    { return d.typ }
func (d *fakeDevice) Props() Props                        { return Props{Name: d.name, Type: d.typ} }
func (d *fakeDevice) BufferType() buffer.Type             { return buffer.CPU() }
func (d *fakeDevice) SupportsOp(*graph.Tensor) bool       { return true }
func (d *fakeDevice) SupportsBufferType(buffer.Type) bool { return true }
func (d *fakeDevice) OffloadOp(*graph.Tensor) bool        { return false }
func (d *fakeDevice) Init(opts Options) (Backend, error) {
	if d.initErr != nil {
		return nil, d.initErr
	}
	return &fakeBackend{dev: d, opts: opts}, nil
}

type fakeBackend struct {
	dev  *fakeDevice
	opts Options
}

func (b *fakeBackend) Name() string                                       { return b.dev.name }
func (b *fakeBackend) Device() Device                                     { return b.dev }
func (b *fakeBackend) SetTensorAsync(*graph.Tensor, []byte, uint64) error { return nil }
func (b *fakeBackend) GetTensorAsync(*graph.Tensor, []byte, uint64) error { return nil }
func (b *fakeBackend) Synchronize() error                                 { return nil }
func (b *fakeBackend) GraphCompute(*graph.Graph) error                    { return nil }
func (b *fakeBackend) Close() error                                       { return nil }

type fakeRegistry struct {
	name string
	devs []Device
}

func (r *fakeRegistry) Name() string      { return r.name }
func (r *fakeRegistry) Devices() []Device { return r.devs }

var (
	cpuDev     = &fakeDevice{name: "CPU", typ: DeviceCPU}
	accelDev   = &fakeDevice{name: "BLAS", typ: DeviceAccel}
	igpuDev    = &fakeDevice{name: "IGPU0", typ: DeviceIGPU}
	brokenDev  = &fakeDevice{name: "BROKEN0", typ: DeviceGPU, initErr: errors.New("driver said no")}
	missingDev = NewUnavailable("OPENVINO0", "OpenVINO", DeviceGPU, Reason{Kind: LibraryNotFound, Library: "libopenvino_c.so", Tried: []string{"/opt/a/libopenvino_c.so", "/opt/b/libopenvino_c.so"}})
)

func testSet(t *testing.T, regs ...Registry) *registrySet {
	var s registrySet
	for _, r := range regs {
		require.NoError(t, s.register(r))
	}
	return &s
}

func TestRegister(t *testing.T) {
	s := testSet(t, &fakeRegistry{name: "CPU", devs: []Device{cpuDev}})
	require.ErrorIs(t, s.register(nil), ErrArgument)
	require.ErrorIs(t, s.register(&fakeRegistry{name: "cpu"}), ErrDuplicate)
	require.NoError(t, s.register(&fakeRegistry{name: "OpenVINO", devs: []Device{missingDev, nil, igpuDev}}))
	require.Len(t, s.registries(), 2)
	require.Equal(t, []Device{cpuDev, missingDev, igpuDev}, s.devices(), "registration order, nil devices dropped")
}

func TestDeviceLookup(t *testing.T) {
	s := testSet(t,
		&fakeRegistry{name: "OpenVINO", devs: []Device{missingDev, igpuDev}},
		&fakeRegistry{name: "CPU", devs: []Device{cpuDev}})

	d, err := s.byName("openvino0")
	require.NoError(t, err, "an unavailable device is still found by name")
	require.Same(t, missingDev, d)
	_, err = s.byName("VULKAN0")
	require.ErrorIs(t, err, ErrNotFound)
	require.Contains(t, err.Error(), "OPENVINO0, IGPU0, CPU")

	d, err = s.byType(DeviceCPU)
	require.NoError(t, err)
	require.Same(t, cpuDev, d)
	_, err = s.byType(DeviceGPU)
	require.ErrorIs(t, err, ErrNotFound, "the only GPU is unavailable")
	require.ErrorIs(t, err, ErrLibraryNotFound, "and the error says why")
	_, err = s.byType(DeviceAccel)
	require.ErrorIs(t, err, ErrNotFound)
}

// hintedRegistry is a fakeRegistry that hints its devices' type and
// counts its discoveries.
type hintedRegistry struct {
	fakeRegistry
	hint     DeviceType
	known    bool
	listings int
}

func (r *hintedRegistry) Devices() []Device {
	r.listings++
	return r.devs
}

func (r *hintedRegistry) DeviceTypeHint() (DeviceType, bool) { return r.hint, r.known }

// TestTypeHintSkipsDiscovery: lookups by type do not discover a registry
// that hints another type (a library a run does not use stays unloaded);
// an unknown hint, a lookup of the hinted type, and the full list do.
func TestTypeHintSkipsDiscovery(t *testing.T) {
	accel := &hintedRegistry{fakeRegistry: fakeRegistry{name: "OpenVINO", devs: []Device{accelDev}}, hint: DeviceAccel, known: true}
	unknown := &hintedRegistry{fakeRegistry: fakeRegistry{name: "Other", devs: []Device{igpuDev}}}
	s := testSet(t, accel, unknown, &fakeRegistry{name: "CPU", devs: []Device{cpuDev}})
	b, err := s.init(Options{})
	require.NoError(t, err)
	require.Same(t, igpuDev, b.Device())
	d, err := s.byType(DeviceCPU)
	require.NoError(t, err)
	require.Same(t, cpuDev, d)
	require.Equal(t, []Device{cpuDev}, s.ofType(DeviceCPU))
	require.Zero(t, accel.listings, "the best device and the CPU are found without discovering an ACCEL registry")
	require.Positive(t, unknown.listings)
	require.Equal(t, []Device{accelDev}, s.ofType(DeviceAccel))
	require.Equal(t, 1, accel.listings)
	require.Len(t, s.devices(), 3)
	require.Equal(t, 2, accel.listings)
}

func TestInitBestByType(t *testing.T) {
	tests := []struct {
		name string
		devs []Device
		want Device
	}{
		{"igpu over cpu, unavailable gpu skipped", []Device{cpuDev, missingDev, igpuDev}, igpuDev},
		{"accel is not picked by itself", []Device{accelDev, cpuDev}, cpuDev},
		{"a gpu failing to start falls back", []Device{brokenDev, cpuDev}, cpuDev},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSet(t, &fakeRegistry{name: "r", devs: tc.devs})
			b, err := s.init(Options{})
			require.NoError(t, err)
			require.Same(t, tc.want, b.Device())
		})
	}
	s := testSet(t, &fakeRegistry{name: "r", devs: []Device{accelDev, missingDev}})
	_, err := s.init(Options{})
	require.ErrorIs(t, err, ErrNotFound)
	s = testSet(t, &fakeRegistry{name: "r", devs: []Device{brokenDev}})
	_, err = s.init(Options{})
	require.ErrorContains(t, err, "driver said no")
}

func TestInitByPreference(t *testing.T) {
	s := testSet(t, &fakeRegistry{name: "r", devs: []Device{missingDev, brokenDev, igpuDev, cpuDev}})

	b, err := s.init(Options{Devices: []string{"OPENVINO0", "BROKEN0", "cpu"}, Threads: 3})
	require.NoError(t, err)
	require.Same(t, cpuDev, b.Device(), "first listed device that starts")
	require.Equal(t, 3, b.(*fakeBackend).opts.Threads, "options reach the device")

	b, err = s.init(Options{Devices: []string{"NOPE", "IGPU0", "CPU"}})
	require.NoError(t, err)
	require.Same(t, igpuDev, b.Device())

	_, err = s.init(Options{Devices: []string{"OPENVINO0", "BROKEN0", "NOPE"}})
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorIs(t, err, ErrLibraryNotFound)
	require.ErrorIs(t, err, ErrNotFound)
	for _, want := range []string{"/opt/a/libopenvino_c.so", "/opt/b/libopenvino_c.so", "driver said no", "NOPE"} {
		require.Contains(t, err.Error(), want)
	}
}

func TestInitBestFromEnv(t *testing.T) {
	// InitBest reads the process-wide registry; only the parsing is
	// checked here, against a registry of the test's own.
	t.Setenv(EnvDevice, " IGPU0 , cpu")
	opts, err := OptionsFromEnv()
	require.NoError(t, err)
	require.Equal(t, []string{"IGPU0", "cpu"}, opts.Devices)
	s := testSet(t, &fakeRegistry{name: "r", devs: []Device{cpuDev, igpuDev}})
	b, err := s.init(opts)
	require.NoError(t, err)
	require.Same(t, igpuDev, b.Device())

	t.Setenv(EnvDevice, "CPU,,GPU")
	_, err = OptionsFromEnv()
	require.ErrorIs(t, err, ErrArgument)
	require.ErrorContains(t, err, EnvDevice)
	_, err = InitBest()
	require.ErrorIs(t, err, ErrArgument, "a malformed GGML_DEVICE is an error, not a silent fallback")
}

func TestParseDeviceList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"", nil, false},
		{"  ", nil, false},
		{"CPU", []string{"CPU"}, false},
		{"OPENVINO0,CPU", []string{"OPENVINO0", "CPU"}, false},
		{" HTP0 ,\tCPU ", []string{"HTP0", "CPU"}, false},
		{"CPU,", nil, true},
		{",CPU", nil, true},
		{"CPU,cpu", nil, true},
	}
	for _, tc := range tests {
		got, err := ParseDeviceList(tc.in)
		if tc.err {
			require.ErrorIs(t, err, ErrArgument, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func FuzzParseDeviceList(f *testing.F) {
	for _, s := range []string{"", "OPENVINO0,CPU", "a,,b", " x , y ", "CPU,cpu"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ParseDeviceList(s)
		if err != nil {
			require.ErrorIs(t, err, ErrArgument)
			return
		}
		seen := map[string]bool{}
		for _, n := range names {
			require.NotEmpty(t, n)
			require.Equal(t, strings.TrimSpace(n), n)
			require.NotContains(t, n, ",")
			require.False(t, seen[strings.ToUpper(n)])
			seen[strings.ToUpper(n)] = true
		}
		if len(names) > 0 {
			again, err := ParseDeviceList(strings.Join(names, ","))
			require.NoError(t, err)
			require.Equal(t, names, again)
		}
	})
}

func TestDeviceType(t *testing.T) {
	for i, want := range []string{"CPU", "GPU", "IGPU", "ACCEL"} {
		require.Equal(t, want, DeviceType(i).String(), "ggml's numbering")
		typ, err := ParseDeviceType(strings.ToLower(want))
		require.NoError(t, err)
		require.Equal(t, DeviceType(i), typ)
	}
	require.Equal(t, "DeviceType(9)", DeviceType(9).String())
	_, err := ParseDeviceType("TPU")
	require.ErrorIs(t, err, ErrArgument)
}

func TestCaps(t *testing.T) {
	require.Equal(t, "none", Caps{}.String())
	require.Equal(t, "buffer_from_host_ptr,mmap", Caps{BufferFromHostPtr: true, Mmap: true}.String())
	require.Equal(t, "async,host_buffer,buffer_from_host_ptr,events,mmap", Caps{true, true, true, true, true}.String())
}

func TestUnavailable(t *testing.T) {
	u := missingDev
	require.Equal(t, "OPENVINO0", u.Name())
	require.Equal(t, DeviceGPU, u.Type())
	require.Nil(t, u.BufferType())
	require.False(t, u.SupportsOp(&graph.Tensor{}))
	require.False(t, u.SupportsBufferType(buffer.CPU()))
	free, total := u.Memory()
	require.Zero(t, free+total)
	_, err := u.Init(Options{})
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorIs(t, err, ErrLibraryNotFound)
	require.ErrorContains(t, err, "/opt/b/libopenvino_c.so")
	require.ErrorIs(t, Availability(u), ErrUnavailable)
	require.NoError(t, Availability(cpuDev))
}

func TestReasons(t *testing.T) {
	cause := errors.New("boom")
	tests := []struct {
		r        Reason
		sentinel error
		text     string
	}{
		{Reason{Kind: LibraryNotFound, Library: "libx.so", Tried: []string{"/a/libx.so"}}, ErrLibraryNotFound, "library not found: libx.so (searched /a/libx.so)"},
		{Reason{Kind: LibraryLoadFailed, Library: "/a/libx.so", Err: cause}, ErrLibraryLoadFailed, "library failed to load: /a/libx.so: boom"},
		{Reason{Kind: SymbolMissing, Library: "libx.so", Symbol: "x_init"}, ErrSymbolMissing, "symbol missing: libx.so lacks x_init"},
		{Reason{Kind: VersionTooOld, Library: "libx.so", Version: "2023.0", MinVersion: "2024.0"}, ErrVersionTooOld, "version too old: libx.so is version 2023.0, need 2024.0 or newer"},
		{Reason{Kind: InitFailed, Err: cause}, ErrInitFailed, "init failed: boom"},
	}
	for _, tc := range tests {
		require.ErrorIs(t, tc.r, tc.sentinel)
		require.Equal(t, tc.text, tc.r.Error())
		if tc.r.Err != nil {
			require.ErrorIs(t, tc.r, cause)
		}
	}
}

// TestErrorTextsAreSentences: the errors of failing calls read as
// sentences: none carries a fmt complaint such as %!w(<nil>), which
// errors.Join of an empty list formatted with %w printed for a type with
// no device at all.
func TestErrorTextsAreSentences(t *testing.T) {
	empty := testSet(t)
	onlyMissing := testSet(t, &fakeRegistry{name: "OpenVINO", devs: []Device{missingDev}})
	withCPU := testSet(t, &fakeRegistry{name: "CPU", devs: []Device{cpuDev}}, &fakeRegistry{name: "b", devs: []Device{brokenDev}})
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	for _, s := range []*registrySet{empty, onlyMissing, withCPU} {
		for _, typ := range []DeviceType{DeviceCPU, DeviceGPU, DeviceIGPU, DeviceAccel} {
			if _, err := s.byType(typ); err != nil || s != withCPU {
				add(err) // withCPU has a CPU and a GPU
			}
		}
		_, err := s.byName("VULKAN0")
		add(err)
		_, err = s.init(Options{Devices: []string{"VULKAN0", "BROKEN0"}})
		add(err)
		if s != withCPU {
			_, err = s.init(Options{})
			add(err)
		}
		_, err = s.init(Options{Threads: -1})
		add(err)
	}
	add(empty.register(nil))
	add(withCPU.register(&fakeRegistry{name: "cpu"}))
	for _, sel := range []string{",", "A,A", "A:", "A:k", "A:=1", "A:k=", "A:k=1;k=2", "A:k!=1"} {
		_, err := ParseDeviceSelection(sel)
		add(err)
	}
	_, err := ParseDeviceType("TPU")
	add(err)
	add(UnknownParam("X0", "typo", "1"))
	add(UnknownParam("X0", "typo", "1", "a", "b"))
	add(BadParam("X0", "a", "abc", "a whole number"))
	for i, err := range errs {
		require.Error(t, err, "call %d", i)
		msg := err.Error()
		require.NotContains(t, msg, "%!", "call %d", i)
		require.NotContains(t, msg, "<nil>", "call %d", i)
		t.Log(msg)
	}
	_, err = empty.byType(DeviceIGPU)
	require.ErrorIs(t, err, ErrNotFound)
	require.EqualError(t, err, "backend: no such device: no IGPU device is registered (have none)")
}
