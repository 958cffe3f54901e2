package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/ggmlref"
	"github.com/ggml-go/ggml/internal/ggmlref/reftest"
)

// legacyTypes are the formats of legacy.go and fp4.go that ggml_quantize_chunk
// and to_float handle; Q8_1 is tested on its own.
var legacyTypes = []Type{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q1_0, Q2_0, MXFP4, NVFP4}

// legacyCasesPerType is the number of random quantization cases per type.
const legacyCasesPerType = 300

// testSeed returns GGML_TEST_SEED if set, else a seed from the clock, and logs it.
func testSeed(t *testing.T) int64 {
	t.Helper()
	seed := time.Now().UnixNano()
	if s := os.Getenv("GGML_TEST_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "GGML_TEST_SEED")
		seed = v
	}
	t.Logf("seed %d (set GGML_TEST_SEED to repeat)", seed)
	return seed
}

// inputDist is a distribution of test values.
type inputDist int

const (
	distUniform inputDist = iota
	distGauss
	distHeavy    // Cauchy, capped at 1e30
	distConstant // one value repeated
	distZero     // zeros of both signs
	distTiny     // ~1e-30
	distHuge     // ~1e30
	distExtreme  // up to ±MaxFloat32
	distSubnormal
	distTies // multiples of half a power of two, with an amax that makes scales exact
	distMixed
	numDists
)

var distNames = [numDists]string{"uniform", "gauss", "heavy", "constant", "zero", "tiny", "huge",
	"extreme", "subnormal", "ties", "mixed"}

func (d inputDist) String() string { return distNames[d] }

// fillValues fills x from distribution d; distMixed picks a distribution per
// run of 16 values, so blocks mix them too.
func fillValues(r *rand.Rand, x []float32, d inputDist) {
	if d == distMixed {
		for i := 0; i < len(x); i += 16 {
			fillValues(r, x[i:min(i+16, len(x))], inputDist(r.Intn(int(distMixed))))
		}
		return
	}
	scale := math.Pow(10, r.Float64()*6-3)
	switch d {
	case distUniform:
		for i := range x {
			x[i] = float32((r.Float64()*2 - 1) * scale)
		}
	case distGauss:
		for i := range x {
			x[i] = float32(r.NormFloat64() * scale)
		}
	case distHeavy:
		for i := range x {
			v := scale * math.Tan(math.Pi*(r.Float64()-0.5))
			x[i] = float32(math.Max(-1e30, math.Min(1e30, v)))
		}
	case distConstant:
		v := float32(r.NormFloat64() * scale)
		for i := range x {
			x[i] = v
		}
	case distZero:
		for i := range x {
			x[i] = float32(math.Copysign(0, r.Float64()-0.5))
		}
	case distTiny:
		for i := range x {
			x[i] = float32(r.NormFloat64() * 1e-30)
		}
	case distHuge:
		for i := range x {
			x[i] = float32(r.NormFloat64() * 1e30)
		}
	case distExtreme:
		for i := range x {
			v := float32(math.MaxFloat32 * (r.Float64()*2 - 1))
			if r.Intn(4) == 0 {
				v = float32(math.Copysign(math.MaxFloat32, float64(v)))
			}
			x[i] = v
		}
	case distSubnormal:
		for i := range x {
			x[i] = math.Float32frombits(uint32(r.Intn(1<<23)) | uint32(r.Intn(2))<<31)
		}
	case distTies:
		s := math.Ldexp(1, r.Intn(40)-20)
		for i := range x {
			x[i] = float32(float64(r.Intn(509)-254) / 2 * s)
		}
		// Maxima that make ggml's scales exact: 127s (Q8), 8s/16s (Q4_0/Q5_0), 6s (FP4).
		peaks := []float64{127, 8, 16, 6, 12, 63.5}
		x[r.Intn(len(x))] = float32(peaks[r.Intn(len(peaks))] * s * float64(1-2*r.Intn(2)))
	}
}

// randomImatrix returns nil or importance weights of one of several kinds.
func randomImatrix(r *rand.Rand, n int) ([]float32, string) {
	k := r.Intn(10)
	if k < 4 {
		return nil, "none"
	}
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(math.Exp(r.NormFloat64() * 2))
	}
	switch k {
	case 4, 5, 6:
		return w, "positive"
	case 7, 8:
		for i := range w {
			if r.Intn(4) == 0 {
				w[i] = 0
			}
		}
		return w, "some zeros"
	default:
		for i := range w {
			if i/32%2 == 0 {
				w[i] = 0
			}
		}
		return w, "zero blocks"
	}
}

// randomShape returns nrows in 1..4 and a row length that is a multiple of
// bs, log-uniform up to 16384 values.
func randomShape(r *rand.Rand, bs int) (nrows, nPerRow int) {
	maxBlocks := 16384 / bs
	blocks := int(math.Exp(r.Float64() * math.Log(float64(maxBlocks))))
	return 1 + r.Intn(4), max(1, min(maxBlocks, blocks)) * bs
}

// requireSameBytes fails with the first differing block and byte offset.
func requireSameBytes(t *testing.T, typ Type, want, got []byte, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: %s: length", typ, what)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s: %s: block %d, byte offset %d: want %#02x, got %#02x\nwant block % x\ngot  block % x",
				typ, what, i/typ.TypeSize(), i%typ.TypeSize(), want[i], got[i],
				blockOf(want, typ, i), blockOf(got, typ, i))
		}
	}
}

func blockOf(b []byte, typ Type, i int) []byte {
	ts := typ.TypeSize()
	return b[i/ts*ts : i/ts*ts+ts]
}

// requireSameBits fails at the first element whose bit pattern differs
// (so NaNs only match with equal payloads), naming its block.
func requireSameBits(t *testing.T, typ Type, want, got []float32, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: %s: length", typ, what)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s: %s: element %d (block %d, index %d): want %v (%#08x), got %v (%#08x)",
				typ, what, i, i/typ.BlockSize(), i%typ.BlockSize(),
				want[i], math.Float32bits(want[i]), got[i], math.Float32bits(got[i]))
		}
	}
}

// checkAgainstGGML quantizes src with our code and ggml, requires equal
// bytes, then requires our dequantization of them to equal ggml's.
func checkAgainstGGML(t *testing.T, lib *ggmlref.Lib, typ Type, src []float32, nrows, nPerRow int, im []float32, what string) {
	t.Helper()
	want, err := lib.QuantizeChunk(uint32(typ), src, int64(nrows), int64(nPerRow), im)
	require.NoError(t, err, what)
	got, err := Quantize(typ, src, nrows, nPerRow, im)
	require.NoError(t, err, what)
	requireSameBytes(t, typ, want, got, what)

	wantDeq, err := lib.ToFloat(uint32(typ), want, int64(len(src)))
	require.NoError(t, err, what)
	gotDeq, err := Dequantize(typ, got, len(src))
	require.NoError(t, err, what)
	requireSameBits(t, typ, wantDeq, gotDeq, what+": dequantized")
}

// TestLegacyQuantizeMatchesGGML compares Quantize and Dequantize with
// ggml_quantize_chunk and to_float on random rows of every distribution,
// with and without an importance matrix.
func TestLegacyQuantizeMatchesGGML(t *testing.T) {
	lib := reftest.Lib(t)
	seed := testSeed(t)
	for ti, typ := range legacyTypes {
		t.Run(typ.String(), func(t *testing.T) {
			for c := range legacyCasesPerType {
				caseSeed := seed + int64(ti)<<32 + int64(c)
				r := rand.New(rand.NewSource(caseSeed))
				nrows, nPerRow := randomShape(r, typ.BlockSize())
				dist := inputDist(c % int(numDists))
				src := make([]float32, nrows*nPerRow)
				fillValues(r, src, dist)
				im, imKind := randomImatrix(r, nPerRow)
				what := fmt.Sprintf("seed %d case %d (case seed %d): %d x %d, %v, imatrix %s",
					seed, c, caseSeed, nrows, nPerRow, dist, imKind)
				checkAgainstGGML(t, lib, typ, src, nrows, nPerRow, im, what)
			}
		})
	}
}

// TestLegacyDequantizeRandomBytes dequantizes random block bytes, which
// include NaN, infinite and subnormal scales, and compares with to_float.
func TestLegacyDequantizeRandomBytes(t *testing.T) {
	lib := reftest.Lib(t)
	seed := testSeed(t)
	r := rand.New(rand.NewSource(seed))
	for _, typ := range legacyTypes {
		for c := range 50 {
			n := (1 + r.Intn(64)) * typ.BlockSize()
			src := make([]byte, typ.RowSize(int64(n)))
			r.Read(src)
			what := fmt.Sprintf("seed %d case %d: %d values", seed, c, n)
			want, err := lib.ToFloat(uint32(typ), src, int64(n))
			require.NoError(t, err)
			got, err := Dequantize(typ, src, n)
			require.NoError(t, err)
			requireSameBits(t, typ, want, got, what)
		}
	}
}

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

var (
	scalarLibOnce sync.Once
	scalarLib     *ggmlref.Lib
	scalarLibErr  error
)

// scalarCPULib loads a second copy of the CPU backend, the generic x64
// build, whose from_float for Q8_1 is quantize_row_q8_1_ref. (The AVX builds
// use their own rounding; see quantizeBlockQ8_1.)
func scalarCPULib(t *testing.T) *ggmlref.Lib {
	lib := reftest.Lib(t)
	scalarLibOnce.Do(func() {
		t.Setenv(ggmlref.EnvVariant, "x64")
		scalarLib, scalarLibErr = ggmlref.Open(lib.Dir())
	})
	require.NoError(t, scalarLibErr)
	require.Equal(t, "x64", scalarLib.Variant())
	return scalarLib
}

// TestQ8_1QuantizeMatchesGGML checks Quantize(Q8_1), which ignores the
// importance matrix, against ggml's reference Q8_1 quantizer and against
// the CPU backend's from_float of the scalar build.
func TestQ8_1QuantizeMatchesGGML(t *testing.T) {
	lib := reftest.Lib(t)
	cpu := scalarCPULib(t)
	seed := testSeed(t)
	for c := range legacyCasesPerType {
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
		want, err := lib.FromFloatRef(uint32(Q8_1), src)
		require.NoError(t, err, what)
		requireSameBytes(t, Q8_1, want, got, what+": from_float_ref")
		want, err = cpu.FromFloatCPU(uint32(Q8_1), src)
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
