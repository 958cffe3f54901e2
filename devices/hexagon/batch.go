package hexagon

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
	"unsafe"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon/internal/fastrpc"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
)

// opNode is one op for the DSP: the opcode, the tensors it reads and
// writes (nil for an absent source), ggml's op params and the kernel
// blob (htp_opnode).
type opNode struct {
	op      htp.Op
	node    *graph.Tensor
	inputs  [htp.FenceMaxInputs]*graph.Tensor
	outputs [htp.MaxOutputs]*graph.Tensor
	params  [htp.MaxParams]int32
	kparams [htp.MaxKernParams]int32
}

var (
	sizeBuf     = int(unsafe.Sizeof(htp.BufDesc{}))
	sizeTensor  = int(unsafe.Sizeof(htp.Tensor{}))
	sizeOp      = int(unsafe.Sizeof(htp.OpDesc{}))
	sizeFenceOp = int(unsafe.Sizeof(htp.FenceOpDesc{}))
	sizeProf    = int(unsafe.Sizeof(htp.ProfDesc{}))
	sizeTrace   = int(unsafe.Sizeof(htp.TraceDesc{}))
)

// dataKey finds a tensor already in the batch by its memory and shape.
type dataKey struct {
	fd int32
	at uint64
}

// opBatch collects ops and the buffers and tensors they use until it is
// flushed (ggml_hexagon_opbatch): buffers deduplicated by fd, tensors by
// pointer and by memory and shape; the fit checks keep it within the
// protocol's limits (16 buffers, the tensor table, the DSP's vmem).
type opBatch struct {
	s      *session
	bufs   []htp.BufDesc
	blocks []*block
	tens   []htp.Tensor
	// ops are kept in upstream's wider layout; push writes the
	// session's protocol.
	ops   []htp.FenceOpDesc
	pub   []htp.OpDesc
	nodes []*opNode
	tMap  map[*graph.Tensor]int
	dMap  map[dataKey][]int
	vmem  uint64

	nTensMax, nOpsMax int
	vmemMax           uint64
}

func maxTensors(nOps int) int { return min(nOps*4+htp.MaxInputs+htp.MaxOutputs, htp.MaxTensors) }

func newOpBatch(s *session) *opBatch {
	n := s.opts.OpBatch
	b := &opBatch{s: s, nOpsMax: n, nTensMax: maxTensors(n), vmemMax: s.maxVmem,
		tMap: map[*graph.Tensor]int{}, dMap: map[dataKey][]int{}}
	b.bufs = make([]htp.BufDesc, 0, htp.MaxBufs)
	b.tens = make([]htp.Tensor, 0, b.nTensMax)
	b.ops = make([]htp.FenceOpDesc, 0, n)
	return b
}

func (b *opBatch) reset() {
	b.bufs, b.blocks, b.tens, b.ops, b.nodes = b.bufs[:0], b.blocks[:0], b.tens[:0], b.ops[:0], b.nodes[:0]
	clear(b.tMap)
	clear(b.dMap)
	b.vmem = 0
}

func (b *opBatch) empty() bool { return len(b.ops) == 0 }
func (b *opBatch) full() bool  { return len(b.ops) >= b.nOpsMax }

func (b *opBatch) findBuffer(fd int32) int {
	for i := range b.bufs {
		if int32(b.bufs[i].FD) == fd {
			return i
		}
	}
	return -1
}

func (b *opBatch) addBuffer(blk *block) int {
	if i := b.findBuffer(blk.fd); i >= 0 {
		return i
	}
	d := htp.BufDesc{Base: uint64(blk.base), Size: blk.size, FD: uint32(blk.fd)}
	if blk.extendedIn(b.s) {
		d.Flags = htp.BufExtended
	} else {
		b.vmem += blk.size
	}
	b.bufs = append(b.bufs, d)
	b.blocks = append(b.blocks, blk)
	return len(b.bufs) - 1
}

// describe is a tensor's descriptor without its buffer and index: type,
// shape, strides, size and flags (tiled tensors get the tiled strides).
func describe(t *graph.Tensor, x *extra, proto htp.Protocol) (htp.Tensor, error) {
	var h htp.Tensor
	h.Type = uint32(t.Type)
	nb, size := t.Nb, t.NBytes()
	if x.tiled() {
		nb, size = tiledStrides(t)
	}
	for i := range 4 {
		if t.Ne[i] < 0 || t.Ne[i] > 1<<32-1 || nb[i] > 1<<32-1 {
			return h, fmt.Errorf("hexagon: %s: shape or strides beyond the protocol's 32 bits", t)
		}
		h.Ne[i], h.Nb[i] = uint32(t.Ne[i]), uint32(nb[i])
	}
	if size > 1<<32-1 {
		return h, fmt.Errorf("hexagon: %s: %d bytes, the protocol's limit is 4 GiB", t, size)
	}
	h.Size = uint32(size)
	h.Flags = wireFlags(t, x, proto)
	return h, nil
}

// wireFlags are a tensor's flags as the protocol's DSP reads them. The
// public DSP (d99724f htp-tensor.c) flushes an input from its cache
// before an op only when it carries COMPUTE, so that an output of an
// earlier op of the batch is not read stale; it never reads DIRTY. So,
// as the public host does, COMPUTE goes on everything outside a WEIGHTS
// buffer (weights are never written by an op) and DIRTY on nothing. The
// fence protocol's flags (WEIGHT, TILED, FENCE) say what the tensor is.
func wireFlags(t *graph.Tensor, x *extra, proto htp.Protocol) uint32 {
	if proto.Fences() {
		return x.flags & htp.TensorWireMask
	}
	if inWeights(t) {
		return 0
	}
	return htp.TensorCompute
}

// inWeights reports whether t's memory is in a buffer whose usage is
// WEIGHTS (ggml_backend_buffer_get_usage), which is how upstream tells
// weights from compute data: for the tensor flags and for DMA64.
func inWeights(t *graph.Tensor) bool {
	for t.ViewSrc != nil {
		t = t.ViewSrc
	}
	u, ok := t.Buffer.(interface{ Usage() buffer.Usage })
	return ok && u.Usage() == buffer.UsageWeights
}

func sameShape(a, b *htp.Tensor) bool { return a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb }

func (b *opBatch) addTensor(t *graph.Tensor) (int, error) {
	if i, ok := b.tMap[t]; ok {
		return i, nil
	}
	x, err := extraOf(t)
	if err != nil {
		return 0, err
	}
	h, err := describe(t, x, b.s.proto)
	if err != nil {
		return 0, err
	}
	key := dataKey{x.blk.fd, x.at}
	for _, i := range b.dMap[key] {
		if sameShape(&b.tens[i], &h) {
			b.tMap[t] = i
			return i, nil
		}
	}
	if x.at > 1<<32-1 {
		return 0, fmt.Errorf("hexagon: %s at byte %d of its buffer: the protocol addresses 4 GiB", t, x.at)
	}
	ti := len(b.tens)
	h.Data = uint32(x.at)
	h.BI = uint16(b.addBuffer(x.blk))
	h.TI = uint16(ti)
	b.tens = append(b.tens, h)
	b.tMap[t] = ti
	b.dMap[key] = append(b.dMap[key], ti)
	return ti, nil
}

// fits reports whether node's tensors fit the batch: new buffers within
// 16, new tensors within the table, new non-extended memory within vmem.
func (b *opBatch) fits(n *opNode) (bool, error) {
	var extraBufs, extraTens int
	var extraVmem uint64
	// Sized for the widest descriptor of any protocol: an op node carries
	// FenceMaxInputs sources whichever protocol the session speaks.
	var seen [len(opNode{}.inputs) + len(opNode{}.outputs)]int32
	nSeen := 0
	check := func(t *graph.Tensor) error {
		if t == nil {
			return nil
		}
		if _, ok := b.tMap[t]; !ok {
			extraTens++
		}
		x, err := extraOf(t)
		if err != nil {
			return err
		}
		fd := x.blk.fd
		if b.findBuffer(fd) >= 0 || slices.Contains(seen[:nSeen], fd) {
			return nil
		}
		seen[nSeen] = fd
		nSeen++
		extraBufs++
		if !x.blk.extendedIn(b.s) {
			extraVmem += x.blk.size
		}
		return nil
	}
	for _, t := range n.inputs {
		if err := check(t); err != nil {
			return false, err
		}
	}
	for _, t := range n.outputs {
		if err := check(t); err != nil {
			return false, err
		}
	}
	return len(b.bufs)+extraBufs <= htp.MaxBufs && len(b.tens)+extraTens <= b.nTensMax &&
		b.vmem+extraVmem <= b.vmemMax, nil
}

// add appends node; the caller checked that it fits.
func (b *opBatch) add(n *opNode) error {
	code, ok := b.s.proto.Opcode(n.op)
	if !ok {
		return fmt.Errorf("hexagon: %s: %s has no opcode in %s", b.s.name, n.op, b.s.proto)
	}
	for _, t := range n.inputs[b.s.proto.MaxInputs():] {
		if t != nil {
			return fmt.Errorf("hexagon: %s: %s has more than the %d sources of %s", b.s.name, n.op, b.s.proto.MaxInputs(), b.s.proto)
		}
	}
	o := htp.FenceOpDesc{Opcode: code, Params: n.params, KernelParams: n.kparams}
	if err := b.indices(o.Src[:], n.inputs[:]); err != nil {
		return err
	}
	if err := b.indices(o.Dst[:], n.outputs[:]); err != nil {
		return err
	}
	b.ops = append(b.ops, o)
	b.nodes = append(b.nodes, n)
	return nil
}

// indices writes the tensor index of each of ts (NoTensor for nil) into
// idx, adding the tensors to the batch.
func (b *opBatch) indices(idx []uint16, ts []*graph.Tensor) error {
	for i, t := range ts {
		idx[i] = htp.NoTensor
		if t != nil {
			ti, err := b.addTensor(t)
			if err != nil {
				return err
			}
			idx[i] = uint16(ti)
		}
	}
	return nil
}

// sortBuffers orders the buffers largest first (stable) and remaps the
// tensors' buffer indices, as upstream does before every flush.
func (b *opBatch) sortBuffers() {
	n := len(b.bufs)
	if n <= 1 {
		return
	}
	var order [htp.MaxBufs]int
	for i := range n {
		order[i] = i
	}
	slices.SortStableFunc(order[:n], func(x, y int) int {
		switch {
		case b.bufs[x].Size > b.bufs[y].Size:
			return -1
		case b.bufs[x].Size < b.bufs[y].Size:
			return 1
		}
		return 0
	})
	sorted := true
	for i := range n {
		if order[i] != i {
			sorted = false
		}
	}
	if sorted {
		return
	}
	var remap [htp.MaxBufs]uint16
	var bufs [htp.MaxBufs]htp.BufDesc
	var blocks [htp.MaxBufs]*block
	for nb, ob := range order[:n] {
		remap[ob] = uint16(nb)
		bufs[nb], blocks[nb] = b.bufs[ob], b.blocks[ob]
	}
	copy(b.bufs, bufs[:n])
	copy(b.blocks, blocks[:n])
	for i := range b.tens {
		b.tens[i].BI = remap[b.tens[i].BI]
	}
}

// opQueue is the pinned shared memory the batches travel in: depth slots
// of shm_blk_size bytes, slot (seq-1) % depth for batch seq.
type opQueue struct {
	proto   htp.Protocol
	req     htp.FenceOpBatchReq // the message being written (C reads it during the call only)
	blk     *block
	slot    uint64
	depth   uint64
	nTraces int
}

func newOpQueue(s *session) (*opQueue, error) {
	nOps := s.opts.OpBatch
	var tr int
	if s.opts.Profile == htp.ProfTrace {
		tr = (htp.MaxNThreads + 1) * s.opts.OpTrace * sizeTrace
	}
	slot := sizeBuf*htp.MaxBufs + sizeTensor*maxTensors(nOps) + (s.proto.OpDescSize()+sizeProf)*nOps + tr
	slot = (slot + 127) &^ 127
	depth := uint64(s.opts.OpQueue)
	blk, err := allocBlock(s.lib, blockSize(uint64(slot)*depth, true, false), true)
	if err != nil {
		return nil, err
	}
	q := &opQueue{proto: s.proto, blk: blk, slot: uint64(slot), depth: depth}
	if s.opts.Profile == htp.ProfTrace {
		q.nTraces = s.opts.OpTrace
	}
	if err := blk.mapInto(s, false); err != nil {
		_ = blk.free()
		return nil, err
	}
	return q, nil
}

// push writes batch seq into its slot in the session's protocol and
// returns the dspqueue buffer and the request message. group, when not
// negative, is the member index an MDEV_GROUP first op carries.
func (q *opQueue) push(b *opBatch, seq uint64, group int) (fastrpc.QueueBuffer, []byte) {
	off := ((seq - 1) % q.depth) * q.slot
	mem := q.blk.mem[off : off+q.slot]
	n := 0
	n += copy(mem[n:], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.bufs))), len(b.bufs)*sizeBuf))
	n += copy(mem[n:], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.tens))), len(b.tens)*sizeTensor))
	ops := b.ops
	if group >= 0 {
		ops[0].Params[0] = int32(group)
	}
	if q.proto == htp.ProtocolFence {
		n += copy(mem[n:], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ops))), len(ops)*sizeFenceOp))
	} else {
		b.pub = b.pub[:0]
		for i := range ops {
			b.pub = append(b.pub, ops[i].Public())
		}
		n += copy(mem[n:], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.pub))), len(b.pub)*sizeOp))
	}
	n += len(ops)*sizeProf + (htp.MaxNThreads+1)*q.nTraces*sizeTrace
	q.req = htp.FenceOpBatchReq{OpBatchReq: htp.OpBatchReq{ID: uint32(seq), NBufs: uint32(len(b.bufs)),
		NTensors: uint32(len(b.tens)), NOps: uint32(len(ops)), NTraces: uint32(q.nTraces)}, Seq: seq}
	buf := fastrpc.QueueBuffer{FD: uint32(q.blk.fd), Size: uint32(n), Offset: uint32(off),
		Flags: fastrpc.BufferFlagFlushSender | fastrpc.BufferFlagInvalidateRecipient, Ptr: uint64(q.blk.base) + off}
	return buf, unsafe.Slice((*byte)(unsafe.Pointer(&q.req)), q.proto.ReqSize())
}

// flushBatch sends the collected batch (ggml_hexagon_session::flush_batch),
// first waiting for an answer when depth batches are in flight. A group
// device's batch goes to every member, each with its index in the
// MDEV_GROUP op that starts it (ProtocolFence).
func (s *session) flushBatch() error {
	if s.err != nil {
		return s.err
	}
	b := s.batch
	if b.empty() {
		return nil
	}
	if err := s.flushPeers(false); err != nil {
		return err
	}
	b.sortBuffers()
	seq := s.reqSeq + 1
	for _, x := range s.members() {
		if seq-x.rspSeq > x.opq.depth {
			if err := x.flushPending(false); err != nil {
				return s.broken(err)
			}
		}
	}
	grouped := len(b.ops) > 0 && b.ops[0].Opcode == s.mdevOpcode()
	for _, x := range s.members() {
		idx := -1
		if grouped {
			idx = int(x.index)
		}
		buf, msg := x.opq.push(b, seq, idx)
		x.debug("batch", "seq", seq, "bufs", len(b.bufs), "tensors", len(b.tens), "ops", len(b.ops), "bytes", buf.Size)
		if err := x.lib.Write(x.queue, &buf, msg, fastrpc.QueueTimeout); err != nil {
			b.reset()
			return s.broken(fmt.Errorf("%s: dspqueue_write of batch %d: %w", x.name, seq, err))
		}
		x.reqSeq = seq
	}
	b.reset()
	return nil
}

// members are the sessions a batch of s goes to: s, and a group's other
// cores when the protocol lets them share the work.
func (s *session) members() []*session {
	if len(s.group) == 0 || !s.proto.Fences() {
		return s.self[:]
	}
	return s.all
}

// mdevOpcode is MDEV_GROUP's wire value, or one no op has.
func (s *session) mdevOpcode() uint32 {
	if v, ok := s.proto.Opcode(htp.OpMdevGroup); ok {
		return v
	}
	return ^uint32(0)
}

// flushPending reads answers until every batch sent is answered (all) or
// one is, for s and the group members its batches went to; a failure
// status marks the session, as a read error or a malformed answer does.
func (s *session) flushPending(all bool) error {
	var errs []error
	for _, x := range s.members() {
		if x != s {
			if err := x.readAnswers(all); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return s.broken(err)
	}
	return s.readAnswers(all)
}

// readAnswers reads s's own answers (flushPending without the group).
func (s *session) readAnswers(all bool) error { return s.read(all, false) }

// pollAnswer reads one answer if there is one, without waiting.
func (s *session) pollAnswer() error { return s.read(false, true) }

func (s *session) read(all, poll bool) error {
	var rsp htp.FenceOpBatchRsp
	msg := unsafe.Slice((*byte)(unsafe.Pointer(&rsp)), s.proto.RspSize())
	timeout := uint32(min(fastrpc.QueueTimeout, s.responseTimeout.Microseconds()))
	if s.opts.OpPoll || poll {
		timeout = 0
	}
	start := time.Now()
	for s.rspSeq < s.reqSeq {
		var buf fastrpc.QueueBuffer
		n, l, err := s.lib.Read(s.queue, &buf, msg, timeout)
		if fe, ok := err.(fastrpc.Error); ok && (fe == fastrpc.EExpired || fe == fastrpc.EWouldBlock) {
			if poll {
				return nil
			}
			if time.Since(start) > s.responseTimeout {
				return s.broken(fmt.Errorf("%s: no answer to batch %d in %v", s.name, s.rspSeq+1, s.responseTimeout))
			}
			continue
		}
		if err != nil {
			return s.broken(fmt.Errorf("%s: dspqueue_read: %w", s.name, err))
		}
		if int(l) != len(msg) || n != 1 {
			return s.broken(fmt.Errorf("%s: bad answer: %d bytes, %d buffers (want %d and 1)", s.name, l, n, len(msg)))
		}
		want := s.rspSeq + 1
		if rsp.ID != uint32(want) || (s.proto == htp.ProtocolFence && rsp.Seq != want) {
			return s.broken(fmt.Errorf("%s: answer for batch %d (seq %d), want %d", s.name, rsp.ID, rsp.Seq, want))
		}
		s.rspSeq = want
		if st := htp.Status(rsp.Status); st.Failed() {
			de := &DSPError{Device: s.name, Batch: want, Status: st}
			if s.perCall {
				return de
			}
			return s.broken(de)
		}
		if s.opts.Profile != 0 {
			s.dumpProfile(&rsp.OpBatchRsp, &buf)
		}
		start = time.Now()
		if !all {
			break
		}
	}
	return nil
}

// dumpProfile logs the DSP's timing of a batch and of each op, with the
// PMU counters (PROFILE=2) and the trace events (PROFILE=3), at info
// level whenever profiling is on: upstream prints them for any PROFILE
// (ggml's default logger shows its debug lines), not only with VERBOSE.
func (s *session) dumpProfile(rsp *htp.OpBatchRsp, buf *fastrpc.QueueBuffer) {
	off := uint64(buf.Offset) + uint64(int(rsp.NBufs)*sizeBuf+int(rsp.NTensors)*sizeTensor+int(rsp.NOps)*s.proto.OpDescSize())
	nTr := uint64(s.opq.nTraces)
	if rsp.NOps == 0 || off+uint64(int(rsp.NOps)*sizeProf)+(htp.MaxNThreads+1)*nTr*uint64(sizeTrace) > s.opq.blk.size {
		return
	}
	cycles := rsp.CyclesStop - rsp.CyclesStart
	slog.Info("hexagon: profile-op OPBATCH", "device", s.name, "batch", rsp.ID, "ops", rsp.NOps, "usecs", rsp.Usecs,
		"cycles", cycles, "mhz", mhz(cycles, rsp.Usecs), "trace_counts", rsp.NTraces)
	pd := unsafe.Slice((*htp.ProfDesc)(unsafe.Pointer(&s.opq.blk.mem[off])), rsp.NOps)
	for _, d := range pd {
		c := d.CyclesStop - d.CyclesStart
		args := []any{"device", s.name, "op", htp.Op(d.Opcode), "usecs", d.Usecs, "cycles", c, "start", d.CyclesStart,
			"mhz", mhz(uint64(c), d.Usecs)}
		if s.opts.Profile == htp.ProfPMU {
			args = append(args, "pmu", d.PMU)
		}
		slog.Info("hexagon: profile-op", args...)
	}
	if s.opts.Profile != htp.ProfTrace || nTr == 0 {
		return
	}
	off += uint64(int(rsp.NOps) * sizeProf)
	ev := unsafe.Slice((*htp.TraceDesc)(unsafe.Pointer(&s.opq.blk.mem[off])), (htp.MaxNThreads+1)*nTr)
	for th, n := range rsp.NTraces {
		for _, e := range ev[uint64(th)*nTr : uint64(th)*nTr+min(uint64(n), nTr)] {
			edge := "start"
			if e.Info&0x8000 != 0 {
				edge = "stop"
			}
			slog.Info("hexagon: trace-evt", "device", s.name, "event", htp.TraceEventName(e.ID), "thread", th,
				"info", e.Info&0x7fff, "edge", edge, "cycles", e.Cycles)
		}
	}
}

// mhz is the clock a run of cycles in usecs implies (0 for no time).
func mhz(cycles uint64, usecs uint32) float64 {
	if usecs == 0 {
		return 0
	}
	return float64(cycles) / float64(usecs)
}

// enqueue adds node to the batch, flushing first when it does not fit
// (ggml_hexagon_session::enqueue_op).
func (s *session) enqueue(n *opNode) error {
	if s.err != nil {
		return s.err
	}
	for _, ts := range [][]*graph.Tensor{n.inputs[:], n.outputs[:]} {
		for _, t := range ts {
			if t == nil {
				continue
			}
			x, err := extraOf(t)
			if err != nil {
				return err
			}
			if err := s.ensureMapped(x.blk, inWeights(t)); err != nil {
				return s.broken(err)
			}
		}
	}
	ok, err := s.batch.fits(n)
	if err != nil {
		return err
	}
	if !ok || s.batch.full() {
		if err := s.flushBatch(); err != nil {
			return err
		}
		if ok, err = s.batch.fits(n); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("hexagon: %s: %s does not fit an empty batch (buffers, tensors or vmem %d)", s.name, n.node, s.batch.vmemMax)
		}
	}
	if s.batch.empty() && len(s.members()) > 1 {
		// A group's batch starts with MDEV_GROUP (upstream's start_batch).
		if err := s.batch.add(s.mdevNode()); err != nil {
			return err
		}
		if ok, err := s.batch.fits(n); err != nil || !ok {
			return errors.Join(err, fmt.Errorf("hexagon: %s: %s does not fit a group batch", s.name, n.node))
		}
	}
	return s.batch.add(n)
}

// sync sends the batch and waits for every answer.
func (s *session) sync() error {
	if err := s.flushBatch(); err != nil {
		return err
	}
	if err := s.flushPending(true); err != nil {
		return err
	}
	return s.err
}
