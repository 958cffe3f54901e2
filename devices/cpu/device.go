package cpu

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// The CPU registers itself, so that importing this package (blank, from a
// command) makes the device known to package backend.
func init() {
	if err := backend.Register(cpuRegistry); err != nil {
		backend.Logger().Warn("cpu: device not registered", "err", err)
	}
}

var (
	cpuRegistry = &registry{}
	cpuDevice   = &device{}
)

// Registry is the CPU's registry, holding the one CPU device.
func Registry() backend.Registry { return cpuRegistry }

// Device is the CPU device ("CPU"): host memory in buffer.CPU() buffers,
// graphs computed by an Engine.
func Device() backend.Device { return cpuDevice }

type registry struct{}

func (*registry) Name() string              { return "CPU" }
func (*registry) Devices() []backend.Device { return []backend.Device{cpuDevice} }

type device struct {
	descOnce sync.Once
	desc     string
}

func (*device) Name() string { return "CPU" }

// Description is the processor's model name where the system tells it
// (linux x86's /proc/cpuinfo, darwin's sysctl), else "CPU", as ggml's CPU
// device.
func (d *device) Description() string {
	d.descOnce.Do(func() {
		d.desc = "CPU"
		if m := cpuModel(); m != "" {
			d.desc = m
		}
	})
	return d.desc
}

// Memory is the host's memory: on linux MemAvailable and MemTotal of
// /proc/meminfo (ggml reports free = total on unix; available memory is the
// better estimate of what a model can use), on windows the available and
// total physical memory (as ggml), on darwin hw.memsize for both (as
// ggml); 0, 0 (unknown) elsewhere.
func (*device) Memory() (free, total uint64) { return hostMemory() }

func (*device) Type() backend.DeviceType { return backend.DeviceCPU }

// Caps are ggml's CPU device's: synchronous, no pinned host buffer type,
// caller memory usable as a buffer, no events, mmap'd weights usable.
func (*device) Caps() backend.Caps {
	return backend.Caps{BufferFromHostPtr: true, Mmap: true}
}

func (d *device) Props() backend.Props {
	free, total := d.Memory()
	return backend.Props{
		Name: d.Name(), Description: d.Description(), Type: d.Type(),
		MemoryFree: free, MemoryTotal: total, Caps: d.Caps(),
	}
}

func (*device) BufferType() buffer.Type { return buffer.CPU() }

func (*device) SupportsOp(t *graph.Tensor) bool { return SupportsOp(t) }

// SupportsBufferType accepts any host memory (the kernels read and write
// Tensor.Data wherever it is) and its own repack buffers.
func (*device) SupportsBufferType(bt buffer.Type) bool {
	return bt != nil && (bt.IsHost() || bt == RepackBufferType())
}

// ExtraBufferTypes is RepackBufferType (ggml_backend_dev_get_extra_bufts):
// weights placed there are multiplied faster, and only by MUL_MAT.
func (*device) ExtraBufferTypes() []buffer.Type { return []buffer.Type{RepackBufferType()} }

// OffloadOp is false: the CPU is where work is offloaded from.
func (*device) OffloadOp(*graph.Tensor) bool { return false }

// BufferFromHostMemory wraps mem (ggml_backend_cpu_buffer_from_ptr); see
// buffer.FromBytes for what mem must be.
func (*device) BufferFromHostMemory(mem []byte, _ uint64) (buffer.Buffer, error) {
	return buffer.FromBytes(mem)
}

// Init starts a CPU backend with opts.Threads threads (0: GOMAXPROCS).
// ggml's CPU backend reads no environment variable for its thread count,
// so neither does this one: callers set Options.Threads, or the device's
// one parameter, threads (GGML_DEVICE="CPU:threads=4"), which overrides
// it. Any other key, or a threads value that is not a count
// backend.CheckThreads accepts, is a *backend.ParamError.
func (d *device) Init(opts backend.Options) (backend.Backend, error) {
	threads := opts.Threads
	for k, v := range opts.DeviceParams(d.Name()) {
		if k != "threads" {
			return nil, backend.UnknownParam(d.Name(), k, v, "threads")
		}
		n, err := strconv.Atoi(v)
		if err != nil || backend.CheckThreads(n) != nil {
			return nil, backend.BadParam(d.Name(), k, v, fmt.Sprintf("a thread count from 0 (all CPUs) to %d", backend.MaxThreads))
		}
		threads = n
	}
	if err := backend.CheckThreads(threads); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	return newBackend(d, threads), nil
}

// parseMeminfo returns MemAvailable (MemFree on kernels older than 3.14)
// and MemTotal from /proc/meminfo's text, in bytes.
func parseMeminfo(r io.Reader) (free, total uint64) {
	var memFree, avail uint64
	haveAvail := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			v *= 1024
		}
		switch key {
		case "MemTotal":
			total = v
		case "MemFree":
			memFree = v
		case "MemAvailable":
			avail, haveAvail = v, true
		}
	}
	if haveAvail {
		return avail, total
	}
	return memFree, total
}

// parseCPUModel returns the first "model name" of /proc/cpuinfo's text.
func parseCPUModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(val)
		}
	}
	return ""
}
