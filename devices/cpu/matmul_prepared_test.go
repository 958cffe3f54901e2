package cpu

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// TestGenericProductsMatchDot: products on the generic kernel set, whose
// quantized types go through quant's prepared multi-row kernels (one
// column, or runs of rows per column: productPrepared), give every output
// element bit for bit quant.DotKernel of its weight row with its converted
// activation row, and NaN for a column with a non-finite value; for 1 and
// 3 threads, batches broadcast over the weights, rows long enough that a
// product takes several runs.
func TestGenericProductsMatchDot(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	engines := []*Engine{New(Options{Threads: 1, Generic: true}), New(Options{Threads: 3, Generic: true})}
	for _, e := range engines {
		defer e.Close()
	}
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_K, quant.Q6_K} {
		require.True(t, genericKernels.traits[typ].rowsPrepare, "%s", typ)
		vdt := typ.VecDotType()
		dot := quant.DotKernel(typ)
		for trial := range 4 {
			bs := int64(max(typ.BlockSize(), vdt.BlockSize()))
			k := bs * int64(1+rng.Intn(4))
			m, n := int64(1+rng.Intn(40)), int64(1+rng.Intn(6))
			if trial == 0 {
				k, m = 16384, 40 // 17 KiB rows or so: runs of 16 rows
			}
			if trial == 1 {
				n = 1
			}
			a2, r2 := int64(1+rng.Intn(2)), int64(1+rng.Intn(2))
			name := fmt.Sprintf("%s/k=%d,m=%d,n=%d,batch=%dx%d", typ, k, m, n, a2, r2)
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			a := c.NewTensor(typ, k, m, a2)
			b := c.NewTensor(quant.F32, k, n, a2*r2)
			out := c.MulMat(a, b)
			require.NoError(t, c.Err(), name)
			_, err := quant.FromFloat(a.Data, typ, mmRandF32s(rng, a.NElements()))
			require.NoError(t, err, name)
			bf := mmRandF32s(rng, b.NElements())
			if n > 1 {
				bf[int64(rng.Intn(int(n*a2*r2)))*k+int64(rng.Intn(int(k)))] = float32(math.Inf(1))
			}
			mmSetF32s(b, bf)
			want := make([]float32, m*n*a2*r2)
			rs, ys := typ.RowSize(k), vdt.RowSize(k)
			for col := range n * a2 * r2 {
				y := make([]byte, ys)
				_, err := quant.FromFloat(y, vdt, bf[col*k:(col+1)*k])
				bad := err != nil
				mat := col / n / r2
				for row := range m {
					off := (mat*m + row) * rs
					if bad {
						want[col*m+row] = float32(math.NaN())
					} else {
						want[col*m+row] = dot(int(k), a.Data[off:off+rs], y)
					}
				}
			}
			for _, e := range engines {
				clear(out.Data)
				require.NoError(t, e.ComputeNode(out), name)
				for i, g := range mmF32s(out) {
					if math.IsNaN(float64(want[i])) {
						require.True(t, math.IsNaN(float64(g)), "%s element %d: got %v, want NaN", name, i, g)
						continue
					}
					require.Equal(t, math.Float32bits(want[i]), math.Float32bits(g), "%s element %d: got %v, want %v", name, i, g, want[i])
				}
			}
		}
	}
}
