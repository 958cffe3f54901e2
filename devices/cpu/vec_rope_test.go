package cpu

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVecRopeBits: the processor's rotations, in place and not, over row
// lengths around the assembly's groups of eight pairs (NeoX) and four
// pairs (adjacent), are bit for bit the portable loops (NEON), or on the
// amd64 levels (avx2 and those built over it) the haswell build's fused
// rotations (ropeFusedRef).
func TestVecRopeBits(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 3))
	neox, normal := genericVec.ropeNeox, genericVec.ropeNormal
	if runtime.GOARCH == "amd64" && vec.name != genericVec.name {
		neox, normal = func(y, x, cs []float32) { ropeFusedRef(y, x, cs, true) }, func(y, x, cs []float32) { ropeFusedRef(y, x, cs, false) }
	}
	for n := 0; n <= 80; n += 2 {
		for _, op := range []struct {
			name     string
			got, gen func(y, x, cs []float32)
		}{{"neox", vec.ropeNeox, neox}, {"normal", vec.ropeNormal, normal}} {
			x, cs := randF32(r, n), randF32(r, n)
			got, want := randF32(r, n), make([]float32, n)
			tail := append([]float32(nil), got[:n+guard][n:]...)
			op.got(got, x, cs)
			op.gen(want, x, cs)
			require.Equal(t, want, got, "%s n=%d", op.name, n)
			require.Equal(t, tail, got[:n+guard][n:], "%s n=%d wrote past the end", op.name, n)
			copy(got, x)
			op.got(got, got, cs)
			require.Equal(t, want, got, "%s in place n=%d", op.name, n)
		}
	}
}

// ropeFusedRef is the haswell build's rotation (rope_amd64.s), x_a's
// products fused through fma32.
func ropeFusedRef(y, x, cs []float32, neox bool) {
	h := len(x) / 2
	for i := range h {
		a, b := 2*i, 2*i+1
		if neox {
			a, b = i, h+i
		}
		c, s := cs[2*i], cs[2*i+1]
		xa, xb := x[a], x[b]
		y[a] = fma32(xa, c, -float32(xb*s))
		y[b] = fma32(xa, s, float32(xb*c))
	}
}
