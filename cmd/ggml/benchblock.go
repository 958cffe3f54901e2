package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/internal/testkit/block"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
)

// runBenchBlock times the demo's decoder block through the scheduler on
// any device (the CPU as fallback), with the per-device profile, beside
// the real ggml computing the same block on its CPU backend.
func runBenchBlock(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench block", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml bench block [flags]\n\nTimes the demo's decoder block through the scheduler on a device, with the CPU as\nfallback, and prints per device the nodes, splits, copies, compute and copy times and\nthe host time around them; beside it the real ggml computing the same block, and the\nratio.\n\nflags:")
		fs.PrintDefaults()
	}
	dev := fs.String("b", "", "device, as `ggml devices` names it, optionally NAME:key=value (default: "+"GGML_DEVICE, else the best)")
	threads := fs.Int("threads", 0, "CPU threads (0: all)")
	runs := fs.Int("runs", 10, "timed computations (the median is reported)")
	seed := fs.Uint64("seed", 1, "seed of the weights and inputs")
	tokens := fs.Int("tokens", 8, "tokens in the batch")
	ctx := fs.Int("ctx", 64, "KV cache cells")
	embd := fs.Int("embd", 256, "embedding width (a multiple of 64)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	if *threads < 0 || *runs < 1 {
		return usageErrorf("-threads must be >= 0 and -runs >= 1")
	}
	d, err := block.NewDims(*embd, *tokens, *ctx, true)
	if err != nil {
		return usageErrorf("%v", err)
	}
	backends, err := openBackends("-b", *dev, *threads)
	if err != nil {
		return err
	}
	defer backend.CloseAll(backends)
	main := backends[0]
	res, err := runBlock(backends, d, *seed, *runs)
	if err != nil {
		return fmt.Errorf("on %s: %w", main.Name(), err)
	}
	ours := median(res.walls)
	fmt.Fprintf(stdout, "block: embd %d, tokens %d, ctx %d, Q4_0 weights; %d runs, threads %d\n", d.Embd, d.Tokens, d.Ctx, *runs, *threads)
	fmt.Fprintf(stdout, "ours on %s (%s): median %s, %d splits\n", main.Name(), main.Device().Description(), ms(ours), res.splits)
	if err := writeProfile(stdout, res.profile, res.walls[len(res.walls)-1]); err != nil {
		return err
	}
	lib, err := ggmlref.Default()
	if err != nil {
		fmt.Fprintf(stdout, "real ggml: not available (%v)\n", err)
		return nil
	}
	theirOut, walls, err := timeBlockGGML(lib, d, *seed, *threads, *runs)
	if err != nil {
		return fmt.Errorf("real ggml: %w", err)
	}
	theirs := median(walls)
	_, nmse := agreement(res.out, theirOut)
	fmt.Fprintf(stdout, "real ggml %s on its CPU backend (through the mirror, copies in and out included): median %s\n", lib.Version(), ms(theirs))
	fmt.Fprintf(stdout, "ratio ours/ggml: %.2f (nmse %.3g)\n", float64(ours)/float64(theirs), nmse)
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
