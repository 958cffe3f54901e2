package buffer_test

import (
	"errors"
	"testing"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// bytesReader hands out the fuzz input a byte at a time, then zeros.
type bytesReader struct {
	b []byte
	i int
}

func (r *bytesReader) next(n int) int {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return int(r.b[r.i-1]) % n
}

// fuzzGraph builds a random graph from data: a few leafs (some inputs,
// some with Go memory of their own), then operations on earlier tensors:
// binary ops (some in place, some broadcast), views, reshapes,
// permutations, copies, norms, softmax, row sums; some results are
// outputs, a few inputs. It is deterministic in data, so it can be built twice.
func fuzzGraph(data []byte) builder {
	return func(c *graph.Context) []*graph.Tensor {
		r := &bytesReader{b: data}
		shapes := [][]int64{{16, 4}, {16, 4, 2}, {64}, {8, 8}, {16}, {16, 1, 2}}
		var pool, outs []*graph.Tensor
		for range 1 + r.next(4) {
			t := c.NewTensor(quant.F32, shapes[r.next(len(shapes))]...)
			switch r.next(4) {
			case 0:
				graph.SetInput(t)
			case 1:
				t.Data = make([]byte, t.NBytes())
			}
			pool = append(pool, t)
		}
		pick := func() *graph.Tensor { return pool[r.next(len(pool))] }
		for range 1 + r.next(32) {
			a := pick()
			var t *graph.Tensor
			switch r.next(12) {
			case 0, 1, 2, 3:
				b := pick()
				if !graph.CanRepeat(b, a) {
					b = a
				}
				inplace := r.next(3) == 0
				switch r.next(4) {
				case 0:
					t = pickOp(inplace, c.Add, c.AddInplace)(a, b)
				case 1:
					t = pickOp(inplace, c.Sub, c.SubInplace)(a, b)
				case 2:
					t = pickOp(inplace, c.Mul, c.MulInplace)(a, b)
				default:
					t = pickOp(inplace, c.Div, c.DivInplace)(a, b)
				}
			case 4:
				if !a.IsContiguous() {
					a = c.Cont(a)
				}
				n := a.NElements()
				ne := 1 + int64(r.next(int(n)))
				t = c.View1D(a, ne, 4*uint64(r.next(int(n-ne+1))))
			case 5:
				if !a.IsContiguous() {
					a = c.Cont(a)
				}
				t = c.Reshape(a, a.NElements())
			case 6:
				t = c.Permute(a, 1, 0, 2, 3)
			case 7:
				t = c.Cont(a)
			case 8:
				t = c.Cpy(a, c.NewTensor(quant.F32, a.Ne[:]...))
			case 9:
				if !a.IsContiguous() {
					a = c.Cont(a)
				}
				if r.next(2) == 0 {
					t = c.SoftMax(a)
				} else {
					t = c.SoftMaxInplace(a)
				}
			case 10:
				if r.next(2) == 0 {
					t = c.RMSNorm(a, 1e-5)
				} else {
					t = c.RMSNormInplace(a, 1e-5)
				}
			default:
				t = c.SumRows(a)
			}
			if t == nil {
				break
			}
			pool = append(pool, t)
			switch r.next(10) {
			case 0, 1:
				outs = append(outs, t)
			case 2:
				graph.SetInput(t) // computed, yet placed before everything
			}
		}
		return append(outs, pool[len(pool)-1])
	}
}

func pickOp(inplace bool, op, opInplace func(a, b *graph.Tensor) *graph.Tensor) func(a, b *graph.Tensor) *graph.Tensor {
	if inplace {
		return opInplace
	}
	return op
}

// fuzzAllocator makes the allocator a fuzz input asks for: one or two
// buffer types, small ones forcing chunks, and how nodes are spread.
func fuzzAllocator(data []byte) (types []buffer.Type, assign func(t *graph.Tensor) int) {
	r := &bytesReader{b: data}
	// The configuration comes from the input's end, the graph from its start.
	if len(data) > 0 {
		r.b = []byte{data[len(data)-1], data[len(data)/2]}
	}
	sizes := []uint64{1 << 30, 4096, 1024, 512}
	for range 1 + r.next(2) {
		typ, err := buffer.NewHostType("FUZZ", "CPU", 32<<r.next(2), sizes[r.next(len(sizes))])
		if err != nil {
			panic(err)
		}
		types = append(types, typ)
	}
	ids := map[*graph.Tensor]int{}
	return types, func(t *graph.Tensor) int {
		if _, ok := ids[t]; !ok {
			ids[t] = len(ids) % len(types)
		}
		return ids[t]
	}
}

// FuzzGraphAllocator places random graphs: it must never panic, never
// give two live tensors the same memory, and the CPU device must compute
// the same bytes in the placed memory as in memory of their own. The only
// errors allowed are limits: a tensor larger than a type's buffers, or
// more free blocks or buffers than the planner keeps.
func FuzzGraphAllocator(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{3, 0, 1, 2, 3, 20, 0, 0, 1, 1, 4, 0, 2, 6, 7, 1, 9, 9, 10, 1, 11, 0, 8, 3},
		{2, 4, 0, 5, 1, 16, 4, 7, 3, 5, 2, 9, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13},
		{1, 0, 0, 31, 0, 0, 2, 0, 0, 0, 1, 0, 1, 0, 0, 2, 1, 0, 0, 3, 0, 0, 1, 1, 0, 0, 1, 2, 3},
		{4, 2, 1, 3, 0, 5, 1, 2, 25, 4, 3, 40, 9, 8, 1, 2, 5, 6, 7, 255, 128, 64, 32, 16, 8, 4, 2, 1},
	} {
		f.Add(seed)
	}
	eng := cpu.New(cpu.Options{Threads: 2})
	f.Cleanup(eng.Close)
	f.Fuzz(func(t *testing.T, data []byte) {
		b := fuzzGraph(data)
		if _, err := build(b); err != nil {
			return // a builder refused: nothing to place
		}
		types, assign := fuzzAllocator(data)
		a, err := buffer.NewGraphAllocator(types...)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		place := func(g *graph.Graph) error {
			nodes, leafs := buffer.BufferIDs(g, assign)
			if err := a.ReserveN(g, nodes, leafs); err != nil {
				return err
			}
			if err := a.AllocGraph(g); err != nil {
				return err
			}
			// Placing it again puts every tensor where it was.
			return a.AllocGraph(g)
		}
		err = computeMatches(b, nil, place, eng)
		if errors.Is(err, buffer.ErrTooLarge) || errors.Is(err, buffer.ErrNoSpace) || errors.Is(err, cpu.ErrUnsupported) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}
