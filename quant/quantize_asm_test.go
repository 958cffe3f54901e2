//go:build (amd64 || arm64) && !purego

package quant

import (
	"math"
	"math/rand"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// asmCaseBlocks are blocks of 32 values that exercise the assembly
// quantizers' corners: zeros (and negative zeros), ties of magnitude with
// either sign first and in either half of the block, values on the
// rounding boundaries (Q8_0's exact halves, Q4_0's truncation points),
// a lone value, scales too small to invert and the smallest that are
// not, subnormals and large values, then blocks of every test
// distribution. (NaN and infinity never reach the kernels: QuantizeInto
// rejects them.)
func asmCaseBlocks(r *rand.Rand) [][]float32 {
	var blocks [][]float32
	fill := func(f func(j int) float32) {
		b := make([]float32, legacyBlock)
		for j := range b {
			b[j] = f(j)
		}
		blocks = append(blocks, b)
	}
	at := func(pos map[int]float32, rest float32) func(int) float32 {
		return func(j int) float32 {
			if v, ok := pos[j]; ok {
				return v
			}
			return rest
		}
	}
	fill(func(int) float32 { return 0 })
	fill(func(int) float32 { return float32(math.Copysign(0, -1)) })
	fill(func(j int) float32 { return float32(j%5) - 2 })
	fill(func(j int) float32 { return float32(j%7)*0.5 - 1.5 })
	fill(at(map[int]float32{3: -1, 9: 1}, 0.25))
	fill(at(map[int]float32{17: 3}, 0))
	fill(at(map[int]float32{5: -4, 20: 4}, 1))
	fill(at(map[int]float32{30: -4, 17: 4}, -1))
	fill(at(map[int]float32{15: 4, 16: -4}, 2))
	fill(at(map[int]float32{31: -2}, 0))
	fill(at(map[int]float32{0: 7, 1: -7}, 0))
	// d = 1 for both formats: Q8_0's levels are exact halves (ties away
	// from zero), Q4_0's sums x + 8.5 sit on and just off integers.
	fill(func(j int) float32 { return float32(j*8-127) + 0.5*float32(j&1) })
	fill(at(map[int]float32{0: 127}, -126.5))
	fill(func(j int) float32 { return float32(j)/2 - 8 })
	fill(func(j int) float32 { return float32(j)/4 - 8 })
	fill(func(j int) float32 { return float32(j-16) * 1e-40 })
	fill(func(j int) float32 { return float32(j+1) * 1e-39 })
	fill(func(j int) float32 { return float32(j-15) * 1e30 })
	fill(func(j int) float32 { return float32(j) * 127 / 31 })
	fill(at(map[int]float32{4: math.MaxFloat32}, -math.MaxFloat32))
	// The largest value sweeps across where 1/d overflows, for d = m/-8
	// and d = amax/127.
	for e := -136; e <= -118; e++ {
		peak := float32(math.Ldexp(1+r.Float64(), e))
		fill(at(map[int]float32{r.Intn(legacyBlock): peak}, peak/3))
		fill(at(map[int]float32{r.Intn(legacyBlock): -peak}, peak/5))
	}
	for d := range numDists {
		for range 200 {
			b := make([]float32, legacyBlock)
			fillValues(r, b, d)
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// TestQuantizeAsmMatchesGo checks the assembly Q4_0 and Q8_0 quantizers
// byte for byte against the Go reference ones, block by block, over
// runs of blocks where the assembly hands some back to Go, and over short
// runs of one to nine blocks.
func TestQuantizeAsmMatchesGo(t *testing.T) {
	if !hasQuantAsm() {
		t.Skip("no AVX2/F16C: the Go quantizers are the only ones")
	}
	r := rand.New(rand.NewSource(testSeed(t)))
	blocks := asmCaseBlocks(r)
	var src []float32
	for _, b := range blocks {
		src = append(src, b...)
	}
	for _, c := range []struct {
		typ   Type
		block func(b []byte, x []float32)
	}{{Q4_0, quantizeBlockQ4_0}, {Q8_0, quantizeBlockQ8_0}} {
		ts := c.typ.TypeSize()
		want := make([]byte, len(blocks)*ts)
		for i, b := range blocks {
			c.block(want[i*ts:(i+1)*ts], b)
		}
		got := make([]byte, len(want))
		_, err := QuantizeInto(got, c.typ, src, len(blocks), legacyBlock, nil)
		require.NoError(t, err)
		for i := range blocks {
			require.Equal(t, want[i*ts:(i+1)*ts], got[i*ts:(i+1)*ts], "%s block %d: %v", c.typ, i, blocks[i])
		}
		// Short runs from anywhere, so that a run may start or end at a
		// block the assembly hands back.
		for range 300 {
			first := r.Intn(len(blocks))
			nb := 1 + r.Intn(min(9, len(blocks)-first))
			part := make([]byte, nb*ts)
			_, err := QuantizeInto(part, c.typ, src[first*legacyBlock:(first+nb)*legacyBlock], nb, legacyBlock, nil)
			require.NoError(t, err)
			require.Equal(t, want[first*ts:(first+nb)*ts], part, "%s blocks %d-%d", c.typ, first, first+nb-1)
		}
	}
}

// TestFromFloatKernel checks the activation conversions (FromFloatKernel)
// byte for byte against the Go reference quantizers, on one long row of
// every corner block (so that the amd64 kernels' groups of eight blocks
// mix zeros, subnormals and huge values) and on short runs from anywhere
// in it; where the kernel hands a row back (a scale it cannot invert on
// arm64) the row must hold such a block. Rows with NaN or infinity, of
// partial blocks or too long for dst are handed back.
func TestFromFloatKernel(t *testing.T) {
	if !hasQuantAsm() {
		t.Skip("no AVX2/F16C: the Go quantizers are the only ones")
	}
	for typ := range TypeCount {
		if typ != Q8_0 && typ != Q8_1 && typ != Q8_K {
			require.Nil(t, FromFloatKernel(typ), "%s has an assembly conversion", typ)
		}
	}
	r := rand.New(rand.NewSource(testSeed(t)))
	var src []float32
	for _, b := range asmCaseBlocks(r) {
		src = append(src, b...)
	}
	reference := map[Type]func(dst []byte, src []float32, nrows, nPerRow int, imatrix []float32){
		Q8_0: blockQuantizer(Q8_0, quantizeBlockQ8_0),
		Q8_1: blockQuantizer(Q8_1, quantizeBlockQ8_1),
		Q8_K: quantizeQ8K,
	}
	for typ, ref := range reference {
		k := FromFloatKernel(typ)
		require.NotNil(t, k, "%s has no assembly conversion", typ)
		bs, ts := typ.BlockSize(), typ.TypeSize()
		row := src[:len(src)/bs*bs]
		nb := len(row) / bs
		want := make([]byte, nb*ts)
		ref(want, row, 1, len(row), nil)
		check := func(first, n int) {
			part := row[first*bs : (first+n)*bs]
			got := make([]byte, n*ts)
			if !k(got, part) {
				require.Equal(t, "arm64", runtime.GOARCH, "%s blocks %d-%d handed back on %s", typ, first, first+n-1, runtime.GOARCH)
				require.True(t, hasTinyScale(part, bs), "%s blocks %d-%d handed back without a scale too small to invert", typ, first, first+n-1)
				return
			}
			require.Equal(t, want[first*ts:(first+n)*ts], got, "%s blocks %d-%d", typ, first, first+n-1)
		}
		check(0, nb)
		for range 300 {
			first := r.Intn(nb)
			check(first, 1+r.Intn(min(9, nb-first)))
		}
		bad := make([]float32, 3*bs)
		fillValues(r, bad, 0)
		for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			b := append([]float32(nil), bad...)
			b[r.Intn(len(b))] = v
			require.False(t, k(make([]byte, 3*ts), b), "%s took a row with %v", typ, v)
		}
		require.False(t, k(make([]byte, 3*ts), bad[:3*bs-1]), "%s took a partial block", typ)
		require.False(t, k(make([]byte, 3*ts-1), bad), "%s wrote past dst", typ)
		require.True(t, k(nil, nil), "%s refused an empty row", typ)
	}
}

// hasTinyScale reports whether a block of bs values in x has a largest
// magnitude whose scale (it over 127) has no finite inverse.
func hasTinyScale(x []float32, bs int) bool {
	for i := 0; i < len(x); i += bs {
		if d := absMax(x[i:i+bs]) / 127; d != 0 && math.IsInf(float64(1/d), 0) {
			return true
		}
	}
	return false
}

// TestFromFloatKernelAVX checks the Q8_0 and Q8_1 conversions of ggml's AVX
// builds against the real one, the haswell build's from_float, on the
// corner blocks (ties, exact halves, zero and subnormal blocks, scales
// whose inverse overflows) and the test distributions, whole rows and
// random runs of blocks; off amd64 there is none.
func TestFromFloatKernelAVX(t *testing.T) {
	for typ := range TypeCount {
		if runtime.GOARCH != "amd64" || !hasQuantAsm() || (typ != Q8_0 && typ != Q8_1) {
			require.Nil(t, FromFloatKernelAVX(typ), "%s has an AVX-build conversion", typ)
		}
	}
	if runtime.GOARCH != "amd64" || !hasQuantAsm() {
		return
	}
	lib := variantLib(t, "haswell")
	r := rand.New(rand.NewSource(testSeed(t)))
	var src []float32
	for _, b := range asmCaseBlocks(r) {
		src = append(src, b...)
	}
	for _, typ := range []Type{Q8_0, Q8_1} {
		k := FromFloatKernelAVX(typ)
		require.NotNil(t, k, "%s has no AVX-build conversion", typ)
		nb, ts := len(src)/legacyBlock, typ.TypeSize()
		check := func(first, n int) {
			part := src[first*legacyBlock : (first+n)*legacyBlock]
			want, err := lib.FromFloatCPU(uint32(typ), part)
			require.NoError(t, err)
			got := make([]byte, n*ts)
			require.True(t, k(got, part), "%s blocks %d-%d handed back", typ, first, first+n-1)
			require.Equal(t, want, got, "%s blocks %d-%d", typ, first, first+n-1)
		}
		check(0, nb)
		for range 300 {
			first := r.Intn(nb)
			check(first, 1+r.Intn(min(9, nb-first)))
		}
		// The reference conversion parts from it on some of these blocks:
		// the kernel is not FromFloat's under another name.
		avx, ref := make([]byte, nb*ts), make([]byte, nb*ts)
		require.True(t, k(avx, src[:nb*legacyBlock]))
		_, err := FromFloat(ref, typ, src[:nb*legacyBlock])
		require.NoError(t, err)
		differ := 0
		for b := range nb {
			if string(avx[b*ts:(b+1)*ts]) != string(ref[b*ts:(b+1)*ts]) {
				differ++
			}
		}
		t.Logf("%s: the reference conversion differs in %d of %d blocks", typ, differ, nb)
		require.Positive(t, differ)
		bad := make([]float32, 3*legacyBlock)
		fillValues(r, bad, 0)
		for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			b := append([]float32(nil), bad...)
			b[r.Intn(len(b))] = v
			require.False(t, k(make([]byte, 3*ts), b), "%s took a row with %v", typ, v)
		}
		require.False(t, k(make([]byte, 3*ts), bad[:3*legacyBlock-1]), "%s took a partial block", typ)
		require.True(t, k(nil, nil), "%s refused an empty row", typ)
	}
}
