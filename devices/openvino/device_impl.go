package openvino

import (
	"fmt"
	"log/slog"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// device is OPENVINO<i> on the OpenVINO device rt.device.
type device struct {
	index   int
	name    string
	rt      *runtimeCtx
	bt, hbt *bufferType
	weights weightRegistry
	cache   *modelCache
}

func newDevice(index int, rt *runtimeCtx) *device {
	d := &device{index: index, name: fmt.Sprintf("%s%d", Name, index), rt: rt}
	d.bt = &bufferType{dev: d, name: d.name}
	d.hbt = &bufferType{dev: d, name: d.name + "_HOST", host: true}
	d.cache = newModelCache()
	return d
}

func (d *device) Name() string { return d.name }

// Description is the runtime's version description, as the seed's
// (ov::get_openvino_version().description), with the OpenVINO device and
// release, which the seed logs.
func (d *device) Description() string {
	v := d.rt.lib.version
	desc := v.Description
	if desc == "" {
		desc = "OpenVINO"
	}
	return fmt.Sprintf("%s %s on %s", desc, v, d.rt.device)
}

// Memory is the host's physical memory, free = total as the seed reports
// on unix (the OpenVINO devices share host memory, or say nothing).
func (d *device) Memory() (free, total uint64) {
	total = physicalMemory()
	return total, total
}

// Type is GPU, as the seed reports for every OpenVINO device (so that
// InitBest prefers it to the CPU).
func (d *device) Type() backend.DeviceType { return backend.DeviceGPU }

// Caps are the seed's: synchronous, no host buffer cap, no buffers from
// host memory, no events, mmap'd weights usable.
func (d *device) Caps() backend.Caps { return backend.Caps{Mmap: true} }

func (d *device) Props() backend.Props {
	free, total := d.Memory()
	return backend.Props{Name: d.name, Description: d.Description(), MemoryFree: free, MemoryTotal: total,
		Type: d.Type(), Caps: d.Caps()}
}

// BufferType is OPENVINO<i>.
func (d *device) BufferType() buffer.Type { return d.bt }

// HostType is the seed's OPENVINO<i>_HOST buffer type. It is not offered
// as backend.HostBufferTyper: the seed's caps say host_buffer=false, and
// its memory is ordinary host memory, no faster to copy from.
func (d *device) HostType() buffer.Type { return d.hbt }

// SupportsBufferType accepts the device's own types and any host type, as
// the seed.
func (d *device) SupportsBufferType(bt buffer.Type) bool {
	return bt == d.bt || bt == d.hbt || (bt != nil && bt.IsHost())
}

// OffloadOp is false (the seed has none).
func (d *device) OffloadOp(*graph.Tensor) bool { return false }

// SupportsOp applies the seed's rules for the device kind; refusals are
// logged with their reason when GGML_OPENVINO_LOG_UNSUPPORTED_OPS is set.
func (d *device) SupportsOp(t *graph.Tensor) bool {
	ok, reason := supportsOp(d.rt.kind, t)
	if !ok && d.rt.opts.LogUnsupportedOps {
		slog.Warn("OpenVINO op unsupported", "name", t.Name, "op", t.Op.String(), "type", t.Type.String(), "reason", reason)
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

// WeightBytes is the memory of the buffers holding this device's weights.
func (d *device) WeightBytes() uint64 { return d.weights.bytes() }

// Init starts a backend. The compiled models are shared by every backend
// of the device; infer requests are per backend, as in the seed. The
// device's parameters (GGML_DEVICE=OPENVINO0:key=value) set the options
// of this backend by the variables' names without the prefix
// (disable_cache=1, profiling=2, dump_ir=1); an unknown key is an error.
// The OpenVINO device itself is chosen when the registry opens the
// library (GGML_OPENVINO_DEVICE, or device= among the parameters there).
func (d *device) Init(opts backend.Options) (backend.Backend, error) {
	o := d.rt.opts
	if p := opts.DeviceParams(d.name); len(p) > 0 {
		if err := o.ApplyParams(p); err != nil {
			return nil, fmt.Errorf("%w: %w", backend.ErrArgument, err)
		}
		if o.Device != d.rt.opts.Device && o.Device != d.rt.device {
			return nil, fmt.Errorf("%w: %s runs on OpenVINO device %s; device=%s must be given when the device is listed (GGML_DEVICE or GGML_OPENVINO_DEVICE)",
				backend.ErrArgument, d.name, d.rt.device, o.Device)
		}
	}
	return newBackendOpts(d, o), nil
}
