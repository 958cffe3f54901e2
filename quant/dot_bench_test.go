package quant

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ggml-go/ggml/internal/ggmlref"
)

// benchDotN is the row length of the dot product benchmarks.
const benchDotN = 4096

// benchLibRepeat is how many copies of a row the library's timing call spans.
const benchLibRepeat = 16

// BenchmarkVecDot times VecDot on rows of benchDotN elements per type and,
// when the reference library loads, the library's CPU vec_dot on the same
// operands, reported as ggml-ns/op and ratio (ours / ggml). Each library call
// goes through purego and looks up the type traits, which costs about as much
// as the SIMD kernel itself at this length, so ggml-ns/op is measured on
// benchLibRepeat copies of the row in one call and divided by
// benchLibRepeat; ggml-call-ns/op is the cost of a call on a single block,
// nearly all overhead.
func BenchmarkVecDot(b *testing.B) {
	lib, err := ggmlref.Default()
	if err != nil {
		b.Logf("reference library absent, timing ours only: %v", err)
		lib = nil
	}
	for _, ty := range dotTypes {
		b.Run(ty.String(), func(b *testing.B) {
			x, y := benchDotOperands(b, lib, ty)
			var ggmlNs, callNs float64
			if lib != nil {
				xs, ys := bytesRepeat(x, benchLibRepeat), bytesRepeat(y, benchLibRepeat)
				ggmlNs = benchLibDot(b, lib, ty, benchLibRepeat*benchDotN, xs, ys) / benchLibRepeat
				callNs = benchLibDot(b, lib, ty, max(ty.BlockSize(), ty.VecDotType().BlockSize()), x, y)
			}
			b.SetBytes(int64(len(x) + len(y)))
			b.ResetTimer()
			var sink float32
			for i := 0; i < b.N; i++ {
				s, err := VecDot(ty, benchDotN, x, y)
				if err != nil {
					b.Fatal(err)
				}
				sink += s
			}
			b.StopTimer()
			if lib != nil {
				ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(ggmlNs, "ggml-ns/op")
				b.ReportMetric(callNs, "ggml-call-ns/op")
				b.ReportMetric(ours/ggmlNs, "ratio")
			}
			_ = sink
		})
	}
}

// benchDotOperands returns gaussian operands made by the library, or random
// bytes when it is absent (the kernels' speed does not depend on the values).
func benchDotOperands(b *testing.B, lib *ggmlref.Lib, ty Type) (x, y []byte) {
	r := rand.New(rand.NewPCG(1, uint64(ty)))
	if lib == nil {
		x = make([]byte, ty.RowSize(benchDotN))
		y = make([]byte, ty.VecDotType().RowSize(benchDotN))
		for i := range x {
			x[i] = byte(r.Uint32())
		}
		for i := range y {
			y[i] = byte(r.Uint32())
		}
		return x, y
	}
	xs, ys := make([]float32, benchDotN), make([]float32, benchDotN)
	for i := range xs {
		xs[i], ys[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	x, err := lib.QuantizeChunk(uint32(ty), xs, 1, benchDotN, nil)
	if err != nil {
		b.Fatal(err)
	}
	y, err = lib.FromFloatCPU(uint32(ty.VecDotType()), ys)
	if err != nil {
		b.Fatal(err)
	}
	return x, y
}

func bytesRepeat(b []byte, k int) []byte {
	out := make([]byte, 0, k*len(b))
	for range k {
		out = append(out, b...)
	}
	return out
}

// benchLibDot returns the library's ns per vec_dot of n elements, averaged
// over b.N calls (at least 100).
func benchLibDot(b *testing.B, lib *ggmlref.Lib, ty Type, n int, x, y []byte) float64 {
	iters := max(b.N, 100)
	start := time.Now()
	for i := 0; i < iters; i++ {
		if _, err := lib.VecDot(uint32(ty), int64(n), x, y); err != nil {
			b.Fatal(err)
		}
	}
	return float64(time.Since(start).Nanoseconds()) / float64(iters)
}
