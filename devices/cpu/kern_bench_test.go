package cpu

import (
	"math/rand"
	"testing"

	"github.com/ggml-go/ggml/quant"
)

func BenchmarkKern(b *testing.B) {
	t := &testing.T{}
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.Q8_0, quant.Q4_0, quant.Q4_K, quant.Q6_K} {
		rng := rand.New(rand.NewSource(1))
		tr := fastKernels().traits[typ]
		x, _ := randomRow(t, rng, typ, 4096, 64, false)
		var ys [4][]byte
		for c := range ys {
			ys[c], _ = randomRow(t, rng, tr.vecDotType, 4096, 0, false)
		}
		var out [4]float32
		b.Run(typ.String()+"/x1", func(b *testing.B) {
			for b.Loop() {
				tr.vecDot(4096, x, ys[0])
			}
			b.ReportMetric(float64(b.N)*2*4096/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(typ.String()+"/x4", func(b *testing.B) {
			for b.Loop() {
				tr.vecDot4(4096, x, &ys, &out)
			}
			b.ReportMetric(float64(b.N)*8*4096/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
