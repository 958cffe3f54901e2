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
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml/bench"
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
	inproc := fs.Bool("inproc", false, "also time libllama loaded into this process (labelled libllama-in-process; it runs slower there, see bench/README.md)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml bench model [-m FILE] [-threads N] [-pp N] [-tg N] [-reps N] [-type T] [-bandwidth MiB] [-inproc]\n\n"+
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
	m, err := model.Open(*path, model.Options{Threads: *threads})
	if err != nil {
		return err
	}
	defer m.Close()
	s, err := m.NewSession(model.SessionOptions{Ctx: nCtx, Batch: *pp})
	if err != nil {
		return err
	}
	defer s.Close()
	prompt := benchPrompt(*pp, m.HParams.NVocab)
	ctx := context.Background()
	ours := func() (time.Duration, time.Duration, error) {
		s.Reset()
		t0 := time.Now()
		if _, err := s.Decode(ctx, prompt, nil); err != nil {
			return 0, 0, err
		}
		t1 := time.Now()
		s.Reset()
		if _, err := s.Generate(ctx, prompt[:1], *tg, model.Sampler{}, nil); err != nil {
			return 0, 0, err
		}
		return t1.Sub(t0), time.Since(t1), nil
	}
	if _, _, err := ours(); err != nil {
		return err
	}
	rss1 := residentBytes()
	// The sides, timed in turn within each repetition: ours; libllama in a
	// child process of its own, as llama-bench runs it; with -inproc,
	// libllama loaded into this process as well (the old reference).
	type side struct {
		name string
		f    func() (time.Duration, time.Duration, error)
		best [2]time.Duration // pp, tg
	}
	sides := []*side{{name: "ours", f: ours}}
	req := llamaRequest{Model: *path, Threads: *threads, PP: *pp, TG: *tg, Ctx: nCtx, VocabTokens: m.HParams.NVocab}
	child, childErr := startLlamaChild(req)
	if childErr == nil {
		defer child.close()
		sides = append(sides, &side{name: "libllama", f: child.run})
	}
	if *inproc {
		b, err := openLlamaBench(req)
		if err != nil {
			return fmt.Errorf("-inproc: %w", err)
		}
		defer b.close()
		if _, _, err := b.run(); err != nil { // the warm-up the child makes too
			return fmt.Errorf("-inproc: %w", err)
		}
		sides = append(sides, &side{name: "libllama-in-process", f: b.run})
	}
	for range *reps {
		for _, sd := range sides {
			p, g, err := sd.f()
			if err != nil {
				return err
			}
			for j, d := range [2]time.Duration{p, g} {
				if sd.best[j] == 0 || d < sd.best[j] {
					sd.best[j] = d
				}
			}
		}
	}
	h := m.HParams
	fmt.Fprintf(stdout, "model %s: %s, %d layers, %d wide, %d MiB; %d threads, flash attention off, F32 KV cache\n",
		filepath.Base(*path), h.Arch, h.NLayer, h.NEmbd, fi.Size()>>20, *threads)
	if childErr == nil {
		fmt.Fprintf(stdout, "libllama: a process of its own (pid %d), ggml CPU variant %s, best of %d runs each, interleaved\n",
			child.cmd.Process.Pid, child.first.Variant, *reps)
	} else {
		fmt.Fprintf(stdout, "libllama: not available (%v)\n", childErr)
	}
	rate := func(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
	// Generation: our first token comes from the one-token prompt's
	// logits, so tg tokens cost tg decodes on both sides.
	for j, row := range []struct {
		name string
		n    int
	}{{fmt.Sprintf("pp%d", *pp), *pp}, {fmt.Sprintf("tg%d", *tg), *tg}} {
		line := fmt.Sprintf("%-6s ours %8.1f tokens/s", row.name, rate(row.n, sides[0].best[j]))
		for _, sd := range sides[1:] {
			line += fmt.Sprintf("   %s %8.1f tokens/s   ours/%s %.2f", sd.name, rate(row.n, sd.best[j]), sd.name,
				sd.best[j].Seconds()/sides[0].best[j].Seconds())
		}
		fmt.Fprintln(stdout, line)
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
			"        generation reaches of that bandwidth: ours %.2f", bw/1e9, *threads, *bwMiB, float64(perToken)/1e6,
			float64(perToken)*rate(*tg, sides[0].best[1])/bw)
		for _, sd := range sides[1:] {
			line += fmt.Sprintf(", %s %.2f", sd.name, float64(perToken)*rate(*tg, sd.best[1])/bw)
		}
		fmt.Fprintln(stdout, line)
	}
	if childErr == nil && child.first.RSSStart > 0 && child.first.RSSLoaded > 0 {
		fmt.Fprintf(stdout, "libllama's process: resident size grew %d MiB loading the file and running it once\n",
			(int64(child.first.RSSLoaded)-int64(child.first.RSSStart))>>20)
	}
	if rss0 > 0 && rss1 > 0 {
		grow := int64(rss1) - int64(rss0)
		weights := grow - int64(s.BufferBytes())
		fmt.Fprintf(stdout, "memory: resident size grew %d MiB loading and running a %d MiB file: %d MiB of KV cache and compute buffers,\n"+
			"        %d MiB for the weights and the rest (%.2f x the file)\n",
			grow>>20, fi.Size()>>20, s.BufferBytes()>>20, weights>>20, float64(weights)/float64(fi.Size()))
	}
	return nil
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
