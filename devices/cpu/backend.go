package cpu

import (
	"fmt"
	"sync"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// cpuBackend is the CPU device's backend: synchronous, tensors in host
// buffers, graphs computed by an Engine it owns.
type cpuBackend struct {
	dev *device
	mu  sync.Mutex
	eng *Engine // nil after Close
}

func newBackend(d *device, threads int) *cpuBackend {
	return &cpuBackend{dev: d, eng: New(Options{Threads: threads})}
}

func (b *cpuBackend) Name() string           { return "CPU" }
func (b *cpuBackend) Device() backend.Device { return b.dev }

// Threads is the number of threads each operation is split across, 0 after
// Close.
func (b *cpuBackend) Threads() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eng == nil {
		return 0
	}
	return b.eng.Threads()
}

// SetThreads changes the thread count (ggml_backend_cpu_set_n_threads);
// 0 means GOMAXPROCS, and counts backend.CheckThreads refuses are errors.
func (b *cpuBackend) SetThreads(n int) error {
	if err := backend.CheckThreads(n); err != nil {
		return fmt.Errorf("cpu: SetThreads: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eng == nil {
		return b.errClosed()
	}
	b.eng.Close()
	b.eng = New(Options{Threads: n})
	return nil
}

func (b *cpuBackend) errClosed() error { return fmt.Errorf("%w: CPU backend", backend.ErrClosed) }

func (b *cpuBackend) open() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eng == nil {
		return b.errClosed()
	}
	return nil
}

// SetTensorAsync is synchronous: the CPU has no queue.
func (b *cpuBackend) SetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	if err := b.open(); err != nil {
		return err
	}
	return buffer.SetTensor(t, data, offset)
}

// GetTensorAsync is synchronous.
func (b *cpuBackend) GetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	if err := b.open(); err != nil {
		return err
	}
	return buffer.GetTensor(t, data, offset)
}

// Synchronize has nothing to wait for.
func (b *cpuBackend) Synchronize() error { return b.open() }

// GraphCompute computes g's nodes in order; every node and source needs
// host memory (Tensor.Data).
func (b *cpuBackend) GraphCompute(g *graph.Graph) error {
	if g == nil {
		return fmt.Errorf("%w: nil graph", backend.ErrArgument)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eng == nil {
		return b.errClosed()
	}
	return b.eng.Compute(g)
}

// Close stops the worker pool; closing twice is harmless.
func (b *cpuBackend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eng != nil {
		b.eng.Close()
		b.eng = nil
	}
	return nil
}
