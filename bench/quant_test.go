package bench

import (
	"math/rand/v2"
	"testing"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/quant"
)

const (
	benchRows = 16
	benchCols = 4096
)

func benchData() ([]float32, []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, benchRows*benchCols)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 0.02)
	}
	im := make([]float32, benchCols)
	for i := range im {
		im[i] = float32(0.5 + rng.Float64())
	}
	return src, im
}

// refLib returns the reference library, or nil to benchmark ours alone.
func refLib(b *testing.B) *ggmlref.Lib {
	lib, err := ggmlref.Default()
	if err != nil {
		b.Logf("reference ggml not loaded, ours only: %v", err)
		return nil
	}
	return lib
}

// BenchmarkQuantize times Quantize against ggml_quantize_chunk (the CPU
// from_float for Q8_1/Q8_K) on 16 rows of 4096 values.
func BenchmarkQuantize(b *testing.B) {
	src, im := benchData()
	lib := refLib(b)
	for _, t := range quant.Types() {
		if !t.CanQuantize() || t == quant.F32 {
			continue
		}
		var imat []float32
		if t.RequiresImatrix() {
			imat = im
		}
		b.Run(t.String(), func(b *testing.B) {
			dst := make([]byte, t.RowSize(benchCols)*benchRows)
			b.SetBytes(int64(len(src) * 4))
			var ref func()
			if lib != nil {
				ref = func() {
					if t == quant.Q8_1 || t == quant.Q8_K {
						_, _ = lib.FromFloatCPU(uint32(t), src)
					} else {
						_, _ = lib.QuantizeChunk(uint32(t), src, benchRows, benchCols, imat)
					}
				}
			}
			SideBySide(b, func() { _, _ = quant.QuantizeInto(dst, t, src, benchRows, benchCols, imat) }, ref)
		})
	}
}

// BenchmarkDequantize times Dequantize against the type's to_float.
func BenchmarkDequantize(b *testing.B) {
	src, im := benchData()
	lib := refLib(b)
	for _, t := range quant.Types() {
		if !t.CanDequantize() || t == quant.F32 {
			continue
		}
		b.Run(t.String(), func(b *testing.B) {
			var q []byte
			var err error
			switch {
			case t.CanQuantize():
				q, err = quant.Quantize(t, src, benchRows, benchCols, im)
			case lib != nil:
				q, err = lib.QuantizeChunk(uint32(t), src, benchRows, benchCols, im)
			default:
				b.Skipf("%s: no quantizer here and no reference library to make input", t)
			}
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]float32, len(src))
			b.SetBytes(int64(len(src) * 4))
			var ref func()
			if lib != nil {
				if tr, _ := lib.Traits(uint32(t)); tr.HasToFloat() {
					ref = func() { _, _ = lib.ToFloat(uint32(t), q, int64(len(src))) }
				}
			}
			SideBySide(b, func() { _ = quant.DequantizeInto(dst, t, q) }, ref)
		})
	}
}
