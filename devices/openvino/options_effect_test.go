package openvino

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// optionChecks says, for every variable the package reads, how it acts:
// "effect TestX" (TestX fails without the effect), "holds TestX" (every
// accepted value asks for what the device always does, which TestX
// checks) or "refused V" (V is an error saying it is not supported).
var optionChecks = map[string]string{
	"LIB":                         "effect TestMissingLibraryReason",
	"DEVICE":                      "effect TestDoubleUnknownDeviceFallsBack",
	"CACHE_DIR":                   "effect TestCompileConfigOptions",
	"COMPILED_MODEL_CACHE_DIR":    "effect TestCompiledModelCacheDir",
	"COMPILED_MODEL_CACHE_ONLY":   "effect TestCompiledModelCacheOnly",
	"PREFILL_CHUNK_SIZE":          "effect TestNPUStaticPrefillDecode",
	"NPU_COMPILE_CONFIG":          "effect TestCompileConfigOptions",
	"STATEFUL_EXECUTION":          "effect TestStatefulExecution",
	"DISABLE_CACHE":               "effect TestCompiledModelCache",
	"MEMORY_OPTIMIZE":             "effect TestOptionsFromEnv",
	"DYNAMIC_SHAPES":              "effect TestDynamicOneModel",
	"RELEASE_WEIGHTS":             "effect TestReleaseWeights",
	"SPILL_DIR":                   "effect TestSpillDir",
	"ENABLE_FALLBACK":             "effect TestEnableFallbackSplitGraphsUncached",
	"LOG_UNSUPPORTED_OPS":         "effect TestLogUnsupportedOps",
	"PROFILING":                   "effect TestCompileConfigOptions",
	"DUMP_CGRAPH":                 "effect TestDumpCgraph",
	"DUMP_IR":                     "effect TestDumpIR",
	"DEBUG_INPUT":                 "effect TestDebugInputOutput",
	"DEBUG_OUTPUT":                "effect TestDebugInputOutput",
	"PRINT_CGRAPH_TENSOR_ADDRESS": "effect TestDumpCgraph",
	"FORCE_STATIC":                "effect TestNPUDoubleRefusesDynamicShape",
	"NATIVE_SOFTPLUS":             "effect TestNativeSoftplus",
	"REQUANT_KQUANT":              "effect TestRequantPolicy",
	"INFERENCE_PRECISION":         "effect TestInferencePrecision",
	"ENABLE_CACHE":                "refused 1",
	"DISABLE_KV_SLICE":            "refused 1",
	"DISABLE_KV_STATE_RELAYOUT":   "refused 1",
	"MANUAL_GQA_ATTN":             "refused 0",
	"REDUCE_COMPILE_MEM":          "refused 1",
	"DEBUG_NODE":                  "refused a,b",
	"MOE_OP":                      "refused 1",
	"LOG_SWA_LAYERS":              "refused 1",
	"DISABLE_REMOTE_OUTPUTS":      "effect TestKVCacheUSMDisableRemoteOutputs",
	"FULL_GRAPH_KEY":              "holds TestCompiledModelCache",
}

// TestEveryVariableActs fails for a variable the package reads that has
// neither an effect with its test nor a refusal: an option parsed and
// ignored.
func TestEveryVariableActs(t *testing.T) {
	src := testSources(t)
	vars := OptionVariables()
	require.Len(t, optionChecks, len(vars), "optionChecks lists exactly the variables read")
	// Every variable the package's code names is one of the table's, so
	// none is read beside it (GGML_OPENVINO_NAME is ggml's C macro for the
	// registry name, no variable).
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`GGML_OPENVINO_([A-Z0-9_]+)|EnvPrefix \+ "([A-Z0-9_]+)"`).FindAllSubmatch(b, -1) {
			name := string(m[1]) + string(m[2])
			if name != "NAME" {
				require.Contains(t, optionChecks, name, "%s names GGML_OPENVINO_%s, which is not in the options table", f, name)
			}
		}
	}
	for _, v := range vars {
		name := strings.TrimPrefix(v, EnvPrefix)
		check, ok := optionChecks[name]
		require.True(t, ok, "%s is read but optionChecks does not say what it does", v)
		kind, arg, _ := strings.Cut(check, " ")
		switch kind {
		case "effect", "holds":
			require.True(t, strings.Contains(src, "func "+arg+"(t *testing.T)"), "%s: the test %s exists", v, arg)
		case "refused":
			_, err := optionsFrom(envMap(map[string]string{v: arg}))
			require.ErrorContains(t, err, v+`="`+arg+`": not supported`)
		default:
			t.Fatalf("%s: unknown check %q", v, check)
		}
	}
}

func testSources(t *testing.T) string {
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	var sb strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		sb.Write(b)
	}
	return sb.String()
}

// The refused variables still accept the values that ask for what the
// device does, so settings written for the C backend keep working.
func TestRefusedVariablesAcceptTheirDefault(t *testing.T) {
	for v, ok := range map[string]string{"ENABLE_CACHE": "0", "DISABLE_KV_SLICE": "0", "DISABLE_KV_STATE_RELAYOUT": "0",
		"MANUAL_GQA_ATTN": "1", "REDUCE_COMPILE_MEM": "0", "MOE_OP": "0", "LOG_SWA_LAYERS": "0",
		"FULL_GRAPH_KEY": "1"} {
		o, err := optionsFrom(envMap(map[string]string{EnvPrefix + v: ok}))
		require.NoError(t, err, v)
		require.Equal(t, DefaultOptions(), o, v)
	}
	_, err := optionsFrom(envMap(map[string]string{EnvPrefix + "MEMORY_OPTIMIZE": "1", EnvPrefix + "REDUCE_COMPILE_MEM": "1"}))
	require.ErrorContains(t, err, "GGML_OPENVINO_REDUCE_COMPILE_MEM")
}

// CACHE_DIR, NPU_COMPILE_CONFIG and PROFILING >= 2 reach the compile
// properties, as upstream's compile_config.
func TestCompileConfigOptions(t *testing.T) {
	props := func(k Kind, o Options) map[string]string {
		m := map[string]string{}
		for _, p := range (&runtimeCtx{kind: k, opts: o}).compileConfig() {
			m[p[0]] = p[1]
		}
		return m
	}
	require.Equal(t, map[string]string{"INFERENCE_PRECISION_HINT": "f32"}, props(KindCPU, DefaultOptions()))
	p := props(KindCPU, Options{CacheDir: "/c/", Profiling: 2})
	require.Equal(t, map[string]string{"CACHE_DIR": "/c", "CACHE_MODE": "OPTIMIZE_SIZE", "PERF_COUNT": "YES", "INFERENCE_PRECISION_HINT": "f32"}, p)
	p = props(KindNPU, Options{CacheDir: "/c", NPUCompileConfig: "optimization-level=1"})
	require.Equal(t, "/c", p["NPUW_CACHE_DIR"])
	require.Equal(t, "optimization-level=1", p["NPU_COMPILATION_MODE_PARAMS"])
	require.NotContains(t, props(KindCPU, Options{Profiling: 1}), "PERF_COUNT")
}

// captureLog sends slog's output to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

func TestLogUnsupportedOps(t *testing.T) {
	p := buildDouble(t)
	ctx := graph.NewContext(graph.ContextOptions{})
	a := ctx.NewTensor(quant.F32, 8, 8)
	y := ctx.OutProd(a, a) // not in upstream's op table
	y.Name = "outer"
	for _, on := range []bool{false, true} {
		log := captureLog(t)
		dev := openDevice(t, p, Options{LogUnsupportedOps: on})
		require.False(t, dev.SupportsOp(y))
		if on {
			require.Contains(t, log.String(), "OpenVINO op unsupported")
			require.Contains(t, log.String(), `OpenVINO op unsupported: op 'outer' (OUT_PROD), type f32: op OUT_PROD has no op translator`)
		} else {
			require.NotContains(t, log.String(), "unsupported")
		}
	}
}

func TestDebugInputOutput(t *testing.T) {
	p := buildDouble(t)
	for _, on := range []bool{false, true} {
		log := captureLog(t)
		dev := openDevice(t, p, Options{DebugInput: on, DebugOutput: on})
		be := newBackend(dev)
		g, _, _, _ := addGraph(t, dev, 8)
		require.NoError(t, be.GraphCompute(g))
		be.Close()
		if !on {
			require.NotContains(t, log.String(), "openvino: input")
			continue
		}
		require.Regexp(t, `msg="openvino: input" index=0 tensor=a type=f32 shape=\[16\]`, log.String())
		require.Regexp(t, `msg="openvino: input" index=1 tensor=b type=f32`, log.String())
		require.Regexp(t, `msg="openvino: output" index=0 tensor=y type=f32 shape="\[1 1 2 8\]"`, log.String())
	}
}

func TestDumpCgraph(t *testing.T) {
	p := buildDouble(t)
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(t.TempDir()))
	defer os.Chdir(wd)
	for _, addresses := range []bool{false, true} {
		dev := openDevice(t, p, Options{DumpCgraph: true, PrintCgraphTensorAddress: addresses, DisableCache: true})
		be := newBackend(dev)
		g, _, _, _ := addGraph(t, dev, 8)
		require.NoError(t, be.GraphCompute(g))
		be.Close()
		b, err := os.ReadFile(cgraphFile)
		require.NoError(t, err)
		require.Contains(t, string(b), "n_nodes = 1\n")
		require.Regexp(t, `node 0: ADD "y" f32 ne=\[8 2 1 1\] .* src0="a" src1="b"`, string(b))
		require.Equal(t, addresses, regexp.MustCompile(`data=0x[0-9a-f]+`).Match(b))
		require.NoError(t, os.Remove(cgraphFile))
	}
}

// NATIVE_SOFTPLUS builds SoftPlus-4 instead of the stable decomposition;
// both compute ggml's softplus, and the two are different models in the
// cache.
func TestNativeSoftplus(t *testing.T) {
	p := buildDouble(t)
	var ir []byte
	irMutator = func(x []byte) []byte { ir = append(ir[:0], x...); return x }
	t.Cleanup(func() { irMutator = nil })
	var results [2][]float32
	for i, native := range []bool{false, true} {
		dev := openDevice(t, p, Options{NativeSoftplus: native})
		be := newBackend(dev)
		ctx := graph.NewContext(graph.ContextOptions{})
		x := ctx.NewTensor(quant.F32, 16, 2)
		y := ctx.Softplus(x)
		g, err := ctx.Build(y)
		require.NoError(t, err)
		buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
		require.NoError(t, err)
		in := make([]float32, 32)
		for j := range in {
			in[j] = float32(j-16) * 1.7
		}
		require.NoError(t, buffer.SetTensor(x, quant.F32Bytes(in), 0))
		require.NoError(t, be.GraphCompute(g))
		require.Equal(t, native, bytes.Contains(ir, []byte(`type="SoftPlus"`)), "native=%v", native)
		results[i] = getF32(t, y)
		be.Close()
		buf.Free()
	}
	require.InDeltaSlice(t, results[0], results[1], 1e-5)
	require.NotEqual(t, (&Options{}).translationTag(), (&Options{NativeSoftplus: true}).translationTag())
}

// Outputs are bound as host tensors over ggml's memory, also on a GPU:
// no remote tensor is created for a graph that writes no KV cache in USM
// memory (usm_test.go has those).
func TestOutputsAreHostMemory(t *testing.T) {
	p := buildDouble(t)
	knob(t, p, "devices", "CPU,GPU")
	dev := openDevice(t, p, Options{Device: "GPU"})
	require.Equal(t, KindGPU, dev.Kind())
	be := newBackend(dev)
	defer be.Close()
	r0 := doubleStat(t, p, "calls.ov_remote_context_create_tensor")
	g, _, _, y := addGraph(t, dev, 8)
	require.NoError(t, be.GraphCompute(g))
	require.Equal(t, r0, doubleStat(t, p, "calls.ov_remote_context_create_tensor"))
	require.Equal(t, float32(2), getF32(t, y)[1])
}
