package hexagon

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// planItem is one buffer of a multi-buffer plan: its size and the
// tensors [first, last) it holds.
type planItem struct {
	size        uint64
	first, last int
}

// kvLayer is the layer suffix of a KV-cache tensor ("cache_k_l12" gives
// "_l12"), or "" for other tensors.
func kvLayer(t *graph.Tensor) string {
	if !strings.HasPrefix(t.Name, "cache_") {
		return ""
	}
	i := strings.Index(t.Name, "_l")
	if i < 0 || i+2 >= len(t.Name) || t.Name[i+2] < '0' || t.Name[i+2] > '9' {
		return ""
	}
	return t.Name[i:]
}

// plan spreads ts over buffers of at most GGML_HEXAGON_MBUF's static size
// (ggml_backend_hexagon_alloc_buffer_n_plan): each tensor with the views
// after it is a unit, the KV-cache tensors of one layer stay in one unit,
// and units fill a buffer until the next would overflow it.
func (bt *bufferType) plan(ts []*graph.Tensor) []planItem {
	maxSize := bt.dev.opts.MbufStatic
	if maxSize == 0 {
		maxSize = ^uint64(0)
	}
	padded := func(t *graph.Tensor) uint64 {
		if t.Data != nil || t.ViewSrc != nil || t.Buffer != nil {
			return 0
		}
		return (bt.AllocSize(t) + Alignment - 1) &^ (Alignment - 1)
	}
	var units []planItem
	for i := 0; i < len(ts); {
		u := planItem{size: padded(ts[i]), first: i, last: i + 1}
		layer := kvLayer(ts[i])
		for u.last < len(ts) {
			next := ts[u.last]
			if next.ViewSrc != nil {
				u.last++
				continue
			}
			if layer != "" && kvLayer(next) == layer {
				u.size += padded(next)
				u.last++
				continue
			}
			break
		}
		units = append(units, u)
		i = u.last
	}
	var plan []planItem
	var cur planItem
	for _, u := range units {
		if u.size == 0 {
			continue
		}
		if cur.size > 0 && cur.size+u.size > maxSize {
			cur.last = u.first
			plan = append(plan, cur)
			cur = planItem{first: u.first}
		}
		cur.size += u.size
	}
	if cur.size > 0 {
		cur.last = len(ts)
		plan = append(plan, cur)
	}
	return plan
}

// TensorsSize is the total of the plan's buffers.
func (bt *bufferType) TensorsSize(ts []*graph.Tensor) uint64 {
	var n uint64
	for _, p := range bt.plan(ts) {
		n += p.size
	}
	return n
}

// AllocTensors allocates the plan's buffers and places the tensors (and
// their views) in them; one buffer is returned as is, several as a
// buffer.Multi. On failure nothing stays allocated.
func (bt *bufferType) AllocTensors(ts []*graph.Tensor) (buffer.Buffer, error) {
	var bufs []buffer.Buffer
	fail := func(err error) (buffer.Buffer, error) {
		for _, b := range bufs {
			err = errors.Join(err, b.Reset(), b.Free())
		}
		return nil, err
	}
	for _, p := range bt.plan(ts) {
		b, err := bt.Alloc(p.size)
		if err != nil {
			return fail(err)
		}
		bufs = append(bufs, b)
		ta, err := buffer.NewTensorAllocator(b)
		if err != nil {
			return fail(err)
		}
		for _, t := range ts[p.first:p.last] {
			if t.Buffer != nil || (t.ViewSrc == nil && t.Data != nil) {
				continue
			}
			if err := ta.Alloc(t); err != nil {
				return fail(fmt.Errorf("hexagon: placing %s: %w", t, err))
			}
		}
	}
	switch len(bufs) {
	case 0:
		return nil, nil
	case 1:
		return bufs[0], nil
	}
	m, err := buffer.NewMulti(bufs...)
	if err != nil {
		return fail(err)
	}
	return m, nil
}
