package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// ropeAngles are the angles ggml's rope takes cos and sin of for the
// real models (head sizes 64 and 256; bases 1e4, 1e5, 1e6; positions up
// to 2048): theta = p, then theta *= base^(-2/n) pair after pair, in
// float32.
func ropeAngles() []float32 {
	var xs []float32
	for _, c := range []struct {
		nd   int
		base float64
	}{{64, 100000}, {256, 10000}, {256, 1000000}, {128, 10000}} {
		step := float32(math.Pow(c.base, float64(-2/float32(c.nd))))
		for p := 0; p < 2048; p += 1 + p/512 {
			theta := float32(p)
			for range c.nd / 2 {
				xs = append(xs, theta)
				theta *= step
			}
		}
	}
	return xs
}

// TestLibcSincosf: libcSincosf gives glibc's sincosf bits (the process's
// libm, which ggml's builds call for ROPE) on RoPE's angles, on every
// libmStride-th float32 bit pattern (every range: tiny, below pi/4, below 120,
// the large reduction, infinities, NaN) and on random angles up to 10^4.
func TestLibcSincosf(t *testing.T) {
	m := testLibm(t)
	r := rand.New(rand.NewPCG(rand.Uint64(), 21))
	xs := append(ropeAngles(), bitPatterns(r, libmStride())...)
	for range 200000 {
		xs = append(xs, float32((r.Float64()*2-1)*math.Pow(10, r.Float64()*5-1)))
	}
	bad := 0
	for _, x := range xs {
		s, c := libcSincosf(x)
		ws, wc := m.Sincosf(x)
		if !sameFloat(s, ws) || !sameFloat(c, wc) {
			if bad++; bad <= 10 {
				t.Errorf("libcSincosf(%v (%#x)) = %v, %v; glibc %v, %v", x, math.Float32bits(x), s, c, ws, wc)
			}
		}
	}
	require.Zero(t, bad, "of %d arguments", len(xs))
}
