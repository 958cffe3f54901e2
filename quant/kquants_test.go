package quant

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

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

// TestNearestInt checks the rounding trick against round-half-even where
// it is meaningful.
func TestNearestInt(t *testing.T) {
	for _, f := range []float32{0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.49, 3.7, -4194303, 4194303, 123456.5} {
		require.Equal(t, int32(math.RoundToEven(float64(f))), nearestInt(f), "%v", f)
	}
}
