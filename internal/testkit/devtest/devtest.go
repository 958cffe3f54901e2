// Package devtest is a configurable fake device for tests: the scheduler's,
// the conformance suite's (optest.RunDevice) and the command's. It keeps to
// the contract an accelerator must (see backend.Backend): memory of its own
// that the CPU does not address (Tensor.Data stays nil, reads and writes go
// through the buffer), an optional asynchronous queue run by a goroutine of
// its own, optional events, and a chosen subset of operations, computed by
// copying the operands to host memory, running the CPU device's kernels and
// copying the result back. Faults can be injected: a failing compute, set or
// get, a slow queue, and wrong results (an operation changed, a result
// damaged or written elsewhere), so tests can show that what checks a device
// does fail a wrong one.
//
// A new device package can read it as a template: a buffer type over a
// Storage (buffer.New does the bounds checks), tensors found with
// buffer.Locate, GraphCompute taking everything it needs from the graph
// before it returns, errors of queued work returned by Synchronize.
package devtest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// ErrFault is an error for fault hooks to return, which tests recognize
// with errors.Is.
var ErrFault = errors.New("devtest: injected fault")

// Config describes a fake device.
type Config struct {
	// Name is the device's name, "FAKE0" when empty.
	Name string
	// Type is the device's type; the zero value is the CPU's, so set it
	// (DeviceGPU for an accelerator with memory of its own).
	Type backend.DeviceType
	// Supports decides which nodes the device computes, besides the view
	// operations it always accepts; nil accepts what the CPU device
	// computes. F32Ops builds a common rule.
	Supports func(t *graph.Tensor) bool
	// Memory is the buffer type the device computes in. Nil gives it memory
	// of its own (a new MemoryType named after the device); a host type
	// (buffer.CPU()) makes it work in host memory, as BLAS does beside the
	// CPU; another fake device's type makes the two share memory.
	Memory buffer.Type
	// Async makes the backends queue their work on a goroutine; Props
	// then report Caps.Async.
	Async bool
	// Offload is the OffloadOp answer: the device wants operations whose
	// weights are in host memory.
	Offload bool
	// Threads is the number of threads of the CPU kernels the device
	// computes with; 0 means 1.
	Threads int
	// Faults are injected into the device's work.
	Faults Faults
}

// Faults are hooks injected into a fake device's work; each nil hook does
// nothing. They run on the queue's goroutine for an asynchronous device,
// so hooks that record must lock.
type Faults struct {
	// Compute runs before each node is computed, with the node's
	// snapshot; an error fails the computation (GraphCompute for a
	// synchronous device, the next Synchronize for an asynchronous one).
	Compute func(n *graph.Tensor) error
	// Set and Get run before each SetTensorAsync and GetTensorAsync
	// copy; an error fails it as Compute's does.
	Set, Get func(t *graph.Tensor) error
	// Delay is slept before each queued computation, so a caller that
	// does not wait for the queue races with it.
	Delay time.Duration
	// Tamper changes a node's snapshot before the kernel runs: its
	// operation or parameters, or its sources' host copies (their Data),
	// which are not copied back. It computes wrong results.
	Tamper func(n *graph.Tensor)
	// Corrupt runs after a node's result is back in device memory, with
	// the node's snapshot, the memory of the buffer holding it and the
	// result's byte offset there, to damage it (bytes after the result,
	// the result moved elsewhere).
	Corrupt func(n *graph.Tensor, mem []byte, at uint64)
}

// F32Ops is a Supports rule: the given operations with F32 operands and
// result only (and I32 expert ids for MUL_MAT_ID).
func F32Ops(list ...ops.Op) func(t *graph.Tensor) bool {
	return func(t *graph.Tensor) bool {
		if !slices.Contains(list, t.Op) || t.Type != quant.F32 {
			return false
		}
		for j, s := range t.Src {
			if s != nil && s.Type != quant.F32 && !(t.Op == ops.MulMatID && j == 2 && s.Type == quant.I32) {
				return false
			}
		}
		return true
	}
}

// Device is a fake device. It records what the scheduler asks of it (the
// copies and event calls, in order) for tests to inspect. Use it as a
// backend.Device; NewWithEvents makes one with events.
type Device struct {
	cfg  Config
	mem  buffer.Type
	face backend.Device // the value handed out as the backends' device

	mu      sync.Mutex
	trace   []string
	nEvents int
}

// New returns a fake device as cfg describes it, without events.
func New(cfg Config) *Device {
	if cfg.Name == "" {
		cfg.Name = "FAKE0"
	}
	if cfg.Threads <= 0 {
		cfg.Threads = 1
	}
	d := &Device{cfg: cfg, mem: cfg.Memory}
	if d.mem == nil {
		d.mem = NewMemoryType(cfg.Name)
	}
	d.face = d
	return d
}

// EventDevice is a fake device with events (backend.EventCreator) and
// asynchronous backends.
type EventDevice struct{ *Device }

// NewWithEvents returns a fake device with events; its backends are
// asynchronous whatever cfg.Async says, since events order queues.
func NewWithEvents(cfg Config) *EventDevice {
	cfg.Async = true
	e := &EventDevice{New(cfg)}
	e.face = e
	return e
}

// Props reports Caps.Events besides what Device reports.
func (e *EventDevice) Props() backend.Props {
	p := e.Device.Props()
	p.Caps.Events = true
	return p
}

// NewEvent numbers the device's events from 0, in the order they are
// made (the scheduler makes them backend after backend, copy after copy).
func (e *EventDevice) NewEvent() (backend.Event, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ev := &event{dev: e.Device, id: e.nEvents}
	ev.cond = sync.NewCond(&ev.mu)
	e.nEvents++
	return ev, nil
}

// Config is the configuration the device was made with.
func (d *Device) Config() Config { return d.cfg }

// Name is the configured name.
func (d *Device) Name() string { return d.cfg.Name }

// Description says what the device is.
func (d *Device) Description() string { return "devtest fake device" }

// Memory is unknown (0, 0).
func (d *Device) Memory() (free, total uint64) { return 0, 0 }

// Type is the configured type.
func (d *Device) Type() backend.DeviceType { return d.cfg.Type }

// Props gathers the device's description; Caps.Async follows the
// configuration.
func (d *Device) Props() backend.Props {
	return backend.Props{Name: d.Name(), Description: d.Description(), Type: d.Type(),
		Caps: backend.Caps{Async: d.cfg.Async}}
}

// BufferType is the device's memory.
func (d *Device) BufferType() buffer.Type { return d.mem }

// SupportsBufferType accepts the device's own memory only.
func (d *Device) SupportsBufferType(bt buffer.Type) bool { return bt == d.mem }

// OffloadOp is the configured answer.
func (d *Device) OffloadOp(*graph.Tensor) bool { return d.cfg.Offload }

// SupportsOp accepts leafs and view operations, and what the configured
// rule (or the CPU device) accepts.
func (d *Device) SupportsOp(t *graph.Tensor) bool {
	if t.Op == ops.None || t.Op.IsView() {
		return true
	}
	if d.cfg.Supports != nil {
		return d.cfg.Supports(t) && cpu.SupportsOp(t)
	}
	return cpu.SupportsOp(t)
}

// Init starts a backend. The device takes one parameter
// (backend.Options.Params, GGML_DEVICE="FAKE0:threads=4"): threads, the
// kernels' thread count instead of Config.Threads; any other key is an
// error, as it must be for a real device, so that a typo is not ignored.
func (d *Device) Init(opts backend.Options) (backend.Backend, error) {
	threads := d.cfg.Threads
	for k, v := range opts.DeviceParams(d.Name()) {
		switch k {
		case "threads":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > backend.MaxThreads {
				return nil, backend.BadParam(d.Name(), k, v, fmt.Sprintf("a thread count from 1 to %d", backend.MaxThreads))
			}
			threads = n
		default:
			return nil, backend.UnknownParam(d.Name(), k, v, "threads")
		}
	}
	b := &Backend{dev: d, eng: cpu.New(cpu.Options{Threads: threads})}
	if d.cfg.Async {
		b.q = newQueue()
	}
	return b, nil
}

// Registry returns a registry holding only d, for backend.Register, so that
// commands find the device by name.
func (d *Device) Registry() backend.Registry { return registry{d.face} }

type registry struct{ d backend.Device }

func (r registry) Name() string              { return r.d.Name() }
func (r registry) Devices() []backend.Device { return []backend.Device{r.d} }

// log appends to the trace of the scheduler's calls.
func (d *Device) log(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.trace = append(d.trace, fmt.Sprintf(format, args...))
}

// TakeTrace returns the device's trace so far ("copy NAME" for each copy
// into it, "record N", "wait N", "sync N" for event calls) and forgets it.
func (d *Device) TakeTrace() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.trace
	d.trace = nil
	return t
}

// NEvents is the number of events made since the last ResetTrace.
func (d *Device) NEvents() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nEvents
}

// ResetTrace forgets the trace and the count of events.
func (d *Device) ResetTrace() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.trace, d.nEvents = nil, 0
}

// MemoryType is fake device memory: Go slices the CPU is not told about
// (IsHost is false), reached only through the buffer API, each buffer at a
// made-up device address.
type MemoryType struct {
	name  string
	align uint64
	next  atomic.Uint64
}

// NewMemoryType returns fake device memory named name, 32-byte aligned.
func NewMemoryType(name string) *MemoryType { return &MemoryType{name: name, align: 32} }

// Name is the type's name.
func (m *MemoryType) Name() string { return m.name }

// Alignment is 32 bytes.
func (m *MemoryType) Alignment() uint64 { return m.align }

// MaxSize is 1 GiB.
func (m *MemoryType) MaxSize() uint64 { return 1 << 30 }

// AllocSize is the tensor's size: no padding.
func (m *MemoryType) AllocSize(t *graph.Tensor) uint64 { return t.NBytes() }

// IsHost is false.
func (m *MemoryType) IsHost() bool { return false }

// DeviceName is the type's name.
func (m *MemoryType) DeviceName() string { return m.name }

// Alloc returns a zeroed buffer of size bytes.
func (m *MemoryType) Alloc(size uint64) (buffer.Buffer, error) {
	if size > m.MaxSize() {
		return nil, fmt.Errorf("%w: %d bytes, %s buffers hold at most %d", buffer.ErrTooLarge, size, m.name, m.MaxSize())
	}
	// Made-up addresses, 1 GiB apart, so that no two buffers overlap.
	base := uintptr(1<<40 + m.next.Add(1)<<30)
	return buffer.New(m, &Storage{typ: m, mem: make([]byte, size), base: base}, size)
}

// Storage is a fake device buffer's memory (a buffer.DeviceStorage).
type Storage struct {
	typ  *MemoryType
	mem  []byte
	base uintptr
}

// Base is the buffer's made-up device address.
func (s *Storage) Base() uintptr { return s.base }

// Release forgets the memory.
func (s *Storage) Release() error { s.mem = nil; return nil }

// Write copies data to byte offset at.
func (s *Storage) Write(at uint64, data []byte) error { copy(s.mem[at:], data); return nil }

// Read copies from byte offset at into data.
func (s *Storage) Read(at uint64, data []byte) error { copy(data, s.mem[at:]); return nil }

// Fill sets size bytes from at to v.
func (s *Storage) Fill(at, size uint64, v byte) error {
	for i := range s.mem[at : at+size] {
		s.mem[at+uint64(i)] = v
	}
	return nil
}

// Memory is the memory itself, for tests that inspect or damage it. (Not
// named Bytes: that would make it a buffer.HostStorage.)
func (s *Storage) Memory() []byte { return s.mem }
