package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/bench"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/block"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

type demoFlags struct {
	device            string
	threads           int
	seed              uint64
	tokens, ctx, embd int
	rope              string
	repack            bool
}

func runDemo(args []string, stdout io.Writer) error {
	var f demoFlags
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml demo [flags]\n\nRuns one llama-style decoder block through the scheduler on a device, with the CPU\nas fallback, and compares the result with a CPU-only run.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&f.device, "device", "", "device to run on (default: "+backend.EnvDevice+", else the best available)")
	fs.IntVar(&f.threads, "threads", 0, "CPU threads (0: all)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the random weights and inputs")
	fs.IntVar(&f.tokens, "tokens", 8, "tokens in the batch")
	fs.IntVar(&f.ctx, "ctx", 64, "KV cache cells (the batch fills the last -tokens of them)")
	fs.IntVar(&f.embd, "embd", 256, "embedding width (a multiple of 64; 64 per head)")
	fs.StringVar(&f.rope, "rope", "neox", "rope mode: neox or normal")
	fs.BoolVar(&f.repack, "repack", false, "place the weights in the device's extra buffer type where it takes them (the CPU's CPU_REPACK)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	if f.threads < 0 {
		return usageErrorf("-threads must be >= 0")
	}
	if f.rope != "neox" && f.rope != "normal" {
		return usageErrorf("-rope must be neox or normal, got %q", f.rope)
	}
	d, err := block.NewDims(f.embd, f.tokens, f.ctx, f.rope == "neox")
	if err != nil {
		return usageErrorf("%v", err)
	}

	backends, err := openBackends("-device", f.device, f.threads)
	if err != nil {
		return err
	}
	defer backend.CloseAll(backends)
	main, cpu := backends[0], backends[len(backends)-1]
	res, err := runBlockWith(backends, d, f.seed, 1, f.repack)
	if err != nil {
		return fmt.Errorf("on %s: %w", main.Name(), err)
	}
	ref, err := runBlock([]backend.Backend{cpu}, d, f.seed, 1)
	if err != nil {
		return fmt.Errorf("CPU-only run: %w", err)
	}

	threads := fmt.Sprint(f.threads)
	if f.threads == 0 {
		threads = fmt.Sprintf("%d (-threads 0: every CPU the Go runtime uses)", runtime.GOMAXPROCS(0))
	}
	fmt.Fprintf(stdout, "device: %s (%s), fallback CPU, threads %s, seed %d\n", main.Name(), main.Device().Description(), threads, f.seed)
	fmt.Fprintf(stdout, "block: embd %d, heads %d (kv %d) of %d, ffn %d, tokens %d, ctx %d, rope %s, Q4_0 weights, F16 KV cache\n",
		d.Embd, d.Heads, d.KVHeads, d.HeadDim, d.FF, d.Tokens, d.Ctx, f.rope)
	if f.repack {
		fmt.Fprintf(stdout, "weights in an extra buffer type: %s\n", strings.Join(res.repacked, ", "))
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OP\tTENSOR\tDEVICE")
	for _, a := range res.placed {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", a.op, a.name, a.device)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	maxDiff, nmse := agreement(res.out, ref.out)
	fmt.Fprintf(stdout, "\nsplits: %d\n", res.splits)
	for _, l := range res.weights {
		fmt.Fprintln(stdout, l)
	}
	if err := writeProfile(stdout, res.profile, res.walls[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "checksum: sum %.6f, fnv64a %016x\n", sum(res.out), checksum(res.out))
	fmt.Fprintf(stdout, "agreement with a CPU-only run: max abs diff %g, nmse %g\n", maxDiff, nmse)
	lib, err := ggmlref.Default()
	if err != nil {
		fmt.Fprintf(stdout, "real ggml: not available (%v)\n", err)
		return nil
	}
	theirs, err := runBlockGGML(lib, d, f.seed, f.threads)
	if err != nil {
		return fmt.Errorf("real ggml: %w", err)
	}
	maxDiff, nmse = agreement(res.out, theirs)
	fmt.Fprintf(stdout, "agreement with the real ggml %s (CPU backend): max abs diff %g, nmse %g\n", lib.Version(), maxDiff, nmse)
	return nil
}

// runBlockGGML computes the same block, with the same weights and inputs,
// on the real ggml's CPU backend through the mirror.
func runBlockGGML(lib *ggmlref.Lib, d block.Dims, seed uint64, threads int) ([]float32, error) {
	out, _, err := timeBlockGGML(lib, d, seed, threads, 1)
	return out, err
}

// timeBlockGGML is runBlockGGML computing runs times, with the time of each
// computation (the mirror's: copies in and out included).
func timeBlockGGML(lib *ggmlref.Lib, d block.Dims, seed uint64, threads, runs int) ([]float32, []time.Duration, error) {
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	e, err := mirror.New(lib, threads)
	if err != nil {
		return nil, nil, err
	}
	defer e.Close()
	// The mirror copies Go memory in and out, so every tensor gets some.
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	var leafErr error
	leaf := func(name string, typ quant.Type, ne ...int64) *graph.Tensor {
		t := c.SetName(c.NewTensor(typ, ne...), name)
		if t != nil && leafErr == nil {
			var data []byte
			data, leafErr = block.LeafData(t, seed)
			copy(t.Data, data)
		}
		return t
	}
	g, in, out, err := block.BuildLayers(c, d, 1, leaf)
	if err == nil {
		err = leafErr
	}
	if err != nil {
		return nil, nil, err
	}
	setGo := func(t *graph.Tensor, data []byte, offset uint64) error {
		copy(t.Data[offset:], data)
		return nil
	}
	var walls []time.Duration
	for range max(runs, 1) {
		if err := block.SetInputs(in, d, seed, setGo); err != nil {
			return nil, nil, err
		}
		start := time.Now()
		if err := e.Compute(g); err != nil {
			return nil, nil, err
		}
		walls = append(walls, time.Since(start))
	}
	return f32s(out.Data), walls, nil
}

// placement is which device ran a node.
type placement struct{ op, name, device string }

type blockResult struct {
	placed []placement
	splits int
	out    []float32
	// walls are the times of the computations, profile the scheduler's
	// of the last.
	walls   []time.Duration
	profile []backend.BackendProfile
	// weights is the weight memory after the runs: what the demo
	// allocated, then each device's own report (while it still holds the
	// weights).
	weights []string
	// repacked names the leaves placed in an extra buffer type.
	repacked []string
}

// runBlock builds the demo block with weights and KV cache in the first
// backend's memory, computes it runs times with a scheduler over backends
// and returns where each node ran, the times and the output.
func runBlock(backends []backend.Backend, d block.Dims, seed uint64, runs int) (res blockResult, err error) {
	return runBlockWith(backends, d, seed, runs, false)
}

// runBlockWith is runBlock that, with repack, places each leaf the first
// backend's device takes in one of its extra buffer types there
// (bench.PlaceExtra) instead.
func runBlockWith(backends []backend.Backend, d block.Dims, seed uint64, runs int, repack bool) (res blockResult, err error) {
	s, err := backend.NewScheduler(backends, backend.SchedulerOptions{Profile: true})
	if err != nil {
		return res, err
	}
	defer s.Close()
	bt := backends[0].Device().BufferType()
	var bufs []buffer.Buffer
	defer func() {
		for _, b := range bufs {
			if ferr := b.Free(); err == nil {
				err = ferr
			}
		}
	}()
	c := graph.NewContext(graph.ContextOptions{})
	var leaves []*graph.Tensor
	leaf := func(name string, typ quant.Type, ne ...int64) *graph.Tensor {
		t := c.SetName(c.NewTensor(typ, ne...), name)
		if t != nil {
			leaves = append(leaves, t)
		}
		return t
	}
	g, in, out, err := block.BuildLayers(c, d, 1, leaf)
	if err != nil {
		return res, err
	}
	// The leaves get memory once the graph shows which nodes read them.
	// The KV cache, which the graph's copies write, is compute data, not
	// weights: a device may keep WEIGHTS buffers unflushed between ops (the
	// Hexagon DSP does), as llama.cpp's KV cache buffers are not WEIGHTS.
	written := map[*graph.Tensor]bool{}
	for _, n := range g.Nodes {
		if n.Op == ops.Cpy || n.Op == ops.SetRows {
			root := n
			for root.ViewSrc != nil {
				root = root.ViewSrc
			}
			written[root] = true
		}
	}
	for _, t := range leaves {
		if repack {
			b, err := bench.PlaceExtra(backends[0].Device(), g, t)
			if err != nil {
				return res, err
			}
			if b != nil {
				bufs = append(bufs, b)
				res.repacked = append(res.repacked, t.Name)
			}
		}
		if t.Buffer == nil {
			b, err := bt.Alloc(bt.AllocSize(t))
			if err != nil {
				return res, err
			}
			bufs = append(bufs, b)
			if !written[t] {
				b.SetUsage(buffer.UsageWeights)
			}
			if err := b.AllocTensor(t, 0); err != nil {
				return res, err
			}
		}
		data, err := block.LeafData(t, seed)
		if err != nil {
			return res, err
		}
		if err := buffer.SetTensor(t, data, 0); err != nil {
			return res, err
		}
	}
	if err := s.AllocGraph(g); err != nil {
		return res, err
	}
	for range max(runs, 1) {
		// The allocator may have placed intermediates over the inputs'
		// memory: set them before every computation, as with ggml.
		if err := block.SetInputs(in, d, seed, buffer.SetTensor); err != nil {
			return res, err
		}
		start := time.Now()
		if err := s.GraphCompute(g); err != nil {
			return res, err
		}
		res.walls = append(res.walls, time.Since(start))
	}
	res.profile = s.Profile()
	raw := make([]byte, out.NBytes())
	if err := buffer.GetTensor(out, raw, 0); err != nil {
		return res, err
	}
	res.out = f32s(raw)
	res.splits = s.NSplits()
	var size uint64
	for _, b := range bufs {
		size += b.Size()
	}
	res.weights = []string{fmt.Sprintf("weights and KV cache: %.1f MiB in %d buffers (%s, %d repacked)", float64(size)/(1<<20), len(bufs), bt.Name(), len(res.repacked))}
	for _, b := range backends {
		if wr, ok := b.Device().(weightReporter); ok {
			res.weights = append(res.weights, fmt.Sprintf("%s: %s", b.Device().Name(), wr.WeightReport()))
		}
	}
	for _, n := range g.Nodes {
		dev := "-"
		if b := s.TensorBackend(n); b != nil {
			dev = b.Name()
		}
		res.placed = append(res.placed, placement{op: opName(n), name: n.Name, device: dev})
	}
	return res, nil
}

// opName is the node's op, with the sub-op of UNARY and GLU nodes as
// test-backend-ops names them.
func opName(n *graph.Tensor) string {
	switch n.Op {
	case ops.Unary:
		return n.Params.Unary().String()
	case ops.GLU:
		return ops.GLUParamsOf(n.Params).Op.String()
	}
	return n.Op.String()
}

func f32s(b []byte) []float32 {
	vs := make([]float32, len(b)/4)
	for i := range vs {
		vs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return vs
}

func sum(vs []float32) float64 {
	s := 0.0
	for _, v := range vs {
		s += float64(v)
	}
	return s
}

// checksum hashes the output's bits, so any difference shows.
func checksum(vs []float32) uint64 {
	h := fnv.New64a()
	_ = binary.Write(h, binary.LittleEndian, vs)
	return h.Sum64()
}

// agreement is the largest absolute difference of got from want and the
// normalized mean squared error, as test-backend-ops computes it.
func agreement(got, want []float32) (maxDiff, nmse float64) {
	var num, den float64
	for i := range got {
		diff := float64(got[i]) - float64(want[i])
		maxDiff = math.Max(maxDiff, math.Abs(diff))
		num += diff * diff
		den += float64(want[i]) * float64(want[i])
	}
	if den > 0 {
		nmse = num / den
	}
	return maxDiff, nmse
}

// parseFlags parses args, marking a bad flag as a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return usageErrorf("%v", err)
	}
	return err
}
