package hexagon

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"
	"unsafe"

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
	inputs  [htp.MaxInputs]*graph.Tensor
	outputs [htp.MaxOutputs]*graph.Tensor
	params  [htp.MaxParams]int32
	kparams [htp.MaxKernParams]int32
}

var (
	sizeBuf    = int(unsafe.Sizeof(htp.BufDesc{}))
	sizeTensor = int(unsafe.Sizeof(htp.Tensor{}))
	sizeOp     = int(unsafe.Sizeof(htp.OpDesc{}))
	sizeProf   = int(unsafe.Sizeof(htp.ProfDesc{}))
	sizeTrace  = int(unsafe.Sizeof(htp.TraceDesc{}))
	sizeReq    = int(unsafe.Sizeof(htp.OpBatchReq{}))
	sizeRsp    = int(unsafe.Sizeof(htp.OpBatchRsp{}))
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
	ops    []htp.OpDesc
	nodes  []*opNode
	tMap   map[*graph.Tensor]int
	dMap   map[dataKey][]int
	vmem   uint64

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
	b.ops = make([]htp.OpDesc, 0, n)
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
func describe(t *graph.Tensor, x *extra) (htp.Tensor, error) {
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
	h.Flags = x.flags & htp.TensorWireMask
	return h, nil
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
	h, err := describe(t, x)
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
	var seen [htp.MaxInputs + htp.MaxOutputs]int32
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
	o := htp.OpDesc{Opcode: uint32(n.op), Params: n.params, KernelParams: n.kparams}
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
// tensors' buffer indices, as the seed does before every flush.
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
	slot := sizeBuf*htp.MaxBufs + sizeTensor*maxTensors(nOps) + (sizeOp+sizeProf)*nOps + tr
	slot = (slot + 127) &^ 127
	depth := uint64(s.opts.OpQueue)
	blk, err := allocBlock(s.lib, blockSize(uint64(slot)*depth, true, false), true)
	if err != nil {
		return nil, err
	}
	q := &opQueue{blk: blk, slot: uint64(slot), depth: depth}
	if s.opts.Profile == htp.ProfTrace {
		q.nTraces = s.opts.OpTrace
	}
	if err := blk.mapInto(s, false); err != nil {
		_ = blk.free()
		return nil, err
	}
	return q, nil
}

// push writes batch seq into its slot and returns the dspqueue buffer and
// the request.
func (q *opQueue) push(b *opBatch, seq uint64) (fastrpc.QueueBuffer, htp.OpBatchReq) {
	off := ((seq - 1) % q.depth) * q.slot
	mem := q.blk.mem[off : off+q.slot]
	n := 0
	n += copy(mem[n:], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.bufs))), len(b.bufs)*sizeBuf))
	n += copy(mem[n:], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.tens))), len(b.tens)*sizeTensor))
	n += copy(mem[n:], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.ops))), len(b.ops)*sizeOp))
	n += len(b.ops)*sizeProf + (htp.MaxNThreads+1)*q.nTraces*sizeTrace
	req := htp.OpBatchReq{ID: uint32(seq), NBufs: uint32(len(b.bufs)), NTensors: uint32(len(b.tens)),
		NOps: uint32(len(b.ops)), NTraces: uint32(q.nTraces)}
	buf := fastrpc.QueueBuffer{FD: uint32(q.blk.fd), Size: uint32(n), Offset: uint32(off),
		Flags: fastrpc.BufferFlagFlushSender | fastrpc.BufferFlagInvalidateRecipient, Ptr: uint64(q.blk.base) + off}
	return buf, req
}

// flushBatch sends the collected batch (ggml_hexagon_session::flush_batch),
// first waiting for an answer when depth batches are in flight.
func (s *session) flushBatch() error {
	if s.err != nil {
		return s.err
	}
	b := s.batch
	if b.empty() {
		return nil
	}
	b.sortBuffers()
	seq := s.reqSeq + 1
	if seq-s.rspSeq > s.opq.depth {
		if err := s.flushPending(false); err != nil {
			return err
		}
	}
	buf, req := s.opq.push(b, seq)
	s.debug("batch", "seq", seq, "bufs", req.NBufs, "tensors", req.NTensors, "ops", req.NOps, "bytes", buf.Size)
	msg := (*[24]byte)(unsafe.Pointer(&req))
	if err := s.lib.Write(s.queue, &buf, msg[:], fastrpc.QueueTimeout); err != nil {
		b.reset()
		return s.broken(fmt.Errorf("%s: dspqueue_write of batch %d: %w", s.name, seq, err))
	}
	s.reqSeq = seq
	b.reset()
	return nil
}

// flushPending reads answers until every batch sent is answered (all) or
// one is; a failure status marks the session, as a read error or a
// malformed answer does.
func (s *session) flushPending(all bool) error {
	var rsp htp.OpBatchRsp
	msg := unsafe.Slice((*byte)(unsafe.Pointer(&rsp)), sizeRsp)
	timeout := uint32(min(fastrpc.QueueTimeout, s.responseTimeout.Microseconds()))
	if s.opts.OpPoll {
		timeout = 0
	}
	start := time.Now()
	for s.rspSeq < s.reqSeq {
		var buf fastrpc.QueueBuffer
		n, l, err := s.lib.Read(s.queue, &buf, msg, timeout)
		if fe, ok := err.(fastrpc.Error); ok && (fe == fastrpc.EExpired || fe == fastrpc.EWouldBlock) {
			if time.Since(start) > s.responseTimeout {
				return s.broken(fmt.Errorf("%s: no answer to batch %d in %v", s.name, s.rspSeq+1, s.responseTimeout))
			}
			continue
		}
		if err != nil {
			return s.broken(fmt.Errorf("%s: dspqueue_read: %w", s.name, err))
		}
		if int(l) != sizeRsp || n != 1 {
			return s.broken(fmt.Errorf("%s: bad answer: %d bytes, %d buffers (want %d and 1)", s.name, l, n, sizeRsp))
		}
		want := s.rspSeq + 1
		if rsp.ID != uint32(want) {
			return s.broken(fmt.Errorf("%s: answer for batch %d, want %d", s.name, rsp.ID, uint32(want)))
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
			s.dumpProfile(&rsp, &buf)
		}
		start = time.Now()
		if !all {
			break
		}
	}
	return nil
}

// dumpProfile logs the DSP's timing of a batch and of each op.
func (s *session) dumpProfile(rsp *htp.OpBatchRsp, buf *fastrpc.QueueBuffer) {
	off := uint64(buf.Offset) + uint64(int(rsp.NBufs)*sizeBuf+int(rsp.NTensors)*sizeTensor+int(rsp.NOps)*sizeOp)
	if off+uint64(int(rsp.NOps)*sizeProf) > s.opq.blk.size {
		return
	}
	p := s.opq.blk.mem[off:]
	s.debug("profile", "batch", rsp.ID, "ops", rsp.NOps, "usecs", rsp.Usecs, "cycles", rsp.CyclesStop-rsp.CyclesStart)
	for i := range int(rsp.NOps) {
		d := p[i*sizeProf:]
		s.debug("profile-op", "opcode", htp.Op(binary.LittleEndian.Uint32(d)),
			"usecs", binary.LittleEndian.Uint32(d[4:]), "cycles", binary.LittleEndian.Uint32(d[12:])-binary.LittleEndian.Uint32(d[8:]))
	}
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
			if err := s.ensureMapped(x.blk, x.flags&htp.TensorWeight != 0); err != nil {
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
