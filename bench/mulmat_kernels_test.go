//go:build unix

package bench

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// BenchmarkMulMatKernels is the matrix-product kernels' side-by-side check:
// MUL_MAT of a 4096x4096 weight matrix with N F32 columns, ours (the CPU
// engine's fastest kernel set, or the generic one under GGML_CPU_GENERIC=1)
// and ggml's CPU backend on the very same memory, 1 thread, interleaved
// repetitions. It reports medians of wall and CPU (process user+system)
// time for both and the speed ratios ours/ggml (above 1: we are faster):
//
//	go test ./bench -run '^$' -bench MulMatKernels -benchtime 1x
//
// MULMAT_TYPES (default f32,f16,q8_0,q4_0,q4_K,q6_K), MULMAT_N (default
// 1,32,256) and MULMAT_REPS (default 5) narrow or widen it.
func BenchmarkMulMatKernels(b *testing.B) {
	lib := refLib(b)
	if lib == nil {
		b.Skip("needs the reference ggml")
	}
	types := envList("MULMAT_TYPES", "f32,f16,q8_0,q4_0,q4_K,q6_K")
	ns := envList("MULMAT_N", "1,32,256")
	reps, _ := strconv.Atoi(os.Getenv("MULMAT_REPS"))
	reps = max(reps, 5)
	for _, ts := range types {
		typ, err := quant.ParseType(ts)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range ns {
			n, err := strconv.Atoi(s)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/N=%d", typ, n), func(b *testing.B) {
				mm, err := newMulMatPair(lib, typ, 4096, 4096, n)
				if err != nil {
					b.Fatal(err)
				}
				defer mm.close()
				for b.Loop() {
					mm.measure(b, reps)
				}
			})
		}
	}
}

func envList(name, def string) []string {
	if v := os.Getenv(name); v != "" {
		return strings.Split(v, ",")
	}
	return strings.Split(def, ",")
}

// mulMatPair is one product set up on both sides over shared memory: the
// operands live in ggml's context, our tensors view them.
type mulMatPair struct {
	flop    float64
	ctx     *ggmlref.Context
	backend *ggmlref.Backend
	cg      *ggmlref.Graph
	engine  *cpu.Engine
	ours    *graph.Tensor
}

func newMulMatPair(lib *ggmlref.Lib, typ quant.Type, k, m, n int) (*mulMatPair, error) {
	wBytes := uint64(typ.RowSize(int64(k))) * uint64(m)
	mem := wBytes + uint64(4*k*n+4*m*n) + 8*lib.TensorOverhead() + lib.GraphOverhead(8) + 1<<16
	ctx, err := lib.NewContext(mem, false)
	if err != nil {
		return nil, err
	}
	p := &mulMatPair{flop: 2 * float64(k) * float64(m) * float64(n), ctx: ctx}
	fail := func(err error) (*mulMatPair, error) { p.close(); return nil, err }
	w, err := ctx.NewTensor(uint32(typ), [4]int64{int64(k), int64(m), 1, 1})
	if err != nil {
		return fail(err)
	}
	x, err := ctx.NewTensor(uint32(quant.F32), [4]int64{int64(k), int64(n), 1, 1})
	if err != nil {
		return fail(err)
	}
	out, err := ctx.NewTensor(uint32(quant.F32), [4]int64{int64(m), int64(n), 1, 1})
	if err != nil {
		return fail(err)
	}
	out.Op = int32(ops.MulMat)
	out.Src[0], out.Src[1] = w, x
	// The weights of ggml-reference.md section 3.1.
	wf := make([]float32, k*m)
	s := uint32(1)
	for i := range wf {
		s = s*1664525 + 1013904223
		wf[i] = (float32(s>>8)/(1<<24) - 0.5) * 0.2
	}
	wq, err := quant.Quantize(typ, wf, m, k, nil)
	if err != nil {
		return fail(err)
	}
	wData := unsafe.Slice((*byte)(w.Data), wBytes)
	copy(wData, wq)
	xData := unsafe.Slice((*byte)(x.Data), 4*k*n)
	for i := range k * n {
		*(*float32)(unsafe.Pointer(&xData[4*i])) = float32(math.Sin(float64(i) * 0.01))
	}
	if p.cg, err = ctx.NewGraph(8); err != nil {
		return fail(err)
	}
	if err := p.cg.BuildForwardExpand(out); err != nil {
		return fail(err)
	}
	if p.backend, err = lib.NewCPUBackend(1); err != nil {
		return fail(err)
	}

	gc := graph.NewContext(graph.ContextOptions{})
	ow, ox := gc.NewTensor(typ, int64(k), int64(m)), gc.NewTensor(quant.F32, int64(k), int64(n))
	p.ours = gc.MulMat(ow, ox)
	if err := gc.Err(); err != nil {
		return fail(err)
	}
	ow.Data, ox.Data = wData, xData
	p.ours.Data = make([]byte, 4*m*n)
	p.engine = cpu.New(cpu.Options{Threads: 1})
	return p, nil
}

func (p *mulMatPair) close() {
	if p.engine != nil {
		p.engine.Close()
	}
	if p.backend != nil {
		p.backend.Free()
	}
	p.ctx.Free()
}

// measure runs reps interleaved rounds (after one warm-up of each side),
// each timing enough computes to fill 100 ms, and reports the medians.
func (p *mulMatPair) measure(b *testing.B, reps int) {
	oursRun := func() {
		if err := p.engine.ComputeNode(p.ours); err != nil {
			b.Fatal(err)
		}
	}
	ggmlRun := func() {
		if err := p.backend.Compute(p.cg); err != nil {
			b.Fatal(err)
		}
	}
	oursRun()
	ggmlRun()
	var ow, oc, gw, gc []float64
	for range reps {
		w, c := timeRuns(oursRun)
		ow, oc = append(ow, w), append(oc, c)
		w, c = timeRuns(ggmlRun)
		gw, gc = append(gw, w), append(gc, c)
	}
	mw, mc, rw, rc := median(ow), median(oc), median(gw), median(gc)
	b.ReportMetric(mw*1e3, "ours-ms")
	b.ReportMetric(rw*1e3, "ggml-ms")
	b.ReportMetric(p.flop/mc/1e9, "ours-cpu-GFLOP/s")
	b.ReportMetric(p.flop/rc/1e9, "ggml-cpu-GFLOP/s")
	b.ReportMetric(rw/mw, "ratio-wall")
	b.ReportMetric(rc/mc, "ratio-cpu")
	b.Logf("kernels %s: ours %.3f ms wall %.3f ms cpu, ggml %.3f ms wall %.3f ms cpu; ours/ggml speed %.2f wall %.2f cpu",
		p.engine.Kernels(), mw*1e3, mc*1e3, rw*1e3, rc*1e3, rw/mw, rc/mc)
}

// timeRuns returns the wall and CPU seconds per call of f over at least
// one call and 100 ms.
func timeRuns(f func()) (wall, cpuTime float64) {
	c0 := cpuSeconds()
	t0 := time.Now()
	n := 0
	for n == 0 || time.Since(t0) < 100*time.Millisecond {
		f()
		n++
	}
	return time.Since(t0).Seconds() / float64(n), (cpuSeconds() - c0) / float64(n)
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
