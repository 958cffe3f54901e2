package openvino

import (
	"fmt"
	"sync"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/mmap"
	"github.com/ggml-go/ggml/quant"
)

// convKey identifies a quantized tensor outside a WEIGHTS buffer by where
// it lies, what it is and its content (another tensor's bytes at the same
// address are another conversion).
type convKey struct {
	addr    uintptr
	typ     quant.Type
	ne      [graph.MaxDims]int64
	content uint64
}

// convEntry is such a tensor converted into OpenVINO's layout, in host
// memory outside the Go heap, shared by the compiled models that read it.
type convEntry struct {
	key    convKey
	layout extractedLayout
	mem    []byte
	free   func() error
	// keeps: mem is a SPILL_DIR mapping (unmapSpill drops its pages).
	keeps bool
	refs  int
	cache *convCache
}

// convCache holds the device's converted host tensors. A quantized weight
// that the loader left on the host (the tied output weight, token_embd,
// in the mapped model file) used to be converted into each compiled
// model's side blob, through two Go-heap copies: for a 32000x1024 Q8_0
// model 33 MiB per compiled model and about 100 MB of transient heap on
// the real CPU plugin's run. Converted once here, every model's Constants
// point at the same bytes. An entry lives while a compiled model holds
// it (refs), so quantized inputs that change from graph to graph do not
// pile up.
type convCache struct {
	mu sync.Mutex
	m  map[convKey]*convEntry
	// spill is GGML_OPENVINO_SPILL_DIR: conversions are mapped from a
	// file there, as the weight buffers are, when it is set.
	spill string
}

// acquire returns t's conversion in layout l (converting src, t's bytes,
// when no live model holds one), counted as held once more.
func (c *convCache) acquire(t *graph.Tensor, l extractedLayout, src []byte) (*convEntry, error) {
	// hostContent: hashed once per tensor in a weights buffer, so a
	// conversion found again does not read its source back in.
	k := convKey{addr: addr(t), typ: t.Type, ne: t.Ne, content: hostContent(t)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[k]; e != nil {
		e.refs++
		return e, nil
	}
	mem, free, keeps, err := weightAlloc(c.spill, l.total)
	if err != nil {
		return nil, err
	}
	if err := extract(t, l, src, mem); err != nil {
		_ = free()
		return nil, fmt.Errorf("openvino: converting %s: %w", t.Name, err)
	}
	// The source was read whole for it: in the mapped model file (the
	// tied output weight, whose few rows per token the CPU's GET_ROWS
	// reads) its pages need not stay resident beside the conversion
	// (35 MB of the RSS test's peak on the real CPU plugin); they come
	// back from the file. Only where no write would be lost.
	if w, ok := mmap.CopiedOnWrite(src); ok && w == 0 {
		mmap.DropPages(src)
	}
	e := &convEntry{key: k, layout: l, mem: mem, free: free, keeps: keeps, refs: 1, cache: c}
	if c.m == nil {
		c.m = map[convKey]*convEntry{}
	}
	c.m[k] = e
	return e, nil
}

// release drops one hold of e, and its memory with the last.
func (e *convEntry) release() {
	c := e.cache
	c.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last {
		delete(c.m, e.key)
	}
	c.mu.Unlock()
	if last {
		_ = e.free()
	}
}

// bytes is the memory of the live conversions.
func (c *convCache) bytes() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n uint64
	for _, e := range c.m {
		n += uint64(len(e.mem))
	}
	return n
}

// resident is the part of the live anonymous conversions in the resident
// set.
func (c *convCache) resident() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n uint64
	for _, e := range c.m {
		if !e.keeps {
			n += mmap.Resident(e.mem)
		}
	}
	return n
}

// dropSpill drops the pages of the conversions in SPILL_DIR mappings
// (unmapSpill) and reports whether there are any.
func (c *convCache) dropSpill() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	any := false
	for _, e := range c.m {
		if e.keeps {
			mmap.DropPages(e.mem)
			any = true
		}
	}
	return any
}

func releaseAll(es []*convEntry) {
	for _, e := range es {
		e.release()
	}
}
