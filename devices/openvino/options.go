package openvino

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ggml-go/ggml/internal/envopt"
)

// Kind is the class of OpenVINO device a backend runs on. The supports-op
// rules and the compile configuration depend on it, as in ggml-openvino.
type Kind int

// Device kinds.
const (
	KindCPU Kind = iota
	KindGPU
	KindNPU
)

func (k Kind) String() string {
	switch k {
	case KindCPU:
		return "CPU"
	case KindGPU:
		return "GPU"
	case KindNPU:
		return "NPU"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// KindOf classifies an OpenVINO device name: "GPU", "GPU.1" are GPUs,
// "NPU" is the NPU, anything else runs as the CPU. ggml-openvino compares
// the name with "GPU" exactly, so its GPU rules miss "GPU.1"; here every
// GPU.N gets them, since the rules exist because of the GPU plugin.
func KindOf(device string) Kind {
	d := strings.ToUpper(device)
	switch {
	case d == "GPU" || strings.HasPrefix(d, "GPU."):
		return KindGPU
	case d == "NPU" || strings.HasPrefix(d, "NPU."):
		return KindNPU
	}
	return KindCPU
}

// Tri is a setting that can be left unset, so that another one decides
// (GGML_OPENVINO_REDUCE_COMPILE_MEM and RELEASE_WEIGHTS inherit from
// MEMORY_OPTIMIZE; MANUAL_GQA_ATTN defaults by device).
type Tri int8

// Tri values.
const (
	Unset Tri = iota
	Off
	On
)

// Or is t's value, or def when t is Unset.
func (t Tri) Or(def bool) bool {
	if t == Unset {
		return def
	}
	return t == On
}

func triOf(b bool) Tri {
	if b {
		return On
	}
	return Off
}

// Options are the settings of the OpenVINO device, one field per
// GGML_OPENVINO_* environment variable of ggml-openvino, with the same
// meaning (OptionsFromEnv reads them). Go programs may fill it directly
// and pass it to NewRegistry.
type Options struct {
	// Lib is a libopenvino_c file or a folder holding it
	// (GGML_OPENVINO_LIB; ggml-go only: the C backend links it).
	Lib string
	// Device is the OpenVINO device: CPU, GPU, GPU.N or NPU
	// (GGML_OPENVINO_DEVICE, default CPU). A device the runtime does not
	// list falls back to CPU with a warning, as ggml-openvino does.
	Device string
	// CacheDir is the plugins' model cache folder (GGML_OPENVINO_CACHE_DIR):
	// CACHE_DIR (NPU: NPUW_CACHE_DIR) and CACHE_MODE=OPTIMIZE_SIZE.
	CacheDir string
	// CompiledModelCacheDir is where compiled models are exported and
	// imported from (GGML_OPENVINO_COMPILED_MODEL_CACHE_DIR).
	CompiledModelCacheDir string
	// CompiledModelCacheOnly: weights are never read, a missing compiled
	// model is an error (GGML_OPENVINO_COMPILED_MODEL_CACHE_ONLY).
	CompiledModelCacheOnly bool
	// PrefillChunkSize is the NPU prefill chunk (GGML_OPENVINO_PREFILL_CHUNK_SIZE, 256).
	PrefillChunkSize int
	// NPUCompileConfig goes to NPU_COMPILATION_MODE_PARAMS
	// (GGML_OPENVINO_NPU_COMPILE_CONFIG).
	NPUCompileConfig string
	// StatefulExecution keeps the KV cache inside the model, CPU/GPU only
	// (GGML_OPENVINO_STATEFUL_EXECUTION).
	StatefulExecution bool
	// DisableRemoteOutputs binds the outputs written into a KV cache in
	// USM memory (a GPU's, usm.go) as host tensors, copied after the
	// infer (into device memory through the OpenCL queue), instead of in
	// place as remote tensors; its inputs stay remote
	// (GGML_OPENVINO_DISABLE_REMOTE_OUTPUTS, as upstream's
	// create_ov_output_tensor).
	DisableRemoteOutputs bool
	// DisableCache turns off the in-process compiled-model cache
	// (GGML_OPENVINO_DISABLE_CACHE).
	DisableCache bool
	// MemoryOptimize implies ReleaseWeights on GPU where that is unset
	// (GGML_OPENVINO_MEMORY_OPTIMIZE; upstream's REDUCE_COMPILE_MEM, which
	// it also implies there, is refused here: see optionVars).
	MemoryOptimize bool
	// DynamicShapes, on, compiles one model for all token counts on the
	// CPU and GPU (dynamic.go) where a graph allows it, instead of one per
	// shape (GGML_OPENVINO_DYNAMIC_SHAPES; ours: upstream always has
	// dynamic dimensions there). Off by default: measured on the real CPU
	// plugin (2026.4.1, SmolLM2), it compiles once instead of twice and
	// holds about 15% less, but computes 30-45% slower per CPU second
	// (devices/openvino README, "Resident memory"). Never on the NPU.
	DynamicShapes bool
	// ReleaseWeights drops host weight pages after the first compiled
	// model cache hit: on a GPU all, on the CPU those its plugin repacked
	// (GGML_OPENVINO_RELEASE_WEIGHTS).
	ReleaseWeights Tri
	// SpillDir backs weight buffers with an unlinked file there
	// (GGML_OPENVINO_SPILL_DIR; not on Windows). Use real storage, not tmpfs.
	SpillDir string
	// EnableFallback splits graphs with a CPU fallback inside the device
	// (GGML_OPENVINO_ENABLE_FALLBACK).
	EnableFallback bool
	// LogUnsupportedOps logs every op supports-op refuses, with the reason
	// (GGML_OPENVINO_LOG_UNSUPPORTED_OPS).
	LogUnsupportedOps bool
	// Profiling logs build/compile/infer times; >= 2 also PERF_COUNT
	// (GGML_OPENVINO_PROFILING).
	Profiling int
	// DumpCgraph writes cgraph_ov.txt (GGML_OPENVINO_DUMP_CGRAPH).
	DumpCgraph bool
	// DumpIR writes every IR as .xml/.bin with its inputs (GGML_OPENVINO_DUMP_IR).
	DumpIR bool
	// DebugInput, DebugOutput print I/O tensor information
	// (GGML_OPENVINO_DEBUG_INPUT, GGML_OPENVINO_DEBUG_OUTPUT).
	DebugInput, DebugOutput bool
	// PrintCgraphTensorAddress (GGML_OPENVINO_PRINT_CGRAPH_TENSOR_ADDRESS).
	PrintCgraphTensorAddress bool
	// ForceStatic takes the static (NPU-shape) path on any device
	// (GGML_OPENVINO_FORCE_STATIC).
	ForceStatic bool
	// NativeSoftplus uses SoftPlus-4 instead of the stable decomposition
	// (GGML_OPENVINO_NATIVE_SOFTPLUS).
	NativeSoftplus bool
	// RequantKQuant: q4_sym128, q4_sym128_all, q4_asym64, q4_asym64_all,
	// native (GGML_OPENVINO_REQUANT_KQUANT).
	RequantKQuant string
	// InferencePrecision is the INFERENCE_PRECISION_HINT every model is
	// compiled with: f32, bf16 or f16, or "" for the device's default
	// (InferencePrecisionFor) (GGML_OPENVINO_INFERENCE_PRECISION; ggml-go
	// only: ggml-openvino leaves the plugins' own default).
	InferencePrecision string
	// keepFormats (tests only) turns requantization off entirely, so the
	// conformance suite, which sets its weights into WEIGHTS buffers,
	// compares each format's own values with ggml's.
	keepFormats bool
	// noKVUSM (tests only) keeps a GPU's KV cache in host memory, bound
	// as plain host tensors: the copying path usm_test.go compares with.
	noKVUSM bool
	// noKVDevice (tests only) keeps it in USM host memory, not device
	// memory.
	noKVDevice bool
}

// DefaultOptions are the settings with no variable set.
func DefaultOptions() Options {
	return Options{Device: "CPU", PrefillChunkSize: 256}
}

// EnvPrefix starts every variable OptionsFromEnv reads.
const EnvPrefix = "GGML_OPENVINO_"

func boolVar(name string, f func(o *Options) *bool) envopt.Var[Options] {
	return envopt.Var[Options]{Name: name, Set: envopt.AtoiBool(f)}
}

func triVar(name string, f func(o *Options) *Tri) envopt.Var[Options] {
	return envopt.Var[Options]{Name: name, Set: func(o *Options, v string) error {
		*f(o) = triOf(envopt.Atoi(v) != 0)
		return nil
	}}
}

func intVar(name string, f func(o *Options) *int) envopt.Var[Options] {
	return envopt.Var[Options]{Name: name, Set: envopt.AtoiInt(f)}
}

func strVar(name string, f func(o *Options) *string) envopt.Var[Options] {
	return envopt.Var[Options]{Name: name, Set: envopt.String(f)}
}

// requantKQuants are the values GGML_OPENVINO_REQUANT_KQUANT accepts
// (requantFor says what each does); upstream's q4_asym64 and
// q4_asym64_all are refused: there is no asymmetric 4-bit requantization
// here.
var requantKQuants = []string{"q4_sym128", "q4_sym128_all", "native"}

// inferencePrecisions are the values GGML_OPENVINO_INFERENCE_PRECISION
// accepts: the element types the plugins document for the hint.
var inferencePrecisions = []string{"f32", "bf16", "f16"}

// InferencePrecisionFor is the INFERENCE_PRECISION_HINT set for a device
// kind, or "" for none. The plugins' defaults are not ggml's: the CPU
// plugin computes in bf16 on CPUs with AMX or AVX512-BF16 (measured on the
// real CPU plugin 2026.4.1 here, AVX512-BF16: a Q8_0 MUL_MAT 8.0e-6 NMSE
// from ggml, and 87 full-suite cases over the suite's 1e-7) and in f32
// elsewhere, so the same graph gave different results on different CPUs.
// ggml computes in f32, so the CPU gets f32 everywhere; the GPU keeps f16,
// its plugin's default and upstream's (f32 there is about 3x slower); the
// NPU gets no hint, its compiler chooses (the NPUW settings of
// compileConfig are upstream's whole NPU configuration).
func (o *Options) InferencePrecisionFor(k Kind) string {
	switch {
	case o.InferencePrecision != "":
		return o.InferencePrecision
	case k == KindCPU:
		return "f32"
	case k == KindGPU:
		return "f16"
	}
	return ""
}

// optionVars is every GGML_OPENVINO_* variable the device reads, with the
// meaning ggml_openvino_getenv_* gives it: booleans are C's atoi != 0,
// numbers atoi.
var optionVars = &envopt.Table[Options]{Device: "openvino", Prefix: EnvPrefix, Vars: []envopt.Var[Options]{
	strVar("LIB", func(o *Options) *string { return &o.Lib }),
	strVar("DEVICE", func(o *Options) *string { return &o.Device }),
	strVar("CACHE_DIR", func(o *Options) *string { return &o.CacheDir }),
	strVar("COMPILED_MODEL_CACHE_DIR", func(o *Options) *string { return &o.CompiledModelCacheDir }),
	boolVar("COMPILED_MODEL_CACHE_ONLY", func(o *Options) *bool { return &o.CompiledModelCacheOnly }),
	{Name: "PREFILL_CHUNK_SIZE", Set: func(o *Options, v string) error {
		n := envopt.Atoi(v)
		if n <= 0 {
			return errors.New("want a positive whole number of tokens (the NPU prefill chunk; default 256)")
		}
		o.PrefillChunkSize = n
		return nil
	}},
	strVar("NPU_COMPILE_CONFIG", func(o *Options) *string { return &o.NPUCompileConfig }),
	boolVar("STATEFUL_EXECUTION", func(o *Options) *bool { return &o.StatefulExecution }),
	boolVar("DISABLE_REMOTE_OUTPUTS", func(o *Options) *bool { return &o.DisableRemoteOutputs }),
	boolVar("DISABLE_CACHE", func(o *Options) *bool { return &o.DisableCache }),
	boolVar("MEMORY_OPTIMIZE", func(o *Options) *bool { return &o.MemoryOptimize }),
	boolVar("DYNAMIC_SHAPES", func(o *Options) *bool { return &o.DynamicShapes }),
	triVar("RELEASE_WEIGHTS", func(o *Options) *Tri { return &o.ReleaseWeights }),
	strVar("SPILL_DIR", func(o *Options) *string { return &o.SpillDir }),
	boolVar("ENABLE_FALLBACK", func(o *Options) *bool { return &o.EnableFallback }),
	boolVar("LOG_UNSUPPORTED_OPS", func(o *Options) *bool { return &o.LogUnsupportedOps }),
	intVar("PROFILING", func(o *Options) *int { return &o.Profiling }),
	boolVar("DUMP_CGRAPH", func(o *Options) *bool { return &o.DumpCgraph }),
	boolVar("DUMP_IR", func(o *Options) *bool { return &o.DumpIR }),
	boolVar("DEBUG_INPUT", func(o *Options) *bool { return &o.DebugInput }),
	boolVar("DEBUG_OUTPUT", func(o *Options) *bool { return &o.DebugOutput }),
	boolVar("PRINT_CGRAPH_TENSOR_ADDRESS", func(o *Options) *bool { return &o.PrintCgraphTensorAddress }),
	boolVar("FORCE_STATIC", func(o *Options) *bool { return &o.ForceStatic }),
	boolVar("NATIVE_SOFTPLUS", func(o *Options) *bool { return &o.NativeSoftplus }),
	{Name: "REQUANT_KQUANT", Set: func(o *Options, v string) error {
		if v == "q4_asym64" || v == "q4_asym64_all" {
			return errors.New("not supported: there is no asymmetric 4-bit requantization here; want one of " +
				strings.Join(requantKQuants, ", "))
		}
		if !slices.Contains(requantKQuants, v) {
			return fmt.Errorf("want one of %s", strings.Join(requantKQuants, ", "))
		}
		o.RequantKQuant = v
		return nil
	}},
	{Name: "INFERENCE_PRECISION", Set: func(o *Options, v string) error {
		if !slices.Contains(inferencePrecisions, v) {
			return fmt.Errorf("want one of %s", strings.Join(inferencePrecisions, ", "))
		}
		o.InferencePrecision = v
		return nil
	}},

	// Variables upstream reads whose effect this device does not have. A
	// value asking for what the device always does is accepted; any other
	// is an error that says so, instead of being read and ignored.
	fixed("ENABLE_CACHE", off, "not supported (upstream reads and ignores it too): the in-process "+
		"compiled-model cache is on unless GGML_OPENVINO_DISABLE_CACHE is set, the plugins' cache is GGML_OPENVINO_CACHE_DIR"),
	fixed("DISABLE_KV_SLICE", off, "not supported: the KV cache is bound as the views the graph reads"),
	fixed("DISABLE_KV_STATE_RELAYOUT", off, "not supported: stateful KV caches are always kept in the graph's layout"),
	fixed("MANUAL_GQA_ATTN", on, "not supported: 0 asks for SDPA broadcasting the K/V heads, and attention is always "+
		"decomposed with the K/V heads expanded, the manual GQA form"),
	fixed("REDUCE_COMPILE_MEM", off, "not supported: weights are converted once, when they are set, so "+
		"there is no compile-time requantization to stream"),
	fixed("DEBUG_NODE", func(string) bool { return false }, "not supported: intermediates cannot be added as outputs; "+
		"GGML_OPENVINO_DUMP_IR writes every model"),
	fixed("MOE_OP", off, "not supported: the device has no MoE fusions (MUL_MAT_ID is translated as gathered "+
		"matmuls); only 0 is accepted"),
	fixed("LOG_SWA_LAYERS", off, "not supported: sliding-window layers are not detected"),
	// The key always covers every node: any value asks for what this
	// device does.
	fixed("FULL_GRAPH_KEY", always, ""),
}}

func off(v string) bool  { return envopt.Atoi(v) == 0 }
func on(v string) bool   { return envopt.Atoi(v) != 0 }
func always(string) bool { return true }

// fixed is a variable whose meaning this device cannot change: values
// holds accepts ask for what the device always does; any other value is
// an error saying why it is not supported.
func fixed(name string, holds func(v string) bool, why string) envopt.Var[Options] {
	return envopt.Var[Options]{Name: name, Set: func(_ *Options, v string) error {
		if holds(v) {
			return nil
		}
		return errors.New(why)
	}}
}

// OptionVariables lists every environment variable OptionsFromEnv reads.
func OptionVariables() []string { return optionVars.Names() }

// OptionsFromEnv returns DefaultOptions with every GGML_OPENVINO_* variable
// that is set and not empty applied (ggml_openvino_getenv_*: unset or empty
// means the default; booleans are true when the value reads as a non-zero
// integer, as atoi). A value that cannot mean anything (a chunk size of 0,
// an unknown REQUANT_KQUANT) is an error naming the variable, the value
// and what is accepted, not a silent default.
func OptionsFromEnv() (Options, error) {
	return optionsFrom(os.Getenv)
}

func optionsFrom(getenv func(string) string) (Options, error) {
	o := DefaultOptions()
	if _, err := optionVars.Read(&o, getenv); err != nil {
		return DefaultOptions(), err
	}
	return o, nil
}

// ApplyParams sets options from device parameters ("device=GPU",
// "cache_dir=/x"): the variable names without the GGML_OPENVINO_ prefix, in
// any case, with the variables' meaning. An unknown key is an error.
func (o *Options) ApplyParams(params map[string]string) error {
	_, err := optionVars.Apply(o, params)
	return err
}

// ReleaseWeightsEnabled is, on a GPU (whose plugin keeps a device copy of
// the weights), RELEASE_WEIGHTS, else MEMORY_OPTIMIZE, as upstream; on the
// CPU RELEASE_WEIGHTS set on, which drops only the weights the CPU plugin
// repacked (weightRegistry.release; ours: upstream releases on a GPU).
// Never on the NPU.
func (o *Options) ReleaseWeightsEnabled(k Kind) bool {
	switch k {
	case KindGPU:
		return o.ReleaseWeights.Or(o.MemoryOptimize)
	case KindCPU:
		return o.ReleaseWeights == On
	}
	return false
}

// Stateful reports whether the KV cache lives in the model: asked for, and
// not on the NPU (ggml-openvino ignores it there).
func (o *Options) Stateful(k Kind) bool { return o.StatefulExecution && k != KindNPU }

// Static reports whether graphs take the static (NPU) path.
func (o *Options) Static(k Kind) bool { return k == KindNPU || o.ForceStatic }
