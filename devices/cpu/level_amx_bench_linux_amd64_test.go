//go:build !purego

package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// BenchmarkAMXKernel times one tile kernel call of 48 steps by 16 columns
// (zero operands), per step.
func BenchmarkAMXKernel(b *testing.B) {
	if !levelAMX.supported() {
		b.Skip()
	}
	const steps = 48
	a := make([]byte, 16*36*steps+64)
	w := make([]byte, steps*640)
	aux := make([]byte, steps*128)
	var c [2048]byte
	out := make([]float32, 256)
	var cfg [64]byte
	setTileConfig(&cfg, 16, 32)
	b.ResetTimer()
	for range b.N {
		amxDotSU32(unsafe.Pointer(&cfg), steps, 1, 36, 32, unsafe.Pointer(&a[4]), 36*steps, unsafe.Pointer(&w[0]),
			unsafe.Pointer(&aux[0]), unsafe.Pointer(&c[0]), unsafe.Pointer(&out[0]), 64, 16, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/steps, "ns/step")
}

// BenchmarkAMXGemv times products of one to 15 columns (below the
// tiles) of the real models' weight shapes on the amx level (ggml's AMX order) and, for comparison
// in one process, the avx512vnni level below it (the haswell build's
// order), at one thread.
func BenchmarkAMXGemv(b *testing.B) {
	if !levelAMX.supported() {
		b.Skip()
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q8_0, quant.Q4_K, quant.Q6_K} {
		for _, shape := range [][2]int64{{576, 1536}, {2048, 640}, {4096, 4096}} {
			k, m := shape[0], shape[1]
			if k%int64(typ.BlockSize()) != 0 {
				continue
			}
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			a := c.NewTensor(typ, k, m)
			w := make([]float32, a.NElements())
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			if _, err := quant.FromFloat(a.Data, typ, w); err != nil {
				b.Fatal(err)
			}
			for _, n := range []int64{1, 4, 15} {
				x := c.NewTensor(quant.F32, k, n)
				fillF32Wide(r, x)
				out := c.MulMat(a, x)
				for _, l := range []*level{levelAMX, levelAVX512VNNI} {
					benchLevel(b, fmt.Sprintf("%s/%dx%d/n=%d/%s", typ, k, m, n, l.name), l, out)
				}
			}
		}
	}
}

// benchLevel times MUL_MAT out on level l's kernels at one thread.
func benchLevel(b *testing.B, name string, l *level, out *graph.Tensor) {
	b.Run(name, func(b *testing.B) {
		eng := New(Options{Threads: 1})
		defer eng.Close()
		eng.kset = l.kernels()
		eng.pool.setKernels(eng.kset)
		// The thread's CPU time too: the machine's other
		// processes stretch the wall time.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		t0 := threadCPU(b)
		for range b.N {
			if err := eng.ComputeNode(out); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(threadCPU(b)-t0)/float64(b.N), "cpu-ns/op")
	})
}

// threadCPU is the calling OS thread's CPU time in nanoseconds.
func threadCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // RUSAGE_THREAD
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
