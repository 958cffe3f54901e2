package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// TestMulMatF32MatchesGGML: F32 x F32 MUL_MAT is bit for bit ggml's x64
// build with the generic kernels, its haswell build with the avx2 and
// avx512vnni levels' and its sapphirerapids build with the amx level's
// (buildSets: each level the processor runs), on both of each build's
// orders of summation: llamafile's sgemm (src1 contiguous, two columns or
// more, rows of whole steps: 8 floats on haswell, 16 on sapphirerapids; a
// multiple of 4 weight rows) and ggml_vec_dot_f32 otherwise (one column,
// src1 a view with a gap between rows or permuted as attention's Q is,
// other row lengths, weight rows not a multiple of 4), with broadcast
// batches and row lengths around the kernels' 8-, 16-, 32- and 64-float
// steps and their leftover loops.
func TestMulMatF32MatchesGGML(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 11))
	for _, v := range buildSets() {
		e := ggmlVariant(t, v.variant)
		eng := New(Options{Threads: 2})
		t.Cleanup(eng.Close)
		eng.kset = v.set
		eng.pool.setKernels(v.set)
		for _, k := range []int64{1, 7, 8, 16, 24, 31, 32, 33, 40, 48, 64, 79, 100, 127, 128, 161, 256, 576} {
			for _, m := range []int64{1, 3, 4, 8, 12, 17} {
				for _, n := range []int64{1, 2, 3, 4, 5, 9} {
					for _, layout := range []string{"contiguous", "row gap", "permuted"} {
						c := graph.NewContext(graph.ContextOptions{Alloc: true})
						a := c.NewTensor(quant.F32, k, m, 2)
						fillF32Wide(r, a)
						out := c.MulMat(a, src1Layout(c, r, layout, k, n, 4))
						require.NoError(t, c.Err())
						requireGGMLNode(t, e, out, func() []byte {
							require.NoError(t, eng.ComputeNode(out))
							return append([]byte(nil), out.Data...)
						}, fmt.Sprintf("%s %s k=%d m=%d n=%d %s", v.set.name, v.variant, k, m, n, layout))
					}
				}
			}
		}
	}
}

// src1Layout is a random F32 src1 of k by n by batch in one of the layouts
// the products see: "contiguous", "row gap" (a view with three floats
// between rows) or "permuted" (dimensions 1 and 2 swapped, as attention's
// Q is).
func src1Layout(c *graph.Context, r *rand.Rand, layout string, k, n, batch int64) *graph.Tensor {
	switch layout {
	case "row gap":
		p := c.NewTensor(quant.F32, k+3, n, batch)
		fillF32Wide(r, p)
		return c.View3D(p, k, n, batch, p.Nb[1], p.Nb[2], 0)
	case "permuted":
		p := c.NewTensor(quant.F32, k, batch, n)
		fillF32Wide(r, p)
		return c.Permute(p, 0, 2, 1, 3)
	}
	b := c.NewTensor(quant.F32, k, n, batch)
	fillF32Wide(r, b)
	return b
}
