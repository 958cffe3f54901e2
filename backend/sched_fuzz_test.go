package backend_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// fuzzBytes hands out the fuzz input a byte at a time, then zeros.
type fuzzBytes []byte

func (b *fuzzBytes) next() int {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return int(v)
}

// fuzzOps are the operations a fuzzed device may take: each fake device
// supports a subset, chosen by a mask.
var fuzzOps = []ops.Op{ops.Add, ops.Mul, ops.Sub, ops.Scale, ops.Sqr, ops.MulMat, ops.RMSNorm, ops.Unary, ops.Cpy, ops.Cont, ops.SumRows}

// fuzzGraph builds a random graph of F32 [8, rows] tensors from b: up to
// three inputs, two weights (w [8, 8] for MUL_MAT, v [8, rows]) placed in
// the memory of a backend b picks, and up to 24 nodes each reading earlier
// tensors (views and permutations among them); the last node and one
// other are outputs. It returns the graph, the inputs (given values before
// each computation) and the outputs.
func fuzzGraph(t *testing.T, b *fuzzBytes, backends []backend.Backend) (*graph.Graph, []*graph.Tensor, []*graph.Tensor, error) {
	c := graph.NewContext(graph.ContextOptions{})
	rows := int64(1 + b.next()%3)
	nIn := 1 + b.next()%3
	var live, inputs []*graph.Tensor
	for range nIn {
		x := graph.SetInput(c.NewTensor(quant.F32, 8, rows))
		live = append(live, x)
		inputs = append(inputs, x)
	}
	w, v := c.NewTensor(quant.F32, 8, 8), c.NewTensor(quant.F32, 8, rows)
	for k, x := range []*graph.Tensor{w, v} {
		bt := backends[b.next()%len(backends)].Device().BufferType()
		buf, err := bt.Alloc(bt.AllocSize(x))
		require.NoError(t, err)
		t.Cleanup(func() { buf.Free() })
		require.NoError(t, buf.AllocTensor(x, 0))
		require.NoError(t, backend.SetFloat32(nil, x, fuzzValues(100+k, x.NElements())))
	}
	live = append(live, v)
	pick := func() *graph.Tensor { return live[b.next()%len(live)] }
	nNodes := 1 + b.next()%24
	for range nNodes {
		a := pick()
		var y *graph.Tensor
		switch b.next() % 11 {
		case 0:
			y = c.Add(a, pick())
		case 1:
			y = c.Mul(a, pick())
		case 2:
			y = c.Sub(a, pick())
		case 3:
			y = c.Scale(a, float32(b.next()%7)/4-0.75)
		case 4:
			y = c.Sqr(a)
		case 5:
			y = c.MulMat(w, a)
		case 6:
			y = c.RMSNorm(a, 1e-5)
		case 7:
			y = c.Tanh(a)
		case 8:
			// A transposed copy made contiguous, transposed back.
			y = c.Cont(c.Transpose(c.Cont(c.Transpose(a))))
		case 9:
			// Rows summed and broadcast back by an add.
			y = c.Add(a, c.SumRows(a))
		default:
			y = c.Cpy(a, c.NewTensor(quant.F32, 8, rows))
		}
		if y == nil {
			return nil, nil, nil, c.Err()
		}
		live = append(live, y)
	}
	outs := []*graph.Tensor{graph.SetOutput(live[len(live)-1])}
	if extra := live[nIn+1+b.next()%nNodes]; extra != outs[0] {
		outs = append(outs, graph.SetOutput(extra))
	}
	g, err := c.Build(outs...)
	return g, inputs, outs, err
}

// fuzzValues gives tensor k of a fuzzed graph its values.
func fuzzValues(k int, n int64) []float32 {
	vs := make([]float32, n)
	for i := range vs {
		vs[i] = float32(math.Sin(float64(7*k+i+1))) / 2
	}
	return vs
}

// computeFuzz computes g with a scheduler over backends, setting the
// leafs' values, and returns the outputs' values.
func computeFuzz(t *testing.T, backends []backend.Backend, opts backend.SchedulerOptions, g *graph.Graph, leafs, outs []*graph.Tensor) ([][]float32, int, error) {
	s, err := backend.NewScheduler(backends, opts)
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	if err := s.AllocGraph(g); err != nil {
		return nil, 0, err
	}
	host := backends[len(backends)-1]
	for k, x := range leafs {
		if !g.Contains(x) {
			continue // an input no node reads has no memory
		}
		if err := backend.SetFloat32(host, x, fuzzValues(k, x.NElements())); err != nil {
			return nil, 0, err
		}
	}
	if err := s.GraphCompute(g); err != nil {
		return nil, 0, err
	}
	var got [][]float32
	for _, o := range outs {
		v, err := backend.GetFloat32(s.TensorBackend(o), o)
		if err != nil {
			return nil, 0, err
		}
		got = append(got, v)
	}
	splits := s.NSplits()
	s.Reset()
	return got, splits, nil
}

// FuzzScheduler: a random graph on a random set of fake devices (each
// with its own memory, a random subset of the operations, synchronous or
// not, with or without events, op offload on or off) computes exactly what
// the CPU alone computes, or fails with an error; it never panics.
func FuzzScheduler(f *testing.F) {
	for _, seed := range [][]byte{
		{}, {1, 2, 3, 4, 5, 6, 7, 8}, {2, 0, 0xff, 1, 9, 3, 5, 5, 5, 5, 8, 8, 8, 1, 2, 0, 1},
		{3, 2, 3, 0xaa, 0x55, 1, 1, 3, 17, 4, 9, 22, 6, 7, 8, 10, 3, 2, 1},
		bytes.Repeat([]byte{5, 9, 13}, 30),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := fuzzBytes(data)
		nDev := b.next() % 4
		parallel := b.next()%2 == 1
		offload := b.next()%2 == 1
		var backends []backend.Backend
		for i := range nDev {
			mask := b.next() | b.next()<<8
			var list []ops.Op
			for j, op := range fuzzOps {
				if mask&(1<<j) != 0 {
					list = append(list, op)
				}
			}
			cfg := devtest.Config{Name: fmt.Sprintf("FUZZ%d", i), Type: backend.DeviceGPU, Supports: devtest.F32Ops(list...),
				Async: b.next()%2 == 1, Offload: offload}
			var d backend.Device = devtest.New(cfg)
			if b.next()%2 == 1 {
				d = devtest.NewWithEvents(cfg)
			}
			be, err := d.Init(backend.Options{})
			require.NoError(t, err)
			defer be.Close()
			backends = append(backends, be)
		}
		host := cpuBackend(t)
		backends = append(backends, host)

		rest := slices.Clone(b)
		g, leafs, outs, err := fuzzGraph(t, &b, backends)
		if err != nil {
			require.ErrorIs(t, err, graph.ErrShape, "only shape errors are expected from the builders")
			return
		}
		opts := backend.SchedulerOptions{Parallel: parallel, OpOffload: offload}
		got, splits, err := computeFuzz(t, backends, opts, g, leafs, outs)
		if err != nil {
			// What the scheduler may refuse: nothing else is an error.
			require.True(t, errors.Is(err, backend.ErrUnsupported), "%v", err)
			return
		}
		// The same graph again, from the same bytes, with its weights in
		// host memory: the CPU alone cannot read the devices'.
		g, leafs, outs, err = fuzzGraph(t, &rest, []backend.Backend{host})
		require.NoError(t, err)
		want, _, err := computeFuzz(t, []backend.Backend{host}, backend.SchedulerOptions{}, g, leafs, outs)
		require.NoError(t, err)
		for i := range want {
			require.Equal(t, want[i], got[i], "output %d differs from the CPU alone (%d devices, %d splits)", i, nDev, splits)
		}
	})
}
