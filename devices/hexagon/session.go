package hexagon

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unsafe"

	"github.com/ggml-go/ggml/devices/hexagon/internal/fastrpc"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
)

// SessionError is a session that could not be opened: the device, the
// bring-up step that failed, and the error (a fastrpc.Error carrying the
// code, its name and what it usually means).
type SessionError struct {
	Device string
	Step   string
	Err    error
}

// Error names the device, the step and the cause.
func (e *SessionError) Error() string {
	return fmt.Sprintf("hexagon: %s: session open failed at %s: %v", e.Device, e.Step, e.Err)
}

// Unwrap gives the cause (a fastrpc.Error for a FastRPC code).
func (e *SessionError) Unwrap() error { return e.Err }

// ErrSession marks a session a DSP error or a queue failure has broken:
// every later compute and synchronize returns it (wrapped with the first
// failure) instead of hanging.
var ErrSession = errors.New("hexagon: session failed")

// DSPError is a batch the DSP answered with a failure status.
type DSPError struct {
	Device string
	Batch  uint64
	Status htp.Status
}

// Error names the device, the batch and the status.
func (e *DSPError) Error() string {
	return fmt.Sprintf("hexagon: %s: the DSP failed batch %d: %s", e.Device, e.Batch, e.Status)
}

// domain is where a session lives: a physical NSP's id and name.
type domain struct {
	id   uint32
	name string
}

// session is one FastRPC session on an NSP with its htp_iface handle, its
// dspqueue and the op queue's shared memory (ggml_hexagon_session). A
// group device has one session per core; the first drives the others
// (group).
type session struct {
	lib  *fastrpc.Lib
	opts Options
	arch int
	name string
	cfg  DeviceConfig
	dom  domain

	domainID, sessionID uint32
	handle              uint64
	queue               fastrpc.Queue
	queueID             uint64
	nThreads, nHMX      uint32
	vtcm, maxVmem       uint64

	// What bring-up achieved, undone in reverse by release.
	reserved, opened, queued, etm, started, profiling bool

	opq   *opQueue
	batch *opBatch
	proto htp.Protocol
	cache nodeCache

	// fence is the session's fence buffer; fenceSeq its last fence value;
	// mdevSlot the first of a group leader's barrier slots (one per
	// core); cpyFence the slot per source session that copies into this
	// one across cores. ProtocolFence; guarded by mu (fenceSeq by work).
	fence    *fenceBuffer
	fenceSeq uint32
	mdevSlot int
	cpyFence map[*session]int
	// peers are sessions whose queued work this one's batches wait for:
	// they are sent first (upstream's flush_peers). Guarded by mu.
	peers map[*session]bool
	// self is s alone, all s and its group (the sessions of a group
	// device's batches).
	self [1]*session
	all  []*session

	// work serializes the session's queue: the backend, events and
	// copies from other sessions use it.
	work     sync.Mutex
	mu       sync.Mutex
	mappings map[*block]bool
	reqSeq   uint64
	rspSeq   uint64
	err      error // sticky: the session is broken
	// group are the other cores' sessions of a group device; index is
	// this session's place in its group.
	group []*session
	index uint32

	// responseTimeout bounds the wait for one batch's answer.
	responseTimeout time.Duration
	// perCall makes a DSP failure status an error of the call that
	// reads it only, not a mark on the session (the dsp_errors=per_call
	// device parameter).
	perCall bool
	// gen counts reopenings; a backend started before the last one
	// keeps reporting the failure that caused it.
	gen uint64
}

// openSession brings a session up in upstream's order; on failure it
// undoes the steps that succeeded and returns a *SessionError.
func openSession(lib *fastrpc.Lib, opts Options, arch int, cfg DeviceConfig, dom domain) (*session, error) {
	s := &session{lib: lib, opts: opts, arch: arch, name: cfg.Name, cfg: cfg, dom: dom, domainID: dom.id,
		mappings: map[*block]bool{}, responseTimeout: opts.ResponseTimeout, proto: opts.Protocol,
		cpyFence: map[*session]int{}, peers: map[*session]bool{}}
	s.self[0] = s
	s.all = s.self[:]
	// Upstream starts from its address's low bits, so two sessions' values
	// differ; any start does, the wrap skips 0.
	s.fenceSeq = uint32(uintptr(unsafe.Pointer(s))>>4) & 0xffff
	if s.responseTimeout <= 0 {
		s.responseTimeout = time.Minute
	}
	if err := s.allocate(); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

func (s *session) fail(step string, err error) error {
	return &SessionError{Device: s.name, Step: step, Err: err}
}

func (s *session) allocate() error {
	if s.cfg.Virtual > 0 {
		id, eff, err := s.lib.ReserveSession(s.dom.name, s.name, uint32(s.cfg.Virtual))
		if err != nil {
			return s.fail(fmt.Sprintf("reserving virtual session %d on %s (FASTRPC_RESERVE_NEW_SESSION)", s.cfg.Virtual, s.dom.name), err)
		}
		s.sessionID, s.domainID, s.reserved = id, eff, true
	} else if eff, err := s.lib.EffectiveDomain(s.dom.name); err == nil {
		s.domainID = eff
	} else {
		s.debug("FASTRPC_GET_EFFECTIVE_DOMAIN_ID failed, keeping the domain id", "domain", s.domainID, "err", err)
	}
	if err := s.lib.EnableUnsignedModules(s.domainID); err != nil {
		return s.fail("enabling unsigned modules (DSPRPC_CONTROL_UNSIGNED_MODULE)", err)
	}
	module := htp.SkelURI(s.arch)
	uri, err := s.lib.SessionURI(s.dom.name, s.sessionID, module)
	if err != nil {
		uri = htp.SessionURI(s.arch, s.dom.name, s.sessionID)
		slog.Warn("hexagon: FASTRPC_GET_URI failed, using the single-session URI", "device", s.name, "uri", uri, "err", err)
	}
	if s.handle, err = s.lib.OpenHandle(uri); err != nil {
		return s.fail("opening "+uri, err)
	}
	s.opened = true
	s.hwinfo()
	if err := s.lib.SetLatency(s.handle); err != nil {
		slog.Warn("hexagon: no FastRPC QoS latency mode", "device", s.name, "err", err)
	}
	qs := uint32(s.opts.OpQueue * 2)
	if s.queue, err = s.lib.CreateQueue(s.domainID, uint32(unsafe.Sizeof(htp.OpBatchReq{}))*qs+1024,
		uint32(unsafe.Sizeof(htp.OpBatchRsp{}))*qs+1024); err != nil {
		return s.fail("creating the dspqueue", err)
	}
	s.queued = true
	if s.queueID, err = s.lib.ExportQueue(s.queue); err != nil {
		return s.fail("exporting the dspqueue", err)
	}
	if s.opts.ETM {
		if _, err := s.lib.Invoke(s.handle, htp.EtmCall(true)); err != nil {
			slog.Warn("hexagon: ETM tracing not enabled", "device", s.name, "err", err)
		} else {
			s.etm = true
		}
	}
	if s.opq, err = newOpQueue(s); err != nil {
		return s.fail("allocating the op queue's shared memory", err)
	}
	f, err := newFenceBuffer(s)
	if err != nil {
		return s.fail("allocating the fence buffer", err)
	}
	s.mu.Lock()
	s.fence = f
	s.mu.Unlock()
	if n := 1 + len(s.cfg.Group); n > 1 {
		if s.mdevSlot, err = s.allocFence(n); err != nil {
			return s.fail("allocating the group's fence slots", err)
		}
	}
	vmem := uint64(s.opts.Vmem)
	if vmem == 0 {
		vmem = s.measureVmem()
		slog.Info("hexagon: measured max vmem", "device", s.name, "bytes", vmem)
	}
	s.maxVmem = vmem
	if shm := s.opq.blk.size; vmem > shm {
		s.maxVmem = vmem - shm
	}
	s.batch = newOpBatch(s)
	// As upstream: the resolved threads, but HMX and VTCM as the options
	// say (the DSP resolves 0 VTCM to its own), and the power mode.
	start := htp.StartArgs{SessID: s.sessionID, QueueID: s.queueID, NHVX: s.nThreads, NHMX: uint32(s.opts.NHMX),
		VTCMSize: s.opts.VTCMSize, MaxVmem: s.maxVmem, PowerMode: uint32(s.opts.PowerMode)}
	if _, err := s.lib.Invoke(s.handle, htp.StartCall(s.proto, start)); err != nil {
		return s.fail("starting the DSP side (htp_iface_start)", err)
	}
	s.started = true
	if s.opts.Profile != 0 {
		if _, err := s.lib.Invoke(s.handle, htp.ProfilerCall(uint32(s.opts.Profile), s.opts.PMUEvents)); err != nil {
			slog.Warn("hexagon: profiling not enabled", "device", s.name, "err", err)
		} else {
			s.profiling = true
		}
	}
	s.debug("session open", "session", s.sessionID, "domain", s.domainID, "uri", uri, "threads", s.nThreads,
		"hmx", s.nHMX, "vtcm", s.vtcm, "vmem", s.maxVmem, "protocol", s.proto)
	return nil
}

// hwinfo resolves threads, HMX and VTCM from the DSP's answer and the
// options. When the call fails, or answers what no DSP does (no threads or
// more than 64, no VTCM or more than 1 GiB, more than 16 HMX units: a DSP
// library built from another IDL answers garbage instead of failing, since
// method indices and packing are positional), it warns and takes
// upstream's defaults: NHVX threads or 8, one HMX unit when NHMX is set,
// VTCM_SIZE or 8 MiB.
func (s *session) hwinfo() {
	out, err := s.lib.Invoke(s.handle, htp.HwinfoCall())
	var hw htp.HWInfo
	if err == nil {
		hw, err = htp.DecodeHwinfo(out)
	}
	if err == nil && (hw.NThreads == 0 || hw.NThreads > 64 || hw.VTCMSize == 0 || hw.VTCMSize > GiB || hw.NHMX > 16) {
		err = fmt.Errorf("implausible answer (%d threads, %d HMX, %d bytes of VTCM): the DSP library's interface may not match %s",
			hw.NThreads, hw.NHMX, hw.VTCMSize, s.proto)
	}
	if err != nil {
		slog.Warn("hexagon: hwinfo failed, using defaults", "device", s.name, "err", err)
		s.nThreads = min(8, htp.MaxNThreads)
		if s.opts.NHVX > 0 {
			s.nThreads = min(uint32(s.opts.NHVX), htp.MaxNThreads)
		}
		s.nHMX = 0
		if s.opts.NHMX != 0 {
			s.nHMX = 1
		}
		s.vtcm = 8 * MiB
		if s.opts.VTCMSize > 0 {
			s.vtcm = s.opts.VTCMSize
		}
		return
	}
	s.nThreads = min(hw.NThreads, htp.MaxNThreads)
	if s.opts.NHVX > 0 {
		s.nThreads = min(s.nThreads, uint32(s.opts.NHVX))
	}
	if s.nThreads == 0 {
		s.nThreads = 1
	}
	s.nHMX = 0
	if s.opts.NHMX != 0 {
		s.nHMX = hw.NHMX
	}
	s.vtcm = hw.VTCMSize
	if s.opts.VTCMSize > 0 {
		if s.opts.VTCMSize > hw.VTCMSize {
			slog.Warn("hexagon: VTCM override exceeds the hardware's", "device", s.name, "override", s.opts.VTCMSize, "hw", hw.VTCMSize)
		}
		s.vtcm = s.opts.VTCMSize
	}
}

// measureVmem maps pinned blocks (3 x 1 GiB, then 256 MiB steps) until
// one fails, as upstream, and backs off one step.
func (s *session) measureVmem() uint64 {
	var blocks []*block
	var vmem uint64
	step := uint64(256 * MiB)
	for i := 0; ; i++ {
		size := step
		if i < 3 {
			size = GiB
		}
		b, err := allocBlock(s.lib, blockSize(size, true, false), true)
		if err != nil {
			break
		}
		blocks = append(blocks, b)
		if b.mapInto(s, false) != nil {
			break
		}
		vmem += size
	}
	for _, b := range blocks {
		_ = b.free()
	}
	if vmem < step {
		return 0
	}
	return vmem - step
}

// release undoes every bring-up step that succeeded, in upstream's order:
// group members, stop, the batch and op queue memory, other mappings, ETM
// and profiler off, the queue, the handle.
func (s *session) release() error {
	var errs []error
	for _, g := range s.group {
		errs = append(errs, g.release())
	}
	s.group = nil
	if s.started {
		if _, err := s.lib.Invoke(s.handle, htp.StopCall()); err != nil {
			errs = append(errs, fmt.Errorf("hexagon: %s: htp_iface_stop: %w", s.name, err))
		}
		s.started = false
	}
	if s.opq != nil {
		errs = append(errs, s.opq.blk.free())
		s.opq = nil
	}
	// The fence buffer (and with it the copy and group slots), unmapped
	// from every session it was cloned into, as upstream's unclone.
	s.mu.Lock()
	f := s.fence
	s.fence = nil
	clear(s.cpyFence)
	clear(s.peers)
	s.mu.Unlock()
	if f != nil {
		errs = append(errs, f.blk.free())
	}
	s.mu.Lock()
	var maps []*block
	for b := range s.mappings {
		maps = append(maps, b)
	}
	s.mu.Unlock()
	for _, b := range maps {
		errs = append(errs, b.unmapFrom(s))
	}
	if s.etm {
		if _, err := s.lib.Invoke(s.handle, htp.EtmCall(false)); err != nil {
			slog.Warn("hexagon: disabling ETM", "device", s.name, "err", err)
		}
		s.etm = false
	}
	if s.profiling {
		// Upstream's order: after stop, where a DSP may refuse it.
		if _, err := s.lib.Invoke(s.handle, htp.ProfilerCall(0, [htp.ProfPMUNCnt]uint32{})); err != nil {
			s.debug("disabling the profiler", "err", err)
		}
		s.profiling = false
	}
	if s.queued {
		if err := s.lib.CloseQueue(s.queue); err != nil {
			errs = append(errs, fmt.Errorf("hexagon: %s: dspqueue_close: %w", s.name, err))
		}
		s.queued = false
	}
	if s.opened {
		if err := s.lib.CloseHandle(s.handle); err != nil {
			errs = append(errs, fmt.Errorf("hexagon: %s: closing the session: %w", s.name, err))
		}
		s.opened = false
	}
	return errors.Join(errs...)
}

// reopen replaces a broken session by a new one on the same domain (and
// its group's), for a new backend of the device: the old one is released,
// the bring-up runs again, buffers are mapped again when next used.
func (s *session) reopen() error {
	s.work.Lock()
	defer s.work.Unlock()
	if s.err == nil {
		return nil
	}
	group := s.group
	s.cache.reset()
	if err := s.release(); err != nil {
		slog.Warn("hexagon: releasing a failed session", "device", s.name, "err", err)
	}
	for _, x := range append([]*session{s}, group...) {
		x.domainID, x.sessionID, x.reqSeq, x.rspSeq, x.err = x.dom.id, 0, 0, 0, nil
		if err := x.allocate(); err != nil {
			_ = s.release()
			for _, g := range group {
				_ = g.release()
			}
			s.err = fmt.Errorf("%w: %w", ErrSession, err)
			return err
		}
	}
	s.group = group
	if err := s.linkGroup(); err != nil {
		s.err = fmt.Errorf("%w: %w", ErrSession, err)
		return err
	}
	s.gen++
	return nil
}

// linkGroup makes s's group one device: the sessions its batches go to,
// and the group's barrier slots (in s's fence buffer) mapped into every
// member.
func (s *session) linkGroup() error {
	s.all = s.self[:]
	if len(s.group) == 0 {
		return nil
	}
	s.all = append([]*session{s}, s.group...)
	for _, g := range s.group {
		if err := s.fence.blk.mapInto(g, false); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) addMapping(b *block) {
	s.mu.Lock()
	s.mappings[b] = true
	s.mu.Unlock()
}

func (s *session) dropMapping(b *block) {
	s.mu.Lock()
	delete(s.mappings, b)
	s.mu.Unlock()
}

func (s *session) debug(msg string, args ...any) {
	if s.opts.Verbose > 0 {
		slog.Debug("hexagon: "+msg, append([]any{"device", s.name}, args...)...)
	}
}

// broken marks the session failed with err (the first failure stays).
func (s *session) broken(err error) error {
	if s.err == nil {
		s.err = fmt.Errorf("%w: %w", ErrSession, err)
	}
	return s.err
}

// ensureMapped maps b into this session and every group member.
func (s *session) ensureMapped(b *block, weight bool) error {
	ext := s.opts.DMA64 == 1 && weight
	if err := b.mapInto(s, ext); err != nil {
		return err
	}
	for _, g := range s.group {
		if err := b.mapInto(g, ext); err != nil {
			return err
		}
	}
	return nil
}
