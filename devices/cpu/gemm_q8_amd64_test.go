//go:build !purego

package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// TestMulMatQ8_0MatchesHaswell: Q8_0 x F32 MUL_MAT on every amd64 level
// the processor runs (its matrix unit left out, as exactSet says) is bit
// for bit ggml's haswell build, which takes products of two columns or
// more to llamafile_sgemm's tinyBLAS_Q0_AVX and the rest to
// ggml_vec_dot_q8_0_q8_0: random row lengths, row counts short of and past
// the tiles' eight, column counts on both sides of the four- and
// eight-column thresholds and of the tiles' four, src1 contiguous, with a
// gap between rows or permuted, weight rows strided, batches broadcast.
func TestMulMatQ8_0MatchesHaswell(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 8))
	e := ggmlVariant(t, "haswell")
	var sets []*kernelSet
	for _, l := range byPriority(levels) {
		if l.supported() {
			sets = append(sets, exactSet(l.kernels()))
		}
	}
	if len(sets) == 0 {
		t.Skip("no amd64 level runs on this processor")
	}
	ks := []int64{32, 64, 96, 160, 256, 640, 32 * (1 + r.Int64N(40))}
	ms := []int64{1, 7, 8, 9, 16, 24, 31, 64, 100, 1 + r.Int64N(300)}
	ns := []int64{1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 32, 33, 64, 1 + r.Int64N(80)}
	for i := range 120 {
		k, m, n := ks[r.IntN(len(ks))], ms[r.IntN(len(ms))], ns[r.IntN(len(ns))]
		layout := []string{"contiguous", "contiguous", "row gap", "permuted"}[r.IntN(4)]
		pad := int64(r.IntN(2)) * 32
		b2 := int64(1 + r.IntN(2))
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		base := c.NewTensor(quant.Q8_0, k+pad, m, b2)
		w := make([]float32, base.NElements())
		for j := range w {
			w[j] = float32(r.NormFloat64())
		}
		_, err := quant.FromFloat(base.Data, quant.Q8_0, w)
		require.NoError(t, err)
		a := c.View3D(base, k, m, b2, base.Nb[1], base.Nb[2], 0)
		out := c.MulMat(a, src1Layout(c, r, layout, k, n, 2*b2))
		require.NoError(t, c.Err())
		for _, s := range sets {
			threads := 1 + i%3
			requireGGMLNode(t, e, out, func() []byte {
				eng := New(Options{Threads: threads})
				defer eng.Close()
				eng.kset = s
				eng.pool.setKernels(s)
				require.NoError(t, eng.ComputeNode(out))
				return append([]byte(nil), out.Data...)
			}, fmt.Sprintf("%s k=%d m=%d n=%d pad=%d b=%d %s threads=%d", s.name, k, m, n, pad, b2, layout, threads))
		}
	}
}
