package quant

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFromFloatMatchesCPUBackend compares FromFloat with the from_float of
// ggml's generic CPU build for every float and quantized type that has one.
// IQ4_NL is compared after dequantizing, by value: for an all-zero block
// ggml leaves the level bytes unwritten, so only the zero scale is defined
// (and the sign of the zeros is not).
func TestFromFloatMatchesCPUBackend(t *testing.T) {
	lib := variantLib(t, "x64")
	seed := testSeed(t)
	for ti, typ := range Types() {
		tr, err := lib.Traits(uint32(typ))
		require.NoError(t, err)
		if !tr.HasFromFloatCPU() || !(typ.IsQuantized() || typ == F16 || typ == BF16) {
			_, err := FromFloat(make([]byte, typ.RowSize(256)), typ, make([]float32, 256))
			if typ != F32 && typ.Valid() && !typ.CanQuantize() {
				require.ErrorIs(t, err, ErrUnsupported, typ.String())
			}
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			for c := range liveCases(100) {
				r := rand.New(rand.NewSource(seed + int64(ti)<<32 + int64(c)))
				_, n := randomShape(r, typ.BlockSize())
				src := make([]float32, n)
				dist := inputDist(c % int(numDists))
				fillValues(r, src, dist)
				what := fmt.Sprintf("seed %d case %d: %d values, %v", seed, c, n, dist)
				want, err := lib.FromFloatCPU(uint32(typ), src)
				require.NoError(t, err, what)
				got := make([]byte, len(want))
				written, err := FromFloat(got, typ, src)
				require.NoError(t, err, what)
				require.Equal(t, len(want), written, what)
				if typ != IQ4_NL {
					requireSameBytes(t, typ, want, got, what)
					continue
				}
				wantF, err := Dequantize(typ, want, n)
				require.NoError(t, err)
				gotF, err := Dequantize(typ, got, n)
				require.NoError(t, err)
				for i := range wantF {
					w, g := math.Float32bits(wantF[i]), math.Float32bits(gotF[i])
					if w != g && !(wantF[i] == 0 && gotF[i] == 0) {
						t.Fatalf("%s: element %d: want %v, got %v", what, i, wantF[i], gotF[i])
					}
				}
			}
		})
	}
}
