package openvino

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// TestRMSNormEps: RMS_NORM divides by sqrt(mean(x^2) + eps) with the
// graph's eps. Rows of tiny values make eps dominate (a translator that
// dropped or misplaced it would give 1, or a value off by far more than
// the 1e-5 bound), and a second eps gives a second compiled model, not
// the first one's answer. Runs on the double, or on the real runtime
// with GGML_OPENVINO_LIB.
func TestRMSNormEps(t *testing.T) {
	dev := openDevice(t, buildDouble(t), Options{})
	be := newBackend(dev)
	t.Cleanup(func() { be.Close() })
	const n = 8
	xf := []float32{1e-3, -2e-3, 3e-3, 0, 5e-4, -1e-3, 2e-3, 4e-3}
	for _, eps := range []float32{1e-6, 1e-4, 1e-2} {
		ctx := graph.NewContext(graph.ContextOptions{})
		x := ctx.NewTensor(quant.F32, n, 1)
		x.Name = "x"
		graph.SetInput(x)
		y := ctx.RMSNorm(x, eps)
		y.Name = "y"
		graph.SetOutput(y)
		g, err := ctx.Build(y)
		require.NoError(t, err)
		buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
		require.NoError(t, err)
		require.NoError(t, buffer.SetTensor(x, quant.F32Bytes(xf), 0))
		require.NoError(t, be.GraphCompute(g))
		out := make([]byte, y.NBytes())
		require.NoError(t, buffer.GetTensor(y, out, 0))
		got := quant.BytesF32(out)
		var ms float64
		for _, v := range xf {
			ms += float64(v) * float64(v)
		}
		scale := 1 / math.Sqrt(ms/n+float64(eps))
		for i, v := range xf {
			require.InDelta(t, float64(v)*scale, float64(got[i]), 1e-5*math.Max(1, math.Abs(float64(v)*scale)), "eps %g, element %d", eps, i)
		}
		buf.Free()
	}
}
