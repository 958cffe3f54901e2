//go:build unix

package openvino

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/optest"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// The IR corpus: what the device dumps (GGML_OPENVINO_DUMP_IR) for the
// conformance suite (the quick set; GGML_OPENVINO_CORPUS=full for every
// case) and for the language-model tests (the dynamic, static and
// stateful paths), plus malformed IRs made from them (corpusMutations),
// replayed through the double and through each fetched real runtime in
// child processes (one library per process: the double and the real
// library export the same symbols). The double must accept and refuse
// what the real reader and CPU plugin accept and refuse, at the same
// stage, and compute the same outputs within the suite's tolerances.
func TestIRCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the corpus takes about a minute")
	}
	reals := fetchCacheDirs(os.Getenv)
	if len(reals) == 0 {
		if os.Getenv("GGML_REF_REQUIRED") == "1" {
			t.Fatal("no real OpenVINO runtime fetched (scripts/fetch-openvino) and GGML_REF_REQUIRED=1")
		}
		t.Skip("no real OpenVINO runtime fetched (scripts/fetch-openvino): nothing to measure the double against")
	}
	double := buildTheDouble(t)
	dir := t.TempDir()
	t0 := time.Now()
	valid := dumpCorpus(t, double, dir, os.Getenv("GGML_OPENVINO_CORPUS") == "full")
	bad := mutateCorpus(t, dir, valid)
	t.Logf("corpus: %d dumped models, %d malformed, made in %v", len(valid), len(bad), time.Since(t0).Round(time.Millisecond))
	require.GreaterOrEqual(t, len(bad), 50)
	all := append(append([]string(nil), valid...), bad...)

	doubleEnv := sanitizedDouble(t, &double)
	for _, lib := range reals {
		release := filepath.Base(filepath.Dir(filepath.Dir(lib)))
		// the double presents the release it is measured against
		t1 := time.Now()
		want := replayCorpus(t, double, all, append(doubleEnv, "OVDOUBLE_VERSION="+release)...)
		t.Logf("double presenting %s: replayed in %v", release, time.Since(t1).Round(time.Millisecond))
		// every dump replays to the outputs the device recorded
		for _, m := range valid {
			r := want[m]
			require.Equal(t, "ok", r.Stage, "%s: %s", m, r.Msg)
			for i, o := range r.Outputs {
				rec, err := os.ReadFile(fmt.Sprintf("%s.output%d.bin", m, i))
				require.NoError(t, err)
				require.Equal(t, rec, o, "%s output %d: the replay on the double against the dump's record", m, i)
			}
		}
		t1 = time.Now()
		got := replayCorpus(t, lib, all)
		t.Logf("%s: replayed in %v", release, time.Since(t1).Round(time.Millisecond))
		var accepted, refused int
		seen := map[*knownGap]bool{}
		stages := map[string]int{}
		for _, m := range all {
			r, d := got[m], want[m]
			if r.Stage == "ok" {
				accepted++
			} else {
				refused++
				stages[r.Stage]++
			}
			msg := corpusDivergence(m, d, r)
			if msg == "" {
				continue
			}
			if k := knownDivergence(release, m, d, r); k != nil {
				seen[k] = true
				t.Logf("%s: %s: known divergence (%s): %s", release, filepath.Base(m), k.why, msg)
				continue
			}
			t.Errorf("%s: %s: %s", release, filepath.Base(m), msg)
		}
		for i := range corpusKnown {
			if k := &corpusKnown[i]; strings.HasPrefix(release, k.release) && !seen[k] {
				// the bases come from the suite, whose cases change: a gap
				// may not show in every corpus
				t.Logf("%s: the known divergence %s did not show in this corpus", release, k.mutation)
			}
		}
		t.Logf("%s: %d accepted, %d refused (%d malformed); refused at %v", release, accepted, refused, len(bad), stages)
	}
}

// knownGap is a divergence the double keeps, listed in testdata/README.md:
// a mutation of the malformed corpus on the releases whose name starts
// with release; stageOnly ones must still be refused by both.
type knownGap struct {
	mutation, release string
	stageOnly         bool
	why               string
}

// corpusKnown is empty: the three gaps it held (param-type-missing on
// 2026, const-shape-text on 2025.0, net-version-10) are modelled by the
// double since, each checked on hand-written IRs by corpus_gaps_test.go.
var corpusKnown = []knownGap{}

// knownDivergence is the entry of corpusKnown that the divergence of
// model m on release is, or nil.
func knownDivergence(release, m string, d, r replayed) *knownGap {
	parts := strings.SplitN(filepath.Base(m), "_", 3)
	if len(parts) < 3 || parts[0] != "bad" {
		return nil
	}
	for i := range corpusKnown {
		k := &corpusKnown[i]
		if k.mutation == parts[2] && strings.HasPrefix(release, k.release) && (!k.stageOnly || d.Stage != "ok" && r.Stage != "ok") {
			return k
		}
	}
	return nil
}

// corpusDivergence says how the double's replay d of model m differs from
// the real runtime's r, or "".
func corpusDivergence(m string, d, r replayed) string {
	if d.Stage != r.Stage {
		return fmt.Sprintf("the double: %s (%s), the real runtime: %s (%s)", d.Stage, firstLine(d.Msg), r.Stage, firstLine(r.Msg))
	}
	if r.Stage != "ok" {
		return ""
	}
	man, err := readManifest(m)
	if err != nil {
		return err.Error()
	}
	tol := corpusTolerance(man.Ops)
	for i := range r.Outputs {
		if i >= len(d.Outputs) || i >= len(man.Outputs) {
			return fmt.Sprintf("%d outputs from the double, %d from the real runtime", len(d.Outputs), len(r.Outputs))
		}
		e, err := outputNMSE(man.Outputs[i].Type, d.Outputs[i], r.Outputs[i])
		if err != nil {
			return fmt.Sprintf("output %d: %v", i, err)
		}
		if e > tol {
			dx, _ := asFloats(man.Outputs[i].Type, d.Outputs[i])
			rx, _ := asFloats(man.Outputs[i].Type, r.Outputs[i])
			worst := 0
			for j := range dx {
				if math.Abs(dx[j]-rx[j]) > math.Abs(dx[worst]-rx[worst]) {
					worst = j
				}
			}
			return fmt.Sprintf("output %d (%s): NMSE %.3g > %.3g; worst element %d of %d: the double %g, the real runtime %g",
				i, strings.Join(man.Ops, ","), e, tol, worst, len(dx), dx[worst], rx[worst])
		}
	}
	return ""
}

// firstLine is an error message on one line (OpenVINO's span several:
// where it was raised, then what), shortened.
func firstLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// corpusTolerance is the largest tolerance test-backend-ops gives an op
// of the graph (MUL_MAT and attention 5e-4, SOFT_MAX 1e-6, others 1e-7).
func corpusTolerance(ops []string) float64 {
	tol := 1e-7
	for _, o := range ops {
		switch o {
		case "MUL_MAT", "MUL_MAT_ID", "FLASH_ATTN_EXT", "OUT_PROD":
			tol = max(tol, 5e-4)
		case "SOFT_MAX":
			tol = max(tol, 1e-6)
		}
	}
	return tol
}

// dumpCorpus runs the suite, the language-model tests and generated model
// files on the double
// with DUMP_IR into dir and returns the models' path prefixes.
func dumpCorpus(t *testing.T, double, dir string, full bool) []string {
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	defer os.Chdir(wd)
	dev := openDevice(t, double, Options{DumpIR: true})
	ref, closeRef := optest.CPURef()
	defer closeRef()
	rep, err := optest.RunDevice(dev, optest.Options{Ref: ref, Seed: 1, Full: full})
	require.NoError(t, err)
	t.Logf("suite on the double: %d passed, %d failed", rep.Tally.Count(optest.Passed), rep.Tally.Count(optest.Failed))
	for _, o := range []Options{{DumpIR: true}, {DumpIR: true, DynamicShapes: true}, {DumpIR: true, ForceStatic: true, PrefillChunkSize: 16}, {DumpIR: true, StatefulExecution: true}} {
		dev := openDevice(t, double, o)
		m := newLM(t, dev.BufferType(), dev.HostType(), 64)
		be := newBackend(dev)
		runLM(t, m, prompt(20), 2, be.GraphCompute)
		be.Close()
	}
	// the model tests' models (model.Open on generated GGUF files, as
	// model/openvino_real_test.go runs them): a prompt of 40 tokens in
	// batches of 16, 16 and 8, then 4 greedy tokens
	for _, c := range []struct {
		arch string
		ty   quant.Type
		o    Options
	}{{"llama", quant.F32, Options{}}, {"qwen2", quant.Q8_0, Options{DynamicShapes: true}}, {"llama", quant.Q4_K, Options{}},
		{"llama", quant.F16, Options{ForceStatic: true, PrefillChunkSize: 16}}} {
		cfg := genmodel.Default()
		cfg.Arch, cfg.Type = c.arch, c.ty
		path := filepath.Join(t.TempDir(), "model.gguf")
		require.NoError(t, genmodel.WriteFile(path, cfg))
		c.o.DumpIR = true
		dev := openDevice(t, double, c.o)
		m, err := model.Open(path, model.Options{Device: dev, Threads: 1})
		require.NoError(t, err)
		s, err := m.NewSession(model.SessionOptions{Ctx: 256, Batch: 64})
		require.NoError(t, err)
		tokens := make([]int32, 40)
		for i := range tokens {
			tokens[i] = int32((i*37 + 11) % cfg.VocabSize)
		}
		for _, n := range []int{0, 16, 32} {
			_, err := s.Decode(context.Background(), tokens[n:min(n+16, len(tokens))], nil)
			require.NoError(t, err)
		}
		_, err = s.Generate(context.Background(), tokens[:1], 4, model.Sampler{}, nil)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		require.NoError(t, m.Close())
	}
	return dumpPrefixes(t, filepath.Join(dir, dumpDir))
}

// sanitizedDouble, with GGML_OPENVINO_CORPUS_ASAN=1 (by hand: the replays
// take several times longer), replaces *double by a build with
// AddressSanitizer and UndefinedBehaviorSanitizer and returns the
// environment its children need (the sanitizer runtimes preloaded into
// the Go binary); a report ends the child, which the corpus records as a
// crash, a divergence.
func sanitizedDouble(t *testing.T, double *string) []string {
	if os.Getenv("GGML_OPENVINO_CORPUS_ASAN") != "1" {
		return nil
	}
	var pre []string
	for _, rt := range []string{"libasan.so", "libubsan.so"} {
		b, err := exec.Command(ccName(), "-print-file-name="+rt).Output()
		require.NoError(t, err)
		pre = append(pre, strings.TrimSpace(string(b)))
	}
	cmd := exec.Command("sh", filepath.Join("testdata", "build.sh"), t.TempDir())
	cmd.Env = append(os.Environ(), "CFLAGS=-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	*double = lines[len(lines)-1]
	t.Logf("the double with AddressSanitizer: %s", *double)
	return []string{"LD_PRELOAD=" + strings.Join(pre, ":"), "ASAN_OPTIONS=detect_leaks=0:handle_segv=0:allow_user_segv_handler=1"}
}

// buildTheDouble is the double even when GGML_OPENVINO_LIB names a real
// library (the corpus needs both).
func buildTheDouble(t *testing.T) string {
	if realLibrary() == "" {
		return buildDouble(t)
	}
	t.Setenv("GGML_OPENVINO_LIB", "")
	return buildDouble(t)
}

// replayCorpus replays every model through lib in child processes (this
// test binary, corpusChild), one result line per model; a child that
// dies is recorded as a crash in the model it was replaying, and the rest
// go to a new child.
func replayCorpus(t *testing.T, lib string, models []string, env ...string) map[string]replayed {
	out := map[string]replayed{}
	todo := models
	for len(todo) > 0 {
		list := filepath.Join(t.TempDir(), "list")
		res := list + ".out"
		require.NoError(t, os.WriteFile(list, []byte(strings.Join(todo, "\n")), 0o644))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "OVCORPUS_LIST="+list, "OVCORPUS_OUT="+res, "GGML_OPENVINO_LIB="+lib)
		cmd.Env = append(cmd.Env, env...)
		stderr, runErr := cmd.CombinedOutput()
		f, err := os.Open(res)
		require.NoError(t, err, "%s", stderr)
		n := 0
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<30)
		for sc.Scan() {
			var r replayed
			require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
			out[r.Model] = r
			n++
		}
		f.Close()
		require.NoError(t, sc.Err())
		todo = todo[n:]
		if runErr == nil {
			require.Empty(t, todo, "the child stopped early")
			break
		}
		require.NotEmpty(t, todo, "the child failed after the last model: %v\n%s", runErr, stderr)
		tail := string(stderr)
		if len(tail) > 400 {
			tail = tail[len(tail)-400:]
		}
		out[todo[0]] = replayed{Model: todo[0], Stage: "crash", Msg: runErr.Error() + ": " + tail}
		todo = todo[1:]
	}
	return out
}

// A corpus child (replayCorpus) does its work before any test runs.
func init() {
	if os.Getenv("OVCORPUS_LIST") != "" {
		os.Exit(corpusChild())
	}
}

// corpusChild replays the models listed in OVCORPUS_LIST through
// GGML_OPENVINO_LIB, appending one JSON line per model to OVCORPUS_OUT
// as each is done (so a crash loses nothing replayed before it).
func corpusChild() int {
	list, err := os.ReadFile(os.Getenv("OVCORPUS_LIST"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out, err := os.OpenFile(os.Getenv("OVCORPUS_OUT"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer out.Close()
	rt, reason := open(Options{Lib: os.Getenv("GGML_OPENVINO_LIB"), Device: "CPU", PrefillChunkSize: 256})
	if reason != nil {
		fmt.Fprintln(os.Stderr, reason)
		return 2
	}
	// The CPU plugin computes in bf16 by default on CPUs with AVX512-BF16
	// (this machine's): the corpus compares f32 computations, as the
	// double's.
	if err := rt.lib.setProperty(rt.core, "CPU", "INFERENCE_PRECISION_HINT", "f32"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for _, m := range strings.Split(string(list), "\n") {
		r := replayDump(rt.lib, rt.core, "CPU", m)
		b, _ := json.Marshal(r)
		if _, err := out.Write(append(b, '\n')); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	return 0
}
