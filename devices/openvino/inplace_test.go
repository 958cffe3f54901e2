package openvino

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
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
	t.Logf("%s, forced in place: SCALE of the old cache %s", dev.rt.lib.version, map[bool]string{true: "as ggml's", false: "reads the new rows (the hazard)"}[equalF32(wantOld, fOld)])
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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
