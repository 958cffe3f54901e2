package llamaref

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
)

// KernelVariant is the ggml CPU build whose arithmetic our CPU device's
// kernels reproduce here: "x64" (ggml's generic build) when they are the
// generic Go ones, "sapphirerapids" (AVX-512 and AMX, with the weights of
// its AMX types in ggml's AMX buffer, as libllama places them) on the amx
// level, else "haswell" (AVX2/FMA/F16C: the avx2 and avx512vnni levels
// keep its orders). On a machine with AVX-512 ggml's best build (zen4,
// skylakex, ...) sums and quantizes activations in yet another order, so
// comparing with it measures the two instruction sets, not our code:
// qwen2 Q4_K's logits sat at NMSE 1.85e-4 against zen4 and 2.6e-13
// against haswell.
func KernelVariant() string {
	e := cpu.New(cpu.Options{Threads: 1})
	defer e.Close()
	switch e.Kernels() {
	case "generic":
		return "x64"
	case "amx":
		return "sapphirerapids"
	}
	return "haswell"
}

// forTest is libllama with GGML_REF_CPU_VARIANT's build when it is set,
// else KernelVariant's, loaded once per process.
var forTest = sync.OnceValues(func() (*Lib, error) {
	if os.Getenv(ggmlref.EnvVariant) != "" {
		return Default()
	}
	g, err := ggmlref.Default()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotAvailable, err)
	}
	return Open(g.Dir(), KernelVariant())
})

// ForTest returns the process-wide libllama for a test, computing with the
// ggml CPU build our kernels reproduce (KernelVariant) unless
// GGML_REF_CPU_VARIANT names one; Default, which benchmarks use, keeps
// ggml's best build for this machine. When it
// cannot be loaded the test is skipped, or failed when GGML_REF_REQUIRED=1
// (as in CI), saying why.
func ForTest(t testing.TB) *Lib {
	t.Helper()
	l, err := forTest()
	if err != nil {
		if os.Getenv(ggmlref.EnvRequired) == "1" {
			t.Fatalf("%v (%s=1)", err, ggmlref.EnvRequired)
		}
		t.Skipf("libllama not available: %v", err)
	}
	return l
}

// CheckDefaults reads l's defaults into the structs and reports every
// named field that does not hold the value llama.cpp documents for it:
// the layout check of a build (the npm one here, scripts/fetch-rpc-ref's
// in rpcref).
func CheckDefaults(l *Lib) error {
	mp, cp := l.DefaultModelParams(), l.DefaultContextParams()
	var bad []string
	check := func(what string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			bad = append(bad, fmt.Sprintf("%s is %v, want %v", what, got, want))
		}
	}
	check("n_gpu_layers", mp.NGPULayers, int32(-1))
	check("split_mode (LLAMA_SPLIT_MODE_LAYER)", mp.SplitMode, int32(1))
	check("devices, tensor_buft_overrides", [2]uintptr{mp.Devices, mp.TensorBuftOverrides}, [2]uintptr{})
	check("use_extra_bufts", mp.UseExtraBufts, true)
	check("use_extra_bufts of CompareModelParams", l.CompareModelParams().UseExtraBufts, false)
	check("n_ctx, n_batch, n_ubatch, n_seq_max", [4]uint32{cp.NCtx, cp.NBatch, cp.NUbatch, cp.NSeqMax}, [4]uint32{512, 2048, 512, 1})
	check("threads (GGML_DEFAULT_N_THREADS)", [2]int32{cp.NThreads, cp.NThreadsBatch}, [2]int32{4, 4})
	check("rope scaling, pooling, attention, flash attention types",
		[4]int32{cp.RopeScalingType, cp.PoolingType, cp.AttentionType, cp.FlashAttnType}, [4]int32{-1, -1, -1, FlashAttnAuto})
	check("rope and yarn factors", [6]float32{cp.RopeFreqBase, cp.RopeFreqScale, cp.YarnExtFactor, cp.YarnAttnFactor, cp.YarnBetaFast, cp.YarnBetaSlow},
		[6]float32{0, 0, -1, -1, -1, -1})
	check("yarn_orig_ctx", cp.YarnOrigCtx, uint32(0))
	check("defrag_thold", cp.DefragThold, float32(-1))
	check("type_k, type_v (F16 cache)", [2]int32{cp.TypeK, cp.TypeV}, [2]int32{1, 1})
	check("embeddings, offload_kqv, no_perf, op_offload, swa_full, kv_unified",
		[6]bool{cp.Embeddings, cp.OffloadKQV, cp.NoPerf, cp.OpOffload, cp.SwaFull, cp.KVUnified}, [6]bool{false, true, true, true, true, false})
	check("cb_eval, abort_callback, samplers, n_samplers", [4]uintptr{cp.CbEval, cp.AbortCallback, cp.Samplers, cp.NSamplers}, [4]uintptr{})
	if len(bad) > 0 {
		return fmt.Errorf("llamaref: the defaults read through the structs are not llama.cpp's: %s", strings.Join(bad, "; "))
	}
	return nil
}
