package cpu

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// TestRowIndex: the division-free walk visits the rows of a tensor, and of
// a source broadcast into it, exactly as splitting each row number does,
// from any starting row.
func TestRowIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t)))
	c := graph.NewContext(graph.ContextOptions{})
	for range 200 {
		var ne, nb [4]int64
		ne[0], nb[0] = 1, 1
		for d := 1; d < 4; d++ {
			nb[d] = int64(1 + rng.Intn(3))
			ne[d] = nb[d] * int64(1+rng.Intn(3))
		}
		a := c.NewTensor(quant.F32, ne[:]...)
		b := c.NewTensor(quant.F32, nb[:]...)
		rows := a.NRows()
		lo := rng.Int63n(rows)
		var ri, bi rowIndex
		ri.start(a, lo)
		bi.startWith(b, &ri)
		for r := lo; r < rows; r++ {
			i1, i2, i3 := r%ne[1], r/ne[1]%ne[2], r/(ne[1]*ne[2])
			require.Equal(t, [3]int64{i1, i2, i3}, [3]int64{ri.i1, ri.i2, ri.i3}, "ne %v row %d", ne, r)
			require.Equal(t, [3]int64{i1 % nb[1], i2 % nb[2], i3 % nb[3]}, [3]int64{bi.i1, bi.i2, bi.i3}, "ne %v nb %v row %d", ne, nb, r)
			bi.nextWith(&ri)
		}
	}
}
