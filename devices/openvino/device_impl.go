package openvino

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/hostmem"
)

// device is OPENVINO<i> on the OpenVINO device rt.device.
type device struct {
	index   int
	name    string
	rt      *runtimeCtx
	bt, hbt *bufferType
	weights weightRegistry
	cache   *modelCache
	conv    convCache
	// usmWarn logs once that the KV cache cannot be kept in USM memory.
	usmWarn sync.Once
	// usmDevWarn logs once that it cannot be kept in USM device memory.
	usmDevWarn sync.Once
}

func newDevice(index int, rt *runtimeCtx) *device {
	d := &device{index: index, name: fmt.Sprintf("%s%d", Name, index), rt: rt}
	d.bt = &bufferType{dev: d, name: d.name}
	d.hbt = &bufferType{dev: d, name: d.name + "_HOST", host: true}
	d.cache = newModelCache()
	d.conv.spill = rt.opts.SpillDir
	return d
}

func (d *device) Name() string { return d.name }

// Description is upstream's: the runtime's version description
// (ov::get_openvino_version().description, "OpenVINO Runtime" in the
// releases), or "OpenVINO" when the library gives none. The OpenVINO
// device used is logged when the registry opens it, as upstream logs it.
func (d *device) Description() string {
	if desc := d.rt.lib.version.Description; desc != "" {
		return desc
	}
	return "OpenVINO"
}

// Memory is the host's physical memory, as upstream reports it: on
// windows the available and total physical memory (GlobalMemoryStatusEx),
// elsewhere free = total (sysconf on linux, hw.memsize on darwin; the
// OpenVINO devices share host memory, or say nothing). Verified on linux;
// windows and darwin by cross-builds and internal/hostmem's tests only.
func (d *device) Memory() (free, total uint64) { return hostmem.Physical() }

// Type is GPU, as upstream reports for every OpenVINO device (so that
// InitBest prefers it to the CPU), except on OpenVINO's CPU plugin, the
// default target: there it is ACCEL, a device InitBest does not pick by
// itself, a deliberate difference. That plugin computes on the same cores
// as the CPU device, slower: SmolLM2-135M Q4_1 decoded at 4.6 tokens/s on
// it (2026.4.1, 2 threads) against 186 on the CPU device, and `ggml run` with no
// device chose it once a runtime was fetched. Named (-device, GGML_DEVICE)
// it runs as before.
func (d *device) Type() backend.DeviceType {
	if d.rt.kind == KindCPU {
		return backend.DeviceAccel
	}
	return backend.DeviceGPU
}

// Caps are upstream's: synchronous, no host buffer cap, no buffers from
// host memory, no events, mmap'd weights usable.
func (d *device) Caps() backend.Caps { return backend.Caps{Mmap: true} }

func (d *device) Props() backend.Props {
	free, total := d.Memory()
	return backend.Props{Name: d.name, Description: d.Description(), MemoryFree: free, MemoryTotal: total,
		Type: d.Type(), Caps: d.Caps()}
}

// BufferType is OPENVINO<i>.
func (d *device) BufferType() buffer.Type { return d.bt }

// HostType is upstream's OPENVINO<i>_HOST buffer type. It is not offered
// as backend.HostBufferTyper: upstream's caps say host_buffer=false, and
// its memory is ordinary host memory, no faster to copy from.
func (d *device) HostType() buffer.Type { return d.hbt }

// SupportsBufferType accepts the device's own types and any host type, as
// upstream.
func (d *device) SupportsBufferType(bt buffer.Type) bool {
	return bt == d.bt || bt == d.hbt || (bt != nil && bt.IsHost())
}

// OffloadOp is false (upstream has none).
func (d *device) OffloadOp(*graph.Tensor) bool { return false }

// SupportsOp applies upstream's rules for the device kind; refusals are
// logged with their reason when GGML_OPENVINO_LOG_UNSUPPORTED_OPS is set.
func (d *device) SupportsOp(t *graph.Tensor) bool {
	ok, reason := supportsOp(d.rt.kind, t)
	if !ok && d.rt.opts.LogUnsupportedOps {
		slog.Warn(fmt.Sprintf("OpenVINO op unsupported: op '%s' (%s), type %s: %s", t.Name, t.Op, t.Type, reason))
	}
	return ok
}

// UnsupportedReason is why the device does not compute t, or "" when it
// does (for tools printing the support matrix).
func (d *device) UnsupportedReason(t *graph.Tensor) string {
	_, reason := supportsOp(d.rt.kind, t)
	return reason
}

// Kind is the class of OpenVINO device the backends run on.
func (d *device) Kind() Kind { return d.rt.kind }

// WeightMemory is the weight memory a device holds on the host (verified
// on the double; what an OpenVINO plugin keeps of its own - the GPU's
// device copy, the CPU plugin's repacked constants - is not visible
// through the C API and not counted).
type WeightMemory struct {
	// Buffers is the size of the WEIGHTS buffers, outside the Go heap:
	// the weights as set, quantized ones converted in place into
	// OpenVINO's layout (one copy).
	Buffers uint64
	// Released is the part of Buffers whose pages
	// GGML_OPENVINO_RELEASE_WEIGHTS dropped.
	Released uint64
	// Copied is weight bytes converted for the compiled models from
	// quantized tensors that were not in a WEIGHTS buffer (once each,
	// shared by the models): held a second time beside the tensor.
	Copied uint64
	// Models is the number of compiled models in the device's cache.
	Models int
	// Resident is the part of Buffers and Copied in anonymous memory
	// whose pages are in the process's resident set now (mincore; linux
	// only, else 0): what the weights held cost in RSS. SPILL_DIR memory,
	// the page cache's, is left out (mincore tells the page cache, not
	// what the process has mapped; smaps does).
	Resident uint64
}

// Held is the weight memory held: buffers not released, plus copies.
func (m WeightMemory) Held() uint64 { return m.Buffers - min(m.Released, m.Buffers) + m.Copied }

// String reports m in MiB, as ggml devices and the demo print it.
func (m WeightMemory) String() string {
	const mib = 1 << 20
	s := fmt.Sprintf("weights held %.1f MiB: %.1f MiB in weight buffers (converted in place)", float64(m.Held())/mib, float64(m.Buffers)/mib)
	if m.Released > 0 {
		s += fmt.Sprintf(", %.1f MiB of them released", float64(m.Released)/mib)
	}
	s += fmt.Sprintf(", %.1f MiB converted from host tensors for %d compiled model(s)", float64(m.Copied)/mib, m.Models)
	if m.Resident > 0 {
		s += fmt.Sprintf("; %.1f MiB of anonymous weight memory resident", float64(m.Resident)/mib)
	}
	return s
}

// LibraryReport says which libopenvino_c the device runs on and every
// place searched for it, one line each, for `ggml devices`.
func (d *device) LibraryReport() []string {
	s := d.rt.search
	lines := append([]string{"library " + s.found}, prefixAll("searched ", s.places)...)
	return append(append(lines, d.kvReport()...), verifiedOn)
}

// verifiedOn says what verified the device's claims (devices/openvino
// README): `ggml devices` prints it beside the library.
const verifiedOn = "verified on the real CPU plugin (OpenVINO 2025.0.0 and 2026.4.1, test-ops against ggml); GPU and NPU rules on the test double only"

func prefixAll(p string, s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = p + v
	}
	return out
}

// WeightMemory is what the device holds for weights now.
func (d *device) WeightMemory() WeightMemory {
	m := WeightMemory{Buffers: d.weights.bytes(), Resident: d.weights.resident() + d.conv.resident()}
	d.weights.mu.Lock()
	m.Released = d.weights.dropped
	d.weights.mu.Unlock()
	m.Copied = d.conv.bytes()
	d.cache.mu.Lock()
	m.Models = len(d.cache.models)
	d.cache.mu.Unlock()
	return m
}

// WeightBytes is the weight memory the device holds (WeightMemory.Held).
func (d *device) WeightBytes() uint64 { return d.WeightMemory().Held() }

// WeightReport describes the weight memory held, for ggml devices and the
// demo.
func (d *device) WeightReport() string { return d.WeightMemory().String() }

// Init starts a backend. The compiled models are shared by every backend
// of the device; infer requests are per backend, as in upstream. The
// device's parameters (GGML_DEVICE=OPENVINO0:key=value) set the options
// of this backend by the variables' names without the prefix
// (disable_cache=1, profiling=2, dump_ir=1); an unknown key is an error.
// The OpenVINO device itself is chosen when the registry opens the
// library (GGML_OPENVINO_DEVICE, or device= among the parameters there).
func (d *device) Init(opts backend.Options) (backend.Backend, error) {
	o := d.rt.opts
	if p := opts.DeviceParams(d.name); len(p) > 0 {
		if err := o.ApplyParams(p); err != nil {
			return nil, fmt.Errorf("%w: device %s: %w", backend.ErrArgument, d.name, err)
		}
		if o.Device != d.rt.opts.Device && o.Device != d.rt.device {
			return nil, fmt.Errorf("%w: %s runs on OpenVINO device %s; device=%s must be given when the device is listed (GGML_DEVICE or GGML_OPENVINO_DEVICE)",
				backend.ErrArgument, d.name, d.rt.device, o.Device)
		}
	}
	return newBackendOpts(d, o), nil
}
