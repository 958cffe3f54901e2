package hexagon

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon/internal/double"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

func f32bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x
}

func randF32(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// mmGraph is out = W·x + y with a quantized W in a WEIGHTS buffer and the
// rest in a compute buffer of the same device.
type mmGraph struct {
	w, x, y, out *graph.Tensor
	g            *graph.Graph
	wq           []byte
	xs, ys       []float32
	bufs         []buffer.Buffer
}

func newMMGraph(t *testing.T, dev backend.Device, r *rand.Rand, typ quant.Type, k, m, n int64) *mmGraph {
	wctx := graph.NewContext(graph.ContextOptions{})
	mg := &mmGraph{w: wctx.NewTensor(typ, k, m)}
	wbuf, err := buffer.AllocContextTensors(wctx, dev.BufferType())
	require.NoError(t, err)
	wbuf.SetUsage(buffer.UsageWeights)
	wf := randF32(r, int(k*m))
	mg.wq, err = quant.Quantize(typ, wf, int(m), int(k), nil)
	require.NoError(t, err)
	require.NoError(t, buffer.SetTensor(mg.w, mg.wq, 0))

	ctx := graph.NewContext(graph.ContextOptions{})
	mg.x = ctx.NewTensor(quant.F32, k, n)
	mg.y = ctx.NewTensor(quant.F32, m, n)
	mg.out = ctx.Add(ctx.MulMat(mg.w, mg.x), mg.y)
	mg.g, err = ctx.Build(mg.out)
	require.NoError(t, err)
	cbuf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	mg.bufs = []buffer.Buffer{wbuf, cbuf}
	mg.xs, mg.ys = randF32(r, int(k*n)), randF32(r, int(m*n))
	require.NoError(t, buffer.SetTensor(mg.x, f32bytes(mg.xs), 0))
	require.NoError(t, buffer.SetTensor(mg.y, f32bytes(mg.ys), 0))
	t.Cleanup(mg.free)
	return mg
}

// free releases the graph's buffers (again at cleanup: a no-op).
func (mg *mmGraph) free() {
	for _, b := range mg.bufs {
		_ = b.Free()
	}
}

// want is the result computed on the host from the dequantized weights.
func (mg *mmGraph) want(t *testing.T) []float32 {
	k, m, n := mg.w.Ne[0], mg.w.Ne[1], mg.x.Ne[1]
	wf, err := quant.Dequantize(mg.w.Type, mg.wq, int(k*m))
	require.NoError(t, err)
	out := make([]float32, m*n)
	for j := range n {
		for i := range m {
			var s float64
			for l := range k {
				s += float64(wf[i*k+l]) * float64(mg.xs[j*k+l])
			}
			out[j*m+i] = float32(s) + mg.ys[j*m+i]
		}
	}
	return out
}

func requireClose(t *testing.T, want, got []float32, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.InDelta(t, want[i], got[i], tol*(1+math.Abs(float64(want[i]))), "element %d", i)
	}
}

func TestComputeOnDouble(t *testing.T) {
	d := double.Open(t, double.Full)
	_, devs := openRegistry(t, testOptions(d))
	dev := devs[0]
	require.NoError(t, backend.Availability(dev))
	b, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_1, quant.IQ4_NL, quant.MXFP4, quant.F16, quant.F32} {
		mg := newMMGraph(t, dev, r, typ, 96, 64, 3)
		require.NoError(t, backend.Compute(b, mg.g), "%s\n%s", typ, d.Log())
		got := make([]byte, mg.out.NBytes())
		require.NoError(t, b.GetTensorAsync(mg.out, got, 0))
		requireClose(t, mg.want(t), bytesF32(got), 1e-3)
		// The weight reads back in ggml's layout.
		wb := make([]byte, len(mg.wq))
		require.NoError(t, buffer.GetTensor(mg.w, wb, 0))
		require.Equal(t, mg.wq, wb, typ)
	}
	require.Empty(t, d.Violations())
	require.NoError(t, b.Close())
}
