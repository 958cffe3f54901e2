//go:build !purego

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVecSwiGLUNEONBits: the NEON SwiGLU takes e^-x from the bit-exact
// vector expf, so unlike AVX2's (a polynomial within TestVecMatchesGeneric's
// tolerance) it is the portable result bit for bit: over inputs from every
// 997th float32 (both signs, every exponent, infinities, NaN) with random
// gates, and at every length around its groups of four.
func TestVecSwiGLUNEONBits(t *testing.T) {
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
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("swiglu(%v (%#x), %v) = %v, want %v", xs[i], math.Float32bits(xs[i]), g[i], got[i], want[i])
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
		require.Equal(t, want, got, "n=%d", n)
		require.Equal(t, tail, got[:n+guard][n:], "n=%d wrote past the end", n)
	}
}
