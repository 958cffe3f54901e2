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

	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// runBenchModel times prompt processing (one call of -pp tokens) and
// generation (-tg tokens one at a time after a one-token prompt, greedy) on
// our runner and on libllama, same file and threads, interleaved, the best
// of -reps runs each; and on linux the resident-memory growth of loading
// and running the model against the file's size.
func runBenchModel(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench model", flag.ContinueOnError)
	path := fs.String("m", "", "model `FILE`; none: a generated llama model (1024 wide, 4 layers, Q4_0)")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "threads, for both")
	pp := fs.Int("pp", 64, "prompt tokens")
	tg := fs.Int("tg", 32, "generated tokens")
	reps := fs.Int("reps", 3, "runs of each, the best counts")
	typ := fs.String("type", "q4_0", "weight type of the generated model")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml bench model [-m FILE] [-threads N] [-pp N] [-tg N] [-reps N] [-type T]\n\n"+
			"Prompt and generation tokens/s of our runner beside libllama on the same file and threads, as ratios,\n"+
			"and (linux) the resident memory our runner adds over the file's size.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *pp <= 0 || *tg <= 0 || *reps <= 0 || *threads <= 0 {
		return usageErrorf("positive -pp, -tg, -reps and -threads, no arguments")
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
	prompt := make([]int32, *pp)
	for i := range prompt {
		prompt[i] = int32((i*37 + 11) % m.HParams.NVocab)
	}
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
	var theirs func() (time.Duration, time.Duration, error)
	lib, libErr := llamaref.Default()
	if libErr == nil {
		ref, err := lib.LoadModel(*path)
		if err != nil {
			return err
		}
		defer ref.Free()
		o := llamaref.CompareOptions(nCtx, *pp, *threads)
		o.FlashAttn = llamaref.FlashAttnDisabled
		rc, err := ref.NewContext(o)
		if err != nil {
			return err
		}
		defer rc.Free()
		theirs = func() (time.Duration, time.Duration, error) {
			rc.ClearMemory()
			t0 := time.Now()
			if err := rc.Decode(prompt, 0, nil); err != nil {
				return 0, 0, err
			}
			t1 := time.Now()
			rc.ClearMemory()
			if _, err := rc.Greedy(prompt[:1], *tg); err != nil {
				return 0, 0, err
			}
			return t1.Sub(t0), time.Since(t1), nil
		}
	}
	var best [2][2]time.Duration // [ours, libllama][pp, tg]
	for range *reps {
		for i, f := range []func() (time.Duration, time.Duration, error){ours, theirs} {
			if f == nil {
				continue
			}
			p, g, err := f()
			if err != nil {
				return err
			}
			if best[i][0] == 0 || p < best[i][0] {
				best[i][0] = p
			}
			if best[i][1] == 0 || g < best[i][1] {
				best[i][1] = g
			}
		}
	}
	h := m.HParams
	fmt.Fprintf(stdout, "model %s: %s, %d layers, %d wide, %d MiB; %d threads, flash attention off, F32 KV cache\n",
		filepath.Base(*path), h.Arch, h.NLayer, h.NEmbd, fi.Size()>>20, *threads)
	rate := func(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
	// Generation: the first token comes from the prompt's logits, so tg
	// tokens cost tg-1 decodes plus the one-token prompt.
	for j, row := range []struct {
		name string
		n    int
	}{{fmt.Sprintf("pp%d", *pp), *pp}, {fmt.Sprintf("tg%d", *tg), *tg}} {
		line := fmt.Sprintf("%-6s ours %8.1f tokens/s", row.name, rate(row.n, best[0][j]))
		if theirs != nil {
			line += fmt.Sprintf("   libllama %8.1f tokens/s   ours/libllama %.2f", rate(row.n, best[1][j]), best[1][j].Seconds()/best[0][j].Seconds())
		}
		fmt.Fprintln(stdout, line)
	}
	if libErr != nil {
		fmt.Fprintf(stdout, "libllama: not available (%v)\n", libErr)
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
