package backend

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// MaxSchedBackends is the most backends a Scheduler takes
// (GGML_SCHED_MAX_BACKENDS).
const MaxSchedBackends = 16

// MaxSplitInputs is the number of inputs past which a split ends rather
// than take another input that needs a copy (GGML_SCHED_MAX_SPLIT_INPUTS).
const MaxSplitInputs = 30

// MaxCopies is the number of copies of each split input a parallel
// Scheduler keeps (GGML_SCHED_MAX_COPIES), so that one computation can fill
// a copy while the backends still read the others.
const MaxCopies = 4

// ErrAborted is returned by Scheduler.GraphCompute when the eval callback
// asked to stop.
var ErrAborted = errors.New("backend: computation aborted by the eval callback")

// EvalCallback observes nodes while a Scheduler computes. It is called
// with ask true for each node, before computing, and returns whether it
// wants to see that node's result; the nodes up to the first wanted one are
// computed together, then it is called again with ask false once the
// wanted node is computed (its backend synchronized), and returning false
// then aborts the computation.
type EvalCallback func(t *graph.Tensor, ask bool) bool

// SchedulerOptions configure NewScheduler.
type SchedulerOptions struct {
	// BufferTypes is the buffer type in which each backend's compute
	// tensors are placed, one per backend; nil means each device's
	// BufferType.
	BufferTypes []buffer.Type
	// OpOffload lets a higher-priority backend take an op whose weight
	// sits in host memory, when its device supports and wants to offload
	// the op (Device.OffloadOp).
	OpOffload bool
	// Parallel keeps MaxCopies copies of every split input and graph
	// input, used in turn by consecutive computations, and orders the
	// backends with events where their devices have them, so that a
	// computation can start while the last one still runs (pipeline
	// parallelism).
	Parallel bool
	// Profile times every split: the copies of its inputs, and its
	// computation up to the backend's Synchronize (which the scheduler
	// then waits for, giving up overlap between backends). Profile
	// reports the times of the last computation.
	Profile bool
}

// Scheduler runs a graph across several backends (ggml_backend_sched): it
// assigns every tensor to a backend, cuts the graph into splits each run
// by one backend, copies the tensors a split reads from elsewhere into
// copies on its backend, places the compute tensors with one
// GraphAllocator, and computes split after split.
//
// Like ggml's, the scheduler rewrites the graph it is given: a node that
// reads a tensor from another backend reads the copy instead. Reset puts
// the original sources back. A Scheduler is not safe for concurrent use.
//
// With SchedulerOptions.Parallel each split input has MaxCopies copies,
// and each AllocGraph uses the next: a backend may still read the copies
// of the last computations while the next one's are filled. Events, on
// devices that have them, mark where each backend finished with a copy;
// the host or the backend waits on them instead of on all its work. Unlike
// ggml, a graph must be synchronized (GraphCompute does) before Reset or
// the next AllocGraph, which rewrite tensors a backend may be reading.
//
// # The placed graph
//
// As in ggml, the graph AllocGraph placed may be computed again and again
// with new inputs until Reset (or SplitGraph, Reserve, or an AllocGraph
// after Reset) and must not be changed meanwhile: neither its node or
// leaf lists nor any field of a tensor it reaches (type, shape, strides,
// operation, parameters, flags, sources, view source and offset, name,
// Buffer, Data, Extra), and the buffers those tensors lie in stay
// allocated. What may change is the contents of the tensors' memory:
// inputs set with SetTensor, weights set again. The scheduler passes that
// promise on to backends that take it (PlacedGraphComputer), one
// PlacementID per split of each placement, so that a backend need not
// check a split it already computed; GraphComputeAsync refuses a placed
// graph whose node or leaf list it sees changed. Rebuilding a graph, or
// changing its tensors, needs Reset and AllocGraph (a new placement).
type Scheduler struct {
	backends  []Backend
	bufts     []buffer.Type
	opOffload bool
	galloc    *buffer.GraphAllocator

	// ids is the backend index of every assigned tensor (user
	// assignments included); a missing tensor is unassigned.
	ids map[*graph.Tensor]int
	// copies[t][b][c] is copy c of t on backend b; for a graph input on
	// its own backend (Parallel only), copy curCopy is t itself.
	copies  map[*graph.Tensor]map[int][]*graph.Tensor
	splits  []split
	patches []srcPatch
	// graphInputs are the graph inputs given copies on their own backend,
	// with the flags they had before.
	graphInputs []flagPatch

	// nCopies is 1, or MaxCopies when parallel; AllocGraph moves curCopy
	// to nextCopy and advances nextCopy.
	nCopies, curCopy, nextCopy int
	// events[b][c] marks the end of backend b's last split that used copy
	// c; nil when b's device has no events or the scheduler is not
	// parallel.
	events [][]Event

	// gcopy is the graph the allocator places: for each split, its
	// inputs' dependencies and copies, then its nodes; then the leafs.
	gcopy                  *graph.Graph
	nodeIDs, leafIDs       []int
	prevNodeIDs, prevLeafs []int

	eval             EvalCallback
	profile          bool
	times            []splitTimes // per split, of the last computation when profiling
	isReset, isAlloc bool
	// allocated is the graph AllocGraph placed while isAlloc, and
	// allocNodes and allocLeafs its node and leaf lists then: a list
	// changed since is a graph rebuilt in place, which the splits do not
	// hold and the placement's promise would not cover.
	allocated              *graph.Graph
	allocNodes, allocLeafs []*graph.Tensor
	closed                 bool
}

// split is a run of nodes [i0, i1) of the graph computed by one backend.
type split struct {
	backend int
	i0, i1  int
	// inputs are the tensors of other backends the split reads through
	// copies.
	inputs []*graph.Tensor
	g      *graph.Graph
	// placed names g in the promise to PlacedGraphComputer backends: set
	// by AllocGraph, 0 while g is not placed.
	placed PlacementID
}

// placementIDs is the last PlacementID handed out, process-wide, so that
// a backend shared by several schedulers never sees one id for two
// graphs.
var placementIDs atomic.Uint64

// flagPatch records a graph input whose flags the scheduler changed.
type flagPatch struct {
	t     *graph.Tensor
	flags graph.Flags
}

// srcPatch records a source the scheduler replaced by a copy.
type srcPatch struct {
	node *graph.Tensor
	j    int
	orig *graph.Tensor
}

// NewScheduler returns a scheduler over backends, in priority order (a
// lower index is preferred): the last one must be a CPU backend, which
// takes graph inputs and every op no other backend supports.
func NewScheduler(backends []Backend, opts SchedulerOptions) (*Scheduler, error) {
	n := len(backends)
	if n == 0 || n > MaxSchedBackends {
		return nil, fmt.Errorf("%w: scheduler needs 1 to %d backends, got %d", ErrArgument, MaxSchedBackends, n)
	}
	for i, b := range backends {
		if b == nil || b.Device() == nil {
			return nil, fmt.Errorf("%w: scheduler backend %d is nil or has no device", ErrArgument, i)
		}
		// One backend twice would be two ids for one device's work, and
		// the copies between them would copy a tensor onto itself.
		for j := range i {
			if backends[j] == b {
				return nil, fmt.Errorf("%w: scheduler backend %s is listed twice (%d and %d)", ErrArgument, b.Name(), j, i)
			}
		}
	}
	if backends[n-1].Device().Type() != DeviceCPU {
		return nil, fmt.Errorf("%w: the scheduler's last backend must be a CPU, not %s (%s)", ErrArgument, backends[n-1].Name(), backends[n-1].Device().Type())
	}
	if opts.BufferTypes != nil && len(opts.BufferTypes) != n {
		return nil, fmt.Errorf("%w: %d buffer types for %d backends", ErrArgument, len(opts.BufferTypes), n)
	}
	s := &Scheduler{
		backends:  append([]Backend(nil), backends...),
		bufts:     make([]buffer.Type, n),
		opOffload: opts.OpOffload,
		profile:   opts.Profile,
		ids:       map[*graph.Tensor]int{},
		copies:    map[*graph.Tensor]map[int][]*graph.Tensor{},
		isReset:   true,
		nCopies:   1,
		events:    make([][]Event, n),
	}
	if opts.Parallel {
		s.nCopies = MaxCopies
	}
	for i, b := range backends {
		bt := b.Device().BufferType()
		if opts.BufferTypes != nil {
			bt = opts.BufferTypes[i]
		}
		if bt == nil || !b.Device().SupportsBufferType(bt) {
			return nil, fmt.Errorf("%w: backend %s does not support its buffer type", ErrArgument, b.Name())
		}
		s.bufts[i] = bt
	}
	g, err := buffer.NewGraphAllocator(s.bufts...)
	if err != nil {
		return nil, err
	}
	s.galloc = g
	if s.nCopies > 1 {
		for i, b := range backends {
			ec, ok := b.Device().(EventCreator)
			if !ok || !b.Device().Props().Caps.Events {
				continue
			}
			s.events[i] = make([]Event, s.nCopies)
			for c := range s.events[i] {
				if s.events[i][c], err = ec.NewEvent(); err != nil {
					return nil, errors.Join(fmt.Errorf("scheduler: events of %s: %w", b.Name(), err), s.Close())
				}
			}
		}
	}
	return s, nil
}

// Close frees the scheduler's compute buffers and events. Closing again
// does nothing and returns nil; placing or computing a graph then fails
// with ErrClosed.
func (s *Scheduler) Close() error {
	if s.closed {
		return nil
	}
	s.Reset()
	s.closed = true
	var errs []error
	for _, evs := range s.events {
		for _, e := range evs {
			if e != nil {
				errs = append(errs, e.Free())
			}
		}
	}
	s.events = nil
	return errors.Join(append(errs, s.galloc.Free())...)
}

// Backends returns the scheduler's backends in priority order.
func (s *Scheduler) Backends() []Backend { return append([]Backend(nil), s.backends...) }

// BufferType is the buffer type of backend b's compute tensors.
func (s *Scheduler) BufferType(b Backend) buffer.Type {
	if i := s.index(b); i >= 0 {
		return s.bufts[i]
	}
	return nil
}

// BufferSize is the size of backend b's compute buffer.
func (s *Scheduler) BufferSize(b Backend) uint64 {
	if i := s.index(b); i >= 0 {
		return s.galloc.BufferSize(i)
	}
	return 0
}

func (s *Scheduler) index(b Backend) int {
	for i, x := range s.backends {
		if x == b {
			return i
		}
	}
	return -1
}

// SetTensorBackend assigns t to b before the graph is split; the
// assignment holds until Reset.
func (s *Scheduler) SetTensorBackend(t *graph.Tensor, b Backend) error {
	i := s.index(b)
	if i < 0 || t == nil {
		return fmt.Errorf("%w: SetTensorBackend: unknown backend or nil tensor", ErrArgument)
	}
	s.ids[t] = i
	s.isReset = false
	return nil
}

// TensorBackend is the backend t is assigned to, or nil.
func (s *Scheduler) TensorBackend(t *graph.Tensor) Backend {
	if i, ok := s.ids[t]; ok {
		return s.backends[i]
	}
	return nil
}

// NSplits is the number of splits of the last graph split.
func (s *Scheduler) NSplits() int { return len(s.splits) }

// NCopies is the number of copies of each split input the scheduler
// keeps: MaxCopies when Parallel, else 1.
func (s *Scheduler) NCopies() int { return s.nCopies }

// CurrentCopy is the copy the graph placed last uses, in [0, NCopies()).
func (s *Scheduler) CurrentCopy() int { return s.curCopy }

// SplitInputs returns the inputs of split i (tensors of other backends
// that the split reads through copies) and its backend.
func (s *Scheduler) SplitInputs(i int) (Backend, []*graph.Tensor) {
	if i < 0 || i >= len(s.splits) {
		return nil, nil
	}
	sp := s.splits[i]
	return s.backends[sp.backend], append([]*graph.Tensor(nil), sp.inputs...)
}

// SetEvalCallback sets (nil: clears) the callback observing nodes during
// GraphCompute.
func (s *Scheduler) SetEvalCallback(cb EvalCallback) { s.eval = cb }

// Reset forgets the assignments, splits and copies and restores the
// sources the last split replaced by copies. Call it before placing
// another graph.
func (s *Scheduler) Reset() {
	s.dropCopies()
	clear(s.ids)
	s.splits = nil
	s.isReset, s.isAlloc = true, false
	s.allocated, s.allocNodes, s.allocLeafs = nil, nil, nil
}

// errClosed is the error of a method called after Close.
func (s *Scheduler) errClosed(method string) error {
	return fmt.Errorf("%w: Scheduler.%s after Close", ErrClosed, method)
}

// dropCopies puts back the sources the last split replaced by copies and
// forgets the copies.
func (s *Scheduler) dropCopies() {
	for i := len(s.patches) - 1; i >= 0; i-- {
		p := s.patches[i]
		p.node.Src[p.j] = p.orig
	}
	s.patches = nil
	for _, in := range s.graphInputs {
		in.t.Flags = in.flags
	}
	s.graphInputs = nil
	for t, byBackend := range s.copies {
		for _, cps := range byBackend {
			for _, cp := range cps {
				if cp != t {
					delete(s.ids, cp)
				}
			}
		}
	}
	clear(s.copies)
}

// Synchronize waits for every backend. Unless a graph is placed, the
// next AllocGraph then uses copy 0 again, so that a program computing one
// graph at a time always uses the same copy.
func (s *Scheduler) Synchronize() error {
	err := s.syncBackends()
	if !s.isAlloc {
		s.nextCopy = 0
	}
	return err
}

// syncBackends waits for every backend without touching the copy
// rotation.
func (s *Scheduler) syncBackends() error {
	var errs []error
	for _, b := range s.backends {
		errs = append(errs, b.Synchronize())
	}
	return errors.Join(errs...)
}

// Reserve sizes the compute buffers for g, a worst-case graph, then
// resets: graphs of the same shape no larger than g are then placed
// without reallocating.
func (s *Scheduler) Reserve(g *graph.Graph) error {
	if s.closed {
		return s.errClosed("Reserve")
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	if err := s.SplitGraph(g); err != nil {
		s.Reset()
		return err
	}
	err := s.galloc.ReserveN(s.gcopy, s.nodeIDs, s.leafIDs)
	s.Reset()
	return err
}

// AllocGraph splits g and places its compute tensors (and the split
// inputs' copies) in the backends' compute buffers. With Parallel, each
// call uses the next copy of the inputs.
func (s *Scheduler) AllocGraph(g *graph.Graph) error {
	if s.closed {
		return s.errClosed("AllocGraph")
	}
	if s.isAlloc {
		return fmt.Errorf("%w: AllocGraph: the scheduler holds a graph; Reset first", ErrArgument)
	}
	s.curCopy = s.nextCopy
	s.nextCopy = (s.nextCopy + 1) % s.nCopies
	if err := s.SplitGraph(g); err != nil {
		return err
	}
	if err := s.allocSplits(); err != nil {
		return err
	}
	s.isAlloc, s.allocated, s.allocNodes, s.allocLeafs = true, g, g.Nodes, g.Leafs
	last := placementIDs.Add(uint64(len(s.splits)))
	for k := range s.splits {
		s.splits[k].placed = PlacementID(last - uint64(len(s.splits)-1-k))
	}
	if l := Logger(); l.Enabled(context.Background(), slog.LevelDebug) {
		sizes := make([]uint64, len(s.backends))
		for i := range sizes {
			sizes[i] = s.galloc.BufferSize(i)
		}
		l.Debug("backend: scheduler placed a graph", "nodes", len(g.Nodes), "splits", len(s.splits),
			"copy", s.curCopy, "buffer_sizes", sizes)
	}
	return nil
}

// GraphCompute computes g and waits for every backend: GraphComputeAsync
// then Synchronize.
func (s *Scheduler) GraphCompute(g *graph.Graph) error {
	return s.GraphComputeContext(context.Background(), g)
}

// GraphComputeContext is GraphCompute stopping early when ctx is done: it
// checks ctx before each split and, with an eval callback, before each
// group of nodes, and returns an error wrapping ctx.Err(). A split that
// has started runs to its end (a device computes a split as a whole); the
// backends are synchronized before it returns, so the graph's memory may
// be reused, but its outputs are not all computed.
func (s *Scheduler) GraphComputeContext(ctx context.Context, g *graph.Graph) error {
	err := s.GraphComputeAsyncContext(ctx, g)
	if err != nil && ctx.Err() == nil {
		return err
	}
	return errors.Join(err, s.Synchronize())
}

// GraphComputeAsync resets and allocates first unless g was just placed
// by AllocGraph, then starts the splits; the last may still run when it
// returns. After AllocGraph, g must be the graph it placed (ErrArgument
// otherwise; ggml would silently compute the placed one): Reset, or call
// GraphCompute alone, to compute another.
func (s *Scheduler) GraphComputeAsync(g *graph.Graph) error {
	return s.GraphComputeAsyncContext(context.Background(), g)
}

// GraphComputeAsyncContext is GraphComputeAsync stopping before the next
// split (or eval-callback node group) once ctx is done, with an error
// wrapping ctx.Err(); splits already started may still run.
func (s *Scheduler) GraphComputeAsyncContext(ctx context.Context, g *graph.Graph) error {
	if s.closed {
		return s.errClosed("GraphCompute")
	}
	if g == nil {
		return fmt.Errorf("%w: GraphCompute: nil graph", ErrArgument)
	}
	if s.isAlloc && g != s.allocated {
		return fmt.Errorf("%w: GraphCompute: the graph is not the one AllocGraph placed; Reset first, or compute without AllocGraph", ErrArgument)
	}
	if s.isAlloc && (!sameList(g.Nodes, s.allocNodes) || !sameList(g.Leafs, s.allocLeafs)) {
		return fmt.Errorf("%w: GraphCompute: the placed graph's nodes or leafs changed since AllocGraph; Reset and place it again", ErrArgument)
	}
	if !s.isReset && !s.isAlloc {
		s.Reset()
	}
	if !s.isAlloc {
		if err := s.AllocGraph(g); err != nil {
			return err
		}
	}
	return s.computeSplits(ctx)
}

// sameList reports whether a and b are one slice: the same length over
// the same memory. A list rewritten in place at the same length goes
// unseen: that is what the Scheduler's documentation forbids.
func sameList(a, b []*graph.Tensor) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// placedBuffer is the buffer holding t's memory, or nil.
func placedBuffer(t *graph.Tensor) buffer.Buffer {
	gb := t.Buffer
	if t.ViewSrc != nil {
		gb = t.ViewSrc.Buffer
	}
	b, _ := gb.(buffer.Buffer)
	return b
}

func (s *Scheduler) id(t *graph.Tensor) int {
	if t == nil {
		return -1
	}
	if i, ok := s.ids[t]; ok {
		return i
	}
	return -1
}

func (s *Scheduler) supportsOp(b int, t *graph.Tensor) bool {
	return s.backends[b].Device().SupportsOp(t)
}

// backendFromBuffer is the first backend that can use the buffer holding
// t and runs op, or -1.
func (s *Scheduler) backendFromBuffer(t, op *graph.Tensor) int {
	buf := placedBuffer(t)
	if buf == nil {
		return -1
	}
	for i, b := range s.backends {
		if b.Device().SupportsBufferType(buf.Type()) && s.supportsOp(i, op) {
			return i
		}
	}
	return -1
}

// bufferSupported reports whether backend b can read t where it is (its
// buffer, or the buffer type of the backend it is assigned to).
func (s *Scheduler) bufferSupported(t *graph.Tensor, b int) bool {
	var bt buffer.Type
	if buf := placedBuffer(t); buf != nil {
		bt = buf.Type()
	} else {
		id := s.id(t)
		if id == -1 && t.ViewSrc != nil {
			id = s.id(t.ViewSrc)
		}
		if id != -1 {
			bt = s.bufts[id]
		}
	}
	return bt != nil && s.backends[b].Device().SupportsBufferType(bt)
}

func (s *Scheduler) setIfSupported(t *graph.Tensor, b int) {
	if s.supportsOp(b, t) {
		s.ids[t] = b
	}
}

// idFromCurrent is pass 1's choice for t: where its memory is, the CPU for
// graph inputs, or next to a weight it reads.
func (s *Scheduler) idFromCurrent(t *graph.Tensor) (int, error) {
	if id := s.backendFromBuffer(t, t); id != -1 {
		return id, nil
	}
	if t.ViewSrc != nil {
		if id := s.backendFromBuffer(t.ViewSrc, t); id != -1 {
			return id, nil
		}
	}
	if buf := placedBuffer(t); buf != nil {
		return -1, fmt.Errorf("backend: %w: %s is placed in a %s buffer, and no backend using it runs %s", ErrUnsupported, t.Name, buf.Name(), t.Op)
	}
	if t.Flags&graph.FlagInput != 0 {
		return len(s.backends) - 1, nil
	}
	// The rope frequencies and the attention sinks are too small to
	// decide where their op runs.
	if t.Op == ops.Rope || t.Op == ops.FlashAttnExt {
		return -1, nil
	}
	cpu := len(s.backends) - 1
	for _, src := range t.Src {
		if src == nil || src.Buffer == nil {
			continue
		}
		buf, ok := src.Buffer.(buffer.Buffer)
		if !ok || buf.Usage() != buffer.UsageWeights {
			continue
		}
		id := s.backendFromBuffer(src, t)
		if s.opOffload && id == cpu && buf.IsHost() {
			for b := range cpu {
				d := s.backends[b].Device()
				if d.SupportsOp(t) && d.OffloadOp(t) {
					return b, nil
				}
			}
		}
		return id, nil
	}
	return -1, nil
}

// SplitGraph assigns every tensor of g to a backend and cuts g into
// splits (ggml_backend_sched_split_graph), replacing the sources read
// across backends by copies. AllocGraph and GraphCompute call it.
// Assignments made since the last Reset (by SetTensorBackend or an
// earlier split) stay; the copies of an earlier split are undone first.
func (s *Scheduler) SplitGraph(g *graph.Graph) error {
	if s.closed {
		return s.errClosed("SplitGraph")
	}
	if g == nil {
		return fmt.Errorf("%w: nil graph", ErrArgument)
	}
	s.dropCopies()
	s.isReset, s.isAlloc = false, false
	s.splits = nil
	if err := s.assign(g); err != nil {
		return err
	}
	s.cut(g)
	return s.buildCopyGraph(g)
}

// assign runs passes 1 to 4: every node, leaf and source gets a backend.
func (s *Scheduler) assign(g *graph.Graph) error {
	// Pass 1: tensors with memory, graph inputs, ops next to weights.
	// User assignments stay.
	for _, list := range [][]*graph.Tensor{g.Leafs, g.Nodes} {
		for _, t := range list {
			if s.id(t) != -1 {
				continue
			}
			id, err := s.idFromCurrent(t)
			if err != nil {
				return err
			}
			if id != -1 {
				s.ids[t] = id
			}
		}
	}

	// Pass 2: spread assignments to neighbouring nodes the backend
	// supports: the higher-priority backends down then up, without
	// spreading the CPU, so that the CPU only runs what must run there;
	// then every backend down then up. Unsupported nodes stay
	// unassigned, to be placed once their inputs' places are known.
	cpu := len(s.backends) - 1
	n := len(g.Nodes)
	expand := func(down, skipCPU bool) {
		cur := -1
		for k := range n {
			i := k
			if !down {
				i = n - 1 - k
			}
			t := g.Nodes[i]
			if t.Op.IsView() {
				continue
			}
			if id := s.id(t); id != -1 {
				cur = id
				if skipCPU && id == cpu {
					cur = -1
				}
			} else if cur != -1 {
				s.setIfSupported(t, cur)
			}
		}
	}
	expand(true, true)
	expand(false, true)
	expand(true, false)
	expand(false, false)

	// Pass 3: move a node to a higher-priority backend with the same
	// buffer type when that backend runs it and reads all its sources
	// where they are; place an unassigned node on the backend that reads
	// the most of its inputs in place.
	for _, t := range g.Nodes {
		if t.Op.IsView() {
			continue
		}
		id := s.id(t)
		if id == -1 {
			best := -1
			for b := range s.backends {
				if !s.supportsOp(b, t) {
					continue
				}
				nsup := 0
				for _, src := range t.Src {
					if src != nil && (s.id(src) != -1 || s.id(src.ViewSrc) != -1) && s.bufferSupported(src, b) {
						nsup++
					}
				}
				if nsup > best {
					best = nsup
					s.ids[t] = b
				}
			}
			continue
		}
		for b := range id {
			if s.bufts[b] != s.bufts[id] || !s.supportsOp(b, t) {
				continue
			}
			ok := true
			for _, src := range t.Src {
				if src != nil && !s.bufferSupported(src, b) {
					ok = false
					break
				}
			}
			if ok {
				s.ids[t] = b
				break
			}
		}
	}

	// Pass 4: views go with their memory, sources with their consumer;
	// what is left goes to the first backend that runs it.
	for _, t := range g.Nodes {
		if t.ViewSrc != nil && s.id(t) == -1 {
			s.inherit(t, s.id(t.ViewSrc))
		}
		for _, src := range t.Src {
			if src == nil || s.id(src) != -1 {
				continue
			}
			if src.ViewSrc != nil {
				s.inherit(src, s.id(src.ViewSrc))
			} else {
				s.inherit(src, s.id(t))
			}
		}
		for b := 0; b < len(s.backends) && s.id(t) == -1; b++ {
			s.setIfSupported(t, b)
		}
		if s.id(t) == -1 {
			return fmt.Errorf("backend: %w: no backend runs %s (%s)", ErrUnsupported, t.Name, t.Op)
		}
	}
	// A source still unassigned (the memory of a view placed before its
	// view_src was) goes with its first consumer; ggml leaves it
	// unassigned and cannot place it.
	for _, t := range g.Nodes {
		for _, src := range t.Src {
			if src != nil && s.id(src) == -1 {
				s.inherit(src, s.id(t))
			}
		}
	}
	for _, t := range g.Leafs {
		if s.id(t) == -1 {
			return fmt.Errorf("%w: leaf %s is read by no node and has no place", ErrArgument, t.Name)
		}
	}
	return nil
}

func (s *Scheduler) inherit(t *graph.Tensor, id int) {
	if id != -1 {
		s.ids[t] = id
	}
}

// cut runs pass 5: splits are maximal runs of nodes on one backend; each
// source on a backend whose memory the split's backend cannot read gets a
// copy there.
func (s *Scheduler) cut(g *graph.Graph) {
	i := 0
	first := len(s.backends) - 1
	for ; i < len(g.Nodes); i++ {
		if !g.Nodes[i].Op.IsView() {
			first = s.id(g.Nodes[i])
			break
		}
	}
	sp := &split{backend: first}
	cur := first
	for ; i < len(g.Nodes); i++ {
		t := g.Nodes[i]
		if t.Op.IsView() {
			continue
		}
		id := s.id(t)
		newSplit := false
		if id == cur && len(sp.inputs) > 0 {
			for _, src := range t.Src {
				if src == nil {
					continue
				}
				// A weight on another backend starts a split, so that the
				// memory of the weights copied for the last one is reused.
				if buf, ok := src.Buffer.(buffer.Buffer); ok && buf.Usage() == buffer.UsageWeights {
					if s.id(src) != cur && !s.bufferSupported(src, cur) {
						newSplit = true
						break
					}
				}
				if len(sp.inputs) >= MaxSplitInputs && s.id(src) != cur && s.copies[src][cur] == nil && !s.bufferSupported(src, cur) {
					newSplit = true
					break
				}
			}
		}
		if id != cur || newSplit {
			sp.i1 = i
			s.splits = append(s.splits, *sp)
			sp = &split{backend: id, i0: i}
			cur = id
		}
		for j, src := range t.Src {
			if src == nil {
				continue
			}
			srcID := s.id(src)
			if src.Flags&graph.FlagInput != 0 && s.nCopies > 1 && s.copies[src][srcID] == nil {
				s.copyGraphInput(src, srcID)
			}
			if srcID == cur || s.bufferSupported(src, cur) {
				continue
			}
			cps := s.copies[src][cur]
			if cps == nil {
				cps = make([]*graph.Tensor, s.nCopies)
				for c := range cps {
					cp := dupLayout(src)
					cp.Name = fmt.Sprintf("%s#%s#%d", s.backends[cur].Name(), src.Name, c)
					if s.nCopies > 1 {
						// The copies outlive the computation: the
						// allocator must never give their memory away.
						cp.Flags |= graph.FlagInput | graph.FlagOutput
					}
					s.ids[cp] = cur
					cps[c] = cp
				}
				s.setCopies(src, cur, cps)
				sp.inputs = append(sp.inputs, src)
			}
			s.patches = append(s.patches, srcPatch{node: t, j: j, orig: src})
			t.Src[j] = cps[s.curCopy]
		}
	}
	sp.i1 = len(g.Nodes)
	s.splits = append(s.splits, *sp)
}

func (s *Scheduler) setCopies(t *graph.Tensor, b int, cps []*graph.Tensor) {
	if s.copies[t] == nil {
		s.copies[t] = map[int][]*graph.Tensor{}
	}
	s.copies[t][b] = cps
}

// copyGraphInput gives graph input t copies on its own backend b, t itself
// being the current one: placed side by side before anything else and
// never freed, the input sits at another address in each of NCopies
// consecutive computations, so that the caller can set the next input
// while the last one is still being copied from.
func (s *Scheduler) copyGraphInput(t *graph.Tensor, b int) {
	s.graphInputs = append(s.graphInputs, flagPatch{t: t, flags: t.Flags})
	cps := make([]*graph.Tensor, s.nCopies)
	for c := range cps {
		cp := t
		if c != s.curCopy {
			cp = dupLayout(t)
			cp.Name = fmt.Sprintf("%s#%s#%d", s.backends[b].Name(), t.Name, c)
		}
		cp.Flags |= graph.FlagInput | graph.FlagOutput
		cps[c] = cp
	}
	s.setCopies(t, b, cps)
}

// dupLayout is a new tensor with t's type, shape and strides.
func dupLayout(t *graph.Tensor) *graph.Tensor {
	return &graph.Tensor{Type: t.Type, Ne: t.Ne, Nb: t.Nb}
}

// buildCopyGraph makes the graph the allocator places: each split's
// inputs (a dependency on the input, so that it lives until copied, and
// its copy, allocated as the split starts) before the split's nodes, then
// g's leafs.
func (s *Scheduler) buildCopyGraph(g *graph.Graph) error {
	s.prevNodeIDs, s.prevLeafs = s.nodeIDs, s.leafIDs
	gc := &graph.Graph{}
	var nodeIDs, leafIDs []int
	for k := range s.splits {
		sp := &s.splits[k]
		v, err := g.View(sp.i0, sp.i1)
		if err != nil {
			return err
		}
		if o, ok := s.backends[sp.backend].(GraphOptimizer); ok {
			if err := o.GraphOptimize(v); err != nil {
				return err
			}
		}
		sp.g = v
		for _, in := range sp.inputs {
			dep := dupLayout(in)
			dep.Name = in.Name + " (dep)"
			dep.Src[0] = in
			dep.ViewSrc, dep.ViewOffs = in, 0
			if in.ViewSrc != nil {
				dep.ViewSrc, dep.ViewOffs = in.ViewSrc, in.ViewOffs
			}
			gc.Nodes = append(gc.Nodes, dep, s.copies[in][sp.backend][s.curCopy])
			nodeIDs = append(nodeIDs, s.id(in), sp.backend)
		}
		for _, t := range v.Nodes {
			gc.Nodes = append(gc.Nodes, t)
			nodeIDs = append(nodeIDs, s.id(t))
		}
	}
	if s.nCopies > 1 {
		// Every copy is a leaf, placed first, so that each keeps its
		// memory from one computation to the next.
		for _, in := range s.graphInputs {
			b := s.id(in.t)
			for _, cp := range s.copies[in.t][b] {
				gc.Leafs = append(gc.Leafs, cp)
				leafIDs = append(leafIDs, b)
			}
		}
		for _, sp := range s.splits {
			for _, in := range sp.inputs {
				for _, cp := range s.copies[in][sp.backend] {
					gc.Leafs = append(gc.Leafs, cp)
					leafIDs = append(leafIDs, sp.backend)
				}
			}
		}
	}
	for _, t := range g.Leafs {
		gc.Leafs = append(gc.Leafs, t)
		leafIDs = append(leafIDs, s.id(t))
	}
	s.gcopy, s.nodeIDs, s.leafIDs = gc, nodeIDs, leafIDs
	return nil
}

// idsChanged reports whether a tensor of the copy graph moved to a
// backend with another buffer type since the last split, which the
// allocator's plan cannot see.
func (s *Scheduler) idsChanged() bool {
	diff := func(cur, prev []int) bool {
		if len(cur) != len(prev) {
			return true
		}
		for i := range cur {
			if cur[i] != prev[i] && s.bufts[cur[i]] != s.bufts[prev[i]] {
				return true
			}
		}
		return false
	}
	return diff(s.nodeIDs, s.prevNodeIDs) || diff(s.leafIDs, s.prevLeafs)
}

func (s *Scheduler) allocSplits() error {
	if !s.idsChanged() {
		err := s.galloc.AllocGraph(s.gcopy)
		if err == nil {
			return nil
		}
		if !errors.Is(err, buffer.ErrNeedReserve) {
			return err
		}
	}
	// Reallocating may move the split inputs: let pending copies finish
	// (without Synchronize, which would restart the copy rotation).
	if err := s.syncBackends(); err != nil {
		return err
	}
	if err := s.galloc.ReserveN(s.gcopy, s.nodeIDs, s.leafIDs); err != nil {
		return err
	}
	return s.galloc.AllocGraph(s.gcopy)
}

func (s *Scheduler) computeSplits(ctx context.Context) error {
	prev := -1
	var ex usedExperts
	if s.profile {
		s.times = make([]splitTimes, len(s.splits))
	}
	for k := range s.splits {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("backend: graph compute stopped before split %d of %d: %w", k, len(s.splits), err)
		}
		sp := &s.splits[k]
		be := s.backends[sp.backend]
		// The allocator may reuse memory across splits: the previous
		// backend must be done with it.
		if len(sp.inputs) == 0 && prev >= 0 && prev != sp.backend {
			if err := s.waitHost(prev); err != nil {
				return err
			}
		}
		start := time.Now()
		for i := range sp.inputs {
			in := sp.inputs[i]
			if err := s.copyInput(sp, i, &ex); err != nil {
				return fmt.Errorf("copying %s to %s: %w", in.Name, be.Name(), err)
			}
		}
		copied := time.Now()
		if err := s.computeSplit(ctx, be, sp); err != nil {
			return err
		}
		if s.profile {
			if err := be.Synchronize(); err != nil {
				return err
			}
			s.times[k] = splitTimes{copy: copied.Sub(start), compute: time.Since(copied)}
		}
		if e := s.event(sp.backend); e != nil {
			if err := e.Record(be); err != nil {
				return err
			}
		}
		prev = sp.backend
	}
	return nil
}

// event is the event of backend b for the current copy, or nil.
func (s *Scheduler) event(b int) Event {
	if s.events[b] == nil {
		return nil
	}
	return s.events[b][s.curCopy]
}

// waitHost blocks until backend b has finished its last split that used
// the current copy: by its event when it has one, else by waiting for all
// its work.
func (s *Scheduler) waitHost(b int) error {
	if e := s.event(b); e != nil {
		return e.Synchronize()
	}
	return s.backends[b].Synchronize()
}

// copyInput fills the current copy of input i of split sp.
func (s *Scheduler) copyInput(sp *split, i int, ex *usedExperts) error {
	b, in := sp.backend, sp.inputs[i]
	be := s.backends[b]
	cp := s.copies[in][b][s.curCopy]
	if in.Flags&graph.FlagInput != 0 {
		// The caller may overwrite an input as soon as GraphCompute
		// returns: copy it now, once the backend no longer reads this
		// copy.
		if err := s.waitHost(b); err != nil {
			return err
		}
		return buffer.CopyTensor(in, cp)
	}
	// The backend may still read this copy from NCopies computations
	// ago: its later work waits for that, without blocking the host.
	if e := s.event(b); e != nil {
		if err := e.Wait(be); err != nil {
			return err
		}
	} else if err := be.Synchronize(); err != nil {
		return err
	}
	from := s.backends[s.id(in)]
	if expertWeights(sp, in, cp) {
		return s.copyExperts(sp, i, cp, ex)
	}
	if c, ok := be.(TensorCopier); ok {
		err := c.CopyTensorAsync(from, in, cp)
		if !errors.Is(err, ErrUnsupported) {
			return err
		}
	}
	// Through the host: the source must be computed and this copy no
	// longer read; with an event, only this copy's last use is waited
	// for, not all the backend's queued work.
	if err := from.Synchronize(); err != nil {
		return err
	}
	if err := s.waitHost(b); err != nil {
		return err
	}
	return buffer.CopyTensor(in, cp)
}

func (s *Scheduler) computeSplit(ctx context.Context, be Backend, sp *split) error {
	g := sp.g
	if s.eval == nil {
		if p, ok := be.(PlacedGraphComputer); ok && sp.placed != 0 {
			return p.GraphComputePlaced(g, sp.placed)
		}
		return be.GraphCompute(g)
	}
	// The callback's groups are views made afresh, each computed once:
	// no promise.
	for j0 := 0; j0 < len(g.Nodes); j0++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("backend: graph compute stopped at %s: %w", g.Nodes[j0].Name, err)
		}
		t := g.Nodes[j0]
		need := s.eval(t, true)
		j1 := j0
		for !need && j1 < len(g.Nodes)-1 {
			j1++
			t = g.Nodes[j1]
			need = s.eval(t, true)
		}
		v, err := g.View(j0, j1+1)
		if err != nil {
			return err
		}
		if err := Compute(be, v); err != nil {
			return err
		}
		if need && !s.eval(t, false) {
			return fmt.Errorf("%w: at %s", ErrAborted, t.Name)
		}
		j0 = j1
	}
	return nil
}

// usedExperts remembers the experts an ids tensor selects, for the
// splits of one computation that read it.
type usedExperts struct {
	ids  *graph.Tensor
	used []bool
}

// expertWeights reports whether input in, read through copy cp, holds the
// experts of a MUL_MAT_ID that starts split sp, in host memory: then only
// the experts the ids select need copying.
func expertWeights(sp *split, in, cp *graph.Tensor) bool {
	if len(sp.g.Nodes) == 0 {
		return false
	}
	n := sp.g.Nodes[0]
	buf := placedBuffer(in)
	return buf != nil && buf.Usage() == buffer.UsageWeights && buf.IsHost() && n.Op == ops.MulMatID && n.Src[0] == cp
}

// copyExperts copies to the copy cp of input i of split sp the experts of
// its MUL_MAT_ID that the ids select, runs of neighbouring experts at a
// time, by the split backend's SetTensorAsync.
func (s *Scheduler) copyExperts(sp *split, i int, cp *graph.Tensor, ex *usedExperts) error {
	in, be := sp.inputs[i], s.backends[sp.backend]
	nExpert, expertSize := in.Ne[2], in.Nb[2]
	if err := s.backends[s.id(in)].Synchronize(); err != nil {
		return err
	}
	ids := sp.g.Nodes[0].Src[2]
	idsBackend := be
	// An ids tensor that is a later input of the split is not copied
	// yet: read the original.
	for _, later := range sp.inputs[i+1:] {
		if s.copies[later][sp.backend][s.curCopy] == ids {
			ids, idsBackend = later, s.backends[s.id(later)]
			break
		}
	}
	if ids != ex.ids {
		raw := make([]byte, ids.NBytes())
		if err := idsBackend.GetTensorAsync(ids, raw, 0); err != nil {
			return err
		}
		if err := idsBackend.Synchronize(); err != nil {
			return err
		}
		ex.used = make([]bool, nExpert)
		for i1 := range ids.Ne[1] {
			for i0 := range ids.Ne[0] {
				at := uint64(i1)*ids.Nb[1] + uint64(i0)*ids.Nb[0]
				id := int32(binary.LittleEndian.Uint32(raw[at:]))
				if id < 0 || int64(id) >= nExpert {
					return fmt.Errorf("%w: expert id %d of %s outside [0, %d)", ErrArgument, id, ids.Name, nExpert)
				}
				ex.used[id] = true
			}
		}
		ex.ids = ids
	}
	data := in.Data
	if uint64(len(data)) < uint64(nExpert)*expertSize {
		return fmt.Errorf("%w: host weights %s have no memory", ErrArgument, in.Name)
	}
	// A little past the last expert of a run is copied too, so that a
	// kernel reading ahead sees no stale values (ggml does it for CUDA's
	// MMQ).
	padding := min(expertSize, 512)
	for first := int64(0); first < nExpert; {
		if !ex.used[first] {
			first++
			continue
		}
		last := first
		for last+1 < nExpert && ex.used[last+1] {
			last++
		}
		off := uint64(first) * expertSize
		size := uint64(last-first+1) * expertSize
		if last < nExpert-1 {
			size += padding
		}
		if err := be.SetTensorAsync(cp, data[off:off+size], off); err != nil {
			return err
		}
		first = last + 1
	}
	return nil
}
