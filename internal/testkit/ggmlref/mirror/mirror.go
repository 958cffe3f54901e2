// Package mirror runs ggml-go graphs on the real ggml: it copies a
// graph.Graph tensor by tensor into a ggml context (same types, shapes,
// strides, operations, parameters, flags, sources and views), computes it
// with ggml's CPU backend and copies the results back. It is the reference
// executor of the op-conformance suite (internal/testkit/optest).
package mirror

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/sentinel"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/ops"
)

// ErrUnsupported reports a node ggml's CPU backend does not support.
// errors.Is also matches it to backend.ErrUnsupported
// (errors.ErrUnsupported).
var ErrUnsupported error = sentinel.New("ggml: unsupported operation", errors.ErrUnsupported)

// ErrNotMirrorable reports a graph the mirror cannot express in ggml.
var ErrNotMirrorable = errors.New("mirror: cannot mirror graph")

// dataAlign is the alignment of every tensor's data in the mirror, as
// ggml's CPU buffers align them.
const dataAlign = 64

// Executor computes graphs on ggml's CPU backend. It has the method set of
// optest.Executor. It is safe for concurrent use; computations run one at a
// time.
type Executor struct {
	lib     *ggmlref.Lib
	backend *ggmlref.Backend
	mu      sync.Mutex
	// ctx is reused from graph to graph (reset, and grown when a graph
	// needs more), so thousands of small cases do not each pay for a
	// context.
	ctx *ggmlref.Context
	// loaded is the graph the context holds, nil after Supports (which
	// resets it too) or an abort.
	loaded *Loaded
	// extras hold the loaded graph's tensors placed in extra buffer
	// types (LoadRepacked); the next graph frees them.
	extras []*ggmlref.ExtraBuffer
	// amx says that one of extras is of AMXBufferType
	// (onComputeThread).
	amx bool
}

// New returns an Executor computing with threads threads on ggml's CPU
// backend from lib. Close frees it.
func New(lib *ggmlref.Lib, threads int) (*Executor, error) {
	return NewPool(lib, threads, ggmlref.QuietPool)
}

// NewPool is New with the backend's threads kept as pool says (the
// benchmarks run ggml as its users get it: ggmlref.DefaultPool).
func NewPool(lib *ggmlref.Lib, threads int, pool ggmlref.Threadpool) (*Executor, error) {
	b, err := lib.NewCPUBackendPool(threads, pool)
	if err != nil {
		return nil, err
	}
	return &Executor{lib: lib, backend: b}, nil
}

// Close frees the backend and the context. The Executor must not be used after.
func (e *Executor) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.freeExtras()
	if e.ctx != nil {
		e.ctx.Free()
		e.ctx = nil
	}
	e.backend.Free()
}

func (e *Executor) freeExtras() {
	for _, b := range e.extras {
		b.Free()
	}
	e.extras = nil
	e.amx = false
}

// Name is "ggml".
func (e *Executor) Name() string { return "ggml" }

// Supports mirrors g and asks ggml's CPU backend about every node; the
// error names the first node it does not support.
func (e *Executor) Supports(g *graph.Graph) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	m, err := e.mirror(g, false)
	if err != nil {
		return err
	}
	return m.supported(e.backend)
}

// Compute mirrors g with its data, computes it on ggml's CPU backend and
// copies every node's memory (and the memory of tensors nodes write in
// place) back into the Tensor.Data of g's tensors. Leafs and the memory
// views read must have Data.
func (e *Executor) Compute(g *graph.Graph) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	l, err := e.load(g, nil)
	if err != nil {
		return err
	}
	if err := l.compute(); err != nil {
		return err
	}
	l.read()
	return nil
}

// Loaded is a graph mirrored with its data once, to be computed many
// times (a benchmark times ggml's compute alone). It lives in the
// executor's context: the executor's next Load or Compute ends it.
type Loaded struct {
	e  *Executor
	m  *mirrored
	cg *ggmlref.Graph
}

// Load mirrors g and copies its data in, as Compute does, without
// computing it.
func (e *Executor) Load(g *graph.Graph) (*Loaded, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.load(g, nil)
}

// RepackBufferType is the name of ggml's CPU extra buffer type that
// repacks weights.
const RepackBufferType = "CPU_REPACK"

// AMXBufferType is the name of the extra buffer type of ggml's builds with
// AMX (sapphirerapids) on a processor whose kernel grants the tile state:
// a weight set there is repacked into the tiles' layout, and every MUL_MAT
// reading it runs ggml's own AMX code (tile products, or its AVX-512 VNNI
// kernel for a single column).
const AMXBufferType = "AMX"

// LoadRepacked is Load with each of weights (leafs of g) placed in ggml's
// CPU_REPACK buffer type, as llama.cpp places weights, where ggml takes it
// for every node reading it; the others stay in plain memory. placed
// reports which were.
func (e *Executor) LoadRepacked(g *graph.Graph, weights []*graph.Tensor) (l *Loaded, placed []*graph.Tensor, err error) {
	return e.LoadExtra(g, weights, RepackBufferType)
}

// LoadExtra is LoadRepacked with the extra buffer type named buft
// (RepackBufferType, AMXBufferType); an error matching ErrUnsupported
// when ggml's CPU device has none of that name.
func (e *Executor) LoadExtra(g *graph.Graph, weights []*graph.Tensor, buft string) (l *Loaded, placed []*graph.Tensor, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	bts, err := e.backend.ExtraBufferTypes()
	if err != nil {
		return nil, nil, err
	}
	var bt *ggmlref.BufferType
	for i := range bts {
		if bts[i].Name == buft {
			bt = &bts[i]
		}
	}
	if bt == nil {
		return nil, nil, fmt.Errorf("%w: ggml's CPU device has no %s buffer type", ErrUnsupported, buft)
	}
	place := func(m *mirrored, w *graph.Tensor) error {
		ct := m.c[w]
		var users []*ggmlref.Tensor
		for _, n := range g.Nodes {
			for _, s := range n.Src {
				if s == w {
					users = append(users, m.c[n])
					break
				}
			}
		}
		data := ct.Data
		ct.Data = nil
		b, err := e.backend.Place(*bt, ct, w.Data[:w.NBytes()], users)
		if err != nil {
			ct.Data = data
			if errors.Is(err, ggmlref.ErrNotPlaceable) {
				return nil
			}
			return err
		}
		e.extras = append(e.extras, b)
		e.amx = e.amx || buft == AMXBufferType
		placed = append(placed, w)
		return nil
	}
	l, err = e.load(g, func(m *mirrored) error {
		for _, w := range weights {
			if err := place(m, w); err != nil {
				return err
			}
		}
		return nil
	})
	return l, placed, err
}

// Compute computes the loaded graph on ggml's CPU backend; the results
// stay in ggml's memory until Read.
func (l *Loaded) Compute() error {
	l.e.mu.Lock()
	defer l.e.mu.Unlock()
	return l.compute()
}

// Read copies the results of the last Compute into the Tensor.Data of the
// graph's tensors, as Executor.Compute does.
func (l *Loaded) Read() {
	l.e.mu.Lock()
	defer l.e.mu.Unlock()
	l.read()
}

// Data is the ggml memory of t, a tensor of the loaded graph: after
// Compute, a node's result as ggml computed it, without copying it into
// t.Data as Read does (whose tensors may share memory, as a graph
// allocator places them).
func (l *Loaded) Data(t *graph.Tensor) ([]byte, error) {
	l.e.mu.Lock()
	defer l.e.mu.Unlock()
	if l.e.loaded != l {
		return nil, errors.New("mirror: the executor has loaded another graph since")
	}
	o, offs := t, uint64(0)
	if t.ViewSrc != nil {
		o, offs = t.ViewSrc, t.ViewOffs
	}
	base, ok := l.m.offs[o]
	if !ok {
		return nil, fmt.Errorf("mirror: %s is not in the loaded graph", t)
	}
	return unsafe.Slice((*byte)(unsafe.Add(l.m.arena, base+offs)), t.NBytes()), nil
}

// load mirrors g; before, when not nil, places tensors elsewhere than
// the mirror's arena before the support check.
func (e *Executor) load(g *graph.Graph, before func(m *mirrored) error) (*Loaded, error) {
	m, err := e.mirror(g, true)
	if err != nil {
		return nil, err
	}
	if before != nil {
		if err := before(m); err != nil {
			return nil, err
		}
	}
	// ggml aborts the process on an operation it cannot compute; ask first.
	if err := m.supported(e.backend); err != nil {
		return nil, err
	}
	for _, t := range m.owners {
		if n := t.NBytes(); n > 0 {
			copy(m.data(t), t.Data[:n])
		}
	}
	cg, err := e.ctx.NewGraph(len(m.order) + 1)
	if err != nil {
		return nil, err
	}
	// Expanding every node in turn reproduces g's order exactly: each
	// node's computed sources are already in the graph when it comes.
	for _, n := range g.Nodes {
		if err := cg.BuildForwardExpand(m.c[n]); err != nil {
			return nil, err
		}
	}
	if cg.NNodes() != len(g.Nodes) {
		return nil, fmt.Errorf("%w: ggml built %d nodes from %d", ErrNotMirrorable, cg.NNodes(), len(g.Nodes))
	}
	for i, n := range g.Nodes {
		if cg.Node(i) != m.c[n] {
			return nil, fmt.Errorf("%w: ggml ordered node %d differently (%s)", ErrNotMirrorable, i, n)
		}
	}
	e.loaded = &Loaded{e: e, m: m, cg: cg}
	return e.loaded, nil
}

func (l *Loaded) compute() error {
	if l.e.loaded != l {
		return errors.New("mirror: the executor has loaded another graph since")
	}
	if err := l.e.onComputeThread(func() error { return l.e.backend.Compute(l.cg) }); err != nil {
		if l.e.backend.Aborted() != nil {
			l.e.loaded = nil
			return l.e.replaceBackend(fmt.Errorf("%w (computing %s)", err, describeGraph(l.m.g)))
		}
		return err
	}
	return nil
}

// onComputeThread runs f, a computation on ggml's backend, on an OS
// thread kept for ggml's AMX code (ggmlref.OnAMXThread) when the loaded
// graph has a weight in the AMX buffer type.
func (e *Executor) onComputeThread(f func() error) error {
	if !e.amx {
		return f()
	}
	var err error
	ggmlref.OnAMXThread(func() { err = f() })
	return err
}

func (l *Loaded) read() {
	written := map[*graph.Tensor]bool{}
	for _, n := range l.m.g.Nodes {
		o := n
		if n.ViewSrc != nil {
			o = n.ViewSrc
		}
		if !written[o] {
			written[o] = true
			copy(o.Data, l.m.data(o))
		}
	}
}

// replaceBackend swaps a backend that aborted for a new one, so that one
// bad case does not end a run; it returns err, the abort.
func (e *Executor) replaceBackend(err error) error {
	threads := e.backend.Threads()
	e.backend.Free()
	b, nerr := e.lib.NewCPUBackendPool(threads, e.backend.Pool())
	if nerr != nil {
		return fmt.Errorf("%w; and no new backend: %w", err, nerr)
	}
	e.backend = b
	return err
}

// describeGraph names a graph's nodes for messages, the first few of them.
func describeGraph(g *graph.Graph) string {
	const most = 3
	var parts []string
	for _, n := range g.Nodes[:min(len(g.Nodes), most)] {
		parts = append(parts, Describe(n))
	}
	if len(g.Nodes) > most {
		parts = append(parts, fmt.Sprintf("and %d more nodes", len(g.Nodes)-most))
	}
	return strings.Join(parts, "; ")
}

// mirrored is one graph copied into the executor's context.
type mirrored struct {
	g     *graph.Graph
	order []*graph.Tensor
	// c maps each tensor to its ggml copy.
	c map[*graph.Tensor]*ggmlref.Tensor
	// owners are the tensors with memory of their own (not views), in
	// order; offs their data's offsets in arena.
	owners []*graph.Tensor
	offs   map[*graph.Tensor]uint64
	arena  unsafe.Pointer
}

// data is the ggml memory of owner t.
func (m *mirrored) data(t *graph.Tensor) []byte {
	n := t.NBytes()
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(m.arena, m.offs[t])), n)
}

func (m *mirrored) supported(b *ggmlref.Backend) error {
	for _, n := range m.g.Nodes {
		if !b.SupportsOp(m.c[n]) {
			return fmt.Errorf("%w: %s", ErrUnsupported, Describe(n))
		}
	}
	return nil
}

// Describe names a node for messages: its name, operation, type and shape,
// and its sources' types and shapes.
func Describe(t *graph.Tensor) string {
	var b strings.Builder
	b.WriteString(t.String())
	sep := " from "
	for i, s := range t.Src {
		if s != nil {
			fmt.Fprintf(&b, "%ssrc%d %s [%d %d %d %d]", sep, i, s.Type, s.Ne[0], s.Ne[1], s.Ne[2], s.Ne[3])
			sep = ", "
		}
	}
	return b.String()
}

// Reachable lists every tensor g's nodes and leafs reach through their
// sources and views, each once, sources before the tensors that use them:
// the tensors a ggml copy of g needs.
func Reachable(g *graph.Graph) []*graph.Tensor { return reachable(g, false) }

// reachable is Reachable; with inputsOnly, a tensor computed outside g (g
// a view of a larger graph) counts as an input and its own sources are not
// visited: computing one node of a model's graph then copies that node's
// sources, not every weight above them.
func reachable(g *graph.Graph, inputsOnly bool) []*graph.Tensor {
	seen := map[*graph.Tensor]bool{}
	var order []*graph.Tensor
	var visit func(t *graph.Tensor)
	visit = func(t *graph.Tensor) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		if !inputsOnly || t.Op == ops.None || g.Contains(t) {
			for _, s := range t.Src {
				visit(s)
			}
		}
		visit(t.ViewSrc)
		order = append(order, t)
	}
	for _, t := range g.Leafs {
		visit(t)
	}
	for _, t := range g.Nodes {
		visit(t)
	}
	return order
}

// check rejects what ggml would crash on or what the mirror cannot copy.
func check(t *graph.Tensor, withData bool) error {
	if !t.Type.Valid() {
		return fmt.Errorf("%w: %s has invalid type %d", ErrNotMirrorable, t, uint32(t.Type))
	}
	if !t.Op.Valid() {
		return fmt.Errorf("%w: %s has invalid op %d", ErrNotMirrorable, t, int32(t.Op))
	}
	for i, n := range t.Ne {
		if n < 0 {
			return fmt.Errorf("%w: %s has ne[%d] = %d", ErrNotMirrorable, t, i, n)
		}
	}
	if v := t.ViewSrc; v != nil {
		if v.ViewSrc != nil {
			return fmt.Errorf("%w: %s views %s, itself a view", ErrNotMirrorable, t, v)
		}
		if n := t.NBytes(); n > 0 && t.ViewOffs+n > v.NBytes() {
			return fmt.Errorf("%w: view %s of %d bytes at offset %d exceeds its source's %d bytes",
				ErrNotMirrorable, t, n, t.ViewOffs, v.NBytes())
		}
		return nil
	}
	if n := t.NBytes(); withData && uint64(len(t.Data)) < n {
		return fmt.Errorf("%w: %s has %d bytes of Data, needs %d", ErrNotMirrorable, t, len(t.Data), n)
	}
	return nil
}

// mirror copies g's structure into a fresh state of the executor's
// context, with memory for the data when withData.
func (e *Executor) mirror(g *graph.Graph, withData bool) (*mirrored, error) {
	e.loaded = nil
	e.freeExtras()
	if len(g.Nodes) == 0 {
		return nil, fmt.Errorf("%w: graph has no nodes", ErrNotMirrorable)
	}
	m := &mirrored{g: g, order: reachable(g, true), c: map[*graph.Tensor]*ggmlref.Tensor{}, offs: map[*graph.Tensor]uint64{}}
	var arena uint64
	for _, t := range m.order {
		if err := check(t, withData); err != nil {
			return nil, err
		}
		if t.ViewSrc == nil {
			m.owners = append(m.owners, t)
			m.offs[t] = arena
			arena += (t.NBytes() + dataAlign - 1) / dataAlign * dataAlign
		}
	}
	if !withData {
		arena = 0
	}
	graphSize := len(m.order) + 1
	need := uint64(len(m.order))*e.lib.TensorOverhead() + e.lib.GraphOverhead(graphSize) +
		ggmlref.BufferOverhead(arena+dataAlign) + 1024
	if err := e.context(need); err != nil {
		return nil, err
	}
	if withData {
		p, err := e.ctx.NewBuffer(arena + dataAlign)
		if err != nil {
			return nil, err
		}
		// Align the arena itself; offsets are multiples of dataAlign.
		m.arena = unsafe.Add(p, (dataAlign-uintptr(p)%dataAlign)%dataAlign)
	}
	for _, t := range m.order {
		ct, err := e.ctx.NewTensor(uint32(t.Type), t.Ne)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		m.c[t] = ct
	}
	for _, t := range m.order {
		ct := m.c[t]
		ct.Nb = t.Nb
		ct.Op = int32(t.Op)
		ct.OpParams = t.Params
		ct.Flags = int32(t.Flags)
		switch {
		case !g.Contains(t) && t.Op != ops.None:
			// Computed outside this graph (g is a view of a larger one):
			// here it is an input with its current contents.
			ct.Op = int32(ops.None)
			ct.Flags &^= int32(graph.FlagCompute)
		case t.Op != ops.None:
			// ggml skips nodes without the flag; our devices compute
			// every node of the graph they are given.
			ct.Flags |= int32(graph.FlagCompute)
		}
		for i, s := range t.Src {
			if s != nil && m.c[s] != nil {
				ct.Src[i] = m.c[s]
			}
		}
		ct.SetName(t.Name)
		if v := t.ViewSrc; v != nil {
			ct.ViewSrc = m.c[v]
			ct.ViewOffs = t.ViewOffs
			if withData {
				ct.Data = unsafe.Add(m.arena, m.offs[v]+t.ViewOffs)
			}
		} else if withData {
			ct.Data = unsafe.Add(m.arena, m.offs[t])
		}
	}
	return m, nil
}

// context readies the executor's context with at least need bytes free.
func (e *Executor) context(need uint64) error {
	if e.ctx != nil && e.ctx.Size() >= need {
		e.ctx.Reset()
		return nil
	}
	if e.ctx != nil {
		e.ctx.Free()
		e.ctx = nil
	}
	size := uint64(1 << 20)
	for size < need {
		size *= 2
	}
	ctx, err := e.lib.NewContext(size, true)
	if err != nil {
		return err
	}
	e.ctx = ctx
	return nil
}

// Versions names the library computing the reference (optest.Versioner):
// ggml's version, commit and CPU variant.
func (e *Executor) Versions() map[string]string {
	return map[string]string{"ggml": fmt.Sprintf("%s (%s), CPU variant %s", e.lib.Version(), e.lib.Commit(), e.lib.Variant())}
}
