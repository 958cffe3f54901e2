package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ggml-go/ggml/backend"
)

// openBackends starts the backends a command runs a graph on: the device
// named by sel (a GGML_DEVICE-style entry, "NAME" or "NAME:key=value"), or
// when sel is empty the one GGML_DEVICE chooses, else the best device;
// then the CPU as the scheduler's fallback, unless the device is the CPU.
// closeAll closes them. Commands taking -device or -b share it, so any
// registered device runs the demo and the benchmarks.
func openBackends(sel string, threads int) (backends []backend.Backend, closeAll func(), err error) {
	var opts backend.Options
	if sel != "" {
		if opts, err = backend.ParseDeviceSelection(sel); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if len(opts.Devices) != 1 {
			return nil, nil, fmt.Errorf("%w: one device, not %q", errUsage, sel)
		}
		if _, err := backend.DeviceByName(opts.Devices[0]); err != nil {
			return nil, nil, fmt.Errorf("%w: %v (devices: %s)", errUsage, err, deviceNames())
		}
	} else if opts, err = backend.OptionsFromEnv(); err != nil {
		return nil, nil, err
	}
	opts.Threads = threads
	main, err := backend.Init(opts)
	if err != nil {
		return nil, nil, err
	}
	if main.Device().Type() == backend.DeviceCPU {
		return []backend.Backend{main}, func() { main.Close() }, nil
	}
	cpu, err := backend.Init(backend.Options{Devices: []string{"CPU"}, Threads: threads})
	if err != nil {
		main.Close()
		return nil, nil, err
	}
	return []backend.Backend{main, cpu}, func() { main.Close(); cpu.Close() }, nil
}

// writeProfile prints a scheduler profile, one line per backend, and the
// host time around the backends' work in a computation of wall time.
func writeProfile(w io.Writer, prof []backend.BackendProfile, wall time.Duration) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "device\tnodes\tsplits\tcopies\tcompute\tcopy in\t")
	var busy time.Duration
	for _, p := range prof {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t\n", p.Backend.Name(), p.Nodes, p.Splits, p.Copies, ms(p.Compute), ms(p.Copy))
		busy += p.Compute + p.Copy
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "host time around the devices: %s of %s\n", ms(max(wall-busy, 0)), ms(wall))
	return err
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }
