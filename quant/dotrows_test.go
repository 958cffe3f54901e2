package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDotRowsKernelMatchesDot: the multi-row kernels give each row's
// DotKernel result bit for bit, for row counts around the four rows they
// take at once, padded strides, lengths of zero and one, and non-finite
// values.
func TestDotRowsKernelMatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(uint64(testSeed(t)), 13))
	for _, ty := range []Type{F32, F16} {
		rows, dot := DotRowsKernel(ty), DotKernel(ty)
		require.NotNil(t, rows, "%s", ty)
		for trial := range 200 {
			n := []int{0, 1, 3, 64, 255, 4096}[trial%6]
			nrows := 1 + r.IntN(11)
			rs := int(ty.RowSize(int64(n)))
			stride := rs + 2*r.IntN(4)
			xs := make([]float32, (nrows*stride)/int(ty.TypeSize())+n)
			for i := range xs {
				xs[i] = float32(r.NormFloat64() * 100)
				if r.IntN(500) == 0 {
					xs[i] = float32(math.Inf(1))
				}
			}
			x, err := Quantize(ty, xs, 1, len(xs), nil)
			require.NoError(t, err)
			ys := make([]float32, n)
			for i := range ys {
				ys[i] = float32(r.NormFloat64())
			}
			y, err := Quantize(ty, ys, 1, n, nil)
			require.NoError(t, err)
			out := make([]float32, nrows)
			rows(n, x, uint64(stride), nrows, y, out)
			for row := range nrows {
				want := dot(n, x[row*stride:row*stride+rs], y)
				if want != want && out[row] != out[row] {
					// Both NaN (an Inf times a zero-sum): which NaN bits an
					// Inf-Inf gives depends on the CPU (arm64 and amd64
					// differ in sign and payload), not on the kernel.
					continue
				}
				require.Equal(t, math.Float32bits(want), math.Float32bits(out[row]), "%s trial %d row %d of %d, n=%d", ty, trial, row, nrows, n)
			}
		}
	}
	require.Nil(t, DotRowsKernel(BF16))
	require.Nil(t, DotRowsKernel(Type(1000)))
}
