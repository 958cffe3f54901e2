package openvino

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func envMap(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestOptionsFromEnv(t *testing.T) {
	o, err := optionsFrom(envMap(nil))
	require.NoError(t, err)
	require.Equal(t, DefaultOptions(), o)

	o, err = optionsFrom(envMap(map[string]string{
		"GGML_OPENVINO_DEVICE": "GPU.1", "GGML_OPENVINO_CACHE_DIR": "/c", "GGML_OPENVINO_PREFILL_CHUNK_SIZE": "128",
		"GGML_OPENVINO_STATEFUL_EXECUTION": "1", "GGML_OPENVINO_DISABLE_CACHE": "yes", // atoi("yes") = 0
		"GGML_OPENVINO_PROFILING": " 2x", "GGML_OPENVINO_MEMORY_OPTIMIZE": "+1", "GGML_OPENVINO_REDUCE_COMPILE_MEM": "0",
		"GGML_OPENVINO_MOE_OP": "0", "GGML_OPENVINO_LOG_UNSUPPORTED_OPS": "3", "GGML_OPENVINO_MANUAL_GQA_ATTN": "1",
		"GGML_OPENVINO_REQUANT_KQUANT": "q4_sym128", "GGML_OPENVINO_SPILL_DIR": "/s", "GGML_OPENVINO_LIB": "/l",
	}))
	require.NoError(t, err)
	require.Equal(t, "GPU.1", o.Device)
	require.Equal(t, KindGPU, KindOf(o.Device))
	require.Equal(t, "/c", o.CacheDir)
	require.Equal(t, 128, o.PrefillChunkSize)
	require.True(t, o.StatefulExecution)
	require.False(t, o.DisableCache)
	require.Equal(t, 2, o.Profiling)
	require.True(t, o.MemoryOptimize)
	require.True(t, o.ReleaseWeightsEnabled(KindGPU), "inherited from MEMORY_OPTIMIZE")
	require.False(t, o.ReleaseWeightsEnabled(KindCPU), "GPU only")
	require.True(t, o.LogUnsupportedOps)
	require.Equal(t, "q4_sym128", o.RequantKQuant)
	require.Equal(t, "/s", o.SpillDir)
	require.Equal(t, "/l", o.Lib)
	require.True(t, o.Stateful(KindGPU))
	require.False(t, o.Stateful(KindNPU))

	_, err = optionsFrom(envMap(map[string]string{"GGML_OPENVINO_PREFILL_CHUNK_SIZE": "0"}))
	require.ErrorContains(t, err, `openvino: GGML_OPENVINO_PREFILL_CHUNK_SIZE="0": want a positive whole number`)
	_, err = optionsFrom(envMap(map[string]string{"GGML_OPENVINO_REQUANT_KQUANT": "q3"}))
	require.ErrorContains(t, err, `openvino: GGML_OPENVINO_REQUANT_KQUANT="q3": want one of q4_sym128, q4_sym128_all, native`)
}

// Every variable of the reference's table is read.
func TestOptionVariablesCoverReference(t *testing.T) {
	vars := strings.Join(OptionVariables(), " ") + " "
	for _, v := range strings.Fields(`DEVICE CACHE_DIR COMPILED_MODEL_CACHE_DIR COMPILED_MODEL_CACHE_ONLY PREFILL_CHUNK_SIZE
		NPU_COMPILE_CONFIG STATEFUL_EXECUTION DISABLE_KV_STATE_RELAYOUT DISABLE_CACHE ENABLE_CACHE DISABLE_KV_SLICE
		MANUAL_GQA_ATTN MEMORY_OPTIMIZE REDUCE_COMPILE_MEM RELEASE_WEIGHTS SPILL_DIR ENABLE_FALLBACK LOG_UNSUPPORTED_OPS
		PROFILING DUMP_CGRAPH DUMP_IR DEBUG_INPUT DEBUG_OUTPUT DEBUG_NODE PRINT_CGRAPH_TENSOR_ADDRESS FORCE_STATIC MOE_OP
		LOG_SWA_LAYERS NATIVE_SOFTPLUS DISABLE_REMOTE_OUTPUTS REQUANT_KQUANT FULL_GRAPH_KEY`) {
		require.Contains(t, vars, "GGML_OPENVINO_"+v+" ")
	}
}

func TestApplyParams(t *testing.T) {
	o := DefaultOptions()
	require.NoError(t, o.ApplyParams(map[string]string{"device": "NPU", "GGML_OPENVINO_prefill_chunk_size": "64"}))
	require.Equal(t, "NPU", o.Device)
	require.Equal(t, 64, o.PrefillChunkSize)
	require.ErrorContains(t, o.ApplyParams(map[string]string{"nope": "1"}), `openvino: unknown device parameter "nope" (given nope="1"; `)
	require.ErrorContains(t, o.ApplyParams(map[string]string{"prefill_chunk_size": "x"}), `GGML_OPENVINO_PREFILL_CHUNK_SIZE="x"`)
}

func FuzzOptionsFromEnv(f *testing.F) {
	f.Add("DEVICE", "GPU.0")
	f.Add("PREFILL_CHUNK_SIZE", "-1")
	f.Add("DEBUG_NODE", ",,a,")
	f.Fuzz(func(t *testing.T, name, val string) {
		o, err := optionsFrom(envMap(map[string]string{EnvPrefix + name: val}))
		if err == nil {
			require.Positive(t, o.PrefillChunkSize)
		}
		_ = KindOf(val)
	})
}

func TestVersionAndNumbering(t *testing.T) {
	v, err := parseVersion("2025.3.0-19807-44526285f24-releases/2025/3")
	require.NoError(t, err)
	require.Equal(t, Version{Year: 2025, Minor: 3, Patch: 0, Build: v.Build}, v)
	require.Equal(t, numbering2025_1, numberingFor(v))
	v, _ = parseVersion("2025.0.0-17942-1f68be9f594-releases/2025/0")
	require.Equal(t, numbering2025_0, numberingFor(v))
	require.False(t, v.Less(MinVersion))
	v, _ = parseVersion("2024.6.0")
	require.True(t, v.Less(MinVersion))
	for _, bad := range []string{"", "garbage", "2025", "x.y"} {
		_, err := parseVersion(bad)
		require.Error(t, err, bad)
	}
	// the two numberings of versions.txt
	require.EqualValues(t, 4, numbering2025_0.c(etF16))
	require.EqualValues(t, 5, numbering2025_0.c(etF32))
	require.EqualValues(t, 26, numbering2025_0.c(etF8E8M0))
	require.EqualValues(t, 3, numbering2025_1.c(etF16))
	require.EqualValues(t, 16, numbering2025_1.c(etU8))
	require.EqualValues(t, 25, numbering2025_1.c(etF8E8M0))
	e, ok := numbering2025_0.fromC(0)
	require.False(t, ok, "UNDEFINED is no type: %v", e)
	e, ok = numbering2025_1.fromC(9)
	require.True(t, ok)
	require.Equal(t, etI32, e)
}

func TestSearchDirs(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"INTEL_OPENVINO_DIR": "/ov", "LD_LIBRARY_PATH": dir + string(os.PathListSeparator) + "/x"}
	dirs := searchDirs("/mylib", envMap(env), "linux", "amd64")
	require.Equal(t, "/mylib", dirs[0])
	require.Contains(t, dirs, filepath.Join("/ov", "runtime", "lib", "intel64"))
	require.Contains(t, dirs, dir)
	require.Contains(t, dirs, "/usr/lib/x86_64-linux-gnu")
	require.Contains(t, searchDirs("", envMap(env), "linux", "arm64"), filepath.Join("/ov", "runtime", "lib", "aarch64"))
	require.Contains(t, searchDirs("", envMap(map[string]string{"INTEL_OPENVINO_DIR": `C:\ov`}), "windows", "amd64"),
		filepath.Join(`C:\ov`, "runtime", "bin", "intel64", "Release"))
	require.Equal(t, []string{"openvino_c.dll"}, libNames("windows"))
	require.Equal(t, []string{"libopenvino_c.dylib"}, libNames("darwin"))

	// a folder holding only versioned sonames
	require.NoError(t, os.WriteFile(filepath.Join(dir, "libopenvino_c.so.2500"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "libopenvino_c.so.2510"), nil, 0o644))
	require.Equal(t, []string{"libopenvino_c.so.2510", "libopenvino_c.so.2500"}, versioned("linux", dir))
}

func TestMissingLibraryReason(t *testing.T) {
	dir := t.TempDir()
	_, reason := open(Options{Lib: dir, Device: "CPU"})
	require.NotNil(t, reason)
	require.Contains(t, reason.Error(), "library not found")
	require.Contains(t, reason.Tried, filepath.Join(dir, libNames(runtime.GOOS)[0]))

	missing := filepath.Join(dir, "libopenvino_c.so.2599")
	_, reason = open(Options{Lib: missing})
	require.NotNil(t, reason)
	require.Equal(t, []string{missing}, reason.Tried)

	junk := filepath.Join(dir, "libopenvino_c.so")
	require.NoError(t, os.WriteFile(junk, []byte("no library"), 0o644))
	_, reason = open(Options{Lib: junk})
	require.NotNil(t, reason)
	require.Contains(t, reason.Error(), "failed to load")
}
