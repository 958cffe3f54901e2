package buffer

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ggml-go/ggml/graph"
)

// Multi is several buffers used as one (ggml's multi-buffer), as an
// allocator returns them when a type's MaxSize forces a split. Tensors are
// placed in the parts, and point at them; Multi's tensor methods forward to
// the part holding the tensor, and its usage, Clear, Reset and Free apply
// to every part.
type Multi struct {
	parts []Buffer
	size  uint64

	mu    sync.Mutex
	usage Usage
	freed bool
}

// NewMulti groups parts, which must not be empty, into one buffer. The
// Multi owns them: its Free frees them.
func NewMulti(parts ...Buffer) (*Multi, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: a multi-buffer of no buffers", ErrArgument)
	}
	m := &Multi{parts: parts}
	for _, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("%w: nil part", ErrArgument)
		}
		m.size += p.Size()
	}
	return m, nil
}

// Parts are the buffers, in order.
func (m *Multi) Parts() []Buffer { return m.parts }

// Name is the first part's name.
func (m *Multi) Name() string { return m.parts[0].Name() }

// IsHost is the first part's.
func (m *Multi) IsHost() bool { return m.parts[0].IsHost() }

// Type is the first part's type.
func (m *Multi) Type() Type { return m.parts[0].Type() }

// Base is 0: the parts are separate allocations.
func (m *Multi) Base() uintptr { return 0 }

// Size is the parts' total size.
func (m *Multi) Size() uint64 { return m.size }

// Usage is what SetUsage recorded.
func (m *Multi) Usage() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage
}

// SetUsage sets the usage of every part.
func (m *Multi) SetUsage(u Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.usage = u
	for _, p := range m.parts {
		p.SetUsage(u)
	}
}

// AllocTensor is not supported: a tensor is placed in one of the parts.
func (m *Multi) AllocTensor(t *graph.Tensor, offset uint64) error {
	return fmt.Errorf("%w: placing %s in a multi-buffer; place it in one of its parts", ErrUnsupported, t)
}

// part returns the part holding t's memory.
func (m *Multi) part(t *graph.Tensor) (Buffer, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	b, err := Of(t)
	if err != nil {
		return nil, err
	}
	for _, p := range m.parts {
		if b == p {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: %s is not in any part of the multi-buffer", ErrNotPlaced, t)
}

func (m *Multi) check() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return fmt.Errorf("%w: multi-buffer", ErrFreed)
	}
	return nil
}

// InitView initializes view t in the part holding its source.
func (m *Multi) InitView(t *graph.Tensor) error {
	p, err := m.part(t)
	if err != nil {
		return err
	}
	return p.InitView(t)
}

// SetTensor forwards to t's part.
func (m *Multi) SetTensor(t *graph.Tensor, data []byte, offset uint64) error {
	p, err := m.part(t)
	if err != nil {
		return err
	}
	return p.SetTensor(t, data, offset)
}

// GetTensor forwards to t's part.
func (m *Multi) GetTensor(t *graph.Tensor, data []byte, offset uint64) error {
	p, err := m.part(t)
	if err != nil {
		return err
	}
	return p.GetTensor(t, data, offset)
}

// SetTensor2D forwards to t's part.
func (m *Multi) SetTensor2D(t *graph.Tensor, data []byte, offset, size, n, strideTensor, strideData uint64) error {
	p, err := m.part(t)
	if err != nil {
		return err
	}
	return p.SetTensor2D(t, data, offset, size, n, strideTensor, strideData)
}

// GetTensor2D forwards to t's part.
func (m *Multi) GetTensor2D(t *graph.Tensor, data []byte, offset, size, n, strideTensor, strideData uint64) error {
	p, err := m.part(t)
	if err != nil {
		return err
	}
	return p.GetTensor2D(t, data, offset, size, n, strideTensor, strideData)
}

// MemsetTensor forwards to t's part.
func (m *Multi) MemsetTensor(t *graph.Tensor, value byte, offset, size uint64) error {
	p, err := m.part(t)
	if err != nil {
		return err
	}
	return p.MemsetTensor(t, value, offset, size)
}

// CopyTensor forwards to dst's part.
func (m *Multi) CopyTensor(src, dst *graph.Tensor) error {
	p, err := m.part(dst)
	if err != nil {
		return err
	}
	return p.CopyTensor(src, dst)
}

// Clear clears every part.
func (m *Multi) Clear(value byte) error {
	return m.each(func(p Buffer) error { return p.Clear(value) })
}

// Reset resets every part.
func (m *Multi) Reset() error { return m.each(Buffer.Reset) }

// Free frees every part.
func (m *Multi) Free() error {
	m.mu.Lock()
	if m.freed {
		m.mu.Unlock()
		return fmt.Errorf("%w: multi-buffer", ErrFreed)
	}
	m.freed = true
	m.mu.Unlock()
	var errs []error
	for _, p := range m.parts {
		errs = append(errs, p.Free())
	}
	return errors.Join(errs...)
}

func (m *Multi) each(fn func(Buffer) error) error {
	if err := m.check(); err != nil {
		return err
	}
	var errs []error
	for _, p := range m.parts {
		errs = append(errs, fn(p))
	}
	return errors.Join(errs...)
}
