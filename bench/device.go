package bench

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"

	// The CPU device registers itself; it is the default and the fallback.
	_ "github.com/ggml-go/ggml/devices/cpu"
)

// Workload is a graph both sides of a figure compute: Build makes it in a
// context (called once per side, so each gets tensors of its own) and Data
// gives each leaf's contents, by its name and shape.
type Workload struct {
	Build func(c *graph.Context) (*graph.Graph, error)
	Data  func(t *graph.Tensor) ([]byte, error)
}

// Device runs our side of a benchmark on a device picked by name (the
// commands' -b NAME), through a scheduler with the CPU as fallback for what
// the device cannot compute, as an application would.
type Device struct {
	backends []backend.Backend
	threads  int
}

// OpenDevice starts the device called name ("" or "CPU": the CPU device)
// with threads CPU threads (0: all).
func OpenDevice(name string, threads int) (*Device, error) {
	if name == "" {
		name = "CPU"
	}
	if _, err := backend.DeviceByName(name); err != nil {
		return nil, err
	}
	main, err := backend.Init(backend.Options{Devices: []string{name}, Threads: threads})
	if err != nil {
		return nil, err
	}
	d := &Device{backends: []backend.Backend{main}, threads: threads}
	if main.Device().Type() != backend.DeviceCPU {
		cpu, err := backend.Init(backend.Options{Devices: []string{"CPU"}, Threads: threads})
		if err != nil {
			_ = main.Close()
			return nil, err
		}
		d.backends = append(d.backends, cpu)
	}
	return d, nil
}

// Name is the device's name.
func (d *Device) Name() string { return d.backends[0].Name() }

// Description is the device's description.
func (d *Device) Description() string { return d.backends[0].Device().Description() }

// Close stops the backends.
func (d *Device) Close() error {
	var errs []error
	for _, b := range d.backends {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}

// Loaded is a workload placed on the device, ready to compute repeatedly.
type Loaded struct {
	g     *graph.Graph
	sched *backend.Scheduler
	bufs  []buffer.Buffer
	// Repacked names the leaves placed in an extra buffer type.
	Repacked []string
}

// Load builds w, puts its leaves in the device's memory (as weights) with
// their data and has the scheduler place and allocate the rest.
func (d *Device) Load(w Workload) (*Loaded, error) { return d.LoadWith(w, false) }

// LoadWith is Load that, with repack, places each leaf in the first of the
// device's extra buffer types (backend.ExtraBufferTyper: the CPU's
// CPU_REPACK) that takes it and where the device still runs every node
// reading it, as llama.cpp places weights; the others go to the device's
// buffer type.
func (d *Device) LoadWith(w Workload, repack bool) (_ *Loaded, err error) {
	// Not the named result: a failing return sets that to nil before the
	// deferred Close runs.
	l := &Loaded{}
	defer func() {
		if err != nil {
			_ = l.Close()
		}
	}()
	if l.sched, err = backend.NewScheduler(d.backends, backend.SchedulerOptions{}); err != nil {
		return nil, err
	}
	if l.g, err = w.Build(graph.NewContext(graph.ContextOptions{})); err != nil {
		return nil, err
	}
	dev := d.backends[0].Device()
	bt := dev.BufferType()
	for _, t := range l.g.Leafs {
		if t.ViewSrc != nil || t.Buffer != nil {
			continue
		}
		if repack {
			b, err := PlaceExtra(dev, l.g, t)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
			if b != nil {
				l.bufs = append(l.bufs, b)
				l.Repacked = append(l.Repacked, t.Name)
			}
		}
		if t.Buffer == nil {
			b, err := bt.Alloc(bt.AllocSize(t))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
			l.bufs = append(l.bufs, b)
			b.SetUsage(buffer.UsageWeights)
			if err := b.AllocTensor(t, 0); err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
		}
		data, err := w.Data(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		if err := buffer.SetTensor(t, data, 0); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	if err := l.sched.AllocGraph(l.g); err != nil {
		return nil, err
	}
	return l, nil
}

// PlaceExtra puts t, a leaf of g without memory, in a buffer of the
// first extra buffer type of dev (backend.ExtraBufferTyper) that takes it
// and where dev runs every node of g reading t, as weights; nil when none
// does, and t is left without memory.
func PlaceExtra(dev backend.Device, g *graph.Graph, t *graph.Tensor) (buffer.Buffer, error) {
	xt, ok := dev.(backend.ExtraBufferTyper)
	if !ok {
		return nil, nil
	}
	for _, bt := range xt.ExtraBufferTypes() {
		b, err := bt.Alloc(bt.AllocSize(t))
		if err != nil {
			return nil, err
		}
		b.SetUsage(buffer.UsageWeights)
		if err := b.AllocTensor(t, 0); err != nil {
			_ = b.Free()
			if !errors.Is(err, errors.ErrUnsupported) {
				return nil, err
			}
			continue
		}
		usable := true
		for _, n := range g.Nodes {
			if slices.Contains(n.Src[:], t) && !dev.SupportsOp(n) {
				usable = false
			}
		}
		if usable {
			return b, nil
		}
		t.Buffer, t.Data = nil, nil
		_ = b.Free()
	}
	return nil, nil
}

// Compute computes the graph once.
func (l *Loaded) Compute() error { return l.sched.GraphCompute(l.g) }

// Splits is the number of pieces the scheduler cut the graph into (1: the
// device ran all of it).
func (l *Loaded) Splits() int { return l.sched.NSplits() }

// Output reads the graph's last node.
func (l *Loaded) Output() ([]byte, error) {
	out := l.g.Nodes[len(l.g.Nodes)-1]
	raw := make([]byte, out.NBytes())
	return raw, buffer.GetTensor(out, raw, 0)
}

// Close frees the scheduler and the leaves' memory.
func (l *Loaded) Close() error {
	var errs []error
	if l.sched != nil {
		errs = append(errs, l.sched.Close())
	}
	for _, b := range l.bufs {
		errs = append(errs, b.Free())
	}
	return errors.Join(errs...)
}

// ParseList splits a comma-separated flag value, dropping empty items.
func ParseList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
