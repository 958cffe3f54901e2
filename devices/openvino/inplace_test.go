package openvino

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// setInPlace sets the in-place test settings for the rest of t.
func setInPlace(t *testing.T, on, force bool) {
	oldOn, oldForce := kvInPlace, forceInPlace
	kvInPlace, forceInPlace = on, force
	t.Cleanup(func() { kvInPlace, forceInPlace = oldOn, oldForce })
}

// inPlaceOutputs counts, over be's requests, the outputs bound in place
// over an input (inPlaceParams) and those the rule allowed.
func inPlaceOutputs(be *ovBackend) (bound, allowed int) {
	for cm, st := range be.reqs {
		for i, p := range cm.inPlace {
			if p >= 0 {
				allowed++
				if !st.copyOut[i] {
					bound++
				}
			}
		}
	}
	return bound, allowed
}

// The KV caches that SET_ROWS writes are bound in place over the cache
// read (no scratch memory, nothing copied after the infer), and the
// logits and cache are those of the same device copying them out of
// scratch, and of our CPU device. Every decode step reads the cache rows
// the earlier steps wrote in place: an in-place binding that lost a write,
// or let attention read a row before its write, changes the logits of the
// steps after it. A 37-token prompt, then 8 steps (two graph shapes over
// n_kv 48). Verified on the double and, with GGML_OPENVINO_LIB, on the
// real CPU plugin.
func TestKVInPlaceLogits(t *testing.T) {
	p := buildDouble(t)
	run := func(inPlace bool) ([][]float32, []byte, *ovBackend) {
		setInPlace(t, inPlace, false)
		dev := openDevice(t, p, Options{})
		m := newLM(t, dev.BufferType(), dev.HostType(), 64)
		be := newBackend(dev)
		t.Cleanup(func() { be.Close() })
		logits, k := runLM(t, m, prompt(37), 8, be.GraphCompute)
		return logits, k, be
	}
	h0 := int64(0)
	if realLibrary() == "" {
		h0 = doubleStat(t, p, "infer.inplace_hazard")
	}
	got, gotK, be := run(true)
	if realLibrary() == "" {
		require.Equal(t, h0, doubleStat(t, p, "infer.inplace_hazard"), "the double finds the in-place bindings safe")
	}
	bound, allowed := inPlaceOutputs(be)
	require.Equal(t, 2*len(be.reqs), allowed, "K and V of every model may be written in place")
	require.Equal(t, allowed, bound, "and are")
	scratch, scratchK, sbe := run(false)
	bound, _ = inPlaceOutputs(sbe)
	require.Zero(t, bound)
	require.Equal(t, scratchK, gotK, "the K cache after the run")

	dev := openDevice(t, p, Options{})
	host := newLM(t, dev.HostType(), dev.HostType(), 64)
	want, wantK := runLM(t, host, prompt(37), 8, cpu.New(cpu.Options{Threads: 1}).Compute)
	for i := range got {
		e, es := nmse(got[i], want[i]), nmse(got[i], scratch[i])
		t.Logf("%s step %d: logits NMSE in place %.3g against our CPU device, %.3g against scratch", dev.rt.lib.version, i, e, es)
		require.Less(t, e, 1e-6, "step %d", i)
		require.Equal(t, scratch[i], got[i], "step %d: in place against scratch", i)
	}
	require.Equal(t, len(wantK), len(gotK))
}

// hazardGraph reads a cache's old contents (SCALE) and then writes rows
// of it (SET_ROWS): the output that SET_ROWS writes overlaps the cache
// read by a node other than the ScatterUpdate, which inPlaceParams
// refuses to write in place.
func hazardGraph(t *testing.T, bt buffer.Type) (g *graph.Graph, old, kv *graph.Tensor) {
	const d, cells, n = 64, 32, 4
	c := graph.NewContext(graph.ContextOptions{})
	cache := c.NewTensor(quant.F32, d, cells)
	cache.Name = "cache_k_l0"
	rows := graph.SetInput(c.NewTensor(quant.F32, d, n))
	ids := graph.SetInput(c.NewTensor(quant.I64, n))
	old = c.Scale(cache, 2)
	kv = c.SetRows(cache, rows, ids)
	g, err := c.Build(old, kv)
	require.NoError(t, err)
	b, err := buffer.AllocContextTensors(c, bt)
	require.NoError(t, err)
	t.Cleanup(func() { b.Free() })
	x := make([]float32, cache.NElements())
	for i := range x {
		x[i] = float32(i%97) - 40
	}
	require.NoError(t, buffer.SetTensor(cache, quant.F32Bytes(x), 0))
	r := make([]float32, rows.NElements())
	for i := range r {
		r[i] = 1000 + float32(i)
	}
	require.NoError(t, buffer.SetTensor(rows, quant.F32Bytes(r), 0))
	raw := make([]byte, 8*n)
	for i := range n {
		writeInt(raw[8*i:], 8, int64(3+7*i))
	}
	require.NoError(t, buffer.SetTensor(ids, raw, 0))
	return g, old, kv
}

// A cache that another node reads before SET_ROWS writes it stays in
// scratch memory (inPlaceParams), and both outputs are those of our CPU
// device. Forced in place (forceInPlace, which ignores the rule), the
// double gives the hazard it models: the output written over the cache
// before the other reader has read it, so SCALE sees the new rows.
func TestKVInPlaceHazardRule(t *testing.T) {
	p := buildDouble(t)
	compute := func(force bool) (old, kv []float32, copied bool) {
		setInPlace(t, true, force)
		dev := openDevice(t, p, Options{})
		g, o, w := hazardGraph(t, dev.HostType())
		be := newBackend(dev)
		defer be.Close()
		require.NoError(t, be.GraphCompute(g))
		for cm, st := range be.reqs {
			for i, ip := range cm.inPlace {
				require.Equal(t, -1, ip, "the rule refuses output %d", i)
				copied = copied || st.copyOut[i]
			}
		}
		return append([]float32(nil), quant.BytesF32(o.Data)...), append([]float32(nil), quant.BytesF32(w.ViewSrc.Data)...), copied
	}
	dev := openDevice(t, p, Options{})
	g, o, w := hazardGraph(t, dev.HostType())
	require.NoError(t, cpu.New(cpu.Options{Threads: 1}).Compute(g))
	wantOld, wantKV := quant.BytesF32(o.Data), quant.BytesF32(w.ViewSrc.Data)

	old, kv, copied := compute(false)
	require.True(t, copied, "the cache's new contents go through scratch memory")
	require.Equal(t, wantOld, old, "SCALE of the old cache")
	require.Equal(t, wantKV, kv, "the cache after SET_ROWS")

	h0 := int64(0)
	if realLibrary() == "" {
		h0 = doubleStat(t, p, "infer.inplace_hazard")
	}
	fOld, fKV, fCopied := compute(true)
	require.False(t, fCopied, "forced in place: nothing copied")
	require.Equal(t, wantKV, fKV, "forced in place: the cache after SET_ROWS")
	if realLibrary() == "" {
		require.Equal(t, h0+1, doubleStat(t, p, "infer.inplace_hazard"), "the double sees the unsafe binding")
		require.NotEqual(t, wantOld, fOld, "forced in place, the double's modelled hazard: SCALE reads the new rows")
		return
	}
	t.Logf("%s, forced in place: SCALE of the old cache %s", dev.rt.lib.version, map[bool]string{true: "as ggml's", false: "reads the new rows (the hazard)"}[slices.Equal(wantOld, fOld)])
}

// A quantized tensor in a host weights buffer (the tied output weight
// the loader leaves in the mapped file) is hashed once for the graph
// keys while it lives at the same memory; another tensor over the same
// memory with other bytes (another model loaded at the same addresses)
// is hashed afresh and gets another content identity. Elsewhere (a
// compute buffer) it is hashed every time.
func TestHostWeightHashedOnce(t *testing.T) {
	mem := make([]byte, 4*quant.Q8_0.RowSize(64))
	hm := cpu.Device().(interface {
		BufferFromHostMemory([]byte, uint64) (buffer.Buffer, error)
	})
	place := func(fill byte, u buffer.Usage) *graph.Tensor {
		for i := range mem {
			mem[i] = fill + byte(i%7)
		}
		b, err := hm.BufferFromHostMemory(mem, uint64(len(mem)))
		require.NoError(t, err)
		t.Cleanup(func() { b.Free() })
		b.SetUsage(u)
		w := graph.NewContext(graph.ContextOptions{}).NewTensor(quant.Q8_0, 64, 4)
		require.NoError(t, b.AllocTensor(w, 0))
		return w
	}
	w1 := place(1, buffer.UsageWeights)
	h1 := hostContent(w1)
	mem[0]++ // weights are not rewritten in place: the memo stands
	require.Equal(t, h1, hostContent(w1))
	w2 := place(9, buffer.UsageWeights)
	require.Equal(t, addr(w1), addr(w2))
	require.NotEqual(t, h1, hostContent(w2), "another tensor over the same memory")
	c := place(9, buffer.UsageCompute)
	hc := hostContent(c)
	mem[0]++
	require.NotEqual(t, hc, hostContent(c), "a tensor outside a weights buffer is hashed every time")
}

// The model runner builds a new graph (new tensors) whenever the batch
// shape changes; run as the benchmark does (a prompt, then single tokens
// from an empty cache, twice), the graphs of a shape seen before are
// recognized by position (shape.go) instead of by building their keys,
// the first token after each prompt among them, and the logits are those
// of the full key's path bit for bit. Verified on the double and, with
// GGML_OPENVINO_LIB, on the real CPU plugin.
func TestShapeKeyLogits(t *testing.T) {
	p := buildDouble(t)
	path := filepath.Join(t.TempDir(), "model.gguf")
	cfg := genmodel.Default()
	require.NoError(t, genmodel.WriteFile(path, cfg))
	// One model per shape (the default): the positional check is what is
	// tested (TestDynamicOneModel runs the same with the dynamic path).
	run := func(on bool) ([][]float32, int, int) {
		old := byShapeOn
		byShapeOn = on
		defer func() { byShapeOn = old }()
		dev := openDevice(t, p, Options{})
		var be *ovBackend
		testBackendHook = func(b *ovBackend) { be = b }
		defer func() { testBackendHook = nil }()
		s := lmSession(t, path, model.Options{Device: dev, Threads: 1})
		var out [][]float32
		for range 2 {
			s.Reset()
			lg, err := s.Decode(context.Background(), []int32{1, 5, 9, 12, 3, 8}, nil)
			require.NoError(t, err)
			out = append(out, lg[len(lg)-1])
			s.Reset()
			for _, tok := range []int32{7, 30, 2, 11} {
				lg, err := s.Decode(context.Background(), []int32{tok}, nil)
				require.NoError(t, err)
				out = append(out, lg[len(lg)-1])
			}
		}
		return out, be.shapeHits, len(dev.cache.models)
	}
	got, hits, models := run(true)
	// The second run's prompt and its first token are graphs of shapes
	// the first run built.
	require.Equal(t, 2, hits)
	full, fhits, fmodels := run(false)
	require.Zero(t, fhits)
	require.Equal(t, fmodels, models)
	t.Logf("%d graphs recognized by position, %d models", hits, models)
	for i := range got {
		require.Equal(t, full[i], got[i], "graph %d: by position against the full key", i)
	}
}

// A new graph that differs from a remembered one only where the fields
// compared in place cannot see it - which source is which (SUB(a, b)
// after SUB(b, a)), or a parameter (SCALE by 3 after SCALE by 2), with
// every tensor at the same address - is not taken for it.
func TestShapeKeyTellsGraphsApart(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{})
	be := newBackend(dev)
	defer be.Close()
	const n = 64
	buf, err := dev.HostType().Alloc(1 << 16)
	require.NoError(t, err)
	defer buf.Free()
	build := func(f func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor) (*graph.Tensor, *graph.Graph) {
		require.NoError(t, buf.Reset())
		c := graph.NewContext(graph.ContextOptions{})
		a, b := graph.SetInput(c.NewTensor(quant.F32, n)), graph.SetInput(c.NewTensor(quant.F32, n))
		y := f(c, a, b)
		g, err := c.Build(y)
		require.NoError(t, err)
		for i, x := range []*graph.Tensor{a, b, y} {
			require.NoError(t, buf.AllocTensor(x, uint64(i)*4096))
		}
		xa, xb := make([]float32, n), make([]float32, n)
		for i := range xa {
			xa[i], xb[i] = float32(i), float32(3*i+1)
		}
		require.NoError(t, buffer.SetTensor(a, quant.F32Bytes(xa), 0))
		require.NoError(t, buffer.SetTensor(b, quant.F32Bytes(xb), 0))
		return y, g
	}
	check := func(f func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor, want func(i int) float32) {
		y, g := build(f)
		require.NoError(t, be.GraphCompute(g))
		for i, v := range quant.BytesF32(y.Data) {
			require.Equal(t, want(i), v, "element %d", i)
		}
	}
	check(func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor { return c.Sub(a, b) }, func(i int) float32 { return float32(i) - float32(3*i+1) })
	check(func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor { return c.Sub(a, b) }, func(i int) float32 { return float32(i) - float32(3*i+1) })
	require.Equal(t, 1, be.shapeHits, "the same graph again, new tensors")
	check(func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor { return c.Sub(b, a) }, func(i int) float32 { return float32(3*i+1) - float32(i) })
	check(func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor { return c.Scale(a, 2) }, func(i int) float32 { return 2 * float32(i) })
	check(func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor { return c.Scale(a, 3) }, func(i int) float32 { return 3 * float32(i) })
	require.Equal(t, 1, be.shapeHits)
	// SUB(b, a) has SUB(a, b)'s key (inputs are keyed by their fields,
	// bound by position): its model, bound the other way.
	require.Equal(t, 3, len(dev.cache.models))
}
