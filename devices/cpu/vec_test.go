package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// guard is how many values past each slice's end the tests fill with a
// sentinel, to catch a kernel writing beyond its length.
const guard = 9

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n+guard)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s[:n]
}

func randF16(r *rand.Rand, n int) []uint16 {
	s := make([]uint16, n+guard)
	for i := range s {
		s[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
	}
	return s[:n]
}

// vecLengths covers empty rows, every length through two full 32-value
// steps, and long ones.
func vecLengths() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	return append(ns, 127, 128, 129, 1000, 4096)
}

// TestVecMatchesGeneric checks the processor's primitives (assembly where
// this machine has it) against the portable ones: exactly for the plain
// element-wise ones, within float rounding where a multiply and an add
// are fused or sums are reassociated; nothing past the end is touched.
func TestVecMatchesGeneric(t *testing.T) {
	t.Logf("vector primitives: %s", vec.name)
	r := rand.New(rand.NewPCG(7, 11))
	for _, n := range vecLengths() {
		x, y := randF32(r, n), randF32(r, n)
		for _, op := range []struct {
			name     string
			got, gen func(dst, x, y []float32)
		}{{"add", vec.add, genericVec.add}, {"sub", vec.sub, genericVec.sub}, {"mul", vec.mul, genericVec.mul}, {"div", vec.div, genericVec.div}} {
			got, want := randF32(r, n), make([]float32, n)
			tail := append([]float32(nil), got[:n+guard][n:]...)
			op.got(got, x, y)
			op.gen(want, x, y)
			require.Equal(t, want, got, "%s n=%d", op.name, n)
			require.Equal(t, tail, got[:n+guard][n:], "%s n=%d wrote past the end", op.name, n)
		}

		s := float32(r.NormFloat64())
		got, want := make([]float32, n), make([]float32, n)
		copy(got, x)
		copy(want, x)
		vec.scale(got, s)
		genericVec.scale(want, s)
		require.Equal(t, want, got, "scale n=%d", n)

		acc := randF32(r, n)
		got = randF32(r, n)
		copy(got, acc)
		copy(want, acc)
		tail := append([]float32(nil), got[:n+guard][n:]...)
		vec.mad(got, x, s)
		vec.scale(got[:0], s)
		genericVec.mad(want, x, s)
		requireClose(t, want, got, 1e-6, "mad n=%d", n)

		// SwiGLU's e^x is a polynomial in the assembly: within a few
		// ulp, over gates and inputs far into both tails.
		wide := randF32(r, n)
		for i := range wide {
			wide[i] *= 30
		}
		got, want = randF32(r, n), make([]float32, n)
		tail = append([]float32(nil), got[:n+guard][n:]...)
		vec.swiglu(got, wide, y)
		genericVec.swiglu(want, wide, y)
		requireClose(t, want, got, 1e-6, "swiglu n=%d", n)
		require.Equal(t, tail, got[:n+guard][n:], "swiglu n=%d wrote past the end", n)
		require.Equal(t, tail, got[:n+guard][n:], "mad n=%d wrote past the end", n)

		requireSum(t, genericVec.dot(x, y), vec.dot(x, y), x, y, "dot n=%d", n)

		hx, hy := randF16(r, n), randF16(r, n)
		fx, fy := make([]float32, n), make([]float32, n)
		genericVec.f16ToF32(fx, hx)
		genericVec.f16ToF32(fy, hy)
		conv := make([]float32, n)
		vec.f16ToF32(conv, hx)
		require.Equal(t, fx, conv, "f16ToF32 n=%d", n)
		requireSum(t, genericVec.dotF16(hx, hy), vec.dotF16(hx, hy), fx, fy, "dotF16 n=%d", n)

		hacc := randF16(r, n)
		hgot, hwant := randF16(r, n), make([]uint16, n)
		copy(hgot, hacc)
		copy(hwant, hacc)
		htail := append([]uint16(nil), hgot[:n+guard][n:]...)
		vec.madF16(hgot, hx, s)
		genericVec.madF16(hwant, hx, s)
		requireHalvesClose(t, hwant, hgot, "madF16 n=%d", n)
		vec.scaleF16(hgot, s)
		genericVec.scaleF16(hwant, s)
		requireHalvesClose(t, hwant, hgot, "scaleF16 n=%d", n)
		require.Equal(t, htail, hgot[:n+guard][n:], "madF16/scaleF16 n=%d wrote past the end", n)
	}
}

// requireClose: relative error at most tol of the larger magnitude (plus
// tol absolute, for values near zero).
func requireClose(t *testing.T, want, got []float32, tol float64, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		d := math.Abs(float64(want[i]) - float64(got[i]))
		require.LessOrEqual(t, d, tol*(1+math.Abs(float64(want[i]))), append([]any{msg + " [%d]"}, append(args, i)...)...)
	}
}

// requireSum: two float32 sums of products x[i]*y[i] agree within the
// rounding a float32 sum of n terms may pick up, relative to the sum of
// the terms' magnitudes.
func requireSum(t *testing.T, want, got float32, x, y []float32, msg string, args ...any) {
	t.Helper()
	var mag float64
	for i := range x {
		mag += math.Abs(float64(x[i]) * float64(y[i]))
	}
	tol := float64(len(x)+1) * 6e-8 * mag
	require.LessOrEqual(t, math.Abs(float64(want)-float64(got)), tol+1e-30, append([]any{msg}, args...)...)
}

// requireHalvesClose: fp16 accumulators that differ at most by one unit in
// the last place (a fused multiply-add rounds once, the portable code
// twice).
func requireHalvesClose(t *testing.T, want, got []uint16, msg string, args ...any) {
	t.Helper()
	for i := range want {
		w, g := quant.FP16ToFP32(want[i]), quant.FP16ToFP32(got[i])
		ulp := math.Max(math.Abs(float64(w)), 6.1e-5) / 1024
		require.LessOrEqual(t, math.Abs(float64(w)-float64(g)), ulp*1.01, append([]any{msg + " [%d]"}, append(args, i)...)...)
	}
}

// TestVecSwiGLUSpecial: the assembly SwiGLU agrees with the generic one on
// infinities, NaN and inputs where e^-x overflows or vanishes.
func TestVecSwiGLUSpecial(t *testing.T) {
	inf := float32(math.Inf(1))
	x := []float32{-inf, inf, float32(math.NaN()), -100, 100, -88.5, 88.5, 0, -89, 89, -87.5, 87.5, 1e-30, -1e-30, 3, -3}
	g := make([]float32, len(x))
	for i := range g {
		g[i] = 1 + float32(i)/4
	}
	got, want := make([]float32, len(x)), make([]float32, len(x))
	vec.swiglu(got, x, g)
	genericVec.swiglu(want, x, g)
	for i := range x {
		if want[i] != want[i] {
			require.True(t, got[i] != got[i], "swiglu(%v) = %v, want NaN", x[i], got[i])
			continue
		}
		require.InDelta(t, want[i], got[i], 1e-6*(1+math.Abs(float64(want[i]))), "swiglu(%v)", x[i])
		require.Equal(t, math.Signbit(float64(want[i])), math.Signbit(float64(got[i])), "swiglu(%v) sign", x[i])
	}
}

// TestFloorSmall: floorSmall is math.Floor over the range expf gives it
// (x*log2(e)+0.5 for every 997th float32 x it does not clamp), and at
// integers and halves on both sides of zero.
func TestFloorSmall(t *testing.T) {
	check := func(v float64) {
		if got, want := floorSmall(v), math.Floor(v); float64(got) != want {
			t.Fatalf("floorSmall(%v) = %v, want %v", v, got, want)
		}
	}
	for b := uint64(0); b < 1<<32; b += 997 {
		x := float64(math.Float32frombits(uint32(b)))
		if x >= -104 && x <= 89 {
			check(x*1.4426950408889634 + 0.5)
		}
	}
	for i := -200; i <= 200; i++ {
		for _, d := range []float64{0, 0.5, -0.5, 1e-12, -1e-12} {
			check(float64(i) + d)
		}
	}
	check(math.Copysign(0, -1))
}

// TestExpf: the polynomial e^x is within one ulp of the correctly rounded
// float64 result on a sweep of every 997th float32 (both signs, every
// exponent) and handles the special values.
func TestExpf(t *testing.T) {
	differ := 0
	for b := uint64(0); b < 1<<32; b += 997 {
		x := math.Float32frombits(uint32(b))
		want := float32(math.Exp(float64(x)))
		got := expf(x)
		if x != x {
			require.True(t, got != got, "expf(NaN)")
			continue
		}
		if got != want {
			differ++
			d := int64(math.Float32bits(want)) - int64(math.Float32bits(got))
			require.True(t, d == 1 || d == -1, "expf(%v) = %v, want %v", x, got, want)
		}
	}
	require.Less(t, differ, 100, "too many last-bit differences")
	require.Equal(t, float32(math.Inf(1)), expf(float32(math.Inf(1))))
	require.Equal(t, float32(0), expf(float32(math.Inf(-1))))
	require.Equal(t, float32(1), expf(0))
}

// TestChooseVec: GGML_CPU_GENERIC=1 gives the process the generic
// primitives whatever the architecture offers, and without it the
// best level's are kept.
func TestChooseVec(t *testing.T) {
	arch := &kernelSet{name: "arch", vec: vecKernels{name: "arch"}}
	require.Equal(t, genericVec.name, chooseSet(arch, true).vec.name)
	require.Equal(t, "arch", chooseSet(arch, false).vec.name)
	require.Equal(t, fastKernels().vec.name, chooseSet(fastKernels(), false).vec.name)
	if envGeneric() {
		require.Equal(t, genericVec.name, vec.name, "GGML_CPU_GENERIC=1 but the primitives are %s", vec.name)
	}
}
