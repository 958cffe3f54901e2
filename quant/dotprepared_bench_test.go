package quant

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPreparedRows times the prepared kernels over a 4096x4096
// weight (from memory, as a product's N=1 column meets it) and over 64
// rows of it (from cache).
func BenchmarkPreparedRows(b *testing.B) {
	const n = 4096
	for _, ty := range preparedTypes {
		r := rand.New(rand.NewPCG(1, uint64(ty)))
		rs := int(ty.RowSize(n))
		xs, ys := make([]float32, n*n), make([]float32, n)
		for i := range xs {
			xs[i] = float32(r.NormFloat64())
		}
		for i := range ys {
			ys[i] = float32(r.NormFloat64())
		}
		x, err := Quantize(ty, xs, n, n, nil)
		if err != nil {
			b.Fatal(err)
		}
		y, err := Quantize(ty.VecDotType(), ys, 1, n, nil)
		if err != nil {
			b.Fatal(err)
		}
		rows := DotRowsKernel(ty)
		for _, nrows := range []int{64, n} {
			out := make([]float32, nrows)
			b.Run(ty.String()+"/"+map[int]string{64: "cache", n: "memory"}[nrows], func(b *testing.B) {
				for b.Loop() {
					rows(n, x, uint64(rs), nrows, y, out)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nrows*n)*1000, "ps/product")
			})
		}
	}
}
