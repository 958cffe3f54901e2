// Package backend is ggml-go's device abstraction, after ggml-backend.h:
// a Registry lists Devices, a Device describes one piece of hardware (its
// memory, capabilities, buffer types and what it can compute) and starts
// Backends, and a Backend is a stream of work on a device: tensor copies
// and graph computations, in order.
//
// Device packages register themselves from init, and a program chooses
// which devices it links by importing them:
//
//	import _ "github.com/ggml-go/ggml/devices/cpu"
//
//	b, err := backend.InitBest() // honours GGML_DEVICE, e.g. "OPENVINO0,CPU"
//
// This package never imports a device package; devices import it.
//
// A device whose native library is missing, too old or fails to start is
// still listed, as an *Unavailable carrying a Reason (which library, the
// paths searched, the symbol or version at fault, the error), so tools can
// say why it cannot be used. Nothing here panics because a library or a
// device is missing or fails.
//
// As in ggml, a device's supports-op rule is a function of the node
// (types, shapes, parameters), not a table. Features only some devices
// have are optional interfaces found by type assertion, as in
// database/sql/driver:
//
//   - Device: HostBufferTyper (pinned host memory), HostMemoryBufferer
//     (a buffer over caller memory), EventCreator (events).
//   - Backend: GraphPlanner (compute a graph repeatedly from a plan),
//     GraphOptimizer (reorder a graph for the device), TensorCopier (copy
//     from another backend without the host), PlacedGraphComputer (trust
//     a scheduler that a graph it computes again is unchanged).
package backend

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// Errors of this package; test them with errors.Is.
var (
	// ErrNotFound reports a device name or type no registered device has.
	ErrNotFound = errors.New("backend: no such device")
	// ErrUnavailable reports a device that is listed but cannot be used;
	// the error also wraps the device's Reason.
	ErrUnavailable = errors.New("backend: device unavailable")
	// ErrUnsupported reports an operation a device or backend does not
	// provide. It is the standard library's errors.ErrUnsupported, which
	// every package of the module's unsupported errors also match
	// (quant.ErrUnsupported, buffer.ErrUnsupported, cpu.ErrUnsupported):
	// one errors.Is(err, backend.ErrUnsupported) covers them all.
	ErrUnsupported = errors.ErrUnsupported
	// ErrDuplicate reports a registry or device name registered twice.
	ErrDuplicate = errors.New("backend: already registered")
	// ErrArgument reports a bad argument: a nil registry, an empty
	// device name in a list.
	ErrArgument = errors.New("backend: bad argument")
	// ErrClosed reports a backend used after Close.
	ErrClosed = errors.New("backend: closed")
)

// DeviceType is the kind of a device, with ggml's numbering
// (enum ggml_backend_dev_type).
type DeviceType int32

// Device types.
const (
	// DeviceCPU is the host CPU (and its memory).
	DeviceCPU DeviceType = 0
	// DeviceGPU is a GPU with memory of its own.
	DeviceGPU DeviceType = 1
	// DeviceIGPU is an integrated GPU sharing host memory.
	DeviceIGPU DeviceType = 2
	// DeviceAccel is an accelerator used next to the CPU (BLAS, NPU),
	// which InitBest does not pick by itself.
	DeviceAccel DeviceType = 3
)

var deviceTypeNames = [...]string{"CPU", "GPU", "IGPU", "ACCEL"}

func (t DeviceType) String() string {
	if t >= 0 && int(t) < len(deviceTypeNames) {
		return deviceTypeNames[t]
	}
	return fmt.Sprintf("DeviceType(%d)", int32(t))
}

// ParseDeviceType returns the type named s ("CPU", "gpu", ...).
func ParseDeviceType(s string) (DeviceType, error) {
	for i, n := range deviceTypeNames {
		if strings.EqualFold(s, n) {
			return DeviceType(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown device type %q", ErrArgument, s)
}

// Caps are what a device can do beyond computing graphs
// (ggml_backend_dev_caps).
type Caps struct {
	// Async: its backends' set/get/copy and graph compute may return
	// before the work is done; Synchronize waits.
	Async bool
	// HostBuffer: the device has a pinned host buffer type
	// (HostBufferTyper).
	HostBuffer bool
	// BufferFromHostPtr: the device can use caller memory as a buffer
	// (HostMemoryBufferer).
	BufferFromHostPtr bool
	// Events: the device has events (EventCreator).
	Events bool
	// Mmap: the device can use weights from a memory-mapped file.
	Mmap bool
}

// String lists the capabilities that are set, e.g. "buffer_from_host_ptr,mmap",
// with ggml's field names; "none" when none are.
func (c Caps) String() string {
	var s []string
	for _, f := range []struct {
		on   bool
		name string
	}{{c.Async, "async"}, {c.HostBuffer, "host_buffer"}, {c.BufferFromHostPtr, "buffer_from_host_ptr"}, {c.Events, "events"}, {c.Mmap, "mmap"}} {
		if f.on {
			s = append(s, f.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// Props describe a device (ggml_backend_dev_props).
type Props struct {
	Name        string
	Description string
	// MemoryFree and MemoryTotal are in bytes; 0 when unknown.
	MemoryFree, MemoryTotal uint64
	Type                    DeviceType
	// DeviceID identifies the hardware (a PCI bus id), or is empty.
	DeviceID string
	Caps     Caps
}

// Registry is a family of devices, usually one per device package
// (ggml_backend_reg).
type Registry interface {
	// Name identifies the registry ("CPU", "OpenVINO").
	Name() string
	// Devices lists the registry's devices, unavailable ones included,
	// in a stable order. It may discover them (load libraries) on first
	// call; it must not fail: a device that cannot be used is listed as
	// an *Unavailable.
	Devices() []Device
}

// TypeHinter is a Registry that knows, before it discovers its devices
// (loads its library), the type every one of them would have. Lookups by
// type (DeviceByType, DevicesOfType, Init's choice of the best device)
// skip such a registry when that is not the type asked for, so that a run
// never loads a library it does not use: OpenVINO's runtime and plugins
// on its CPU target, 23 MiB resident for a run on the CPU device
// (measured with the real runtime, 2026.4.1).
type TypeHinter interface {
	// DeviceTypeHint is the type the registry's devices would have, ok
	// false when only discovery can tell.
	DeviceTypeHint() (t DeviceType, ok bool)
}

// Device is one piece of hardware (ggml_backend_device). Methods may be
// called from several goroutines.
type Device interface {
	// Name is unique in the process ("CPU", "OPENVINO0").
	Name() string
	// Description is for people (the CPU's model name, a GPU's name).
	Description() string
	// Memory is the device memory free and in total, in bytes; 0 when
	// unknown.
	Memory() (free, total uint64)
	// Type is the device's kind.
	Type() DeviceType
	// Props gathers name, description, memory, type and caps.
	Props() Props
	// BufferType is the device's default buffer type, or nil for a
	// device that cannot be used.
	BufferType() buffer.Type
	// SupportsOp reports whether the device computes t (its operation,
	// types, shapes and parameters).
	SupportsOp(t *graph.Tensor) bool
	// SupportsBufferType reports whether the device's backends can read
	// and write tensors in buffers of bt.
	SupportsBufferType(bt buffer.Type) bool
	// OffloadOp reports whether t, whose weights are in host memory,
	// is still worth computing here (a GPU for a large batch); the
	// scheduler asks when offloading is on.
	OffloadOp(t *graph.Tensor) bool
	// Init starts a backend on the device. Options a device does not
	// use are ignored.
	Init(opts Options) (Backend, error)
}

// HostBufferTyper is a Device with a host buffer type the device reads
// fast (pinned memory), used for inputs and outputs copied to and from it
// (ggml_backend_dev_host_buffer_type).
type HostBufferTyper interface {
	HostBufferType() buffer.Type
}

// ExtraBufferTyper is a Device with buffer types beside its default one
// for weights it computes with faster, such as the CPU's repacked layouts
// (ggml_backend_dev_get_extra_bufts, found through the registry's proc
// address in ggml). A weight belongs there only if the device supports
// the operations using it while it is placed there (SupportsOp with the
// tensor in such a buffer), as llama.cpp checks before placing it.
type ExtraBufferTyper interface {
	ExtraBufferTypes() []buffer.Type
}

// HostMemoryBufferer is a Device that can use caller memory (a mapped
// model file) as a buffer without copying it
// (ggml_backend_dev_buffer_from_host_ptr). maxTensorSize is the largest
// tensor that will be placed in it.
type HostMemoryBufferer interface {
	BufferFromHostMemory(mem []byte, maxTensorSize uint64) (buffer.Buffer, error)
}

// EventCreator is a Device with events (ggml_backend_event_new).
type EventCreator interface {
	NewEvent() (Event, error)
}

// Event marks a point in a backend's stream of work
// (ggml_backend_event).
type Event interface {
	// Record marks the point reached so far by b's queued work.
	Record(b Backend) error
	// Wait makes b's later work wait, on the device, for the recorded
	// point; the host does not block.
	Wait(b Backend) error
	// Synchronize blocks the host until the recorded point is reached.
	Synchronize() error
	// Free releases the event.
	Free() error
}

// Backend is a stream of work on a device (ggml_backend). A Backend is
// used by one goroutine at a time.
//
// # Devices that are not the host
//
// When the device's Caps.Async is set, SetTensorAsync, GetTensorAsync,
// GraphCompute, TensorCopier's CopyTensorAsync and Event's Record and Wait
// may queue their work and return before it is done. Queued work runs in
// the order it was queued; Synchronize waits for all of it. Callers and
// devices keep to these rules (a synchronous device finishes each call
// before returning, which satisfies them all):
//
//   - Data given to SetTensorAsync stays the caller's to keep unchanged
//     until Synchronize returns; the backend must not use it after. Memory
//     given to GetTensorAsync is written by the time Synchronize returns
//     and must not be read before.
//   - GraphCompute takes from the graph, before it returns, everything the
//     queued work needs: the nodes and their order, each tensor's type,
//     shape, strides, operation, parameters and sources, and where its
//     memory is (buffer.Locate). As soon as GraphCompute returns the
//     caller may change the Graph and its Tensors: a scheduler's Reset and
//     AllocGraph rewrite Buffer, Data, Src and ViewSrc for the next graph
//     while the device may still be computing this one. (A scheduler
//     computing its placed graph again says the opposite, that nothing
//     changed since, through PlacedGraphComputer.) The same holds for
//     the tensor given to SetTensorAsync, GetTensorAsync and
//     CopyTensorAsync: queued work must not read a *graph.Tensor's fields
//     later than the call that queued it.
//   - The memory (the contents of the buffers the graph's tensors are in)
//     stays the device's until Synchronize: the caller does not free or
//     reset those buffers, nor reads or writes tensors in them except
//     through this backend, before then.
//   - A device finds where a tensor lies in its memory with
//     buffer.Locate(t) (the Storage behind the tensor's buffer and the
//     tensor's byte offset), at the time of the call, instead of keeping a
//     map of its own: allocators place tensors anew after each Reset.
//   - Errors found when a call is made (a bad argument, a tensor outside
//     the device's memory, an operation the device refuses, a closed
//     backend) are returned by the call; errors met while queued work runs
//     are returned by the next Synchronize, which then starts afresh.
//     Work queued after a failed step may be skipped.
//   - Close waits for queued work, as Synchronize does.
//
// Whatever layout a device keeps its memory in (repacked weights, say),
// what SetTensorAsync sets is what GetTensorAsync and buffer.GetTensor get
// back. internal/testkit/devtest is a fake device that keeps to all of this, and
// internal/testkit/optest's RunDevice checks a device against it.
type Backend interface {
	// Name identifies the backend (usually its device's name).
	Name() string
	// Device is the device the backend runs on.
	Device() Device
	// SetTensorAsync copies data into t from byte offset of t.
	SetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error
	// GetTensorAsync copies t from byte offset into data.
	GetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error
	// Synchronize waits for every queued operation and returns the first
	// error one of them met.
	Synchronize() error
	// GraphCompute computes g's nodes, whose memory is in buffers the
	// device supports; asynchronously when Caps.Async is set.
	GraphCompute(g *graph.Graph) error
	// Close waits for queued work and releases the backend.
	Close() error
}

// TensorCopier is a Backend that copies a tensor from another backend's
// memory into its own without going through the host
// (ggml_backend_tensor_copy_async's cpy_tensor_async). It returns an error
// wrapping ErrUnsupported for pairs it cannot handle.
type TensorCopier interface {
	CopyTensorAsync(from Backend, src, dst *graph.Tensor) error
}

// GraphPlan is a graph prepared for repeated computation.
type GraphPlan interface {
	// Compute computes the planned graph.
	Compute() error
	// Update points the plan at g, a graph of the same shape with new
	// tensors (ggml's graph_plan_update).
	Update(g *graph.Graph) error
	// Free releases the plan.
	Free() error
}

// GraphPlanner is a Backend that prepares graphs for repeated computation
// (ggml_backend_graph_plan_create).
type GraphPlanner interface {
	GraphPlan(g *graph.Graph) (GraphPlan, error)
}

// GraphOptimizer is a Backend that reorders a graph's nodes for the device
// before it is split and computed (ggml's graph_optimize); the result must
// compute the same values.
type GraphOptimizer interface {
	GraphOptimize(g *graph.Graph) error
}

// PlacementID names one split graph of one placement by a Scheduler (one
// AllocGraph) in the promise PlacedGraphComputer takes. IDs are unique in
// the process and never reused; 0 names none.
type PlacementID uint64

// PlacedGraphComputer is a Backend that can trust its caller that a graph
// it computes again is the graph it computed before, unchanged, and so
// skip checking it: the Scheduler computing the graph it placed, which
// ggml's contract forbids changing after allocation. A device that
// prepares a graph once (a compiled model bound to the tensors' memory)
// otherwise has to compare every tensor of the graph with what it
// prepared from, on every compute, because GraphCompute lets a caller
// change any field of any tensor between two calls.
//
// GraphComputePlaced(g, id) is GraphCompute(g) with the caller's promise,
// named by id, that holds from the first call with id to the last:
//
//   - every call with id passes the same *graph.Graph g;
//   - g.Nodes is the same slice (length and elements), and no field of a
//     node or of a tensor reachable from one through Src and ViewSrc
//     changes: type, shape, strides, operation, parameters, flags,
//     sources, view source and offset, name, Buffer, Data and Extra;
//   - the buffers those tensors lie in are neither freed nor reset.
//
// What may change between the calls is the contents of that memory: graph
// inputs written by SetTensor, the copies a scheduler fills from other
// backends, the nodes' results, and weights set again (a device notices
// that as between any two GraphCompute calls: by what its buffers' own
// SetTensor records, never by the promise). The first call with an id is
// checked as GraphCompute checks it; with a promise the backend may take
// the later ones as that graph without reading it, so a broken promise
// gives wrong results (memory bound where a tensor used to be), not an
// error. On an Async device the promise covers what GraphCompute would
// take from the graph before returning. A backend may ignore the id and
// compute as GraphCompute does.
type PlacedGraphComputer interface {
	GraphComputePlaced(g *graph.Graph, id PlacementID) error
}

// Compute runs g on b and waits for it (ggml_backend_graph_compute).
func Compute(b Backend, g *graph.Graph) error {
	if err := b.GraphCompute(g); err != nil {
		return err
	}
	return b.Synchronize()
}

// CopyTensorAsync copies src, computed on from, into dst on to
// (ggml_backend_tensor_copy_async): by to's own copy when it has one, else
// by waiting for both backends and copying through the host. src and dst
// need the same layout.
func CopyTensorAsync(from, to Backend, src, dst *graph.Tensor) error {
	if c, ok := to.(TensorCopier); ok {
		err := c.CopyTensorAsync(from, src, dst)
		if !errors.Is(err, ErrUnsupported) {
			return err
		}
	}
	if err := from.Synchronize(); err != nil {
		return err
	}
	if err := to.Synchronize(); err != nil {
		return err
	}
	return buffer.CopyTensor(src, dst)
}
