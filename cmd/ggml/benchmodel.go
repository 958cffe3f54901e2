package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/bench"
	"github.com/ggml-go/ggml/devices/openvino"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// runBenchModel times prompt processing (one call of -pp tokens) and
// generation (-tg tokens one at a time after a one-token prompt, greedy) on
// our runner and on libllama in a child process (llamaChildEnv), same file
// and threads, interleaved, the best of -reps runs each; the memory
// bandwidth of a streaming read and generation's fraction of it; and on
// linux the resident-memory growth of loading and running the model
// against the file's size, ours and the child's.
func runBenchModel(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench model", flag.ContinueOnError)
	path := fs.String("m", "", "model `FILE`; none: a generated llama model (1024 wide, 4 layers, Q4_0)")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "threads, for both")
	pp := fs.Int("pp", 64, "prompt tokens")
	tg := fs.Int("tg", 32, "generated tokens")
	reps := fs.Int("reps", 3, "runs of each, the best counts")
	typ := fs.String("type", "q4_0", "weight type of the generated model")
	bwMiB := fs.Int("bandwidth", 512, "`MiB` of the streaming read that measures memory bandwidth (0: none)")
	devName := fs.String("b", "", "also run our runner on this `DEVICE` (OPENVINO0, ...), beside our CPU device; for OpenVINO also its compile and cache counters")
	llamaLib := fs.String("llama", "npm", "which libllama: npm (the npm package's, ggml's best CPU build or GGML_REF_CPU_VARIANT's) or rpc-ref (scripts/fetch-rpc-ref's build)")
	inproc := fs.Bool("inproc", false, "also time libllama loaded into this process (labelled libllama-in-process; it runs slower there, see bench/README.md)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml bench model [-m FILE] [-threads N] [-pp N] [-tg N] [-reps N] [-type T] [-b DEVICE] [-llama npm|rpc-ref] [-bandwidth MiB] [-inproc]\n\n"+
			"Prompt and generation tokens/s of our runner beside libllama (in a process of its own, timed as llama-bench\n"+
			"times it) on the same file and threads, as ratios; the memory bandwidth of a streaming read and generation's\n"+
			"fraction of it; and (linux) the resident memory our runner and libllama's process add.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *pp <= 0 || *tg <= 0 || *reps <= 0 || *threads <= 0 || *bwMiB < 0 {
		return usageErrorf("positive -pp, -tg, -reps and -threads, -bandwidth at least 0, no arguments")
	}
	if !slices.Contains(llamaLibs, *llamaLib) {
		return usageErrorf("-llama %q: want one of %s", *llamaLib, strings.Join(llamaLibs, ", "))
	}
	if *path == "" {
		t, err := quant.ParseType(*typ)
		if err != nil {
			return usageErrorf("-type: %w", err)
		}
		dir, err := os.MkdirTemp("", "ggml-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*path = filepath.Join(dir, "model.gguf")
		c := genmodel.Config{Arch: "llama", Type: t, Embd: 1024, Layers: 4, Heads: 16, KVHeads: 4, FF: 2816, VocabSize: 8192, Ctx: 512}
		if err := genmodel.WriteFile(*path, c); err != nil {
			return err
		}
	}
	fi, err := os.Stat(*path)
	if err != nil {
		return err
	}
	nCtx := *pp + *tg + 1
	rss0 := residentBytes()
	cpuSide, err := openRunnerSide("ours", *path, model.Options{Threads: *threads}, nCtx, *pp, *tg)
	if err != nil {
		return err
	}
	defer cpuSide.close()
	m := cpuSide.m
	if _, err := cpuSide.f(); err != nil { // warm-up: page faults, graph shapes
		return err
	}
	rss1 := residentBytes()
	sides := []*benchSide{cpuSide}
	var devSide *benchSide
	if *devName != "" {
		dev, sel, err := deviceFlag("-b", *devName)
		if err != nil {
			return err
		}
		if dev.Type() != backend.DeviceCPU {
			devSide, err = openRunnerSide(dev.Name(), *path, model.Options{Device: dev, Params: sel.Params, Threads: *threads}, nCtx, *pp, *tg)
			if err != nil {
				return fmt.Errorf("-b %s: %w", dev.Name(), err)
			}
			defer devSide.close()
			if err := devSide.warmUp(); err != nil {
				return fmt.Errorf("-b %s: %w", dev.Name(), err)
			}
			sides = append(sides, devSide)
		}
	}
	nOurs := len(sides)
	// The references, timed in turn with our sides within each
	// repetition: libllama in a child process of its own, as llama-bench
	// runs it; with -inproc, libllama loaded into this process as well
	// (the old reference).
	req := llamaRequest{Model: *path, Threads: *threads, PP: *pp, TG: *tg, Ctx: nCtx, VocabTokens: m.HParams.NVocab, Lib: *llamaLib}
	child, childErr := startLlamaChild(req)
	if childErr == nil {
		defer child.close()
		sides = append(sides, &benchSide{name: "libllama", f: child.run})
	}
	if *inproc {
		b, err := openLlamaBench(req)
		if err != nil {
			return fmt.Errorf("-inproc: %w", err)
		}
		defer b.close()
		if _, err := b.run(); err != nil { // the warm-up the child makes too
			return fmt.Errorf("-inproc: %w", err)
		}
		sides = append(sides, &benchSide{name: "libllama-in-process", f: b.run})
	}
	for range *reps {
		for _, sd := range sides {
			r, err := sd.f()
			if err != nil {
				return err
			}
			for j := range 2 {
				if sd.best[j] == 0 || r.wall[j] < sd.best[j] {
					sd.best[j] = r.wall[j]
				}
				if sd.bestCPU[j] == 0 || r.cpu[j] < sd.bestCPU[j] {
					sd.bestCPU[j] = r.cpu[j]
				}
			}
		}
	}
	h := m.HParams
	fmt.Fprintf(stdout, "model %s: %s, %d layers, %d wide, %d MiB; %d threads, flash attention off, F32 KV cache\n",
		filepath.Base(*path), h.Arch, h.NLayer, h.NEmbd, fi.Size()>>20, *threads)
	if devSide != nil {
		fmt.Fprintf(stdout, "ours: our runner on the CPU device; %s: our runner on %s (%s)\n", devSide.name, devSide.m.DeviceName(),
			devSide.desc)
	}
	if childErr == nil {
		fmt.Fprintf(stdout, "libllama: a process of its own (pid %d), ggml CPU variant %s, best of %d runs each, interleaved\n",
			child.cmd.Process.Pid, child.first.Variant, *reps)
	} else {
		fmt.Fprintf(stdout, "libllama: not available (%v)\n", childErr)
	}
	rate := func(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
	// Each row: every side's tokens/s, then each of our sides over each
	// reference; by the clock, then in CPU time (the process's: a
	// process that spins waiting pays for it; on a machine whose cores
	// other processes share, the clock counts their turns, CPU time does
	// not).
	cpuKnown := true
	for _, sd := range sides {
		cpuKnown = cpuKnown && sd.bestCPU[0] > 0 && sd.bestCPU[1] > 0
	}
	for _, byCPU := range []bool{false, true} {
		if byCPU && !cpuKnown {
			break
		}
		unit, best := "tokens/s", func(sd *benchSide) [2]time.Duration { return sd.best }
		if byCPU {
			unit, best = "tokens/CPU-s", func(sd *benchSide) [2]time.Duration { return sd.bestCPU }
			fmt.Fprintln(stdout, "in CPU time (each process's own):")
		}
		for j, row := range []struct {
			name string
			n    int
		}{{fmt.Sprintf("pp%d", *pp), *pp}, {fmt.Sprintf("tg%d", *tg), *tg}} {
			line := fmt.Sprintf("%-6s", row.name)
			for i, sd := range sides {
				if i > 0 {
					line += "  "
				}
				line += fmt.Sprintf(" %s %8.1f %s", sd.name, rate(row.n, best(sd)[j]), unit)
			}
			for _, o := range sides[:nOurs] {
				for _, r := range sides[nOurs:] {
					line += fmt.Sprintf("   %s/%s %.2f", o.name, r.name, best(r)[j].Seconds()/best(o)[j].Seconds())
				}
			}
			fmt.Fprintln(stdout, line)
		}
	}
	if devSide != nil {
		if err := devSide.writeStats(stdout, *reps, *tg); err != nil {
			return err
		}
	}
	if *bwMiB > 0 {
		// After the runs, so that its buffer does not evict the weights
		// from the cache before them; the best of five passes.
		bw, err := bench.ReadBandwidth(*threads, *bwMiB<<20, 5)
		if err != nil {
			return err
		}
		perToken := weightBytesPerToken(m)
		line := fmt.Sprintf("memory: streaming read %.2f GB/s (%d threads, %d MiB, best of 5, thread CPU time); a token reads %.4g MB of weights,\n"+
			"        generation reaches of that bandwidth, by the clock:", bw/1e9, *threads, *bwMiB, float64(perToken)/1e6)
		fraction := func(best func(*benchSide) time.Duration) {
			for i, sd := range sides {
				if i > 0 {
					line += ","
				}
				line += fmt.Sprintf(" %s %.2f", sd.name, float64(perToken)*rate(*tg, best(sd))/bw)
			}
		}
		fraction(func(sd *benchSide) time.Duration { return sd.best[1] })
		if cpuKnown {
			// The bandwidth is per CPU second of the reading threads, so
			// this is the like-for-like figure where other processes
			// take turns on the cores.
			line += ";\n        in CPU time:"
			fraction(func(sd *benchSide) time.Duration { return sd.bestCPU[1] })
		}
		fmt.Fprintln(stdout, line)
	}
	if childErr == nil && child.first.RSSStart > 0 && child.first.RSSLoaded > 0 {
		fmt.Fprintf(stdout, "libllama's process: resident size grew %d MiB loading the file and running it once\n",
			(int64(child.first.RSSLoaded)-int64(child.first.RSSStart))>>20)
	}
	if rss0 > 0 && rss1 > 0 {
		grow := int64(rss1) - int64(rss0)
		buffers := int64(cpuSide.s.BufferBytes())
		weights := grow - buffers
		fmt.Fprintf(stdout, "memory: resident size grew %d MiB loading and running a %d MiB file on the CPU: %d MiB of KV cache and compute buffers,\n"+
			"        %d MiB for the weights and the rest (%.2f x the file)\n",
			grow>>20, fi.Size()>>20, buffers>>20, weights>>20, float64(weights)/float64(fi.Size()))
	}
	return nil
}

// benchSide is one side of bench model: a function timing one run's
// prompt and generation, and the best times seen. Our runner's sides
// also hold their model and session.
type benchSide struct {
	name    string
	f       func() (runTimes, error)
	best    [2]time.Duration // pp, tg by the clock
	bestCPU [2]time.Duration // and in CPU time
	m       *model.Model
	s       *model.Session
	desc    string // the device's description
	// stats reads the device's compiled-model cache counters (nil for a
	// device without them); loaded and warm are their values after
	// loading and after the warm-up, tgStats generation's share of the
	// runs after the warm-up, added up.
	stats        func() openvino.CacheStats
	loaded, warm openvino.CacheStats
	// tgFirst and tgRest split tgStats: the first token after the
	// prompt (the backend's graph changes shape there) and the others.
	tgStats, tgFirst, tgRest openvino.CacheStats
}

// cacheStatser is a device that counts its compiled-model cache (the
// OpenVINO device).
type cacheStatser interface{ CacheStats() openvino.CacheStats }

// openRunnerSide opens the model at path with o and a session for runs of
// a pp-token prompt and tg generated tokens, both timed as timeLlama
// times libllama: the prompt asking for its last logits, then from an
// empty cache tg single-token decodes of the same logits-independent
// tokens.
func openRunnerSide(name, path string, o model.Options, nCtx, pp, tg int) (_ *benchSide, err error) {
	m, err := model.Open(path, o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	s, err := m.NewSession(model.SessionOptions{Ctx: nCtx, Batch: pp})
	if err != nil {
		return nil, err
	}
	sd := &benchSide{name: name, m: m, s: s}
	if o.Device != nil {
		sd.desc = o.Device.Description()
	}
	if cs, ok := o.Device.(cacheStatser); ok {
		sd.stats = cs.CacheStats
		sd.loaded = cs.CacheStats()
	}
	prompt := benchPrompt(pp, m.HParams.NVocab)
	nVocab := m.HParams.NVocab
	ctx := context.Background()
	tok := make([]int32, 1)
	// One logits row for every generated token, as libllama's side reads
	// its context's one buffer.
	rows := make([][]float32, 1)
	sd.f = func() (runTimes, error) {
		var clock runClock
		s.Reset()
		clock.start()
		if _, err := s.Decode(ctx, prompt, nil); err != nil {
			return runTimes{}, err
		}
		clock.split()
		var st openvino.CacheStats
		if sd.stats != nil {
			st = sd.stats()
		}
		s.Reset()
		var st1 openvino.CacheStats
		for i := range tg {
			tok[0] = benchToken(i, nVocab)
			if _, err := s.DecodeInto(ctx, tok, nil, rows); err != nil {
				return runTimes{}, err
			}
			if i == 0 && sd.stats != nil {
				st1 = sd.stats()
			}
		}
		r := clock.stop()
		if sd.stats != nil {
			end := sd.stats()
			sd.tgStats = addStats(sd.tgStats, subStats(end, st))
			sd.tgFirst = addStats(sd.tgFirst, subStats(st1, st))
			sd.tgRest = addStats(sd.tgRest, subStats(end, st1))
		}
		return r, nil
	}
	return sd, nil
}

// warmUp makes one untimed run (the compiles of a device happen there)
// and starts the timed runs' counters.
func (sd *benchSide) warmUp() error {
	if _, err := sd.f(); err != nil {
		return err
	}
	if sd.stats != nil {
		sd.warm = sd.stats()
		sd.tgStats, sd.tgFirst, sd.tgRest = openvino.CacheStats{}, openvino.CacheStats{}, openvino.CacheStats{}
	}
	return nil
}

func (sd *benchSide) close() {
	sd.s.Close()
	sd.m.Close()
}

// writeStats prints the device's compiled-model cache counters: the
// compiles of the warm-up (the first graph's and each one's), the host
// time per cache hit over the timed runs, and the hits and misses per
// generated token.
func (sd *benchSide) writeStats(w io.Writer, reps, tg int) error {
	if sd.stats == nil {
		_, err := fmt.Fprintf(w, "%s: no compiled-model cache counters\n", sd.name)
		return err
	}
	all := sd.stats()
	warm, timed := subStats(sd.warm, sd.loaded), subStats(all, sd.warm)
	var total time.Duration
	each := ""
	for i, c := range warm.Compiles {
		total += c
		if i > 0 {
			each += ", "
		}
		each += fmt.Sprintf("%.2f", c.Seconds())
	}
	first := time.Duration(0)
	if len(warm.Compiles) > 0 {
		first = warm.Compiles[0]
	}
	if _, err := fmt.Fprintf(w, "%s: warm-up compiled %d models in %.2f s (first graph %.2f s; each: %s s)\n",
		sd.name, warm.Misses, total.Seconds(), first.Seconds(), each); err != nil {
		return err
	}
	n := float64(reps * tg)
	_, err := fmt.Fprintf(w, "%s: timed runs: %d cache hits, %d misses (%.2f s compiling); per generated token %.2f hits, %.2f misses;\n"+
		"        host time per GraphCompute on a hit (target < 20 us): all %s;\n"+
		"        generation's first token (after the prompt's graph) %s; the other tokens %s\n",
		sd.name, timed.Hits, timed.Misses, sumDurations(timed.Compiles).Seconds(),
		float64(sd.tgStats.Hits)/n, float64(sd.tgStats.Misses)/n, perHit(timed), perHit(sd.tgFirst), perHit(sd.tgRest))
	return err
}

// perHit is the host time per cache hit of s, and the part of it copying
// outputs out of scratch memory.
func perHit(s openvino.CacheStats) string {
	if s.Hits == 0 {
		return "none"
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(s.Hits) }
	return fmt.Sprintf("%.1f us (%.1f us of it copying outputs out of scratch memory; %d of %d hits vouched for by the scheduler)",
		us(s.HitHost), us(s.HitCopy), s.Vouched, s.Hits)
}

// subStats is what happened between two readings of the counters.
func subStats(b, a openvino.CacheStats) openvino.CacheStats {
	return openvino.CacheStats{Hits: b.Hits - a.Hits, Misses: b.Misses - a.Misses, Vouched: b.Vouched - a.Vouched, HitHost: b.HitHost - a.HitHost,
		HitCopy: b.HitCopy - a.HitCopy, Compiles: b.Compiles[min(len(a.Compiles), len(b.Compiles)):]}
}

// addStats adds two stretches' counters.
func addStats(a, b openvino.CacheStats) openvino.CacheStats {
	return openvino.CacheStats{Hits: a.Hits + b.Hits, Misses: a.Misses + b.Misses, Vouched: a.Vouched + b.Vouched, HitHost: a.HitHost + b.HitHost,
		HitCopy: a.HitCopy + b.HitCopy, Compiles: append(append([]time.Duration(nil), a.Compiles...), b.Compiles...)}
}

func sumDurations(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

// weightBytesPerToken is how many bytes of weights one decoded token
// reads: every tensor of the file once, except a token embedding that is
// not also the output projection, of which GET_ROWS reads one row. The KV
// cache's reads (a few MB at most at these contexts) are not counted.
func weightBytesPerToken(m *model.Model) uint64 {
	var n uint64
	for _, ti := range m.File().Tensors() {
		if ti.Name == "token_embd.weight" && !m.Tied {
			continue
		}
		if data, err := m.File().TensorData(ti.Name); err == nil {
			n += uint64(len(data))
		}
	}
	return n
}

// residentBytes is the process's resident set size (VmRSS) on linux, 0
// elsewhere.
func residentBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				kb, err := strconv.ParseUint(fields[0], 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}
