package optest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Options configure RunDevice.
type Options struct {
	// Ref is the reference the device is compared with. Nil means the
	// real ggml through the mirror (DefaultRef); RunDevice fails when it
	// does not load.
	Ref Executor
	// Cases are the cases to run; nil means Cases(Full, Ops).
	Cases []Case
	// Full selects every case instead of the quick subset; Ops keeps only
	// the cases of these operations (all when empty). Both apply only
	// when Cases is nil.
	Full bool
	Ops  []string
	// Seed draws the inputs.
	Seed int64
	// Backend configures the backend started from the device.
	Backend backend.Options
	// Context, when set, stops the run between cases once it is done;
	// RunDevice then returns the cases run so far and the context's
	// error.
	Context context.Context
	// OnResult, when set, is called after each case with its position
	// (from 1) among n.
	OnResult func(i, n int, r Result)
	// MaxReopens bounds how often RunDevice restarts a backend that a
	// failed case left broken (a DSP session the case made fail): 0 means
	// DefaultMaxReopens, a negative value never. Past the bound the run
	// stops with an error.
	MaxReopens int
}

// DefaultMaxReopens is MaxReopens' default.
const DefaultMaxReopens = 5

// Report is the outcome of a RunDevice run.
type Report struct {
	// Device is the device's description.
	Device backend.Props
	// Reference names the reference ("ggml", "CPU").
	Reference string
	Seed      int64
	// Libraries are the Go version and the native libraries the device
	// and the reference report (Versioner), by name.
	Libraries map[string]string
	// Cases describes the case set, for reports ("quick", "full").
	Cases string
	// Results holds every case's result, in order.
	Results []Result
	Tally   Tally
	Elapsed time.Duration
}

// Failures are the results that failed.
func (r *Report) Failures() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Status == Failed {
			out = append(out, x)
		}
	}
	return out
}

// DefaultRef opens the real ggml's CPU backend, on one thread, as a
// reference; close releases it.
func DefaultRef() (ref Executor, close func(), err error) {
	lib, err := ggmlref.Default()
	if err != nil {
		return nil, nil, err
	}
	e, err := mirror.New(lib, 1)
	if err != nil {
		return nil, nil, err
	}
	return e, e.Close, nil
}

// CPURef is our CPU device on one thread as a reference (how accelerators
// are checked where the real ggml is not at hand); close releases it.
func CPURef() (ref Executor, close func()) {
	eng := cpu.New(cpu.Options{Threads: 1})
	return CPU{eng}, eng.Close
}

// RunDevice runs the conformance cases on a backend started from dev,
// through the device's own memory, and compares every output with the
// reference's (see RunBackend). The error reports a run that could not
// start or was cancelled, never a failed case: those are in the report.
func RunDevice(dev backend.Device, opts Options) (*Report, error) {
	ref := opts.Ref
	if ref == nil {
		r, closeRef, err := DefaultRef()
		if err != nil {
			return nil, fmt.Errorf("optest: the reference ggml: %w", err)
		}
		defer closeRef()
		ref = r
	}
	if err := backend.Availability(dev); err != nil {
		return nil, err
	}
	if err := backend.CheckCaps(dev); err != nil {
		return nil, err
	}
	be, err := dev.Init(opts.Backend)
	if err != nil {
		return nil, fmt.Errorf("optest: starting %s: %w", dev.Name(), err)
	}
	cases := opts.Cases
	if cases == nil {
		cases = Cases(opts.Full, opts.Ops)
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	rep := &Report{Device: dev.Props(), Reference: ref.Name(), Seed: opts.Seed, Libraries: libraries(dev, ref)}
	if opts.Cases == nil {
		rep.Cases = "quick"
		if opts.Full {
			rep.Cases = "full"
		}
	}
	maxReopens := opts.MaxReopens
	if maxReopens == 0 {
		maxReopens = DefaultMaxReopens
	}
	reopens := 0
	start := time.Now()
	for i, c := range cases {
		if err = ctx.Err(); err != nil {
			break
		}
		r := RunBackend(c, be, ref, opts.Seed)
		var broke error
		if r.Status == Failed {
			// A healthy backend synchronizes after a failed case; one that
			// does not would fail every later case with the same error, so
			// a report from a real device would cover nothing after it.
			broke = be.Synchronize()
		}
		if broke != nil {
			if reopens >= maxReopens {
				err = fmt.Errorf("optest: %s broke %d times, the last at case %s (%v): run stopped", dev.Name(), reopens+1, c.Name, broke)
			} else if nb, ierr := reopen(dev, be, opts.Backend); ierr != nil {
				err = fmt.Errorf("optest: case %s broke %s and it did not restart: %w", c.Name, dev.Name(), ierr)
				be = nil
			} else {
				be = nb
				reopens++
				r.Detail += fmt.Sprintf(" (it broke the backend; restarted, %d of at most %d)", reopens, maxReopens)
			}
		}
		rep.Results = append(rep.Results, r)
		rep.Tally.Add(r)
		if opts.OnResult != nil {
			opts.OnResult(i+1, len(cases), r)
		}
		if err != nil {
			break
		}
	}
	rep.Elapsed = time.Since(start)
	if be != nil {
		err = errors.Join(err, be.Close())
	}
	return rep, err
}

// reopen closes a broken backend and starts another on dev (for the
// Hexagon device, a new backend reopens the failed session).
func reopen(dev backend.Device, be backend.Backend, o backend.Options) (backend.Backend, error) {
	_ = be.Close() // it reports the failure the case already recorded
	return dev.Init(o)
}

// TestDevice is RunDevice for a package's tests: every failed case is an
// error of t naming the case, and a run in which no case passed is one
// too (a device that supports nothing proves nothing). Without opts.Ref
// it compares with the real ggml when it loads, else (unless
// GGML_REF_REQUIRED=1 makes that a failure) with our CPU device. It logs
// the per-operation table and returns the report.
func TestDevice(t testing.TB, dev backend.Device, opts Options) *Report {
	t.Helper()
	if opts.Ref == nil {
		ref, closeRef, err := DefaultRef()
		if err != nil {
			if os.Getenv(ggmlref.EnvRequired) == "1" {
				t.Fatalf("the reference ggml: %v (%s=1)", err, ggmlref.EnvRequired)
			}
			t.Logf("the reference ggml is not available (%v): comparing with our CPU device", err)
			ref, closeRef = CPURef()
		}
		defer closeRef()
		opts.Ref = ref
	}
	rep, err := RunDevice(dev, opts)
	if err != nil {
		t.Fatalf("%s: %v", dev.Name(), err)
	}
	for _, r := range rep.Failures() {
		t.Errorf("%s on %s: %s", r.Case.Name, dev.Name(), r.Detail)
	}
	var table strings.Builder
	if err := rep.Tally.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s against %s, seed %d:\n%s%s", dev.Name(), rep.Reference, rep.Seed, table.String(), rep.Tally.String())
	if rep.Tally.Count(Passed) == 0 {
		t.Errorf("%s: no case passed (%s)", dev.Name(), rep.Tally.String())
	}
	return rep
}

// sentinelFloats is the size of the sentinel tensors placed between a
// case's tensors, as test-backend-ops does.
const sentinelFloats = 1024

var sentinelPattern = func() []byte {
	b := make([]byte, 4*sentinelFloats)
	for i := range b {
		b[i] = byte(0xa5 ^ i*7)
	}
	return b
}()

// sentinel is a tensor placed after tensor after; its bytes must not
// change.
type sentinel struct {
	t, after *graph.Tensor
}

// placement is a case's tensors in a device's memory.
type placement struct {
	bufs      []buffer.Buffer
	sentinels []sentinel
	weights   map[*graph.Tensor]bool
}

func (p *placement) free() error {
	if p == nil {
		return nil
	}
	var errs []error
	for _, b := range p.bufs {
		errs = append(errs, b.Free())
	}
	return errors.Join(errs...)
}

// weightsOf returns the leafs of g that are weights: the matrix operand of a
// MUL_MAT, MUL_MAT_ID or OUT_PROD, or the table of a GET_ROWS (directly or
// through views), never written by a node. Models keep those in WEIGHTS
// buffers, where devices repack them.
func weightsOf(g *graph.Graph) map[*graph.Tensor]bool {
	root := func(t *graph.Tensor) *graph.Tensor {
		if t.ViewSrc != nil {
			return t.ViewSrc
		}
		return t
	}
	w := map[*graph.Tensor]bool{}
	for _, n := range g.Nodes {
		switch n.Op {
		case ops.MulMat, ops.MulMatID, ops.OutProd, ops.GetRows:
			if s := n.Src[0]; s != nil && root(s).Op == ops.None {
				w[root(s)] = true
			}
		}
	}
	for _, n := range g.Nodes {
		if !n.Op.IsView() {
			delete(w, root(n))
		}
	}
	return w
}

// place allocates the tensors of in in dev's buffer type, weights in a
// buffer of their own with UsageWeights, each tensor followed by a
// sentinel (and the first preceded by one).
func place(dev backend.Device, in *instance) (*placement, error) {
	bt := dev.BufferType()
	if bt == nil {
		return nil, fmt.Errorf("%s has no buffer type", dev.Name())
	}
	p := &placement{weights: weightsOf(in.graph)}
	sc := graph.NewContext(graph.ContextOptions{})
	newSentinel := func(after *graph.Tensor) *graph.Tensor {
		s := sc.NewTensor(quant.F32, sentinelFloats)
		s.Name = "sentinel"
		p.sentinels = append(p.sentinels, sentinel{s, after})
		return s
	}
	var lists [2][]*graph.Tensor // compute tensors, weights
	for _, t := range in.ctx.Tensors() {
		root, k := t, 0
		if t.ViewSrc != nil {
			root = t.ViewSrc
		}
		if p.weights[root] {
			k = 1
		}
		if len(lists[k]) == 0 {
			lists[k] = append(lists[k], newSentinel(nil))
		}
		lists[k] = append(lists[k], t)
		if t.ViewSrc == nil {
			lists[k] = append(lists[k], newSentinel(t))
		}
	}
	for k, ts := range lists {
		if len(ts) == 0 {
			continue
		}
		b, err := buffer.AllocTensors(bt, ts)
		if err != nil {
			return p, fmt.Errorf("allocating in %s: %w", bt.Name(), err)
		}
		if b == nil {
			continue
		}
		p.bufs = append(p.bufs, b)
		if k == 1 {
			b.SetUsage(buffer.UsageWeights)
		}
	}
	for _, s := range p.sentinels {
		if err := buffer.SetTensor(s.t, sentinelPattern, 0); err != nil {
			return p, fmt.Errorf("setting a sentinel: %w", err)
		}
	}
	return p, nil
}

// RunBackend computes case c on backend be through its device's memory and
// on ref, with inputs drawn from seed, and compares the outputs, as
// test-backend-ops does: a case the device's SupportsOp refuses for any
// node (or the reference refuses) is skipped; the case's tensors are
// allocated in the device's buffer type with the tensor allocator, the
// weights (see weightsOf) in a buffer of their own with UsageWeights and
// set with buffer.SetTensor, the other inputs set with SetTensorAsync;
// after GraphCompute the outputs and the sentinels placed between the
// tensors are read with GetTensorAsync and Synchronize. An error from the
// device, a changed sentinel or an output beyond the case's tolerance
// fails the case.
func RunBackend(c Case, be backend.Backend, ref Executor, seed int64) (r Result) {
	r = Result{Case: c, Op: OpNameOf(c.Name)}
	dev := be.Device()
	if c.GGMLBug != "" && ref.Name() == "ggml" {
		return r.skip("known ggml 0.25.1 bug: %s", c.GGMLBug)
	}
	h, err := build(c)
	if err != nil {
		return r.fail("build: %v", err)
	}
	d, err := buildGraph(c)
	if err != nil {
		return r.fail("build: %v", err)
	}
	for _, n := range d.graph.Nodes {
		if !dev.SupportsOp(n) {
			return r.skip("%s: not supported: %s", dev.Name(), describeNode(n))
		}
	}
	if err := ref.Supports(h.graph); err != nil {
		return r.skip("%s: %v", ref.Name(), err)
	}
	if err := h.fill(c, seed); err != nil {
		return r.fail("inputs: %v", err)
	}
	p, err := place(dev, d)
	defer func() {
		// A case that failed midway may leave work queued on the
		// buffers: wait for it before freeing them.
		if err := errors.Join(be.Synchronize(), p.free()); err != nil && r.Status != Failed {
			r = r.fail("%s: freeing the buffers: %v", dev.Name(), err)
		}
	}()
	if err != nil {
		return r.fail("%s: %v", dev.Name(), err)
	}
	host := map[*graph.Tensor]*graph.Tensor{}
	hts := h.ctx.Tensors()
	for i, t := range d.ctx.Tensors() {
		host[t] = hts[i]
	}
	for _, t := range d.graph.Leafs {
		src := host[t]
		if t.ViewSrc != nil || src.Data == nil || t.IsEmpty() {
			continue
		}
		if p.weights[t] {
			err = buffer.SetTensor(t, src.Data, 0)
		} else {
			err = be.SetTensorAsync(t, src.Data, 0)
		}
		if err != nil {
			return r.fail("%s: setting %s: %v", dev.Name(), t, err)
		}
	}
	if err := be.GraphCompute(d.graph); err != nil {
		return r.fail("%s: %v", dev.Name(), err)
	}
	got := make([][]byte, len(d.outputs))
	for i, o := range d.outputs {
		got[i] = make([]byte, o.NBytes())
		if err := be.GetTensorAsync(o, got[i], 0); err != nil {
			return r.fail("%s: getting output %d: %v", dev.Name(), i, err)
		}
	}
	guards := make([][]byte, len(p.sentinels))
	for i, s := range p.sentinels {
		guards[i] = make([]byte, len(sentinelPattern))
		if err := be.GetTensorAsync(s.t, guards[i], 0); err != nil {
			return r.fail("%s: getting a sentinel: %v", dev.Name(), err)
		}
	}
	if err := be.Synchronize(); err != nil {
		return r.fail("%s: %v", dev.Name(), err)
	}
	if err := ref.Compute(h.graph); err != nil {
		return r.fail("%s: %v", ref.Name(), err)
	}
	for i, s := range p.sentinels {
		if j := firstByteDiff(guards[i], sentinelPattern); j >= 0 {
			where := "before the first tensor"
			if s.after != nil {
				where = "after " + s.after.String()
			}
			return r.fail("%s: the sentinel %s changed at byte %d: a write outside the case's tensors", dev.Name(), where, j)
		}
	}
	for i, o := range d.outputs {
		dt := *o
		dt.Data = got[i]
		gf, err := Floats(&dt)
		if err != nil {
			return r.fail("output %d: %v", i, err)
		}
		want, err := Floats(h.outputs[i])
		if err != nil {
			return r.fail("reference output %d: %v", i, err)
		}
		// The host's tensor: a comparison may read the sources (TOP_K's
		// ties), which only the host has in memory.
		if err := compare(c.Tol, want, gf, h.outputs[i]); err != nil {
			return r.fail("output %d (%s): %v", i, o.Name, err)
		}
	}
	r.Status = Passed
	return r
}

func firstByteDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// describeNode names a node's operation, types and shapes for a skip.
func describeNode(n *graph.Tensor) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %v", n.OpDesc(), n.Type, n.Ne)
	for i, s := range n.Src {
		if s != nil {
			fmt.Fprintf(&b, " src%d=%s%v", i, s.Type, s.Ne)
		}
	}
	return b.String()
}

// Supported reports whether dev's SupportsOp accepts every output of case
// c, as test-backend-ops' support mode asks (the cases' other nodes are
// views and helpers the device may leave to a fallback).
func Supported(dev backend.Device, c Case) (bool, error) {
	in, err := buildGraph(c)
	if err != nil {
		return false, err
	}
	for _, o := range in.outputs {
		if !dev.SupportsOp(o) {
			return false, nil
		}
	}
	return true, nil
}
