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
	require.NoError(t, buffer.SetTensor(mg.x, quant.F32Bytes(mg.xs), 0))
	require.NoError(t, buffer.SetTensor(mg.y, quant.F32Bytes(mg.ys), 0))
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

// TestComputeOnDouble: MUL_MAT (+ADD, fused) over every weight type, the
// quantized ones tiled, with ne1 a multiple of 32 or not (upstream sends a
// tiled weight's own ne with the padded layout's strides), under both
// protocols; the weights read back in ggml's layout.
func TestComputeOnDouble(t *testing.T) {
	for _, proto := range []Protocol{ProtocolPublic, ProtocolFence} {
		t.Run(map[Protocol]string{ProtocolPublic: "public", ProtocolFence: "fence"}[proto], func(t *testing.T) {
			d := double.Open(t, double.Full)
			o := testOptions(d)
			if proto == ProtocolFence {
				d.Configure(t, "protocol=fence")
				o.Protocol = proto
			}
			_, devs := openRegistry(t, o)
			dev := devs[0]
			require.NoError(t, backend.Availability(dev))
			b, err := dev.Init(backend.Options{})
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(3, 4))
			for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_1, quant.IQ4_NL, quant.MXFP4, quant.F16, quant.F32} {
				for _, m := range []int64{64, 45, 1, 70} {
					mg := newMMGraph(t, dev, r, typ, 96, m, 3)
					require.NoError(t, backend.Compute(b, mg.g), "%s m=%d\n%s", typ, m, d.Log())
					got := make([]byte, mg.out.NBytes())
					require.NoError(t, b.GetTensorAsync(mg.out, got, 0))
					requireClose(t, mg.want(t), quant.BytesF32(got), 1e-3)
					wb := make([]byte, len(mg.wq))
					require.NoError(t, buffer.GetTensor(mg.w, wb, 0))
					require.Equal(t, mg.wq, wb, "%s m=%d", typ, m)
					mg.free()
				}
			}
			require.Empty(t, d.Violations())
			require.NoError(t, b.Close())
		})
	}
}

// TestPlanner: the multi-buffer plan keeps a layer's KV cache in one
// buffer and splits at GGML_HEXAGON_MBUF's static size.
func TestPlanner(t *testing.T) {
	d := double.Open(t, double.Full)
	o := testOptions(d)
	o.MbufStatic = 3 * 4096
	_, devs := openRegistry(t, o)
	bt := devs[0].BufferType().(*bufferType)
	ctx := graph.NewContext(graph.ContextOptions{})
	mk := func(name string) *graph.Tensor { return ctx.SetName(ctx.NewTensor(quant.F32, 1024), name) }
	ts := []*graph.Tensor{mk("cache_k_l0"), mk("cache_v_l0"), mk("cache_k_l1"), mk("cache_v_l1"), mk("w")}
	v := ctx.View1D(ts[0], 16, 0)
	all := append([]*graph.Tensor{ts[0], v}, ts[1:]...)
	plan := bt.plan(all)
	require.Equal(t, []planItem{{size: 8192, first: 0, last: 3}, {size: 12288, first: 3, last: 6}}, plan)
	require.Equal(t, uint64(20480), bt.TensorsSize(all))
	b, err := buffer.AllocContextTensors(ctx, bt)
	require.NoError(t, err)
	m, ok := b.(*buffer.Multi)
	require.True(t, ok)
	require.Len(t, m.Parts(), 2)
	require.Same(t, ts[0].Buffer, ts[1].Buffer, "one layer, one buffer")
	require.Same(t, ts[2].Buffer, ts[3].Buffer)
	require.NotSame(t, ts[0].Buffer, ts[2].Buffer)
	require.Same(t, v.Buffer, ts[0].Buffer)
	require.NoError(t, b.Free())
}

// TestTiledPartialSets: a weight set in pieces (row blocks, then 2-D) is
// repacked once complete; reads before that come from the shadow copy;
// reads after unpack any row range; the DSP computes with it.
func TestTiledPartialSets(t *testing.T) {
	d := double.Open(t, double.Full)
	_, devs := openRegistry(t, testOptions(d))
	dev := devs[0]
	r := rand.New(rand.NewPCG(11, 12))
	mg := newMMGraph(t, dev, r, quant.Q4_1, 64, 45, 2) // 45 rows: a padded last column tile
	x := mg.w.Extra.(*extra)
	require.True(t, x.tiled())
	rb := mg.w.Nb[1]
	// Rewrite the weight in two parts: after the first the shadow answers.
	require.NoError(t, buffer.SetTensor(mg.w, mg.wq[:20*rb], 0))
	require.NotNil(t, x.shadow)
	part := make([]byte, 4*rb)
	require.NoError(t, buffer.GetTensor(mg.w, part, 2*rb))
	require.Equal(t, mg.wq[2*rb:6*rb], part)
	wb, err := buffer.Of(mg.w)
	require.NoError(t, err)
	// The rest as 2-D rows, one row per copy.
	require.NoError(t, wb.SetTensor2D(mg.w, mg.wq[20*rb:], 20*rb, rb, 25, rb, rb))
	require.Nil(t, x.shadow, "complete: repacked")
	got := make([]byte, 3*rb+5)
	require.NoError(t, buffer.GetTensor(mg.w, got, 7*rb+3))
	require.Equal(t, mg.wq[7*rb+3:10*rb+8], got, "a range not on row boundaries")
	rows := make([]byte, 2*rb)
	require.NoError(t, wb.GetTensor2D(mg.w, rows, 5*rb, rb, 2, 10*rb, rb))
	require.Equal(t, append(append([]byte{}, mg.wq[5*rb:6*rb]...), mg.wq[15*rb:16*rb]...), rows)
	checkGraph(t, dev, mg)
}

// checkGraph computes mg on dev and compares with the host result.
func checkGraph(t *testing.T, dev backend.Device, mg *mmGraph) {
	t.Helper()
	b, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	require.NoError(t, backend.Compute(b, mg.g))
	out := make([]byte, mg.out.NBytes())
	require.NoError(t, b.GetTensorAsync(mg.out, out, 0))
	requireClose(t, mg.want(t), quant.BytesF32(out), 1e-3)
	require.NoError(t, b.Close())
}

// TestRuntimeRepack: a quantized weight in a compute buffer is tiled in
// place for the DSP (RT_REPACK=1) and still reads back in ggml's layout;
// with RT_REPACK=0 it is an error, not garbage.
func TestRuntimeRepack(t *testing.T) {
	d := double.Open(t, double.Full)
	for _, rt := range []int{1, 0} {
		o := testOptions(d)
		o.RTRepack = rt
		r, devs := openRegistry(t, o)
		mg := newMMGraph(t, devs[0], rand.New(rand.NewPCG(13, 14)), quant.Q8_0, 64, 64, 2)
		mg.bufs[0].SetUsage(buffer.UsageCompute)
		x := mg.w.Extra.(*extra)
		x.flags = 0
		require.NoError(t, buffer.SetTensor(mg.w, mg.wq, 0))
		require.False(t, x.tiled())
		if rt == 0 {
			b, err := devs[0].Init(backend.Options{})
			require.NoError(t, err)
			require.ErrorContains(t, b.GraphCompute(mg.g), "RT_REPACK=0")
		} else {
			checkGraph(t, devs[0], mg)
			require.True(t, x.tiled())
			wb := make([]byte, len(mg.wq))
			require.NoError(t, buffer.GetTensor(mg.w, wb, 0))
			require.Equal(t, mg.wq, wb)
			// A host write into it untiles it first.
			require.NoError(t, buffer.SetTensor(mg.w, mg.wq[:mg.w.Nb[1]], 0))
			require.False(t, x.tiled())
			require.NoError(t, buffer.GetTensor(mg.w, wb, 0))
			require.Equal(t, mg.wq, wb)
		}
		mg.free()
		require.NoError(t, r.Close())
	}
}

// TestHostBuffer: HOSTBUF offers a host buffer type over rpcmem whose
// tensors the CPU addresses, never repacked, usable by the DSP.
func TestHostBuffer(t *testing.T) {
	d := double.Open(t, double.Full)
	o := testOptions(d)
	o.HostBuf = true
	_, devs := openRegistry(t, o)
	hb, ok := devs[0].(backend.HostBufferTyper)
	require.True(t, ok)
	ht := hb.HostBufferType()
	require.NotNil(t, ht)
	require.True(t, ht.IsHost())
	require.True(t, devs[0].SupportsBufferType(ht))
	require.Equal(t, "HTP0-HOST", ht.Name())
	ctx := graph.NewContext(graph.ContextOptions{})
	a := ctx.NewTensor(quant.F32, 64, 2)
	bb := ctx.NewTensor(quant.F32, 64, 2)
	c := ctx.Add(a, bb)
	g, err := ctx.Build(c)
	require.NoError(t, err)
	buf, err := buffer.AllocContextTensors(ctx, ht)
	require.NoError(t, err)
	defer buf.Free()
	require.NotNil(t, a.Data, "host memory")
	r := rand.New(rand.NewPCG(1, 1))
	xa, xb := randF32(r, 128), randF32(r, 128)
	copy(a.Data, quant.F32Bytes(xa))
	copy(bb.Data, quant.F32Bytes(xb))
	be, err := devs[0].Init(backend.Options{})
	require.NoError(t, err)
	require.NoError(t, backend.Compute(be, g))
	got := quant.BytesF32(c.Data)
	for i := range xa {
		require.Equal(t, xa[i]+xb[i], got[i])
	}
	o.HostBuf = false
	_, devs = openRegistry(t, o)
	require.Nil(t, devs[0].(backend.HostBufferTyper).HostBufferType())
}

// TestDMA64: on v81 weights are mapped extended (FASTRPC_MAP_FD_DELAYED_
// EXTENDED, 2 MiB-aligned blocks, HTP_BUF_EXTENDED, outside vmem); with
// GGML_HEXAGON_DMA64=0 they are not. Under the fence protocol the double
// also holds each buffer's EXTENDED flag to its mapping.
func TestDMA64(t *testing.T) {
	d := double.Open(t, double.Full)
	for _, c := range []struct {
		dma   int
		proto Protocol
	}{{Auto, ProtocolPublic}, {0, ProtocolPublic}, {Auto, ProtocolFence}, {0, ProtocolFence}} {
		dma := c.dma
		d.Reset()
		d.Configure(t, "arch=81")
		if c.proto == ProtocolFence {
			d.Configure(t, "protocol=fence")
		}
		o := testOptions(d)
		o.DMA64, o.Protocol = dma, c.proto
		r, devs := openRegistry(t, o)
		require.Equal(t, 81, r.Arch())
		checkCompute(t, devs[0])
		log := d.CallLog(t)
		if dma == Auto {
			require.Contains(t, log, "flags 18) -> 0x0")
			require.Regexp(t, `rpcmem_alloc2\(heap 25, flags 0x1, 2097152\)`, log)
		} else {
			require.NotContains(t, log, "flags 18)")
		}
		require.Empty(t, d.Violations())
		require.NoError(t, r.Close())
	}
}
