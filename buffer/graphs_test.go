package buffer_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/optest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// builder builds a graph's tensors in a context and returns its outputs.
type builder func(c *graph.Context) []*graph.Tensor

type testGraph struct {
	name  string
	build builder
}

func input(c *graph.Context, ne ...int64) *graph.Tensor {
	return graph.SetInput(c.NewTensor(quant.F32, ne...))
}

func weight(c *graph.Context, ne ...int64) *graph.Tensor { return c.NewTensor(quant.F32, ne...) }

// llama is a transformer-like stack of layers made of the operations the
// project has so far: norms, element-wise products standing in for the
// projections, heads split with reshape and permute, a masked softmax, a
// residual stream. With copies it also writes K and V into cache tensors
// (CPY into views) and gathers the heads with CONT, as llama.cpp does.
func llama(layers int, tokens int64, copies bool) builder {
	return func(c *graph.Context) []*graph.Tensor {
		const embd, heads, eps = 64, 4, 1e-5
		hd := int64(embd / heads)
		x := input(c, embd, tokens)
		mask := input(c, hd, tokens)
		var kcache, vcache *graph.Tensor
		if copies {
			kcache = weight(c, embd, tokens, int64(layers))
			vcache = weight(c, embd, tokens, int64(layers))
		}
		for l := range layers {
			h := c.Mul(c.RMSNorm(x, eps), weight(c, embd))
			q := c.Mul(h, weight(c, embd))
			k := c.Add(h, weight(c, embd))
			v := c.Sub(h, weight(c, embd))
			if copies {
				at := uint64(l) * kcache.Nb[2]
				k = c.Cpy(k, c.View2D(kcache, embd, tokens, kcache.Nb[1], at))
				v = c.Cpy(v, c.View2D(vcache, embd, tokens, vcache.Nb[1], at))
			}
			split := func(t *graph.Tensor) *graph.Tensor {
				return c.Permute(c.Reshape(t, hd, heads, tokens), 0, 2, 1, 3)
			}
			kq := c.SoftMaxExt(c.Mul(split(q), split(k)), mask, 0.25, 0)
			kqv := c.Mul(kq, split(v))
			var o *graph.Tensor
			if copies {
				o = c.Cont(c.Permute(kqv, 0, 2, 1, 3))
			} else {
				o = c.Mul(c.Permute(kqv, 0, 2, 1, 3), weight(c, hd, heads, tokens))
			}
			x = c.Add(x, c.Reshape(o, embd, tokens))
			f := c.Mul(c.RMSNorm(x, eps), weight(c, embd))
			g := c.Mul(f, weight(c, embd))
			u := c.Add(f, weight(c, embd))
			x = c.Add(x, c.Div(c.Mul(g, u), weight(c, embd)))
		}
		return []*graph.Tensor{c.Mul(c.RMSNorm(x, eps), weight(c, embd))}
	}
}

// transformer is a llama-style decoder: token embeddings looked up by id,
// per layer an RMS norm, Q/K/V projections (matrix products with weights of
// type wtype), RoPE on Q and K, K and V copied into an F16 cache (CPY into
// views) and read back from it, heads split by reshape and permute, masked
// softmax attention, an output projection and a SwiGLU feed-forward
// network, with residual additions; then logits.
func transformer(layers int, tokens int64, wtype quant.Type) builder {
	return func(c *graph.Context) []*graph.Tensor {
		const embd, heads, ff, vocab, eps = 64, 4, 128, 96, 1e-5
		hd := int64(embd / heads)
		w := func(ne ...int64) *graph.Tensor { return c.NewTensor(wtype, ne...) }
		ids := graph.SetInput(c.NewTensor(quant.I32, tokens))
		pos := graph.SetInput(c.NewTensor(quant.I32, tokens))
		mask := input(c, tokens, tokens)
		kcache := c.NewTensor(quant.F16, embd, tokens, int64(layers))
		vcache := c.NewTensor(quant.F16, embd, tokens, int64(layers))
		x := c.GetRows(w(embd, vocab), ids)
		for l := range layers {
			h := c.Mul(c.RMSNorm(x, eps), weight(c, embd))
			rope := func(t *graph.Tensor) *graph.Tensor {
				return c.Rope(c.Reshape(t, hd, heads, tokens), pos, int32(hd), ops.RopeNeox)
			}
			// The cache views depend on the copies, so they come after.
			cached := func(cache, cur *graph.Tensor) *graph.Tensor {
				at := uint64(l) * cache.Nb[2]
				stored := c.Cpy(cur, c.View2D(cache, embd, tokens, cache.Nb[1], at))
				return c.View3D(stored, hd, heads, tokens, uint64(hd)*cache.Nb[0], cache.Nb[1], 0)
			}
			q := c.Permute(rope(c.MulMat(w(embd, embd), h)), 0, 2, 1, 3)
			k := c.Permute(cached(kcache, rope(c.MulMat(w(embd, embd), h))), 0, 2, 1, 3)
			v := c.Cont(c.Permute(cached(vcache, c.MulMat(w(embd, embd), h)), 1, 2, 0, 3))
			kq := c.SoftMaxExt(c.MulMat(k, q), mask, 0.25, 0)
			o := c.Cont(c.Permute(c.MulMat(v, kq), 0, 2, 1, 3))
			x = c.Add(x, c.MulMat(w(embd, embd), c.Reshape(o, embd, tokens)))
			f := c.Mul(c.RMSNorm(x, eps), weight(c, embd))
			g := c.SwiGLUSplit(c.MulMat(w(embd, ff), f), c.MulMat(w(embd, ff), f))
			x = c.Add(x, c.MulMat(w(ff, embd), g))
		}
		return []*graph.Tensor{c.MulMat(w(embd, vocab), c.Mul(c.RMSNorm(x, eps), weight(c, embd)))}
	}
}

// tokenIDs fills I32 leafs (token ids, positions) with values below 96,
// the vocabulary of transformer.
func tokenIDs(rng *rand.Rand, t *graph.Tensor) bool {
	if t.Type != quant.I32 {
		return false
	}
	for i := 0; i < len(t.Data); i += 4 {
		binary.LittleEndian.PutUint32(t.Data[i:], uint32(rng.Intn(96)))
	}
	return true
}

// testGraphs are the graphs the allocator is checked on.
var testGraphs = []testGraph{
	{"chain", func(c *graph.Context) []*graph.Tensor {
		x := input(c, 256, 4)
		for range 8 {
			x = c.Add(x, weight(c, 256, 4))
		}
		return []*graph.Tensor{x}
	}},
	{"chain-reused", func(c *graph.Context) []*graph.Tensor {
		// Every value is read twice, so nothing runs in place.
		x := input(c, 256, 4)
		for range 8 {
			x = c.Mul(x, x)
		}
		return []*graph.Tensor{x}
	}},
	{"diamond", func(c *graph.Context) []*graph.Tensor {
		x := input(c, 128, 8)
		a := c.Mul(x, weight(c, 128))
		b := c.Add(x, weight(c, 128, 8))
		d := c.Sub(a, b)
		e := c.Div(d, x)
		return []*graph.Tensor{c.Add(e, c.Mul(a, b))}
	}},
	{"views", func(c *graph.Context) []*graph.Tensor {
		x := input(c, 64, 16)
		s := c.Add(c.View2D(x, 32, 16, x.Nb[1], 0), c.View2D(x, 32, 16, x.Nb[1], 32*4))
		y := c.Mul(c.Reshape(s, 512), weight(c, 512))
		p := c.Permute(c.Reshape(y, 8, 4, 16), 1, 0, 2, 3)
		m := c.Mul(weight(c, 4, 8, 16), p)
		z := c.Add(c.View1D(y, 256, 0), c.View1D(y, 256, 256*4))
		t := c.Transpose(c.Reshape(z, 16, 16))
		return []*graph.Tensor{m, c.Sub(weight(c, 16, 16), t)}
	}},
	{"inplace", func(c *graph.Context) []*graph.Tensor {
		x := c.Mul(input(c, 100, 10), weight(c, 100, 10))
		x = c.AddInplace(x, weight(c, 100))
		x = c.SoftMaxInplace(x)
		x = c.MulInplace(x, weight(c, 100, 10))
		x = c.RMSNormInplace(x, 1e-6)
		return []*graph.Tensor{c.DivInplace(x, weight(c, 1, 10))}
	}},
	{"fanout", func(c *graph.Context) []*graph.Tensor {
		x := input(c, 512)
		var branches []*graph.Tensor
		for range 8 {
			branches = append(branches, c.Mul(x, weight(c, 512)))
		}
		s := branches[0]
		for _, b := range branches[1:] {
			s = c.Add(s, b)
		}
		return []*graph.Tensor{s}
	}},
	{"mixed-sizes", func(c *graph.Context) []*graph.Tensor {
		x := input(c, 1000, 6)
		r := c.SumRows(x)
		m := c.Mean(c.Mul(x, x))
		a := c.Add(r, m)
		n := c.Norm(c.Add(x, weight(c, 1000)), 1e-5)
		big := c.Mul(n, c.Reshape(c.Sub(x, n), 1000, 6))
		small := c.Div(a, c.SumRows(big))
		return []*graph.Tensor{small, c.Argmax(c.Reshape(big, 200, 30))}
	}},
	{"reductions", func(c *graph.Context) []*graph.Tensor {
		x := input(c, 128, 8, 2)
		s := c.SoftMaxExt(x, input(c, 128, 8), 0.5, 0)
		n := c.RMSNorm(s, 1e-5)
		g := c.GroupNorm(c.Reshape(n, 16, 8, 16), 4, 1e-5)
		return []*graph.Tensor{c.SumRows(g), c.Mean(c.L2Norm(x, 1e-6)), c.Cumsum(n)}
	}},
	{"view-inplace", viewInplace},
	{"output-read-once", outputReadOnce},
	{"input-node", inputNode},
	{"llama-2x8", llama(2, 8, false)},
	{"llama-4x16", llama(4, 16, false)},
	{"llama-copies-2x8", llama(2, 8, true)},
	{"transformer-f32-2x8", transformer(2, 8, quant.F32)},
	{"transformer-f16-4x16", transformer(4, 16, quant.F16)},
	{"transformer-q8_0-4x32", transformer(4, 32, quant.Q8_0)},
}

// outputReadOnce is an output whose only reader may run in place: it must
// not, or the output is lost (ggml's gallocr skips OUTPUT parents too).
func outputReadOnce(c *graph.Context) []*graph.Tensor {
	x := input(c, 64, 4)
	a := c.Add(x, x)
	return []*graph.Tensor{a, c.Sqr(a)}
}

// build builds a graph from b in a context without memory, its outputs
// marked.
func build(b builder) (*graph.Graph, error) {
	c := graph.NewContext(graph.ContextOptions{})
	outs := b(c)
	if err := c.Err(); err != nil {
		return nil, err
	}
	for _, o := range outs {
		graph.SetOutput(o)
	}
	return c.Build(outs...)
}

// supported reports whether the CPU device computes every node of g.
func supported(g *graph.Graph) bool {
	for _, n := range g.Nodes {
		if !cpu.SupportsOp(n) {
			return false
		}
	}
	return true
}

// giveGoMemory gives every tensor g reaches memory of its own from the Go
// heap, and views their source's. (A context made with Alloc would too, but
// it sizes a ViewTensor of a strided view by dense strides.)
func giveGoMemory(g *graph.Graph) {
	ts := mirror.Reachable(g)
	for _, t := range ts {
		if t.ViewSrc == nil {
			t.Data = make([]byte, t.NBytes())
		}
	}
	for _, t := range ts {
		if v := t.ViewSrc; v != nil {
			t.Data = v.Data[t.ViewOffs : t.ViewOffs+t.NBytes()]
		}
	}
}

// computeMatches builds b twice, with Go memory for every tensor and with
// the memory of placed (by place, which allocates the graph), checks the
// placement, fills the leafs alike (init, then uniform values), computes
// both node by node with eng and returns an error at the first node whose
// bytes differ.
func computeMatches(b builder, init func(*rand.Rand, *graph.Tensor) bool, place func(*graph.Graph) error, eng *cpu.Engine) error {
	ga, err := build(b)
	if err != nil {
		return err
	}
	giveGoMemory(ga)
	gb, err := build(b)
	if err != nil {
		return err
	}
	if ga.Hash() != gb.Hash() {
		return fmt.Errorf("the two builds differ")
	}
	if err := place(gb); err != nil {
		return err
	}
	if err := checkPlacement(gb); err != nil {
		return err
	}
	// The placed memory starts as garbage, as it would after earlier
	// graphs: a node reading memory nothing wrote shows up as a mismatch.
	for _, t := range mirror.Reachable(gb) {
		if b, ok := t.Buffer.(buffer.Buffer); ok {
			if err := b.Clear(0xa5); err != nil {
				return err
			}
		}
	}
	rng := rand.New(rand.NewSource(1))
	for i, t := range ga.Leafs {
		if t.ViewSrc != nil {
			continue
		}
		if init == nil || !init(rng, t) {
			if err := optest.FillUniform(rng, t, -1, 1); err != nil {
				return err
			}
		}
		if lb := gb.Leafs[i]; lb.Buffer == nil && lb.Data != nil {
			copy(lb.Data, t.Data) // Go memory of its own
		} else if err := buffer.SetTensor(lb, t.Data, 0); err != nil {
			return err
		}
	}
	for i, na := range ga.Nodes {
		nb := gb.Nodes[i]
		if err := eng.ComputeNode(na); err != nil {
			return err
		}
		if err := eng.ComputeNode(nb); err != nil {
			return err
		}
		if !bytes.Equal(na.Data, nb.Data) {
			return fmt.Errorf("node %d (%s) differs when placed by the allocator", i, nb)
		}
	}
	// Outputs must still hold their values once the whole graph ran: a
	// later node placed over one (run in place over it, say) breaks it.
	for i, na := range ga.Nodes {
		if nb := gb.Nodes[i]; nb.Flags&graph.FlagOutput != 0 && !bytes.Equal(na.Data, nb.Data) {
			return fmt.Errorf("output node %d (%s) was overwritten after it was computed", i, nb)
		}
	}
	return nil
}
