package bench

import (
	"flag"
	"fmt"
	"strconv"
	"testing"

	"github.com/ggml-go/ggml/internal/testkit/block"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/quant"
)

// The figures' flags, after -args: go test ./bench -run '^$' -bench MatMul
// -benchtime 1x -args -b CPU -types q4_0 -n 1 -threads 1.
var (
	flagDevice  = flag.String("b", "CPU", "device our side runs on")
	flagTypes   = flag.String("types", "f32,f16,q8_0,q4_0,q4_K,q6_K", "matmul weight types")
	flagN       = flag.String("n", "1,32,256", "matmul column counts")
	flagThreads = flag.String("threads", "1,2", "thread counts")
	flagPool    = flag.String("pool", "default", "ggml's threads: default or persistent")
)

func setup(b *testing.B) Setup {
	s := Setup{Device: *flagDevice, Lib: refLib(b)}
	switch *flagPool {
	case "default":
		s.Pool = ggmlref.DefaultPool
	case "persistent":
		s.Pool = ggmlref.PersistentPool
	default:
		b.Fatalf("-pool %q: want default or persistent", *flagPool)
	}
	return s
}

func ints(b *testing.B, s string) []int {
	var out []int
	for _, f := range ParseList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			b.Fatalf("%q: %v", s, err)
		}
		out = append(out, n)
	}
	return out
}

// measureCase measures c as the command does and reports our time per
// iteration (per op with Ops), ggml's and both speed ratios.
func measureCase(b *testing.B, mk func() (Case, error)) {
	b.Helper()
	c, err := mk()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var r Result
	for b.Loop() {
		if r, err = Measure(c.Figure, DefaultOptions); err != nil {
			b.Fatal(err)
		}
	}
	ops := float64(max(c.Ops, 1))
	b.ReportMetric(float64(r.Ours.Wall.Nanoseconds())/ops, "ours-ns/op")
	b.ReportMetric(float64(r.Ours.CPU.Nanoseconds())/ops, "ours-cpu-ns/op")
	if r.HasRef() {
		b.ReportMetric(float64(r.Ref.Wall.Nanoseconds())/ops, "ggml-ns/op")
		b.ReportMetric(r.SpeedWall(), "speed")
		b.ReportMetric(r.SpeedCPU(), "speed-cpu")
	}
}

// BenchmarkMatMul is ggml bench matmul: MUL_MAT 4096x4096 by N columns.
func BenchmarkMatMul(b *testing.B) {
	s := setup(b)
	for _, name := range ParseList(*flagTypes) {
		t, err := quant.ParseType(name)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range ints(b, *flagN) {
			for _, th := range ints(b, *flagThreads) {
				b.Run(fmt.Sprintf("%s/n=%d/threads=%d", t, n, th), func(b *testing.B) {
					measureCase(b, func() (Case, error) { return s.Graph("matmul", th, 1, MatMul(t, n)) })
				})
			}
		}
	}
}

// BenchmarkDispatch is ggml bench dispatch: a 1000-op chain of ADDs of
// 16 floats, and of 4096 (split across the threads).
func BenchmarkDispatch(b *testing.B) {
	s := setup(b)
	for _, elems := range []int{16, 4096} {
		for _, th := range ints(b, *flagThreads) {
			b.Run(fmt.Sprintf("elems=%d/threads=%d", elems, th), func(b *testing.B) {
				measureCase(b, func() (Case, error) { return s.Graph("dispatch", th, DispatchOps, Dispatch(elems)) })
			})
		}
	}
}

// BenchmarkDemo is ggml bench demo: the demo's decoder block at its
// default size and at embd 2048 with 32 tokens.
func BenchmarkDemo(b *testing.B) {
	s := setup(b)
	for _, size := range []struct{ embd, tokens int }{{256, 8}, {2048, 32}} {
		d, err := block.NewDims(size.embd, size.tokens, 64, true)
		if err != nil {
			b.Fatal(err)
		}
		for _, th := range ints(b, *flagThreads) {
			b.Run(fmt.Sprintf("embd=%d/tokens=%d/threads=%d", size.embd, size.tokens, th), func(b *testing.B) {
				measureCase(b, func() (Case, error) { return s.Graph("demo", th, 1, Demo(d, 1)) })
			})
		}
	}
}

// BenchmarkQuantSpeed is ggml bench quant: Quantize against
// ggml_quantize_chunk and the activation formats' from_float.
func BenchmarkQuantSpeed(b *testing.B) {
	s := setup(b)
	for _, t := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K} {
		b.Run("quantize/"+t.String(), func(b *testing.B) { measureCase(b, func() (Case, error) { return s.Quantize(t, false) }) })
	}
	for _, t := range []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K} {
		b.Run("from_float/"+t.String(), func(b *testing.B) { measureCase(b, func() (Case, error) { return s.Quantize(t, true) }) })
	}
}
