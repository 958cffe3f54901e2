package hexagon

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Fences (ProtocolFence only; fence-protocol only, NOT verified against a real DSP
// library). Every session has a 64 KiB fence buffer, mapped non-pinned
// (FASTRPC_MAP_FD_DELAYED) at bring-up as upstream does, cut into slots
// of htp.FenceSlotSize bytes: u32 seq at +0, u32 status at +4. A FENCE op
// signals (the DSP writes status, then seq) or waits on a slot; the host
// waits by polling the slot (upstream's event synchronize). Slots are
// named to the DSP as I8 tensors with the FENCE flag, ne = {slot size,
// slots, 1, 1}, placed at the slot.

// fenceBuffer hands out the slots of a session's fence buffer (upstream's
// ggml_hexagon_fence_buffer): freed single slots are reused, runs of
// several come from the unused tail; a slot is zeroed when handed out, so
// the DSP sees a fresh slot as 0.
type fenceBuffer struct {
	blk  *block
	head int
	free []int
}

func newFenceBuffer(s *session) (*fenceBuffer, error) {
	blk, err := allocBlock(s.lib, htp.FenceBufferSize, false)
	if err != nil {
		return nil, err
	}
	if err := blk.mapInto(s, false); err != nil {
		_ = blk.free()
		return nil, err
	}
	return &fenceBuffer{blk: blk}, nil
}

func (f *fenceBuffer) slots() int { return htp.FenceBufferSize / htp.FenceSlotSize }

// alloc returns the first of n consecutive free slots.
func (f *fenceBuffer) alloc(n int) (int, error) {
	slot := -1
	if n == 1 && len(f.free) > 0 {
		slot = f.free[len(f.free)-1]
		f.free = f.free[:len(f.free)-1]
	} else if f.head+n <= f.slots() {
		slot = f.head
		f.head += n
	}
	if slot < 0 {
		return 0, fmt.Errorf("hexagon: all %d fence slots are in use", f.slots())
	}
	clear(f.blk.mem[slot*htp.FenceSlotSize : (slot+n)*htp.FenceSlotSize])
	return slot, nil
}

func (f *fenceBuffer) release(slot, n int) {
	for i := range n {
		f.free = append(f.free, slot+i)
	}
}

// word is the u32 at byte off of slot: C memory the DSP writes.
func (f *fenceBuffer) word(slot, off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&f.blk.mem[slot*htp.FenceSlotSize+off]))
}

// tensor names n slots from slot to the DSP (upstream's make_fence_tensor).
func (f *fenceBuffer) tensor(slot, n int) *graph.Tensor {
	t := &graph.Tensor{Type: quant.I8, Name: "fence"}
	t.Ne = [graph.MaxDims]int64{htp.FenceSlotSize, int64(n), 1, 1}
	t.Nb = [graph.MaxDims]uint64{1, htp.FenceSlotSize, uint64(htp.FenceSlotSize * n), uint64(htp.FenceSlotSize * n)}
	t.Extra = &extra{blk: f.blk, at: uint64(slot * htp.FenceSlotSize), flags: htp.TensorFence}
	return t
}

// allocFence takes n slots of s's fence buffer.
func (s *session) allocFence(n int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fence == nil {
		return 0, fmt.Errorf("hexagon: %s: the session is closed", s.name)
	}
	return s.fence.alloc(n)
}

func (s *session) freeFence(slot, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fence != nil {
		s.fence.release(slot, n)
	}
}

// nextFenceSeq is the session's next fence value; never 0 (a fresh slot
// holds 0).
func (s *session) nextFenceSeq() uint32 {
	s.fenceSeq++
	if s.fenceSeq == 0 {
		s.fenceSeq = 1
	}
	return s.fenceSeq
}

// enqueueFence queues a FENCE that signals (wait false) or waits for seq
// in slot of f's session (upstream's enqueue_fence).
func (s *session) enqueueFence(fence *graph.Tensor, seq uint32, wait bool) error {
	n := &opNode{op: htp.OpFence, node: fence}
	n.inputs[0], n.outputs[0] = fence, fence
	n.params[0] = int32(seq)
	if !wait {
		n.params[1] = 1
	}
	return s.enqueue(n)
}

// mdevNode is the MDEV_GROUP op that starts a group's batch: the group's
// barrier slots, one per core; push writes each member's index.
func (s *session) mdevNode() *opNode {
	t := s.fence.tensor(s.mdevSlot, len(s.all))
	return &opNode{op: htp.OpMdevGroup, node: t, inputs: [htp.FenceMaxInputs]*graph.Tensor{t}}
}

// fenceReached reports whether slot holds seq or later, and the status
// the DSP wrote with it.
func (f *fenceBuffer) reached(slot int, seq uint32) (bool, htp.Status) {
	if int32(atomic.LoadUint32(f.word(slot, 0))-seq) < 0 {
		return false, 0
	}
	return true, htp.Status(atomic.LoadUint32(f.word(slot, 4)))
}

// waitFence polls slot of f until it holds seq (upstream's
// event_synchronize), first sending s's open batch when the fence is not
// there yet. Upstream spins forever; here the wait also ends with an
// error when s fails, when every batch s sent is answered and the slot
// still lacks seq (a stale fence: the signal went elsewhere or carried
// another value), or after s's response timeout.
func (s *session) waitFence(f *fenceBuffer, slot int, seq uint32) error {
	if ok, st := f.reached(slot, seq); ok {
		return fenceStatus(s, st)
	}
	s.work.Lock()
	err := s.flushBatch()
	s.work.Unlock()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(s.responseTimeout)
	for spin := 0; ; spin++ {
		if ok, st := f.reached(slot, seq); ok {
			return fenceStatus(s, st)
		}
		if spin%64 != 63 {
			runtime.Gosched()
			continue
		}
		// Now and then: read the answers that are in, to see a failure.
		s.work.Lock()
		done, err := s.drainAnswers()
		s.work.Unlock()
		if ok, st := f.reached(slot, seq); ok {
			return fenceStatus(s, st)
		}
		switch {
		case err != nil:
			return err
		case done:
			return fmt.Errorf("hexagon: %s: stale fence: every batch is answered, and fence slot %d holds %#x, not %#x",
				s.name, slot, atomic.LoadUint32(f.word(slot, 0)), seq)
		case time.Now().After(deadline):
			return s.broken(fmt.Errorf("%s: fence slot %d did not reach %#x in %v", s.name, slot, seq, s.responseTimeout))
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func fenceStatus(s *session, st htp.Status) error {
	if st.Failed() {
		return &DSPError{Device: s.name, Status: st}
	}
	return nil
}

// drainAnswers reads the answers already in without blocking; done when
// none is outstanding.
func (s *session) drainAnswers() (bool, error) {
	if s.err != nil {
		return false, s.err
	}
	done := true
	for _, x := range s.members() {
		for x.rspSeq < x.reqSeq {
			before := x.rspSeq
			if err := x.pollAnswer(); err != nil {
				return false, s.broken(err)
			}
			if x.rspSeq == before {
				done = false
				break
			}
		}
	}
	return done, nil
}

// addPeer records that s's later batches wait for p's queued work.
func (s *session) addPeer(p *session) {
	if p == s {
		return
	}
	s.mu.Lock()
	s.peers[p] = true
	s.mu.Unlock()
}

func (s *session) takePeers() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.peers) == 0 {
		return nil
	}
	ps := make([]*session, 0, len(s.peers))
	for p := range s.peers {
		ps = append(ps, p)
	}
	clear(s.peers)
	return ps
}

// flushPeers sends the work of the sessions s waits for (upstream's
// flush_peers): a virtual session on the same core is synchronized (its
// work done: the double, like separate DSP processes, gives no order
// between two queues), another core's batch is sent. Entry points call it
// with block before taking s.work; flushBatch calls it holding s.work,
// and then a peer another goroutine holds stays a peer for later. No
// goroutine blocks on a second session's lock while holding one.
func (s *session) flushPeers(block bool) error {
	var errs []error
	for _, p := range s.takePeers() {
		locked := p.work.TryLock()
		if !locked && block {
			p.work.Lock()
			locked = true
		}
		if !locked {
			s.addPeer(p)
			continue
		}
		err := p.flushPeers(false)
		if err == nil {
			if p.cfg.Physical == s.cfg.Physical {
				err = p.sync()
			} else {
				err = p.flushBatch()
			}
		}
		p.work.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("hexagon: %s waits for %s: %w", s.name, p.name, err))
		}
	}
	return errors.Join(errs...)
}
