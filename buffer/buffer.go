// Package buffer holds the memory tensors live in: buffer types (Type, what
// a device can allocate), buffers (Buffer, one allocation and the tensors
// placed in it), host memory outside the Go heap, and the two allocators of
// ggml-alloc: TensorAllocator places tensors one after another, and
// GraphAllocator plans a graph's intermediates so that tensors whose lives
// do not overlap share memory.
//
// It follows ggml's ggml_backend_buffer_type / ggml_backend_buffer and
// ggml_tallocr / ggml_gallocr, with errors where ggml asserts: a bad offset,
// a range outside a tensor or a buffer, a tensor placed twice, a freed
// buffer. A device implements Type and backs its buffers with a Storage;
// New wraps a Storage in a Buffer that does every check, so device code
// only moves bytes.
//
// Memory lifetime: a tensor placed in a host buffer gets Tensor.Data, a
// slice of the buffer's memory, which lies outside the Go heap. After the
// buffer's Free (or Reset) that memory is gone or reused: the buffer sets
// Data to nil on the tensors it placed, but copies of the slice, and views
// built after placement, must not be used any more. A buffer that becomes
// unreachable is freed by the garbage collector as a safety net, so keep
// the buffer (or a tensor placed in it) reachable while using its memory.
package buffer

import (
	"errors"
	"fmt"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/sentinel"
)

// Errors returned by buffers and allocators. They are wrapped with
// details; test them with errors.Is.
var (
	// ErrFreed reports a buffer (or allocator) used after Free.
	ErrFreed = errors.New("buffer: already freed")
	// ErrOutOfBounds reports a range outside a tensor or a buffer.
	ErrOutOfBounds = errors.New("buffer: out of bounds")
	// ErrMisaligned reports an offset that breaks the buffer type's alignment.
	ErrMisaligned = errors.New("buffer: misaligned offset")
	// ErrNotPlaced reports a tensor that has no memory in the buffer.
	ErrNotPlaced = errors.New("buffer: tensor not placed in this buffer")
	// ErrPlaced reports a tensor that already has memory.
	ErrPlaced = errors.New("buffer: tensor already has memory")
	// ErrTooLarge reports an allocation larger than a buffer type allows
	// or than the host can provide.
	ErrTooLarge = errors.New("buffer: allocation too large")
	// ErrNoSpace reports a buffer too small for the tensors given to it.
	ErrNoSpace = errors.New("buffer: not enough space")
	// ErrNeedReserve reports a graph that does not fit a GraphAllocator's
	// plan when the allocator cannot plan again on its own (several buffer
	// types): call Reserve.
	ErrNeedReserve = errors.New("buffer: graph needs a new reserve")
	// ErrArgument reports an invalid argument: a bad tensor, layout,
	// alignment or buffer index.
	ErrArgument = errors.New("buffer: bad argument")
	// ErrUnsupported reports an operation a buffer does not provide.
	// errors.Is also matches it to errors.ErrUnsupported
	// (backend.ErrUnsupported).
	ErrUnsupported error = sentinel.New("buffer: unsupported operation", errors.ErrUnsupported)
)

// Usage says what a buffer holds, with ggml's values. Schedulers use it:
// an operation whose source sits in a WEIGHTS buffer goes to that buffer's
// device, and devices may repack weights as they are set.
type Usage int32

// Buffer usages.
const (
	UsageAny     Usage = 0
	UsageWeights Usage = 1
	UsageCompute Usage = 2
)

func (u Usage) String() string {
	switch u {
	case UsageAny:
		return "any"
	case UsageWeights:
		return "weights"
	case UsageCompute:
		return "compute"
	}
	return fmt.Sprintf("Usage(%d)", int32(u))
}

// Type is a kind of memory a device can allocate buffers of
// (ggml_backend_buffer_type). Implementations must be comparable (pointers,
// usually): allocators recognize a type used twice by ==.
type Type interface {
	// Name identifies the type ("CPU", "OPENVINO0_HOST").
	Name() string
	// Alloc returns a buffer of size bytes. A size of 0 gives a buffer
	// without memory, which can still hold empty tensors.
	Alloc(size uint64) (Buffer, error)
	// Alignment is the alignment of every tensor's first byte; a power
	// of two.
	Alignment() uint64
	// MaxSize is the largest buffer Alloc returns. Allocators split
	// larger needs over several buffers.
	MaxSize() uint64
	// AllocSize is the memory t needs in a buffer of this type: at least
	// t.NBytes(), more where the device pads or repacks.
	AllocSize(t *graph.Tensor) uint64
	// IsHost reports whether the CPU addresses the memory directly, with
	// ggml's tensor layout, so that placed tensors get Tensor.Data.
	IsHost() bool
	// DeviceName names the device the memory belongs to ("CPU"), or is
	// empty for memory no device owns.
	DeviceName() string
}

// TensorPlanner is a Type that decides itself how a list of tensors is
// spread over buffers, as ggml's alloc_buffer_n (the Hexagon backend keeps
// each layer's KV cache within one buffer). AllocContextTensors uses it
// when the type provides it.
type TensorPlanner interface {
	Type
	// AllocTensors places every tensor of ts without memory (and
	// initializes views of them) in new buffers, and returns them as one
	// Buffer (a Multi when there are several), or nil when none needs memory.
	AllocTensors(ts []*graph.Tensor) (Buffer, error)
	// TensorsSize is the total size of the buffers AllocTensors would allocate.
	TensorsSize(ts []*graph.Tensor) uint64
}

// Buffer is one allocation of a Type and the tensors placed in it
// (ggml_backend_buffer). Every method checks its arguments and returns an
// error rather than touch memory outside a tensor or the buffer; after Free
// every method but the accessors returns ErrFreed. Offsets and sizes are in
// bytes. Methods may be called from several goroutines. Implementations
// must be comparable (pointers, usually): tensors and allocators tell
// buffers apart by ==.
type Buffer interface {
	// Name (the type's name) and IsHost (the type's) make a Buffer a
	// graph.Buffer, which a tensor points at.
	graph.Buffer
	// Type is the buffer's type.
	Type() Type
	// Base is the address of the buffer's first byte (a device address
	// when the memory is not host memory; 0 for an empty buffer), for
	// alignment and for native libraries.
	Base() uintptr
	// Size is the buffer's size.
	Size() uint64
	// Usage is what the buffer holds, UsageAny until SetUsage.
	Usage() Usage
	// SetUsage records what the buffer holds.
	SetUsage(u Usage)

	// AllocTensor places t, which is not a view and has no memory yet,
	// at offset (ggml_backend_tensor_alloc): t.Buffer is set, t.Data too
	// for host memory, and the device initializes the tensor.
	AllocTensor(t *graph.Tensor, offset uint64) error
	// InitView gives view t the memory of its ViewSrc, placed in this
	// buffer, at t.ViewOffs (ggml_backend_view_init).
	InitView(t *graph.Tensor) error

	// SetTensor copies data into t's memory from byte offset of t.
	SetTensor(t *graph.Tensor, data []byte, offset uint64) error
	// GetTensor copies t's memory from byte offset of t into data.
	GetTensor(t *graph.Tensor, data []byte, offset uint64) error
	// SetTensor2D copies n blocks of size bytes: block i from
	// data[i*strideData:] to t's memory at offset+i*strideTensor.
	SetTensor2D(t *graph.Tensor, data []byte, offset, size, n, strideTensor, strideData uint64) error
	// GetTensor2D is the reverse of SetTensor2D.
	GetTensor2D(t *graph.Tensor, data []byte, offset, size, n, strideTensor, strideData uint64) error
	// MemsetTensor sets size bytes of t's memory from offset to value.
	MemsetTensor(t *graph.Tensor, value byte, offset, size uint64) error
	// CopyTensor copies src into dst, which is placed in this buffer and
	// has src's layout (type, shape and strides): by the device's own
	// copy when it has one, else through host memory.
	CopyTensor(src, dst *graph.Tensor) error

	// Clear sets every byte of the buffer to value.
	Clear(value byte) error
	// Reset forgets every tensor placed in the buffer, which an
	// allocator does before placing a graph again: their Buffer and Data
	// become nil, and the device drops its per-tensor state.
	Reset() error
	// Free releases the memory. Tensors placed in the buffer keep it as
	// their Buffer but lose their Data; using them is an error.
	Free() error
}

// Of returns the buffer holding t's memory: t's own, or its ViewSrc's for a
// view.
func Of(t *graph.Tensor) (Buffer, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil tensor", ErrArgument)
	}
	gb := t.Buffer
	if t.ViewSrc != nil {
		gb = t.ViewSrc.Buffer
	}
	if gb == nil {
		return nil, fmt.Errorf("%w: %s has no buffer", ErrNotPlaced, t)
	}
	b, ok := gb.(Buffer)
	if !ok {
		return nil, fmt.Errorf("%w: %s is in a %T, not a buffer.Buffer", ErrUnsupported, t, gb)
	}
	return b, nil
}

// SetTensor copies data into t's memory from byte offset of t, in whatever
// buffer t is placed (ggml_backend_tensor_set), and is done when it
// returns. Backend.SetTensorAsync is the same copy queued on a backend (for
// a device that overlaps copies with its work); backend.SetFloat32 writes a
// tensor's values converting them to its type.
func SetTensor(t *graph.Tensor, data []byte, offset uint64) error {
	b, err := Of(t)
	if err != nil {
		return err
	}
	return b.SetTensor(t, data, offset)
}

// GetTensor copies t's memory from byte offset of t into data, from
// whatever buffer t is placed in (ggml_backend_tensor_get). It does not
// wait for a backend still computing t: Synchronize it first, or use
// backend.GetFloat32, which does.
func GetTensor(t *graph.Tensor, data []byte, offset uint64) error {
	b, err := Of(t)
	if err != nil {
		return err
	}
	return b.GetTensor(t, data, offset)
}

// CopyTensor copies src into dst (ggml_backend_tensor_copy): both must have
// the same layout; dst must be placed in a buffer, src may also be a tensor
// with Go memory of its own (Data without a Buffer).
func CopyTensor(src, dst *graph.Tensor) error {
	b, err := Of(dst)
	if err != nil {
		return err
	}
	return b.CopyTensor(src, dst)
}

// Locator is a Buffer that says where a tensor's memory lies in it. Every
// buffer New returns is one.
type Locator interface {
	// Locate returns the Storage behind the buffer and the byte offset of
	// t's first byte in it (for a view, its source's place plus
	// ViewOffs), checking that t is placed in the buffer and that its
	// bytes lie within its source's memory.
	Locate(t *graph.Tensor) (Storage, uint64, error)
}

// Locate returns the Storage holding t's memory and the byte offset of t's
// first byte in it. A device computing on its own memory finds its
// operands this way, instead of keeping a map from tensors to places (the
// map would go stale when an allocator resets and places the tensors
// again).
func Locate(t *graph.Tensor) (Storage, uint64, error) {
	b, err := Of(t)
	if err != nil {
		return nil, 0, err
	}
	l, ok := b.(Locator)
	if !ok {
		return nil, 0, fmt.Errorf("%w: %T does not locate tensors", ErrUnsupported, b)
	}
	return l.Locate(t)
}

// Offset is the byte offset of t's first byte in the buffer holding it
// (see Locate).
func Offset(t *graph.Tensor) (uint64, error) {
	_, at, err := Locate(t)
	return at, err
}
