package ggmlref

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
)

// This file is the low-level graph API of the real ggml: contexts, tensors
// whose C struct is read and written in place, graphs, and the CPU backend
// that computes them. It knows nothing of ggml-go's own graph package (which
// imports quant, whose tests import this package); internal/testkit/ggmlref/mirror
// translates between the two.

// Limits and enum counts of ggml 0.25.1.
const (
	MaxDims     = 4  // GGML_MAX_DIMS
	MaxSrc      = 10 // GGML_MAX_SRC
	MaxOpParams = 16 // GGML_MAX_OP_PARAMS / sizeof(int32_t)
	MaxName     = 64 // GGML_MAX_NAME, including the NUL
	// OpCount is GGML_OP_COUNT.
	OpCount = 101
	// memAlign is GGML_MEM_ALIGN on 64-bit hosts.
	memAlign = 16
	// objectSize is sizeof(struct ggml_object), the header of every
	// allocation in a context.
	objectSize = 32
)

// ErrContextFull reports an allocation the context has no room for; ggml
// itself would return NULL (and crash on it) in its release build.
var ErrContextFull = errors.New("ggmlref: not enough space in the ggml context")

// InitParams is struct ggml_init_params, passed to ggml_init by value
// (24 bytes: mem_size 0, mem_buffer 8, no_alloc 16).
type InitParams struct {
	MemSize   uintptr
	MemBuffer uintptr
	NoAlloc   bool
	_         [7]byte
}

// Tensor is struct ggml_tensor of ggml 0.25.1 (336 bytes). A *Tensor from
// this package points into a ggml context's memory, so its fields are the
// C fields: writing them changes what ggml computes. It is valid until the
// context is freed or reset.
type Tensor struct {
	Type     uint32
	_        uint32
	Buffer   uintptr
	Ne       [MaxDims]int64
	Nb       [MaxDims]uint64
	Op       int32
	OpParams [MaxOpParams]int32
	Flags    int32
	Src      [MaxSrc]*Tensor
	ViewSrc  *Tensor
	ViewOffs uint64
	Data     unsafe.Pointer
	Name     [MaxName]byte
	Extra    uintptr
	Padding  [8]byte
}

// TensorSize is sizeof(struct ggml_tensor).
const TensorSize = unsafe.Sizeof(Tensor{})

// SetName stores name in the fixed C field, cut to MaxName-1 bytes.
func (t *Tensor) SetName(name string) {
	n := copy(t.Name[:MaxName-1], name)
	clear(t.Name[n:])
}

// GetName returns the C name up to its NUL.
func (t *Tensor) GetName() string {
	for i, c := range t.Name {
		if c == 0 {
			return string(t.Name[:i])
		}
	}
	return string(t.Name[:])
}

// graphAPI holds the entry points of the graph API.
type graphAPI struct {
	initCtx          func(InitParams) uintptr
	free             func(ctx uintptr)
	reset            func(ctx uintptr)
	usedMem          func(ctx uintptr) uintptr
	newTensor        func(ctx uintptr, typ int32, nDims int32, ne *int64) *Tensor
	newBuffer        func(ctx uintptr, n uintptr) unsafe.Pointer
	nbytes           func(t *Tensor) uintptr
	tensorOverhead   func() uintptr
	graphOverhead    func(size uintptr, grads bool) uintptr
	newGraph         func(ctx uintptr, size uintptr, grads bool) uintptr
	buildForward     func(g uintptr, t *Tensor)
	graphNNodes      func(g uintptr) int32
	graphNode        func(g uintptr, i int32) *Tensor
	backendCPUInit   func() uintptr
	backendThreads   func(b uintptr, n int32)
	backendDevice    func(b uintptr) uintptr
	backendFree      func(b uintptr)
	backendCompute   func(b uintptr, g uintptr) int32
	devSupportsOp    func(dev uintptr, t *Tensor) uint8
	tpParamsInit     func(p *ThreadpoolParams, n int32)
	tpNew            func(p *ThreadpoolParams) uintptr
	tpFree           func(tp uintptr)
	backendSetTP     func(b uintptr, tp uintptr)
	tensorOverheadSz uintptr
}

func (l *Lib) loadGraphAPI(base, cpu *dynlib.Library) error {
	g := &graphAPI{}
	fns := []struct {
		lib  *dynlib.Library
		name string
		fn   any
	}{
		{base, "ggml_init", &g.initCtx},
		{base, "ggml_free", &g.free},
		{base, "ggml_reset", &g.reset},
		{base, "ggml_used_mem", &g.usedMem},
		{base, "ggml_new_tensor", &g.newTensor},
		{base, "ggml_new_buffer", &g.newBuffer},
		{base, "ggml_nbytes", &g.nbytes},
		{base, "ggml_tensor_overhead", &g.tensorOverhead},
		{base, "ggml_graph_overhead_custom", &g.graphOverhead},
		{base, "ggml_new_graph_custom", &g.newGraph},
		{base, "ggml_build_forward_expand", &g.buildForward},
		{base, "ggml_graph_n_nodes", &g.graphNNodes},
		{base, "ggml_graph_node", &g.graphNode},
		{cpu, "ggml_backend_cpu_init", &g.backendCPUInit},
		{cpu, "ggml_backend_cpu_set_n_threads", &g.backendThreads},
		{base, "ggml_backend_get_device", &g.backendDevice},
		{base, "ggml_backend_free", &g.backendFree},
		{base, "ggml_backend_graph_compute", &g.backendCompute},
		// Declared as returning a byte: only the low byte of a C bool
		// return is defined.
		{base, "ggml_backend_dev_supports_op", &g.devSupportsOp},
		{base, "ggml_threadpool_params_init", &g.tpParamsInit},
		{cpu, "ggml_threadpool_new", &g.tpNew},
		{cpu, "ggml_threadpool_free", &g.tpFree},
		{cpu, "ggml_backend_cpu_set_threadpool", &g.backendSetTP},
	}
	for _, f := range fns {
		sym, err := l.dlsym(f.lib, f.name)
		if err != nil {
			return err
		}
		purego.RegisterFunc(f.fn, sym)
	}
	g.tensorOverheadSz = g.tensorOverhead()
	if want := uintptr(objectSize) + TensorSize; g.tensorOverheadSz != want {
		return fmt.Errorf("%w: ggml_tensor_overhead() = %d, want %d (is this ggml 0.25.1?)", ErrNotAvailable, g.tensorOverheadSz, want)
	}
	var tp ThreadpoolParams
	g.tpParamsInit(&tp, 3)
	if tp.NThreads != 3 || tp.Poll != 50 {
		return fmt.Errorf("%w: struct ggml_threadpool_params does not have 0.25.1's layout (n_threads %d, poll %d)",
			ErrNotAvailable, tp.NThreads, tp.Poll)
	}
	l.graph = g
	return nil
}

// ThreadpoolParams is struct ggml_threadpool_params (528 bytes; cpumask 0,
// n_threads 512, prio 516, poll 520, strict_cpu 524, paused 525).
type ThreadpoolParams struct {
	CPUMask   [512]bool
	NThreads  int32
	Prio      int32
	Poll      uint32
	StrictCPU bool
	Paused    bool
	_         [2]byte
}

// TensorOverhead is ggml_tensor_overhead(): the context memory a tensor
// header takes.
func (l *Lib) TensorOverhead() uint64 { return uint64(l.graph.tensorOverheadSz) }

// GraphOverhead is ggml_graph_overhead_custom(size, false): the context
// memory a graph of up to size nodes and size leafs takes.
func (l *Lib) GraphOverhead(size int) uint64 {
	return uint64(l.graph.graphOverhead(uintptr(max(size, 1)), false))
}

// BufferOverhead is the context memory ggml_new_buffer takes for n bytes.
func BufferOverhead(n uint64) uint64 { return pad(n, memAlign) + objectSize }

func pad(n, a uint64) uint64 { return (n + a - 1) / a * a }

// Context is a ggml context: one block of memory holding tensor headers,
// graphs and (unless it was made with noAlloc) tensor data.
type Context struct {
	l       *Lib
	ptr     uintptr
	size    uint64
	noAlloc bool
}

// NewContext is ggml_init with memSize bytes of memory that ggml allocates
// and owns, and no_alloc as given.
func (l *Lib) NewContext(memSize uint64, noAlloc bool) (*Context, error) {
	if memSize == 0 || memSize > math.MaxInt64 {
		return nil, fmt.Errorf("ggmlref: context size %d out of range", memSize)
	}
	p := l.graph.initCtx(InitParams{MemSize: uintptr(memSize), NoAlloc: noAlloc})
	if p == 0 {
		return nil, fmt.Errorf("ggmlref: ggml_init(%d bytes) failed", memSize)
	}
	return &Context{l: l, ptr: p, size: memSize, noAlloc: noAlloc}, nil
}

// Free is ggml_free. The context and everything in it must not be used after.
func (c *Context) Free() {
	if c.ptr != 0 {
		c.l.graph.free(c.ptr)
		c.ptr = 0
	}
}

// Reset is ggml_reset: the context's memory becomes free again, and every
// tensor and graph in it invalid.
func (c *Context) Reset() { c.l.graph.reset(c.ptr) }

// Size is the context's memory size.
func (c *Context) Size() uint64 { return c.size }

// Used is ggml_used_mem.
func (c *Context) Used() uint64 { return uint64(c.l.graph.usedMem(c.ptr)) }

// reserve checks that an object of size bytes fits, as ggml_new_object
// would (it returns NULL in the release build, which ggml then uses).
func (c *Context) reserve(what string, size uint64) error {
	if c.ptr == 0 {
		return errors.New("ggmlref: context already freed")
	}
	if need := c.Used() + pad(size, memAlign) + objectSize; size > math.MaxInt64 || need > c.size {
		return fmt.Errorf("%w: %s needs %d more bytes, %d of %d used", ErrContextFull, what, pad(size, memAlign)+objectSize, c.Used(), c.size)
	}
	return nil
}

// NewTensor is ggml_new_tensor: a dense tensor of type typ and shape ne
// (innermost first, all four dimensions), with data in the context unless
// it was made with noAlloc.
func (c *Context) NewTensor(typ uint32, ne [MaxDims]int64) (*Tensor, error) {
	tr, err := c.l.Traits(typ)
	if err != nil {
		return nil, err
	}
	if tr.BlockSize <= 0 || tr.TypeSize <= 0 {
		return nil, fmt.Errorf("ggmlref: type %d (%s) has no layout", typ, tr.Name)
	}
	if ne[0]%tr.BlockSize != 0 {
		return nil, fmt.Errorf("ggmlref: ne[0] = %d is not a multiple of %s's block size %d", ne[0], tr.Name, tr.BlockSize)
	}
	size := uint64(TensorSize)
	data := uint64(ne[0] / tr.BlockSize * tr.TypeSize)
	for i, n := range ne {
		if n < 0 {
			return nil, fmt.Errorf("ggmlref: ne[%d] = %d out of range", i, n)
		}
		if i > 0 {
			if n != 0 && data > math.MaxInt64/uint64(n) {
				return nil, fmt.Errorf("ggmlref: tensor %v of %s overflows", ne, tr.Name)
			}
			data *= uint64(n)
		}
	}
	if !c.noAlloc {
		size += data
	}
	if err := c.reserve("tensor", size); err != nil {
		return nil, err
	}
	t := c.l.graph.newTensor(c.ptr, int32(typ), MaxDims, &ne[0])
	if t == nil {
		return nil, fmt.Errorf("ggmlref: ggml_new_tensor(%s, %v) returned NULL", tr.Name, ne)
	}
	return t, nil
}

// NewBuffer is ggml_new_buffer: n bytes of context memory (aligned to 16),
// whatever noAlloc says.
func (c *Context) NewBuffer(n uint64) (unsafe.Pointer, error) {
	if err := c.reserve("buffer", n); err != nil {
		return nil, err
	}
	p := c.l.graph.newBuffer(c.ptr, uintptr(n))
	if p == nil {
		return nil, fmt.Errorf("ggmlref: ggml_new_buffer(%d) returned NULL", n)
	}
	return p, nil
}

// NBytes is ggml_nbytes.
func (l *Lib) NBytes(t *Tensor) uint64 { return uint64(l.graph.nbytes(t)) }

// Graph is a ggml_cgraph in a context.
type Graph struct {
	l    *Lib
	ptr  uintptr
	size int
}

// Handle is the ggml_cgraph pointer, for bindings of ggml functions this
// package does not wrap (the RPC backend's, in internal/rpcref).
func (g *Graph) Handle() uintptr { return g.ptr }

// NewGraph is ggml_new_graph_custom(ctx, size, false): room for size nodes
// and size leafs, no gradients.
func (c *Context) NewGraph(size int) (*Graph, error) {
	if size < 1 || size > math.MaxInt32/2 {
		return nil, fmt.Errorf("ggmlref: graph size %d out of range", size)
	}
	if err := c.reserve("graph", c.l.GraphOverhead(size)-objectSize); err != nil {
		return nil, err
	}
	p := c.l.graph.newGraph(c.ptr, uintptr(size), false)
	if p == 0 {
		return nil, fmt.Errorf("ggmlref: ggml_new_graph_custom(%d) returned NULL", size)
	}
	return &Graph{l: c.l, ptr: p, size: size}, nil
}

// Size is the number of nodes (and of leafs) the graph has room for.
func (g *Graph) Size() int { return g.size }

// BuildForwardExpand is ggml_build_forward_expand. ggml asserts that the
// graph has room for every tensor t depends on; that abort comes back as an
// *AbortError, the graph then unusable.
func (g *Graph) BuildForwardExpand(t *Tensor) error {
	if t == nil {
		return errors.New("ggmlref: ggml_build_forward_expand of a nil tensor")
	}
	return Catch(func() { g.l.graph.buildForward(g.ptr, t) })
}

// NNodes is ggml_graph_n_nodes.
func (g *Graph) NNodes() int { return int(g.l.graph.graphNNodes(g.ptr)) }

// Node is ggml_graph_node for 0 <= i < NNodes(), or nil.
func (g *Graph) Node(i int) *Tensor {
	if i < 0 || i >= g.NNodes() {
		return nil
	}
	return g.l.graph.graphNode(g.ptr, int32(i))
}

// Backend is ggml's CPU backend (ggml_backend_cpu_init), reusable across
// graphs; it keeps its work buffer and its threads between computations.
type Backend struct {
	l       *Lib
	ptr     uintptr
	dev     uintptr
	tp      uintptr
	threads int
	pool    Threadpool
	// aborted is the ggml abort a computation ended with; the backend
	// cannot compute after one.
	aborted error
}

// Threadpool says how a CPU backend's threads are kept between computations.
type Threadpool int

const (
	// QuietPool is a persistent ggml_threadpool_new whose threads wait
	// without polling between computations, so they take no CPU from
	// whatever runs beside them (the conformance suite's choice).
	QuietPool Threadpool = iota
	// DefaultPool is ggml_backend_cpu_init with no threadpool set, as a
	// plain ggml user gets it: ggml_graph_compute makes a threadpool with
	// the default parameters (polling 50) for every graph and joins it.
	DefaultPool
	// PersistentPool is ggml_threadpool_new with the default parameters
	// (polling 50) set on the backend once, as llama.cpp does.
	PersistentPool
)

// String names the pool kind as the benchmarks print it.
func (p Threadpool) String() string {
	switch p {
	case QuietPool:
		return "quiet"
	case DefaultPool:
		return "default"
	case PersistentPool:
		return "persistent"
	}
	return fmt.Sprintf("Threadpool(%d)", int(p))
}

// NewCPUBackend initializes a CPU backend computing with threads threads.
// Its threads persist, waiting without polling between computations (so
// they do not take CPU from whatever runs beside them), instead of being
// created for every graph as ggml does without a thread pool.
func (l *Lib) NewCPUBackend(threads int) (*Backend, error) {
	return l.NewCPUBackendPool(threads, QuietPool)
}

// NewCPUBackendPool initializes a CPU backend computing with threads
// threads, its threads kept as pool says.
func (l *Lib) NewCPUBackendPool(threads int, pool Threadpool) (*Backend, error) {
	if threads < 1 || threads > 512 {
		return nil, fmt.Errorf("ggmlref: %d threads out of range", threads)
	}
	if pool < QuietPool || pool > PersistentPool {
		return nil, fmt.Errorf("ggmlref: unknown %s", pool)
	}
	var tp uintptr
	if pool != DefaultPool {
		var tpp ThreadpoolParams
		l.graph.tpParamsInit(&tpp, int32(threads))
		if pool == QuietPool {
			tpp.Poll = 0
		}
		if tp = l.graph.tpNew(&tpp); tp == 0 {
			return nil, errors.New("ggmlref: ggml_threadpool_new failed")
		}
	}
	p := l.graph.backendCPUInit()
	if p == 0 {
		if tp != 0 {
			l.graph.tpFree(tp)
		}
		return nil, errors.New("ggmlref: ggml_backend_cpu_init failed")
	}
	b := &Backend{l: l, ptr: p, tp: tp, threads: threads, pool: pool}
	l.graph.backendThreads(p, int32(threads))
	if tp != 0 {
		l.graph.backendSetTP(p, tp)
	}
	if b.dev = l.graph.backendDevice(p); b.dev == 0 {
		b.Free()
		return nil, errors.New("ggmlref: the CPU backend has no device")
	}
	return b, nil
}

// Free is ggml_backend_free, then ggml_threadpool_free. After an abort in
// a multi-threaded computation the other threads may be waiting for the
// aborted one forever, and joining them would hang: such a backend is
// abandoned instead, its threads leaked.
func (b *Backend) Free() {
	if b.ptr != 0 && (b.aborted == nil || b.threads == 1) {
		b.l.graph.backendFree(b.ptr)
		if b.tp != 0 {
			b.l.graph.tpFree(b.tp)
		}
	}
	b.ptr, b.dev, b.tp = 0, 0, 0
}

// Threads is the number of threads the backend computes with.
func (b *Backend) Threads() int { return b.threads }

// Pool is how the backend keeps its threads.
func (b *Backend) Pool() Threadpool { return b.pool }

// Aborted returns the ggml abort that made the backend unusable, or nil.
func (b *Backend) Aborted() error { return b.aborted }

// SupportsOp is ggml_backend_dev_supports_op on the backend's device. ggml
// reads t's sources, so they must be valid tensors; ops out of range are
// refused without asking.
func (b *Backend) SupportsOp(t *Tensor) bool {
	if b.ptr == 0 || t == nil || t.Op < 0 || t.Op >= OpCount {
		return false
	}
	return b.l.graph.devSupportsOp(b.dev, t) != 0
}

// Status values of enum ggml_status.
const (
	StatusAllocFailed = -2
	StatusFailed      = -1
	StatusSuccess     = 0
	StatusAborted     = 1
)

// Compute is ggml_backend_graph_compute; a status other than success is
// an error, and so is an abort (an *AbortError), after which the backend
// cannot compute again.
func (b *Backend) Compute(g *Graph) error {
	if b.ptr == 0 {
		return errors.New("ggmlref: backend already freed")
	}
	if b.aborted != nil {
		return fmt.Errorf("ggmlref: backend unusable after an earlier abort (%w)", b.aborted)
	}
	var st int32
	if err := Catch(func() { st = b.l.graph.backendCompute(b.ptr, g.ptr) }); err != nil {
		b.aborted = err
		return err
	}
	switch st {
	case StatusSuccess:
		return nil
	case StatusAllocFailed:
		return errors.New("ggmlref: graph compute: allocation failed")
	case StatusFailed:
		return errors.New("ggmlref: graph compute failed")
	case StatusAborted:
		return errors.New("ggmlref: graph compute aborted")
	default:
		return fmt.Errorf("ggmlref: graph compute: status %d", st)
	}
}
