package cpu

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// TestTopKIsStableArgsortPrefix checks that TOP_K's heap selection gives
// exactly the first k indices of a stable descending ARGSORT, on rows full
// of ties and with NaNs and infinities, for k from 1 to the row length.
func TestTopKIsStableArgsortPrefix(t *testing.T) {
	e := New(Options{Threads: 3})
	defer e.Close()
	rng := rand.New(rand.NewSource(1))
	const n, rows = 37, 5
	for k := 1; k <= n; k++ {
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		a := c.NewTensor(quant.F32, n, rows)
		for i := range a.NElements() {
			v := float32(rng.Intn(6))
			switch rng.Intn(12) {
			case 0:
				v = float32(math.NaN())
			case 1:
				v = float32(math.Inf(1 - 2*rng.Intn(2)))
			}
			binary.LittleEndian.PutUint32(a.Data[4*i:], math.Float32bits(v))
		}
		top, sorted := c.TopK(a, k), c.Argsort(a, ops.SortDesc)
		g, err := c.Build(top, sorted)
		require.NoError(t, err)
		require.NoError(t, e.Compute(g))
		for r := range int64(rows) {
			for i := range int64(k) {
				require.Equal(t, getI32(sorted.Data, offset(sorted, i, r, 0, 0)), getI32(top.Data, offset(top, i, r, 0, 0)),
					"k %d row %d position %d", k, r, i)
			}
		}
	}
}

// TestSumSquaresF64x4: the four-row sums are sumSquaresF64's bit for bit,
// over lengths around nothing and long rows, values spread over many
// exponents (where the order of the float64 additions matters).
func TestSumSquaresF64x4(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	for _, n := range []int{0, 1, 2, 3, 7, 64, 255, 256, 4097} {
		var rows [4][]float32
		for i := range rows {
			rows[i] = make([]float32, n)
			for j := range rows[i] {
				rows[i][j] = float32(r.NormFloat64() * math.Exp(20*r.NormFloat64()))
			}
		}
		a, b, c, d := sumSquaresF64x4(rows[0], rows[1], rows[2], rows[3])
		for i, got := range []float64{a, b, c, d} {
			require.Equal(t, math.Float64bits(sumSquaresF64(rows[i])), math.Float64bits(got), "n=%d row %d", n, i)
		}
	}
}
