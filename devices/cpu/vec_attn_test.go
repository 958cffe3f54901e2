package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// TestVecExpfBits: the processor's vector e^x is expf bit for bit over
// every 997th float32 (both signs, every exponent), at the edges of its
// range and on the special values, at every length around the assembly's
// groups of four, in place and not. It pins the kernels' constants,
// polynomial, scaling and special cases; it cannot see whether they fuse
// their multiply-adds: evaluated with every product fused (math.FMA),
// expf gives the same float32 for every input it does not clamp (all
// 2^32 were tried once), the float64 differences vanishing in the rounding
// to float32.
func TestVecExpfBits(t *testing.T) {
	t.Logf("vector primitives: %s", vec.name)
	var xs []float32
	for b := uint64(0); b < 1<<32; b += 997 {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	inf := float32(math.Inf(1))
	for _, x := range []float32{0, -0.0, 1, -1, inf, -inf, float32(math.NaN()), 88.72284, 88.722845, 88.7228, -103.97208,
		-103.9721, -103.972, -87.33654, -87.3366, -149.5, 103.97208, 1e-30, -1e-30} {
		xs = append(xs, x, math.Nextafter32(x, inf), math.Nextafter32(x, -inf))
	}
	got := make([]float32, len(xs))
	vec.expf(got, xs)
	for i, x := range xs {
		if want := expf(x); math.Float32bits(want) != math.Float32bits(got[i]) {
			t.Fatalf("expf(%v (%#x)) = %v, want %v", x, math.Float32bits(x), got[i], want)
		}
	}
	r := rand.New(rand.NewPCG(3, 5))
	for n := range 20 {
		src := randF32(r, n)
		for i := range src {
			src[i] *= 20
		}
		dst := randF32(r, n)
		tail := append([]float32(nil), dst[:n+guard][n:]...)
		vec.expf(dst, src)
		for i, x := range src {
			require.Equal(t, expf(x), dst[i], "n=%d [%d]", n, i)
		}
		require.Equal(t, tail, dst[:n+guard][n:], "n=%d wrote past the end", n)
		want := make([]float32, n)
		copy(want, dst)
		vec.expf(dst, dst)
		genericVec.expf(want, want)
		require.Equal(t, want, dst, "in place n=%d", n)
	}
}

// TestVecF32ToF16Bits: the processor's conversion is quant.FP32ToFP16 bit
// for bit, NaNs included (any payload, both signs): over every 997th
// float32, the rounding boundaries of the half range, and every length
// around the assembly's groups of eight.
func TestVecF32ToF16Bits(t *testing.T) {
	var xs []float32
	for b := uint64(0); b < 1<<32; b += 997 {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	for _, b := range []uint32{0x7f800001, 0xff800001, 0x7fc00000, 0xffc00000, 0x7fffffff, 0xffffffff, 0x7fa00000,
		0x7f802000, 0x477ff000, 0x477fefff, 0x38800000, 0x387fffff, 0x33000000, 0x33000001, 0x32ffffff, 0x7f800000, 0xff800000} {
		xs = append(xs, math.Float32frombits(b))
	}
	for e := 100; e < 150; e++ {
		// Halfway and near-halfway mantissas around every exponent of
		// the half range, normal and subnormal.
		for _, m := range []uint32{0x1000, 0xfff, 0x1001, 0x3000, 0x2fff, 0x7fffff, 0x400000, 0x3fffff} {
			xs = append(xs, math.Float32frombits(uint32(e)<<23|m), -math.Float32frombits(uint32(e)<<23|m))
		}
	}
	got := make([]uint16, len(xs))
	vec.f32ToF16(got, xs)
	for i, x := range xs {
		if want := quant.FP32ToFP16(x); want != got[i] {
			t.Fatalf("f32ToF16(%#x) = %#x, want %#x", math.Float32bits(x), got[i], want)
		}
	}
	r := rand.New(rand.NewPCG(9, 1))
	for n := range 40 {
		src := randF32(r, n)
		for i := range src {
			if r.IntN(5) == 0 {
				src[i] = math.Float32frombits(0x7f800000 | r.Uint32()&0x807fffff | 1)
			}
		}
		dst := randF16(r, n)
		tail := append([]uint16(nil), dst[:n+guard][n:]...)
		vec.f32ToF16(dst, src)
		for i, x := range src {
			require.Equal(t, quant.FP32ToFP16(x), dst[i], "n=%d [%d] %#x", n, i, math.Float32bits(x))
		}
		require.Equal(t, tail, dst[:n+guard][n:], "n=%d wrote past the end", n)
	}
}

// attnCase is a K or V block as flash attention sees it: nrows rows of d
// fp16 values, stride bytes apart, at byte offset off of the data (odd
// offsets leave the rows unaligned).
func attnCase(r *rand.Rand, nrows, d int, stride, off uint64) []byte {
	data := make([]byte, off+uint64(nrows)*stride)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for row := range nrows {
		for i := range d {
			h := quant.FP32ToFP16(float32(r.NormFloat64()))
			o := off + uint64(row)*stride + uint64(2*i)
			data[o], data[o+1] = byte(h), byte(h>>8)
		}
	}
	return data[off:]
}

// attnKeys picks the rows a mask would let through: each with
// probability keep, in order.
func attnKeys(r *rand.Rand, nrows int, keep float64) []int32 {
	var keys []int32
	for i := range nrows {
		if r.Float64() < keep {
			keys = append(keys, int32(i))
		}
	}
	return keys
}

// TestVecAttnF16 checks flash attention's fused F16 steps against the
// same steps composed of the processor's primitives (bit for bit: they
// promise the same arithmetic) and of the portable ones (within float
// rounding), over head sizes around the assembly's pieces of 64, 8 and 1,
// strides wider than a row, unaligned rows, every key or a few, and
// weights that rescale often (a new maximum) or never.
func TestVecAttnF16(t *testing.T) {
	t.Logf("vector primitives: %s", vec.name)
	composed := composeAttn(vec)
	r := rand.New(rand.NewPCG(21, 4))
	for _, d := range []int{1, 2, 7, 8, 9, 15, 16, 31, 32, 33, 40, 63, 64, 65, 72, 80, 96, 127, 128, 129, 192, 256} {
		for _, nrows := range []int{1, 3, 64, 131} {
			stride := uint64(2*d) + 2*uint64(r.IntN(3))*8
			for _, off := range []uint64{0, 1} {
				keep := []float64{1, 0.5, 0.1}[r.IntN(3)]
				keys := attnKeys(r, nrows, keep)
				kd, vd := attnCase(r, nrows, d, stride, off), attnCase(r, nrows, d, stride, off)

				q16 := randF16(r, d)
				qr := make([]float32, d)
				genericVec.f16ToF32(qr, q16)
				tmp := make([]uint16, d)
				got, want, gen := make([]float32, len(keys)+guard), make([]float32, len(keys)), make([]float32, len(keys))
				vec.attnScoresF16(got[:len(keys)], keys, kd, stride, q16, qr, tmp)
				composed.attnScoresF16(want, keys, kd, stride, q16, qr, tmp)
				genericVec.attnScoresF16(gen, keys, kd, stride, q16, qr, tmp)
				require.Equal(t, want, got[:len(keys)], "scores d=%d rows=%d stride=%d off=%d", d, nrows, stride, off)
				require.Equal(t, make([]float32, guard), got[len(keys):], "scores wrote past the end")
				for j, key := range keys {
					row := make([]float32, d)
					quant.FP16ToFP32Slice(row, f16RowOr(kd, uint64(key)*stride, int64(d), tmp))
					requireSum(t, gen[j], got[j], row, qr, "scores d=%d key %d", d, key)
				}

				// The scores as the softmax takes them: scaled, plus
				// mask values (some large, some negative), against the
				// running maximum; the maximum returned, the flags and
				// arguments bit for bit.
				mvs := randF32(r, len(keys))
				for j := range mvs {
					if r.IntN(4) == 0 {
						mvs[j] *= 50
					}
				}
				scale := float32(r.Float64()) + 0.01
				nmGot, nmWant := make([]bool, len(keys)), make([]bool, len(keys))
				mGot := vec.attnScoresMaxF16(got[:len(keys)], keys, kd, stride, q16, qr, tmp, scale, mvs, nmGot)
				mWant := composed.attnScoresMaxF16(want, keys, kd, stride, q16, qr, tmp, scale, mvs, nmWant)
				require.Equal(t, want, got[:len(keys)], "scores and maximum d=%d rows=%d", d, nrows)
				require.Equal(t, nmWant, nmGot, "new maxima d=%d rows=%d", d, nrows)
				require.Equal(t, math.Float32bits(mWant), math.Float32bits(mGot), "maximum d=%d rows=%d", d, nrows)

				// Weights: exponentials at most 1, a new maximum now and
				// then (on the first key always, at every key when
				// rescale is set), some exactly 1.
				ex, newMax := make([]float32, len(keys)), make([]bool, len(keys))
				rescale := r.IntN(4) == 0
				for j := range keys {
					ex[j] = r.Float32()
					if r.IntN(10) == 0 {
						ex[j] = 1
					}
					newMax[j] = rescale || j == 0 || r.IntN(8) == 0
				}
				acc0 := randF16(r, d)
				accGot := randF16(r, d)
				copy(accGot, acc0)
				tail := append([]uint16(nil), accGot[:d+guard][d:]...)
				accWant, accGen := append([]uint16(nil), acc0...), append([]uint16(nil), acc0...)
				sumGot := vec.attnAccF16(accGot, keys, vd, stride, ex, newMax, tmp)
				sumWant := composed.attnAccF16(accWant, keys, vd, stride, ex, newMax, tmp)
				sumGen := genericVec.attnAccF16(accGen, keys, vd, stride, ex, newMax, tmp)
				require.Equal(t, accWant, accGot, "acc d=%d rows=%d stride=%d off=%d", d, nrows, stride, off)
				require.Equal(t, tail, accGot[:d+guard][d:], "acc wrote past the end")
				require.Equal(t, math.Float32bits(sumWant), math.Float32bits(sumGot), "sum d=%d rows=%d", d, nrows)
				require.Equal(t, math.Float32bits(sumGen), math.Float32bits(sumGot), "sum (portable) d=%d rows=%d", d, nrows)
				requireAccClose(t, accGen, accGot, len(keys), "acc d=%d", d)
			}
		}
	}
}

// requireAccClose: fp16 accumulators after n steps of a multiply-add each
// (rounded once with a fused multiply-add, twice without) differ by at
// most an ulp of the running value per step.
func requireAccClose(t *testing.T, want, got []uint16, n int, msg string, args ...any) {
	t.Helper()
	for i := range want {
		w, g := float64(quant.FP16ToFP32(want[i])), float64(quant.FP16ToFP32(got[i]))
		tol := float64(n+1) * math.Max(math.Abs(w), 1) / 1024
		require.LessOrEqual(t, math.Abs(w-g), tol, append([]any{msg + " [%d]"}, append(args, i)...)...)
	}
}

// TestVecAttnF16Bounds: a key row past the data's end panics before the
// assembly reads it.
func TestVecAttnF16Bounds(t *testing.T) {
	d := 64
	data := make([]byte, 3*2*d)
	q16, qr, tmp := make([]uint16, d), make([]float32, d), make([]uint16, d)
	out := make([]float32, 2)
	require.Panics(t, func() { vec.attnScoresF16(out, []int32{0, 3}, data, uint64(2*d), q16, qr, tmp) })
	require.Panics(t, func() { vec.attnScoresF16(out, []int32{0, -1}, data, uint64(2*d), q16, qr, tmp) })
	nm := []bool{true, false}
	require.Panics(t, func() { vec.attnScoresMaxF16(out, []int32{0, 3}, data, uint64(2*d), q16, qr, tmp, 1, qr, nm) })
	acc, w := make([]uint16, d), []float32{1, 1}
	require.Panics(t, func() { vec.attnAccF16(acc, []int32{1, 3}, data, uint64(2*d), w, nm, tmp) })
	require.Panics(t, func() { vec.attnAccF16(acc[:9], []int32{1, -2}, data, uint64(2*d), w, nm, tmp) })
	require.NotPanics(t, func() { vec.attnAccF16(acc, []int32{0, 2}, data, uint64(2*d), w, nm, tmp) })
	require.NotPanics(t, func() { vec.attnScoresF16(out, []int32{0, 2}, data, uint64(2*d), q16, qr, tmp) })
}
