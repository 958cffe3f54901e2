package hexagon

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	double "github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

// TestFusion: with OPFUSION, MUL_MAT+ADD runs as MUL_MAT_ADD and
// RMS_NORM+MUL as RMS_NORM_MUL, with the results of the unfused ops; a
// fused-away tensor used elsewhere is not fused.
func TestFusion(t *testing.T) {
	d := double.Open(t, double.Full)
	for _, on := range []bool{true, false} {
		d.Reset()
		o := testOptions(d)
		o.OpFusion = on
		r, devs := openRegistry(t, o)
		rng := rand.New(rand.NewPCG(31, 32))
		mg := newMMGraph(t, devs[0], rng, quant.Q4_0, 64, 32, 3)
		checkGraph(t, devs[0], mg)

		ctx := graph.NewContext(graph.ContextOptions{})
		x := ctx.NewTensor(quant.F32, 64, 3)
		w := ctx.NewTensor(quant.F32, 64)
		nrm := ctx.RMSNorm(x, 1e-6)
		y := ctx.Mul(nrm, w)
		z := ctx.Add(ctx.RMSNorm(x, 1e-6), x) // not fusable: ADD
		g, err := ctx.Build(y, z)
		require.NoError(t, err)
		buf, err := buffer.AllocContextTensors(ctx, devs[0].BufferType())
		require.NoError(t, err)
		xs, ws := randF32(rng, 192), randF32(rng, 64)
		require.NoError(t, buffer.SetTensor(x, quant.F32Bytes(xs), 0))
		require.NoError(t, buffer.SetTensor(w, quant.F32Bytes(ws), 0))
		b, err := devs[0].Init(backend.Options{})
		require.NoError(t, err)
		require.NoError(t, backend.Compute(b, g))
		out := make([]byte, y.NBytes())
		require.NoError(t, buffer.GetTensor(y, out, 0))
		got := quant.BytesF32(out)
		for row := range 3 {
			var ss float64
			for _, v := range xs[row*64 : row*64+64] {
				ss += float64(v) * float64(v)
			}
			scale := 1 / float32(math.Sqrt(ss/64+1e-6))
			for i := range 64 {
				require.InDelta(t, xs[row*64+i]*scale*ws[i], got[row*64+i], 1e-4)
			}
		}
		if on {
			require.Equal(t, uint64(1), d.Stat("op.MUL_MAT_ADD"))
			require.Equal(t, uint64(1), d.Stat("op.RMS_NORM_MUL"))
			require.Equal(t, uint64(1), d.Stat("op.RMS_NORM"), "the ADD is not fused")
		} else {
			require.Zero(t, d.Stat("op.MUL_MAT_ADD"))
			require.Zero(t, d.Stat("op.RMS_NORM_MUL"))
			require.Equal(t, uint64(2), d.Stat("op.RMS_NORM"))
		}
		require.NoError(t, buf.Free())
		mg.free()
		require.NoError(t, r.Close())
	}
}
