package quant

import (
	"math"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// The shared kit of the differential tests: seeds, input distributions,
// importance matrices, shapes, and comparisons that name the first
// differing block.

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
	distOutlier
	distSmallInts
	distSparse
	distHalfSteps // halves after an anchor ±2 or ±127: ternary and Q8_K rounding ties
	distMixed
	numDists
)

var distNames = [numDists]string{"uniform", "gauss", "heavy", "constant", "zero", "tiny", "huge",
	"extreme", "subnormal", "ties", "outlier", "small-ints", "sparse", "half-steps", "mixed"}

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
	case distOutlier:
		for i := range x {
			x[i] = float32(r.NormFloat64() * scale)
		}
		x[r.Intn(len(x))] *= 1e4
	case distSmallInts:
		for i := range x {
			x[i] = float32(r.Intn(7)-3) * []float32{1, 0.25}[r.Intn(2)]
		}
	case distSparse:
		clear(x)
		for range 1 + r.Intn(4) {
			x[r.Intn(len(x))] = float32(r.NormFloat64() * scale)
		}
	case distHalfSteps:
		a := []int{2, -2, 127, -127}[r.Intn(4)]
		span := 2 * max(a, -a)
		for i := range x {
			x[i] = float32(r.Intn(2*span+1)-span) / 2
		}
		x[0] = float32(a)
	}
}

// randomImatrix returns nil or importance weights of one of several kinds.
func randomImatrix(r *rand.Rand, n int) ([]float32, string) {
	k := r.Intn(13)
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
	case 9:
		clear(w)
		return w, "all zeros"
	case 10:
		for i := range w {
			w[i] = float32(math.Pow(10, 12*r.Float64()-6))
		}
		return w, "log-uniform"
	case 11:
		// Weights up to about 1e35, so the weighted sums overflow.
		for i := range w {
			w[i] = float32(math.Exp((r.Float64()*2 - 1) * 80))
		}
		return w, "overflowing"
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
	want, err := refQuantize(lib, typ, src, nrows, nPerRow, im)
	require.NoError(t, err, what)
	got, err := Quantize(typ, src, nrows, nPerRow, im)
	require.NoError(t, err, what)
	requireSameBytes(t, typ, want, got, what)

	if tr, _ := lib.Traits(uint32(typ)); !tr.HasToFloat() {
		return
	}
	wantDeq, err := lib.ToFloat(uint32(typ), want, int64(len(src)))
	require.NoError(t, err, what)
	gotDeq, err := Dequantize(typ, got, len(src))
	require.NoError(t, err, what)
	requireSameBits(t, typ, wantDeq, gotDeq, what+": dequantized")
}

// refQuantize is what ggml produces for Quantize(typ, ...): ggml_quantize_chunk,
// or for the activation formats the reference quantizer (Q8_1) and the CPU
// backend's from_float (Q8_K, which has no other).
func refQuantize(lib *ggmlref.Lib, typ Type, src []float32, nrows, perRow int, im []float32) ([]byte, error) {
	switch typ {
	case Q8_1:
		return lib.FromFloatRef(uint32(typ), src)
	case Q8_K:
		return lib.FromFloatCPU(uint32(typ), src)
	}
	return lib.QuantizeChunk(uint32(typ), src, int64(nrows), int64(perRow), im)
}

var (
	variantMu   sync.Mutex
	variantLibs = map[string]*ggmlref.Lib{}
)

// variantLib loads (once per process) a second copy of the reference with
// the named CPU variant, skipping t when this machine cannot run it.
func variantLib(t *testing.T, variant string) *ggmlref.Lib {
	t.Helper()
	def := reftest.Lib(t)
	if def.Variant() == variant {
		return def
	}
	variantMu.Lock()
	defer variantMu.Unlock()
	if l := variantLibs[variant]; l != nil {
		return l
	}
	l, err := ggmlref.OpenVariant(def.Dir(), variant)
	if err != nil {
		t.Skipf("CPU variant %s: %v", variant, err)
	}
	variantLibs[variant] = l
	return l
}

// specialRow is a fixed input pattern: element i of a row is f(i).
type specialRow struct {
	name string
	f    func(i int) float32
}

func (s specialRow) String() string { return s.name }

// specialRows are fixed inputs that random draws rarely produce.
var specialRows = []specialRow{
	{"zeros", func(int) float32 { return 0 }},
	{"negative zeros", func(int) float32 { return float32(math.Copysign(0, -1)) }},
	{"ones", func(int) float32 { return 1 }},
	{"minus ones", func(int) float32 { return -1 }},
	{"max float", func(int) float32 { return math.MaxFloat32 }},
	{"alternating max float", func(i int) float32 { return float32(1-2*(i%2)) * math.MaxFloat32 }},
	{"smallest subnormal", func(int) float32 { return math.SmallestNonzeroFloat32 }},
	{"one outlier", func(i int) float32 {
		if i%256 == 17 {
			return 1000
		}
		return float32(math.Sin(float64(i)))
	}},
	{"ramp", func(i int) float32 { return float32(i%256) - 100 }},
	{"1e-16 step", func(i int) float32 { return float32(i%3) * 1e-16 }},
}
