package openvino

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
)

// cacheRun is what one process of TestCompiledModelCacheTwoProcesses
// reports.
type cacheRun struct {
	Compiled, Imported int
	// First is the time of the first GraphCompute (build, compile or
	// import, infer).
	First  time.Duration
	Logits [][]float32
}

// COMPILED_MODEL_CACHE_DIR across processes: a first process runs the
// language model (a 20-token prompt, 2 decode steps: two graph shapes)
// and exports what it compiles; a second process, with
// COMPILED_MODEL_CACHE_ONLY too (a graph not in the folder is an error),
// imports them, compiles nothing and gives the same logits. Both are
// children of this test (this binary again, with OVCACHE_DIR set): a
// fresh process is what the folder is for. On the double, or on the real
// CPU plugin with GGML_OPENVINO_LIB.
func TestCompiledModelCacheTwoProcesses(t *testing.T) {
	if dir := os.Getenv("OVCACHE_DIR"); dir != "" {
		cacheChild(t, dir, os.Getenv("OVCACHE_ONLY") == "1")
		return
	}
	p := buildDouble(t)
	dir := t.TempDir()
	run := func(only bool) cacheRun {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCompiledModelCacheTwoProcesses$", "-test.v")
		cmd.Env = append(os.Environ(), "OVCACHE_DIR="+dir, "GGML_OPENVINO_LIB="+p)
		if only {
			cmd.Env = append(cmd.Env, "OVCACHE_ONLY=1")
		}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, l := range strings.Split(string(out), "\n") {
			if _, js, ok := strings.Cut(l, "OVCACHE "); ok {
				var r cacheRun
				require.NoError(t, json.Unmarshal([]byte(js), &r))
				return r
			}
		}
		t.Fatalf("no report from the child:\n%s", out)
		return cacheRun{}
	}
	first := run(false)
	blobs, err := os.ReadDir(dir)
	require.NoError(t, err)
	second := run(true)
	t.Logf("first process: %d compiled, %d imported, first graph %v; second process: %d compiled, %d imported, first graph %v; %d blobs",
		first.Compiled, first.Imported, first.First, second.Compiled, second.Imported, second.First, len(blobs))
	require.Equal(t, 2, first.Compiled, "the prompt's and the decode step's shapes")
	require.Zero(t, first.Imported)
	require.Len(t, blobs, 2)
	require.Zero(t, second.Compiled, "the second process compiles nothing")
	require.Equal(t, 2, second.Imported)
	require.Equal(t, first.Logits, second.Logits)
}

// cacheChild is one process of TestCompiledModelCacheTwoProcesses: it
// runs the model and prints its cacheRun after "OVCACHE ".
func cacheChild(t *testing.T, dir string, only bool) {
	dev := openDevice(t, buildDouble(t), Options{CompiledModelCacheDir: dir, CompiledModelCacheOnly: only})
	m := newLM(t, dev.BufferType(), dev.HostType(), 64)
	be := newBackend(dev)
	defer be.Close()
	var first time.Duration
	steps := 0
	logits, _ := runLM(t, m, prompt(20), 2, func(g *graph.Graph) error {
		t0 := time.Now()
		err := be.GraphCompute(g)
		if steps++; steps == 1 {
			first = time.Since(t0)
		}
		return err
	})
	c := dev.cache
	js, err := json.Marshal(cacheRun{Compiled: c.compiled, Imported: c.imported, First: first, Logits: logits})
	require.NoError(t, err)
	t.Log("OVCACHE " + string(js))
}
