package openvino

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// lmModel is a one-block language model as llama.cpp builds it: token
// embeddings by GET_ROWS, K and V written into F16 caches by SET_ROWS,
// attention over the first n_kv cells (padded to 16, as llama.cpp pads
// n_kv), the last token's row selected by GET_ROWS of output ids, logits.
type lmModel struct {
	embd, hd, heads, kvh, ff, vocab, ctx int64
	w                                    map[string]*graph.Tensor
	ck, cv                               *graph.Tensor
	bt                                   buffer.Type
	bufs                                 []buffer.Buffer
}

func newLM(tb testing.TB, wbt, bt buffer.Type, ctx int64) *lmModel {
	m := &lmModel{embd: 128, hd: 32, heads: 4, kvh: 2, ff: 256, vocab: 96, ctx: ctx, w: map[string]*graph.Tensor{}, bt: bt}
	r := rand.New(rand.NewPCG(7, 9))
	wc := graph.NewContext(graph.ContextOptions{})
	add := func(name string, ty quant.Type, ne ...int64) {
		t := wc.NewTensor(ty, ne...)
		t.Name = name
		m.w[name] = t
	}
	kv := m.kvh * m.hd
	add("token_embd.weight", quant.F32, m.embd, m.vocab)
	add("blk.0.attn_q.weight", quant.F16, m.embd, m.embd)
	add("blk.0.attn_k.weight", quant.F16, m.embd, kv)
	add("blk.0.attn_v.weight", quant.F16, m.embd, kv)
	add("blk.0.attn_output.weight", quant.F16, m.embd, m.embd)
	add("blk.0.ffn_gate.weight", quant.F16, m.embd, m.ff)
	add("blk.0.ffn_up.weight", quant.F16, m.embd, m.ff)
	add("blk.0.ffn_down.weight", quant.F16, m.ff, m.embd)
	add("blk.0.attn_norm.weight", quant.F32, m.embd)
	add("blk.0.ffn_norm.weight", quant.F32, m.embd)
	add("output.weight", quant.F16, m.embd, m.vocab)
	wb, err := buffer.AllocContextTensors(wc, wbt)
	require.NoError(tb, err)
	wb.SetUsage(buffer.UsageWeights)
	for _, t := range wc.Tensors() {
		x := make([]float32, t.NElements())
		for i := range x {
			x[i] = float32(r.NormFloat64()) * 0.1
		}
		require.NoError(tb, buffer.SetTensor(t, toType(t.Type, x), 0))
	}
	cc := graph.NewContext(graph.ContextOptions{})
	m.ck, m.cv = cc.NewTensor(quant.F16, kv, ctx), cc.NewTensor(quant.F16, kv, ctx)
	m.ck.Name, m.cv.Name = "cache_k_l0", "cache_v_l0"
	cb, err := buffer.AllocContextTensors(cc, bt)
	require.NoError(tb, err)
	m.bufs = append(m.bufs, wb, cb)
	tb.Cleanup(func() {
		for _, b := range m.bufs {
			b.Free()
		}
	})
	m.clearCache(tb)
	return m
}

func toType(ty quant.Type, x []float32) []byte {
	if ty == quant.F32 {
		return quant.F32Bytes(x)
	}
	h := make([]byte, 2*len(x))
	for i, f := range x {
		binary.LittleEndian.PutUint16(h[2*i:], quant.FP32ToFP16(f))
	}
	return h
}

func (m *lmModel) clearCache(tb testing.TB) {
	for _, c := range []*graph.Tensor{m.ck, m.cv} {
		require.NoError(tb, buffer.SetTensor(c, make([]byte, c.NBytes()), 0))
	}
}

// step builds the graph for tokens at positions p0.. and returns it with
// its logits.
func (m *lmModel) step(tb testing.TB, tokens []int32, p0 int64) (*graph.Graph, *graph.Tensor) {
	n := int64(len(tokens))
	nkv := min(m.ctx, (p0+n+15)/16*16)
	c := graph.NewContext(graph.ContextOptions{})
	in := func(ty quant.Type, ne ...int64) *graph.Tensor { return graph.SetInput(c.NewTensor(ty, ne...)) }
	tok, pos, kidx, out := in(quant.I32, n), in(quant.I32, n), in(quant.I64, n), in(quant.I32, 1)
	mask := in(quant.F16, nkv, n)
	w := m.w
	x := c.GetRows(w["token_embd.weight"], tok)
	h := c.Mul(c.RMSNorm(x, 1e-5), w["blk.0.attn_norm.weight"])
	q := c.Rope(c.Reshape(c.MulMat(w["blk.0.attn_q.weight"], h), m.hd, m.heads, n), pos, int32(m.hd), ops.RopeNormal)
	k := c.Rope(c.Reshape(c.MulMat(w["blk.0.attn_k.weight"], h), m.hd, m.kvh, n), pos, int32(m.hd), ops.RopeNormal)
	v := c.MulMat(w["blk.0.attn_v.weight"], h)
	kw := c.SetRows(m.ck, c.Reshape(k, m.kvh*m.hd, n), kidx)
	vw := c.SetRows(m.cv, v, kidx)
	kk := c.Permute(c.View3D(kw, m.hd, m.kvh, nkv, uint64(m.hd)*2, m.ck.Nb[1], 0), 0, 2, 1, 3)
	vv := c.Permute(c.View3D(vw, m.hd, m.kvh, nkv, uint64(m.hd)*2, m.cv.Nb[1], 0), 0, 2, 1, 3)
	fa := c.FlashAttnExt(c.Permute(q, 0, 2, 1, 3), kk, vv, mask, float32(1/math.Sqrt(float64(m.hd))), 0, 0)
	x2 := c.Add(c.MulMat(w["blk.0.attn_output.weight"], c.Reshape(fa, m.embd, n)), x)
	h2 := c.Mul(c.RMSNorm(x2, 1e-5), w["blk.0.ffn_norm.weight"])
	y := c.Add(c.MulMat(w["blk.0.ffn_down.weight"], c.SwiGLUSplit(c.MulMat(w["blk.0.ffn_gate.weight"], h2),
		c.MulMat(w["blk.0.ffn_up.weight"], h2))), x2)
	logits := c.MulMat(w["output.weight"], c.GetRows(y, out))
	g, err := c.Build(logits)
	require.NoError(tb, c.Err())
	require.NoError(tb, err)
	b, err := buffer.AllocContextTensors(c, m.bt)
	require.NoError(tb, err)
	m.bufs = append(m.bufs, b)
	ints := func(t *graph.Tensor, f func(i int64) int64) {
		es := t.Type.TypeSize()
		raw := make([]byte, int64(es)*t.NElements())
		for i := int64(0); i < t.NElements(); i++ {
			writeInt(raw[i*int64(es):], int64(es), f(i))
		}
		require.NoError(tb, buffer.SetTensor(t, raw, 0))
	}
	ints(tok, func(i int64) int64 { return int64(tokens[i]) })
	ints(pos, func(i int64) int64 { return p0 + i })
	ints(kidx, func(i int64) int64 { return p0 + i })
	ints(out, func(int64) int64 { return n - 1 })
	mk := make([]float32, nkv*n)
	for i := int64(0); i < n; i++ {
		for j := int64(0); j < nkv; j++ {
			if j > p0+i {
				mk[i*nkv+j] = float32(math.Inf(-1))
			}
		}
	}
	require.NoError(tb, buffer.SetTensor(mask, toType(quant.F16, mk), 0))
	return g, logits
}

// runLM runs a prompt then decode steps through compute, returning each
// step's logits and the K cache at the end.
func runLM(tb testing.TB, m *lmModel, prompt []int32, decode int, compute func(*graph.Graph) error) ([][]float32, []byte) {
	var logits [][]float32
	g, l := m.step(tb, prompt, 0)
	require.NoError(tb, compute(g))
	logits = append(logits, quant.BytesF32(l.Data))
	p := int64(len(prompt))
	for s := 0; s < decode; s++ {
		g, l = m.step(tb, []int32{int32((s*7 + 3) % int(m.vocab))}, p)
		require.NoError(tb, compute(g))
		logits = append(logits, quant.BytesF32(l.Data))
		p++
	}
	return logits, append([]byte(nil), m.ck.Data...)
}

func prompt(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32((i*13 + 5) % 96)
	}
	return p
}

// On the NPU a prompt longer than the chunk runs as padded chunks of the
// prefill model, and decode steps (each a new graph over a growing n_kv)
// all reuse one decode model over the whole cache: two compiles for the
// whole conversation, results as the CPU device computes them.
func TestNPUStaticPrefillDecode(t *testing.T) {
	// Both element-type numberings (2025.0, 2025.1+).
	for _, v := range []string{"2025.0", "2025.1"} {
		t.Run(v, func(t *testing.T) { testNPUStatic(t, v) })
	}
}

func testNPUStatic(t *testing.T, version string) {
	p := buildDouble(t)
	knob(t, p, "devices", "CPU,NPU")
	knob(t, p, "version", version)
	dev := openDevice(t, p, Options{Device: "NPU", PrefillChunkSize: 16})
	require.Equal(t, KindNPU, dev.rt.kind)
	// Weights in the device's weight buffer (Constants in the IR), the
	// rest in host memory; the CPU run gets the same model on the host.
	m := newLM(t, dev.BufferType(), dev.HostType(), 64)
	be := newBackend(dev)
	defer be.Close()
	c0 := doubleStat(t, p, "compile.count")
	got, gotK := runLM(t, m, prompt(37), 4, be.GraphCompute)
	compiles := doubleStat(t, p, "compile.count") - c0
	require.Equal(t, int64(2), compiles, "a prefill and a decode model for 37 tokens in chunks of 16 and 4 steps")
	require.Equal(t, 3+4, be.static.runs, "3 prefill chunks, 4 decode steps")

	host := newLM(t, dev.HostType(), dev.HostType(), 64)
	cpuDev := cpu.New(cpu.Options{Threads: 1})
	want, wantK := runLM(t, host, prompt(37), 4, cpuDev.Compute)
	for i := range got {
		e := nmse(got[i], want[i])
		t.Logf("step %d: logits NMSE %.3g", i, e)
		require.Less(t, e, 5e-4, "step %d", i)
	}
	// The cache rows written (41 tokens) match; the padding of the last
	// chunk wrote only into cell 37, which the next token overwrote.
	kvRow := int(host.ck.Nb[1])
	e := nmse(f16s(gotK[:41*kvRow]), f16s(wantK[:41*kvRow]))
	require.Less(t, e, 5e-4, "K cache rows")
}

func f16s(b []byte) []float32 {
	x := make([]float32, len(b)/2)
	for i := range x {
		x[i] = quant.FP16ToFP32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return x
}

var _ backend.Backend = (*ovBackend)(nil)

// The double refuses on the NPU what the NPU plugin refuses: a model with
// a dynamic dimension (one Parameter's shape made "?" in the IR we send).
// The same IR compiles on the CPU, which takes dynamic shapes.
func TestNPUDoubleRefusesDynamicShape(t *testing.T) {
	p := buildDouble(t)
	knob(t, p, "devices", "CPU,NPU")
	dynamic := regexp.MustCompile(`(type="Parameter" version="opset1">\n<data shape=")([0-9]+)(")`)
	irMutator = func(x []byte) []byte {
		done := false
		return dynamic.ReplaceAllFunc(x, func(m []byte) []byte {
			if done {
				return m
			}
			done = true
			return dynamic.ReplaceAll(m, []byte(`${1}?${3}`))
		})
	}
	defer func() { irMutator = nil }()
	for _, device := range []string{"NPU", "CPU"} {
		dev := openDevice(t, p, Options{Device: device, PrefillChunkSize: 16, ForceStatic: true, DisableCache: true})
		m := newLM(t, dev.BufferType(), dev.HostType(), 64)
		be := newBackend(dev)
		g, _ := m.step(t, prompt(20), 0)
		err := be.GraphCompute(g)
		be.Close()
		if device == "NPU" {
			require.ErrorIs(t, err, ErrNative)
			require.Contains(t, err.Error(), "only models with static shapes are supported")
			t.Log(err)
		} else {
			require.NoError(t, err, "the CPU plugin takes the dynamic dimension")
		}
	}
}

// The padding of a prefill chunk, element by element: positions, tokens
// and KV indices continue with last+1, the mask gets -inf columns up to
// ctx and padding rows with a zero diagonal, output indices are taken
// relative to the chunk; a pad past the cache is an error.
func TestStaticChunkPadding(t *testing.T) {
	mk := func(ty quant.Type, ne ...int64) (*graph.Tensor, func() error) {
		n := int64(ty.TypeSize())
		for _, d := range ne {
			n *= d
		}
		mem, free, err := hostAlloc(uint64(n))
		require.NoError(t, err)
		x := &graph.Tensor{Type: ty, Data: mem}
		for i := range x.Ne {
			x.Ne[i] = 1
		}
		copy(x.Ne[:], ne)
		x.Nb = denseNb(ty, x.Ne)
		return x, free
	}
	info := &staticInfo{rowsOf: map[*graph.Tensor]int64{}}
	idx, f1 := mk(quant.I64, 5)
	defer f1()
	for i := 0; i < 5; i++ {
		writeInt(idx.Data[8*i:], 8, int64(10+i))
	}
	cidx, f2 := mk(quant.I64, 4)
	defer f2()
	info.rowsOf[idx] = 16
	require.NoError(t, fillInput(info, roleKVIdx, idx, cidx, 4, 1))
	got := []int64{readInt(cidx.Data, 8), readInt(cidx.Data[8:], 8), readInt(cidx.Data[16:], 8), readInt(cidx.Data[24:], 8)}
	require.Equal(t, []int64{14, 15, 15, 15}, got, "token 4, then padding with 14+1")
	info.rowsOf[idx] = 15
	require.ErrorContains(t, fillInput(info, roleKVIdx, idx, cidx, 4, 1), "past the cache")

	mask, f3 := mk(quant.F16, 3, 5) // n_kv 3, 5 tokens
	defer f3()
	for i := range 15 {
		binary.LittleEndian.PutUint16(mask.Data[2*i:], quant.FP32ToFP16(float32(i)))
	}
	cm, f4 := mk(quant.F16, 6, 4) // ctx 6, chunk 4
	defer f4()
	require.NoError(t, fillMask(mask, cm, mask.Data, cm.Data, 4, 1))
	row := func(i int) []float32 { return f16s(cm.Data[12*i : 12*i+12]) }
	inf := float32(math.Inf(-1))
	require.Equal(t, []float32{12, 13, 14, inf, inf, inf}, row(0), "token 4's mask row, padded to ctx")
	require.Equal(t, []float32{inf, 0, inf, inf, inf, inf}, row(1), "a padding row: zero diagonal")
	require.Equal(t, []float32{inf, inf, inf, 0, inf, inf}, row(3))

	out, f5 := mk(quant.I32, 2)
	defer f5()
	binary.LittleEndian.PutUint32(out.Data, 3)
	binary.LittleEndian.PutUint32(out.Data[4:], 6)
	cout, f6 := mk(quant.I32, 2)
	defer f6()
	require.NoError(t, fillInput(info, roleOut, out, cout, 4, 4))
	require.Equal(t, []uint32{0, 2}, []uint32{binary.LittleEndian.Uint32(cout.Data), binary.LittleEndian.Uint32(cout.Data[4:])},
		"output 3 is in another chunk, output 6 is row 2 of this one")
}

// A graph the static path cannot re-shape (the decode block writes K and V
// with CPY into views at a fixed offset, not SET_ROWS) is computed on the
// NPU with its own static shapes, and still matches the CPU device.
func TestNPUStaticDeclinesCpyCache(t *testing.T) {
	p := buildDouble(t)
	knob(t, p, "devices", "CPU,NPU")
	dev := openDevice(t, p, Options{Device: "NPU", RequantKQuant: "native"})
	g := decodeBlockIn(t, dev, dev.HostType(), 256, 64)
	_, err := analyzeStatic(g)
	require.ErrorIs(t, err, errNotStatic)
	require.ErrorContains(t, err, "CPY")
	be := newBackend(dev)
	defer be.Close()
	var last *graph.Tensor
	for _, n := range g.Nodes {
		if n.Op == ops.Add {
			last = n
		}
	}
	require.NoError(t, be.GraphCompute(g))
	got := quant.BytesF32(last.Data)
	require.Zero(t, be.static.runs, "not through the static path")
	require.NoError(t, cpu.New(cpu.Options{Threads: 1}).Compute(g))
	require.Less(t, nmse(got, quant.BytesF32(last.Data)), 5e-4)
}
