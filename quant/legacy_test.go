package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// TestMXFP4ExponentAtPowersOfTwo checks the block exponent, which ggml takes
// from floorf(log2f(amax)), where log2f rounds up to the next integer: for
// amax at and just around every power of two, subnormals included.
func TestMXFP4ExponentAtPowersOfTwo(t *testing.T) {
	lib := reftest.Lib(t)
	r := rand.New(rand.NewSource(testSeed(t)))
	var src []float32
	for k := -149; k <= 127; k++ {
		p := math.Float32bits(float32(math.Ldexp(1, k)))
		for j := -130; j <= 8; j++ {
			b := int64(p) + int64(j)
			if b <= 0 || b >= 0x7f800000 {
				continue
			}
			amax := math.Float32frombits(uint32(b))
			block := make([]float32, 32)
			for i := range block {
				block[i] = amax * float32(r.Float64()*2-1)
			}
			block[r.Intn(32)] = amax * float32(1-2*r.Intn(2))
			src = append(src, block...)
		}
	}
	checkAgainstGGML(t, lib, MXFP4, src, 1, len(src), nil, "amax near powers of two")
}

// TestNVFP4ScaleSweep checks the UE4M3 sub-block scales for sub-block maxima
// across the whole float32 range, densely where UE4M3 rounds and saturates.
func TestNVFP4ScaleSweep(t *testing.T) {
	lib := reftest.Lib(t)
	r := rand.New(rand.NewSource(testSeed(t)))
	var maxima []float32
	for b := uint32(1); b < 0x7f800000; b += 0x7f800000 / 4096 {
		maxima = append(maxima, math.Float32frombits(b))
	}
	// amax/6 from 2^-14 to 2^10: every pattern of the top five mantissa
	// bits, with the bits below random or at the edges.
	for e := -14; e <= 10; e++ {
		for m := uint32(0); m < 32; m++ {
			base := math.Float32bits(float32(math.Ldexp(1, e))) | m<<18
			for _, low := range []uint32{0, 1<<18 - 1, uint32(r.Intn(1 << 18))} {
				maxima = append(maxima, math.Float32frombits(base|low)*6)
			}
		}
	}
	for len(maxima)%4 != 0 {
		maxima = append(maxima, 0)
	}
	src := make([]float32, 16*len(maxima))
	for i, amax := range maxima {
		sub := src[16*i : 16*i+16]
		for j := range sub {
			sub[j] = amax * float32(r.Float64()*2-1)
		}
		sub[r.Intn(16)] = amax
	}
	checkAgainstGGML(t, lib, NVFP4, src, 1, len(src), nil, "sub-block maxima sweep")
}

// TestQ8_1MatchesScalarCPUBuild checks Quantize(Q8_1), which ignores the
// importance matrix, against the CPU backend's from_float of the scalar (x64)
// build; TestLiveQuantize compares it with the reference quantizer.
func TestQ8_1MatchesScalarCPUBuild(t *testing.T) {
	cpu := variantLib(t, "x64")
	seed := testSeed(t)
	for c := range liveCases(100) {
		caseSeed := seed + int64(c)
		r := rand.New(rand.NewSource(caseSeed))
		nrows, nPerRow := randomShape(r, Q8_1.BlockSize())
		dist := inputDist(c % int(numDists))
		src := make([]float32, nrows*nPerRow)
		fillValues(r, src, dist)
		im, imKind := randomImatrix(r, nPerRow)
		what := fmt.Sprintf("seed %d case %d (case seed %d): %d x %d, %v, imatrix %s",
			seed, c, caseSeed, nrows, nPerRow, dist, imKind)

		got, err := Quantize(Q8_1, src, nrows, nPerRow, im)
		require.NoError(t, err, what)
		want, err := cpu.FromFloatCPU(uint32(Q8_1), src)
		require.NoError(t, err, what)
		requireSameBytes(t, Q8_1, want, got, what+": x64 CPU from_float")
	}
}

// TestQ8_1Dequantize checks q*d on hand-built blocks (random scale
// patterns, sums and levels) against ggml's Q8_0 to_float of the same scale
// and levels, and against q*d computed from ggml's fp16 conversion.
func TestQ8_1Dequantize(t *testing.T) {
	lib := reftest.Lib(t)
	seed := testSeed(t)
	r := rand.New(rand.NewSource(seed))
	const nblocks = 2048
	q81 := make([]byte, nblocks*Q8_1.TypeSize())
	q80 := make([]byte, nblocks*Q8_0.TypeSize())
	want := make([]float32, nblocks*32)
	for i := range nblocks {
		b := q81[i*36 : i*36+36]
		r.Read(b)
		d := binary.LittleEndian.Uint16(b)
		binary.LittleEndian.PutUint16(q80[i*34:], d)
		copy(q80[i*34+2:i*34+34], b[4:])
		for j, q := range b[4:] {
			want[i*32+j] = float32(int8(q)) * lib.FP16ToFP32(d)
		}
	}
	got, err := Dequantize(Q8_1, q81, len(want))
	require.NoError(t, err)
	requireSameBits(t, Q8_1, want, got, fmt.Sprintf("seed %d: q*d", seed))
	viaQ80, err := lib.ToFloat(uint32(Q8_0), q80, int64(len(want)))
	require.NoError(t, err)
	requireSameBits(t, Q8_1, viaQ80, got, fmt.Sprintf("seed %d: Q8_0 to_float", seed))
}
