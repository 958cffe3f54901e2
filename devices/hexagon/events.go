package hexagon

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// event marks a point in a session's stream. With ProtocolFence it is the
// upstream's: a fence slot of the creating device's session, and Record queues
// a FENCE that makes the DSP write the next fence value there once the
// work before it is done; Synchronize polls the slot; Wait on another
// core queues a FENCE wait, so that core's DSP waits, not the host.
// Fence-protocol only, NOT verified against a real DSP library. The public protocol
// has no fences: there an event is the last batch sent when it was
// recorded, and waiting on another session's event blocks the host until
// that batch is answered. Both verified on the double.
type event struct {
	dev *device
	s   *session // where it was recorded
	// public protocol
	seq uint64
	// ProtocolFence: slot of fs's fence buffer, and the value recorded
	fs   *session
	slot int
	fseq uint32
}

// NewEvent returns an event of the device.
func (d *device) NewEvent() (backend.Event, error) {
	s, err := d.sess()
	if err != nil {
		return nil, err
	}
	e := &event{dev: d}
	if s.proto.Fences() {
		if e.slot, err = s.allocFence(1); err != nil {
			return nil, err
		}
		e.fs = s
	}
	return e, nil
}

func asHexagon(b backend.Backend) (*hexBackend, error) {
	hb, ok := b.(*hexBackend)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a Hexagon backend", backend.ErrUnsupported, b.Name())
	}
	return hb, nil
}

func (e *event) fenceTensor() (*graph.Tensor, error) {
	e.fs.mu.Lock()
	defer e.fs.mu.Unlock()
	if e.fs.fence == nil {
		return nil, fmt.Errorf("%w: %s's session was closed", backend.ErrClosed, e.fs.name)
	}
	return e.fs.fence.tensor(e.slot, 1), nil
}

// Record marks the work queued on b so far: with fences, a FENCE signal
// queued after it (sent with b's next batch, as upstream); else the open
// batch is sent and its sequence number kept.
func (e *event) Record(b backend.Backend) error {
	hb, err := asHexagon(b)
	if err != nil {
		return err
	}
	s := hb.s
	s.work.Lock()
	defer s.work.Unlock()
	if err := hb.check(); err != nil {
		return err
	}
	if e.fs == nil {
		if err := s.flushBatch(); err != nil {
			return err
		}
		e.s, e.seq = s, s.reqSeq
		return nil
	}
	f, err := e.fenceTensor()
	if err != nil {
		return err
	}
	seq := s.nextFenceSeq()
	if err := s.enqueueFence(f, seq, false); err != nil {
		return err
	}
	e.s, e.fseq = s, seq
	return nil
}

// Wait orders b's later work after the recorded point. A session's
// batches run in order, so on the same session there is nothing to do.
// With fences: on the same core (a virtual session) the recording session
// becomes a peer, synchronized before b's next batch is sent (upstream's
// FIFO rule); on another core b's DSP waits for the fence (a FENCE wait
// queued on b) and the recording session's batches are sent before b's.
// Without fences the host waits for the point.
func (e *event) Wait(b backend.Backend) error {
	hb, err := asHexagon(b)
	if err != nil {
		return err
	}
	t := hb.s
	if e.s == nil || t == e.s {
		return nil
	}
	if e.fs == nil {
		return e.Synchronize()
	}
	t.addPeer(e.s)
	if t.cfg.Physical == e.s.cfg.Physical {
		return nil
	}
	f, err := e.fenceTensor()
	if err != nil {
		return err
	}
	t.work.Lock()
	defer t.work.Unlock()
	if err := hb.check(); err != nil {
		return err
	}
	return t.enqueueFence(f, e.fseq, true)
}

// Synchronize blocks until the recorded point is reached: the fence slot
// polled as upstream does (see waitFence), or the batch answered.
func (e *event) Synchronize() error {
	s := e.s
	if s == nil {
		return nil
	}
	if e.fs != nil {
		if err := s.flushPeers(true); err != nil {
			return err
		}
		e.fs.mu.Lock()
		f := e.fs.fence
		e.fs.mu.Unlock()
		if f == nil {
			return fmt.Errorf("%w: %s's session was closed", backend.ErrClosed, e.fs.name)
		}
		return s.waitFence(f, e.slot, e.fseq)
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

// Free waits for the recorded point (upstream's event_free) and gives
// the fence slot back.
func (e *event) Free() error {
	var err error
	if e.fs != nil {
		err = e.Synchronize()
		e.fs.freeFence(e.slot, 1)
		e.fs = nil
	}
	e.s = nil
	return err
}

// CopyTensorAsync copies src, placed in a Hexagon buffer and computed on
// from, into dst on this backend with a CPY op on the DSP (upstream's
// cpy_tensor_async). On the same session it runs in stream order. With
// fences: from a virtual session of the same core, this session copies
// after synchronizing from (a peer); from another core, from's DSP copies
// with CPY_FENCE into dst (mapped into from's session) and signals a fence
// slot of this session, which this session's DSP waits for with a FENCE
// before its later work; nothing blocks the host. Without fences the host
// waits for from's work and this session copies. Pairs the DSP does not
// copy (not F32/F16, tiled weights, other backends) are ErrUnsupported,
// and the caller copies through the host.
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
	ss, ds := hf.s, b.s
	cpy := &opNode{op: htp.OpCpy, node: dst}
	cpy.inputs[0], cpy.outputs[0] = src, dst
	switch {
	case ss == ds:
	case !ds.proto.Fences():
		if err := ss.flushPeers(true); err != nil {
			return err
		}
		ss.work.Lock()
		err := ss.sync()
		ss.work.Unlock()
		if err != nil {
			return err
		}
	case ss.cfg.Physical == ds.cfg.Physical:
		ds.addPeer(ss)
	default:
		return b.copyAcross(hf, cpy)
	}
	ds.work.Lock()
	defer ds.work.Unlock()
	if err := b.check(); err != nil {
		return err
	}
	return ds.enqueue(cpy)
}

// copyAcross is the copy from another core (upstream's
// cpy_tensor_async_phys): a CPY_FENCE on the source's DSP, a FENCE wait on
// this one's, with a fence slot of this session kept per source session.
func (b *hexBackend) copyAcross(hf *hexBackend, cpy *opNode) error {
	ss, ds := hf.s, b.s
	ds.mu.Lock()
	slot, ok := ds.cpyFence[ss]
	var err error
	if !ok && ds.fence != nil {
		if slot, err = ds.fence.alloc(1); err == nil {
			ds.cpyFence[ss] = slot
		}
	}
	var fence *graph.Tensor
	if ds.fence != nil && err == nil {
		fence = ds.fence.tensor(slot, 1)
	}
	ds.mu.Unlock()
	if err != nil {
		return err
	}
	if fence == nil {
		return fmt.Errorf("%w: %s", backend.ErrClosed, ds.name)
	}
	ds.work.Lock()
	seq := ds.nextFenceSeq()
	ds.work.Unlock()
	cpy.op, cpy.inputs[1], cpy.params[0] = htp.OpCpyFence, fence, int32(seq)
	ss.work.Lock()
	err = hf.check()
	if err == nil {
		err = ss.enqueue(cpy)
	}
	ss.work.Unlock()
	if err != nil {
		return err
	}
	ds.addPeer(ss)
	ds.work.Lock()
	defer ds.work.Unlock()
	if err := b.check(); err != nil {
		return err
	}
	return ds.enqueueFence(fence, seq, true)
}

// Comm is a communicator over 2 to 4 Hexagon backends on distinct
// physical cores, for tensor-parallel all-reduce (upstream's
// ggml_backend_comm_*). With ProtocolFence the ranks reduce on their DSPs
// with upstream's ALLREDUCE op (FULL mode) and a fence slot per rank;
// fence-protocol only, NOT verified against a real DSP library. With the public
// protocol (no ALLREDUCE) or GGML_HEXAGON_AR_SELECT=0, every rank's work
// is waited for, the sum is formed on the host over the shared rpcmem and
// written back to every rank. Both verified on the double.
type Comm struct {
	backends []*hexBackend
	slots    []int // each rank's fence slot in its own session
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
	if !c.onDSP() {
		return c, nil
	}
	for _, hb := range c.backends {
		slot, err := hb.s.allocFence(1)
		if err != nil {
			c.Free()
			return nil, err
		}
		c.slots = append(c.slots, slot)
	}
	return c, nil
}

func (c *Comm) onDSP() bool {
	s := c.backends[0].s
	return s.proto.Fences() && s.opts.ARSelect != 0
}

// Free releases the communicator's fence slots.
func (c *Comm) Free() {
	for i, slot := range c.slots {
		c.backends[i].s.freeFence(slot, 1)
	}
	c.backends, c.slots = nil, nil
}

// AllReduce sums ts (one per rank, same type F32 or F16, contiguous, the
// same element count) and leaves the sum in each. On the DSPs it is
// queued on every rank and the batches are sent: the sums are there once
// the ranks' backends are synchronized. On the host it is done when
// AllReduce returns.
func (c *Comm) AllReduce(ts []*graph.Tensor) error {
	if len(c.backends) == 0 || len(ts) != len(c.backends) {
		return fmt.Errorf("%w: %d tensors for %d ranks", buffer.ErrArgument, len(ts), len(c.backends))
	}
	for _, t := range ts {
		if t == nil || t.Type != ts[0].Type || !t.IsContiguous() || t.NElements() != ts[0].NElements() ||
			(t.Type != quant.F32 && t.Type != quant.F16) {
			return fmt.Errorf("%w: all-reduce needs contiguous F32 or F16 tensors of one type and size", buffer.ErrArgument)
		}
		if _, err := extraOf(t); err != nil {
			return fmt.Errorf("%w: %w", buffer.ErrArgument, err)
		}
	}
	if c.onDSP() {
		return c.allReduceDSP(ts)
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

// allReduceDSP queues upstream's ALLREDUCE on every rank (upstream's
// comm_allreduce_tensor): entry and exit fence values above every rank's
// last one, each rank's op reading all ranks' data and fence slots and
// writing all ranks' tensors, its kernel parameters rank, n_ranks and
// mode FULL.
func (c *Comm) allReduceDSP(ts []*graph.Tensor) error {
	n := len(ts)
	var fences []*graph.Tensor
	for i, hb := range c.backends {
		hb.s.mu.Lock()
		if hb.s.fence == nil {
			hb.s.mu.Unlock()
			return fmt.Errorf("%w: %s", backend.ErrClosed, hb.s.name)
		}
		fences = append(fences, hb.s.fence.tensor(c.slots[i], 1))
		hb.s.mu.Unlock()
	}
	var last uint32
	for i, hb := range c.backends {
		hb.s.work.Lock()
		if v := hb.s.fenceSeq; i == 0 || int32(v-last) > 0 {
			last = v
		}
		hb.s.work.Unlock()
	}
	next := func() uint32 {
		if last++; last == 0 {
			last = 1
		}
		return last
	}
	entry, exit := next(), next()
	for r, hb := range c.backends {
		for _, o := range c.backends {
			hb.s.addPeer(o.s)
		}
		op := &opNode{op: htp.OpAllreduce, node: ts[r]}
		copy(op.inputs[:], ts)
		copy(op.inputs[n:], fences)
		copy(op.outputs[:], ts)
		op.params[0], op.params[1] = int32(entry), int32(exit)
		kp := htp.AllreduceKernelParams{Rank: uint32(r), NRanks: uint32(n), Mode: htp.AllreduceFull}
		*(*htp.AllreduceKernelParams)(unsafe.Pointer(&op.kparams)) = kp
		hb.s.work.Lock()
		hb.s.fenceSeq = exit
		err := hb.check()
		if err == nil {
			err = hb.s.enqueue(op)
		}
		hb.s.work.Unlock()
		if err != nil {
			return err
		}
	}
	var errs []error
	for _, hb := range c.backends {
		hb.s.work.Lock()
		errs = append(errs, hb.s.flushBatch())
		hb.s.work.Unlock()
	}
	return errors.Join(errs...)
}
