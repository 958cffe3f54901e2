package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
	"github.com/ggml-go/ggml/quant"
)

// benchModelFile is a small generated model for the bench model tests.
func benchModelFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, genmodel.WriteFile(path, genmodel.Config{Arch: "llama", Type: quant.Q4_0, Embd: 64, Layers: 2, Heads: 4,
		KVHeads: 2, FF: 128, VocabSize: 100}))
	return path
}

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return v
}

// TestBenchModelLlamaProcess: bench model times libllama in a child
// process (another pid, this test binary re-executed), prints each side's
// tokens/s with ratios that are those rates' quotients, the in-process
// figure only when asked and labelled as such, and the memory bandwidth
// with generation's fraction of it.
func TestBenchModelLlamaProcess(t *testing.T) {
	llamaref.ForTest(t)
	t.Setenv("GGML_DEVICE", "CPU")
	path := benchModelFile(t)
	code, out, errOut := runCmd("bench", "model", "-m", path, "-pp", "8", "-tg", "4", "-reps", "2", "-threads", "1",
		"-inproc", "-bandwidth", "16")
	require.Equal(t, 0, code, errOut)
	m := regexp.MustCompile(`libllama: a process of its own \(pid (\d+)\), ggml CPU variant (\S+), best of 2 runs each`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	pid, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.NotEqual(t, os.Getpid(), pid, "libllama must run in a process of its own")
	row := regexp.MustCompile(`(?m)^(pp8|tg4) +ours +([\d.]+) tokens/s   libllama +([\d.]+) tokens/s   libllama-in-process +([\d.]+) tokens/s` +
		`   ours/libllama ([\d.]+)   ours/libllama-in-process ([\d.]+)$`)
	rows := row.FindAllStringSubmatch(out, -1)
	require.Len(t, rows, 2, out)
	rates := map[string]float64{}
	for _, r := range rows {
		ours, child, inproc := parseFloat(t, r[2]), parseFloat(t, r[3]), parseFloat(t, r[4])
		require.Positive(t, ours)
		require.Positive(t, child)
		require.Positive(t, inproc)
		// The ratios are of the printed rates (to their rounding).
		require.InDelta(t, ours/child, parseFloat(t, r[5]), 0.01+0.01*ours/child, r[0])
		require.InDelta(t, ours/inproc, parseFloat(t, r[6]), 0.01+0.01*ours/inproc, r[0])
		rates[r[1]] = ours
	}
	// The same in CPU time, after a heading.
	require.Contains(t, out, "\nin CPU time (each process's own):\n")
	cpuRow := regexp.MustCompile(`(?m)^(pp8|tg4) +ours +([\d.]+) tokens/CPU-s   libllama +([\d.]+) tokens/CPU-s   libllama-in-process +([\d.]+) tokens/CPU-s` +
		`   ours/libllama ([\d.]+)   ours/libllama-in-process ([\d.]+)$`)
	cpuRows := cpuRow.FindAllStringSubmatch(out, -1)
	require.Len(t, cpuRows, 2, out)
	cpuRates := map[string]float64{}
	for _, r := range cpuRows {
		ours, child := parseFloat(t, r[2]), parseFloat(t, r[3])
		cpuRates[r[1]] = ours
		require.Positive(t, child)
		require.InDelta(t, ours/child, parseFloat(t, r[5]), 0.01+0.01*ours/child, r[0])
	}
	bw := regexp.MustCompile(`memory: streaming read ([\d.]+) GB/s \(1 threads, 16 MiB, best of 5, thread CPU time\); a token reads ([\d.]+) MB of weights,\n` +
		` +generation reaches of that bandwidth, by the clock: ours ([\d.]+), libllama ([\d.]+), libllama-in-process ([\d.]+);\n` +
		` +in CPU time: ours ([\d.]+), libllama ([\d.]+), libllama-in-process ([\d.]+)\n`).FindStringSubmatch(out)
	require.NotNil(t, bw, out)
	gbs, mb := parseFloat(t, bw[1]), parseFloat(t, bw[2])
	require.Positive(t, gbs)
	// The weights of this file: per layer Q4_0 projections of 64x64 (q,
	// o), 64x32 (k, v) and 64x128 (three FFN), 18 bytes per 32 weights,
	// two F32 norms; the output (100x64 Q4_0) and its norm. The token
	// embedding (untied) is not counted.
	perLayer := (2*4096+2*2048+3*8192)/32*18 + 2*64*4
	require.InDelta(t, float64(2*perLayer+6400/32*18+64*4)/1e6, mb, 1e-5, "MB per token")
	frac := mb * 1e6 * rates["tg4"] / (gbs * 1e9)
	require.InDelta(t, frac, parseFloat(t, bw[3]), 0.005+0.02*frac)
	fracCPU := mb * 1e6 * cpuRates["tg4"] / (gbs * 1e9)
	require.InDelta(t, fracCPU, parseFloat(t, bw[6]), 0.005+0.02*fracCPU)
	require.Regexp(t, `libllama's process: resident size grew \d+ MiB`, out)

	// Without -inproc, no in-process column.
	code, out, errOut = runCmd("bench", "model", "-m", path, "-pp", "8", "-tg", "4", "-reps", "1", "-threads", "1", "-bandwidth", "0")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "in-process")
	require.NotContains(t, out, "streaming read")
	require.Regexp(t, `(?m)^tg4 +ours +[\d.]+ tokens/s   libllama +[\d.]+ tokens/s   ours/libllama [\d.]+$`, out)
}

// TestLlamaChildErrors: the child's failures come back as errors carrying
// libllama's or the request's reason, not as a hang or a bare exit status.
func TestLlamaChildErrors(t *testing.T) {
	llamaref.ForTest(t)
	_, err := startLlamaChild(llamaRequest{Model: filepath.Join(t.TempDir(), "none.gguf"), Threads: 1, PP: 4, TG: 2, Ctx: 6, VocabTokens: 100})
	require.ErrorIs(t, err, errNoChild)
	require.Contains(t, err.Error(), "llama_model_load_from_file")
	_, err = startLlamaChild(llamaRequest{Model: "x", Threads: 1, PP: 4, TG: 0, Ctx: 6, VocabTokens: 100})
	require.ErrorContains(t, err, "positive pp, tg")
	// A vocabulary that is not the file's: the two sides would decode
	// different tokens.
	_, err = startLlamaChild(llamaRequest{Model: benchModelFile(t), Threads: 1, PP: 4, TG: 2, Ctx: 6, VocabTokens: 99})
	require.ErrorContains(t, err, "vocabulary of 100 tokens, our runner 99")
}

// TestBenchModelOnDevice: with -b OPENVINO0 (the real CPU plugin where
// scripts/fetch-openvino cached it), our runner runs there too, its row
// beside our CPU device's and libllama's with both ratios; the cache
// counters say the warm-up compiled the two shapes (the prompt's, one
// token's) and the timed runs compiled nothing, with a hit per graph the
// device computed: one per prompt and one per generated token.
func TestBenchModelOnDevice(t *testing.T) {
	llamaref.ForTest(t)
	dev, err := backend.DeviceByName("OPENVINO0")
	if err == nil {
		err = backend.Availability(dev)
	}
	if err != nil {
		if os.Getenv(ggmlref.EnvRequired) == "1" {
			t.Fatalf("OPENVINO0: %v (%s=1)", err, ggmlref.EnvRequired)
		}
		t.Skipf("OPENVINO0 not available: %v", err)
	}
	t.Setenv("GGML_DEVICE", "CPU")
	path := benchModelFile(t)
	code, out, errOut := runCmd("bench", "model", "-m", path, "-pp", "8", "-tg", "4", "-reps", "2", "-threads", "1",
		"-bandwidth", "0", "-b", "OPENVINO0")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ours: our runner on the CPU device; OPENVINO0: our runner on OPENVINO0 (")
	row := regexp.MustCompile(`(?m)^(pp8|tg4) +ours +([\d.]+) tokens/s   OPENVINO0 +([\d.]+) tokens/s   libllama +([\d.]+) tokens/s` +
		`   ours/libllama ([\d.]+)   OPENVINO0/libllama ([\d.]+)$`)
	rows := row.FindAllStringSubmatch(out, -1)
	require.Len(t, rows, 2, out)
	for _, r := range rows {
		dev, ref := parseFloat(t, r[3]), parseFloat(t, r[4])
		require.Positive(t, dev)
		require.InDelta(t, dev/ref, parseFloat(t, r[6]), 0.01+0.01*dev/ref, r[0])
	}
	m := regexp.MustCompile(`OPENVINO0: warm-up compiled (\d+) models in ([\d.]+) s \(first graph ([\d.]+) s; each: ([\d., ]+) s\)\n` +
		`OPENVINO0: timed runs: (\d+) cache hits, (\d+) misses \(([\d.]+) s compiling\); per generated token ([\d.]+) hits, ([\d.]+) misses;\n` +
		` +host time per GraphCompute on a hit \(target < 20 us\): all ([\d.]+) us \(([\d.]+) us of it copying outputs out of scratch memory; \d+ of \d+ hits vouched for by the scheduler\);\n` +
		` +generation's first token \(after the prompt's graph\) ([\d.]+) us \(([\d.]+) us of it copying outputs out of scratch memory; \d+ of \d+ hits vouched for by the scheduler\); ` +
		`the other tokens ([\d.]+) us \(([\d.]+) us of it copying outputs out of scratch memory; (\d+) of (\d+) hits vouched for by the scheduler\)\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	// The runner's generated tokens compute the graph the scheduler
	// placed: every one of them comes with its promise.
	require.Equal(t, m[16], m[17], "the other tokens' hits vouched for")
	require.Equal(t, "2", m[1], "the prompt's shape and one token's")
	require.Len(t, strings.Split(m[4], ", "), 2)
	require.GreaterOrEqual(t, parseFloat(t, m[2]), parseFloat(t, m[3]))
	require.Equal(t, strconv.Itoa(2*(1+4)), m[5], "a hit per graph: the prompt and 4 tokens, 2 runs")
	require.Equal(t, "0", m[6], "no compile after the warm-up")
	require.Equal(t, "1.00", m[8])
	require.Equal(t, "0.00", m[9])
	for _, i := range []int{10, 12, 14} {
		require.Positive(t, parseFloat(t, m[i]))
		require.LessOrEqual(t, parseFloat(t, m[i+1]), parseFloat(t, m[i]), "the copies are part of the host time")
	}

	code, _, errOut = runCmd("bench", "model", "-m", path, "-b", "NOSUCH0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "-b: ")
}

// TestBenchModelRPCRefLlama: -llama rpc-ref times the other libllama build
// (scripts/fetch-rpc-ref's, backends linked in) in the child; a name that
// is neither is refused before anything loads.
func TestBenchModelRPCRefLlama(t *testing.T) {
	code, _, errOut := runCmd("bench", "model", "-llama", "cuda")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `-llama "cuda": want one of npm, rpc-ref`)
	rpcref.Llama(t)
	t.Setenv("GGML_DEVICE", "CPU")
	code, out, errOut := runCmd("bench", "model", "-m", benchModelFile(t), "-pp", "8", "-tg", "4", "-reps", "1", "-threads", "1",
		"-bandwidth", "0", "-llama", "rpc-ref")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `libllama: a process of its own \(pid \d+\), ggml CPU variant linked in \(rpc-ref\), best of 1 runs each`, out)
	require.Regexp(t, `(?m)^tg4 +ours +[\d.]+ tokens/s   libllama +[\d.]+ tokens/s   ours/libllama [\d.]+$`, out)
}
