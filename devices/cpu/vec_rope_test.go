package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVecSincosBits: the processor's sincos is the portable one bit for
// bit over angles from every 997th float32 and float64 bit pattern (both
// signs, every exponent: zeros, subnormals, the largest angles the
// three-part reduction takes and the ones past it, infinities, NaN), at
// every length around the assembly's groups.
func TestVecSincosBits(t *testing.T) {
	t.Logf("vector primitives: %s", vec.name)
	xs := sincosAngles()
	s, c := make([]float64, len(xs)), make([]float64, len(xs))
	vec.sincos(s, c, xs)
	for i, x := range xs {
		requireSincos(t, x, s[i], c[i])
	}
	for n := range 12 {
		x := xs[1000 : 1000+n]
		s, c := make([]float64, n+guard), make([]float64, n+guard)
		vec.sincos(s[:n], c[:n], x)
		for i := range x {
			ws, wc := sincos(x[i])
			require.Equal(t, ws, s[i], "n=%d [%d]", n, i)
			require.Equal(t, wc, c[i], "n=%d [%d]", n, i)
		}
		require.Equal(t, make([]float64, guard), s[n:], "n=%d wrote past the end", n)
		require.Equal(t, make([]float64, guard), c[n:], "n=%d wrote past the end", n)
	}
}

// sincosAngles are TestVecSincosBits's angles, and rope's: positions up
// to a long context times powers of the frequency step.
func sincosAngles() []float64 {
	var xs []float64
	for b := uint64(0); b < 1<<32; b += 997 {
		xs = append(xs, float64(math.Float32frombits(uint32(b))))
	}
	for b := uint64(0); b < 1<<32; b += 997 {
		xs = append(xs, math.Float64frombits(b*0x100000001+b<<16))
	}
	r := rand.New(rand.NewPCG(4, 4))
	for range 200000 {
		xs = append(xs, float64(float32(r.IntN(1<<20))*float32(math.Pow(10000, -r.Float64()))))
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 1 << 29, math.Nextafter(1<<29, 0), -(1 << 29), math.Inf(1), math.Inf(-1),
		math.NaN(), math.Pi / 4, math.Pi / 2, math.Pi, 3 * math.Pi / 4, 1e-300, 5e-324} {
		xs = append(xs, x, -x)
	}
	// Angles (float32, 3e6 to 2e7) whose sincos changes when only the
	// last reduction step, z - y*pi4C, is fused: 16 of the 179 such
	// float32 below 2^29, found by trying them all once. The sweeps above
	// catch fused polynomial steps, not this one.
	for _, b := range []uint32{0x4a383703, 0x4ab6e0d6, 0x4ab83703, 0x4b107508, 0x4b36e0d6, 0x4b383703, 0x4b893307, 0x4b907508,
		0x4ba10324, 0x4ba9c238, 0x4bb6e0d6, 0x4bb83703, 0x4c05c7d8, 0x4c093307, 0x4c107508, 0x4c210324} {
		x := float64(math.Float32frombits(b))
		xs = append(xs, x, -x)
	}
	return xs
}

// requireSincos fails unless s, c are the portable sincos(x) bit for bit
// (any NaN for a NaN).
func requireSincos(t *testing.T, x, s, c float64) {
	if ws, wc := sincos(x); !sameBits(ws, s) || !sameBits(wc, c) {
		t.Helper()
		t.Fatalf("sincos(%v (%#x)) = %v, %v; portable: %v, %v", x, math.Float64bits(x), s, c, ws, wc)
	}
}

func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b
}

// TestSincosIsStd: where the compiler fuses no multiply-add (amd64 below
// GOAMD64=v3, stdUnfused) math.Sincos performs exactly the portable
// sincos's operations, so the two agree bit for bit over
// TestVecSincosBits's angles, and both with math.Sin and math.Cos: rope's
// cache keeps the bits ggml's separate sinf and cosf calls had in Go.
// Where it fuses, math.Sincos's bits move (that is why sincos is ours):
// there the exact check skips, and sincos must stay within 2^-50 of
// math.Sin and math.Cos, which catches a wrong octant, sign or
// coefficient but not a changed rounding.
func TestSincosIsStd(t *testing.T) {
	for _, x := range sincosAngles() {
		s, c := sincos(x)
		if !stdUnfused {
			if math.Abs(s-math.Sin(x)) > 0x1p-50 || math.Abs(c-math.Cos(x)) > 0x1p-50 {
				t.Fatalf("sincos(%v) = %v, %v; math.Sin, math.Cos: %v, %v", x, s, c, math.Sin(x), math.Cos(x))
			}
			continue
		}
		ws, wc := math.Sincos(x)
		if !sameBits(ws, s) || !sameBits(wc, c) || !sameBits(math.Sin(x), s) || !sameBits(math.Cos(x), c) {
			t.Fatalf("sincos(%v (%#x)) = %v, %v; math.Sincos: %v, %v; math.Sin, math.Cos: %v, %v", x, math.Float64bits(x),
				s, c, ws, wc, math.Sin(x), math.Cos(x))
		}
	}
	if !stdUnfused {
		t.Skip("math.Sincos is compiled with fused multiply-adds here (arm64, or GOAMD64=v3 and up): " +
			"only the 2^-50 bound was checked, not its bits")
	}
}

// TestVecRopeBits: the processor's rotations, in place and not, over row
// lengths around the assembly's groups of eight pairs (NeoX) and four
// pairs (adjacent), are bit for bit the portable loops, or on AVX2 the
// haswell build's fused rotations (ropeFusedRef).
func TestVecRopeBits(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 3))
	neox, normal := genericVec.ropeNeox, genericVec.ropeNormal
	if vec.name == "avx2" {
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

// TestVecSincosSpecialLanes: a group of four with a single angle the
// assembly does not reduce (a zero, -0, an infinity, NaN, 2^29 or more),
// at each position, among ordinary angles, comes out as the portable
// sincos's, which for these is math.Sincos's.
func TestVecSincosSpecialLanes(t *testing.T) {
	for _, odd := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1 << 29, -(1 << 30), 1e300} {
		ws, wc := math.Sincos(odd)
		s, c := sincos(odd)
		require.True(t, sameBits(ws, s) && sameBits(wc, c), "sincos(%v) is not math.Sincos's", odd)
		for at := range 12 {
			x := []float64{0.5, 1.5, -2.5, 3.5, 100.25, -7, 9, 11, 13.5, -15, 17, 19}
			x[at] = odd
			s, c := make([]float64, len(x)), make([]float64, len(x))
			vec.sincos(s, c, x)
			for i, v := range x {
				requireSincos(t, v, s[i], c[i])
			}
		}
	}
}
