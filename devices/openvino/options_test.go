package openvino

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ggml-go/ggml/internal/dynlib"

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
	require.False(t, o.ReleaseWeightsEnabled(KindCPU), "MEMORY_OPTIMIZE implies it on a GPU only")
	on := Options{ReleaseWeights: On}
	require.True(t, on.ReleaseWeightsEnabled(KindCPU), "set on: the CPU drops what its plugin repacked")
	require.False(t, on.ReleaseWeightsEnabled(KindNPU))
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

func TestSearchPlaces(t *testing.T) {
	dir := t.TempDir()
	venv, conda, xdg := filepath.Join(dir, "venv"), filepath.Join(dir, "conda"), filepath.Join(dir, "xdg")
	cache := filepath.Join(xdg, "ggml-go", "openvino")
	venvLibs := filepath.Join(venv, "lib", "python3.12", "site-packages", "openvino", "libs")
	for _, d := range []string{venvLibs, filepath.Join(cache, "2025.4.1", "openvino", "libs"),
		filepath.Join(cache, "2025.10.0", "openvino", "libs"), filepath.Join(cache, "2026.4.1", "openvino", "libs")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	env := map[string]string{"INTEL_OPENVINO_DIR": "/ov", "LD_LIBRARY_PATH": dir + string(os.PathListSeparator) + "/x",
		"VIRTUAL_ENV": venv, "CONDA_PREFIX": conda, "XDG_CACHE_HOME": xdg}
	python := func() []string { return []string{"/site/openvino/libs"} }
	var from []string
	dirs := map[string][]string{}
	for _, p := range searchPlaces("", searchEnv{envMap(env), "linux", "amd64", python}) {
		from = append(from, p.from)
		dirs[p.from] = p.dirs()
	}
	require.Equal(t, []string{"INTEL_OPENVINO_DIR", "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", "install places",
		"python3 site-packages", "scripts/fetch-openvino cache"}, from)
	require.Contains(t, dirs["INTEL_OPENVINO_DIR"], filepath.Join("/ov", "runtime", "lib", "intel64"))
	require.Equal(t, []string{venvLibs}, dirs["VIRTUAL_ENV"])
	require.Contains(t, dirs["CONDA_PREFIX"], filepath.Join(conda, "lib"))
	require.Equal(t, []string{dir, "/x"}, dirs["LD_LIBRARY_PATH"])
	require.Contains(t, dirs["install places"], "/usr/lib/x86_64-linux-gnu")
	require.Equal(t, []string{"/site/openvino/libs"}, dirs["python3 site-packages"])
	// newest release first, numerically (2025.10 after 2025.4)
	require.Equal(t, []string{filepath.Join(cache, "2026.4.1", "openvino", "libs"), filepath.Join(cache, "2025.10.0", "openvino", "libs"),
		filepath.Join(cache, "2025.4.1", "openvino", "libs")}, dirs["scripts/fetch-openvino cache"])

	arm := searchPlaces("", searchEnv{envMap(env), "linux", "arm64", nil})
	require.Contains(t, arm[0].dirs(), filepath.Join("/ov", "runtime", "lib", "aarch64"))
	win := searchPlaces("", searchEnv{envMap(map[string]string{"INTEL_OPENVINO_DIR": `C:\ov`, "VIRTUAL_ENV": `C:\venv`,
		"CONDA_PREFIX": `C:\conda`}), "windows", "amd64", nil})
	require.Contains(t, win[0].dirs(), filepath.Join(`C:\ov`, "runtime", "bin", "intel64", "Release"))
	require.Equal(t, []string{filepath.Join(`C:\venv`, "Lib", "site-packages", "openvino", "libs")}, win[1].dirs())
	require.Contains(t, win[2].dirs(), filepath.Join(`C:\conda`, "Library", "bin"))
	require.Equal(t, "PATH", win[3].from)
	require.Equal(t, []string{"openvino_c.dll"}, libNames("windows"))
	require.Equal(t, []string{"libopenvino_c.dylib"}, libNames("darwin"))

	// a folder holding only versioned sonames (the pip wheel's layout)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "libopenvino_c.so.2500"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "libopenvino_c.so.2510"), nil, 0o644))
	require.Equal(t, []string{"libopenvino_c.so.2510", "libopenvino_c.so.2500"}, versioned("linux", dir))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "libopenvino_c.2500.dylib"), nil, 0o644))
	require.Equal(t, []string{"libopenvino_c.2500.dylib"}, versioned("darwin", dir))
}

// TestLoadFromFetchCache: with nothing else installed, the loader takes
// the newest release that scripts/fetch-openvino unpacked, under its
// versioned name (a junk file here, so loading it fails and names it).
func TestLoadFromFetchCache(t *testing.T) {
	xdg := t.TempDir()
	libs := filepath.Join(xdg, "ggml-go", "openvino", "2026.4.1", "openvino", "libs")
	require.NoError(t, os.MkdirAll(libs, 0o755))
	junk := filepath.Join(libs, "libopenvino_c.so.2641")
	require.NoError(t, os.WriteFile(junk, []byte("no library"), 0o644))
	if runtime.GOOS != "linux" {
		t.Skip("the search of linux names runs on linux")
	}
	_, tried, s, err := loadLibrary("", searchEnv{envMap(map[string]string{"XDG_CACHE_HOME": xdg}), "linux", "amd64", nil})
	if strings.HasPrefix(s.found, "/usr") {
		t.Skipf("an OpenVINO is installed on this machine (%s), found before the cache", s.found)
	}
	require.ErrorIs(t, err, dynlib.ErrOpen)
	require.Equal(t, junk+" (scripts/fetch-openvino cache)", s.found)
	require.Equal(t, junk, tried[len(tried)-1])
	require.Contains(t, s.places[len(s.places)-1], libs)

	// GGML_OPENVINO_LIB as a folder is the only place looked at.
	_, _, s, err = loadLibrary(t.TempDir(), searchEnv{envMap(map[string]string{"XDG_CACHE_HOME": xdg}), "linux", "amd64", nil})
	require.ErrorIs(t, err, dynlib.ErrNotFound)
	require.Len(t, s.places, 1)
}

// TestPythonQuery: the python3 on PATH says where a pip-installed openvino
// package is without importing it (its __init__ would leave a mark).
func TestPythonQuery(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("GGML_REF_REQUIRED") == "1" {
			t.Fatal("python3 is not on PATH")
		}
		t.Skip("python3 is not on PATH")
	}
	site := t.TempDir()
	mark := filepath.Join(site, "imported")
	pkg := filepath.Join(site, "openvino")
	require.NoError(t, os.MkdirAll(filepath.Join(pkg, "libs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "__init__.py"), []byte("open("+strconv.Quote(mark)+", 'w').close()\n"), 0o644))
	t.Setenv("PYTHONPATH", site)
	start := time.Now()
	dirs := askPython([]string{"no-such-python", "python3"})
	t.Logf("python3 query: %v", time.Since(start))
	require.Equal(t, []string{filepath.Join(pkg, "libs")}, dirs)
	require.NoFileExists(t, mark, "the query imported the package")

	t.Setenv("PYTHONPATH", t.TempDir())
	require.NotContains(t, askPython([]string{"python3"}), filepath.Join(pkg, "libs"))
	require.Equal(t, []string{filepath.Join("/a", "openvino", "libs"), filepath.Join("/b", "openvino", "libs")},
		parsePythonQuery("/a/openvino\n\n/b/openvino\n"))
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
