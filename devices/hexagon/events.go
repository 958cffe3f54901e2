package hexagon

import (
	"errors"
	"fmt"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// event marks a point in a session's stream: the last batch sent when it
// was recorded. The seed signals events with FENCE ops in shared memory;
// those are seed-only (no public opcode), so events here ride on the
// public protocol's batch sequence: a batch is done when its answer has
// been read. Waiting on another session's event blocks the host until
// that batch is answered. Verified on the double.
type event struct {
	dev *device
	s   *session
	seq uint64
}

// NewEvent returns an event of the device.
func (d *device) NewEvent() (backend.Event, error) {
	if _, err := d.sess(); err != nil {
		return nil, err
	}
	return &event{dev: d}, nil
}

func asHexagon(b backend.Backend) (*hexBackend, error) {
	hb, ok := b.(*hexBackend)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a Hexagon backend", backend.ErrUnsupported, b.Name())
	}
	return hb, nil
}

// Record marks the work queued on b so far, sending the open batch.
func (e *event) Record(b backend.Backend) error {
	hb, err := asHexagon(b)
	if err != nil {
		return err
	}
	s := hb.s
	s.work.Lock()
	defer s.work.Unlock()
	if err := s.flushBatch(); err != nil {
		return err
	}
	e.s, e.seq = s, s.reqSeq
	return nil
}

// Wait orders b's later work after the recorded point: a session's
// batches run in order, so on the same session there is nothing to do;
// on another the host waits for the point.
func (e *event) Wait(b backend.Backend) error {
	hb, err := asHexagon(b)
	if err != nil {
		return err
	}
	if e.s == nil || hb.s == e.s {
		return nil
	}
	return e.Synchronize()
}

// Synchronize blocks until the recorded batches are answered.
func (e *event) Synchronize() error {
	s := e.s
	if s == nil {
		return nil
	}
	s.work.Lock()
	defer s.work.Unlock()
	for s.rspSeq < e.seq {
		if s.err != nil {
			return s.err
		}
		if err := s.flushPending(false); err != nil {
			return err
		}
	}
	return s.err
}

// Free releases the event.
func (e *event) Free() error { e.s = nil; return nil }

// CopyTensorAsync copies src, placed in a Hexagon buffer and computed on
// from, into dst on this backend with a CPY op on the DSP (the seed's
// cpy_tensor_async): on the same session in stream order; from another
// session (a virtual session or another core), once from's work is done,
// with src's memory mapped into this session. Pairs the DSP does not copy
// (not F32/F16, tiled weights, other backends) are ErrUnsupported, and
// the caller copies through the host.
func (b *hexBackend) CopyTensorAsync(from backend.Backend, src, dst *graph.Tensor) error {
	hf, err := asHexagon(from)
	if err != nil {
		return err
	}
	xs, errS := extraOf(src)
	xd, errD := extraOf(dst)
	float := func(t *graph.Tensor) bool { return t.Type == quant.F32 || t.Type == quant.F16 }
	if errS != nil || errD != nil || !float(src) || !float(dst) || xs.tiled() || xd.tiled() {
		return fmt.Errorf("%w: %s copies %s to %s through the host", backend.ErrUnsupported, b.Name(), src, dst)
	}
	if hf.s != b.s {
		hf.s.work.Lock()
		err := hf.s.sync()
		hf.s.work.Unlock()
		if err != nil {
			return err
		}
	}
	s := b.s
	s.work.Lock()
	defer s.work.Unlock()
	if err := s.err; err != nil {
		return err
	}
	n := &opNode{op: htp.OpCpy, node: dst}
	n.inputs[0], n.outputs[0] = src, dst
	return s.enqueue(n)
}

// Comm is a communicator over 2 to 4 Hexagon backends on distinct
// physical cores, for tensor-parallel all-reduce (the seed's
// ggml_backend_comm_*). The seed reduces on the DSPs with its ALLREDUCE
// op and fences, which are seed-only (no public opcode); here every rank's
// work is waited for, the sum is formed on the host over the shared
// rpcmem and written back to every rank. Verified on the double.
type Comm struct {
	backends []*hexBackend
}

// NewComm returns a communicator over bs, or an error when they are not
// 2 to 4 Hexagon backends on distinct physical cores.
func NewComm(bs ...backend.Backend) (*Comm, error) {
	if len(bs) < 2 || len(bs) > 4 {
		return nil, fmt.Errorf("%w: all-reduce over %d backends (2 to 4)", backend.ErrUnsupported, len(bs))
	}
	c := &Comm{}
	seen := map[int]bool{}
	for _, b := range bs {
		hb, err := asHexagon(b)
		if err != nil {
			return nil, err
		}
		if seen[hb.s.cfg.Physical] {
			return nil, fmt.Errorf("%w: two ranks on core %d", backend.ErrUnsupported, hb.s.cfg.Physical)
		}
		seen[hb.s.cfg.Physical] = true
		c.backends = append(c.backends, hb)
	}
	return c, nil
}

// Free releases the communicator (it holds no device resources).
func (c *Comm) Free() { c.backends = nil }

// AllReduce sums ts (one per rank, same type F32 or F16, contiguous, the
// same element count) and leaves the sum in each.
func (c *Comm) AllReduce(ts []*graph.Tensor) error {
	if len(c.backends) == 0 || len(ts) != len(c.backends) {
		return fmt.Errorf("%w: %d tensors for %d ranks", buffer.ErrArgument, len(ts), len(c.backends))
	}
	for _, t := range ts {
		if t == nil || t.Type != ts[0].Type || !t.IsContiguous() || t.NElements() != ts[0].NElements() ||
			(t.Type != quant.F32 && t.Type != quant.F16) {
			return fmt.Errorf("%w: all-reduce needs contiguous F32 or F16 tensors of one type and size", buffer.ErrArgument)
		}
	}
	var errs []error
	for _, b := range c.backends {
		errs = append(errs, b.Synchronize())
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	sum := make([]float32, ts[0].NElements())
	for _, t := range ts {
		vals, err := backend.GetFloat32(nil, t)
		if err != nil {
			return err
		}
		for i, v := range vals {
			sum[i] += v
		}
	}
	for _, t := range ts {
		if err := backend.SetFloat32(nil, t, sum); err != nil {
			return err
		}
	}
	return nil
}
