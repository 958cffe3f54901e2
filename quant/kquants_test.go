package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/ggmlref/reftest"
)

var kTypes = []Type{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K}

// kTestSeed is GGML_TEST_SEED when set, else the clock; it is logged so a
// failure can be replayed.
func kTestSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GGML_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "GGML_TEST_SEED")
		seed = v
	}
	t.Logf("seed %d (set GGML_TEST_SEED=%d to replay)", seed, seed)
	return seed
}

// kFill fills x with one of the value distributions the K-quant tests mix,
// and names it.
func kFill(rng *rand.Rand, x []float32) string {
	scale := math.Pow(10, rng.Float64()*8-4)
	kind := rng.IntN(13)
	for i := range x {
		var v float64
		switch kind {
		case 0:
			v = (2*rng.Float64() - 1) * scale
		case 1, 2:
			v = rng.NormFloat64() * scale
		case 3: // heavy tails
			v = rng.NormFloat64() / (rng.Float64() + 1e-3) * scale
		case 4, 5: // constant runs are set below; zeros stay
		case 6:
			v = rng.NormFloat64() * 1e-30
		case 7:
			v = rng.NormFloat64() * 1e30
		case 8: // one-signed
			v = math.Abs(rng.NormFloat64()) * scale
		case 9:
			v = -math.Abs(rng.NormFloat64()) * scale
		case 10: // sparse
			if rng.IntN(8) == 0 {
				v = rng.NormFloat64() * scale
			}
		case 11: // near the float32 limit
			v = (2*rng.Float64() - 1) * 3.4e38
		case 12: // subnormals and zeros
			v = float64(math.Float32frombits(rng.Uint32N(1 << 23)))
			if rng.IntN(2) == 0 {
				v = -v
			}
		}
		x[i] = float32(v)
	}
	if kind == 4 {
		// A constant run of either sign.
		c := float32(scale)
		if rng.IntN(2) == 0 {
			c = -c
		}
		for i := range x {
			x[i] = c
		}
	}
	return []string{"uniform", "gauss", "gauss", "heavy", "const", "zero", "tiny", "huge",
		"positive", "negative", "sparse", "extreme", "subnormal"}[kind]
}

// kRandomRows fills x with runs of 16, 32, 256 values or the whole input,
// each from its own distribution.
func kRandomRows(rng *rand.Rand, x []float32) string {
	run := []int{16, 32, 256, len(x)}[rng.IntN(4)]
	desc := fmt.Sprintf("runs of %d:", run)
	for i := 0; i < len(x); i += run {
		name := kFill(rng, x[i:min(i+run, len(x))])
		if i < 4*run {
			desc += " " + name
		}
	}
	return desc
}

// kImatrix returns random non-negative importance weights, sometimes with
// many zeros or all zeros.
func kImatrix(rng *rand.Rand, n int) []float32 {
	w := make([]float32, n)
	zeros := []float64{0, 0, 0.1, 0.5, 1}[rng.IntN(5)]
	spread := rng.Float64() * 6
	if rng.IntN(10) == 0 {
		spread = 80 // weights up to about 1e35, so sums overflow
	}
	for i := range w {
		if rng.Float64() < zeros {
			continue
		}
		w[i] = float32(math.Exp((rng.Float64()*2 - 1) * spread))
	}
	return w
}

// kSpecialRows are fixed inputs that random draws rarely produce.
var kSpecialRows = []struct {
	name string
	f    func(i int) float32
}{
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

func requireSameBlocks(t *testing.T, typ Type, want, got []byte, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s: %s block %d byte offset %d: want %#02x, got %#02x",
				what, typ, i/typ.TypeSize(), i%typ.TypeSize(), want[i], got[i])
		}
	}
}

func requireSameBits(t *testing.T, typ Type, want, got []float32, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s: %s block %d element %d: want %v (%#08x), got %v (%#08x)", what, typ,
				i/kSuperBlock, i%kSuperBlock, want[i], math.Float32bits(want[i]), got[i], math.Float32bits(got[i]))
		}
	}
}

// TestKQuantsMatchGGML quantizes random rows with and without an importance
// matrix and checks the bytes against ggml_quantize_chunk, the dequantized
// values against ggml's to_float, and to_float of random bytes.
func TestKQuantsMatchGGML(t *testing.T) {
	lib := reftest.Lib(t)
	seed := kTestSeed(t)
	const quantCases, byteCases = 400, 100
	for _, typ := range kTypes {
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(typ)))
			for c := range quantCases + len(kSpecialRows) {
				nrows := 1 + rng.IntN(4)
				nPerRow := kSuperBlock * (1 + rng.IntN(4))
				if rng.IntN(40) == 0 {
					nPerRow = 16384
				}
				src := make([]float32, nrows*nPerRow)
				var desc string
				if c < len(kSpecialRows) {
					desc = kSpecialRows[c].name
					for i := range src {
						src[i] = kSpecialRows[c].f(i)
					}
				} else {
					desc = kRandomRows(rng, src)
				}
				var im []float32
				if rng.IntN(2) == 0 {
					im = kImatrix(rng, nPerRow)
					desc += " (imatrix)"
				}
				what := fmt.Sprintf("seed %d case %d, %d x %d, %s", seed, c, nrows, nPerRow, desc)

				want, err := lib.QuantizeChunk(uint32(typ), src, int64(nrows), int64(nPerRow), im)
				require.NoError(t, err, what)
				got, err := Quantize(typ, src, nrows, nPerRow, im)
				require.NoError(t, err, what)
				requireSameBlocks(t, typ, want, got, "quantize "+what)

				wantF, err := lib.ToFloat(uint32(typ), want, int64(len(src)))
				require.NoError(t, err, what)
				gotF, err := Dequantize(typ, want, len(src))
				require.NoError(t, err, what)
				requireSameBits(t, typ, wantF, gotF, "dequantize "+what)
			}
			for c := range byteCases {
				n := kSuperBlock * (1 + rng.IntN(8))
				b := make([]byte, typ.RowSize(int64(n)))
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				what := fmt.Sprintf("seed %d random-bytes case %d", seed, c)
				want, err := lib.ToFloat(uint32(typ), b, int64(n))
				require.NoError(t, err, what)
				got, err := Dequantize(typ, b, n)
				require.NoError(t, err, what)
				requireSameBits(t, typ, want, got, "dequantize "+what)
			}
		})
	}
}

// TestKScalePacking round-trips every 6-bit value through both scale
// layouts.
func TestKScalePacking(t *testing.T) {
	for v := range 64 {
		var ls, lm [8]uint8
		for j := range 8 {
			ls[j], lm[j] = uint8((v+j)%64), uint8((v+7*j+1)%64)
		}
		q := make([]byte, 12)
		putScalesMinsK4(q, &ls, &lm)
		for j := range 8 {
			sc, m := scaleMinK4(j, q)
			require.Equal(t, ls[j], sc, "scale %d of pattern %d", j, v)
			require.Equal(t, lm[j], m, "min %d of pattern %d", j, v)
		}

		var s16 [16]int8
		for j := range s16 {
			s16[j] = int8((v + 5*j) % 64)
		}
		putScalesQ3K(q, &s16)
		got := scalesQ3K(q)
		for j := range s16 {
			require.Equal(t, s16[j]-32, got[j], "q3_K scale %d of pattern %d", j, v)
		}
	}
}

// TestKNearestInt checks the rounding trick against round-half-even where
// it is meaningful.
func TestKNearestInt(t *testing.T) {
	for _, f := range []float32{0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.49, 3.7, -4194303, 4194303, 123456.5} {
		require.Equal(t, int32(math.RoundToEven(float64(f))), kNearestInt(f), "%v", f)
	}
}
