package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/block"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Setup says where a table's figures run: ours on the device named Device
// ("" is the CPU), ggml from Lib (nil: ours alone) with its threads kept
// as Pool says.
type Setup struct {
	Device string
	Lib    *ggmlref.Lib
	Pool   ggmlref.Threadpool
	// Repack places the weights (the src0 of every MUL_MAT) in an extra
	// buffer type on both sides where it takes them: ours through the
	// device's ExtraBufferTypes, ggml's in CPU_REPACK. The figure's name
	// says which side kept plain weights.
	Repack bool
}

// Case is a figure ready to measure; Close frees both sides.
type Case struct {
	Figure
	Close func()
}

// Graph makes the figure for workload w computed with threads threads,
// our side on s.Device and ggml's through the mirror.
func (s Setup) Graph(name string, threads, ops int, w Workload) (c Case, err error) {
	var closers []func()
	c.Close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	dev, err := OpenDevice(s.Device, threads)
	if err != nil {
		return c, err
	}
	closers = append(closers, func() { _ = dev.Close() })
	ours, err := dev.LoadWith(w, s.Repack)
	if err != nil {
		return c, fmt.Errorf("%s on %s: %w", name, dev.Name(), err)
	}
	closers = append(closers, func() { _ = ours.Close() })
	if s.Repack {
		name += " repacked"
		if len(ours.Repacked) == 0 {
			name += " (ours plain)"
		}
	}
	c.Figure = Figure{Name: name, Threads: threads, Ops: ops, Ours: ours.Compute}
	if s.Lib == nil {
		return c, nil
	}
	e, err := mirror.NewPool(s.Lib, threads, s.Pool)
	if err != nil {
		return c, err
	}
	closers = append(closers, e.Close)
	g, err := w.Build(graph.NewContext(graph.ContextOptions{Alloc: true}))
	if err != nil {
		return c, err
	}
	for _, t := range g.Leafs {
		if t.ViewSrc != nil {
			continue
		}
		data, err := w.Data(t)
		if err != nil {
			return c, fmt.Errorf("%s: %w", t.Name, err)
		}
		copy(t.Data, data)
	}
	var ref *mirror.Loaded
	if s.Repack {
		var placed []*graph.Tensor
		ref, placed, err = e.LoadRepacked(g, mulMatWeights(g))
		if err == nil && len(placed) == 0 {
			c.Name += " (ggml plain)"
		}
	} else {
		ref, err = e.Load(g)
	}
	if err != nil {
		return c, fmt.Errorf("%s on ggml: %w", name, err)
	}
	c.Ref = ref.Compute
	return c, nil
}

// mulMatWeights are the leafs of g that are the src0 of a MUL_MAT.
func mulMatWeights(g *graph.Graph) []*graph.Tensor {
	var ws []*graph.Tensor
	for _, n := range g.Nodes {
		if w := n.Src[0]; n.Op == ops.MulMat && w != nil && w.Op == ops.None && !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	return ws
}

// MatMulK and MatMulM are the weight matrix's sizes in the matmul figures.
const (
	MatMulK = 4096
	MatMulM = 4096
)

// MatMul is MUL_MAT of a MatMulK x MatMulM weight of type t by n F32
// columns: the weights from the LCG of ggml-reference.md section 3.1
// (w = ((s>>8)/2^24 - 0.5) * 0.2) quantized to t, the activations
// x[i] = sin(0.01 i).
func MatMul(t quant.Type, n int) Workload { return MatMulShape(t, MatMulK, MatMulM, n) }

// MatMulShape is MatMul with a k x m weight (k elements a row, m rows): a
// real model's shapes, such as SmolLM2's 576 x 1536 or its 576 x 49152
// output, where rows are short and per-row costs count.
func MatMulShape(t quant.Type, k, m, n int) Workload {
	return Workload{
		Build: func(c *graph.Context) (*graph.Graph, error) {
			w := c.SetName(c.NewTensor(t, int64(k), int64(m)), "w")
			x := c.SetName(c.NewTensor(quant.F32, int64(k), int64(n)), "x")
			return c.Build(c.MulMat(w, x))
		},
		Data: func(tn *graph.Tensor) ([]byte, error) {
			if tn.Name == "w" {
				return matMulWeights(t, k, m)
			}
			x := make([]float32, tn.NElements())
			for i := range x {
				x[i] = float32(math.Sin(0.01 * float64(i)))
			}
			return quant.F32Bytes(x), nil
		},
	}
}

var weights struct {
	sync.Mutex
	t    quant.Type
	k, m int
	data []byte
}

// matMulWeights quantizes k*m LCG weights to t, keeping the last type and
// shape's (a table runs all of one type's figures in a row).
func matMulWeights(t quant.Type, k, m int) ([]byte, error) {
	weights.Lock()
	defer weights.Unlock()
	if weights.data != nil && weights.t == t && weights.k == k && weights.m == m {
		return weights.data, nil
	}
	data, err := quant.Quantize(t, lcgWeights(k*m), m, k, nil)
	if err != nil {
		return nil, err
	}
	weights.t, weights.k, weights.m, weights.data = t, k, m, data
	return data, nil
}

// lcgWeights are ggml-reference.md's benchmark weights.
func lcgWeights(n int) []float32 {
	w := make([]float32, n)
	s := uint32(1)
	for i := range w {
		s = s*1664525 + 1013904223
		w[i] = (float32(s>>8)/(1<<24) - 0.5) * 0.2
	}
	return w
}

// DispatchOps is the length of the dispatch figure's chain.
const DispatchOps = 1000

// Dispatch is ggml-reference.md's dispatch graph: a chain of DispatchOps
// ADDs on F32 tensors of elems values (16 there), cur = cur + b from
// all-ones a and b. With few elements it measures what running an
// operation costs; with a few thousand, also what splitting one across
// threads costs.
func Dispatch(elems int) Workload {
	return Workload{
		Build: func(c *graph.Context) (*graph.Graph, error) {
			cur := c.SetName(c.NewTensor(quant.F32, int64(elems)), "a")
			b := c.SetName(c.NewTensor(quant.F32, int64(elems)), "b")
			for range DispatchOps {
				cur = c.Add(cur, b)
			}
			return c.Build(cur)
		},
		Data: func(t *graph.Tensor) ([]byte, error) {
			ones := make([]float32, t.NElements())
			for i := range ones {
				ones[i] = 1
			}
			return quant.F32Bytes(ones), nil
		},
	}
}

// Demo is the demo's decoder block with dims d.
func Demo(d block.Dims, seed uint64) Workload {
	return Workload{
		Build: func(c *graph.Context) (*graph.Graph, error) {
			leaf := func(name string, typ quant.Type, ne ...int64) *graph.Tensor {
				return c.SetName(c.NewTensor(typ, ne...), name)
			}
			g, _, _, err := block.BuildLayers(c, d, 1, leaf)
			return g, err
		},
		Data: func(t *graph.Tensor) ([]byte, error) { return block.Data(t, d, seed) },
	}
}

// QuantRows and QuantCols are the quantization figures' input: 16 MiB of
// the LCG weights, as ggml-reference.md section 3.3.
const (
	QuantRows = 1024
	QuantCols = 4096
)

// Quantize makes the figure of quantizing the LCG weights to t: ours with
// quant.QuantizeInto against ggml_quantize_chunk, or for the activation
// formats (activation true: Q8_0, Q8_1, Q8_K) the CPU device's from_float
// (cpu.FromFloat: its assembly unless the generic kernels are selected)
// against the CPU backend's from_float. Both write the same bytes (the quant tests
// check it); the figure compares their speed.
func (s Setup) Quantize(t quant.Type, activation bool) (Case, error) {
	src := lcgWeights(QuantRows * QuantCols)
	size, err := quant.QuantizedSize(t, QuantRows, QuantCols)
	if err != nil {
		return Case{}, err
	}
	if activation {
		if t != quant.Q8_0 && t != quant.Q8_1 && t != quant.Q8_K {
			return Case{}, fmt.Errorf("%s is not an activation format", t)
		}
		if size, err = quant.QuantizedSize(t, 1, len(src)); err != nil {
			return Case{}, err
		}
	}
	ours, theirs := make([]byte, size), make([]byte, size)
	c := Case{Close: func() {}}
	c.Threads = 1
	if activation {
		c.Name = "from_float " + t.String()
		c.Ours = func() error { return cpu.FromFloat(cpu.Options{}, t, ours, src) }
		if s.Lib != nil {
			c.Ref = func() error { return s.Lib.FromFloatCPUInto(theirs, uint32(t), src) }
		}
		return c, nil
	}
	if !t.CanQuantize() {
		return Case{}, errors.New("no quantizer for " + t.String())
	}
	c.Name = "quantize " + t.String()
	c.Ours = func() error { _, err := quant.QuantizeInto(ours, t, src, QuantRows, QuantCols, nil); return err }
	if s.Lib != nil {
		c.Ref = func() error { return s.Lib.QuantizeChunkInto(theirs, uint32(t), src, QuantRows, QuantCols, nil) }
	}
	return c, nil
}
