package device

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// Backend is a stream of work on the example device. Every call finishes
// before it returns, which keeps all of backend.Backend's async rules:
// nothing is queued, so Synchronize has nothing to wait for, and no
// *graph.Tensor is read after the call that was given it.
type Backend struct {
	dev    *Device
	mu     sync.Mutex
	closed bool
}

// Name is the device's name.
func (b *Backend) Name() string { return b.dev.Name() }

// Device is the example device.
func (b *Backend) Device() backend.Device { return b.dev }

// SetTensorAsync copies data into t (at once: the device is synchronous).
func (b *Backend) SetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	if err := b.check(); err != nil {
		return err
	}
	return buffer.SetTensor(t, data, offset)
}

// GetTensorAsync copies t into data (at once).
func (b *Backend) GetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	if err := b.check(); err != nil {
		return err
	}
	return buffer.GetTensor(t, data, offset)
}

// Synchronize has nothing to wait for.
func (b *Backend) Synchronize() error { return b.check() }

// Close releases the backend; later calls fail with backend.ErrClosed.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

func (b *Backend) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("%w: %s", backend.ErrClosed, b.Name())
	}
	return nil
}

// GraphCompute computes g's nodes in order. A node the device does not
// support is an error of this call (the scheduler never sends one; a
// caller that does must hear of it).
func (b *Backend) GraphCompute(g *graph.Graph) error {
	if err := b.check(); err != nil {
		return err
	}
	for _, n := range g.Nodes {
		if n.Op == ops.None || n.Op.IsView() || n.IsEmpty() {
			continue
		}
		if !b.dev.SupportsOp(n) {
			return fmt.Errorf("%w: %s does not compute %s %s %v", backend.ErrUnsupported, b.Name(), n.OpDesc(), n.Type, n.Ne)
		}
		if err := compute(n); err != nil {
			return fmt.Errorf("%s: %s %s: %w", b.Name(), n.OpDesc(), n.Name, err)
		}
	}
	return nil
}

// compute runs one node: it reads the sources out of device memory,
// computes on the host, and writes the result back. A real device runs
// its own kernel here instead, on memory it found with buffer.Locate.
func compute(n *graph.Tensor) error {
	a, err := load(n.Src[0])
	if err != nil {
		return err
	}
	out := make([]float32, n.NElements())
	switch n.Op {
	case ops.Scale:
		p := ops.ScaleParamsOf(n.Params)
		for i, x := range a {
			out[i] = x*p.Scale + p.Bias
		}
	case ops.Add, ops.Mul:
		src1 := n.Src[1]
		bv, err := load(src1)
		if err != nil {
			return err
		}
		add := n.Op == ops.Add
		forEach(n.Ne, func(i int, idx [graph.MaxDims]int64) {
			var j int64 // b's element at idx, repeated
			for d := graph.MaxDims - 1; d >= 0; d-- {
				j = j*src1.Ne[d] + idx[d]%src1.Ne[d]
			}
			if add {
				out[i] = a[i] + bv[j]
			} else {
				out[i] = a[i] * bv[j]
			}
		})
	case ops.MulMat:
		src0, src1 := n.Src[0], n.Src[1]
		bv, err := load(src1)
		if err != nil {
			return err
		}
		k, m, nn := src0.Ne[0], src0.Ne[1], src1.Ne[1]
		r2, r3 := src1.Ne[2]/src0.Ne[2], src1.Ne[3]/src0.Ne[3]
		forEach(n.Ne, func(i int, idx [graph.MaxDims]int64) {
			row := ((idx[3]/r3*src0.Ne[2]+idx[2]/r2)*m + idx[0]) * k
			col := ((idx[3]*src1.Ne[2]+idx[2])*nn + idx[1]) * k
			var sum float64
			for x := range k {
				sum += float64(a[row+x]) * float64(bv[col+x])
			}
			out[i] = float32(sum)
		})
	default:
		return fmt.Errorf("%w: no kernel", backend.ErrUnsupported)
	}
	return store(n, out)
}

// forEach calls f for every element of a tensor of shape ne, in memory
// order of a contiguous one: i is the element's position, idx its index.
func forEach(ne [graph.MaxDims]int64, f func(i int, idx [graph.MaxDims]int64)) {
	i := 0
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			for i1 := range ne[1] {
				for i0 := range ne[0] {
					f(i, [graph.MaxDims]int64{i0, i1, i2, i3})
					i++
				}
			}
		}
	}
}

// offset is the byte offset of element idx of t from its first byte.
func offset(t *graph.Tensor, idx [graph.MaxDims]int64) uint64 {
	var o uint64
	for d := range graph.MaxDims {
		o += uint64(idx[d]) * t.Nb[d]
	}
	return o
}

// load reads t's elements, following its strides (a permuted or
// transposed view is read as the shape it has), into a contiguous slice.
func load(t *graph.Tensor) ([]float32, error) {
	raw := make([]byte, t.NBytes())
	if err := buffer.GetTensor(t, raw, 0); err != nil {
		return nil, err
	}
	v := make([]float32, t.NElements())
	forEach(t.Ne, func(i int, idx [graph.MaxDims]int64) {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[offset(t, idx):]))
	})
	return v, nil
}

// store writes v into t's elements, following its strides; the bytes
// between them (when t views part of a larger tensor) keep their values.
func store(t *graph.Tensor, v []float32) error {
	raw := make([]byte, t.NBytes())
	if !t.IsContiguous() {
		if err := buffer.GetTensor(t, raw, 0); err != nil {
			return err
		}
	}
	forEach(t.Ne, func(i int, idx [graph.MaxDims]int64) {
		binary.LittleEndian.PutUint32(raw[offset(t, idx):], math.Float32bits(v[i]))
	})
	return buffer.SetTensor(t, raw, 0)
}
