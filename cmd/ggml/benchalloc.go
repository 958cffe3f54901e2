package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/block"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/quant"
)

// benchmarks are the subcommands of ggml bench.
var benchmarks = map[string]func(args []string, stdout io.Writer) error{
	"alloc":    runBenchAlloc,
	"block":    runBenchBlock,
	"demo":     runBenchDemo,
	"dispatch": runBenchDispatch,
	"matmul":   runBenchMatMul,
	"model":    runBenchModel,
	"ops":      runBenchOps,
	"quant":    runBenchQuant,
	"rpc":      runBenchRPC,
}

const benchUsage = `usage: ggml bench alloc|matmul|dispatch|ops|quant|demo|block|model|rpc [flags]

  alloc     compute buffer sizes of our graph allocator beside ggml's gallocr
  matmul    MUL_MAT 4096x4096 by N columns, ours beside ggml
  dispatch  a 1000-op graph of tiny ADDs: the cost per operation
  ops       SOFT_MAX, SWIGLU, SILU, GEGLU alone at the real models' sizes
  quant     quantization and activation from_float speed
  demo      the demo's decoder block
  block     the demo's decoder block through the scheduler on any device, with its profile
  model     a whole model: pp64 and tg32 tokens/s beside libllama in its own process, bandwidth, memory
  rpc       a decode step split over two RPC servers beside the local CPU, and ggml's pair

matmul, dispatch, ops, quant and demo take [-b NAME] [-threads N,...] [-ref ggml|none] [-tsv]
(-b: default GGML_DEVICE, else the best device); run 'ggml bench NAME -h' for each one's flags.`

func runBench(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" {
		fmt.Fprintln(stdout, benchUsage)
		if len(args) == 0 {
			return usageErrorf("name a benchmark")
		}
		return flag.ErrHelp
	}
	b, ok := benchmarks[args[0]]
	if !ok {
		return usageErrorf("unknown benchmark %q (have: alloc, matmul, dispatch, ops, quant, demo, block, model, rpc)", args[0])
	}
	return b(args[1:], stdout)
}

// allocGraph is a graph the alloc benchmark sizes.
type allocGraph struct {
	name  string
	build func() (*graph.Graph, error)
}

func runBenchAlloc(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench alloc", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml bench alloc [-small]\n\nThe compute buffer our GraphAllocator plans for each graph, beside ggml's gallocr\nfor the same graph; exits 1 if ours is larger anywhere.\n\nflags:")
		fs.PrintDefaults()
	}
	small := fs.Bool("small", false, "small graphs only (quick)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	lib, libErr := ggmlref.Default()
	if libErr != nil {
		fmt.Fprintf(stdout, "note: reference ggml not available, showing our sizes only (%v)\n", libErr)
	} else {
		fmt.Fprintf(stdout, "reference: ggml %s, gallocr on its CPU buffer type\n", lib.Version())
	}
	fmt.Fprintln(stdout, "weights and KV caches live in memory of their own; sizes are the compute buffer in bytes")
	fmt.Fprintln(stdout)

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "graph\tnodes\tours\tggml\tours/ggml\t")
	larger := 0
	for _, ag := range allocGraphs(*small) {
		ours, theirs, nodes, err := allocSizes(ag, lib)
		if err != nil {
			return fmt.Errorf("%s: %w", ag.name, err)
		}
		ggml, ratio := "-", "-"
		if lib != nil {
			ggml, ratio = fmt.Sprint(theirs), fmt.Sprintf("%.3f", float64(ours)/float64(theirs))
			if ours > theirs {
				larger++
				ratio += " LARGER"
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t\n", ag.name, nodes, ours, ggml, ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if larger > 0 {
		return fmt.Errorf("our buffer is larger than ggml's for %d graph(s)", larger)
	}
	return nil
}

// allocSizes plans ag's graph with ggml's gallocr (when lib is set) and with
// our GraphAllocator on the CPU buffer type. ggml goes first: ours gives
// the compute tensors memory, which ggml would then leave alone.
func allocSizes(ag allocGraph, lib *ggmlref.Lib) (ours, theirs uint64, nodes int, err error) {
	g, err := ag.build()
	if err != nil {
		return 0, 0, 0, err
	}
	if lib != nil {
		if theirs, err = mirror.GallocrSize(lib, g); err != nil {
			return 0, 0, 0, fmt.Errorf("ggml: %w", err)
		}
	}
	ga, err := buffer.NewGraphAllocator(cpu.Device().BufferType())
	if err != nil {
		return 0, 0, 0, err
	}
	defer ga.Free()
	if err := ga.Reserve(g); err != nil {
		return 0, 0, 0, err
	}
	if err := ga.AllocGraph(g); err != nil {
		return 0, 0, 0, err
	}
	return ga.BufferSize(0), theirs, len(g.Nodes), nil
}

// allocGraphs are the demo block at several sizes (prompt and decode),
// stacks of it, and attention over KV-cache views alone, with the
// softmax path as well as flash attention.
func allocGraphs(small bool) []allocGraph {
	type size struct{ embd, tokens, ctx, layers int }
	blocks := []size{{256, 8, 64, 1}, {512, 32, 256, 1}, {1024, 128, 1024, 1}, {1024, 1, 1024, 1}, {2048, 512, 2048, 1}, {256, 16, 128, 32}}
	attn := []size{{512, 32, 256, 1}, {1024, 1, 1024, 1}, {1024, 128, 1024, 1}}
	if small {
		blocks = []size{{128, 4, 16, 1}, {256, 1, 32, 1}, {128, 4, 16, 4}}
		attn = []size{{128, 4, 16, 1}}
	}
	var out []allocGraph
	for _, s := range blocks {
		what := "block"
		if s.layers > 1 {
			what = fmt.Sprintf("%d-layer stack", s.layers)
		}
		out = append(out, allocGraph{
			name: fmt.Sprintf("%s embd=%d tokens=%d ctx=%d", what, s.embd, s.tokens, s.ctx),
			build: func() (*graph.Graph, error) {
				d, err := block.NewDims(s.embd, s.tokens, s.ctx, true)
				if err != nil {
					return nil, err
				}
				g, _, _, err := block.BuildLayers(graph.NewContext(graph.ContextOptions{}), d, s.layers, goMemoryLeaf())
				return g, err
			},
		})
	}
	for _, s := range attn {
		for _, flash := range []bool{true, false} {
			what := "attention (soft_max)"
			if flash {
				what = "attention (flash)"
			}
			out = append(out, allocGraph{
				name: fmt.Sprintf("%s embd=%d tokens=%d ctx=%d", what, s.embd, s.tokens, s.ctx),
				build: func() (*graph.Graph, error) {
					d, err := block.NewDims(s.embd, s.tokens, s.ctx, true)
					if err != nil {
						return nil, err
					}
					return attentionGraph(d, flash)
				},
			})
		}
	}
	return out
}

// goMemoryLeaf makes leaves with Go memory of their own (zeros: the
// allocators only look at the shapes), so neither allocator places them.
func goMemoryLeaf() block.LeafFunc {
	wc := graph.NewContext(graph.ContextOptions{Alloc: true})
	return func(name string, typ quant.Type, ne ...int64) *graph.Tensor {
		return wc.SetName(wc.NewTensor(typ, ne...), name)
	}
}

// attentionGraph is llama.cpp's attention over a KV cache: Q, K and V of
// the batch as inputs, K and V written into F16 caches through views,
// then attention over views of the whole cache, with FLASH_ATTN_EXT or
// with MUL_MAT, SOFT_MAX and a transposed V cache.
func attentionGraph(d block.Dims, flash bool) (*graph.Graph, error) {
	c := graph.NewContext(graph.ContextOptions{})
	leaf := goMemoryLeaf()
	kvDim := d.KVHeads * d.HeadDim
	q := graph.SetInput(c.NewTensor(quant.F32, d.HeadDim, d.Heads, d.Tokens))
	k := graph.SetInput(c.NewTensor(quant.F32, kvDim, d.Tokens))
	v := graph.SetInput(c.NewTensor(quant.F32, kvDim, d.Tokens))
	mask := graph.SetInput(c.NewTensor(quant.F16, d.Ctx, d.Tokens))
	kc := leaf("cache_k", quant.F16, kvDim, d.Ctx)
	past := uint64(d.Ctx - d.Tokens)
	f16 := uint64(quant.F16.TypeSize())
	g := graph.NewGraph()
	if c.Err() != nil {
		return nil, c.Err()
	}
	g.Expand(c.Cpy(k, c.View2D(kc, kvDim, d.Tokens, kc.Nb[1], past*kc.Nb[1])))
	kAll := c.View3D(kc, d.HeadDim, d.Ctx, d.KVHeads, kc.Nb[1], uint64(d.HeadDim)*f16, 0)
	qp := c.Permute(q, 0, 2, 1, 3)
	scale := float32(1 / math.Sqrt(float64(d.HeadDim)))
	var out *graph.Tensor
	if flash {
		vc := leaf("cache_v", quant.F16, kvDim, d.Ctx)
		g.Expand(c.Cpy(v, c.View2D(vc, kvDim, d.Tokens, vc.Nb[1], past*vc.Nb[1])))
		vAll := c.View3D(vc, d.HeadDim, d.Ctx, d.KVHeads, vc.Nb[1], uint64(d.HeadDim)*f16, 0)
		out = c.Reshape(c.FlashAttnExt(qp, kAll, vAll, mask, scale, 0, 0), d.Embd, d.Tokens)
	} else {
		// The V cache is stored transposed ([ctx, kvDim]) so that KQ·V
		// needs no copy; the batch's V goes in as a strided view.
		vc := leaf("cache_v", quant.F16, d.Ctx, kvDim)
		vw := c.View2D(vc, d.Tokens, kvDim, vc.Nb[1], past*f16)
		g.Expand(c.Cpy(c.Transpose(v), vw))
		kq := c.SoftMaxExt(c.MulMat(kAll, qp), mask, scale, 0)
		vAll := c.View3D(vc, d.Ctx, d.HeadDim, d.KVHeads, vc.Nb[1], vc.Nb[1]*uint64(d.HeadDim), 0)
		kqv := c.Permute(c.MulMat(vAll, kq), 0, 2, 1, 3)
		out = c.Cont(kqv, d.Embd, d.Tokens)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	g.Expand(graph.SetOutput(out))
	return g, nil
}
