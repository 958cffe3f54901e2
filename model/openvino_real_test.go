package model_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/openvino"
	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/realmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// ovChildEnv tells a child test process which test and variant it runs
// (see onRealOpenVINO).
const ovChildEnv = "GGML_GO_OPENVINO_CHILD"

// onRealOpenVINO runs body with OPENVINO0 on each release of the real
// OpenVINO runtime that scripts/fetch-openvino fetched (only the newest
// with newest set), and each variant (extra environment, "" for none),
// each in a child process of the test binary: two releases' libraries
// (TBB among them) cannot share a process. The child is the same test,
// with GGML_OPENVINO_LIB naming the release; a child that skips fails the
// parent. Without a fetched release the test skips, or fails under
// GGML_REF_REQUIRED=1; in short mode (the race detector's run) it skips,
// as realmodel.Run does: whole models under the race detector would take
// many minutes and check nothing the full run does not.
func onRealOpenVINO(t *testing.T, newest bool, variants []string, body func(t *testing.T, dev backend.Device, variant string)) {
	if v, ok := strings.CutPrefix(os.Getenv(ovChildEnv), t.Name()+"|"); ok {
		o, err := openvino.OptionsFromEnv()
		require.NoError(t, err)
		dev := openvino.NewRegistry(o).Devices()[0]
		require.NoError(t, backend.Availability(dev))
		body(t, dev, v)
		return
	}
	if testing.Short() {
		t.Skip("models on the real OpenVINO runtime are not run in short mode (the full run checks them)")
	}
	libs := openvino.FetchedRuntimes()
	if newest && len(libs) > 1 {
		libs = libs[:1]
	}
	if len(libs) == 0 {
		if os.Getenv(ggmlref.EnvRequired) == "1" {
			t.Fatalf("no real OpenVINO runtime fetched (scripts/fetch-openvino) and %s=1", ggmlref.EnvRequired)
		}
		t.Skip("no real OpenVINO runtime fetched (scripts/fetch-openvino)")
	}
	for _, lib := range libs {
		release := filepath.Base(filepath.Dir(filepath.Dir(lib)))
		for _, v := range variants {
			name := release
			if v != "" {
				name += "/" + v
			}
			t.Run(name, func(t *testing.T) {
				args := []string{"-test.run=^" + t.Name()[:strings.Index(t.Name(), "/")] + "$", "-test.v", "-test.count=1"}
				cmd := exec.Command(os.Args[0], args...)
				cmd.Env = append(os.Environ(), ovChildEnv+"="+strings.Split(t.Name(), "/")[0]+"|"+v, "GGML_OPENVINO_LIB="+lib)
				if v != "" {
					cmd.Env = append(cmd.Env, v)
				}
				out, err := cmd.CombinedOutput()
				t.Logf("child on %s:\n%s", lib, out)
				require.NoError(t, err, "child on %s", lib)
				require.Contains(t, string(out), "--- PASS: "+strings.Split(t.Name(), "/")[0]+" ", "the child did not pass (skipped?)")
			})
		}
	}
}

// TestOpenVINORealModels runs the generated llama and qwen2 models (F32,
// F16, Q8_0, Q4_0, Q4_K weights) on OPENVINO0 over the real runtime,
// against libllama: every position's logits of a 40-token prompt in three
// calls, beside our CPU device's against the same libllama; greedy tokens
// for F32. Verified on the real CPU plugin of each fetched release.
func TestOpenVINORealModels(t *testing.T) {
	onRealOpenVINO(t, false, []string{""}, func(t *testing.T, dev backend.Device, _ string) {
		lib := llamaref.ForTest(t)
		for _, c := range llamaCases {
			if c.Type == quant.Q6_K {
				continue
			}
			name := fmt.Sprintf("%s/%s", c.Arch, c.Type)
			t.Run(name, func(t *testing.T) {
				path := genFile(t, c)
				ref := llamaGenRef(t, lib, path, c)
				tokens, calls, want, wantGen := ref.tokens, ref.calls, ref.logits, ref.gen
				// libllama multiplies Q4_0 and Q8_0 weights by activations
				// it quantizes to Q8_0, which moves its logits ~2e-4 from
				// exact arithmetic on the same weights (see checkOnDevice):
				// the device, which keeps f32 activations, is held to
				// libllama on a copy with those weights dequantized to F32.
				exact := want
				if c.Type == quant.Q8_0 || c.Type == quant.Q4_0 {
					_, dc := llamaContext(t, lib, dequantized(t, path), 256, 1)
					var err error
					exact, err = dc.Evaluate(tokens, 0, calls)
					require.NoError(t, err)
				}

				// worst is the largest NMSE against libllama on the file and
				// on the F32-dequantized copy, and the greedy tokens.
				worst := func(dev backend.Device) (e [2]float64, gen []int32) {
					m, err := model.Open(path, model.Options{Device: dev, Threads: 2})
					require.NoError(t, err)
					defer m.Close()
					s, err := m.NewSession(model.SessionOptions{Ctx: 256, Batch: 64})
					require.NoError(t, err)
					defer s.Close()
					got := evaluate(t, s, tokens, calls)
					for i := range want {
						e[0] = max(e[0], nmse(got[i], want[i]))
						e[1] = max(e[1], nmse(got[i], exact[i]))
					}
					if dev == nil {
						return e, nil
					}
					_, nodes := s.Placement()
					require.NotZero(t, nodes[dev.Name()], "no node on %s", dev.Name())
					s.Reset()
					return e, greedy(t, s, tokens, 32)
				}
				ov, gen := worst(dev)
				cpu, _ := worst(nil)
				same := 0
				for same < len(wantGen) && wantGen[same] == gen[same] {
					same++
				}
				t.Logf("%s: worst NMSE against libllama over %d positions: OPENVINO0 %.3g, CPU %.3g; against libllama on F32-dequantized weights: OPENVINO0 %.3g, CPU %.3g; greedy identical for %d of %d tokens",
					name, len(want), ov[0], cpu[0], ov[1], cpu[1], same, len(wantGen))
				switch c.Type {
				case quant.F32, quant.F16, quant.Q8_0:
					// The device keeps these weights' values.
					require.LessOrEqual(t, ov[1], 1e-4)
				default:
					// Requantized or not, a wrong translation gives NMSE
					// near 1; the figure is what the README reports.
					require.LessOrEqual(t, ov[0], 1e-2)
				}
				if c.Type == quant.F32 {
					require.Equal(t, wantGen, gen, "greedy tokens")
				}
			})
		}
	})
}

// TestOpenVINORealFiles runs the real model files (SmolLM2 Q4_1, Gemma 3
// Q4_K_M) on OPENVINO0 over the real runtime: every position's logits of
// realPrompts against libllama, printed beside our CPU device's. The
// newest release only: about 3 minutes on CI's two cores per release
// (the generated models cover both).
func TestOpenVINORealFiles(t *testing.T) {
	onRealOpenVINO(t, true, []string{""}, func(t *testing.T, dev backend.Device, _ string) {
		for _, c := range []struct {
			m    modelcache.Model
			top1 float64
		}{{modelcache.SmolLM2, 0.9}, {modelcache.Gemma3, 0.8}} {
			t.Run(c.m.Name, func(t *testing.T) {
				path := realmodel.Run(t, c.m)
				lib := llamaref.ForTest(t)
				ref, rc := llamaContext(t, lib, path, 512, 1)
				type run struct {
					m *model.Model
					s *model.Session
				}
				var runs []run
				for _, d := range []backend.Device{dev, nil} {
					m, err := model.Open(path, model.Options{Device: d, Threads: 2})
					require.NoError(t, err)
					defer m.Close()
					s, err := m.NewSession(model.SessionOptions{Ctx: 512, Batch: 64})
					require.NoError(t, err)
					defer s.Close()
					runs = append(runs, run{m, s})
				}
				for i, text := range realPrompts {
					tokens, err := ref.Tokenize(text, true, true)
					require.NoError(t, err)
					var calls []int
					for n := len(tokens); n > 0; n -= min(n, 64) {
						calls = append(calls, min(n, 64))
					}
					rc.ClearMemory()
					want, err := rc.Evaluate(tokens, 0, calls)
					require.NoError(t, err)
					var line []string
					var ovWorst, ovMedian, ovTop1 float64
					for k, r := range runs {
						r.s.Reset()
						got := evaluate(t, r.s, tokens, calls)
						errs := make([]float64, len(want))
						same := 0
						for p := range want {
							errs[p] = nmse(got[p], want[p])
							if argmax(got[p]) == argmax(want[p]) {
								same++
							}
						}
						slices.Sort(errs)
						worst, median := errs[len(errs)-1], errs[len(errs)/2]
						who := []string{"OPENVINO0", "CPU"}[k]
						line = append(line, fmt.Sprintf("%s worst %.3g median %.3g top-1 %d/%d", who, worst, median, same, len(want)))
						if k == 0 {
							ovWorst, ovMedian, ovTop1 = worst, median, float64(same)/float64(len(want))
							_, nodes := r.s.Placement()
							require.NotZero(t, nodes[dev.Name()], "no node on %s", dev.Name())
						}
					}
					t.Logf("%s prompt %d (%d tokens): NMSE against libllama: %s", c.m.Name, i, len(tokens), strings.Join(line, "; "))
					// checkReal's bounds (twice the spread of two libllama
					// builds), the worst position's doubled again: the
					// device requantizes token_embd and output to per-row
					// Q8_0 (upstream's rule), one more rounding the later
					// positions amplify as the builds' differences.
					require.LessOrEqual(t, ovWorst, 0.2, "prompt %d: worst NMSE", i)
					require.LessOrEqual(t, ovMedian, 1e-2, "prompt %d: median NMSE", i)
					require.GreaterOrEqual(t, ovTop1, c.top1, "prompt %d: top-1", i)
				}
			})
		}
	})
}

// procStatus reads fields of /proc/self/status in bytes.
func procStatus(t *testing.T, names ...string) map[string]int64 {
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for _, n := range names {
			if rest, ok := strings.CutPrefix(sc.Text(), n+":"); ok {
				kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				require.NoError(t, err)
				out[n] = kb << 10
			}
		}
	}
	return out
}

// The RSS test's runs: a model per token count (the default), without and
// with the weights' release, and with it over SPILL_DIR; one model for
// all, without and with the release (over SPILL_DIR, which such a model
// needs for it). The test sets SPILL_DIR itself.
const (
	ovPerShapeVariant     = "GGML_OPENVINO_DYNAMIC_SHAPES=0"
	ovReleaseVariant      = "GGML_OPENVINO_RELEASE_WEIGHTS=1"
	ovSpillReleaseVariant = "GGML_GO_OPENVINO_RSS_SPILL_RELEASE=1"
	ovDynamicVariant      = "GGML_OPENVINO_DYNAMIC_SHAPES=1"
	ovDynReleaseVariant   = "GGML_GO_OPENVINO_RSS_DYNAMIC_RELEASE=1"
	// A model per token count exported into COMPILED_MODEL_CACHE_DIR,
	// then a process importing them (CACHE_ONLY, with the release).
	ovExportVariant = "GGML_GO_OPENVINO_RSS_EXPORT=1"
	ovImportVariant = "GGML_GO_OPENVINO_RSS_IMPORT=1"
)

// ovRSSModelEnv names the generated model the RSS children run, and
// ovRSSCacheEnv their compiled-model cache folder.
const (
	ovRSSModelEnv = "GGML_GO_OPENVINO_RSS_MODEL"
	ovRSSCacheEnv = "GGML_GO_OPENVINO_RSS_CACHE"
)

// TestOpenVINORealRSS is the peak resident size (VmHWM) of a process that
// loads a 213 MB Q8_0 model onto OPENVINO0 over the real runtime, runs a
// 16-token prompt and 8 generated tokens, against the model file plus the
// KV cache: with a compiled model per token count (the default: 2),
// without and with GGML_OPENVINO_RELEASE_WEIGHTS, and with it over
// SPILL_DIR; with one model for all (GGML_OPENVINO_DYNAMIC_SHAPES,
// dynamic.go: 1), without and with the release over SPILL_DIR (which a
// model with dynamic dimensions needs for it); and the models per token
// count exported into COMPILED_MODEL_CACHE_DIR, then imported by a
// process of their own (CACHE_ONLY, with the release). With the release a
// second session, run wholly after it, must give the same tokens. Every
// child logs where its RSS went, phase by phase (rssProbe): libraries,
// the GGUF file's pages, SPILL_DIR pages, imported blobs, our anonymous
// weight memory, the Go runtime, and the rest (the plugin's heap).
//
// The target is 1.2x; it is not met on the real CPU plugin (see
// the devices/openvino README, which has the breakdown): the plugin
// repacks every MatMul weight into memory of its own (about the model's
// size) per compiled model, and the libraries are 50-60 MB resident, which
// together are already 1.1x-1.2x of this model. Measured (inference
// precision f32, 2025.0.0 and 2026.4.1): per shape 3.68x to 3.77x (the
// release changes the peak not; 3.83x to 3.94x before the tied output
// weight's file pages were dropped after its conversion); with the release
// over SPILL_DIR 2.88x to 2.94x; one model 3.06x to 3.07x, 2.15x to 2.20x
// with the release over SPILL_DIR (3.05x to 3.26x before its pages were
// kept unmapped); the import 3.52x (2026.4.1) and 5.69x (2025.0.0: a copy
// of each blob), 8.0x and 6.7x before the blob was mapped instead of read
// and copied.
// Earlier: 4.8x to 5.2x before a host weight's conversion was shared by
// the compiled models and requantization stopped making an f32 copy of
// the whole output weight; 5.7x before the loader evicted the file's
// pages of weights copied to the device, 11.1x before 2-D weight matrices
// let the plugin keep weights compressed. The bounds are the measured
// peaks and about 7%; the compile counts catch a lost model.
func TestOpenVINORealRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	c := genmodel.Config{Arch: "llama", Type: quant.Q8_0, Embd: 1024, Layers: 12, Heads: 16, KVHeads: 4, FF: 2816, VocabSize: 32000, Ctx: 512}
	path := os.Getenv(ovRSSModelEnv)
	// The parent writes the model once for its children (not when
	// onRealOpenVINO will skip).
	if path == "" && !strings.Contains(os.Getenv(ovChildEnv), "|") && !testing.Short() && len(openvino.FetchedRuntimes()) > 0 {
		path = filepath.Join(t.TempDir(), "rss-q8_0.gguf")
		require.NoError(t, genmodel.WriteFile(path, c))
		t.Setenv(ovRSSModelEnv, path)
		t.Setenv(ovRSSCacheEnv, t.TempDir())
	}
	variants := []string{ovPerShapeVariant, ovReleaseVariant, ovSpillReleaseVariant, ovDynamicVariant, ovDynReleaseVariant, ovExportVariant, ovImportVariant}
	onRealOpenVINO(t, false, variants, func(t *testing.T, dev backend.Device, variant string) {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.GreaterOrEqual(t, fi.Size(), int64(200<<20))
		const ctx = 256
		kv := int64(2 * c.Layers * ctx * (c.Embd / c.Heads * c.KVHeads) * 4) // K and V, F32
		release := variant == ovReleaseVariant || variant == ovSpillReleaseVariant || variant == ovDynReleaseVariant || variant == ovImportVariant
		if variant != ovPerShapeVariant && variant != ovReleaseVariant && variant != ovDynamicVariant {
			o, err := openvino.OptionsFromEnv()
			require.NoError(t, err)
			switch variant {
			case ovSpillReleaseVariant, ovDynReleaseVariant:
				// The one model for all token counts may have its MatMul
				// weights repacked again at any inference: the CPU drops
				// only pages it can read again, those of SPILL_DIR buffers.
				o.SpillDir, o.DynamicShapes, o.ReleaseWeights = t.TempDir(), variant == ovDynReleaseVariant, openvino.On
			case ovExportVariant:
				o.CompiledModelCacheDir = os.Getenv(ovRSSCacheEnv)
			case ovImportVariant:
				// Every model imported (a miss would be an error): the
				// weight buffers are released at the first import.
				o.CompiledModelCacheDir, o.CompiledModelCacheOnly, o.ReleaseWeights = os.Getenv(ovRSSCacheEnv), true, openvino.On
			}
			dev = openvino.NewRegistry(o).Devices()[0]
			require.NoError(t, backend.Availability(dev))
		}
		probe := newRSSProbe(path,
			func() (int, int) {
				cs := dev.(interface{ CacheStats() openvino.CacheStats }).CacheStats()
				return cs.Misses, cs.Hits + cs.Misses
			},
			func() uint64 { return dev.(interface{ WeightMemory() openvino.WeightMemory }).WeightMemory().Resident })
		probe.Mark("model.Open")
		m, err := model.Open(path, model.Options{Device: dev, Threads: 2})
		require.NoError(t, err)
		defer m.Close()
		probe.Mark("NewSession")
		s, err := m.NewSession(model.SessionOptions{Ctx: ctx, Batch: 16})
		require.NoError(t, err)
		defer s.Close()
		probe.Mark("Generate")
		toks, err := s.Generate(t.Context(), prompt(16, c.VocabSize, 0), 8, model.Sampler{}, nil)
		require.NoError(t, err)
		_, nodes := s.Placement()
		require.NotZero(t, nodes[dev.Name()])
		wm := dev.(interface{ WeightMemory() openvino.WeightMemory }).WeightMemory()
		if release {
			// Released after the first decode step hit the cache: the
			// same prompt again, every step after the release, must give
			// the same tokens (the CPU plugin reads no dropped page).
			require.Positive(t, wm.Released)
			s2, err := m.NewSession(model.SessionOptions{Ctx: ctx, Batch: 16})
			require.NoError(t, err)
			defer s2.Close()
			probe.Mark("Generate after the release")
			again, err := s2.Generate(t.Context(), prompt(16, c.VocabSize, 0), 8, model.Sampler{}, nil)
			require.NoError(t, err)
			require.Equal(t, toks, again, "tokens after the release")
		} else {
			require.Zero(t, wm.Released)
		}
		t.Logf("%s: %s", variant, probe.Stop())
		st := procStatus(t, "VmHWM", "VmRSS", "RssAnon", "RssFile")
		ratio := float64(st["VmHWM"]) / float64(fi.Size()+kv)
		t.Logf("%s: tokens %v; file %.1f MB + KV %.1f MB; peak RSS %.1f MB (%.2fx; issue's target 1.2x), now %.1f MB (anon %.1f, file %.1f); %v",
			variant, toks, float64(fi.Size())/1e6, float64(kv)/1e6, float64(st["VmHWM"])/1e6, ratio,
			float64(st["VmRSS"])/1e6, float64(st["RssAnon"])/1e6, float64(st["RssFile"])/1e6, dev.(interface{ WeightReport() string }).WeightReport())
		// The peaks measured on both releases (2026-12-03, load 0.5-4.5)
		// and about 7% over them: a regression fails (the README has the
		// table).
		models, bound := 2, map[string]float64{
			ovPerShapeVariant: 4.0, ovReleaseVariant: 4.0, ovExportVariant: 4.0,
			ovSpillReleaseVariant: 3.15, ovDynamicVariant: 3.4, ovDynReleaseVariant: 2.5, // dynamic measured 3.18-3.31 (3.31 with two helpers running, 2026-12-03); dynamic with the release 2.31-2.36 at 317e907 and 2.32-2.41 on main on a Zen 4 EPYC (2026-12-04), where 2.35 came from a Sapphire Rapids
			// 2025.0.0 imports a copy of the whole blob per model,
			// 2026.4.1 computes from the mapped file in place.
			ovImportVariant: 3.8,
		}[variant]
		if variant == ovImportVariant && strings.Contains(os.Getenv("GGML_OPENVINO_LIB"), string(filepath.Separator)+"2025.0.") {
			bound = 6.1
		}
		if variant == ovDynamicVariant || variant == ovDynReleaseVariant {
			models = 1
		}
		require.LessOrEqual(t, ratio, bound)
		require.Equal(t, models, dev.(interface{ CacheStats() openvino.CacheStats }).CacheStats().Misses, "compiled models")
	})
}
