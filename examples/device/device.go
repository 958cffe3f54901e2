// Package device is the smallest complete ggml-go device, the template a
// new device starts from (docs/architecture.md, "Add a device"). It has
// memory of its own that the CPU does not address (a Go slice standing for
// what a driver would allocate), computes four F32 operations (ADD, MUL,
// SCALE, MUL_MAT) from that memory, and passes the conformance suite
// (internal/testkit/optest.TestDevice) like the real devices: every case
// it accepts matches ggml, every other case is refused by SupportsOp and
// runs elsewhere.
//
// A real device replaces three things: Storage (calls into the native
// library instead of copy), SupportsOp (the library's rules) and
// compute (the library's kernels, usually a whole graph at once). The
// registration, the buffer type, the parameter checks and the backend's
// contract stay as they are here.
package device

import (
	"fmt"
	"sync/atomic"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Name is the device's name in GGML_DEVICE and backend.DeviceByName.
const Name = "EXAMPLE0"

// The device registers itself, as every device package does, so that a
// program links it with a blank import.
func init() {
	if err := backend.Register(registry{}); err != nil {
		backend.Logger().Warn("example device: not registered", "err", err)
	}
}

var theDevice = &Device{}

// Registry is the registry holding the one example device.
func Registry() backend.Registry { return registry{} }

type registry struct{}

func (registry) Name() string { return "Example" }

// Devices lists the device. A device whose library is missing would be
// listed as a backend.Unavailable saying why, never left out.
func (registry) Devices() []backend.Device { return []backend.Device{theDevice} }

// Device is the example device. Its type is ACCEL, so backend.InitBest
// never picks it by itself: it is used when named (GGML_DEVICE=EXAMPLE0).
type Device struct {
	mem memoryType
}

// Name is "EXAMPLE0".
func (*Device) Name() string { return Name }

// Description is for people.
func (*Device) Description() string { return "ggml-go example device (F32 ADD, MUL, SCALE, MUL_MAT)" }

// Memory is unknown (0, 0): the example's memory is the Go heap.
func (*Device) Memory() (free, total uint64) { return 0, 0 }

// Type is ACCEL.
func (*Device) Type() backend.DeviceType { return backend.DeviceAccel }

// Props gathers the above. The device has no optional capability: its
// calls finish before they return (no Async), it has no events and no
// pinned host memory, and backend.CheckCaps holds it to that.
func (d *Device) Props() backend.Props {
	return backend.Props{Name: d.Name(), Description: d.Description(), Type: d.Type()}
}

// BufferType is the device's memory.
func (d *Device) BufferType() buffer.Type { return &d.mem }

// SupportsBufferType accepts only the device's own memory: its kernels
// read tensors through Storage, which host buffers do not have.
func (d *Device) SupportsBufferType(bt buffer.Type) bool { return bt == &d.mem }

// OffloadOp is false: the device does not ask for work the scheduler
// placed on the CPU.
func (*Device) OffloadOp(*graph.Tensor) bool { return false }

// SupportsOp is a function of the node, as in ggml: leafs and views (they
// compute nothing), and the four operations when every tensor is F32, in
// the shapes compute handles (any strides).
func (*Device) SupportsOp(t *graph.Tensor) bool {
	if t.Op == ops.None || t.Op.IsView() {
		return true
	}
	a, b := t.Src[0], t.Src[1]
	if t.Type != quant.F32 || a == nil || a.Type != quant.F32 {
		return false
	}
	switch t.Op {
	case ops.Scale:
		return b == nil && t.Ne == a.Ne
	case ops.Add, ops.Mul:
		// b repeats along each dimension to a's shape (ggml_can_repeat).
		if b == nil || b.Type != quant.F32 || t.Ne != a.Ne {
			return false
		}
		for i := range graph.MaxDims {
			if b.Ne[i] == 0 || a.Ne[i]%b.Ne[i] != 0 {
				return false
			}
		}
		return true
	case ops.MulMat:
		// a [K, M, A2, A3] times b [K, N, B2, B3], a broadcast over b's
		// batches: t is [M, N, B2, B3].
		return b != nil && b.Type == quant.F32 && a.Ne[0] == b.Ne[0] &&
			a.Ne[2] > 0 && a.Ne[3] > 0 && b.Ne[2]%a.Ne[2] == 0 && b.Ne[3]%a.Ne[3] == 0
	}
	return false
}

// Init starts a backend. The device has no parameters, so any key given
// (GGML_DEVICE="EXAMPLE0:key=value") is an error naming it: a typo must
// not go unnoticed. A device with parameters parses them here, answering
// backend.BadParam for a value it does not accept.
func (d *Device) Init(opts backend.Options) (backend.Backend, error) {
	for k, v := range opts.DeviceParams(d.Name()) {
		return nil, backend.UnknownParam(d.Name(), k, v)
	}
	return &Backend{dev: d}, nil
}

// memoryType is the device's buffer type: memory reached by copies
// (IsHost false), so tensors placed in it have no Tensor.Data and every
// access goes through the buffer (buffer.SetTensor, buffer.Locate).
type memoryType struct{ next atomic.Uint64 }

func (*memoryType) Name() string                     { return Name }
func (*memoryType) Alignment() uint64                { return 64 }
func (*memoryType) MaxSize() uint64                  { return 1 << 30 }
func (*memoryType) AllocSize(t *graph.Tensor) uint64 { return t.NBytes() }
func (*memoryType) IsHost() bool                     { return false }
func (*memoryType) DeviceName() string               { return Name }
func (m *memoryType) Alloc(size uint64) (buffer.Buffer, error) {
	if size > m.MaxSize() {
		return nil, fmt.Errorf("%w: %d bytes, %s buffers hold at most %d", buffer.ErrTooLarge, size, Name, m.MaxSize())
	}
	// A device address per buffer (here made up, 1 GiB apart), which the
	// allocators use to tell buffers apart.
	base := uintptr(1<<40 + m.next.Add(1)<<30)
	return buffer.New(m, &storage{mem: make([]byte, size), base: base}, size)
}

// storage is one buffer's memory (a buffer.DeviceStorage). The buffer
// checks every range before calling it, so its methods never see one
// outside mem.
type storage struct {
	mem  []byte
	base uintptr
}

func (s *storage) Base() uintptr  { return s.base }
func (s *storage) Release() error { s.mem = nil; return nil }

func (s *storage) Write(at uint64, data []byte) error { copy(s.mem[at:], data); return nil }
func (s *storage) Read(at uint64, data []byte) error  { copy(data, s.mem[at:]); return nil }

func (s *storage) Fill(at, size uint64, v byte) error {
	b := s.mem[at : at+size]
	for i := range b {
		b[i] = v
	}
	return nil
}
