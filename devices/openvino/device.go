package openvino

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/internal/devlib"
	"github.com/ggml-go/ggml/internal/dynlib"
)

// Name is the registry's name, ggml's GGML_OPENVINO_NAME; devices are
// Name followed by their index (OPENVINO0).
const Name = "OPENVINO"

// The OpenVINO registry registers itself with the options of the
// environment, so that importing the package makes OPENVINO0 known.
func init() {
	if err := backend.Register(defaultRegistry); err != nil {
		slog.Warn("openvino: registry not registered", "err", err)
	}
}

var defaultRegistry = &Registry{fromEnv: true}

// Default is the registry registered with package backend (options from
// the environment).
func Default() *Registry { return defaultRegistry }

// Registry is the OpenVINO registry: one device, OPENVINO0, running on
// the OpenVINO device chosen by Options.Device, as ggml-openvino (whose
// device count is 1). The library is loaded on the first Devices call,
// which lookups by type skip on the CPU-plugin target (DeviceTypeHint).
type Registry struct {
	fromEnv bool
	opts    Options

	once sync.Once
	dev  backend.Device
}

// NewRegistry returns a registry using opts instead of the environment,
// for programs that configure the device themselves (and for tests). It
// is not registered with package backend.
func NewRegistry(opts Options) *Registry { return &Registry{opts: opts} }

// Name is "OPENVINO".
func (r *Registry) Name() string { return Name }

// Devices lists OPENVINO0: usable, or an *backend.Unavailable saying why
// not (library not found and where it was searched, a missing symbol, a
// version too old, a failed probe or start-up).
func (r *Registry) Devices() []backend.Device {
	r.once.Do(func() {
		opts, err := r.options()
		if err != nil {
			r.dev = backend.NewUnavailable(Name+"0", "OpenVINO", backend.DeviceGPU,
				backend.Reason{Kind: backend.InitFailed, Library: libraryName, Err: err})
			return
		}
		rt, reason := open(opts)
		if reason != nil {
			r.dev = backend.NewUnavailable(Name+"0", "OpenVINO", backend.DeviceGPU, *reason)
			return
		}
		r.dev = newDevice(0, rt)
	})
	return []backend.Device{r.dev}
}

// options are the registry's options: its own, or the environment's
// (GGML_OPENVINO_*, then GGML_DEVICE's parameters for OPENVINO0).
func (r *Registry) options() (Options, error) {
	if !r.fromEnv {
		return r.opts, nil
	}
	opts, err := OptionsFromEnv()
	if err != nil {
		return opts, err
	}
	// GGML_DEVICE=OPENVINO0:device=GPU;cache_dir=/x
	bo, err := backend.OptionsFromEnv()
	if err != nil {
		return opts, err
	}
	err = opts.ApplyParams(bo.DeviceParams(Name + "0"))
	return opts, err
}

// DeviceTypeHint is ACCEL, known without loading the library, when the
// target is OpenVINO's CPU plugin (no device option, or "CPU"): the type
// OPENVINO0 has there (device.Type), so that a run looking for a GPU or
// the CPU device does not load the runtime and its plugins. Another
// target may fall back to the CPU plugin when it is not there: only
// discovery can tell. That the hint is the discovered type is shown on the
// test double (TestDoubleTypeHint); that a CPU run then loads no OpenVINO
// library, on the real runtime 2026.4.1 (bench model's resident memory).
func (r *Registry) DeviceTypeHint() (backend.DeviceType, bool) {
	opts, err := r.options()
	if err != nil || opts.Device != "" && !strings.EqualFold(opts.Device, "CPU") {
		return 0, false
	}
	return backend.DeviceAccel, true
}

// runtimeCtx is the loaded library, its core and the device chosen: what
// every buffer and backend of the device shares (ggml-openvino's
// singleton core and device config).
type runtimeCtx struct {
	lib    *native
	core   uintptr
	opts   Options
	device string // the OpenVINO device name used ("CPU", "GPU.1")
	kind   Kind
	avail  []string
	path   string
	search librarySearch
	// usm is the device's default remote context (usm.go).
	usm usmContext
}

// open loads the library, reads and checks its version, verifies the
// element-type numbering with a probe and creates the core. It returns a
// Reason on any failure.
func open(opts Options) (*runtimeCtx, *backend.Reason) {
	lib, tried, search, err := loadLibrary(opts.Lib, searchEnv{os.Getenv, runtime.GOOS, runtime.GOARCH, pythonSitePackages(runtime.GOOS)})
	if err != nil {
		r := devlib.Reason(libraryName, tried, err)
		return nil, &r
	}
	fail := func(kind backend.ReasonKind, err error) (*runtimeCtx, *backend.Reason) {
		_ = lib.Close()
		return nil, &backend.Reason{Kind: kind, Library: lib.Path(), Err: err}
	}
	n, err := bind(lib)
	if err != nil {
		var ms *missingSymbol
		if errors.As(err, &ms) {
			_ = lib.Close()
			return nil, &backend.Reason{Kind: backend.SymbolMissing, Library: lib.Path(), Symbol: ms.name, Err: err}
		}
		return fail(backend.InitFailed, err)
	}
	v, err := n.readVersion()
	if err != nil {
		return fail(backend.InitFailed, err)
	}
	if v.Less(MinVersion) {
		_ = lib.Close()
		return nil, &backend.Reason{Kind: backend.VersionTooOld, Library: lib.Path(), Version: v.String(), MinVersion: MinVersion.String()}
	}
	n.version, n.num = v, numberingFor(v)
	if err := n.probe(); err != nil {
		return fail(backend.InitFailed, err)
	}
	core, err := n.createCore()
	if err != nil {
		return fail(backend.InitFailed, err)
	}
	avail, err := n.devices(core)
	if err != nil {
		n.freeCore(core)
		return fail(backend.InitFailed, err)
	}
	device := opts.Device
	if device == "" {
		device = "CPU"
	}
	if !slices.Contains(avail, device) {
		// ggml-openvino warns and falls back to the CPU plugin.
		slog.Warn("openvino: device not available, falling back to CPU", "device", device, "available", avail)
		device = "CPU"
		if !slices.Contains(avail, "CPU") {
			n.freeCore(core)
			return fail(backend.InitFailed, fmt.Errorf("openvino: neither %s nor CPU among the available devices %v", opts.Device, avail))
		}
	}
	rt := &runtimeCtx{lib: n, core: core, opts: opts, device: device, kind: KindOf(device), avail: avail, path: lib.Path(), search: search}
	if err := rt.configure(); err != nil {
		n.freeCore(core)
		return fail(backend.InitFailed, err)
	}
	slog.Info("OpenVINO: using device "+device, "release", v.String(), "inference_precision", opts.InferencePrecisionFor(rt.kind))
	return rt, nil
}

// librarySearch is where the library was looked for and where it was
// found, as `ggml devices` prints it.
type librarySearch struct {
	found  string
	places []string
}

// loadLibrary finds libopenvino_c. GGML_OPENVINO_LIB, a file or a folder,
// is the only place looked at when set: a user's explicit choice is never
// replaced by another install. Otherwise searchPlaces are searched in
// order, then the system loader. tried lists every path looked at.
func loadLibrary(libOpt string, e searchEnv) (*dynlib.Library, []string, librarySearch, error) {
	var s librarySearch
	if libOptIsFile(libOpt) {
		tried := []string{libOpt}
		s.places = []string{"GGML_OPENVINO_LIB: " + libOpt}
		if _, err := os.Stat(libOpt); err != nil {
			return nil, tried, s, fmt.Errorf("%w: %s: %w", dynlib.ErrNotFound, libOpt, err)
		}
		s.found = libOpt + " (GGML_OPENVINO_LIB)"
		lib, err := dynlib.Open(libOpt)
		return lib, tried, s, err
	}
	places := searchPlaces(libOpt, e)
	if libOpt != "" {
		places = places[:1]
	}
	var tried []string
	for _, p := range places {
		dirs := dedupe(p.dirs())
		if len(dirs) == 0 {
			s.places = append(s.places, p.from+": (none)")
			continue
		}
		s.places = append(s.places, p.from+": "+strings.Join(dirs, ", "))
		path, t, err := dynlib.Find(candidateNames(e.goos, dirs), dirs)
		tried = append(tried, t...)
		if err == nil {
			s.found = path + " (" + p.from + ")"
			lib, err := dynlib.Open(path)
			return lib, tried, s, err
		}
	}
	if libOpt != "" {
		return nil, tried, s, fmt.Errorf("%w: %s holds no %s; tried %s", dynlib.ErrNotFound, libOpt, libraryName, strings.Join(tried, ", "))
	}
	names := libNames(e.goos)
	s.places = append(s.places, "system loader: "+strings.Join(names, ", "))
	lib, t, err := dynlib.Load(names, nil)
	tried = append(tried, t...)
	if errors.Is(err, dynlib.ErrNotFound) {
		return nil, tried, s, fmt.Errorf("%w: %s; tried %s", dynlib.ErrNotFound, libraryName, strings.Join(tried, ", "))
	}
	if err != nil {
		return nil, tried, s, err
	}
	s.found = lib.Path() + " (system loader)"
	return lib, tried, s, nil
}

// configure sets the compile configuration of ggml-openvino's
// device_config::init on the core: the NPU's NPUW settings and the plugin
// cache folder, and the inference precision (InferencePrecisionFor).
func (rt *runtimeCtx) configure() error {
	for _, p := range append(rt.compileConfig(), rt.weightConfig()...) {
		if err := rt.lib.setProperty(rt.core, rt.device, p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

// requant is how weights set into the device's buffers are requantized
// (requantFor).
func (rt *runtimeCtx) requant() requantPolicy {
	if rt.opts.keepFormats {
		return noRequant
	}
	return requantPolicy(rt.opts.RequantKQuant)
}

// compileConfig is ggml-openvino's compile_config for the device.
func (rt *runtimeCtx) compileConfig() [][2]string {
	var props [][2]string
	if rt.kind == KindNPU {
		props = [][2]string{
			{"NPU_COMPILER_DYNAMIC_QUANTIZATION", "YES"}, {"NPU_USE_NPUW", "YES"}, {"NPUW_DEVICES", "NPU"},
			{"NPUW_FOLD", "YES"}, {"NPUW_WEIGHTS_BANK", "shared"}, {"NPUW_FUNCALL_FOR_ALL", "YES"},
			{"NPUW_FUNCALL_ASYNC", "YES"}, {"NPUW_DQ", "YES"}, {"NPUW_DQ_FULL", "NO"},
		}
		if rt.opts.NPUCompileConfig != "" {
			props = append(props, [2]string{"NPU_COMPILATION_MODE_PARAMS", rt.opts.NPUCompileConfig})
		}
	}
	// A compiled-model cache folder replaces the plugin cache (the
	// exported blob already skips compilation).
	if rt.opts.CacheDir != "" && rt.opts.CompiledModelCacheDir == "" {
		key := "CACHE_DIR"
		if rt.kind == KindNPU {
			key = "NPUW_CACHE_DIR"
		}
		props = append(props, [2]string{key, filepath.Clean(rt.opts.CacheDir)}, [2]string{"CACHE_MODE", "OPTIMIZE_SIZE"})
	}
	if rt.opts.Profiling >= 2 {
		props = append(props, [2]string{"PERF_COUNT", "YES"})
	}
	if prec := rt.opts.InferencePrecisionFor(rt.kind); prec != "" {
		props = append(props, [2]string{"INFERENCE_PRECISION_HINT", prec})
	}
	return props
}
