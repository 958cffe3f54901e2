package buffer

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/mmap"
)

// TensorAlignment is the alignment of tensors in CPU buffers, ggml's
// TENSOR_ALIGNMENT.
const TensorAlignment = 32

// HostType is a buffer type of host memory outside the Go heap: mmap'd on
// unix, VirtualAlloc'd on windows, zeroed. Tensors placed in its buffers
// get Tensor.Data. CPU is the CPU device's; devices whose memory the CPU
// addresses (pinned host buffers) make their own with NewHostType.
type HostType struct {
	name, device string
	alignment    uint64
	maxSize      uint64
}

var (
	cpuType       = &HostType{name: "CPU", device: "CPU", alignment: TensorAlignment, maxSize: math.MaxUint64}
	cpuMappedType = &HostType{name: "CPU_Mapped", device: "CPU", alignment: TensorAlignment, maxSize: math.MaxUint64}
)

// CPU is the CPU buffer type (ggml_backend_cpu_buffer_type): host memory
// aligned to TensorAlignment, with no size limit but the host's.
func CPU() *HostType { return cpuType }

// NewHostType returns a host buffer type named name, belonging to device,
// whose tensors are aligned to alignment (a power of two) and whose buffers
// hold at most maxSize bytes.
func NewHostType(name, device string, alignment, maxSize uint64) (*HostType, error) {
	if alignment == 0 || alignment&(alignment-1) != 0 {
		return nil, fmt.Errorf("%w: alignment %d is not a power of two", ErrArgument, alignment)
	}
	if maxSize == 0 {
		return nil, fmt.Errorf("%w: maximum buffer size 0", ErrArgument)
	}
	return &HostType{name: name, device: device, alignment: alignment, maxSize: maxSize}, nil
}

// Name is the type's name ("CPU").
func (h *HostType) Name() string { return h.name }

// Alignment is the alignment of every tensor.
func (h *HostType) Alignment() uint64 { return h.alignment }

// MaxSize is the largest buffer Alloc returns.
func (h *HostType) MaxSize() uint64 { return h.maxSize }

// AllocSize is t.NBytes(): host memory needs no padding.
func (h *HostType) AllocSize(t *graph.Tensor) uint64 {
	n, err := tensorBytes(t)
	if err != nil {
		return 0
	}
	return n
}

// IsHost is true.
func (h *HostType) IsHost() bool { return true }

// DeviceName is the device the type belongs to.
func (h *HostType) DeviceName() string { return h.device }

// Alloc maps size bytes of zeroed host memory.
func (h *HostType) Alloc(size uint64) (Buffer, error) {
	if size > h.maxSize {
		return nil, fmt.Errorf("%w: %d bytes, %s buffers hold at most %d", ErrTooLarge, size, h.name, h.maxSize)
	}
	if size == 0 {
		return New(h, &hostMemory{}, 0)
	}
	mem, mapping, err := mmap.Anon(size, h.alignment)
	if errors.Is(err, mmap.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	if err != nil {
		return nil, fmt.Errorf("buffer: %w", err)
	}
	return New(h, &hostMemory{mem: mem, mapping: mapping}, size)
}

// FromBytes wraps caller memory in a CPU buffer (ggml_backend_cpu_buffer_from_ptr,
// type "CPU_Mapped"): tensors placed in it use mem directly, and Free does
// not release it. mem must start at a multiple of TensorAlignment, and
// stay valid, and not be moved, while the buffer is in use: memory outside
// the Go heap (a mapped file, memory from a native library) or a Go slice
// the caller keeps.
func FromBytes(mem []byte) (Buffer, error) {
	if len(mem) > 0 && uintptr(unsafe.Pointer(&mem[0]))%TensorAlignment != 0 {
		return nil, fmt.Errorf("%w: memory at %p is not aligned to %d", ErrMisaligned, &mem[0], TensorAlignment)
	}
	return New(cpuMappedType, &hostMemory{mem: mem}, uint64(len(mem)))
}

// hostMemory is HostStorage over mem; mapping, when set, is the mapping
// mem lies in, released by Release.
type hostMemory struct {
	mem, mapping []byte
	once         sync.Once
}

func (m *hostMemory) Bytes() []byte { return m.mem }

func (m *hostMemory) Base() uintptr { return BytesBase(m.mem) }

// BytesBase is the address of mem's first byte, 0 for empty memory: the
// Base of a HostStorage over mem.
func BytesBase(mem []byte) uintptr {
	if len(mem) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&mem[0]))
}

func (m *hostMemory) Release() error {
	var err error
	m.once.Do(func() {
		if m.mapping != nil {
			if err = mmap.Unmap(m.mapping); err != nil {
				err = fmt.Errorf("buffer: %w", err)
			}
		}
		m.mem, m.mapping = nil, nil
	})
	return err
}

// alignUp rounds n up to a multiple of align, a power of two.
func alignUp(n, align uint64) uint64 { return (n + align - 1) &^ (align - 1) }

// alignPad is how many bytes after address base+offset the next multiple
// of align starts.
func alignPad(base uintptr, offset, align uint64) uint64 {
	return (align - (uint64(base)+offset)%align) % align
}
