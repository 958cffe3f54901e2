package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/bench"
	"github.com/ggml-go/ggml/internal/testkit/block"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/quant"
)

// speedFlags are the flags every side-by-side speed benchmark takes.
type speedFlags struct {
	device    string
	threads   string
	ref       string
	pool      string
	tsv       bool
	reps      int
	minSample time.Duration
}

func (f *speedFlags) register(fs *flag.FlagSet, threads string) {
	fs.StringVar(&f.device, "b", "", "device our side runs on, as `ggml devices` names it (default: "+backend.EnvDevice+", else the best; the CPU takes what it cannot run)")
	fs.StringVar(&f.threads, "threads", threads, "thread counts, comma-separated")
	fs.StringVar(&f.ref, "ref", "ggml", "reference: ggml (the real library; GGML_REF_CPU_VARIANT picks its build) or none")
	fs.StringVar(&f.pool, "pool", "default", "ggml's threads: default (a threadpool per graph, as ggml_backend_cpu_init gives) or persistent (ggml_threadpool_new, as llama.cpp)")
	fs.BoolVar(&f.tsv, "tsv", false, "tab-separated output")
	fs.IntVar(&f.reps, "reps", bench.DefaultOptions.Reps, "samples of each side (at least 5)")
	fs.DurationVar(&f.minSample, "sample", bench.DefaultOptions.MinSample, "least time of one sample")
}

// speedCase makes one figure; close frees it.
type speedCase func(s bench.Setup) (bench.Case, error)

// runSpeed parses the common flags, then measures each case in turn and
// prints its row as soon as it is measured.
func runSpeed(name, usage string, args []string, stdout io.Writer, threads string,
	extra func(fs *flag.FlagSet), cases func(threads []int) ([]speedCase, error)) error {
	fs := flag.NewFlagSet("bench "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ggml bench %s [flags]\n\n%s\n\nflags:\n", name, usage)
		fs.PrintDefaults()
	}
	var f speedFlags
	f.register(fs, threads)
	if extra != nil {
		extra(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	ths, err := parseInts("-threads", f.threads)
	if err != nil {
		return err
	}
	if f.device == "" {
		if f.device, err = bestDeviceName(); err != nil {
			return err
		}
	}
	s := bench.Setup{Device: f.device}
	switch f.pool {
	case "default":
		s.Pool = ggmlref.DefaultPool
	case "persistent":
		s.Pool = ggmlref.PersistentPool
	default:
		return usageErrorf("-pool must be default or persistent, got %q", f.pool)
	}
	switch f.ref {
	case "ggml":
		lib, err := ggmlref.Default()
		if err != nil {
			fmt.Fprintf(stdout, "# reference ggml not available, ours only: %v\n", err)
		} else {
			s.Lib = lib
		}
	case "none":
	default:
		return usageErrorf("-ref must be ggml or none, got %q", f.ref)
	}
	cs, err := cases(ths)
	if err != nil {
		return err
	}
	dev, err := bench.OpenDevice(f.device, 1)
	if err != nil {
		return usageErrorf("-b: %v", err)
	}
	fmt.Fprintf(stdout, "# ours: %s (%s), %s %s/%s, GOMAXPROCS %d\n", dev.Name(), dev.Description(), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	_ = dev.Close()
	if s.Lib != nil {
		fmt.Fprintf(stdout, "# ggml %s, CPU variant %s, %s threadpool\n", s.Lib.Version(), s.Lib.Variant(), s.Pool)
	}
	fmt.Fprintf(stdout, "# medians of %d interleaved samples of at least %s; speed = ggml's time / ours (above 1: ours is faster)\n", max(f.reps, 5), f.minSample)
	tw := bench.NewTable(stdout, f.tsv)
	flush := func() error {
		if fl, ok := tw.(interface{ Flush() error }); ok {
			return fl.Flush()
		}
		return nil
	}
	if err := bench.WriteHeader(tw); err != nil {
		return err
	}
	opts := bench.Options{Reps: f.reps, MinSample: f.minSample}
	for _, mk := range cs {
		c, err := mk(s)
		if err != nil {
			return err
		}
		r, err := bench.Measure(c.Figure, opts)
		c.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		if err := bench.WriteRow(tw, r); err != nil {
			return err
		}
		// Rows appear as they are measured only in TSV; aligned columns
		// need the whole table.
		if f.tsv {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

func runBenchMatMul(args []string, stdout io.Writer) error {
	var types, ns, weights, shapes string
	return runSpeed("matmul", fmt.Sprintf("MUL_MAT of a KxM weight (default %dx%d) by N F32 columns, ours beside the real ggml.", bench.MatMulK, bench.MatMulM),
		args, stdout, "1,2",
		func(fs *flag.FlagSet) {
			fs.StringVar(&types, "types", "f32,f16,q8_0,q4_0,q4_K,q6_K", "weight types, comma-separated")
			fs.StringVar(&ns, "n", "1,32,256", "column counts N, comma-separated")
			fs.StringVar(&shapes, "shape", fmt.Sprintf("%dx%d", bench.MatMulK, bench.MatMulM), "weight shapes KxM (K elements a row, M rows), comma-separated: a model's, such as 576x1536")
			weightsFlag(fs, &weights)
		},
		func(threads []int) ([]speedCase, error) {
			ts, err := parseTypes(types)
			if err != nil {
				return nil, err
			}
			sh, err := parseShapes(shapes)
			if err != nil {
				return nil, err
			}
			nn, err := parseInts("-n", ns)
			if err != nil {
				return nil, err
			}
			repack, err := parseWeights(weights)
			if err != nil {
				return nil, err
			}
			var cs []speedCase
			for _, km := range sh {
				for _, t := range ts {
					for _, n := range nn {
						for _, rp := range repack {
							for _, th := range threads {
								name := fmt.Sprintf("matmul %s n=%d", t, n)
								if km != [2]int{bench.MatMulK, bench.MatMulM} {
									name = fmt.Sprintf("matmul %s %dx%d n=%d", t, km[0], km[1], n)
								}
								cs = append(cs, func(s bench.Setup) (bench.Case, error) {
									s.Repack = rp
									return s.Graph(name, th, 1, bench.MatMulShape(t, km[0], km[1], n))
								})
							}
						}
					}
				}
			}
			return cs, nil
		})
}

func runBenchDispatch(args []string, stdout io.Writer) error {
	var elems string
	return runSpeed("dispatch", fmt.Sprintf("A chain of %d ADDs: with 16 floats the cost of running one tiny operation (ours runs\nsuch an operation on the calling thread alone); with 4096, also of splitting it across threads.", bench.DispatchOps),
		args, stdout, "1,2",
		func(fs *flag.FlagSet) {
			fs.StringVar(&elems, "elems", "16,4096", "elements of each ADD, comma-separated")
		},
		func(threads []int) ([]speedCase, error) {
			es, err := parseInts("-elems", elems)
			if err != nil {
				return nil, err
			}
			var cs []speedCase
			for _, e := range es {
				for _, th := range threads {
					cs = append(cs, func(s bench.Setup) (bench.Case, error) {
						return s.Graph(fmt.Sprintf("dispatch %d x add %d", bench.DispatchOps, e), th, bench.DispatchOps, bench.Dispatch(e))
					})
				}
			}
			return cs, nil
		})
}

func runBenchQuant(args []string, stdout io.Writer) error {
	var types, acts string
	return runSpeed("quant", fmt.Sprintf("Quantizing %dx%d floats: quant.Quantize beside ggml_quantize_chunk, and the\nactivation formats' FromFloat beside the CPU backend's from_float (one thread).", bench.QuantRows, bench.QuantCols),
		args, stdout, "1",
		func(fs *flag.FlagSet) {
			fs.StringVar(&types, "types", "q4_0,q8_0,q4_K,q6_K", "weight types quantized, comma-separated")
			fs.StringVar(&acts, "act", "q8_0,q8_1,q8_K", "activation formats converted with from_float, comma-separated")
		},
		func([]int) ([]speedCase, error) {
			ts, err := parseTypes(types)
			if err != nil {
				return nil, err
			}
			as, err := parseTypes(acts)
			if err != nil {
				return nil, err
			}
			var cs []speedCase
			for _, t := range ts {
				cs = append(cs, func(s bench.Setup) (bench.Case, error) { return s.Quantize(t, false) })
			}
			for _, t := range as {
				cs = append(cs, func(s bench.Setup) (bench.Case, error) { return s.Quantize(t, true) })
			}
			return cs, nil
		})
}

// weightsFlag registers -weights, which parseWeights reads.
func weightsFlag(fs *flag.FlagSet, weights *string) {
	fs.StringVar(weights, "weights", "plain", "weight placement, comma-separated: plain (the device's buffer type), repacked (its extra buffer type, ggml's CPU_REPACK, where they take the weight)")
}

// parseWeights turns -weights into the Setup.Repack values to run.
func parseWeights(weights string) ([]bool, error) {
	var repack []bool
	for _, w := range bench.ParseList(weights) {
		switch w {
		case "plain", "repacked":
			repack = append(repack, w == "repacked")
		default:
			return nil, usageErrorf("-weights takes plain and repacked, got %q", w)
		}
	}
	return repack, nil
}

func runBenchDemo(args []string, stdout io.Writer) error {
	var embds, tokens, weights string
	var ctx int
	var seed uint64
	return runSpeed("demo", "The demo's decoder block (Q4_0 weights, F16 KV cache, flash attention), ours beside\nthe real ggml; -embd and -tokens pair up into one block size each.",
		args, stdout, "1,2",
		func(fs *flag.FlagSet) {
			fs.StringVar(&embds, "embd", "256,2048", "embedding widths, comma-separated")
			fs.StringVar(&tokens, "tokens", "8,32", "tokens of each block, comma-separated (one per -embd)")
			fs.IntVar(&ctx, "ctx", 64, "KV cache cells")
			fs.Uint64Var(&seed, "seed", 1, "seed of the weights and inputs")
			weightsFlag(fs, &weights)
		},
		func(threads []int) ([]speedCase, error) {
			repack, err := parseWeights(weights)
			if err != nil {
				return nil, err
			}
			es, err := parseInts("-embd", embds)
			if err != nil {
				return nil, err
			}
			ts, err := parseInts("-tokens", tokens)
			if err != nil {
				return nil, err
			}
			if len(es) != len(ts) {
				return nil, usageErrorf("%d -embd values but %d -tokens", len(es), len(ts))
			}
			var cs []speedCase
			for i, e := range es {
				d, err := block.NewDims(e, ts[i], ctx, true)
				if err != nil {
					return nil, usageErrorf("%v", err)
				}
				for _, rp := range repack {
					for _, th := range threads {
						cs = append(cs, func(s bench.Setup) (bench.Case, error) {
							s.Repack = rp
							return s.Graph(fmt.Sprintf("demo embd=%d tokens=%d ctx=%d", e, ts[i], ctx), th, 1, bench.Demo(d, seed))
						})
					}
				}
			}
			return cs, nil
		})
}

// parseInts reads a comma-separated list of positive integers.
func parseInts(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range bench.ParseList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, usageErrorf("%s wants positive integers, got %q", flagName, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, usageErrorf("%s is empty", flagName)
	}
	return out, nil
}

// parseShapes reads a comma-separated list of KxM weight shapes.
func parseShapes(s string) ([][2]int, error) {
	var out [][2]int
	for _, f := range bench.ParseList(s) {
		ks, ms, ok := strings.Cut(strings.TrimSpace(f), "x")
		k, err1 := strconv.Atoi(ks)
		m, err2 := strconv.Atoi(ms)
		if !ok || err1 != nil || err2 != nil || k <= 0 || m <= 0 {
			return nil, usageErrorf("-shape wants KxM with positive K and M, got %q", f)
		}
		out = append(out, [2]int{k, m})
	}
	if len(out) == 0 {
		return nil, usageErrorf("-shape is empty")
	}
	return out, nil
}

// parseTypes reads a comma-separated list of type names.
func parseTypes(s string) ([]quant.Type, error) {
	var out []quant.Type
	for _, f := range bench.ParseList(s) {
		t, err := quant.ParseType(strings.TrimSpace(f))
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		out = append(out, t)
	}
	return out, nil
}
