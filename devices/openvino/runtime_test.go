package openvino

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// addGraph is y = a + b in a compute buffer of the device.
func addGraph(t *testing.T, dev *device, n int64) (g *graph.Graph, a, b, y *graph.Tensor) {
	ctx := graph.NewContext(graph.ContextOptions{})
	a, b = ctx.NewTensor(quant.F32, n, 2), ctx.NewTensor(quant.F32, n, 2)
	a.Name, b.Name = "a", "b"
	y = ctx.Add(a, b)
	y.Name = "y"
	g, err := ctx.Build(y)
	require.NoError(t, err)
	buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	t.Cleanup(func() { buf.Free() })
	x := make([]float32, 2*n)
	for i := range x {
		x[i] = float32(i)
	}
	require.NoError(t, buffer.SetTensor(a, quant.F32Bytes(x), 0))
	require.NoError(t, buffer.SetTensor(b, quant.F32Bytes(x), 0))
	return g, a, b, y
}

func getF32(t *testing.T, x *graph.Tensor) []float32 {
	b := make([]byte, x.NBytes())
	require.NoError(t, buffer.GetTensor(x, b, 0))
	return quant.BytesF32(b)
}

// A compiled model is reused for a graph of the same structure (also a
// fresh one in new buffers, by another backend); DISABLE_CACHE compiles
// every time.
func TestCompiledModelCache(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{})
	before := doubleStat(t, p, "compile.count")
	be := newBackend(dev)
	defer be.Close()
	g, _, _, y := addGraph(t, dev, 16)
	require.NoError(t, be.GraphCompute(g))
	require.NoError(t, be.GraphCompute(g))
	g2, _, _, y2 := addGraph(t, dev, 16)
	be2 := newBackend(dev)
	defer be2.Close()
	require.NoError(t, be2.GraphCompute(g2))
	require.Equal(t, before+1, doubleStat(t, p, "compile.count"), "one compile for three computes")
	require.Equal(t, float32(2*31), getF32(t, y)[31])
	require.Equal(t, getF32(t, y), getF32(t, y2))
	g3, _, _, _ := addGraph(t, dev, 8)
	require.NoError(t, be.GraphCompute(g3))
	require.Equal(t, before+2, doubleStat(t, p, "compile.count"), "another shape is another model")

	nc := openDevice(t, p, Options{DisableCache: true})
	be3 := newBackend(nc)
	defer be3.Close()
	g4, _, _, _ := addGraph(t, nc, 16)
	before = doubleStat(t, p, "compile.count")
	require.NoError(t, be3.GraphCompute(g4))
	require.NoError(t, be3.GraphCompute(g4))
	require.Equal(t, before+2, doubleStat(t, p, "compile.count"))
}

// The same graph computed again binds nothing (the snapshot proves its
// tensors unchanged); the same graph object with an input moved to other
// memory is noticed, rebound and computed from the new memory.
func TestSameGraphRebindsMovedInput(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{})
	be := newBackend(dev)
	defer be.Close()
	g, a, _, y := addGraph(t, dev, 16)
	require.NoError(t, be.GraphCompute(g))
	binds := func() int64 {
		return doubleStat(t, p, "calls.ov_infer_request_set_input_tensor_by_index") +
			doubleStat(t, p, "calls.ov_infer_request_set_output_tensor_by_index")
	}
	b0 := binds()
	require.NoError(t, be.GraphCompute(g))
	require.Equal(t, b0, binds(), "an unchanged graph binds nothing")
	moveTo100(t, dev, a)
	require.NoError(t, be.GraphCompute(g))
	require.Equal(t, b0+1, binds(), "the moved input is rebound, nothing else")
	require.Equal(t, float32(100+5+5), getF32(t, y)[5])
}

// The weight memory a device reports: weights in WEIGHTS buffers once
// (converted in place), a quantized weight outside them counted again,
// once for every compiled model that reads it.
func TestWeightMemory(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{})
	require.Zero(t, dev.WeightMemory().Held())
	r := rand.New(rand.NewPCG(5, 5))
	_, _, _, _ = mulMatWeights(t, dev, quant.Q4_0, "blk.0.attn_q.weight", 256, 8, 3, r)
	wm := dev.WeightMemory()
	require.Positive(t, wm.Buffers)
	require.Zero(t, wm.Copied, "a converted weight is used in place")
	require.Equal(t, 1, wm.Models)
	// a Q8_0 matrix in a compute buffer: converted at compile time
	ctx := graph.NewContext(graph.ContextOptions{})
	w, x := ctx.NewTensor(quant.Q8_0, 64, 4), ctx.NewTensor(quant.F32, 64, 2)
	g, err := ctx.Build(ctx.MulMat(w, x))
	require.NoError(t, err)
	buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	defer buf.Free()
	require.NoError(t, buffer.SetTensor(w, make([]byte, w.NBytes()), 0))
	be := newBackend(dev)
	defer be.Close()
	require.NoError(t, be.GraphCompute(g))
	wm2 := dev.WeightMemory()
	require.Equal(t, 2, wm2.Models)
	require.GreaterOrEqual(t, wm2.Copied, uint64(64*4), "the Q8_0 weight's bytes held again")
	require.Equal(t, wm2.Buffers+wm2.Copied, wm2.Held())
	require.Contains(t, wm2.String(), "converted from host tensors for 2 compiled model(s)")
	// Another model over the same tensor shares its conversion (it was
	// one copy per compiled model).
	x3 := ctx.NewTensor(quant.F32, 64, 3)
	g3, err := ctx.Build(ctx.MulMat(w, x3))
	require.NoError(t, err)
	buf3, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	defer buf3.Free()
	require.NoError(t, be.GraphCompute(g3))
	wm3 := dev.WeightMemory()
	require.Equal(t, 3, wm3.Models)
	require.Equal(t, wm2.Copied, wm3.Copied, "one conversion for both models")
	// New bytes in the tensor are another conversion; the old one goes
	// with the models holding it.
	require.NoError(t, buffer.SetTensor(w, bytes.Repeat([]byte{1}, int(w.NBytes())), 0))
	g4, err := ctx.Build(ctx.MulMat(w, x3))
	require.NoError(t, err)
	buf4, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	defer buf4.Free()
	require.NoError(t, be.GraphCompute(g4))
	require.Equal(t, 2*wm2.Copied, dev.WeightMemory().Copied, "the old conversion is held by the cached models")
}

// OpenVINO's errors come back with their message; a failed compile or
// infer leaves the output untouched and the backend usable.
func TestFailuresLeaveBackendUsable(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{})
	be := newBackend(dev)
	defer be.Close()
	g, _, _, y := addGraph(t, dev, 32)
	require.NoError(t, y.Buffer.(buffer.Buffer).MemsetTensor(y, 0x7f, 0, y.NBytes()))
	marker := getF32(t, y)

	knob(t, p, "fail", "compile")
	err := be.GraphCompute(g)
	require.ErrorIs(t, err, ErrNative)
	require.Contains(t, err.Error(), "injected failure at compile")
	require.Equal(t, marker, getF32(t, y))
	knob(t, p, "fail", "")
	require.Zero(t, doubleStat(t, p, "live.string"), "error messages are freed")

	require.NoError(t, be.GraphCompute(g))
	require.Equal(t, float32(2*5), getF32(t, y)[5])

	g2, _, _, y2 := addGraph(t, dev, 32)
	require.NoError(t, y2.Buffer.(buffer.Buffer).MemsetTensor(y2, 0x7f, 0, y2.NBytes()))
	knob(t, p, "fail", "infer")
	err = be.GraphCompute(g2)
	require.ErrorContains(t, err, "injected failure at infer")
	require.Equal(t, marker, getF32(t, y2), "a failed infer writes nothing")
	knob(t, p, "fail", "")
	require.NoError(t, be.GraphCompute(g2))
	require.Equal(t, getF32(t, y), getF32(t, y2))

	knob(t, p, "fail", "alloc")
	g3, _, _, _ := addGraph(t, dev, 64)
	err = be.GraphCompute(g3)
	require.ErrorContains(t, err, "bad_alloc")
	knob(t, p, "fail", "")
	require.NoError(t, be.GraphCompute(g3))
}

// RELEASE_WEIGHTS (GPU): after the first cache hit the host weight pages
// are dropped; a later compile needing them, or setting another model's
// weights, is an error, never silent garbage.
func TestReleaseWeights(t *testing.T) {
	p := buildDouble(t)
	knob(t, p, "devices", "CPU,GPU")
	dev := openDevice(t, p, Options{Device: "GPU", ReleaseWeights: On})
	require.Equal(t, KindGPU, dev.Kind())
	r := rand.New(rand.NewPCG(3, 3))
	_, _, _, _ = mulMatWeights(t, dev, quant.F16, "blk.0.w.weight", 64, 4, 2, r)
	require.False(t, dev.weights.isReleased())
	// the same graph structure over the same weights... needs the same
	// weight buffer: run it twice through one graph
	ctxW := graph.NewContext(graph.ContextOptions{})
	w := ctxW.NewTensor(quant.F16, 1024, 8) // whole pages to drop
	wbuf, err := buffer.AllocContextTensors(ctxW, dev.BufferType())
	require.NoError(t, err)
	defer wbuf.Free()
	wbuf.SetUsage(buffer.UsageWeights)
	require.NoError(t, buffer.SetTensor(w, make([]byte, w.NBytes()), 0))
	ctx := graph.NewContext(graph.ContextOptions{})
	x := ctx.NewTensor(quant.F32, 1024, 2)
	y := ctx.MulMat(w, x)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	cbuf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	defer cbuf.Free()
	be := newBackend(dev)
	defer be.Close()
	require.NoError(t, be.GraphCompute(g))
	require.NoError(t, be.GraphCompute(g)) // cache hit: released
	require.True(t, dev.weights.isReleased())
	wm := dev.WeightMemory()
	require.Positive(t, wm.Released)
	require.Equal(t, wm.Buffers-wm.Released, wm.Held(), "released pages are not held")
	// a new model's weights
	err = buffer.SetTensor(w, make([]byte, w.NBytes()), 0)
	require.ErrorIs(t, err, ErrWeightsReleased)
	// a recompile over released weights
	g2, _, _ := mulMatGraph(t, dev, w, 3)
	require.ErrorIs(t, be.GraphCompute(g2), ErrWeightsReleased)
}

// mulMatGraph is a graph of w times an F32 x of n columns, placed in a
// buffer of dev that the test frees.
func mulMatGraph(t *testing.T, dev *device, w *graph.Tensor, n int64) (g *graph.Graph, x, y *graph.Tensor) {
	ctx := graph.NewContext(graph.ContextOptions{})
	x = ctx.NewTensor(quant.F32, w.Ne[0], n)
	y = ctx.MulMat(w, x)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	t.Cleanup(func() { _ = buf.Free() })
	return g, x, y
}

// weightMatrix is a rows x k matrix of type typ set to data in a WEIGHTS
// buffer of dev that the test frees.
func weightMatrix(t *testing.T, dev *device, typ quant.Type, k, rows int64, data []byte) *graph.Tensor {
	ctxW := graph.NewContext(graph.ContextOptions{})
	w := ctxW.NewTensor(typ, k, rows)
	wbuf, err := buffer.AllocContextTensors(ctxW, dev.BufferType())
	require.NoError(t, err)
	t.Cleanup(func() { _ = wbuf.Free() })
	wbuf.SetUsage(buffer.UsageWeights)
	if data != nil {
		require.NoError(t, buffer.SetTensor(w, data, 0))
	}
	return w
}

// RELEASE_WEIGHTS on the CPU drops only the pages of converted weights
// that the compiled models read as MatMul weights alone (the real CPU
// plugin repacks those at compile time; it reads the rest in place): a
// Q8_0 matrix of a MUL_MAT is dropped; one also read by GET_ROWS, and an
// F32 weight of a MUL, keep their bytes.
func TestReleaseWeightsCPU(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{ReleaseWeights: On})
	require.Equal(t, KindCPU, dev.Kind())
	r := rand.New(rand.NewPCG(6, 6))
	const k = 4096 // whole pages of each weight
	ctxW := graph.NewContext(graph.ContextOptions{})
	wq, wg, wn := ctxW.NewTensor(quant.Q8_0, k, 8), ctxW.NewTensor(quant.Q8_0, k, 8), ctxW.NewTensor(quant.F32, k)
	wbuf, err := buffer.AllocContextTensors(ctxW, dev.BufferType())
	require.NoError(t, err)
	defer wbuf.Free()
	wbuf.SetUsage(buffer.UsageWeights)
	orig := map[*graph.Tensor][]byte{}
	for _, w := range []*graph.Tensor{wq, wg, wn} {
		x := make([]float32, w.NElements())
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		data := quant.F32Bytes(x)
		if w.Type != quant.F32 {
			data, err = quant.Quantize(w.Type, x, int(w.Ne[1]), int(w.Ne[0]), nil)
			require.NoError(t, err)
		}
		require.NoError(t, buffer.SetTensor(w, data, 0))
		orig[w] = data
	}
	ctx := graph.NewContext(graph.ContextOptions{})
	x := ctx.NewTensor(quant.F32, k, 2)
	ids := ctx.NewTensor(quant.I32, 2)
	out := ctx.Add(ctx.Add(ctx.MulMat(wq, x), ctx.MulMat(wg, x)), ctx.SumRows(ctx.Add(ctx.GetRows(wg, ids), ctx.Mul(x, wn))))
	g, err := ctx.Build(out)
	require.NoError(t, err)
	cbuf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	defer cbuf.Free()
	require.NoError(t, buffer.SetTensor(ids, []byte{1, 0, 0, 0, 5, 0, 0, 0}, 0))
	be := newBackend(dev)
	defer be.Close()
	require.NoError(t, be.GraphCompute(g))
	require.Zero(t, dev.WeightMemory().Released)
	require.NoError(t, be.GraphCompute(g)) // cache hit: released
	wm := dev.WeightMemory()
	l, ok := layoutFor(wq, KindCPU, defaultRequant)
	require.True(t, ok)
	page := uint64(os.Getpagesize())
	require.GreaterOrEqual(t, wm.Released, l.total-2*page, "wq's pages")
	require.LessOrEqual(t, wm.Released, l.total, "only wq's pages")
	for _, w := range []*graph.Tensor{wg, wn} {
		got := make([]byte, w.NBytes())
		require.NoError(t, buffer.GetTensor(w, got, 0))
		require.Equal(t, orig[w], got, "%v weight read in place keeps its bytes", w.Type)
	}
	// Anonymous memory: the dropped weights read as zeros, so another
	// shape cannot be compiled.
	g2, _, _ := mulMatGraph(t, dev, wq, 3)
	require.ErrorIs(t, be.GraphCompute(g2), ErrWeightsReleased)
}

// RELEASE_WEIGHTS over SPILL_DIR buffers: dropped pages refill from the
// file, so a shape compiled after the release gets the weights' values
// (not zeros), and the next cache hit drops them again.
func TestReleaseWeightsSpill(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{ReleaseWeights: On, SpillDir: t.TempDir()})
	r := rand.New(rand.NewPCG(8, 8))
	const k = 4096
	w := weightMatrix(t, dev, quant.Q8_0, k, 8, nil)
	vals := make([]float32, w.NElements())
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	q, err := quant.Quantize(w.Type, vals, int(w.Ne[1]), int(w.Ne[0]), nil)
	require.NoError(t, err)
	require.NoError(t, buffer.SetTensor(w, q, 0))
	xs := make([]float32, 3*k)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	be := newBackend(dev)
	defer be.Close()
	// run computes W x for the first n columns of xs on a graph of its own.
	run := func(n int) (*graph.Graph, []float32) {
		g, x, y := mulMatGraph(t, dev, w, int64(n))
		require.NoError(t, buffer.SetTensor(x, quant.F32Bytes(xs[:n*k]), 0))
		require.NoError(t, be.GraphCompute(g))
		return g, getF32(t, y)
	}
	g2, before := run(2)
	require.NoError(t, be.GraphCompute(g2)) // cache hit: released
	require.Positive(t, dev.WeightMemory().Released)
	require.False(t, dev.weights.isLost(), "a spill mapping keeps its pages' contents")
	_, after := run(3) // compiled after the release
	require.Equal(t, before, after[:len(before)], "the new model read the weights, not zeros")
	require.True(t, dev.weights.stale)
	require.NoError(t, be.GraphCompute(g2)) // the next hit drops them again
	require.False(t, dev.weights.stale)
}

// SPILL_DIR backs weight buffers with an unlinked file there.
func TestSpillDir(t *testing.T) {
	p := buildDouble(t)
	dir := t.TempDir()
	dev := openDevice(t, p, Options{SpillDir: dir})
	r := rand.New(rand.NewPCG(4, 4))
	got, want, _, _ := mulMatWeights(t, dev, quant.Q4_0, "blk.0.s.weight", 256, 4, 2, r)
	require.Less(t, nmse(got, want), 1e-10)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "the spill file is unlinked at once")
	_, err = dev.BufferType().(*bufferType).Alloc(1 << 20)
	require.NoError(t, err)
	bad := openDevice(t, p, Options{SpillDir: dir + "/missing"})
	_, err = bad.BufferType().Alloc(4096)
	require.ErrorContains(t, err, "GGML_OPENVINO_SPILL_DIR")
}

func TestBufferTypes(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{})
	bt, ht := dev.BufferType(), dev.HostType()
	require.Equal(t, "OPENVINO0", bt.Name())
	require.Equal(t, "OPENVINO0_HOST", ht.Name())
	require.False(t, bt.IsHost())
	require.True(t, ht.IsHost())
	require.EqualValues(t, 32, bt.Alignment())
	require.True(t, dev.SupportsBufferType(bt) && dev.SupportsBufferType(ht) && dev.SupportsBufferType(buffer.CPU()))
	w := graph.NewContext(graph.ContextOptions{}).NewTensor(quant.Q4_1, 64, 3)
	l, ok := layoutFor(w, KindCPU, defaultRequant)
	require.True(t, ok)
	require.Equal(t, l.total, bt.AllocSize(w), "room for the converted layout")
	require.Equal(t, w.NBytes(), ht.AllocSize(w), "the host type converts nothing")
	require.Equal(t, backend.Caps{Mmap: true}, dev.Props().Caps)
}

// COMPILED_MODEL_CACHE_DIR: a compiled model is exported once, and a
// fresh device (another process, as far as the cache knows) imports it
// instead of compiling.
func TestCompiledModelCacheDir(t *testing.T) {
	p := buildDouble(t)
	dir := t.TempDir()
	d1 := openDevice(t, p, Options{CompiledModelCacheDir: dir})
	be1 := newBackend(d1)
	defer be1.Close()
	g1, _, _, y1 := addGraph(t, d1, 8)
	c0, i0 := doubleStat(t, p, "calls.ov_core_compile_model"), doubleStat(t, p, "import.count")
	require.NoError(t, be1.GraphCompute(g1))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1)

	d2 := openDevice(t, p, Options{CompiledModelCacheDir: dir})
	be2 := newBackend(d2)
	defer be2.Close()
	g2, _, _, y2 := addGraph(t, d2, 8)
	require.NoError(t, be2.GraphCompute(g2))
	require.Equal(t, c0+1, doubleStat(t, p, "calls.ov_core_compile_model"), "the second device does not compile")
	require.Equal(t, i0+1, doubleStat(t, p, "import.count"))
	require.Equal(t, getF32(t, y1), getF32(t, y2))
}

// Two models, one after the other, at the same addresses: the first is
// unloaded (its buffers reset), the second's weights are placed where the
// first's were and its graph has the first's structure. The double folds
// Constants at compile (as the CPU plugin copies them), so a model
// reused by address would compute with the first model's weights: the
// second model's logits show it is recompiled. On the real runtime
// (GGML_OPENVINO_LIB), whose CPU plugin copies Constants at compile, the
// same logits and model counts are checked. The cache goes with the
// device's last backend (upstream frees its compiled models with the
// last backend context).
func TestTwoModelsSameAddresses(t *testing.T) {
	p := buildDouble(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	dev := openDevice(t, p, Options{})
	// The compile and live-model counters are the double's; on the real
	// runtime the logits and the device's own model count are checked.
	onDouble := realLibrary() == ""
	stat := func(name string) int64 {
		if !onDouble {
			return 0
		}
		return doubleStat(t, p, name)
	}
	liveModels := stat("live.compiled_model")
	be := newBackend(dev)
	const k, m = 256, 8
	wbuf, err := dev.BufferType().Alloc(dev.BufferType().AllocSize(graph.NewContext(graph.ContextOptions{}).NewTensor(quant.Q4_K, k, m)))
	require.NoError(t, err)
	defer wbuf.Free()
	wbuf.SetUsage(buffer.UsageWeights)
	cbuf, err := dev.BufferType().Alloc(1 << 16)
	require.NoError(t, err)
	defer cbuf.Free()
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	// load places a model (one Q4_K weight, the embedding x) at the
	// buffers' start and computes its logits W x.
	load := func() (logits, want []float32) {
		require.NoError(t, wbuf.Reset())
		require.NoError(t, cbuf.Reset())
		ctx := graph.NewContext(graph.ContextOptions{})
		w := ctx.NewTensor(quant.Q4_K, k, m)
		w.Name = "blk.0.attn_q.weight"
		xt := ctx.NewTensor(quant.F32, k, 1)
		xt.Name = "x"
		graph.SetInput(xt)
		y := ctx.MulMat(w, xt)
		y.Name = "logits"
		graph.SetOutput(y)
		g, err := ctx.Build(y)
		require.NoError(t, err)
		require.NoError(t, wbuf.AllocTensor(w, 0))
		require.NoError(t, cbuf.AllocTensor(xt, 0))
		require.NoError(t, cbuf.AllocTensor(y, 4096))
		wf := make([]float32, k*m)
		for i := range wf {
			wf[i] = float32(r.NormFloat64())
		}
		wq, err := quant.Quantize(quant.Q4_K, wf, m, k, nil)
		require.NoError(t, err)
		require.NoError(t, buffer.SetTensor(w, wq, 0))
		require.NoError(t, buffer.SetTensor(xt, quant.F32Bytes(x), 0))
		require.NoError(t, be.GraphCompute(g))
		e := w.Extra.(*tensorExtra)
		deq, err := decode(w, *e.layout, e.st.mem[e.at:])
		require.NoError(t, err)
		want = make([]float32, m)
		for i := range want {
			for c := 0; c < k; c++ {
				want[i] += deq[i*k+c] * x[c]
			}
		}
		return getF32(t, y), want
	}
	before := stat("compile.count")
	got1, want1 := load()
	require.Less(t, nmse(got1, want1), 1e-10)
	got2, want2 := load()
	require.Greater(t, nmse(want2, want1), 0.1, "the two models differ")
	require.Less(t, nmse(got2, want2), 1e-10, "the second model's logits")
	if onDouble {
		require.Equal(t, before+2, stat("compile.count"), "the second model is compiled")
	}
	require.Equal(t, 2, dev.WeightMemory().Models)

	be2 := newBackend(dev)
	require.NoError(t, be.Close())
	require.Equal(t, 2, dev.WeightMemory().Models, "another backend still uses the cache")
	require.NoError(t, be2.Close())
	require.Zero(t, dev.WeightMemory().Models, "freed with the last backend")
	require.Equal(t, liveModels, stat("live.compiled_model"))
}

// moveTo100 points a, an F32 tensor of 16x2, at a fresh buffer of dev
// holding 100 + i (freed when the test ends): the same graph with an
// input whose memory moved.
func moveTo100(t *testing.T, dev backend.Device, a *graph.Tensor) {
	t.Helper()
	ctx := graph.NewContext(graph.ContextOptions{})
	moved := ctx.NewTensor(quant.F32, 16, 2)
	buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	t.Cleanup(func() { _ = buf.Free() })
	x := make([]float32, 32)
	for i := range x {
		x[i] = 100 + float32(i)
	}
	require.NoError(t, buffer.SetTensor(moved, quant.F32Bytes(x), 0))
	a.Data, a.Buffer, a.Extra = moved.Data, moved.Buffer, moved.Extra
}

// With COMPILED_MODEL_CACHE_ONLY and RELEASE_WEIGHTS every model is
// imported, with its constants in the blob: the weight buffers are
// released whole at the first import, and the results stay those of the
// process that compiled and exported the model.
func TestCacheOnlyReleasesWeightsAtImport(t *testing.T) {
	p := buildDouble(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(10, 10))
	const k = 4096
	vals := make([]float32, k*8)
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	q, err := quant.Quantize(quant.Q8_0, vals, 8, k, nil)
	require.NoError(t, err)
	xs := make([]float32, 2*k)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	run := func(opts Options) ([]float32, WeightMemory) {
		dev := openDevice(t, p, opts)
		w := weightMatrix(t, dev, quant.Q8_0, k, 8, q)
		be := newBackend(dev)
		defer be.Close()
		g, x, y := mulMatGraph(t, dev, w, 2)
		require.NoError(t, buffer.SetTensor(x, quant.F32Bytes(xs), 0))
		require.NoError(t, be.GraphCompute(g))
		return getF32(t, y), dev.WeightMemory()
	}
	want, wm := run(Options{CompiledModelCacheDir: dir})
	require.Zero(t, wm.Released)
	got, wm := run(Options{CompiledModelCacheDir: dir, CompiledModelCacheOnly: true, ReleaseWeights: On})
	require.Equal(t, want, got)
	require.Positive(t, wm.Released)
	require.GreaterOrEqual(t, wm.Released+uint64(2*os.Getpagesize()), wm.Buffers, "every whole page released")
}
