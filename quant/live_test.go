package quant

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// liveCases is the number of random cases per type; -short runs fewer.
func liveCases(full int) int {
	if testing.Short() {
		return full / 10
	}
	return full
}

// TestLiveQuantize compares Quantize with ggml (ggml_quantize_chunk, or the
// activation quantizers for Q8_1/Q8_K) on fresh random inputs for every type
// we quantize: the bytes must be identical, and so must the dequantized
// floats. The fixed special rows come first, then every distribution of the
// kit, with and without an importance matrix.
func TestLiveQuantize(t *testing.T) {
	lib := reftest.Lib(t)
	seed := testSeed(t)
	for ti, typ := range Types() {
		if !typ.CanQuantize() || typ == F32 {
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			cases := liveCases(300)
			for c := range cases {
				caseSeed := seed + int64(ti)<<32 + int64(c)
				r := rand.New(rand.NewSource(caseSeed))
				nrows, nPerRow := randomShape(r, typ.BlockSize())
				src := make([]float32, nrows*nPerRow)
				var dist fmt.Stringer = inputDist(c % int(numDists))
				if c < len(specialRows) {
					dist = specialRows[c]
					for i := range src {
						src[i] = specialRows[c].f(i)
					}
				} else {
					fillValues(r, src, dist.(inputDist))
				}
				im, imKind := randomImatrix(r, nPerRow)
				if im == nil && typ.RequiresImatrix() {
					im, imKind = make([]float32, nPerRow), "ones"
					for i := range im {
						im[i] = 1
					}
				}
				what := fmt.Sprintf("seed %d case %d (case seed %d): %d x %d, %v, imatrix %s",
					seed, c, caseSeed, nrows, nPerRow, dist, imKind)
				checkAgainstGGML(t, lib, typ, src, nrows, nPerRow, im, what)
			}
		})
	}
}

// TestLiveDequantizeRandomBytes feeds random block bytes (any scale bits,
// including NaN, infinite and subnormal halves) to Dequantize and to ggml's
// to_float, for every type ggml has a to_float for.
func TestLiveDequantizeRandomBytes(t *testing.T) {
	lib := reftest.Lib(t)
	seed := testSeed(t)
	for ti, typ := range Types() {
		tr, err := lib.Traits(uint32(typ))
		require.NoError(t, err)
		if !tr.HasToFloat() {
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			require.True(t, typ.CanDequantize(), "ggml has a to_float for %s", typ)
			r := rand.New(rand.NewSource(seed + int64(ti)<<32))
			for c := range liveCases(100) {
				n := (1 + r.Intn(64)) * typ.BlockSize()
				src := make([]byte, typ.RowSize(int64(n)))
				r.Read(src)
				want, err := lib.ToFloat(uint32(typ), src, int64(n))
				require.NoError(t, err)
				got, err := Dequantize(typ, src, n)
				require.NoError(t, err)
				requireSameBits(t, typ, want, got, fmt.Sprintf("random bytes, seed %d case %d", seed, c))
			}
		})
	}
}
