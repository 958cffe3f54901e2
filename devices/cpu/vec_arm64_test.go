//go:build !purego

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVecSwiGLUNEON: the NEON SwiGLU takes e^-x from our own vector expf,
// not from ggml's vector e^x that the portable set reproduces (ggml's NEON
// build's is that algorithm with fused multiply-adds, not yet ours here),
// so the two agree within float rounding: over inputs from every 997th
// float32 (both signs, every exponent, infinities, NaN) with random gates,
// and at every length around its groups of four, without writing past the
// end.
func TestVecSwiGLUNEON(t *testing.T) {
	var xs []float32
	for b := uint64(0); b < 1<<32; b += 997 {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	r := rand.New(rand.NewPCG(6, 2))
	g := randF32(r, len(xs))
	got, want := make([]float32, len(xs)), make([]float32, len(xs))
	levelNEON.kernels().vec.swiglu(got, xs, g)
	genericVec.swiglu(want, xs, g)
	for i := range xs {
		w, v := float64(want[i]), float64(got[i])
		ok := w == v || w != w && v != v || math.Abs(w-v) <= 4e-7*math.Abs(w) || math.Abs(w-v) < 1e-37
		if !ok {
			t.Fatalf("swiglu(%v (%#x), %v) = %v, portable %v", xs[i], math.Float32bits(xs[i]), g[i], got[i], want[i])
		}
	}
	for n := range 20 {
		x, g := randF32(r, n), randF32(r, n)
		for i := range x {
			x[i] *= 30
		}
		got, want := randF32(r, n), make([]float32, n)
		tail := append([]float32(nil), got[:n+guard][n:]...)
		levelNEON.kernels().vec.swiglu(got, x, g)
		genericVec.swiglu(want, x, g)
		requireClose(t, want, got, 1e-6, "n=%d", n)
		require.Equal(t, tail, got[:n+guard][n:], "n=%d wrote past the end", n)
	}
}
