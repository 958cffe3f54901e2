package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ggml-go/ggml/backend"
)

func runDevices(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml devices\n\nLists every registered device, and why an unavailable one cannot be used.")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	printDevices(stdout, backend.Devices())
	return nil
}

// printDevices writes a table of devs, then, for each unavailable one,
// the reason and every path searched for its library.
func printDevices(w io.Writer, devs []backend.Device) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tSTATUS\tMEMORY FREE/TOTAL\tCAPS\tDESCRIPTION")
	var unavailable []*backend.Unavailable
	for _, d := range devs {
		p := d.Props()
		status, mem, caps := "available", memory(p.MemoryFree, p.MemoryTotal), p.Caps.String()
		if u, ok := d.(*backend.Unavailable); ok {
			status, mem, caps = "unavailable", "-", "-"
			unavailable = append(unavailable, u)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Type, status, mem, caps, p.Description)
	}
	tw.Flush()
	if len(devs) == 0 {
		fmt.Fprintln(w, "no devices registered")
	}
	// The CPU says which architecture level and kernels it computes with;
	// devices that hold converted weights (OpenVINO) say how much weight
	// memory they hold in this process, so weights held twice show.
	writeKernelReports(w, devs)
	writeWeightReports(w, devs)
	// Devices on a native library found by a search (OpenVINO) say which
	// file they loaded and where they looked.
	for _, d := range devs {
		if lr, ok := d.(libraryReporter); ok {
			for _, l := range lr.LibraryReport() {
				fmt.Fprintf(w, "%s: %s\n", d.Name(), l)
			}
		}
	}
	for _, u := range unavailable {
		r := u.Reason
		fmt.Fprintf(w, "\n%s: %s", u.Name(), r.Kind)
		if r.Library != "" {
			fmt.Fprintf(w, " (%s)", r.Library)
		}
		fmt.Fprintln(w)
		switch r.Kind {
		case backend.SymbolMissing:
			fmt.Fprintf(w, "  missing symbol: %s\n", r.Symbol)
		case backend.VersionTooOld:
			fmt.Fprintf(w, "  version %s, need %s or newer\n", r.Version, r.MinVersion)
		}
		for _, p := range r.Tried {
			fmt.Fprintf(w, "  searched: %s\n", p)
		}
		// A library not found is said by the paths above; its error
		// would list them all again.
		if r.Err != nil && !(r.Kind == backend.LibraryNotFound && len(r.Tried) > 0) {
			fmt.Fprintf(w, "  error: %v\n", r.Err)
		}
	}
}

// memory formats bytes as GiB with one decimal, or "unknown" for 0.
func memory(free, total uint64) string {
	if total == 0 {
		return "unknown"
	}
	const gib = 1 << 30
	return fmt.Sprintf("%.1f/%.1f GiB", float64(free)/gib, float64(total)/gib)
}

// kernelReporter is a device that reports the kernels it computes with.
type kernelReporter interface{ KernelReport() string }

// writeKernelReports prints a line per device of devs that reports its
// kernels.
func writeKernelReports(w io.Writer, devs []backend.Device) {
	for _, d := range devs {
		if kr, ok := d.(kernelReporter); ok {
			fmt.Fprintf(w, "%s: %s\n", d.Name(), kr.KernelReport())
		}
	}
}

// libraryReporter is a device that says which native library it loaded
// and where it searched for it.
type libraryReporter interface{ LibraryReport() []string }

// weightReporter is a device that reports the weight memory it holds.
type weightReporter interface{ WeightReport() string }

// writeWeightReports prints a line per device of devs that reports the
// weight memory it holds.
func writeWeightReports(w io.Writer, devs []backend.Device) {
	for _, d := range devs {
		if wr, ok := d.(weightReporter); ok {
			fmt.Fprintf(w, "%s: %s\n", d.Name(), wr.WeightReport())
		}
	}
}
