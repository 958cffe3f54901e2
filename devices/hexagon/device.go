package hexagon

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon/internal/fastrpc"
	"github.com/ggml-go/ggml/graph"
)

// Registry is the Hexagon registry ("HTP"): one device per entry of
// Options.Devices, each a FastRPC session on an NPU core, opened when the
// devices are first listed. A device whose session cannot be opened is
// listed as unavailable with the step that failed, the code and what it
// usually means; the others stay usable.
type Registry struct {
	opts    Options
	optsErr error
	fromEnv bool

	once    sync.Once
	lib     *fastrpc.Lib
	arch    int
	devices []backend.Device
	mu      sync.Mutex
	closed  bool
}

// NewRegistry returns a registry configured by opts (DefaultOptions,
// OptionsFromEnv, or a caller's). Nothing is loaded before Devices.
func NewRegistry(opts Options) *Registry { return &Registry{opts: opts} }

// Name is "HTP", as upstream's registry.
func (r *Registry) Name() string { return "HTP" }

// Devices loads libcdsprpc, resolves the arch and the NPU domains, and
// opens a session per configured device.
func (r *Registry) Devices() []backend.Device {
	r.once.Do(r.discover)
	return r.devices
}

// Arch is the Hexagon version in use (0 before Devices, or when the
// library did not load).
func (r *Registry) Arch() int {
	r.once.Do(r.discover)
	return r.arch
}

func (r *Registry) unavailable(reason backend.Reason) {
	cfgs := r.opts.Devices
	if len(cfgs) == 0 {
		cfgs = []DeviceConfig{{Name: "HTP0"}}
	}
	for _, c := range cfgs {
		r.devices = append(r.devices, backend.NewUnavailable(c.Name, "Hexagon", backend.DeviceGPU, reason))
	}
}

func (r *Registry) discover() {
	if r.fromEnv {
		r.opts, r.optsErr = OptionsFromEnv()
	}
	if r.optsErr != nil {
		r.unavailable(backend.Reason{Kind: backend.InitFailed, Library: fastrpc.LibraryName, Err: r.optsErr})
		return
	}
	lib, err := fastrpc.Open(r.opts.Lib)
	if err != nil {
		var reason backend.Reason
		if !errors.As(err, &reason) {
			reason = backend.Reason{Kind: backend.InitFailed, Library: fastrpc.LibraryName, Err: err}
		}
		r.unavailable(reason)
		return
	}
	r.lib = lib
	r.arch = r.opts.Arch
	if r.arch == 0 {
		a, err := lib.Arch(fastrpc.DomainCDSP)
		switch {
		case err != nil:
			slog.Debug("hexagon: HTP version query failed, assuming v73", "err", err)
			a = 73
		case a < 73:
			slog.Warn("hexagon: arch below the supported range, using v73", "arch", a)
			a = 73
		case a > 85:
			slog.Warn("hexagon: arch above the supported range, using v85", "arch", a)
			a = 85
		}
		r.arch = a
	}
	opts := r.opts.resolve(r.arch)
	if runtime.GOOS == "android" && r.arch < 75 && len(opts.Devices) > 1 {
		slog.Warn("hexagon: one device only on SoCs before v75", "arch", r.arch)
		opts.Devices = opts.Devices[:1]
	}
	domains, discovered := r.domains()
	for i, cfg := range opts.Devices {
		d, err := newDevice(r, opts, cfg, domains, discovered)
		if err != nil {
			r.devices = append(r.devices, backend.NewUnavailable(cfg.Name, "Hexagon", backend.DeviceGPU,
				backend.Reason{Kind: backend.InitFailed, Library: lib.Path(), Err: err}))
			continue
		}
		d.index = i
		r.devices = append(r.devices, d)
	}
}

// domains maps physical core indices to NSP domains: FASTRPC_GET_DOMAINS
// when the library has it, else the static table (0: cdsp, 1: cdsp1).
func (r *Registry) domains() (map[int]domain, bool) {
	m := map[int]domain{}
	if ds, err := r.lib.NSPDomains(); err == nil {
		for inst, d := range ds {
			m[inst] = domain{id: uint32(d.ID), name: d.DomainName()}
		}
		return m, true
	} else if !errors.Is(err, fastrpc.ErrMissing) {
		slog.Debug("hexagon: FASTRPC_GET_DOMAINS failed, using static CDSP domains", "err", err)
	}
	m[0] = domain{id: fastrpc.DomainCDSP, name: "cdsp"}
	m[1] = domain{id: fastrpc.DomainCDSP1, name: "cdsp1"}
	return m, false
}

// SplitBufferType is the buffer type for tensors split over the devices
// from main (upstream's ggml_backend_split_buffer_type): main's own type,
// or the first available device's when main is not one; nil when none is.
func (r *Registry) SplitBufferType(main int) buffer.Type {
	devs := r.Devices()
	if main >= 0 && main < len(devs) && backend.Availability(devs[main]) == nil {
		return devs[main].BufferType()
	}
	for _, d := range devs {
		if backend.Availability(d) == nil {
			return d.BufferType()
		}
	}
	return nil
}

// Close releases every device's session, then the library. Buffers
// still allocated keep their memory until freed.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, d := range r.devices {
		if hd, ok := d.(*device); ok {
			errs = append(errs, hd.close())
		}
	}
	return errors.Join(errs...)
}

// device is one Hexagon device: a session (a group of sessions for a
// multi-core device) and its buffer types.
type device struct {
	reg   *Registry
	lib   *fastrpc.Lib
	opts  Options
	cfg   DeviceConfig
	index int
	s     *session
	bt    *bufferType
	hbt   *bufferType

	mu     sync.Mutex
	blocks map[*block]bool
}

func resolveDomain(cfg DeviceConfig, domains map[int]domain, discovered bool) (domain, error) {
	d, ok := domains[cfg.Physical]
	if !ok {
		if discovered {
			return domain{}, fmt.Errorf("hexagon: %s: NPU core %d not found (%d cores discovered)", cfg.Name, cfg.Physical, len(domains))
		}
		return domain{}, fmt.Errorf("hexagon: %s: NPU core %d needs domain discovery, which this libcdsprpc lacks (only cores 0 and 1 are known)", cfg.Name, cfg.Physical)
	}
	return d, nil
}

func newDevice(r *Registry, opts Options, cfg DeviceConfig, domains map[int]domain, discovered bool) (*device, error) {
	dom, err := resolveDomain(cfg, domains, discovered)
	if err != nil {
		return nil, err
	}
	d := &device{reg: r, lib: r.lib, opts: opts, cfg: cfg, blocks: map[*block]bool{}}
	d.bt = &bufferType{dev: d, name: cfg.Name}
	d.hbt = &bufferType{dev: d, name: cfg.Name + "-HOST", host: true}
	s, err := openSession(r.lib, opts, r.arch, cfg, dom)
	if err != nil {
		return nil, err
	}
	for i, m := range cfg.Group {
		mdom, err := resolveDomain(m, domains, discovered)
		if err == nil {
			var g *session
			if g, err = openSession(r.lib, opts, r.arch, m, mdom); err == nil {
				g.index = uint32(i + 1)
				s.group = append(s.group, g)
				continue
			}
		}
		_ = s.release()
		return nil, err
	}
	if err := s.linkGroup(); err != nil {
		_ = s.release()
		return nil, err
	}
	d.s = s
	return d, nil
}

func (d *device) sess() (*session, error) {
	if d.s == nil {
		return nil, fmt.Errorf("%w: %s is closed", backend.ErrClosed, d.cfg.Name)
	}
	return d.s, nil
}

func (d *device) track(b *block) {
	d.mu.Lock()
	d.blocks[b] = true
	d.mu.Unlock()
	b.closer = func() {
		d.mu.Lock()
		delete(d.blocks, b)
		d.mu.Unlock()
	}
}

func (d *device) close() error {
	if d.s == nil {
		return nil
	}
	// A broken session has reported its error already; release it anyway.
	var err error
	d.s.work.Lock()
	if d.s.err == nil {
		err = d.s.sync()
	}
	d.s.work.Unlock()
	d.mu.Lock()
	var blocks []*block
	for b := range d.blocks {
		blocks = append(blocks, b)
	}
	d.mu.Unlock()
	for _, b := range blocks {
		for _, s := range append([]*session{d.s}, d.s.group...) {
			err = errors.Join(err, b.unmapFrom(s))
		}
	}
	err = errors.Join(err, d.s.release())
	d.s = nil
	return err
}

// Name is the configured name ("HTP0", "HTP0:1", a group's name).
func (d *device) Name() string { return d.cfg.Name }

// Description is "Hexagon", as upstream.
func (d *device) Description() string { return "Hexagon" }

// Memory is GGML_HEXAGON_MBUF's total for both, 0 when unset (upstream's).
func (d *device) Memory() (free, total uint64) { return d.opts.MbufTotal, d.opts.MbufTotal }

// Type is GPU, as upstream reports the NPU.
func (d *device) Type() backend.DeviceType { return backend.DeviceGPU }

func (d *device) caps() backend.Caps {
	return backend.Caps{Async: true, Events: true, HostBuffer: d.opts.HostBuf}
}

func (d *device) Props() backend.Props {
	free, total := d.Memory()
	return backend.Props{Name: d.Name(), Description: d.Description(), MemoryFree: free, MemoryTotal: total,
		Type: d.Type(), Caps: d.caps()}
}

func (d *device) BufferType() buffer.Type { return d.bt }

// HostBufferType is the pinned host type when HOSTBUF is on, else nil.
func (d *device) HostBufferType() buffer.Type {
	if !d.opts.HostBuf {
		return nil
	}
	return d.hbt
}

// SupportsOp is the snapshot's rule (supportsOp), after
// GGML_HEXAGON_OPFILTER, which rejects ops whose description matches.
func (d *device) SupportsOp(t *graph.Tensor) bool {
	if t == nil {
		return false
	}
	if d.opts.OpFilter != nil && d.opts.OpFilter.MatchString(t.OpDesc()) {
		return false
	}
	ok := safeSupports(d.s, t)
	if d.opts.Verbose > 0 {
		slog.Debug("hexagon: supports-op", "device", d.cfg.Name, "op", t.OpDesc(), "tensor", t.String(), "ok", ok)
	}
	return ok
}

// safeSupports is the static rule, then (with a session) whether the
// kernel-parameter solvers compute time runs can plan t's kernel in the
// session's VTCM, threads and HMX under the *_SELECT options; it guards
// both against nodes missing sources they should have (a malformed graph
// is not supported, not a crash).
func safeSupports(s *session, t *graph.Tensor) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if !supportsOp(t) {
		return false
	}
	if s == nil || isNoop(t.Op) {
		return true
	}
	n, err := newNode(t)
	return err == nil && s.solveKernelParams(n) == nil
}

func (d *device) SupportsBufferType(bt buffer.Type) bool { return bt == d.bt || bt == d.hbt }

// OffloadOp is false: upstream has no offload rule.
func (d *device) OffloadOp(*graph.Tensor) bool { return false }

// Init returns a backend on the device's session. A session a failure
// marked is reopened first: the backends started before keep reporting
// the failure, the new one starts clean.
//
// Device parameters (GGML_DEVICE="HTP0:dsp_errors=per_call"):
// dsp_errors=sticky (the default, as upstream) marks the session on a DSP
// failure status; per_call makes it an error of the compute or
// synchronize that reads it only, the session staying usable (queue and
// protocol failures always mark it).
func (d *device) Init(o backend.Options) (backend.Backend, error) {
	perCall := false
	for k, v := range o.DeviceParams(d.cfg.Name) {
		switch {
		case k == "dsp_errors" && (v == "sticky" || v == "per_call"):
			perCall = v == "per_call"
		case k == "dsp_errors":
			return nil, backend.BadParam(d.cfg.Name, k, v, "sticky or per_call")
		default:
			return nil, backend.UnknownParam(d.cfg.Name, k, v, "dsp_errors")
		}
	}
	s, err := d.sess()
	if err != nil {
		return nil, err
	}
	if err := s.reopen(); err != nil {
		return nil, err
	}
	s.work.Lock()
	s.perCall = perCall
	s.work.Unlock()
	return &hexBackend{dev: d, s: s, gen: s.gen}, nil
}
