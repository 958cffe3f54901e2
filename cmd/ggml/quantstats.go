package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/quant"
)

type quantStatsFlags struct {
	typ      string
	ref      bool
	rows     int
	cols     int
	seed     uint64
	imatrix  bool
	minTime  time.Duration
	maxIters int
}

func runQuantStats(args []string, stdout io.Writer) error {
	var f quantStatsFlags
	fs := flag.NewFlagSet("quant-stats", flag.ContinueOnError)
	fs.StringVar(&f.typ, "type", "", "only these types (ggml names, comma-separated, e.g. q4_K,q8_0); default: every type")
	fs.BoolVar(&f.ref, "ref", os.Getenv(ggmlref.EnvLibDir) != "", "also measure the real ggml and compare bytes (default on when "+ggmlref.EnvLibDir+" is set)")
	fs.IntVar(&f.rows, "rows", 64, "rows of random data")
	fs.IntVar(&f.cols, "cols", 4096, "values per row (a multiple of 256)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the random data")
	fs.BoolVar(&f.imatrix, "imatrix", false, "pass an importance matrix to every type (always for types that need one)")
	fs.DurationVar(&f.minTime, "time", 300*time.Millisecond, "minimum time to measure each speed")
	fs.IntVar(&f.maxIters, "max-iters", 64, "at most this many timed runs per speed")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml quant-stats [-type T,...] [-ref] [-rows N] [-cols N] [-seed N] [-imatrix] [-time D] [-max-iters N]\n\n"+
			"Bits per weight, RMSE and max error, quantize and dequantize speed of every format; with -ref the real\n"+
			"ggml's figures beside ours, the speed ratios and whether the bytes match.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	if f.rows <= 0 || f.cols <= 0 || f.cols%256 != 0 {
		return usageErrorf("-rows must be positive and -cols a positive multiple of 256")
	}
	types := quant.Types()
	if f.typ != "" {
		types = nil
		for _, name := range strings.Split(f.typ, ",") {
			t, err := quant.ParseType(strings.TrimSpace(name))
			if err != nil {
				return usageErrorf("%v", err)
			}
			types = append(types, t)
		}
	}
	var lib *ggmlref.Lib
	if f.ref {
		var err error
		if lib, err = ggmlref.Default(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "reference: ggml %s (%s), CPU variant %s, from %s\n", lib.Version(), lib.Commit(), lib.Variant(), lib.Dir())
	}
	src, imat := statsData(f.rows, f.cols, f.seed)
	fmt.Fprintf(stdout, "data: %d x %d gaussian values with outliers (seed %d), single thread, speeds in MB/s of float32\n\n", f.rows, f.cols, f.seed)

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "type\tbpw\trmse\tmax err\tquant\tdequant\t")
	if lib != nil {
		fmt.Fprint(tw, "ggml rmse\tggml quant\tggml dequant\tquant ratio\tdequant ratio\tbytes\t")
	}
	fmt.Fprintln(tw)
	differ := 0
	for _, t := range types {
		if t == quant.F32 || (!t.CanQuantize() && !t.CanDequantize()) {
			continue
		}
		var im []float32
		if f.imatrix || t.RequiresImatrix() || (lib != nil && lib.RequiresImatrix(uint32(t))) {
			im = imat
		}
		row, mismatch, err := statsRow(t, src, f, im, lib)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		if mismatch {
			differ++
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if differ > 0 {
		return fmt.Errorf("%d type(s) differ from ggml", differ)
	}
	return nil
}

// statsData makes gaussian rows with a sprinkling of outliers, like real
// weights, and a matching importance matrix (column mean of squares).
func statsData(rows, cols int, seed uint64) ([]float32, []float32) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	src := make([]float32, rows*cols)
	for i := range src {
		v := rng.NormFloat64() * 0.02
		if rng.IntN(512) == 0 {
			v *= 20
		}
		src[i] = float32(v)
	}
	im := make([]float32, cols)
	for r := range rows {
		for c := range cols {
			v := src[r*cols+c]
			im[c] += v * v / float32(rows)
		}
	}
	return src, im
}

func statsRow(t quant.Type, src []float32, f quantStatsFlags, im []float32, lib *ggmlref.Lib) (string, bool, error) {
	n := len(src)
	bpw := float64(t.TypeSize()*8) / float64(t.BlockSize())
	cols := fmt.Sprintf("%s\t%.4g\t", t, bpw)

	var ours []byte
	if t.CanQuantize() {
		var err error
		if ours, err = quant.Quantize(t, src, f.rows, f.cols, im); err != nil {
			return "", false, err
		}
	}
	var refBytes []byte
	var refQ, refDQ time.Duration
	if lib != nil {
		var err error
		quantizeRef := func() {
			refBytes, err = refQuantize(lib, t, src, f.rows, f.cols, im)
		}
		refQ = timeIt(f, quantizeRef)
		if err != nil {
			return "", false, err
		}
		if tr, _ := lib.Traits(uint32(t)); tr.HasToFloat() {
			refDQ = timeIt(f, func() { _, err = lib.ToFloat(uint32(t), refBytes, int64(n)) })
			if err != nil {
				return "", false, err
			}
		}
	}

	deqSrc := ours
	if deqSrc == nil {
		deqSrc = refBytes // lattice types: dequantize ggml's bytes
	}
	var q, dq time.Duration
	if ours != nil {
		q = timeIt(f, func() { _, _ = quant.QuantizeInto(ours, t, src, f.rows, f.cols, im) })
	}
	var deq []float32
	if deqSrc != nil && t.CanDequantize() {
		deq = make([]float32, n)
		dq = timeIt(f, func() { _ = quant.DequantizeInto(deq, t, deqSrc) })
	}
	if deq != nil {
		rmse, maxErr := quantError(src, deq)
		cols += fmt.Sprintf("%.3g\t%.3g\t", rmse, maxErr)
	} else {
		cols += "-\t-\t"
	}
	cols += speed(n, q) + "\t" + speed(n, dq) + "\t"
	if lib == nil {
		return cols, false, nil
	}

	refRMSE := "-"
	if refDQ > 0 {
		refDeq, err := lib.ToFloat(uint32(t), refBytes, int64(n))
		if err != nil {
			return "", false, err
		}
		r, _ := quantError(src, refDeq)
		refRMSE = fmt.Sprintf("%.3g", r)
	}
	match, mismatch := "n/a (no quantizer)", false
	if ours != nil {
		match = "match"
		if !bytes.Equal(ours, refBytes) {
			match, mismatch = "DIFFER", true
		}
	}
	cols += fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t", refRMSE, speed(n, refQ), speed(n, refDQ), ratio(refQ, q), ratio(refDQ, dq), match)
	return cols, mismatch, nil
}

// refQuantize is what ggml produces for quant.Quantize: ggml_quantize_chunk,
// or the CPU backend's from_float for the activation formats.
func refQuantize(lib *ggmlref.Lib, t quant.Type, src []float32, rows, cols int, im []float32) ([]byte, error) {
	if t == quant.Q8_1 || t == quant.Q8_K {
		return lib.FromFloatCPU(uint32(t), src)
	}
	return lib.QuantizeChunk(uint32(t), src, int64(rows), int64(cols), im)
}

func quantError(want, got []float32) (rmse, maxErr float64) {
	var sum float64
	for i := range want {
		d := math.Abs(float64(want[i]) - float64(got[i]))
		sum += d * d
		maxErr = max(maxErr, d)
	}
	return math.Sqrt(sum / float64(len(want))), maxErr
}

// timeIt returns the median time of fn after one warm-up run, over at least
// three runs and f.minTime.
func timeIt(f quantStatsFlags, fn func()) time.Duration {
	fn()
	var runs []time.Duration
	start := time.Now()
	for len(runs) < 3 || (time.Since(start) < f.minTime && len(runs) < f.maxIters) {
		t0 := time.Now()
		fn()
		runs = append(runs, time.Since(t0))
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i] < runs[j] })
	return runs[len(runs)/2]
}

func speed(n int, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(n*4)/d.Seconds()/1e6)
}

// ratio is our speed over ggml's (above 1: we are faster).
func ratio(ref, ours time.Duration) string {
	if ref <= 0 || ours <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", ref.Seconds()/ours.Seconds())
}
