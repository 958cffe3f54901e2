package model_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/hexagon"
	"github.com/ggml-go/ggml/devices/openvino"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/ovdouble"
	"github.com/ggml-go/ggml/internal/testkit/realmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// The doubles are built once per test process; their folders go at the end.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "model-example-")
	if err == nil {
		modelFile, err = writeExampleModel(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "writing the example's model:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	hexdouble.Cleanup()
	ovdouble.Cleanup()
	os.Exit(code)
}

// deviceRun is what one model run on a device produced.
type deviceRun struct {
	logits [][]float32 // the 24-token prompt's, in three calls
	gen    []int32     // 24 greedy tokens after it
	// splits and nodes are the scheduler's placement of the prompt's last
	// batch graph (nodes by device name).
	splits int
	nodes  map[string]int
}

// runModel opens path on dev (nil: the CPU) and runs the prompt and the
// greedy generation of 24 tokens.
func runModel(t *testing.T, path string, dev backend.Device) deviceRun {
	t.Helper()
	m, err := model.Open(path, model.Options{Device: dev, Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	s, err := m.NewSession(model.SessionOptions{Ctx: 96, Batch: 16})
	require.NoError(t, err)
	defer s.Close()
	tokens := prompt(24, m.HParams.NVocab, 3)
	var r deviceRun
	r.logits = evaluate(t, s, tokens, []int{10, 10, 4})
	r.splits, r.nodes = s.Placement()
	s.Reset()
	r.gen = greedy(t, s, tokens, 24)
	return r
}

// doubleModels are the generated models run on the doubles: a quantized
// type each device repacks or extracts, both architectures, GQA, and F32.
var doubleModels = []genmodel.Config{
	{Arch: "llama", Type: quant.Q4_0, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300},
	{Arch: "qwen2", Type: quant.Q8_0, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300},
	{Arch: "llama", Type: quant.F32, Embd: 64, Layers: 2, Heads: 4, KVHeads: 1, FF: 128, VocabSize: 200},
}

// checkOnDevice runs every model of doubleModels on the CPU and on dev.
//
// Logits: the CPU multiplies Q4_0 and Q8_0 weights by activations it
// quantizes to Q8_0 (as ggml's CPU backend does), which moves its logits
// ~2e-4 (NMSE) from exact arithmetic on the same weights; a device that
// dequantizes weights and multiplies in F32 cannot come closer to it than
// that. So the device's logits are held to NMSE 1e-4 against the CPU on a
// copy of the model with the weights dequantized to F32 (the same weights,
// no activation quantization), and to 1e-3 against the CPU on the file
// itself.
//
// Tokens: the 24 greedy tokens must be the CPU's; where they part, the
// CPU's logits at that step must show a near tie (a gap the logits'
// measured difference can flip), and the comparison ends there since the
// sequences differ after it.
//
// Work: nodes must be placed on dev, and worked (the double's own count of
// work since the last call) must be non-zero, so that a run that fell back
// to the CPU fails.
//
// lossy, when non-zero, is the NMSE bound for the quantized models on a
// device that requantizes their weights by design (upstream's NPU: every
// quantized weight to 4 bits in groups of 128). Their logits then differ
// from both CPU runs by the requantization itself, so only the bound is
// held and the tokens are not compared; the F32 model keeps the exact
// bounds.
func checkOnDevice(t *testing.T, dev backend.Device, worked func() int64, lossy float64) {
	require.NoError(t, backend.Availability(dev))
	for _, c := range doubleModels {
		t.Run(c.Arch+"-"+c.Type.String(), func(t *testing.T) {
			path := genFile(t, c)
			want := runModel(t, path, nil)
			ref := runModel(t, dequantized(t, path), nil)
			worked()
			got := runModel(t, path, dev)
			work := worked()
			vsCPU, vsRef := 0.0, 0.0
			for i := range want.logits {
				vsCPU = max(vsCPU, nmse(got.logits[i], want.logits[i]))
				vsRef = max(vsRef, nmse(got.logits[i], ref.logits[i]))
			}
			same := 0
			requantized := lossy > 0 && c.Type.IsQuantized()
			for same < len(want.gen) && want.gen[same] == got.gen[same] {
				same++
			}
			if !requantized {
				same = sameTokens(t, path, want.gen, got.gen, vsCPU)
			}
			t.Logf("%s: NMSE worst over %d positions: %.3g vs CPU, %.3g vs CPU on F32-dequantized weights; "+
				"tokens: %d of %d identical; last prompt batch: %d splits, nodes %v; double's work %d",
				dev.Name(), len(want.logits), vsCPU, vsRef, same, len(want.gen), got.splits, got.nodes, work)
			if requantized {
				require.LessOrEqual(t, vsRef, lossy, "requantized weights")
			} else {
				require.LessOrEqual(t, vsRef, 1e-4)
				require.LessOrEqual(t, vsCPU, 1e-3)
			}
			require.NotZero(t, got.nodes[dev.Name()], "no node placed on %s", dev.Name())
			require.NotZero(t, work, "the double did no work")
		})
	}
}

// sameTokens checks the device's greedy tokens got against the CPU's want
// (see checkOnDevice) and returns how many agree from the start. e is the
// NMSE measured between the two runs' logits: each logit differs by about
// sqrt(e) of the logits' RMS, a gap between two of them by sqrt(2e), and
// a near tie is a gap within three times that.
func sameTokens(t *testing.T, path string, want, got []int32, e float64) int {
	t.Helper()
	require.Len(t, got, len(want))
	i := 0
	for i < len(want) && want[i] == got[i] {
		i++
	}
	if i == len(want) {
		return i
	}
	m, err := model.Open(path, model.Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	s, err := m.NewSession(model.SessionOptions{Ctx: 96, Batch: 16})
	require.NoError(t, err)
	defer s.Close()
	ctx := append(prompt(24, m.HParams.NVocab, 3), want[:i]...)
	lg, err := s.Decode(context.Background(), ctx, nil)
	require.NoError(t, err)
	last := lg[len(lg)-1]
	var sq float64
	for _, v := range last {
		sq += float64(v) * float64(v)
	}
	rms := math.Sqrt(sq / float64(len(last)))
	gap := float64(last[want[i]] - last[got[i]])
	t.Logf("tokens part at step %d: CPU %d, device %d; CPU logit gap %.4g (%.2g%% of RMS %.3g)", i, want[i], got[i], gap, 100*gap/rms, rms)
	require.Less(t, gap, 3*math.Sqrt(2*e)*rms, "step %d: the device's token %d is not a near tie with the CPU's %d", i, got[i], want[i])
	return i
}

func equalTokens(a, b []int32) bool {
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

// htpOnDouble opens HTP0 over the libcdsprpc double, closed when t ends.
func htpOnDouble(t *testing.T) (*hexdouble.Double, backend.Device) {
	t.Helper()
	d := hexdouble.Open(t, hexdouble.Full)
	o := hexagon.DefaultOptions()
	o.Lib = d.Path
	r := hexagon.NewRegistry(o)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	devs := r.Devices()
	require.Len(t, devs, 1)
	return d, devs[0]
}

// TestHexagonDouble: the models on HTP0 over the libcdsprpc double
// (weights repacked through its buffers, its ops computed by the double's
// emulated DSP). Verified on the double only.
func TestHexagonDouble(t *testing.T) {
	d, htp := htpOnDouble(t)
	var seen uint64
	checkOnDevice(t, htp, func() int64 {
		n := d.Stat("op.MUL_MAT")
		w := n - seen
		seen = n
		return int64(w)
	}, 0)
	require.Empty(t, d.Violations())

	// The checks fail a device that answers without computing (exec=0:
	// the double validates each batch and reports success).
	c := doubleModels[0]
	path := genFile(t, c)
	want := runModel(t, path, nil)
	d.Configure(t, "exec=0")
	got := runModel(t, path, htp)
	worst := 0.0
	for i := range want.logits {
		worst = max(worst, nmse(got.logits[i], want.logits[i]))
	}
	t.Logf("exec=0: NMSE worst %.3g", worst)
	require.Greater(t, worst, 1e-3, "a device that computes nothing must show in the logits")
}

// ovTarget opens the double at p on target (weights in their own types),
// with set's further options, and checks it did not fall back to another
// kind of device.
func ovTarget(t *testing.T, p, target string, want openvino.Kind, set func(*openvino.Options)) backend.Device {
	t.Helper()
	o := openvino.DefaultOptions()
	o.Lib = p
	o.Device = target
	o.RequantKQuant = "native"
	if set != nil {
		set(&o)
	}
	devs := openvino.NewRegistry(o).Devices()
	require.Len(t, devs, 1)
	kind, ok := devs[0].(interface{ Kind() openvino.Kind })
	require.True(t, ok && kind.Kind() == want, "not the %s: the device fell back", target)
	return devs[0]
}

// TestRealFilesOnDevices runs the real model files through the scheduler
// on the device kit's fake device (every op it takes, its work queued on
// a goroutine) and on HTP0 over the libcdsprpc double, against libllama.
// The fake device computes with the CPU's kernels; HTP0's double computes
// with math=ggml (ggmlMath): the ops it receives are computed by the CPU
// library libllama computes with, so the host side - splits, the
// scheduler's copies, the weights' tiling, op mapping, fusions,
// parameters - is held to the CPU device's bounds: any wrong byte shows in
// the logits. Verified on the double (math=ggml: the DSP's ops computed by
// the real ggml 0.25.1 CPU library), which says nothing of DSP numerics.
// One run keeps the double's own DSP emulation (its products in scalar
// double precision, no activation quantization) with the loose bounds;
// it is slow, so it takes the first prompt of Gemma 3 only (most of whose
// products, Q4_K and Q6_K, stay on the CPU: 14 s against SmolLM2's 51 s).
func TestRealFilesOnDevices(t *testing.T) {
	t.Parallel() // one thread each: with the package's other tests done, the second core takes one
	d, htp := htpOnDouble(t)
	fake := devtest.New(devtest.Config{Name: "FAKE_ALL", Type: backend.DeviceGPU, Async: true})
	for _, c := range []struct {
		m  modelcache.Model
		bd realBounds
	}{{modelcache.SmolLM2, smolBounds}, {modelcache.Gemma3, gemmaBounds}} {
		t.Run(c.m.Name+"/"+fake.Name(), func(t *testing.T) {
			checkReal(t, realmodel.Run(t, c.m), model.Options{Device: fake, Threads: 1}, boundsFor(c.bd), 0, 2)
		})
		t.Run(c.m.Name+"/"+htp.Name()+"/math=ggml", func(t *testing.T) {
			path := realmodel.Run(t, c.m)
			ggmlMath(t, d)
			ops, w, wx := opCounts(d), d.Stat("ggml_weights"), d.Stat("ggml_weights_extra")
			checkReal(t, path, model.Options{Device: htp, Threads: 1}, boundsFor(c.bd))
			t.Logf("the double computed with ggml: ops %v; weights converted %d, %d of them in an extra buffer type",
				countsSince(d, ops), d.Stat("ggml_weights")-w, d.Stat("ggml_weights_extra")-wx)
		})
	}
	// The exact comparison fails a host that gets the products' bits one
	// ulp wrong (the double's ggml_ulp knob; measured on SmolLM2's first
	// prompt: NMSE 7.8e-3 at worst, greedy identical for 13 tokens, and as
	// much for one ulp on RMS_NORM_MUL or ROPE).
	t.Run(modelcache.SmolLM2.Name+"/"+htp.Name()+"/math=ggml;ggml_ulp=MUL_MAT", func(t *testing.T) {
		if boundsFor(smolBounds) != exactBounds {
			t.Skip("the CPU's kernels are not this libllama build's: the exact comparison does not apply")
		}
		path := realmodel.Run(t, modelcache.SmolLM2)
		ggmlMath(t, d)
		d.Configure(t, "ggml_ulp=MUL_MAT")
		defer d.Configure(t, "ggml_ulp=none")
		r := measureReal(t, path, model.Options{Device: htp, Threads: 1}, 0)
		require.False(t, exactBounds.holds(r[0]), "one ulp on every product on HTP0 passed the exact bounds")
	})
	t.Run(modelcache.Gemma3.Name+"/"+htp.Name()+"/math=emu", func(t *testing.T) {
		path := realmodel.Run(t, modelcache.Gemma3)
		d.Configure(t, "math=emu")
		checkReal(t, path, model.Options{Device: htp, Threads: 1}, gemmaBounds, 0)
	})
	require.Empty(t, d.Violations())
}

// ggmlMath switches the double to math=ggml with the CPU library libllama
// computes with (its directory and variant, and the CPU device's extra
// buffer types exactly when compareParams loads libllama with them), so
// HTP0's ops are that build's arithmetic, weights placed as libllama
// places them.
func ggmlMath(t *testing.T, d *hexdouble.Double) {
	t.Helper()
	lib := llamaref.ForTest(t)
	require.NotEmpty(t, lib.Variant(), "libllama has its CPU backend linked in: no CPU library for the double")
	// the double's knobs are separated by ';' and white space
	require.False(t, strings.ContainsAny(lib.Dir(), "; \t\r\n"), "the ggml directory %q cannot be a knob value", lib.Dir())
	extra := 0
	if compareParams(lib).UseExtraBufts {
		extra = 1
	}
	d.Configure(t, fmt.Sprintf("math=ggml;ggml_dir=%s;ggml_cpu=%s;ggml_extra=%d", lib.Dir(), lib.Variant(), extra))
	t.Logf("math=ggml: libggml-cpu-%s.so, extra buffer types %v", lib.Variant(), extra == 1)
}

// htpOpKinds are the double's names (op.<NAME> counters) of the ops HTP0
// can send.
var htpOpKinds = []string{"MUL", "ADD", "SUB", "DIV", "MUL_MAT", "MUL_MAT_ID", "MUL_MAT_ADD", "RMS_NORM", "RMS_NORM_MUL",
	"UNARY_SILU", "UNARY_GELU", "UNARY_SIGMOID", "UNARY_EXP", "UNARY_NEG", "UNARY_SOFTPLUS", "UNARY_TANH", "GLU_SWIGLU",
	"GLU_SWIGLU_OAI", "GLU_GEGLU", "SOFTMAX", "ADD_ID", "ROPE", "FLASH_ATTN_EXT", "SET_ROWS", "GET_ROWS", "SCALE", "CPY",
	"SQR", "SQRT", "SUM_ROWS", "REPEAT", "CUMSUM", "FILL", "DIAG", "SOLVE_TRI", "L2_NORM", "TRI", "PAD", "NORM", "CONCAT",
	"CLAMP"}

// opCounts reads the double's op.<NAME> counters of htpOpKinds.
func opCounts(d *hexdouble.Double) map[string]uint64 {
	n := map[string]uint64{}
	for _, k := range htpOpKinds {
		n[k] = d.Stat("op." + k)
	}
	return n
}

// countsSince is the ops of each kind executed since opCounts gave from
// (the kinds that ran).
func countsSince(d *hexdouble.Double, from map[string]uint64) map[string]uint64 {
	n := map[string]uint64{}
	for k, v := range opCounts(d) {
		if v > from[k] {
			n[k] = v - from[k]
		}
	}
	return n
}

// TestHexagonDoubleGGMLMath: with math=ggml, HTP0 over the double gives
// libllama's logits bit for bit on generated models (NMSE 0 at every
// position, the greedy tokens), and on the F32 files perturbing the outputs
// of any one op kind HTP0 ran by one ulp (the double's ggml_ulp knob)
// breaks that: the exact comparison fails a host that gets one op's bits
// wrong. Verified on
// the double (math=ggml: the DSP's ops computed by the real ggml 0.25.1
// CPU library).
func TestHexagonDoubleGGMLMath(t *testing.T) {
	d, htp := htpOnDouble(t)
	lib := llamaref.ForTest(t)
	for _, c := range []genmodel.Config{
		{Arch: "llama", Type: quant.Q4_0, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300, Seed: 4},
		{Arch: "qwen2", Type: quant.Q8_0, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300, Seed: 9},
		{Arch: "llama", Type: quant.F32, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300},
		{Arch: "qwen2", Type: quant.F32, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300, Seed: 7},
	} {
		t.Run(c.Arch+"-"+c.Type.String(), func(t *testing.T) {
			path := genFile(t, c)
			ref := llamaGenRef(t, lib, path, c)
			m, err := model.Open(path, model.Options{Device: htp, Threads: 1})
			require.NoError(t, err)
			defer m.Close()
			s, err := m.NewSession(model.SessionOptions{Ctx: 256, Batch: 64})
			require.NoError(t, err)
			defer s.Close()
			ggmlMath(t, d)
			worst := func() float64 {
				s.Reset()
				got := evaluate(t, s, ref.tokens, ref.calls)
				w := 0.0
				for i := range ref.logits {
					w = max(w, nmse(got[i], ref.logits[i]))
				}
				return w
			}
			ran := opCounts(d)
			require.Zero(t, worst(), "math=ggml: libllama's logits bit for bit")
			var kinds []string
			for _, k := range htpOpKinds {
				if countsSince(d, ran)[k] > 0 {
					kinds = append(kinds, k)
				}
			}
			require.Contains(t, kinds, "MUL_MAT", "no product on HTP0")
			s.Reset()
			require.Equal(t, ref.gen, greedy(t, s, ref.tokens, 32), "greedy generation")
			if c.Type != quant.F32 {
				// Q8_0 activation quantization absorbs most one-ulp
				// changes (measured: only MUL_MAT's and, on Q4_0,
				// RMS_NORM_MUL's showed), so the F32 files take the sweep.
				return
			}
			for _, k := range kinds {
				d.Configure(t, "ggml_ulp="+k)
				w := worst()
				t.Logf("ggml_ulp=%s: worst NMSE %.3g", k, w)
				require.Positive(t, w, "one ulp on every %s output does not show in the logits", k)
			}
			d.Configure(t, "ggml_ulp=none")
			require.Empty(t, d.Violations())
		})
	}
}

// TestOpenVINODouble: the models on OPENVINO0 over the libopenvino_c
// double (graphs translated to IR, weights extracted, inferred by the
// double). Verified on the double only.
func TestOpenVINODouble(t *testing.T) {
	p := ovdouble.Path(t)
	d := ovdouble.Open(t, p)
	worked := func() int64 {
		n := d.Stat("infer.nodes")
		d.ResetStats()
		return n
	}
	// As ggml-openvino: token_embd and output requantized to per-row Q8_0.
	// native: every weight keeps its own type and values.
	for _, rq := range []string{"", "native"} {
		t.Run("requant="+rq, func(t *testing.T) {
			o := openvino.DefaultOptions()
			o.Lib = p
			o.RequantKQuant = rq
			devs := openvino.NewRegistry(o).Devices()
			require.Len(t, devs, 1)
			checkOnDevice(t, devs[0], worked, 0)
		})
	}
	// A GPU: its KV cache in USM device memory of the device's context,
	// reached through the double's OpenCL, or in USM host memory when the
	// OpenCL device lacks the USM extension (the device's fallback), bound
	// as remote tensors and updated in place (devices/openvino usm.go);
	// f32 inference precision, the GPU's default being f16.
	for _, mem := range []struct{ name, ocl, alloc string }{
		{"device", "", "ocl.fill_bytes"},
		{"host", "no_usm", "calls.ov_remote_context_create_host_tensor"},
	} {
		t.Run("GPU/USM "+mem.name, func(t *testing.T) {
			d.Set(t, "devices", "CPU,GPU", "CPU")
			d.Set(t, "ocl", mem.ocl, "")
			dev := ovTarget(t, p, "GPU", openvino.KindGPU, func(o *openvino.Options) { o.InferencePrecision = "f32" })
			// worked resets the double's counters: the USM allocations
			// (the device memory's zeroing fills) are read before each reset.
			usm := int64(0)
			checkOnDevice(t, dev, func() int64 {
				usm += d.Stat(mem.alloc)
				return worked()
			}, 0)
			require.Positive(t, usm, "no KV cache in USM %s memory", mem.name)
		})
	}
	// The NPU: static shapes (the prompt padded to the prefill chunk, one
	// token at a time after it). ggml-openvino requantizes every quantized
	// weight whose rows are a multiple of 128 to 4 bits in groups of 128
	// there, native or not, which is lossy by design: NMSE 0.032 (Q4_0) and
	// 0.054 (Q8_0) against the F32-dequantized weights on these models
	// (verified on the double); 0.1 is the bound, where a wrong translation
	// gives 0.5 or more.
	t.Run("NPU", func(t *testing.T) {
		d.Set(t, "devices", "CPU,NPU", "CPU")
		checkOnDevice(t, ovTarget(t, p, "NPU", openvino.KindNPU, nil), worked, 0.1)
	})
}

// dequantized writes a copy of the model at path with every quantized
// tensor dequantized to F32: the same weights, computed without the CPU's
// quantization of activations (Q4_0 and Q8_0 products take Q8_0
// activations there, as in ggml).
func dequantized(t *testing.T, path string) string {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	infos := f.Tensors()
	data := make([][]byte, len(infos))
	for i := range infos {
		raw, err := f.TensorData(infos[i].Name)
		require.NoError(t, err)
		if infos[i].Type == quant.Q4_0 || infos[i].Type == quant.Q8_0 {
			v, err := quant.Dequantize(infos[i].Type, raw, int(infos[i].Elements()))
			require.NoError(t, err)
			raw = make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(x))
			}
			infos[i].Type = quant.F32
		}
		data[i] = raw
	}
	out := filepath.Join(t.TempDir(), "dequantized.gguf")
	w, err := os.Create(out)
	require.NoError(t, err)
	defer w.Close()
	gw, err := gguf.NewWriter(w, f.KVs(), infos)
	require.NoError(t, err)
	for i := range infos {
		require.NoError(t, gw.WriteTensor(infos[i].Name, data[i]))
	}
	require.NoError(t, gw.Close())
	return out
}
