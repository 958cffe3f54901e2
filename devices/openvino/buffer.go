package openvino

import (
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/mmap"
)

// tensorAlignment is ggml's TENSOR_ALIGNMENT, upstream's buffer alignment.
const tensorAlignment = 32

// ErrWeightsReleased reports a use of weights whose host memory
// GGML_OPENVINO_RELEASE_WEIGHTS dropped: a recompile, or a new model's
// weights set while a released one is pinned.
var ErrWeightsReleased = errors.New("openvino: host weights were released (GGML_OPENVINO_RELEASE_WEIGHTS)")

// bufferType is the device's buffer type (OPENVINO0) or its host buffer
// type (OPENVINO0_HOST): host memory outside the Go heap, aligned to 32
// bytes, without a size limit. Weights set into a WEIGHTS buffer of the
// device type are converted to OpenVINO's layout in place; the host type
// keeps ggml's bytes (the CPU reads them), and its quantized weights are
// converted when a graph is built.
type bufferType struct {
	dev  *device
	name string
	host bool
}

func (bt *bufferType) Name() string       { return bt.name }
func (bt *bufferType) Alignment() uint64  { return tensorAlignment }
func (bt *bufferType) MaxSize() uint64    { return math.MaxUint64 }
func (bt *bufferType) IsHost() bool       { return bt.host }
func (bt *bufferType) DeviceName() string { return bt.dev.name }

// AllocSize is upstream's get_alloc_size: a 2-D or 3-D quantized weight
// needs its extracted layout's total size (more than its ggml bytes when
// the scales and zero points do not fit in the space the ggml blocks
// leave). The host type converts nothing and needs t.NBytes().
func (bt *bufferType) AllocSize(t *graph.Tensor) uint64 {
	if !bt.host {
		if l, ok := layoutFor(t, bt.dev.rt.kind, bt.dev.rt.requant()); ok {
			return l.total
		}
	}
	return t.NBytes()
}

// Alloc returns a zeroed buffer: anonymous host memory, or with
// GGML_OPENVINO_SPILL_DIR (device type, not on windows) a shared mapping
// of an unlinked file there, whose pages the kernel can write back and
// drop. (The KV cache of a GPU comes through AllocTensors, usm.go.)
func (bt *bufferType) Alloc(size uint64) (buffer.Buffer, error) { return bt.alloc(size, memHost) }

// alloc is Alloc, in USM host or device memory of the device's context
// when m says so.
func (bt *bufferType) alloc(size uint64, m kvMem) (buffer.Buffer, error) {
	if m == memUSMDevice {
		return bt.allocDevice(size)
	}
	st := &storage{typ: bt, extras: map[*graph.Tensor]*tensorExtra{}}
	if size > 0 {
		var err error
		if m == memUSMHost {
			rt := bt.dev.rt
			if st.usm, st.mem, err = rt.usmHost(size); err != nil {
				return nil, fmt.Errorf("openvino: KV cache of %d bytes in USM host memory of %s: %w", size, rt.device, err)
			}
			t := st.usm
			st.release = func() error { rt.lib.freeTensor(t); return nil }
		} else if !bt.host {
			st.mem, st.release, st.keeps, err = weightAlloc(bt.dev.rt.opts.SpillDir, size)
		} else {
			st.mem, st.release, err = hostAlloc(size)
		}
		if err != nil {
			return nil, err
		}
	}
	return buffer.New(bt, st, size)
}

// weightAlloc takes size bytes for weights: mapped from a file in dir
// (GGML_OPENVINO_SPILL_DIR) when set, else host memory; keeps says whether
// the memory keeps its contents when its pages are dropped.
func weightAlloc(dir string, size uint64) (mem []byte, free func() error, keeps bool, err error) {
	if dir == "" {
		mem, free, err = hostAlloc(size)
		return mem, free, false, err
	}
	mem, free, err = spillMap(dir, size)
	return mem, free, spillKeeps, err
}

// hostAlloc takes size bytes of zeroed host memory from a CPU buffer,
// which owns it (mmap or VirtualAlloc, outside the Go heap).
func hostAlloc(size uint64) ([]byte, func() error, error) {
	b, err := buffer.CPU().Alloc(size)
	if err != nil {
		return nil, nil, err
	}
	return unsafe.Slice((*byte)(cPtr(b.Base())), size), b.Free, nil
}

// tensorExtra is a tensor's state in a device buffer (upstream's
// tensor->extra): where it lies, and for a converted weight its layout.
// Views share their source's extra.
type tensorExtra struct {
	st *storage
	at uint64
	// weight is set once the tensor was set as a weight; layout is
	// non-nil when it was converted.
	weight bool
	layout *extractedLayout
	// content identifies a weight's bytes (a hash of them as set) for the
	// compiled-model cache key: another model's weights loaded at the
	// same addresses are other constants (the CPU plugin copies them at
	// compile time).
	content uint64
}

// contentSeed seeds the weights' content hashes (in-process keys only).
var contentSeed = maphash.MakeSeed()

// storage is a device buffer's memory and its tensors' extras.
type storage struct {
	typ     *bufferType
	mem     []byte
	release func() error
	// keeps: mem is a shared file mapping (SPILL_DIR), whose dropped
	// pages refill from the file instead of reading as zeros.
	keeps bool
	// usm is the USM tensor holding the memory (a KV cache on a GPU,
	// usm.go), or 0 for plain host memory.
	usm uintptr
	// dev reaches USM device memory at devPtr, which the host cannot
	// address (mem is nil then); nil for host-visible memory.
	dev    devQueue
	devPtr uintptr

	mu     sync.Mutex
	extras map[*graph.Tensor]*tensorExtra
}

func (s *storage) Bytes() []byte { return s.mem }

func (s *storage) Base() uintptr {
	if s.devPtr != 0 {
		return s.devPtr
	}
	return buffer.BytesBase(s.mem)
}

func (s *storage) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.typ.dev.weights.forget(s)
	extraEpoch.Add(1) // its tensors' addresses are gone
	rel := s.release
	s.mem, s.release, s.extras, s.devPtr = nil, nil, nil, 0
	if rel != nil {
		return rel()
	}
	return nil
}

// InitTensor records where t lies; a view takes its source's extra, as
// upstream's init_tensor.
func (s *storage) InitTensor(t *graph.Tensor, at uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.ViewSrc != nil {
		if e, ok := t.ViewSrc.Extra.(*tensorExtra); ok {
			t.Extra = e
		}
		return nil
	}
	e := &tensorExtra{st: s, at: at}
	s.extras[t] = e
	t.Extra = e
	return nil
}

// Reset drops every tensor's extra.
func (s *storage) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	extraEpoch.Add(1)
	for t := range s.extras {
		if t.Extra != nil {
			t.Extra = nil
		}
	}
	clear(s.extras)
	return nil
}

// SetTensor is upstream's set_tensor: a whole 2-D weight (or 3-D quantized
// expert weight) set into a WEIGHTS buffer of the device type is converted
// to OpenVINO's layout; anything else is copied.
func (s *storage) SetTensor(t *graph.Tensor, u buffer.Usage, at, offset uint64, data []byte) error {
	e := s.extraOf(t)
	whole := offset == 0 && uint64(len(data)) == t.NBytes() && t.ViewSrc == nil
	shapeOK := (t.Ne[2] == 1 && t.Ne[3] == 1) || (t.Ne[3] == 1 && t.Type.IsQuantized())
	if u == buffer.UsageWeights && whole && shapeOK && !s.typ.host && e != nil {
		if err := s.typ.dev.weights.register(s); err != nil {
			return fmt.Errorf("%w: setting %s", err, t.Name)
		}
		if s.keeps {
			s.typ.dev.unmapSpill()
		}
		extraEpoch.Add(1) // a weight's content and layout
		e.weight, e.layout, e.content = true, nil, maphash.Bytes(contentSeed, data)
		if l, ok := layoutFor(t, s.typ.dev.rt.kind, s.typ.dev.rt.requant()); ok {
			if err := extract(t, l, data, s.mem[at:at+l.total]); err != nil {
				return err
			}
			e.layout = &l
			return nil
		}
	} else if e != nil && e.layout != nil {
		// A partial write over a converted weight: make it plain ggml
		// bytes again first, then write.
		orig := make([]byte, t.NBytes())
		if err := restore(t, *e.layout, s.mem[at:], orig); err != nil {
			return err
		}
		copy(s.mem[at:], orig)
		e.layout = nil
		extraEpoch.Add(1)
	}
	copy(s.mem[at+offset:], data)
	if e != nil && e.weight {
		extraEpoch.Add(1)
		e.content = maphash.Bytes(contentSeed, s.mem[at:at+t.NBytes()])
	}
	return nil
}

// GetTensor returns ggml's bytes, also for a converted weight.
func (s *storage) GetTensor(t *graph.Tensor, _ buffer.Usage, at, offset uint64, data []byte) error {
	if e := s.extraOf(t); e != nil && e.layout != nil && t.ViewSrc == nil {
		orig := make([]byte, t.NBytes())
		if err := restore(t, *e.layout, s.mem[at:], orig); err != nil {
			return err
		}
		copy(data, orig[offset:])
		return nil
	}
	copy(data, s.mem[at+offset:])
	return nil
}

func (s *storage) extraOf(t *graph.Tensor) *tensorExtra {
	e, _ := t.Extra.(*tensorExtra)
	if e != nil && e.st != s {
		return nil
	}
	return e
}

// addr is the address of t's first byte in a device buffer, or 0 when t
// is not placed in one.
func addr(t *graph.Tensor) uintptr {
	if len(t.Data) > 0 {
		return uintptr(unsafe.Pointer(&t.Data[0]))
	}
	base := t
	if t.ViewSrc != nil {
		base = t.ViewSrc
	}
	e, ok := base.Extra.(*tensorExtra)
	if !ok || e.st == nil || e.st.Base() == 0 {
		return 0
	}
	a := e.st.Base() + uintptr(e.at)
	if t.ViewSrc != nil {
		a += uintptr(t.ViewOffs)
	}
	return a
}

// weightRegistry is upstream's weight-buffer registry for
// GGML_OPENVINO_RELEASE_WEIGHTS: every buffer holding weights, dropped
// once with madvise after the first compiled-model cache hit.
type weightRegistry struct {
	mu       sync.Mutex
	bufs     map[*storage]bool
	released bool
	dropped  uint64 // bytes whose pages release dropped
	// uses is how the compiled models read each weight (CPU release).
	uses map[*tensorExtra]weightUse
	// unmapping: unmapSpill's goroutine runs.
	unmapping bool
	// lost: pages of anonymous memory were dropped, which read as zeros:
	// no model can be compiled again. Without it (every dropped buffer a
	// SPILL_DIR mapping) a compile rereads the file, and stale says that
	// one did, so the next cache hit drops the pages again.
	lost, stale bool
}

// noteUses records how a compiled model reads its weights, after its
// compile.
func (r *weightRegistry) noteUses(u map[*graph.Tensor]weightUse) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stale = r.released
	for t, x := range u {
		if e, ok := t.Extra.(*tensorExtra); ok {
			if r.uses == nil {
				r.uses = map[*tensorExtra]weightUse{}
			}
			r.uses[e] |= x
		}
	}
}

func (r *weightRegistry) register(s *storage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.released {
		// Upstream aborts: a second model loading while the first's
		// compiled graph is pinned would be run with the wrong weights.
		return fmt.Errorf("%w: this mode supports one model per process; unset it for multi-model runs", ErrWeightsReleased)
	}
	if r.bufs == nil {
		r.bufs = map[*storage]bool{}
	}
	r.bufs[s] = true
	return nil
}

// forget drops s (its caller holds s.mu).
func (r *weightRegistry) forget(s *storage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.bufs, s)
	for e := range r.uses {
		if e.st == s {
			delete(r.uses, e)
		}
	}
}

func (r *weightRegistry) isReleased() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.released
}

// isLost reports whether released pages read as zeros now (no compile
// can read the weights again).
func (r *weightRegistry) isLost() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lost
}

// bytes is the weight memory held: the size of every buffer with weights.
func (r *weightRegistry) bytes() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n uint64
	for s := range r.bufs {
		n += uint64(len(s.mem))
	}
	return n
}

// spillUnmapInterval is how often SPILL_DIR weight pages are unmapped
// (see unmapSpill): the CPU plugin repacks a few MB of weights in that
// time, so about that much stays mapped while it reads them.
const spillUnmapInterval = 5 * time.Millisecond

// unmapSpill keeps the pages of SPILL_DIR weight memory (buffers and
// conversions, shared file mappings) out of the process's resident set
// when the weights' release is on: from the first weight set until none
// is left, every spillUnmapInterval it drops what was mapped since. A
// shared file mapping keeps its contents (a page read again comes back
// from the page cache, or from the file), so this is safe whatever reads
// them and whenever; what it saves is the time the plugin's repacking
// would hold both copies mapped: on the real CPU plugin (2026.4.1) the
// spill pages were 150-185 MB of a 714 MB peak (one model for all token
// counts) until the release after the first cache hit, and the plugin
// repacks a MatMul weight again for a new input shape at any inference,
// reading them back. The page cache's copy is not the process's memory:
// the kernel reclaims it (once written back) instead of running out.
func (d *device) unmapSpill() {
	if d.rt.opts.SpillDir == "" || !d.rt.opts.ReleaseWeightsEnabled(d.rt.kind) {
		return
	}
	r := &d.weights
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unmapping {
		return
	}
	r.unmapping = true
	go func() {
		tick := time.NewTicker(spillUnmapInterval)
		defer tick.Stop()
		for range tick.C {
			r.mu.Lock()
			var bufs []*storage
			for s := range r.bufs {
				if s.keeps {
					bufs = append(bufs, s)
				}
			}
			conv := d.conv.dropSpill()
			if len(bufs) == 0 && !conv {
				r.unmapping = false
				r.mu.Unlock()
				return
			}
			r.mu.Unlock()
			for _, s := range bufs {
				// Under s.mu: a storage released meanwhile has no
				// mapping left, and its addresses may be another's.
				s.mu.Lock()
				mmap.DropPages(s.mem)
				s.mu.Unlock()
			}
		}
	}()
}

// resident is the part of the anonymous weight buffers in the resident
// set.
func (r *weightRegistry) resident() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n uint64
	for s := range r.bufs {
		if !s.keeps {
			n += mmap.Resident(s.mem)
		}
	}
	return n
}

// release drops the pages of the weight buffers (kept mapped, reading as
// zeros); it returns the bytes dropped. With all, every page: on a GPU,
// whose plugin holds a device copy, as upstream, and wherever every
// model is imported from COMPILED_MODEL_CACHE_DIR (CACHE_ONLY: the blobs
// hold their constants, and nothing compiles from these buffers: without
// mayCompile, dropped anonymous pages do not stop a graph's translation,
// which only names the weights' addresses for the blob's key). On the CPU
// otherwise only the converted
// (quantized) weights that compiled models read as MatMul weights alone:
// the real CPU plugin repacked those into its own memory, and computes
// from everything else in place (measured: TestOpenVINORealRSS); of those
// a model with dynamic dimensions reads, only pages that can be read again
// (the plugin repacks such a weight for a new shape at any inference).
// Pages of SPILL_DIR buffers keep their contents (a later compile rereads
// them, and the next hit after it drops them again); anonymous ones are
// lost.
func (r *weightRegistry) release(all, mayCompile bool) uint64 {
	r.mu.Lock()
	if r.released && !r.stale {
		r.mu.Unlock()
		return 0
	}
	r.released, r.stale = true, false
	bufs := make([]*storage, 0, len(r.bufs))
	for s := range r.bufs {
		bufs = append(bufs, s)
	}
	uses := maps.Clone(r.uses)
	r.mu.Unlock()
	// Outside r.mu: storage.Release takes s.mu, then r.mu.
	var n uint64
	lost := false
	for _, s := range bufs {
		s.mu.Lock()
		d := uint64(0)
		if all {
			d = mmap.DropPages(s.mem)
		} else {
			for _, e := range s.extras {
				if u := uses[e]; e.layout != nil && (u == useMatMul || u == useMatMul|useDynamic && s.keeps) {
					d += mmap.DropPages(s.mem[e.at : e.at+e.layout.total])
				}
			}
		}
		lost = lost || (d > 0 && !s.keeps && mayCompile)
		n += d
		s.mu.Unlock()
	}
	r.mu.Lock()
	r.dropped = n
	r.lost = r.lost || lost
	r.mu.Unlock()
	return n
}
