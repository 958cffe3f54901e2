package rpc

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// modelRun is what runModel measured.
type modelRun struct {
	logits   [][]float32
	perToken time.Duration // one decode step
	wire     uint64        // bytes on the wire (both ways) per decode step
	load     uint64        // bytes sent while loading the weights
	splits   int           // the scheduler's splits of the prompt's graph
	nodes    map[string]int
}

// runModel opens path with opts, evaluates a 16-token prompt and then
// decodes 8 tokens one at a time, keeping every logit; the traffic is
// that of the servers of opts.Device and opts.Split.
func runModel(t *testing.T, path string, opts model.Options) modelRun {
	t.Helper()
	conns := map[*conn]bool{}
	for _, d := range append([]backend.Device{opts.Device}, opts.Split...) {
		if d, ok := d.(*Device); ok {
			conns[d.c] = true
		}
	}
	traffic := func() (sent, recvd uint64) {
		for c := range conns {
			sent, recvd = sent+c.sent.Load(), recvd+c.recvd.Load()
		}
		return sent, recvd
	}
	var r modelRun
	s0, _ := traffic()
	opts.Threads = 2
	m, err := model.Open(path, opts)
	require.NoError(t, err)
	defer m.Close()
	s1, _ := traffic()
	r.load = s1 - s0
	s, err := m.NewSession(model.SessionOptions{Ctx: 64, Batch: 16})
	require.NoError(t, err)
	defer s.Close()
	prompt := make([]int32, 16)
	all := make([]bool, 16)
	for i := range prompt {
		prompt[i], all[i] = int32((i*37+11)%m.HParams.NVocab), true
	}
	lg, err := s.Decode(context.Background(), prompt, all)
	require.NoError(t, err)
	r.logits = append(r.logits, lg...)
	r.splits, r.nodes = s.Placement()
	const steps = 8
	s2, r2 := traffic()
	start := time.Now()
	for i := range steps {
		lg, err := s.Decode(context.Background(), []int32{int32((i*53 + 7) % m.HParams.NVocab)}, []bool{true})
		require.NoError(t, err)
		r.logits = append(r.logits, lg...)
	}
	r.perToken = time.Since(start) / steps
	s3, r3 := traffic()
	r.wire = (s3 - s2 + r3 - r2) / steps
	return r
}

func maxDiff(a, b [][]float32) float64 {
	var d float64
	for i := range a {
		for j := range a[i] {
			d = math.Max(d, math.Abs(float64(a[i][j]-b[i][j])))
		}
	}
	return d
}

// TestModel runs a generated model on a device of our server and of
// ggml's, against the same model on the local CPU: with our server (our
// CPU behind it) the logits are bit for bit the local ones; with ggml's
// (ggml's CPU) within float rounding. The decode step's time and the
// bytes on the wire per token are logged, and a second load onto a
// server with a cache folder skips the upload of the large weights.
func TestModel(t *testing.T) {
	if testing.Short() {
		t.Skip("the model runs are in the full pass")
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	// F32 weights; the output matrix (256 x 12000, 12 MB) is over ggml's
	// 10 MiB threshold for the hash cache.
	require.NoError(t, genmodel.WriteFile(path, genmodel.Config{Arch: "llama", Type: quant.F32,
		Embd: 256, Layers: 2, Heads: 4, KVHeads: 2, FF: 512, VocabSize: 12000}))
	local := runModel(t, path, model.Options{})

	ours := startServer(t, &Server{Threads: 2, CacheDir: t.TempDir()})
	dev := connect(t, ours, Options{})[0]
	got := runModel(t, path, model.Options{Device: dev})
	require.Equal(t, local.logits, got.logits, "our server's logits differ from the local ones (max %g)", maxDiff(local.logits, got.logits))
	again := runModel(t, path, model.Options{Device: dev})
	require.Equal(t, local.logits, again.logits)
	t.Logf("local CPU: %v a token; our server: %v a token (%.2fx), %d bytes on the wire a token",
		local.perToken, got.perToken, float64(got.perToken)/float64(local.perToken), got.wire)
	t.Logf("hash cache (our server): first load sent %d bytes, second %d", got.load, again.load)
	require.Less(t, again.load, got.load/2, "the second load did not skip the cached weights")

	cacheDir := t.TempDir()
	real := rpcref.StartServer(t, rpcref.Config{CacheDir: cacheDir})
	rdev := connect(t, real.Addr, Options{})[0]
	rgot := runModel(t, path, model.Options{Device: rdev})
	d := maxDiff(local.logits, rgot.logits)
	require.Less(t, d, 1e-3, "ggml's server's logits are %g from the local ones", d)
	ragain := runModel(t, path, model.Options{Device: rdev})
	t.Logf("ggml's server: %v a token (%.2fx local), %d bytes on the wire a token, logits within %g of local",
		rgot.perToken, float64(rgot.perToken)/float64(local.perToken), rgot.wire, d)
	t.Logf("hash cache (ggml's server, -c): first load sent %d bytes, second %d", rgot.load, ragain.load)
	require.Less(t, ragain.load, rgot.load/2, "ggml's server did not serve the cached weights")
}

// TestSplitTwoServersAndCPU splits one graph across two of our servers
// and the local CPU by where its weights are, as the scheduler splits a
// model's layers, and compares the result with the CPU alone, bit for bit.
func TestSplitTwoServersAndCPU(t *testing.T) {
	a := connect(t, startServer(t, &Server{Threads: 1}), Options{})[0]
	b := connect(t, startServer(t, &Server{Threads: 1}), Options{})[0]
	build := func() (*graph.Graph, []*graph.Tensor, *graph.Tensor, *graph.Tensor) {
		ctx := graph.NewContext(graph.ContextOptions{})
		x := graph.SetInput(ctx.NewTensor(quant.F32, 64, 4))
		var ws []*graph.Tensor
		y := x
		for range 6 {
			w := ctx.NewTensor(quant.F32, 64, 64)
			ws = append(ws, w)
			y = ctx.SiLU(ctx.MulMat(w, y))
		}
		g, err := ctx.Build(graph.SetOutput(y))
		require.NoError(t, err)
		return g, ws, x, y
	}
	weights := make([][]float32, 6)
	for i := range weights {
		weights[i] = make([]float32, 64*64)
		for j := range weights[i] {
			weights[i][j] = float32(math.Sin(float64(i*4096+j))) / 8
		}
	}
	input := make([]float32, 64*4)
	for i := range input {
		input[i] = float32(math.Cos(float64(i)))
	}
	run := func(devs []backend.Device) []float32 {
		g, ws, x, y := build()
		var bes []backend.Backend
		for _, d := range append(devs, cpu.Device()) {
			be, err := d.Init(backend.Options{Threads: 1})
			require.NoError(t, err)
			defer be.Close()
			bes = append(bes, be)
		}
		// Two weights on each device given, the rest on the CPU.
		for i, w := range ws {
			d := cpu.Device()
			if i/2 < len(devs) {
				d = devs[i/2]
			}
			buf, err := buffer.AllocTensors(d.BufferType(), []*graph.Tensor{w})
			require.NoError(t, err)
			defer buf.Free()
			buf.SetUsage(buffer.UsageWeights)
			require.NoError(t, backend.SetFloat32(bes[len(bes)-1], w, weights[i]))
		}
		s, err := backend.NewScheduler(bes, backend.SchedulerOptions{})
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.AllocGraph(g))
		require.NoError(t, backend.SetFloat32(bes[len(bes)-1], x, input))
		require.NoError(t, s.GraphCompute(g))
		if len(devs) > 0 {
			require.GreaterOrEqual(t, s.NSplits(), 3, "the graph was not split across the devices")
		}
		out, err := backend.GetFloat32(bes[len(bes)-1], y)
		require.NoError(t, err)
		return out
	}
	want := run(nil)
	got := run([]backend.Device{a, b})
	require.Equal(t, want, got)
}

// TestModelSplit splits a generated model's six layers over two servers
// and the local CPU (two layers each, the output with the CPU's), as
// llama.cpp's --rpc with its layer split does: with two of our servers
// the logits are bit for bit the local ones; with two of ggml's, and with
// one of each, within float rounding of them (ggml's CPU kernels round
// differently). Every device computes its share of the graph.
func TestModelSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("the model runs are in the full pass")
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, genmodel.WriteFile(path, genmodel.Config{Arch: "llama", Type: quant.F32,
		Embd: 128, Layers: 6, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 2000}))
	local := runModel(t, path, model.Options{})
	// One thread a server, ours as ggml's: ggml's CPU workers spin
	// between graphs, and two servers spinning two threads each beside
	// the client would take every core of a small machine.
	ours := func() backend.Device { return connect(t, startServer(t, &Server{Threads: 1}), Options{})[0] }
	ggmls := func() backend.Device {
		return connect(t, rpcref.StartServer(t, rpcref.Config{Threads: 1}).Addr, Options{})[0]
	}
	for _, c := range []struct {
		name  string
		a, b  func() backend.Device
		exact bool
	}{
		{"two of our servers", ours, ours, true},
		{"two of ggml's servers", ggmls, ggmls, false},
		{"ours and ggml's", ours, ggmls, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := c.a(), c.b()
			got := runModel(t, path, model.Options{Split: []backend.Device{a, b, cpu.Device()}})
			for _, d := range []backend.Device{a, b, cpu.Device()} {
				require.Positive(t, got.nodes[d.Name()], "%s computed nothing (%v)", d.Name(), got.nodes)
			}
			require.GreaterOrEqual(t, got.splits, 3)
			d := maxDiff(local.logits, got.logits)
			if c.exact {
				require.Equal(t, local.logits, got.logits, "the logits differ from the local ones (max %g)", d)
			} else {
				require.Less(t, d, 1e-3, "the logits are %g from the local ones", d)
			}
			t.Logf("%s + CPU: %d splits, nodes %v; %v a token (local %v, %.2fx), %d bytes on the wire a token, logits within %g of local",
				c.name, got.splits, got.nodes, got.perToken, local.perToken, float64(got.perToken)/float64(local.perToken), got.wire, d)
		})
	}
}
