package quant

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/ggmlref"
	"github.com/ggml-go/ggml/internal/ggmlref/reftest"
)

// testSeed is GGML_TEST_SEED when set, else a fresh seed per run, so every
// run of the suite tries new inputs; failures print the seed to replay.
func testSeed(t testing.TB) uint64 {
	t.Helper()
	if s := os.Getenv("GGML_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "GGML_TEST_SEED")
		return v
	}
	return uint64(time.Now().UnixNano())
}

// distributions used to fill test rows; each block of a row may use another.
var distributions = []string{"uniform", "gaussian", "heavy", "constant", "zero", "tiny", "huge", "sparse", "mixed"}

// fillBlock writes one block of values drawn from dist.
func fillBlock(rng *rand.Rand, dst []float32, dist string) {
	switch dist {
	case "uniform":
		for i := range dst {
			dst[i] = float32(rng.Float64()*2 - 1)
		}
	case "gaussian":
		s := rng.ExpFloat64() * 3
		for i := range dst {
			dst[i] = float32(rng.NormFloat64() * s)
		}
	case "heavy":
		// Cauchy-distributed values: a few huge outliers per block.
		for i := range dst {
			dst[i] = float32(math.Tan(math.Pi * (rng.Float64() - 0.5)))
		}
	case "constant":
		v := float32(rng.NormFloat64() * 5)
		for i := range dst {
			dst[i] = v
		}
	case "zero":
		clear(dst)
	case "tiny":
		for i := range dst {
			dst[i] = float32(rng.NormFloat64() * 1e-30)
		}
	case "huge":
		s := []float64{1e20, 1e30, 1e36}[rng.IntN(3)]
		for i := range dst {
			dst[i] = float32(rng.NormFloat64() * s)
		}
	case "sparse":
		clear(dst)
		for range 1 + rng.IntN(3) {
			dst[rng.IntN(len(dst))] = float32(rng.NormFloat64() * 10)
		}
	default: // mixed: a different distribution per 16 values
		for i := 0; i < len(dst); i += 16 {
			fillBlock(rng, dst[i:min(i+16, len(dst))], distributions[rng.IntN(len(distributions)-1)])
		}
	}
}

// randomRows makes nrows*nPerRow values, choosing a distribution per block.
func randomRows(rng *rand.Rand, nrows, nPerRow, block int) []float32 {
	out := make([]float32, nrows*nPerRow)
	if block < 32 {
		block = 32
	}
	dist := distributions[rng.IntN(len(distributions))]
	for i := 0; i < len(out); i += block {
		if rng.IntN(4) == 0 {
			dist = distributions[rng.IntN(len(distributions))]
		}
		fillBlock(rng, out[i:min(i+block, len(out))], dist)
	}
	return out
}

// randomImatrix returns nil, positive weights, or weights with some zeros.
func randomImatrix(rng *rand.Rand, n int, required bool) []float32 {
	mode := rng.IntN(3)
	if mode == 0 && !required {
		return nil
	}
	im := make([]float32, n)
	for i := range im {
		im[i] = float32(rng.ExpFloat64() * 2)
		if mode == 2 && rng.IntN(5) == 0 {
			im[i] = 0
		}
	}
	return im
}

// liveCases is the number of random cases per type; -short runs fewer.
func liveCases(t *testing.T, full int) int {
	if testing.Short() {
		return full / 10
	}
	return full
}

// TestLiveQuantize compares Quantize with ggml_quantize_chunk (or the CPU
// from_float for the activation formats) on fresh random inputs for every
// type we quantize: the bytes must be identical.
func TestLiveQuantize(t *testing.T) {
	lib := reftest.Lib(t)
	seed := testSeed(t)
	t.Logf("GGML_TEST_SEED=%d", seed)
	for _, typ := range Types() {
		if !typ.CanQuantize() || typ == F32 {
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(typ)))
			bs := typ.BlockSize()
			maxBlocks := 16384 / max(bs, 32)
			cases := liveCases(t, 300)
			for c := range cases {
				perRow := (1 + rng.IntN(maxBlocks)) * max(bs, 32)
				if rng.IntN(3) == 0 {
					perRow = (1 + rng.IntN(4)) * max(bs, 32) // many short rows
				}
				nrows := 1 + rng.IntN(4)
				src := randomRows(rng, nrows, perRow, bs)
				im := randomImatrix(rng, perRow, typ.RequiresImatrix())
				got, err := Quantize(typ, src, nrows, perRow, im)
				require.NoError(t, err)
				want, err := refQuantize(lib, typ, src, nrows, perRow, im)
				require.NoError(t, err)
				if !bytes.Equal(want, got) {
					t.Fatalf("%s", describeMismatch(typ, seed, c, perRow, im != nil, want, got))
				}
				deq, err := Dequantize(typ, got, len(src))
				require.NoError(t, err)
				if tr, _ := lib.Traits(uint32(typ)); tr.HasToFloat() {
					ref, err := lib.ToFloat(uint32(typ), got, int64(len(src)))
					require.NoError(t, err)
					requireSameFloats(t, ref, deq, fmt.Sprintf("%s dequantize, seed %d case %d", typ, seed, c))
				}
			}
			t.Logf("%s: %d cases identical", typ, cases)
		})
	}
}

// refQuantize is what ggml produces for Quantize(typ, ...).
func refQuantize(lib *ggmlref.Lib, typ Type, src []float32, nrows, perRow int, im []float32) ([]byte, error) {
	if typ == Q8_1 || typ == Q8_K {
		return lib.FromFloatCPU(uint32(typ), src)
	}
	return lib.QuantizeChunk(uint32(typ), src, int64(nrows), int64(perRow), im)
}

func describeMismatch(typ Type, seed uint64, c, perRow int, imat bool, want, got []byte) string {
	for i := range want {
		if want[i] != got[i] {
			ts := typ.TypeSize()
			return fmt.Sprintf("%s: seed %d case %d (row length %d, imatrix %v): byte %d differs "+
				"(row %d, block %d, offset %d in block): want %#02x, got %#02x",
				typ, seed, c, perRow, imat, i, i/int(typ.RowSize(int64(perRow))),
				i%int(typ.RowSize(int64(perRow)))/ts, i%ts, want[i], got[i])
		}
	}
	return fmt.Sprintf("%s: lengths differ: want %d, got %d", typ, len(want), len(got))
}

// TestLiveDequantizeRandomBytes feeds random block bytes (any scale bits,
// including NaN and Inf halves) to Dequantize and to ggml's to_float.
func TestLiveDequantizeRandomBytes(t *testing.T) {
	lib := reftest.Lib(t)
	seed := testSeed(t)
	t.Logf("GGML_TEST_SEED=%d", seed)
	for _, typ := range Types() {
		tr, err := lib.Traits(uint32(typ))
		require.NoError(t, err)
		if !tr.HasToFloat() {
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			require.True(t, typ.CanDequantize(), "ggml has a to_float for %s", typ)
			rng := rand.New(rand.NewPCG(seed, uint64(typ)+1000))
			bs := typ.BlockSize()
			cases := liveCases(t, 100)
			for c := range cases {
				n := (1 + rng.IntN(64)) * bs
				src := make([]byte, typ.RowSize(int64(n)))
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				got, err := Dequantize(typ, src, n)
				require.NoError(t, err)
				want, err := lib.ToFloat(uint32(typ), src, int64(n))
				require.NoError(t, err)
				requireSameFloats(t, want, got, fmt.Sprintf("%s random bytes, seed %d case %d", typ, seed, c))
			}
		})
	}
}
