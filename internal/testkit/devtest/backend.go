package devtest

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// Backend is a fake device's backend. It records the nodes it was asked to
// compute, the sources of the copies into it and the ranges set into it,
// for tests to inspect.
type Backend struct {
	dev *Device
	eng *cpu.Engine
	q   *queue // nil for a synchronous device

	mu     sync.Mutex
	closed bool
	ran    []*graph.Tensor
	copied []string
	sets   [][2]uint64
	// placements are the ids of the computations (0: GraphCompute),
	// placed the graph each id was first given with (placed.go).
	placements []backend.PlacementID
	placed     map[backend.PlacementID]*placedRec
}

// Name is the device's name.
func (b *Backend) Name() string { return b.dev.Name() }

// Device is the device the backend was started from.
func (b *Backend) Device() backend.Device { return b.dev.face }

// Ran lists the nodes GraphCompute accepted, in order (view operations
// excepted).
func (b *Backend) Ran() []*graph.Tensor {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.ran)
}

// Copied lists the names of the sources of CopyTensorAsync calls.
func (b *Backend) Copied() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.copied)
}

// Sets lists the (offset, size) of every SetTensorAsync call.
func (b *Backend) Sets() [][2]uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.sets)
}

func (b *Backend) open() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("%w: %s backend", backend.ErrClosed, b.Name())
	}
	return nil
}

// do runs f now on a synchronous device, or queues it.
func (b *Backend) do(f func() error) error {
	if b.q == nil {
		return f()
	}
	b.q.push(f)
	return nil
}

// region is n bytes at offset at of a buffer's storage: where a tensor's
// memory is, taken when work is queued so that the work does not read the
// tensor again.
type region struct {
	st    buffer.Storage
	at, n uint64
}

// bytes is the region's memory, or an error when the buffer was freed
// while work on it was queued.
func (r region) bytes() ([]byte, error) {
	var mem []byte
	switch s := r.st.(type) {
	case *Storage:
		mem = s.mem
	case buffer.HostStorage:
		mem = s.Bytes()
	}
	if uint64(len(mem)) < r.at+r.n {
		return nil, fmt.Errorf("devtest: buffer freed while work on it was queued")
	}
	return mem, nil
}

// locate finds t's memory, which must be in the device's memory.
func (b *Backend) locate(t *graph.Tensor) (region, error) {
	bf, err := buffer.Of(t)
	if err != nil {
		return region{}, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if bf.Type() != b.dev.mem {
		return region{}, fmt.Errorf("%s: %s is in %s memory, not the device's", b.Name(), t, bf.Name())
	}
	st, at, err := buffer.Locate(t)
	if err != nil {
		return region{}, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return region{st, at, t.NBytes()}, nil
}

// part is the part of t's region that offset and size select.
func (b *Backend) part(t *graph.Tensor, offset uint64, size int) (region, error) {
	r, err := b.locate(t)
	if err != nil {
		return r, err
	}
	if end, carry := bits.Add64(offset, uint64(size), 0); carry != 0 || end > r.n {
		return r, fmt.Errorf("%w: %s: %d bytes at offset %d of %d", buffer.ErrOutOfBounds, t, size, offset, r.n)
	}
	return region{r.st, r.at + offset, uint64(size)}, nil
}

// SetTensorAsync writes data into t from offset: at once, or queued (data
// is then read when the queue gets there, so the caller keeps it until
// Synchronize).
func (b *Backend) SetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	if err := b.open(); err != nil {
		return err
	}
	b.mu.Lock()
	b.sets = append(b.sets, [2]uint64{offset, uint64(len(data))})
	b.mu.Unlock()
	return b.write(t, data, offset)
}

func (b *Backend) write(t *graph.Tensor, data []byte, offset uint64) error {
	return b.transfer(t, data, offset, true)
}

// GetTensorAsync reads t from offset into data: at once, or queued (data
// is then written when the queue gets there).
func (b *Backend) GetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	if err := b.open(); err != nil {
		return err
	}
	return b.transfer(t, data, offset, false)
}

// transfer copies between data and t's memory from offset, into the
// device when set, out of it otherwise, after the fault hook: at once, or
// queued. t's place is taken now.
func (b *Backend) transfer(t *graph.Tensor, data []byte, offset uint64, set bool) error {
	r, err := b.part(t, offset, len(data))
	if err != nil {
		return err
	}
	fault := b.dev.cfg.Faults.Get
	if set {
		fault = b.dev.cfg.Faults.Set
	}
	snap := *t
	return b.do(func() error {
		if fault != nil {
			if err := fault(&snap); err != nil {
				return err
			}
		}
		mem, err := r.bytes()
		if err != nil {
			return err
		}
		if dev := mem[r.at : r.at+r.n]; set {
			copy(dev, data)
		} else {
			copy(data, dev)
		}
		return nil
	})
}

// CopyTensorAsync copies src, computed on from, into dst: it waits for
// from, takes src's bytes now and writes them as SetTensorAsync does. An
// asynchronous device refuses a source on another asynchronous fake, whose
// queue it cannot order its own against.
func (b *Backend) CopyTensorAsync(from backend.Backend, src, dst *graph.Tensor) error {
	if err := b.open(); err != nil {
		return err
	}
	if fb, ok := from.(*Backend); ok && b.q != nil && fb.q != nil {
		return fmt.Errorf("%w: copy between two asynchronous fake backends", backend.ErrUnsupported)
	}
	if err := from.Synchronize(); err != nil {
		return err
	}
	data := make([]byte, src.NBytes())
	if err := buffer.GetTensor(src, data, 0); err != nil {
		return err
	}
	b.mu.Lock()
	b.copied = append(b.copied, src.Name)
	b.mu.Unlock()
	b.dev.log("copy %s", src.Name)
	return b.write(dst, data, 0)
}

// Synchronize waits for the queue and returns the first error its work
// met since the last Synchronize.
func (b *Backend) Synchronize() error {
	if err := b.open(); err != nil {
		return err
	}
	if b.q == nil {
		return nil
	}
	return b.q.wait()
}

// Close waits for the queue, stops it and the kernels' workers; closing
// twice is harmless.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	var err error
	if b.q != nil {
		err = b.q.close()
	}
	b.eng.Close()
	return err
}

// step is one node to compute, as GraphCompute found it: a copy of the
// node whose sources are copies too, and where each operand lies.
type step struct {
	node     *graph.Tensor
	operands []*graph.Tensor // node first, then its sources
	regions  []region        // the operands' memory; st nil for empty ones
}

// GraphCompute takes every node it computes from g (a copy of the node and
// of its sources, with the place of their memory) and computes them in
// order: at once, or queued. Every operand must be in the device's memory
// (anything else means a scheduler forgot a copy), and every node one the
// device supports.
func (b *Backend) GraphCompute(g *graph.Graph) error {
	b.mu.Lock()
	b.placements = append(b.placements, 0)
	b.mu.Unlock()
	return b.compute(g)
}

func (b *Backend) compute(g *graph.Graph) error {
	if g == nil {
		return fmt.Errorf("%w: nil graph", backend.ErrArgument)
	}
	if err := b.open(); err != nil {
		return err
	}
	var steps []step
	var ran []*graph.Tensor
	for _, n := range g.Nodes {
		// A view computes nothing, and a split may hold views of
		// another backend's tensors: backends skip them, as ggml's do.
		if n.Op == ops.None || n.Op.IsView() || n.IsEmpty() {
			continue
		}
		if !b.dev.SupportsOp(n) {
			return fmt.Errorf("%w: %s asked to run %s (%s), which it does not support", backend.ErrUnsupported, b.Name(), n.Name, n.Op)
		}
		s, err := b.snapshot(n)
		if err != nil {
			return fmt.Errorf("%s (of %s): %w", n.Name, n.Op, err)
		}
		steps = append(steps, s)
		ran = append(ran, n)
	}
	b.mu.Lock()
	b.ran = append(b.ran, ran...)
	b.mu.Unlock()
	return b.do(func() error {
		if d := b.dev.cfg.Faults.Delay; d > 0 {
			time.Sleep(d)
		}
		for _, s := range steps {
			if err := b.exec(s); err != nil {
				return err
			}
		}
		return nil
	})
}

func (b *Backend) snapshot(n *graph.Tensor) (step, error) {
	var s step
	copies := map[*graph.Tensor]*graph.Tensor{}
	add := func(t *graph.Tensor) (*graph.Tensor, error) {
		if c, ok := copies[t]; ok {
			return c, nil
		}
		c := *t
		c.Data, c.Src = nil, [graph.MaxSrc]*graph.Tensor{}
		var r region
		if !t.IsEmpty() {
			var err error
			if r, err = b.locate(t); err != nil {
				return nil, err
			}
		}
		copies[t] = &c
		s.operands, s.regions = append(s.operands, &c), append(s.regions, r)
		return &c, nil
	}
	node, err := add(n)
	if err != nil {
		return s, err
	}
	for i, src := range n.Src {
		if src != nil {
			if node.Src[i], err = add(src); err != nil {
				return s, err
			}
		}
	}
	s.node = node
	return s, nil
}

// span is a run of a storage's memory copied to the host for one node.
type span struct {
	st     buffer.Storage
	lo, hi uint64
	host   []byte
}

// exec computes one step: the operands' memory is copied to host memory
// (overlapping operands share their copy, so a node computed in place
// stays in place), the CPU kernel runs, and the node's bytes go back.
// Operands in host memory are used where they are.
func (b *Backend) exec(s step) error {
	var spans []*span
	for i, r := range s.regions {
		if r.st == nil {
			continue
		}
		if _, ok := r.st.(buffer.HostStorage); ok {
			mem, err := r.bytes()
			if err != nil {
				return err
			}
			s.operands[i].Data = mem[r.at : r.at+r.n : r.at+r.n]
			continue
		}
		spans = append(spans, &span{st: r.st, lo: r.at, hi: r.at + r.n})
	}
	spans = merge(spans)
	for _, sp := range spans {
		mem, err := region{sp.st, sp.lo, sp.hi - sp.lo}.bytes()
		if err != nil {
			return err
		}
		sp.host = append([]byte(nil), mem[sp.lo:sp.hi]...)
	}
	find := func(r region) (*span, []byte) {
		for _, sp := range spans {
			if sp.st == r.st && sp.lo <= r.at && r.at+r.n <= sp.hi {
				o := r.at - sp.lo
				return sp, sp.host[o : o+r.n : o+r.n]
			}
		}
		return nil, nil
	}
	for i, r := range s.regions {
		if r.st != nil && s.operands[i].Data == nil {
			_, s.operands[i].Data = find(r)
		}
	}
	f := b.dev.cfg.Faults
	if f.Compute != nil {
		if err := f.Compute(s.node); err != nil {
			return err
		}
	}
	if f.Tamper != nil {
		f.Tamper(s.node)
	}
	if err := b.eng.ComputeNode(s.node); err != nil {
		return err
	}
	r := s.regions[0]
	mem, err := r.bytes()
	if err != nil {
		return err
	}
	if sp, host := find(r); sp != nil {
		copy(mem[r.at:r.at+r.n], host)
	}
	if f.Corrupt != nil {
		f.Corrupt(s.node, mem, r.at)
	}
	return nil
}

// merge joins spans of the same storage that overlap.
func merge(spans []*span) []*span {
	order := map[buffer.Storage]int{}
	for _, sp := range spans {
		if _, ok := order[sp.st]; !ok {
			order[sp.st] = len(order)
		}
	}
	slices.SortFunc(spans, func(a, b *span) int {
		return cmp.Or(cmp.Compare(order[a.st], order[b.st]), cmp.Compare(a.lo, b.lo))
	})
	var out []*span
	for _, sp := range spans {
		if k := len(out) - 1; k >= 0 && out[k].st == sp.st && sp.lo < out[k].hi {
			out[k].hi = max(out[k].hi, sp.hi)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// queue runs work in order on a goroutine of its own.
type queue struct {
	work    chan func() error
	stopped chan struct{}
	pending sync.WaitGroup
	mu      sync.Mutex
	err     error
}

func newQueue() *queue {
	q := &queue{work: make(chan func() error, 16), stopped: make(chan struct{})}
	go q.run()
	return q
}

func (q *queue) run() {
	defer close(q.stopped)
	for f := range q.work {
		if err := f(); err != nil {
			q.mu.Lock()
			if q.err == nil {
				q.err = err
			}
			q.mu.Unlock()
		}
		q.pending.Done()
	}
}

func (q *queue) push(f func() error) {
	q.pending.Add(1)
	q.work <- f
}

// wait waits for the queued work and returns (and forgets) the first
// error it met.
func (q *queue) wait() error {
	q.pending.Wait()
	q.mu.Lock()
	defer q.mu.Unlock()
	err := q.err
	q.err = nil
	return err
}

func (q *queue) close() error {
	err := q.wait()
	close(q.work)
	<-q.stopped
	return err
}

// event counts its records; a wait is for the records made before it.
type event struct {
	dev               *Device
	id                int
	mu                sync.Mutex
	cond              *sync.Cond
	recorded, reached int
	freed             bool
}

func (e *event) Record(b backend.Backend) error {
	fb, ok := b.(*Backend)
	if !ok || fb.dev != e.dev {
		return fmt.Errorf("%w: event of %s recorded on %s", backend.ErrArgument, e.dev.Name(), b.Name())
	}
	e.mu.Lock()
	e.recorded++
	seq := e.recorded
	e.mu.Unlock()
	e.dev.log("record %d", e.id)
	return fb.do(func() error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.reached = max(e.reached, seq)
		e.cond.Broadcast()
		return nil
	})
}

func (e *event) Wait(b backend.Backend) error {
	fb, ok := b.(*Backend)
	if !ok {
		return fmt.Errorf("%w: wait on %s", backend.ErrUnsupported, b.Name())
	}
	e.mu.Lock()
	target := e.recorded
	e.mu.Unlock()
	e.dev.log("wait %d", e.id)
	return fb.do(func() error { e.block(target); return nil })
}

func (e *event) Synchronize() error {
	e.mu.Lock()
	target := e.recorded
	e.mu.Unlock()
	e.dev.log("sync %d", e.id)
	e.block(target)
	return nil
}

func (e *event) block(target int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for e.reached < target {
		e.cond.Wait()
	}
}

func (e *event) Free() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.freed {
		return fmt.Errorf("%w: event %d of %s freed twice", backend.ErrArgument, e.id, e.dev.Name())
	}
	e.freed = true
	return nil
}
