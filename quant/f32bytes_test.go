package quant

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestF32BytesRoundTrip(t *testing.T) {
	x := []float32{0, -1.5, float32(math.Inf(1)), math.SmallestNonzeroFloat32, 3.25e30}
	b := F32Bytes(x)
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0xc0, 0xbf}, b[:8])
	require.Equal(t, x, BytesF32(b))
	require.Len(t, BytesF32(b[:7]), 1, "a partial value is ignored")
}
