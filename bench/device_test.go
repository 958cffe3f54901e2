package bench

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// smallMatMul is MUL_MAT of a 256x16 weight of type t by 6 columns.
func smallMatMul(t quant.Type, seed int64) Workload {
	rng := rand.New(rand.NewSource(seed))
	w := make([]float32, 256*16)
	for i := range w {
		w[i] = 2*rng.Float32() - 1
	}
	x := make([]float32, 256*6)
	for i := range x {
		x[i] = 2*rng.Float32() - 1
	}
	return Workload{
		Build: func(c *graph.Context) (*graph.Graph, error) {
			return c.Build(c.MulMat(c.SetName(c.NewTensor(t, 256, 16), "w"), c.SetName(c.NewTensor(quant.F32, 256, 6), "x")))
		},
		Data: func(tn *graph.Tensor) ([]byte, error) {
			if tn.Name == "w" {
				return quant.Quantize(t, w, 16, 256, nil)
			}
			return quant.F32Bytes(x), nil
		},
	}
}

// TestLoadWithRepack: with repack the CPU's CPU_REPACK takes a Q4_0
// weight and not an F32 one (nor the activations), and the product is
// the plain one's.
func TestLoadWithRepack(t *testing.T) {
	d, err := OpenDevice("CPU", 2)
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	for _, c := range []struct {
		typ  quant.Type
		want []string
	}{{quant.Q4_0, []string{"w"}}, {quant.F32, nil}} {
		var outs [][]byte
		for _, repack := range []bool{false, true} {
			l, err := d.LoadWith(smallMatMul(c.typ, 7), repack)
			require.NoError(t, err)
			if repack {
				require.Equal(t, c.want, l.Repacked, "%s", c.typ)
			}
			require.NoError(t, l.Compute())
			out, err := l.Output()
			require.NoError(t, err)
			outs = append(outs, out)
			require.NoError(t, l.Close())
		}
		require.Equal(t, outs[0], outs[1], "%s", c.typ)
	}
}
