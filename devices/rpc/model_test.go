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
}

// runModel opens path on dev (nil: the CPU), evaluates a 16-token prompt
// and then decodes 8 tokens one at a time, keeping every logit.
func runModel(t *testing.T, path string, dev backend.Device) modelRun {
	t.Helper()
	traffic := func() (uint64, uint64) {
		if d, ok := dev.(*Device); ok {
			return d.Traffic()
		}
		return 0, 0
	}
	var r modelRun
	s0, _ := traffic()
	m, err := model.Open(path, model.Options{Device: dev, Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	s1, r1 := traffic()
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
	_ = r1
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
	local := runModel(t, path, nil)

	ours := startServer(t, &Server{Threads: 2, CacheDir: t.TempDir()})
	dev := connect(t, ours, Options{})[0]
	got := runModel(t, path, dev)
	require.Equal(t, local.logits, got.logits, "our server's logits differ from the local ones (max %g)", maxDiff(local.logits, got.logits))
	again := runModel(t, path, dev)
	require.Equal(t, local.logits, again.logits)
	t.Logf("local CPU: %v a token; our server: %v a token (%.2fx), %d bytes on the wire a token",
		local.perToken, got.perToken, float64(got.perToken)/float64(local.perToken), got.wire)
	t.Logf("hash cache (our server): first load sent %d bytes, second %d", got.load, again.load)
	require.Less(t, again.load, got.load/2, "the second load did not skip the cached weights")

	cacheDir := t.TempDir()
	real := rpcref.StartServer(t, rpcref.Config{CacheDir: cacheDir})
	rdev := connect(t, real.Addr, Options{})[0]
	rgot := runModel(t, path, rdev)
	d := maxDiff(local.logits, rgot.logits)
	require.Less(t, d, 1e-3, "ggml's server's logits are %g from the local ones", d)
	ragain := runModel(t, path, rdev)
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
