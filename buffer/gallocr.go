package buffer

import (
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// GraphAllocator places the tensors of graphs in compute buffers it owns,
// one set per buffer type (ggml_gallocr). Reserve plans a graph: inputs and
// leafs first, each intermediate from its computation to its last consumer
// (a view keeps its source alive), outputs forever; memory freed by one
// tensor is reused by later ones, and an operation that may run in place
// (CanInplace) takes the memory of a source that no other tensor still
// needs. AllocGraph then places a graph by the plan, planning again first
// when the graph no longer fits it.
//
// Tensors that already have memory (Data or a Buffer not the allocator's)
// are left alone. Tensors in the allocator's buffers lose their memory each
// time a graph is placed, which reuses it. A GraphAllocator is not safe for
// concurrent use.
type GraphAllocator struct {
	types []Type
	// planners and bufs are per type index; a type given twice shares
	// them with its first index.
	planners []*dynAlloc
	bufs     []*vbuffer

	plan  *graphPlan
	freed bool
}

// vbuffer is the memory of one buffer type: one buffer per planned chunk.
type vbuffer struct{ chunks []Buffer }

// graphPlan is where Reserve put each node and leaf of a graph, by
// position, with a signature of what the plan relied on.
type graphPlan struct {
	nodes []nodePlace
	leafs []place
	sig   uint64
}

// place is where one tensor goes: a buffer type index (-1: nowhere, the
// tensor is a view or has memory), an address, and the most memory the
// place has room for.
type place struct {
	buf  int
	addr address
	max  uint64
}

type nodePlace struct {
	dst place
	src [graph.MaxSrc]place
	// inplace is 1 + the index of the source whose memory the node
	// took, or 0.
	inplace int
}

// NewGraphAllocator returns an allocator for buffers of types (at least
// one); nodes go to types[0] unless ReserveN says otherwise.
func NewGraphAllocator(types ...Type) (*GraphAllocator, error) {
	if len(types) == 0 {
		return nil, fmt.Errorf("%w: no buffer type", ErrArgument)
	}
	a := &GraphAllocator{types: types, planners: make([]*dynAlloc, len(types)), bufs: make([]*vbuffer, len(types))}
	for i, t := range types {
		if t == nil {
			return nil, fmt.Errorf("%w: buffer type %d is nil", ErrArgument, i)
		}
		if al := t.Alignment(); al == 0 || al&(al-1) != 0 {
			return nil, fmt.Errorf("%w: %s alignment %d is not a power of two", ErrArgument, t.Name(), al)
		}
		if j := a.first(i); j < i {
			a.planners[i] = a.planners[j]
			continue
		}
		a.planners[i] = newDynAlloc(t.Alignment(), t.MaxSize())
		a.bufs[i] = &vbuffer{}
	}
	return a, nil
}

// first is the first index holding the same type as index i.
func (a *GraphAllocator) first(i int) int {
	for j := range i {
		if sameType(a.types[j], a.types[i]) {
			return j
		}
	}
	return i
}

func sameType(x, y Type) bool {
	return reflect.TypeOf(x) == reflect.TypeOf(y) && reflect.ValueOf(x).Comparable() && x == y
}

// owns reports whether b is one of the allocator's buffers.
func (a *GraphAllocator) owns(b graph.Buffer) bool {
	for _, vb := range a.bufs {
		if vb == nil {
			continue
		}
		for _, c := range vb.chunks {
			if b == c {
				return true
			}
		}
	}
	return false
}

// external reports whether t has memory the allocator must leave alone:
// a buffer not its own, or Go memory.
func (a *GraphAllocator) external(t *graph.Tensor) bool {
	if t.Buffer != nil {
		return !a.owns(t.Buffer)
	}
	return t.Data != nil
}

// Reserve plans g with every node in the first buffer type, and grows the
// buffers to fit it. Reserve the largest graph to be placed (the worst
// case): smaller graphs of the same structure then fit the plan.
func (a *GraphAllocator) Reserve(g *graph.Graph) error { return a.ReserveN(g, nil, nil) }

// ReserveN is Reserve with each node and leaf of g in the buffer type of
// the index nodeBuf[i] or leafBuf[i] (nil: all in the first). BufferIDs
// makes these from a function.
func (a *GraphAllocator) ReserveN(g *graph.Graph, nodeBuf, leafBuf []int) error {
	if a.freed {
		return fmt.Errorf("%w: graph allocator", ErrFreed)
	}
	p, err := a.planGraph(g, nodeBuf, leafBuf, a.planners)
	if err != nil {
		a.plan = nil
		return err
	}
	if err := a.grow(); err != nil {
		a.plan = nil
		return err
	}
	a.plan = p
	return nil
}

// ReserveSizes returns the buffer sizes ReserveN would need for g, per
// type index (0 where a type repeats an earlier one), without allocating
// or changing the allocator's plan.
func (a *GraphAllocator) ReserveSizes(g *graph.Graph, nodeBuf, leafBuf []int) ([]uint64, error) {
	if a.freed {
		return nil, fmt.Errorf("%w: graph allocator", ErrFreed)
	}
	planners := make([]*dynAlloc, len(a.types))
	for i, t := range a.types {
		if j := a.first(i); j < i {
			planners[i] = planners[j]
		} else {
			planners[i] = newDynAlloc(t.Alignment(), t.MaxSize())
		}
	}
	if _, err := a.planGraph(g, nodeBuf, leafBuf, planners); err != nil {
		return nil, err
	}
	sizes := make([]uint64, len(a.types))
	for i := range a.types {
		if a.first(i) == i {
			sizes[i] = planners[i].total()
		}
	}
	return sizes, nil
}

// BufferIDs returns, for ReserveN, the buffer type index f chooses for
// each node and leaf of g.
func BufferIDs(g *graph.Graph, f func(t *graph.Tensor) int) (nodeBuf, leafBuf []int) {
	nodeBuf, leafBuf = make([]int, len(g.Nodes)), make([]int, len(g.Leafs))
	for i, t := range g.Nodes {
		nodeBuf[i] = f(t)
	}
	for i, t := range g.Leafs {
		leafBuf[i] = f(t)
	}
	return nodeBuf, leafBuf
}

// grow reallocates the buffers of every type whose plan needs more memory
// than they have (or that has none yet), as compute buffers.
func (a *GraphAllocator) grow() error {
	for i, t := range a.types {
		if a.first(i) < i {
			continue
		}
		vb, d := a.bufs[i], a.planners[i]
		realloc := len(vb.chunks) < len(d.chunks)
		for c, b := range vb.chunks {
			if d.chunkSize(c) > b.Size() {
				realloc = true
			}
		}
		if !realloc {
			continue
		}
		if err := vb.free(); err != nil {
			return err
		}
		for c := range d.chunks {
			b, err := t.Alloc(d.chunkSize(c))
			if err != nil {
				return errors.Join(fmt.Errorf("%s compute buffer of %d bytes: %w", t.Name(), d.chunkSize(c), err), vb.free())
			}
			b.SetUsage(UsageCompute)
			vb.chunks = append(vb.chunks, b)
		}
	}
	return nil
}

// free releases the buffers, first forgetting the tensors placed in them.
func (vb *vbuffer) free() error {
	var errs []error
	for _, b := range vb.chunks {
		errs = append(errs, b.Reset(), b.Free())
	}
	vb.chunks = nil
	return errors.Join(errs...)
}

// BufferSize is the size of the buffers of type index id (the chunks
// together), 0 where the type repeats an earlier index or before Reserve.
func (a *GraphAllocator) BufferSize(id int) uint64 {
	if id < 0 || id >= len(a.types) || a.first(id) < id {
		return 0
	}
	var n uint64
	for _, b := range a.bufs[id].chunks {
		n += b.Size()
	}
	return n
}

// Buffers are the buffers of type index id: one per chunk of its plan.
func (a *GraphAllocator) Buffers(id int) []Buffer {
	if id < 0 || id >= len(a.types) {
		return nil
	}
	return slices.Clone(a.bufs[a.first(id)].chunks)
}

// AllocGraph places every tensor of g that has no memory by the plan,
// and initializes views of them. A graph that does not fit the plan (other
// structure, larger tensors) is planned again when there is a single buffer
// type, and is an ErrNeedReserve error otherwise.
func (a *GraphAllocator) AllocGraph(g *graph.Graph) error {
	if a.freed {
		return fmt.Errorf("%w: graph allocator", ErrFreed)
	}
	if g == nil {
		return fmt.Errorf("%w: nil graph", ErrArgument)
	}
	if !a.fits(g) {
		if len(a.types) > 1 {
			return fmt.Errorf("%w: the graph does not fit the plan of its %d buffer types", ErrNeedReserve, len(a.types))
		}
		if err := a.Reserve(g); err != nil {
			return err
		}
	}
	for _, vb := range a.bufs {
		if vb == nil {
			continue
		}
		for _, b := range vb.chunks {
			if err := b.Reset(); err != nil {
				return err
			}
		}
	}
	// Tensors first, views after, so that a view's source has its memory
	// (and a device its state) when the view is initialized.
	var views []*graph.Tensor
	seen := map[*graph.Tensor]bool{}
	place := func(t *graph.Tensor, p place) error {
		if t.ViewSrc == nil {
			return a.placeTensor(t, p)
		}
		if !seen[t] {
			seen[t] = true
			views = append(views, t)
		}
		return nil
	}
	for i, t := range g.Leafs {
		if err := place(t, a.plan.leafs[i]); err != nil {
			return err
		}
	}
	for i, n := range g.Nodes {
		np := &a.plan.nodes[i]
		for j, s := range n.Src {
			if s == nil {
				continue
			}
			if err := place(s, np.src[j]); err != nil {
				return err
			}
		}
		if err := place(n, np.dst); err != nil {
			return err
		}
	}
	for _, v := range views {
		if err := a.initView(v); err != nil {
			return err
		}
	}
	return nil
}

// placeTensor gives t its planned memory. The buffers were just reset, so
// a tensor with a buffer is external or was placed moments ago.
func (a *GraphAllocator) placeTensor(t *graph.Tensor, p place) error {
	if t.Buffer != nil || t.Data != nil {
		return nil
	}
	if p.buf < 0 {
		return fmt.Errorf("%w: %s has no memory and no place in the plan", ErrNeedReserve, t)
	}
	return a.bufs[a.first(p.buf)].chunks[p.addr.chunk].AllocTensor(t, p.addr.offset)
}

// initView gives view t its source's memory, unless it has it already.
func (a *GraphAllocator) initView(t *graph.Tensor) error {
	src := t.ViewSrc
	switch {
	case src.Buffer == nil && src.Data != nil:
		// Go memory, which the builder gave the view too.
		return nil
	case src.Buffer == nil:
		return fmt.Errorf("%w: %s views %s, which has no memory", ErrNotPlaced, t, src)
	case a.owns(src.Buffer):
		t.Buffer, t.Data = nil, nil
	case t.Buffer != nil:
		return nil
	}
	b, err := Of(src)
	if err != nil {
		return err
	}
	return b.InitView(t)
}

// fits reports whether g can be placed by the current plan: the same
// structure, and no tensor larger than its place.
func (a *GraphAllocator) fits(g *graph.Graph) bool {
	p := a.plan
	if p == nil || len(p.nodes) != len(g.Nodes) || len(p.leafs) != len(g.Leafs) || p.sig != signature(g) {
		return false
	}
	for i, n := range g.Nodes {
		if !a.fitsPlace(n, p.nodes[i].dst) {
			return false
		}
		if j := p.nodes[i].inplace - 1; j >= 0 && !inplaceLayout(n, n.Src[j]) {
			return false
		}
		for j, s := range n.Src {
			if s != nil && !a.fitsPlace(s, p.nodes[i].src[j]) {
				return false
			}
		}
	}
	for i, t := range g.Leafs {
		if !a.fitsPlace(t, p.leafs[i]) {
			return false
		}
	}
	return true
}

func (a *GraphAllocator) fitsPlace(t *graph.Tensor, p place) bool {
	if t.ViewSrc != nil || a.external(t) {
		return true
	}
	if p.buf < 0 {
		return false
	}
	n, err := allocSize(a.types[p.buf], t)
	return err == nil && n <= p.max
}

// signature sums up what a plan depends on besides sizes and in-place
// layouts: each tensor's operation and input/output flags, and where its
// sources and view source are. A graph with the same signature fits the
// plan if no tensor is larger and every node placed over a source still
// has that source's layout (view offsets that move, as into a KV cache, do
// not matter).
func signature(g *graph.Graph) uint64 {
	pos := make(map[*graph.Tensor]uint64, len(g.Nodes)+len(g.Leafs))
	for i, t := range g.Leafs {
		pos[t] = uint64(i)<<2 | 1
	}
	for i, t := range g.Nodes {
		pos[t] = uint64(i)<<2 | 2
	}
	h := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		for i := range buf {
			buf[i] = byte(v >> (8 * i))
		}
		h.Write(buf[:])
	}
	where := func(t *graph.Tensor) uint64 {
		if t == nil {
			return 0
		}
		if p, ok := pos[t]; ok {
			return p
		}
		return 3 // outside the graph
	}
	for _, list := range [][]*graph.Tensor{g.Leafs, g.Nodes} {
		put(uint64(len(list)))
		for _, t := range list {
			put(uint64(t.Op))
			put(uint64(t.Flags & (graph.FlagInput | graph.FlagOutput)))
			put(where(t.ViewSrc))
			for _, s := range t.Src {
				put(where(s))
			}
		}
	}
	return h.Sum64()
}

// Free releases the allocator's buffers; tensors placed in them lose their
// memory. The allocator cannot be used afterwards.
func (a *GraphAllocator) Free() error {
	if a.freed {
		return fmt.Errorf("%w: graph allocator", ErrFreed)
	}
	a.freed = true
	a.plan = nil
	var errs []error
	for _, vb := range a.bufs {
		if vb != nil {
			errs = append(errs, vb.free())
		}
	}
	return errors.Join(errs...)
}

// CanInplace reports whether op may write its result over the memory of
// one of its sources (ggml_op_can_inplace, as ggml 0.25.1 answers it): the
// graph allocator gives such a result the memory of a source with the same
// layout that no other tensor needs any more, so the kernels of these
// operations must allow their destination to be one of their sources.
func CanInplace(op ops.Op) bool {
	switch op {
	case ops.Fill, ops.Scale, ops.DiagMaskZero, ops.DiagMaskInf, ops.Add, ops.AddID, ops.Add1,
		ops.Sub, ops.Mul, ops.Div, ops.Sqr, ops.Sqrt, ops.Log, ops.Unary, ops.Rope, ops.RopeBack,
		ops.SiLUBack, ops.RMSNorm, ops.RMSNormBack, ops.SoftMax, ops.SoftMaxBack, ops.Clamp:
		return true
	}
	return false
}
