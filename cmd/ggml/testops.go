package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/internal/ggmlref"
	"github.com/ggml-go/ggml/internal/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/optest"
)

type testOpsFlags struct {
	device  string
	ops     string
	ref     string
	seed    int64
	cases   string
	threads int
	// refThreads are ggml's: one by default, since waking its workers
	// costs more than the small cases take.
	refThreads int
	verbose    bool
}

// runTestOps is ggml's test-backend-ops for our devices: the conformance
// cases on a device, compared with a reference.
func runTestOps(args []string, stdout io.Writer) error {
	var f testOpsFlags
	fs := flag.NewFlagSet("test-ops", flag.ContinueOnError)
	fs.StringVar(&f.device, "b", "CPU", "device under test (CPU)")
	fs.StringVar(&f.ops, "o", "", "only these operations, comma-separated (e.g. ADD,MUL); default: all")
	fs.StringVar(&f.ref, "ref", "", "reference: ggml (the real library) or cpu (our CPU device on one thread); default ggml when it loads")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the inputs")
	fs.StringVar(&f.cases, "cases", "quick", "case set: quick or full")
	fs.IntVar(&f.threads, "threads", 2, "threads of the device")
	fs.IntVar(&f.refThreads, "ref-threads", 1, "threads of the ggml reference")
	fs.BoolVar(&f.verbose, "v", false, "one line per case")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if f.device != "CPU" {
		return fmt.Errorf("%w: unknown device %q (devices: CPU)", errUsage, f.device)
	}
	if f.cases != "quick" && f.cases != "full" {
		return fmt.Errorf("%w: -cases must be quick or full, not %q", errUsage, f.cases)
	}
	if f.threads < 1 || f.refThreads < 1 {
		return fmt.Errorf("%w: -threads and -ref-threads must be at least 1", errUsage)
	}
	full := f.cases == "full"
	var only []string
	if f.ops != "" {
		only = strings.Split(f.ops, ",")
		if err := checkOps(full, only); err != nil {
			return err
		}
	}
	cases := optest.Cases(full, only)

	ref, closeRef, err := testOpsRef(f, stdout)
	if err != nil {
		return err
	}
	defer closeRef()
	eng := cpu.New(cpu.Options{Threads: f.threads})
	defer eng.Close()
	dut := optest.CPU{Engine: eng}
	fmt.Fprintf(stdout, "device %s (%d threads) against %s: %d %s cases, seed %d\n",
		dut.Name(), f.threads, ref.Name(), len(cases), f.cases, f.seed)

	var tally optest.Tally
	start := time.Now()
	for _, c := range cases {
		r := optest.Run(c, dut, ref, f.seed)
		tally.Add(r)
		switch {
		case f.verbose && r.Detail != "":
			fmt.Fprintf(stdout, "%-7s %s: %s\n", r.Status, c.Name, r.Detail)
		case f.verbose:
			fmt.Fprintf(stdout, "%-7s %s\n", r.Status, c.Name)
		case r.Status == optest.Failed:
			fmt.Fprintf(stdout, "FAILED  %s: %s\n", c.Name, r.Detail)
		}
	}
	elapsed := time.Since(start)
	fmt.Fprintln(stdout)
	if err := tally.WriteTable(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "time: %.2fs, %.0f cases/s\n", elapsed.Seconds(), float64(len(cases))/elapsed.Seconds())
	fmt.Fprintln(stdout, tally.String())
	if n := tally.Count(optest.Failed); n > 0 {
		return fmt.Errorf("%d of %d cases failed", n, len(cases))
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
	return fmt.Errorf("%w: no cases for %s (operations with cases: %s)", errUsage,
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
		return nil, nil, fmt.Errorf("%w: -ref must be ggml or cpu, not %q", errUsage, f.ref)
	}
	if !useGGML {
		eng := cpu.New(cpu.Options{Threads: 1})
		return optest.CPU{Engine: eng}, eng.Close, nil
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
