package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ggml-go/ggml/backend"
)

// deviceFlag finds the device a flag (-b, -device) names, with the
// parameters it may carry as GGML_DEVICE's entries do ("NAME" or
// "NAME:key=value;key=value").
func deviceFlag(flagName, s string) (backend.Device, backend.Options, error) {
	sel, err := backend.ParseDeviceSelection(s)
	if err != nil {
		return nil, backend.Options{}, usageErrorf("%s: %v", flagName, err)
	}
	if len(sel.Devices) != 1 {
		return nil, backend.Options{}, usageErrorf("%s takes one device, not %q", flagName, s)
	}
	dev, err := backend.DeviceByName(sel.Devices[0])
	if err != nil {
		return nil, backend.Options{}, usageErrorf("%s: %v", flagName, err)
	}
	return dev, sel, nil
}

// openBackends starts the backends a command runs a graph on: the device
// named by sel (a -device or -b value), or when sel is empty the one
// GGML_DEVICE chooses, else the best device; then the CPU as the
// scheduler's fallback, unless the device is the CPU. Commands taking
// -device or -b share it, so any registered device runs the demo and the
// benchmarks.
func openBackends(flagName, sel string, threads int) ([]backend.Backend, error) {
	var opts backend.Options
	var err error
	if sel != "" {
		if _, opts, err = deviceFlag(flagName, sel); err != nil {
			return nil, err
		}
	} else if opts, err = backend.OptionsFromEnv(); err != nil {
		return nil, err
	}
	opts.Threads = threads
	return backend.InitWithCPU(opts)
}

// bestDeviceName names the device GGML_DEVICE chooses, else the best
// device, for commands that take a device by name (an empty -b).
func bestDeviceName() (string, error) {
	b, err := backend.InitBest()
	if err != nil {
		return "", err
	}
	name := b.Device().Name()
	return name, b.Close()
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
