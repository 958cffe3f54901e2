package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/optest"
)

type testOpsFlags struct {
	device  string
	ops     string
	ref     string
	seed    int64
	cases   string
	mode    string
	report  string
	threads int
	// refThreads are ggml's: one by default, since waking its workers
	// costs more than the small cases take.
	refThreads int
	verbose    bool
	quiet      bool
}

// progressOut is where test-ops draws its progress line: the terminal
// (stderr when it is one, set by main), or nil to stay quiet, so that
// output to a pipe or a file stays parseable.
var progressOut io.Writer

// runTestOps is ggml's test-backend-ops for our devices: the conformance
// cases on any registered device, through its own buffers, compared with a
// reference; or, with -mode support, the device's supports-op answer for
// every case.
func runTestOps(args []string, stdout io.Writer) error {
	var f testOpsFlags
	fs := flag.NewFlagSet("test-ops", flag.ContinueOnError)
	fs.StringVar(&f.device, "b", "CPU", "device under test: `NAME` as ggml devices lists it, optionally with parameters (NAME:key=value;key=value)")
	fs.StringVar(&f.ops, "o", "", "only these operations, comma-separated (e.g. ADD,MUL); default: all")
	fs.StringVar(&f.ref, "ref", "", "reference: ggml (the real library) or cpu (our CPU device on one thread); default ggml when it loads")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the inputs")
	fs.StringVar(&f.cases, "cases", "quick", "case set: quick or full")
	fs.StringVar(&f.mode, "mode", "test", "test (compute and compare) or support (print the device's supports-op answer for every case as CSV)")
	fs.StringVar(&f.report, "report", "", "also write the run to `FILE`.json and FILE.md (device, libraries, per-op counts, every failure)")
	fs.IntVar(&f.threads, "threads", 2, "threads of the device")
	fs.IntVar(&f.refThreads, "ref-threads", 1, "threads of the ggml reference")
	fs.BoolVar(&f.verbose, "v", false, "one line per case")
	fs.BoolVar(&f.quiet, "q", false, "no progress line, even on a terminal")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml test-ops [-b NAME] [-o OP,...] [-ref ggml|cpu] [-seed N] [-cases quick|full] [-threads N]\n"+
			"                     [-mode test|support] [-report FILE] [-v] [-q]\n\n"+
			"Runs the op conformance cases (test-backend-ops style) on a device through its own buffers and compares\n"+
			"the results with the real ggml or our CPU device; prints every failure, a per-op table and the totals,\n"+
			"and exits 1 on any failure. -mode support prints the device's supports-op answer for every case as CSV.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErrorf("%v", err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	if f.cases != "quick" && f.cases != "full" {
		return usageErrorf("-cases must be quick or full, not %q", f.cases)
	}
	if f.mode != "test" && f.mode != "support" {
		return usageErrorf("-mode must be test or support, not %q", f.mode)
	}
	if f.threads < 1 || f.refThreads < 1 {
		return usageErrorf("-threads and -ref-threads must be at least 1")
	}
	dev, opts, err := deviceFlag("-b", f.device)
	if err != nil {
		return err
	}
	opts.Threads = f.threads
	full := f.cases == "full"
	var only []string
	if f.ops != "" {
		only = strings.Split(f.ops, ",")
		if err := checkOps(full, only); err != nil {
			return err
		}
	}
	cases := optest.Cases(full, only)
	if f.mode == "support" {
		return writeSupport(stdout, dev, cases)
	}

	ref, closeRef, err := testOpsRef(f, stdout)
	if err != nil {
		return err
	}
	defer closeRef()
	fmt.Fprintf(stdout, "device %s (%s, %d threads) against %s: %d %s cases, seed %d\n",
		dev.Name(), dev.Description(), f.threads, ref.Name(), len(cases), f.cases, f.seed)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var bar *progressBar
	if progressOut != nil && !f.quiet && !f.verbose {
		bar = &progressBar{w: progressOut}
	}
	rep, runErr := optest.RunDevice(dev, optest.Options{
		Ref: ref, Cases: cases, Seed: f.seed, Backend: opts, Context: ctx,
		OnResult: func(i, n int, r optest.Result) {
			bar.update(i, n, r)
			switch {
			case f.verbose && r.Detail != "":
				fmt.Fprintf(stdout, "%-7s %s: %s\n", r.Status, r.Case.Name, r.Detail)
			case f.verbose:
				fmt.Fprintf(stdout, "%-7s %s\n", r.Status, r.Case.Name)
			case r.Status == optest.Failed:
				bar.clear()
				fmt.Fprintf(stdout, "FAILED  %s: %s\n", r.Case.Name, r.Detail)
			}
		},
	})
	bar.done()
	if rep == nil {
		return runErr
	}
	rep.Cases = f.cases
	fmt.Fprintln(stdout)
	if err := rep.Tally.WriteTable(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "time: %.2fs, %.0f cases/s\n", rep.Elapsed.Seconds(), float64(len(rep.Results))/rep.Elapsed.Seconds())
	fmt.Fprintln(stdout, rep.Tally.String())
	if f.report != "" {
		if err := writeReports(f.report, rep); err != nil {
			return err
		}
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			return fmt.Errorf("interrupted after %d of %d cases", len(rep.Results), len(cases))
		}
		return runErr
	}
	if n := rep.Tally.Count(optest.Failed); n > 0 {
		return fmt.Errorf("%d of %d cases failed", n, len(cases))
	}
	return nil
}

// writeReports writes rep to base.json and base.md (an extension .json or
// .md on base is dropped first).
func writeReports(base string, rep *optest.Report) error {
	switch filepath.Ext(base) {
	case ".json", ".md":
		base = strings.TrimSuffix(base, filepath.Ext(base))
	}
	for _, w := range []struct {
		ext   string
		write func(io.Writer) error
	}{{".json", rep.WriteJSON}, {".md", rep.WriteMarkdown}} {
		fl, err := os.Create(base + w.ext)
		if err != nil {
			return err
		}
		err = w.write(fl)
		if cerr := fl.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", base+w.ext, err)
		}
	}
	return nil
}

// writeSupport prints, for every case, whether dev supports its outputs,
// in the columns and quoting of test-backend-ops' CSV output
// (cpu_support.csv), so that two devices' answers can be diffed.
func writeSupport(w io.Writer, dev backend.Device, cases []optest.Case) error {
	reg := dev.Name()
	for _, r := range backend.Registries() {
		for _, d := range r.Devices() {
			if d.Name() == dev.Name() {
				reg = r.Name()
			}
		}
	}
	row := func(fields ...string) {
		for i, f := range fields {
			if i > 0 {
				io.WriteString(w, ",")
			}
			io.WriteString(w, `"`+strings.ReplaceAll(f, `"`, `""`)+`"`)
		}
		io.WriteString(w, "\n")
	}
	row("backend_name", "op_name", "op_params", "test_mode", "supported", "error_message", "backend_reg_name")
	for _, c := range cases {
		ok, err := optest.Supported(dev, c)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		op := optest.OpNameOf(c.Name)
		params := strings.TrimSuffix(strings.TrimPrefix(c.Name, op+"("), ")")
		yes, word := "1", "yes"
		if !ok {
			yes, word = "0", "no"
		}
		row(dev.Name(), op, params, "support", yes, word, reg)
	}
	return nil
}

// checkOps rejects operation names no case has.
func checkOps(full bool, only []string) error {
	known := map[string]bool{}
	for _, c := range optest.Cases(full, nil) {
		known[optest.OpNameOf(c.Name)] = true
	}
	var unknown []string
	for _, o := range only {
		if !known[strings.ToUpper(strings.TrimSpace(o))] {
			unknown = append(unknown, o)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	return usageErrorf("no cases for %s (operations with cases: %s)",
		strings.Join(unknown, ","), strings.Join(names, ","))
}

// testOpsRef opens the reference the flags ask for: the ggml mirror, or our
// CPU device on one thread (so a multi-threaded device is also checked for
// thread-count independence).
func testOpsRef(f testOpsFlags, stdout io.Writer) (optest.Executor, func(), error) {
	useGGML := f.ref == "ggml"
	switch f.ref {
	case "ggml", "cpu":
	case "":
		_, err := ggmlref.Default()
		useGGML = err == nil
		if !useGGML {
			fmt.Fprintf(stdout, "note: reference ggml not available, comparing with our CPU device (%v)\n", err)
		}
	default:
		return nil, nil, usageErrorf("-ref must be ggml or cpu, not %q", f.ref)
	}
	if !useGGML {
		ref, closeRef := optest.CPURef()
		return ref, closeRef, nil
	}
	lib, err := ggmlref.Default()
	if err != nil {
		return nil, nil, err
	}
	e, err := mirror.New(lib, f.refThreads)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(stdout, "reference: ggml %s (%s), CPU variant %s\n", lib.Version(), lib.Commit(), lib.Variant())
	return e, e.Close, nil
}

// progressBar draws "[#####.....] 1234/9872 cases, 0 failed, MUL_MAT" on
// one terminal line, at most ten times a second. A nil bar draws nothing.
type progressBar struct {
	w      io.Writer
	last   time.Time
	failed int
	drawn  bool
}

func (p *progressBar) update(i, n int, r optest.Result) {
	if p == nil {
		return
	}
	if r.Status == optest.Failed {
		p.failed++
	}
	if i < n && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	const width = 30
	done := width * i / max(n, 1)
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d cases, %d failed, %-20s", strings.Repeat("#", done), strings.Repeat(".", width-done), i, n, p.failed, r.Op)
	p.drawn = true
}

// clear erases the line, so that other output starts on a clean one.
func (p *progressBar) clear() {
	if p == nil || !p.drawn {
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 100))
	p.drawn = false
}

func (p *progressBar) done() { p.clear() }
