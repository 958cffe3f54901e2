package bench

import (
	"math/rand/v2"
	"testing"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/quant"
)

const (
	dotN = 4096
	// dotRows is how many rows one timed call covers: a purego call costs
	// about as much as ggml's SIMD kernel on one 4096-row, so ggml's side
	// does dotRows rows per call (and ours the same rows in a loop).
	dotRows = 16
)

// BenchmarkVecDot times quant.VecDot against the CPU backend's vec_dot of
// the reference build this machine picks, on dotRows rows of dotN elements.
func BenchmarkVecDot(b *testing.B) {
	lib := refLib(b)
	for _, t := range quant.Types() {
		if _, err := quant.VecDot(t, 0, nil, nil); err != nil {
			continue
		}
		b.Run(t.String(), func(b *testing.B) {
			x, y := dotOperands(b, lib, t)
			b.SetBytes(int64(len(x) + len(y)))
			var ref func()
			if lib != nil {
				ref = func() { _, _ = lib.VecDot(uint32(t), dotRows*dotN, x, y) }
			}
			rx, ry := len(x)/dotRows, len(y)/dotRows
			SideBySide(b, func() {
				for r := range dotRows {
					_, _ = quant.VecDot(t, dotN, x[r*rx:(r+1)*rx], y[r*ry:(r+1)*ry])
				}
			}, ref)
		})
	}
}

// dotOperands returns dotRows rows of gaussian operands, quantized by the
// library when it is loaded and by us otherwise.
func dotOperands(b *testing.B, lib *ggmlref.Lib, t quant.Type) (x, y []byte) {
	r := rand.New(rand.NewPCG(1, uint64(t)))
	xs, ys := make([]float32, dotRows*dotN), make([]float32, dotRows*dotN)
	for i := range xs {
		xs[i], ys[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	var err error
	if lib != nil {
		if x, err = lib.QuantizeChunk(uint32(t), xs, dotRows, dotN, nil); err == nil {
			y, err = lib.FromFloatCPU(uint32(t.VecDotType()), ys)
		}
	} else if x, err = quant.Quantize(t, xs, dotRows, dotN, nil); err == nil {
		y, err = quant.Quantize(t.VecDotType(), ys, dotRows, dotN, nil)
	}
	if err != nil {
		b.Skipf("%s operands: %v", t, err)
	}
	return x, y
}
