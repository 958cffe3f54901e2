package openvino

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/mmap"
	"github.com/ggml-go/ggml/ops"
)

// compiledModel is a graph compiled by OpenVINO: shared by every backend
// of the device (upstream's process-wide compiled-model cache).
type compiledModel struct {
	key     string
	cm      uintptr
	weights uintptr // the U8 tensor over the weights blob
	side    []byte  // small constants, outside the Go heap
	// conv are the host tensors' conversions its Constants point at.
	conv    []*convEntry
	freeMem func() error
	params  []slot // Parameter order
	results []slot // Result order
	// inPlace is, per Result, the Parameter whose memory it may be
	// written over in place (-1: none; outputs.go inPlaceParams).
	inPlace []int
	// dump is the DUMP_IR path prefix of this model ("" when not dumped);
	// its first run also writes the inputs and outputs next to it.
	dump   string
	dumped bool
	// stateful: the model keeps KV caches in variables (stateful.go).
	stateful bool
}

// slot says how to find, in a graph of the cached structure, the tensor a
// Parameter or Result is bound to, and what it must be.
type slot struct {
	loc   locator
	et    elemType
	shape []int64
	// dyn: the port has dynamic dimensions (dynamic.go); it takes the
	// shape of the tensor bound to it, of shape's rank.
	dyn bool
}

// shapeFor is the shape t is bound to s with.
func (s slot) shapeFor(t *graph.Tensor) ([]int64, error) {
	if !s.dyn {
		return s.shape, nil
	}
	return dynShape(t, len(s.shape))
}

// modelCache is the device's compiled models by graph key, shared by its
// backends and freed with the last of them, as upstream's process-wide
// cache (ov_compiled_model_cache) dies with the last backend context.
type modelCache struct {
	mu       sync.Mutex
	models   map[string]*compiledModel
	backends int // open backends of the device
	// compiled and imported count the models ov_core_compile_model and
	// ov_core_import_model (COMPILED_MODEL_CACHE_DIR) made.
	compiled, imported int
	// stats are what CacheStats reports (hits, misses, times).
	stats CacheStats
}

// CacheStats counts a device's compiled-model cache and the host time
// around it since the device was opened, for benchmarks (`ggml bench
// model -b OPENVINO0`). The NPU static path's chunks are not counted.
type CacheStats struct {
	// Hits are GraphCompute calls that found their graph's model in the
	// cache; Misses those that compiled it, or imported it from
	// COMPILED_MODEL_CACHE_DIR (graphs that bypass the cache included).
	Hits, Misses int
	// Vouched are the hits whose graph the caller vouched for, unchanged
	// since its last compute (a scheduler computing the graph it placed
	// again, backend.PlacedGraphComputer): their tensors were not
	// compared with the records of that compute.
	Vouched int
	// Compiles is the time of each miss, in order: translating the graph,
	// reading and compiling (or importing) the IR.
	Compiles []time.Duration
	// HitHost is the host time of the hits added up: each GraphCompute's
	// time outside ov_infer_request_infer (the key, lookup, binding and
	// copies out).
	HitHost time.Duration
	// HitCopy is the part of HitHost spent copying outputs out of the
	// scratch memory they were bound to (strided outputs, and those that
	// overlap an input where writing in place is not safe: a KV cache
	// that SET_ROWS writes is written in place when only its ScatterUpdate
	// reads the old contents, outputs.go inPlaceParams).
	HitCopy time.Duration
}

// CacheStats is a copy of the device's counters (see CacheStats).
func (d *device) CacheStats() CacheStats {
	d.cache.mu.Lock()
	defer d.cache.mu.Unlock()
	s := d.cache.stats
	s.Compiles = slices.Clone(s.Compiles)
	return s
}

func newModelCache() *modelCache { return &modelCache{models: map[string]*compiledModel{}} }

// open counts a new backend.
func (c *modelCache) open() {
	c.mu.Lock()
	c.backends++
	c.mu.Unlock()
}

// close counts a backend closed, and frees every model once none is left.
func (c *modelCache) close(n *native) {
	c.mu.Lock()
	c.backends--
	var drop map[string]*compiledModel
	if c.backends == 0 {
		drop, c.models = c.models, map[string]*compiledModel{}
	}
	c.mu.Unlock()
	for _, cm := range drop {
		cm.free(n)
	}
}

// ovBackend runs graphs on the device: one infer request per compiled
// model, per backend.
type ovBackend struct {
	// The fields up to copyTime are what a vouched cache hit reads, side
	// by side: after an infer every cache line it touches is a miss
	// (about 0.3 us each on the real CPU plugin, which streams the
	// weights over both cores), so a field reached through dev, rt or
	// opts costs more than the work it is read for.
	closed bool
	// last is the key of the previous graph and a snapshot of what it
	// was computed from: the same graph again skips building the key,
	// looking it up (lastCM) and, on a request bound for it (snapGen),
	// re-checking and re-binding its tensors.
	last keyInfo
	// lastID is the scheduler's promise (backend.PlacedGraphComputer)
	// that last came with last.g, 0 for none: the same id again vouches
	// for the graph, unchanged since it was checked.
	lastID   backend.PlacementID
	lastSnap graphSnap
	lastCM   *compiledModel
	// lastReq is lastCM's request when a vouched hit may go straight to
	// it (plainHits), else nil.
	lastReq *reqState
	snapGen uint64
	// plainHits: nothing but binding and inferring happens on a hit of
	// the same graph (no static path, stateful execution, weight
	// release, fallback, dumps or debug output), fixed by the options.
	plainHits bool
	lib       *native
	inferFn   uintptr
	// inferTime is the last ov_infer_request_infer's time (CacheStats'
	// host time leaves it out), copyTime that of its outputs' copies out
	// of scratch memory.
	inferTime, copyTime time.Duration

	dev  *device
	opts Options
	reqs map[*compiledModel]*reqState
	// shapes are the graphs whose keys were built, most recent first,
	// remembered by position (shape.go); shapeHits counts the graphs
	// they recognized.
	shapes []*shapeRec
	// dynRefused are the family keys (dynamic.go) whose probes did not fit:
	// their graphs keep one model per shape.
	dynRefused map[string]bool
	// families are the graph families (dynamic.go) seen last, most
	// recent first.
	families  []*dynPlan
	shapeHits int
	// static is the NPU static path's state (npu.go).
	static staticState
	// stateResets counts the fresh requests the stateful policy made;
	// kvOwner is the request that last wrote the KV cache.
	stateResets int
	kvOwner     *reqState
}

func newBackend(d *device) *ovBackend { return newBackendOpts(d, d.rt.opts) }

func newBackendOpts(d *device, o Options) *ovBackend {
	d.cache.open()
	k := d.rt.kind
	be := &ovBackend{dev: d, opts: o, reqs: map[*compiledModel]*reqState{}, lib: d.rt.lib, inferFn: d.rt.lib.infer,
		plainHits: !o.Static(k) && !o.statefulOn(k) && !o.ReleaseWeightsEnabled(k) && !o.DisableCache && !o.EnableFallback &&
			!o.DumpIR && !o.DebugInput && !o.DebugOutput && o.Profiling == 0}
	if testBackendHook != nil {
		testBackendHook(be)
	}
	return be
}

// testBackendHook, set by tests only, sees every backend made, so that a
// test running a model through package model can inspect its bindings.
var testBackendHook func(*ovBackend)

func (be *ovBackend) Name() string           { return be.dev.name }
func (be *ovBackend) Device() backend.Device { return be.dev }
func (be *ovBackend) Synchronize() error     { return nil }
func (be *ovBackend) SetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	return tensorIO(t, func(b interface {
		SetTensor(*graph.Tensor, []byte, uint64) error
	}) error {
		return b.SetTensor(t, data, offset)
	})
}

func (be *ovBackend) GetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	return tensorIO(t, func(b interface {
		GetTensor(*graph.Tensor, []byte, uint64) error
	}) error {
		return b.GetTensor(t, data, offset)
	})
}

func tensorIO[I any](t *graph.Tensor, f func(I) error) error {
	buf := t.Buffer
	if t.ViewSrc != nil {
		buf = t.ViewSrc.Buffer
	}
	b, ok := buf.(I)
	if !ok {
		return fmt.Errorf("openvino: %s is not in a buffer", t.Name)
	}
	return f(b)
}

// Close frees the backend's infer requests; the compiled models stay for
// the device's other backends, and go with the last one.
func (be *ovBackend) Close() error {
	if be.closed {
		return nil
	}
	be.closed = true
	be.static.free()
	for _, r := range be.reqs {
		r.free(be.dev.rt.lib)
	}
	clear(be.reqs)
	be.last, be.lastSnap, be.lastCM, be.lastReq, be.shapes, be.lastID = keyInfo{}, graphSnap{}, nil, nil, nil, 0
	be.dev.cache.close(be.dev.rt.lib)
	return nil
}

// GraphCompute translates g to IR (or finds it compiled), binds its
// inputs and outputs and runs it. A failure leaves the backend usable.
func (be *ovBackend) GraphCompute(g *graph.Graph) error { return be.compute(g, 0) }

// GraphComputePlaced is GraphCompute with a scheduler's promise that g,
// computed before with id, is unchanged (backend.PlacedGraphComputer):
// the graph of the last compute comes again without comparing its
// tensors with their records (sameGraph), which on SmolLM2-135M's
// 934-node decode graph was 34-122 us of every token's host time.
func (be *ovBackend) GraphComputePlaced(g *graph.Graph, id backend.PlacementID) error {
	if !placedOn {
		id = 0
	}
	return be.compute(g, id)
}

// placedOn makes GraphComputePlaced ignore the promise when false (a test
// setting, to compare with the check).
var placedOn = true

func (be *ovBackend) compute(g *graph.Graph, id backend.PlacementID) error {
	t0 := time.Now()
	if be.closed {
		return backend.ErrClosed
	}
	k, ok, vouched := be.sameGraph(g, id)
	p := prepared{k: k, cm: be.lastCM, req: be.lastReq, hit: true}
	if !vouched || p.req == nil {
		// Anything but the graph of the last compute promised unchanged,
		// whose model and request (already bound) are at hand.
		if len(g.Nodes) == 0 {
			return nil
		}
		var err error
		if p, err = be.prepare(g, id, k, ok); p.done || err != nil {
			return err
		}
		if p.drop {
			defer be.dropModel(p.cm)
		}
	}
	be.lastID = id
	t1 := time.Now()
	err := be.run(p.req, p.cm, p.k)
	if p.hit {
		cache := be.dev.cache
		cache.mu.Lock()
		cache.stats.Hits++
		if vouched {
			cache.stats.Vouched++
		}
		cache.stats.HitHost += time.Since(t0) - be.inferTime
		cache.stats.HitCopy += be.copyTime
		cache.mu.Unlock()
	}
	if !be.plainHits && be.opts.Profiling > 0 {
		slog.Info("openvino: graph", "nodes", len(g.Nodes), "prepare", t1.Sub(t0), "infer", time.Since(t1))
	}
	return err
}

// prepared is a graph ready to run: its key, model and request; hit: the
// model was in the cache; done: the static path computed the graph
// itself; drop: the model is uncached, dropped after the run.
type prepared struct {
	k               keyInfo
	cm              *compiledModel
	req             *reqState
	hit, done, drop bool
}

// prepare finds g's model and request, given what sameGraph found (k and
// ok): the graph recognized by position or by its key, the model looked
// up or compiled.
func (be *ovBackend) prepare(g *graph.Graph, id backend.PlacementID, k keyInfo, ok bool) (prepared, error) {
	rt := be.dev.rt
	be.lastReq, be.lastID = nil, 0
	// byShape: another graph may be recognized by position (not on the
	// static path, with stateful execution or for uncached pieces, which
	// want the full key); remember: this one is, once its model is known.
	byShape, remember := false, false
	if !ok {
		byShape = byShapeOn && !be.opts.Static(rt.kind) && !be.opts.statefulOn(rt.kind) && !be.uncached(g)
	}
	if byShape {
		if rec := be.shapeHit(g); rec != nil {
			k, ok = keyInfo{key: rec.key, g: g}, true
			snap := vouchedSnap(be.lastSnap)
			if id == 0 {
				snap = snapshotFrom(g, rec.scr, be.lastSnap)
			}
			be.last, be.lastSnap, be.lastCM = k, snap, rec.cm
			be.snapGen++
			be.shapeHits++
		}
	}
	if !ok {
		remember = byShape
		dyn := false
		if byShape && be.opts.DynamicShapes && rt.kind != KindNPU {
			if dk, ok := be.dynamicKey(g, rt.kind); ok && !be.dynRefused[dk.key] {
				k, dyn = dk, true
			}
		}
		if !dyn {
			k = graphKey(g, rt.kind)
		}
		k.key += be.opts.translationTag()
		if be.opts.statefulOn(rt.kind) {
			k.key += statefulKeyTag
		}
		snap := vouchedSnap(be.lastSnap)
		if id == 0 {
			snap = snapshot(g, be.lastSnap)
		}
		be.last, be.lastSnap, be.lastCM = k, snap, nil
		be.snapGen++
	}
	if be.opts.Static(rt.kind) && !be.static.inside {
		if done, err := be.computeStatic(g, k); done {
			return prepared{done: true}, err
		}
	}
	cache := be.dev.cache
	var cm *compiledModel
	noCache := be.uncached(g)
	if !noCache {
		cache.mu.Lock()
		// Models stay in the cache once added: the last graph's model
		// needs no lookup of its (long) key.
		if cm = be.lastCM; cm == nil {
			cm = cache.models[k.key]
		}
		cache.mu.Unlock()
		if cm != nil && be.opts.ReleaseWeightsEnabled(rt.kind) {
			if n := be.dev.weights.release(rt.kind != KindCPU || be.opts.CompiledModelCacheOnly, !be.opts.CompiledModelCacheOnly); n > 0 {
				slog.Info("openvino: released host weight buffers", "bytes", n)
			}
		}
	}
	hit := cm != nil
	if cm == nil {
		var err error
		tc := time.Now()
		cm, err = be.compile(g, k)
		if k.dyn != nil && errors.Is(err, errNotDynamic) {
			// The family keeps one model per shape: g's own key, and
			// the family is not probed again.
			logNotDynamic(err)
			if be.dynRefused == nil {
				be.dynRefused = map[string]bool{}
			}
			be.dynRefused[k.key] = true
			k = graphKey(g, rt.kind)
			k.key += be.opts.translationTag()
			be.last = k
			cache.mu.Lock()
			cm = cache.models[k.key]
			cache.mu.Unlock()
			hit = cm != nil
			if cm == nil {
				cm, err = be.compile(g, k)
			} else {
				err = nil
			}
		}
		cache.mu.Lock()
		cache.stats.Misses++
		cache.stats.Compiles = append(cache.stats.Compiles, time.Since(tc))
		cache.mu.Unlock()
		if err != nil {
			return prepared{}, err
		}
		if !noCache {
			cache.mu.Lock()
			if old := cache.models[k.key]; old != nil {
				be.freeModel(cm)
				cm = old
			} else {
				cache.models[k.key] = cm
			}
			cache.mu.Unlock()
		}
	}
	if !noCache {
		be.lastCM = cm
		if remember {
			be.rememberShape(g, k, cm)
		}
	}
	// An uncached model is dropped after its run, with its request; one
	// that fails to get a request is dropped now.
	drop := noCache
	req, err := be.request(cm)
	if err == nil && be.opts.statefulOn(rt.kind) {
		req, err = be.stateStep(g, cm, req)
	}
	if err != nil {
		if drop {
			be.dropModel(cm)
		}
		return prepared{}, err
	}
	if be.plainHits && !noCache {
		be.lastReq = req
	}
	return prepared{k: k, cm: cm, req: req, hit: hit, drop: drop}, nil
}

// reqState is an infer request and what its ports are bound to: the
// addresses of the inputs and outputs (rebound only when they change),
// and scratch memory for outputs copied out after the infer.
type reqState struct {
	// req, boundGen and copied first: what a hit reads of it.
	req      uintptr
	boundGen uint64 // the backend's snapGen bind last ran for (0: none)
	// copied lists the outputs with copyOut set, so that a hit reads
	// nothing of the others (SmolLM2-135M's 61 result slots, cold after
	// the infer, were 2-3 us of each hit to find none).
	copied          []int
	inAddr, outAddr []uintptr
	inN, outN       []int64 // the elements each port was bound with
	// inUSM and outUSM are the USM storages (usm.go) ports are bound to
	// remote tensors over, nil for host memory: a port is rebound when
	// that changes at the same address (a new session's cache allocated
	// where the last one was freed needs tensors over the new allocation).
	inUSM, outUSM []*storage
	copyOut       []bool
	regions       []region        // reused by bind
	regionBase    []*graph.Tensor // the base tensor of each region
	scratch       [][]byte
	freeScratch   []func() error
	// kvSize is the tokens its variables hold, infers its runs
	// (stateful execution only).
	kvSize, infers int64
}

func (r *reqState) free(n *native) {
	releasePlugin(n.inferRequestFree, r.req)
	for _, f := range r.freeScratch {
		_ = f()
	}
}

func (be *ovBackend) request(cm *compiledModel) (*reqState, error) {
	if r, ok := be.reqs[cm]; ok {
		return r, nil
	}
	n := be.dev.rt.lib
	var r uintptr
	if err := n.callPlugin("ov_compiled_model_create_infer_request", n.createInferRequest, cm.cm, uintptr(unsafe.Pointer(&r))); err != nil {
		return nil, err
	}
	st := &reqState{req: r, inAddr: make([]uintptr, len(cm.params)), outAddr: make([]uintptr, len(cm.results)),
		inN: make([]int64, len(cm.params)), outN: make([]int64, len(cm.results)),
		inUSM: make([]*storage, len(cm.params)), outUSM: make([]*storage, len(cm.results)),
		copyOut: make([]bool, len(cm.results)), scratch: make([][]byte, len(cm.results))}
	be.reqs[cm] = st
	return st, nil
}

func (be *ovBackend) dropModel(cm *compiledModel) {
	if r, ok := be.reqs[cm]; ok {
		r.free(be.dev.rt.lib)
		delete(be.reqs, cm)
	}
	be.freeModel(cm)
}

func (be *ovBackend) freeModel(cm *compiledModel) { cm.free(be.dev.rt.lib) }

func (cm *compiledModel) free(n *native) {
	if cm.cm != 0 {
		releasePlugin(n.compiledModelFree, cm.cm)
	}
	n.freeTensor(cm.weights)
	if cm.freeMem != nil {
		_ = cm.freeMem()
	}
	releaseAll(cm.conv)
	cm.conv = nil
}

// compile builds the IR of g and compiles it.
func (be *ovBackend) compile(g *graph.Graph, k keyInfo) (*compiledModel, error) {
	rt := be.dev.rt
	n := rt.lib
	t0 := time.Now()
	if be.opts.DumpCgraph {
		if err := dumpCgraph(g, be.opts.PrintCgraphTensorAddress); err != nil {
			return nil, err
		}
	}
	for _, nd := range g.Nodes {
		if nd.NElements() == 0 {
			// What supports-op refuses, as an error rather than the real
			// CPU plugin's SIGFPE.
			return nil, fmt.Errorf("%w: node %s (%s): %s", ErrTranslate, nd.Name, nd.Op, emptyReason)
		}
	}
	var b *builder
	var outs []outputSpec
	locs := k.locs
	if k.dyn != nil {
		var err error
		if b, outs, err = be.buildDynamic(k); err != nil {
			return nil, err
		}
		// Where the base probe's tensors are (its clone's own tensors).
		locs = graphKey(b.g, rt.kind).locs
	} else {
		b = newBuilder(be.dev, g)
		b.nativeSoftplus = be.opts.NativeSoftplus
		if be.opts.statefulOn(rt.kind) {
			b.stateIDs = map[*graph.Tensor]string{}
		}
		if err := b.translate(g); err != nil {
			releaseAll(b.conv)
			return nil, err
		}
		outs = b.outputs(g)
	}
	if len(outs) == 0 {
		releaseAll(b.conv)
		return nil, fmt.Errorf("%w: graph writes nothing", ErrTranslate)
	}
	// From here every failure frees cm, and with it the conversions.
	cm := &compiledModel{key: k.key, stateful: len(b.stateIDs) > 0, conv: b.conv}
	for i, p := range b.params {
		loc, ok := locs[p.t]
		if !ok {
			be.freeModel(cm)
			return nil, fmt.Errorf("%w: input %s not reachable from the graph", ErrTranslate, p.t.Name)
		}
		s := slot{loc: loc, et: p.et, shape: p.shape}
		if k.dyn != nil {
			s.shape = b.m.layers[b.m.params[i]].outputs[0].shape
			s.dyn = slices.Contains(s.shape, -1)
		}
		cm.params = append(cm.params, s)
	}
	for i, o := range outs {
		loc, ok := locs[o.t]
		if !ok {
			be.freeModel(cm)
			return nil, fmt.Errorf("%w: output %s not reachable from the graph", ErrTranslate, o.t.Name)
		}
		s := slot{loc: loc, et: o.v.et, shape: o.v.shape}
		if k.dyn != nil {
			// The probe added its Results (the fit compares them).
			s.shape = b.m.layers[b.m.results[i]].inputs[0].shape
			s.dyn = slices.Contains(s.shape, -1)
		} else {
			b.stateAssign(o)
			b.m.result(o.t.Name, o.v)
		}
		cm.results = append(cm.results, s)
	}
	cm.inPlace = b.m.inPlaceParams()
	// The weights blob spans every weight constant and the side blob.
	if len(b.m.side) > 0 {
		mem, free, err := hostAlloc(uint64(len(b.m.side)))
		if err != nil {
			be.freeModel(cm)
			return nil, err
		}
		copy(mem, b.m.side)
		cm.side, cm.freeMem = mem, free
	}
	lo, hi := ^uintptr(0), uintptr(0)
	sideBase := uintptr(0)
	if len(cm.side) > 0 {
		sideBase = uintptr(unsafe.Pointer(&cm.side[0]))
	}
	absolute := func(c constRef) uintptr {
		if c.addr != 0 {
			return c.addr
		}
		return sideBase + uintptr(c.off)
	}
	for _, c := range b.m.consts {
		a := absolute(c)
		lo, hi = min(lo, a), max(hi, a+uintptr(c.size))
	}
	xml := b.m.xml("ggml_graph", func(c constRef) uint64 { return uint64(absolute(c) - lo) })
	if irMutator != nil {
		xml = irMutator(xml)
	}
	if be.opts.DumpIR {
		// What is read below, byte for byte: the XML after the mutator,
		// the weights at their live offsets.
		var ins, res []*graph.Tensor
		for _, p := range cm.params {
			ins = append(ins, k.resolve(p.loc))
		}
		for _, o := range cm.results {
			res = append(res, k.resolve(o.loc))
		}
		name, err := dumpIR(xml, b.m.consts, absolute, lo, hi, cm, g, ins, res)
		if err != nil {
			slog.Warn("openvino: GGML_OPENVINO_DUMP_IR", "err", err)
		}
		cm.dump = name
	}
	blob := ""
	if dir := be.opts.CompiledModelCacheDir; dir != "" && n.importModel != 0 && n.exportModel != 0 {
		blob = compiledBlobPath(dir, rt.lib.version.Build, b.m, g)
		if ok, err := be.importModel(cm, blob); ok || err != nil {
			if err != nil {
				be.freeModel(cm)
			}
			return cm, err
		}
	}
	if be.opts.CompiledModelCacheOnly {
		be.freeModel(cm)
		return nil, be.cacheOnlyMiss(blob)
	}
	var wt uintptr
	if len(b.m.consts) > 0 {
		var err error
		if wt, err = n.hostTensor(etU8, []int64{int64(hi - lo)}, lo); err != nil {
			be.freeModel(cm)
			return nil, err
		}
		cm.weights = wt
	}
	var model uintptr
	x := cstr(string(xml))
	err := n.callPlugin("ov_core_read_model_from_memory_buffer", n.readModelFromMemory, rt.core, uintptr(unsafe.Pointer(x)), uintptr(len(xml)), wt, uintptr(unsafe.Pointer(&model)))
	runtime.KeepAlive(x)
	if err != nil {
		be.freeModel(cm)
		return nil, err
	}
	t1 := time.Now()
	dev := cstr(rt.device)
	// ov_core_compile_model is variadic: called with property_args_size
	// 0 and no extra argument, the one form correct on every ABI (the
	// device's properties were set on the core at start-up).
	err = n.callPlugin("ov_core_compile_model", n.compileModel, rt.core, model, uintptr(unsafe.Pointer(dev)), 0, uintptr(unsafe.Pointer(&cm.cm)))
	runtime.KeepAlive(dev)
	releasePlugin(n.modelFree, model)
	if err != nil {
		cm.cm = 0
		be.freeModel(cm)
		return nil, err
	}
	be.dev.cache.count(&be.dev.cache.compiled)
	if k.dyn != nil {
		for t := range b.uses {
			b.uses[t] |= useDynamic
		}
	}
	be.dev.weights.noteUses(b.uses)
	if be.opts.Profiling > 0 {
		slog.Info("openvino: compiled", "nodes", len(g.Nodes), "layers", len(b.m.layers), "build", t1.Sub(t0), "compile", time.Since(t1))
	}
	if blob != "" {
		// Exported under a temporary name and renamed, so a reader never
		// imports a half-written blob.
		tmp := blob + ".tmp"
		p := cstr(tmp)
		if err := n.callPlugin("ov_compiled_model_export_model", n.exportModel, cm.cm, uintptr(unsafe.Pointer(p))); err != nil {
			slog.Warn("openvino: GGML_OPENVINO_COMPILED_MODEL_CACHE_DIR: export", "err", err)
		} else if err := os.Rename(tmp, blob); err != nil {
			slog.Warn("openvino: GGML_OPENVINO_COMPILED_MODEL_CACHE_DIR", "err", err)
		}
		runtime.KeepAlive(p)
	}
	return cm, nil
}

// compiledBlobPath names the exported model of a graph: a hash of its IR
// with the Constants numbered instead of placed (addresses differ between
// processes) and of the weights' names and types, as upstream keys its
// compiled-model cache by the graph's structure and names, and of the
// runtime's build (a release cannot import another's blob: 2025.0.0 and
// 2026.4.1 sharing the folder would each find the other's). A different
// model with the same names and shapes needs the folder emptied.
func compiledBlobPath(dir, build string, m *irModel, g *graph.Graph) string {
	h := fnv.New64a()
	h.Write([]byte(build + "|"))
	h.Write(m.xml("ggml_graph", func(c constRef) uint64 { return uint64(c.layer) }))
	for _, n := range g.Nodes {
		for _, s := range n.Src {
			if s != nil && s.Op == ops.None {
				fmt.Fprintf(h, "|%s:%d", s.Name, s.Type)
			}
		}
	}
	return filepath.Join(dir, fmt.Sprintf("ggml-ov-%016x.blob", h.Sum64()))
}

// importModel loads an exported compiled model, when the file exists.
// The blob is mapped from the file, not read: read into the Go heap and
// copied into host memory, each of the language model's two blobs (223 MB
// for a 213 MB model) was held three times over, 1.76 GB at the peak on
// the real CPU plugin 2026.4.1, 8.0x the model (TestOpenVINORealRSS).
func (be *ovBackend) importModel(cm *compiledModel, path string) (bool, error) {
	f, err := mmap.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, nil // unreadable: compile instead
	}
	mem := f.Bytes()
	if len(mem) == 0 {
		_ = f.Close()
		return false, nil
	}
	n, rt := be.dev.rt.lib, be.dev.rt
	// Mapped as long as the model: the CPU plugin of 2026.4.1 computes
	// from the imported bytes in place (freed after the import, the first
	// infer crashed: TestCompiledModelCacheTwoProcesses); 2025.0.0 copies.
	keep := cm.freeMem
	cm.freeMem = func() error {
		err := f.Close()
		if keep != nil {
			err = errors.Join(err, keep())
		}
		return err
	}
	dev := cstr(rt.device)
	err = n.callPlugin("ov_core_import_model", n.importModel, rt.core, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(dev)), uintptr(unsafe.Pointer(&cm.cm)))
	runtime.KeepAlive(dev)
	if err != nil {
		cm.cm = 0
		return false, err
	}
	be.dev.cache.count(&be.dev.cache.imported)
	if be.opts.CompiledModelCacheOnly && be.opts.ReleaseWeightsEnabled(rt.kind) {
		// No model will be compiled from the weight buffers: released at
		// once, before a second import maps its blob beside them.
		if n := be.dev.weights.release(true, false); n > 0 {
			slog.Info("openvino: released host weight buffers", "bytes", n)
		}
	}
	// The import read the whole blob (the plugin repacks its MatMul
	// weights into memory of its own); what it reads in place later comes
	// back from the file, unless the plugin wrote to the mapping (its
	// copies would be lost: kept then; none on either real release).
	if w, ok := mmap.CopiedOnWrite(mem); ok && w == 0 {
		f.Evict(mem)
	} else if ok {
		slog.Info("openvino: the plugin wrote to an imported blob; its pages stay resident", "bytes", w)
	}
	// The blob holds its constants: the conversions were for the IR only.
	releaseAll(cm.conv)
	cm.conv = nil
	return true, nil
}

// count adds one to a counter of c.
func (c *modelCache) count(n *int) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
}

// run binds the inputs and outputs of the current graph (where their
// memory moved since the last run), infers, and copies out the outputs
// bound to scratch memory.
func (be *ovBackend) run(st *reqState, cm *compiledModel, k keyInfo) error {
	// A request last bound for this very snapshot has had every tensor
	// checked and bound: the snapshot proves nothing moved or changed.
	if st.boundGen != be.snapGen {
		st.boundGen = 0
		if err := be.bind(st, cm, k); err != nil {
			return err
		}
		st.boundGen = be.snapGen
	}
	// plainHits: neither dumps nor debug output (whose options would be
	// cache lines more to read on every hit).
	dumpNow := !be.plainHits && cm.dump != "" && !cm.dumped
	if dumpNow {
		dumpSlots(cm.dump+".input", cm.params, k, nil)
	}
	if !be.plainHits && be.opts.DebugInput {
		logSlots("openvino: input", cm.params, k)
	}
	ti := time.Now()
	err := be.lib.call("ov_infer_request_infer", be.inferFn, st.req)
	be.inferTime = time.Since(ti)
	if err != nil {
		return err
	}
	if dumpNow {
		cm.dumped = true
		dumpSlots(cm.dump+".output", cm.results, k, st)
	}
	tc := time.Now()
	for _, i := range st.copied {
		if err := scatterInto(k.resolve(cm.results[i].loc), st.scratch[i]); err != nil {
			return err
		}
	}
	be.copyTime = time.Since(tc)
	if !be.plainHits && be.opts.DebugOutput {
		logSlots("openvino: output", cm.results, k)
	}
	return nil
}

// bind checks the tensors of the current graph against the model's ports
// and binds those whose memory moved since the last run; st.copyOut says
// which outputs go through scratch memory. A port over USM memory (a KV
// cache on a GPU, usm.go) is bound to a remote tensor over it.
func (be *ovBackend) bind(st *reqState, cm *compiledModel, k keyInfo) error {
	rt := be.dev.rt
	n := rt.lib
	bind := func(name string, fn uintptr, i int, s slot, t *graph.Tensor, a uintptr, usm bool) error {
		var h uintptr
		var err error
		if s.shape, err = s.shapeFor(t); err != nil {
			return err
		}
		if usm {
			h, err = usmBinder(rt, s, a)
		} else {
			h, err = n.hostTensor(s.et, s.shape, a)
		}
		if err != nil {
			return err
		}
		defer n.freeTensor(h) // the request keeps its own reference
		return n.call(name, fn, st.req, uintptr(i), h)
	}
	regions, bases, copied := st.regions[:0], st.regionBase[:0], st.copied[:0]
	for i, s := range cm.params {
		t := k.resolve(s.loc)
		if err := checkSlot(t, s, true); err != nil {
			return fmt.Errorf("openvino: input %d: %w", i, err)
		}
		// A dynamic port is rebound when its size changes too.
		if a, usm := addr(t), usmOf(t); a != st.inAddr[i] || usm != st.inUSM[i] || t.NElements() != st.inN[i] {
			st.inAddr[i] = 0
			if err := bind("ov_infer_request_set_input_tensor_by_index", n.setInputByIndex, i, s, t, a, usm != nil); err != nil {
				return err
			}
			st.inAddr[i], st.inUSM[i], st.inN[i] = a, usm, t.NElements()
		}
		regions, bases = append(regions, extent(t)), append(bases, baseOf(t))
	}
	for i, s := range cm.results {
		t := k.resolve(s.loc)
		if err := checkSlot(t, s, false); err != nil {
			return fmt.Errorf("openvino: output %d: %w", i, err)
		}
		r := extent(t)
		usm := usmOf(t)
		// Not bound remote, an output in USM device memory goes to
		// scratch memory, written back through the queue: the host
		// cannot address it (upstream binds a host tensor over it).
		devOut := usm != nil && usm.dev != nil
		if be.opts.DisableRemoteOutputs {
			usm = nil
		}
		// Bound zero-copy over the ggml memory unless it is strided or
		// overlaps an input or another output (OpenVINO may write an
		// output before it has read every input): then bound to scratch
		// memory and copied after. Two exceptions write an output in
		// place over the input bound to the same memory: a KV cache that
		// a ScatterUpdate alone reads (inPlaceParams: the whole cache,
		// same type), and a KV cache in USM memory, as upstream binds
		// them, so that a GPU copies none of it.
		copyOut := !(t.ViewSrc == nil || t.IsContiguous()) || (devOut && usm == nil)
		ip := -1
		if kvInPlace && usm == nil {
			ip = cm.inPlace[i]
		}
		// Only an overlap needs the in-place rules: SmolLM2-135M's 61
		// outputs against ~130 regions were 46 us of each new graph's
		// bind when every pair was weighed.
		for j := 0; j < len(regions) && !copyOut; j++ {
			if o := regions[j]; o.overlaps(r) {
				inPlace := usm != nil && j < len(cm.params) && bases[j] == baseOf(t)
				whole := j < len(cm.params) && o == r && cm.params[j].et == s.et
				copyOut = !(inPlace || (whole && (j == ip || forceInPlace)))
			}
		}
		st.copyOut[i] = copyOut
		if copyOut {
			copied = append(copied, i)
		}
		regions, bases = append(regions, r), append(bases, baseOf(t))
		a := addr(t)
		if copyOut {
			usm = nil
			if need := int(t.NElements()) * t.Type.TypeSize(); len(st.scratch[i]) < need {
				// A dynamic port's scratch grows with it; the smaller one
				// stays allocated with the request (freed with it).
				st.outAddr[i] = 0
				mem, free, err := hostAlloc(uint64(need))
				if err != nil {
					return err
				}
				st.scratch[i] = mem
				st.freeScratch = append(st.freeScratch, free)
			}
			a = uintptr(unsafe.Pointer(&st.scratch[i][0]))
		}
		if a != st.outAddr[i] || usm != st.outUSM[i] || t.NElements() != st.outN[i] {
			st.outAddr[i] = 0
			if err := bind("ov_infer_request_set_output_tensor_by_index", n.setOutputByIndex, i, s, t, a, usm != nil); err != nil {
				return err
			}
			st.outAddr[i], st.outUSM[i], st.outN[i] = a, usm, t.NElements()
		}
	}
	st.regions, st.regionBase, st.copied = regions, bases, copied
	return nil
}

// baseOf is the tensor owning t's memory.
func baseOf(t *graph.Tensor) *graph.Tensor {
	if t.ViewSrc != nil {
		return t.ViewSrc
	}
	return t
}

// usmBinder makes the remote tensor a port over USM memory at a is bound
// to; tests replace it with wrong bindings to show that the double
// catches them.
var usmBinder = func(rt *runtimeCtx, s slot, a uintptr) (uintptr, error) { return rt.usmTensor(s.et, s.shape, a) }

// checkSlot verifies, before binding, that t has the element type and
// size the compiled model's port expects and memory to bind.
func checkSlot(t *graph.Tensor, s slot, whole bool) error {
	if t == nil {
		return fmt.Errorf("tensor not found in the graph")
	}
	et, err := ggmlElem(t.Type)
	if err != nil {
		return err
	}
	if et != s.et {
		return fmt.Errorf("%s is %v, the model's port is %v", t.Name, et, s.et)
	}
	shape, err := s.shapeFor(t)
	if err != nil {
		return err
	}
	n := int64(1)
	for i, d := range shape {
		if s.dyn && s.shape[i] >= 0 && d != s.shape[i] {
			return fmt.Errorf("%s is %v, the model's port %v", t.Name, shape, s.shape)
		}
		n *= d
	}
	if n != t.NElements() {
		return fmt.Errorf("%s has %d elements, the model's port %v", t.Name, t.NElements(), s.shape)
	}
	if addr(t) == 0 {
		return fmt.Errorf("%s has no host memory", t.Name)
	}
	return nil
}

// scatterInto writes src, t's elements in logical order, into t's memory
// with t's strides (through the queue for USM device memory).
func scatterInto(t *graph.Tensor, src []byte) error {
	span := uint64(extent(t).hi - extent(t).lo)
	if st := usmOf(t); st != nil && st.dev != nil {
		return st.devScatter(t, span, src)
	}
	scatter(t, memBytes(t, span), src)
	return nil
}

// scatter writes src, t's elements in logical order, into dst, t's span
// of memory, with t's strides.
func scatter(t *graph.Tensor, dst, src []byte) {
	es := uint64(t.Type.TypeSize())
	if t.ViewSrc == nil || t.IsContiguous() {
		copy(dst, src)
		return
	}
	i := uint64(0)
	for i3 := int64(0); i3 < t.Ne[3]; i3++ {
		for i2 := int64(0); i2 < t.Ne[2]; i2++ {
			for i1 := int64(0); i1 < t.Ne[1]; i1++ {
				row := uint64(i1)*t.Nb[1] + uint64(i2)*t.Nb[2] + uint64(i3)*t.Nb[3]
				for i0 := int64(0); i0 < t.Ne[0]; i0++ {
					o := row + uint64(i0)*t.Nb[0]
					copy(dst[o:o+es], src[i*es:(i+1)*es])
					i++
				}
			}
		}
	}
}

// irMutator, set by tests only, alters the IR before it is read, to show
// that the double catches a wrong one.
var irMutator func(xml []byte) []byte

var _ = ops.None
