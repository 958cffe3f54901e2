package rpc

import (
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/bits"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Limits bound what one connection, and all of them together, may ask of
// a server. Zero fields take the defaults.
type Limits struct {
	// Memory is the most bytes of buffers one connection holds at once
	// (default 16 GiB).
	Memory uint64
	// ServerMemory is the most bytes of buffers all connections together
	// hold at once (default: the sum of the total memory the served
	// devices report, the machine's RAM for the CPU), so that several
	// clients cannot together take more than one may.
	ServerMemory uint64
	// Connections is the most connections served at once (default 64);
	// one more is closed as it is accepted, with a log line. It bounds
	// the request bodies read at once (a graph up to Nodes nodes each).
	Connections int
	// Nodes is the most nodes a graph may have (default 65536, eight times
	// what llama.cpp builds for the largest models).
	Nodes uint32
	// Buffers is the most buffers one connection holds (default 4096).
	Buffers int
}

func (l Limits) withDefaults() Limits {
	if l.Memory == 0 {
		l.Memory = 16 << 30
	}
	if l.Nodes == 0 {
		l.Nodes = 1 << 16
	}
	if l.Buffers == 0 {
		l.Buffers = 4096
	}
	if l.Connections == 0 {
		l.Connections = 64
	}
	return l
}

// Server serves devices to ggml RPC clients, ggml's own and ours. It
// trusts nothing a client sends: every size, offset, shape, handle and
// graph is checked against what that connection allocated, and a request
// that fails a check closes the connection (the protocol has no error
// replies) with a log line, while the server goes on serving the others.
//
// Like ggml's, the protocol has no authentication: anyone who reaches the
// port can use the devices and read what they hold. Token and TLS are our
// additions, for our own client only; a stock ggml client connects only
// when both are off.
type Server struct {
	// Devices are served as devices 0, 1, ... in this order.
	Devices []backend.Device
	// Threads is the thread count of each backend started (0: the
	// device's default).
	Threads int
	// CacheDir, when set, keeps large weights by hash (ggml's -c), so
	// that a client loading the same model again skips the upload.
	CacheDir string
	// Token, when set, must be sent by the client after HELLO.
	Token string
	// TLS, when set, serves TLS instead of plain TCP.
	TLS *tls.Config
	// Limits bound each connection.
	Limits Limits
	// Log receives one line per connection opened and closed and per
	// request refused; nil is backend.Logger().
	Log *slog.Logger

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
	closed bool

	// memMu guards the bytes all connections hold and their bound (set
	// on the first allocation).
	memMu    sync.Mutex
	memUsed  uint64
	memLimit uint64
}

// reserve counts n more bytes against the server-wide limit, or reports
// why it cannot.
func (s *Server) reserve(n uint64) error {
	s.memMu.Lock()
	defer s.memMu.Unlock()
	if s.memLimit == 0 {
		s.memLimit = s.Limits.ServerMemory
		if s.memLimit == 0 {
			for _, d := range s.Devices {
				_, total := d.Memory()
				s.memLimit += total
			}
		}
		if s.memLimit == 0 { // no device knows its memory: no bound beyond each connection's
			s.memLimit = math.MaxUint64
		}
	}
	if n > s.memLimit-s.memUsed {
		return fmt.Errorf("the server's connections hold %d bytes, the server-wide limit is %d", s.memUsed, s.memLimit)
	}
	s.memUsed += n
	return nil
}

// unreserve returns n bytes reserve counted.
func (s *Server) unreserve(n uint64) {
	s.memMu.Lock()
	s.memUsed -= n
	s.memMu.Unlock()
}

// handles numbers buffers across every connection of the process, so that
// one connection's handle is never valid in another.
var handles atomic.Uint64

// bufferSpacing separates the addresses the server hands out for its
// buffers: each buffer lives at its own multiple, far from the others.
const bufferSpacing = 1 << 40

// Serve accepts connections on ln until Close, each served on a goroutine
// of its own.
func (s *Server) Serve(ln net.Listener) error {
	if len(s.Devices) == 0 {
		return errors.New("rpc: server: no devices to serve")
	}
	if s.TLS != nil {
		ln = tls.NewListener(ln, s.TLS)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.ln = ln
	s.conns = map[net.Conn]struct{}{}
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			return fmt.Errorf("rpc: server: accepting: %w", err)
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			return nil
		}
		if n := s.Limits.withDefaults().Connections; len(s.conns) >= n {
			s.mu.Unlock()
			s.log().Warn("rpc: connection refused", "peer", nc.RemoteAddr().String(), "why", fmt.Sprintf("%d connections are served, the limit", n))
			_ = nc.Close()
			continue
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
			s.mu.Lock()
			delete(s.conns, nc)
			s.mu.Unlock()
		}()
	}
}

// Close stops accepting, closes every connection and waits for their
// goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	if s.ln != nil {
		_ = s.ln.Close()
	}
	for nc := range s.conns {
		_ = nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func (s *Server) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return backend.Logger()
}

// session is one connection's state: the buffers it allocated and the
// backends it started.
type session struct {
	srv      *Server
	nc       net.Conn
	lim      Limits
	bufs     map[uint64]*sbuf
	used     uint64
	backends []backend.Backend
	graphs   [][]byte // the last graph computed on each device, for GRAPH_RECOMPUTE
}

// sbuf is a buffer a client allocated: the device's buffer, its memory,
// and the address range the client knows it by.
type sbuf struct {
	dev  int
	buf  buffer.Buffer
	st   buffer.Storage
	base uint64
	size uint64
}

// errClient is a request that breaks the protocol or the server's rules;
// the connection is closed.
type errClient struct{ msg string }

func (e *errClient) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &errClient{fmt.Sprintf(format, args...)} }

func (s *Server) serveConn(nc net.Conn) {
	ss := &session{srv: s, nc: nc, lim: s.Limits.withDefaults(), bufs: map[uint64]*sbuf{},
		backends: make([]backend.Backend, len(s.Devices)), graphs: make([][]byte, len(s.Devices))}
	peer := nc.RemoteAddr().String()
	s.log().Info("rpc: client connected", "peer", peer)
	err := ss.run()
	ss.release()
	_ = nc.Close()
	switch {
	case err == nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
		s.log().Info("rpc: client disconnected", "peer", peer)
	default:
		s.log().Warn("rpc: connection closed", "peer", peer, "err", err)
	}
}

func (ss *session) release() {
	for _, b := range ss.bufs {
		_ = b.buf.Free()
		ss.srv.unreserve(b.size)
	}
	ss.bufs = nil
	for _, b := range ss.backends {
		if b != nil {
			_ = b.Close()
		}
	}
}

// run serves requests until the client leaves or breaks a rule. A panic
// in a device (a kernel meeting a shape no check foresaw) ends this
// connection only.
func (ss *session) run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rpc: server: a request panicked: %v", r)
		}
	}()
	cmd, size, err := ss.header()
	if err != nil {
		return err
	}
	if cmd != cmdHello || size != helloReqBytes {
		return refuse("the first request is %s of %d bytes, not HELLO of %d (a client of another protocol version?)", cmd, size, helloReqBytes)
	}
	if _, err := ss.fixed(size); err != nil {
		return err
	}
	rsp := make([]byte, helloRspBytes)
	rsp[0], rsp[1], rsp[2] = ProtoMajor, ProtoMinor, ProtoPatch
	if err := ss.reply(rsp); err != nil {
		return err
	}
	if tok := ss.srv.Token; tok != "" {
		cmd, size, err := ss.header()
		if err != nil {
			return err
		}
		if cmd != cmdAuth || size != uint64(len(tok)) {
			return refuse("no token after HELLO (this server needs -token)")
		}
		got, err := ss.fixed(size)
		if err != nil {
			return err
		}
		if subtle.ConstantTimeCompare(got, []byte(tok)) != 1 {
			return refuse("wrong token")
		}
	}
	for {
		cmd, size, err := ss.header()
		if err != nil {
			return err
		}
		if err := ss.dispatch(cmd, size); err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
	}
}

// header reads a request's command byte and size.
func (ss *session) header() (command, uint64, error) {
	var h [9]byte
	if _, err := io.ReadFull(ss.nc, h[:1]); err != nil {
		return 0, 0, err
	}
	if _, err := io.ReadFull(ss.nc, h[1:]); err != nil {
		return 0, 0, fmt.Errorf("reading a request's size: %w", err)
	}
	return command(h[0]), binary.LittleEndian.Uint64(h[1:]), nil
}

// fixed reads a request body of n bytes, n checked by the caller.
func (ss *session) fixed(n uint64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(ss.nc, b); err != nil {
		return nil, fmt.Errorf("reading a request of %d bytes: %w", n, err)
	}
	return b, nil
}

func (ss *session) reply(parts ...[]byte) error {
	var n uint64
	for _, p := range parts {
		n += uint64(len(p))
	}
	bufs := net.Buffers(append([][]byte{u64(n)}, parts...))
	_, err := bufs.WriteTo(ss.nc)
	return err
}

// requestSizes are the exact body sizes of the fixed-size requests.
var requestSizes = map[command]uint64{
	cmdAllocBuffer:     4 + 8,
	cmdGetAlignment:    4,
	cmdGetMaxSize:      4,
	cmdBufferGetBase:   8,
	cmdFreeBuffer:      8,
	cmdBufferClear:     9,
	cmdSetTensorHash:   tensorBytes + 16,
	cmdGetTensor:       tensorBytes + 16,
	cmdCopyTensor:      2 * tensorBytes,
	cmdGetDeviceMemory: 4,
	cmdInitTensor:      tensorBytes,
	cmdGetAllocSize:    4 + tensorBytes*(1+maxSrc),
	cmdDeviceCount:     0,
	cmdGraphRecompute:  4,
	cmdMemsetTensor:    tensorBytes + 17,
}

func (ss *session) dispatch(cmd command, size uint64) error {
	switch cmd {
	case cmdSetTensor:
		return ss.setTensor(size)
	case cmdGraphCompute:
		return ss.graphCompute(size)
	case cmdHello:
		return refuse("a second HELLO")
	}
	want, ok := requestSizes[cmd]
	if !ok {
		return refuse("unknown command %d", uint8(cmd))
	}
	if size != want {
		return refuse("%d bytes, want %d", size, want)
	}
	req, err := ss.fixed(size)
	if err != nil {
		return err
	}
	r := reader{b: req}
	switch cmd {
	case cmdDeviceCount:
		return ss.reply(u32(uint32(len(ss.srv.Devices))))
	case cmdAllocBuffer:
		return ss.allocBuffer(r.u32(), r.u64())
	case cmdGetAlignment, cmdGetMaxSize, cmdGetDeviceMemory:
		d, err := ss.device(r.u32())
		if err != nil {
			return err
		}
		switch cmd {
		case cmdGetAlignment:
			return ss.reply(u64(d.BufferType().Alignment()))
		case cmdGetMaxSize:
			return ss.reply(u64(d.BufferType().MaxSize()))
		}
		free, total := d.Memory()
		return ss.reply(u64(free), u64(total))
	case cmdBufferGetBase:
		b, err := ss.buffer(r.u64())
		if err != nil {
			return err
		}
		return ss.reply(u64(b.base))
	case cmdFreeBuffer:
		h := r.u64()
		b, err := ss.buffer(h)
		if err != nil {
			return err
		}
		delete(ss.bufs, h)
		ss.used -= b.size
		ss.srv.unreserve(b.size)
		// A stored graph may name the buffer; GRAPH_RECOMPUTE must not
		// find it.
		clear(ss.graphs)
		return b.buf.Free()
	case cmdBufferClear:
		b, err := ss.buffer(r.u64())
		if err != nil {
			return err
		}
		return b.buf.Clear(r.u8())
	case cmdMemsetTensor:
		w := getTensor(r.next(tensorBytes))
		off, n, v := r.u64(), r.u64(), r.u8()
		b, at, err := ss.region(w, off, n)
		if err != nil {
			return err
		}
		return b.fill(at, n, v)
	case cmdSetTensorHash:
		return ss.setTensorHash(getTensor(r.next(tensorBytes)), r.u64(), r.u64())
	case cmdGetTensor:
		w := getTensor(r.next(tensorBytes))
		off, n := r.u64(), r.u64()
		b, at, err := ss.region(w, off, n)
		if err != nil {
			return err
		}
		return ss.sendBytes(b, at, n)
	case cmdCopyTensor:
		return ss.copyTensor(getTensor(r.next(tensorBytes)), getTensor(r.next(tensorBytes)))
	case cmdInitTensor:
		// Our buffers initialize tensors as they are placed; the request
		// is checked like any other.
		_, _, err := ss.decode(getTensor(r.next(tensorBytes)))
		return err
	case cmdGetAllocSize:
		return ss.allocSize(r)
	case cmdGraphRecompute:
		dev := r.u32()
		if _, err := ss.device(dev); err != nil {
			return err
		}
		if ss.graphs[dev] == nil {
			return refuse("no graph computed on device %d to compute again", dev)
		}
		return ss.compute(ss.graphs[dev])
	}
	return refuse("unknown command %d", uint8(cmd))
}

func (ss *session) device(i uint32) (backend.Device, error) {
	if uint64(i) >= uint64(len(ss.srv.Devices)) {
		return nil, refuse("device %d: the server has %d", i, len(ss.srv.Devices))
	}
	return ss.srv.Devices[i], nil
}

func (ss *session) buffer(h uint64) (*sbuf, error) {
	b, ok := ss.bufs[h]
	if !ok {
		return nil, refuse("buffer %#x is not one this connection allocated", h)
	}
	return b, nil
}

// allocBuffer answers a handle of 0 (as ggml does when allocation fails)
// for what is over the limits or what the device cannot allocate.
func (ss *session) allocBuffer(dev uint32, size uint64) error {
	d, err := ss.device(dev)
	if err != nil {
		return err
	}
	bt := d.BufferType()
	fail := func(why string, args ...any) error {
		ss.srv.log().Warn("rpc: ALLOC_BUFFER refused", "peer", ss.nc.RemoteAddr().String(), "size", size, "why", fmt.Sprintf(why, args...))
		return ss.reply(u64(0), u64(0))
	}
	switch {
	case bt == nil:
		return fail("device %s is unavailable", d.Name())
	case size > bt.MaxSize():
		return fail("over the device's largest buffer, %d bytes", bt.MaxSize())
	case size >= bufferSpacing || size > ss.lim.Memory-ss.used:
		return fail("this connection holds %d bytes, the limit is %d", ss.used, ss.lim.Memory)
	case len(ss.bufs) >= ss.lim.Buffers:
		return fail("this connection holds %d buffers, the limit", len(ss.bufs))
	}
	if err := ss.srv.reserve(size); err != nil {
		return fail("%v", err)
	}
	buf, err := bt.Alloc(max(size, bt.Alignment()))
	if err != nil {
		ss.srv.unreserve(size)
		return fail("%v", err)
	}
	st, err := storageOf(buf)
	if err != nil {
		_ = buf.Free()
		ss.srv.unreserve(size)
		return fail("%v", err)
	}
	h := handles.Add(1)
	b := &sbuf{dev: int(dev), buf: buf, st: st, base: h * bufferSpacing, size: size}
	ss.bufs[h] = b
	ss.used += size
	return ss.reply(u64(h), u64(size))
}

// storageOf finds a buffer's memory by placing a one-byte tensor in it.
func storageOf(buf buffer.Buffer) (buffer.Storage, error) {
	t := &graph.Tensor{Type: quant.I8, Ne: [4]int64{1, 1, 1, 1}, Nb: [4]uint64{1, 1, 1, 1}}
	if err := buf.AllocTensor(t, 0); err != nil {
		return nil, err
	}
	st, _, err := buffer.Locate(t)
	if rerr := buf.Reset(); err == nil {
		err = rerr
	}
	return st, err
}

// nbytes is ggml_nbytes of a wire tensor, or an error when it overflows
// or the type is not one ggml has.
func nbytes(w *wireTensor) (uint64, error) {
	typ := quant.Type(w.Type)
	if !typ.Valid() {
		return 0, refuse("tensor %#x: type %d is not a ggml type", w.ID, w.Type)
	}
	blck := uint64(typ.BlockSize())
	if uint64(w.Ne[0])%blck != 0 {
		return 0, refuse("tensor %#x: %d elements per row are not whole %s blocks", w.ID, w.Ne[0], typ)
	}
	for _, n := range w.Ne {
		if n == 0 {
			return 0, nil
		}
	}
	var total uint64
	if blck == 1 {
		total = uint64(typ.TypeSize())
	} else {
		hi, lo := bits.Mul64(uint64(w.Ne[0])/blck, uint64(w.Nb[0]))
		if hi != 0 {
			return 0, refuse("tensor %#x: its size overflows", w.ID)
		}
		total = lo
	}
	for i := range maxDims {
		if blck != 1 && i == 0 {
			continue
		}
		hi, lo := bits.Mul64(uint64(w.Ne[i])-1, uint64(w.Nb[i]))
		var c uint64
		total, c = bits.Add64(total, lo, 0)
		if hi != 0 || c != 0 {
			return 0, refuse("tensor %#x: its size overflows", w.ID)
		}
	}
	return total, nil
}

// decode checks a wire tensor and returns it as a graph tensor (not yet
// placed) and its buffer (nil for a tensor without one, which must then
// have no address either).
func (ss *session) decode(w wireTensor) (*graph.Tensor, *sbuf, error) {
	name, err := w.name()
	if err != nil {
		return nil, nil, refuse("%v", err)
	}
	n, err := nbytes(&w)
	if err != nil {
		return nil, nil, err
	}
	if op := ops.Op(w.Op); !op.Valid() {
		return nil, nil, refuse("tensor %#x (%q): operation %d is not a ggml operation", w.ID, name, w.Op)
	}
	t := &graph.Tensor{Type: quant.Type(w.Type), Op: ops.Op(w.Op), Flags: graph.Flags(w.Flags), Name: name}
	copy(t.Params[:], w.Params[:])
	for i := range maxDims {
		t.Ne[i], t.Nb[i] = int64(w.Ne[i]), uint64(w.Nb[i])
	}
	if w.Buffer == 0 {
		if w.Data != 0 {
			return nil, nil, refuse("tensor %#x (%q): an address without a buffer", w.ID, name)
		}
		return t, nil, nil
	}
	b, err := ss.buffer(w.Buffer)
	if err != nil {
		return nil, nil, refuse("tensor %#x (%q): %v", w.ID, name, err)
	}
	if _, err := b.offset(w.Data, n); err != nil {
		return nil, nil, refuse("tensor %#x (%q): %v", w.ID, name, err)
	}
	return t, b, nil
}

// offset is where n bytes at address addr lie in b, when they do.
func (b *sbuf) offset(addr, n uint64) (uint64, error) {
	if addr < b.base {
		return 0, fmt.Errorf("address %#x is before its buffer (%#x)", addr, b.base)
	}
	at := addr - b.base
	if at > b.size || n > b.size-at {
		return 0, fmt.Errorf("%d bytes at offset %d pass the end of its buffer of %d bytes", n, at, b.size)
	}
	return at, nil
}

// region checks the n bytes from byte off of tensor w, within the tensor
// and within its buffer, and returns the buffer and their offset there.
func (ss *session) region(w wireTensor, off, n uint64) (*sbuf, uint64, error) {
	_, b, err := ss.decode(w)
	if err != nil {
		return nil, 0, err
	}
	if b == nil {
		return nil, 0, refuse("tensor %#x has no buffer", w.ID)
	}
	size, _ := nbytes(&w)
	if off > size || n > size-off {
		return nil, 0, refuse("tensor %#x: %d bytes at %d pass its end (%d bytes)", w.ID, n, off, size)
	}
	at, _ := b.offset(w.Data, size)
	return b, at + off, nil
}

// chunk is the most bytes the server moves at once: copies stream
// through a buffer of this size, whatever a request's size.
const chunk = 1 << 20

func (b *sbuf) write(at uint64, p []byte) error {
	switch st := b.st.(type) {
	case buffer.HostStorage:
		copy(st.Bytes()[at:at+uint64(len(p))], p)
		return nil
	case buffer.DeviceStorage:
		return st.Write(at, p)
	}
	return fmt.Errorf("%T is neither host nor device storage", b.st)
}

func (b *sbuf) read(at uint64, p []byte) error {
	switch st := b.st.(type) {
	case buffer.HostStorage:
		copy(p, st.Bytes()[at:at+uint64(len(p))])
		return nil
	case buffer.DeviceStorage:
		return st.Read(at, p)
	}
	return fmt.Errorf("%T is neither host nor device storage", b.st)
}

func (b *sbuf) fill(at, n uint64, v byte) error {
	switch st := b.st.(type) {
	case buffer.HostStorage:
		m := st.Bytes()[at : at+n]
		for i := range m {
			m[i] = v
		}
		return nil
	case buffer.DeviceStorage:
		return st.Fill(at, n, v)
	}
	return fmt.Errorf("%T is neither host nor device storage", b.st)
}

func (ss *session) sendBytes(b *sbuf, at, n uint64) error {
	if _, err := ss.nc.Write(u64(n)); err != nil {
		return err
	}
	p := make([]byte, min(n, chunk))
	for n > 0 {
		k := min(n, chunk)
		if err := b.read(at, p[:k]); err != nil {
			return err
		}
		if _, err := ss.nc.Write(p[:k]); err != nil {
			return err
		}
		at, n = at+k, n-k
	}
	return nil
}

// setTensor streams the data of a SET_TENSOR into its buffer after
// checking where it goes, and into the cache folder when asked.
func (ss *session) setTensor(size uint64) error {
	if size < setTensorHeader {
		return refuse("%d bytes, shorter than its %d-byte header", size, setTensorHeader)
	}
	hdr, err := ss.fixed(setTensorHeader)
	if err != nil {
		return err
	}
	r := reader{b: hdr}
	w := getTensor(r.next(tensorBytes))
	cache, off := r.u8(), r.u64()
	n := size - setTensorHeader
	b, at, err := ss.region(w, off, n)
	if err != nil {
		return err
	}
	var file *os.File
	var hash uint64
	if cache != 0 && ss.srv.CacheDir != "" {
		if file, err = os.CreateTemp(ss.srv.CacheDir, ".part-*"); err != nil {
			ss.srv.log().Warn("rpc: cache file not created", "err", err)
		}
		hash = 0xcbf29ce484222325
	}
	p := make([]byte, min(n, chunk))
	for left := n; left > 0; {
		k := min(left, chunk)
		if _, err := io.ReadFull(ss.nc, p[:k]); err != nil {
			if file != nil {
				_ = file.Close()
				_ = os.Remove(file.Name())
			}
			return fmt.Errorf("reading %d bytes of data: %w", n, err)
		}
		if err := b.write(at, p[:k]); err != nil {
			return err
		}
		if file != nil {
			for _, c := range p[:k] {
				hash = (hash ^ uint64(c)) * 0x100000001b3
			}
			_, _ = file.Write(p[:k])
		}
		at, left = at+k, left-k
	}
	if file != nil {
		name := file.Name()
		if err := file.Close(); err == nil {
			err = os.Rename(name, filepath.Join(ss.srv.CacheDir, fmt.Sprintf("%016x", hash)))
			if err != nil {
				_ = os.Remove(name)
			}
		}
	}
	return nil
}

// setTensorHash sets a tensor from the cache folder's file named by the
// hash, when there is one; the reply says whether it was.
func (ss *session) setTensorHash(w wireTensor, off, hash uint64) error {
	if ss.srv.CacheDir == "" {
		if _, _, err := ss.decode(w); err != nil {
			return err
		}
		return ss.reply([]byte{0})
	}
	f, err := os.Open(filepath.Join(ss.srv.CacheDir, fmt.Sprintf("%016x", hash)))
	if err != nil {
		return ss.reply([]byte{0})
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ss.reply([]byte{0})
	}
	n := uint64(fi.Size())
	b, at, err := ss.region(w, off, n)
	if err != nil {
		return err
	}
	p := make([]byte, min(n, chunk))
	for left := n; left > 0; {
		k := min(left, chunk)
		if _, err := io.ReadFull(f, p[:k]); err != nil {
			return ss.reply([]byte{0})
		}
		if err := b.write(at, p[:k]); err != nil {
			return err
		}
		at, left = at+k, left-k
	}
	return ss.reply([]byte{1})
}

func (ss *session) copyTensor(src, dst wireTensor) error {
	_, sb, err := ss.decode(src)
	if err != nil {
		return err
	}
	_, db, err := ss.decode(dst)
	if err != nil {
		return err
	}
	if sb == nil || db == nil {
		return refuse("a copy between tensors without buffers")
	}
	n, _ := nbytes(&src)
	sat, _ := sb.offset(src.Data, n)
	dat, err := db.offset(dst.Data, n)
	if err != nil {
		return refuse("copy of %d bytes into tensor %#x: %v", n, dst.ID, err)
	}
	p := make([]byte, min(n, chunk))
	for left := n; left > 0; {
		k := min(left, chunk)
		if err := sb.read(sat, p[:k]); err != nil {
			return err
		}
		if err := db.write(dat, p[:k]); err != nil {
			return err
		}
		sat, dat, left = sat+k, dat+k, left-k
	}
	return ss.reply([]byte{1})
}

func (ss *session) allocSize(r reader) error {
	d, err := ss.device(r.u32())
	if err != nil {
		return err
	}
	t, _, err := ss.decode(getTensor(r.next(tensorBytes)))
	if err != nil {
		return err
	}
	for range maxSrc {
		if w := getTensor(r.next(tensorBytes)); w.ID != 0 {
			if _, _, err := ss.decode(w); err != nil {
				return err
			}
		}
	}
	bt := d.BufferType()
	if bt == nil {
		return refuse("device %s is unavailable", d.Name())
	}
	return ss.reply(u64(bt.AllocSize(t)))
}

// graphBytes is the largest GRAPH_COMPUTE accepted: the node limit's ids
// and four tensors a node (the nodes, their weights and inputs).
func (l Limits) graphBytes() uint64 {
	return 12 + uint64(l.Nodes)*(8+4*tensorBytes)
}

func (ss *session) graphCompute(size uint64) error {
	if size > ss.lim.graphBytes() {
		return refuse("a graph of %d bytes, the limit is %d (%d nodes)", size, ss.lim.graphBytes(), ss.lim.Nodes)
	}
	msg, err := ss.fixed(size)
	if err != nil {
		return err
	}
	if err := ss.compute(msg); err != nil {
		return err
	}
	dev := binary.LittleEndian.Uint32(msg)
	ss.graphs[dev] = msg
	return nil
}

// compute decodes a GRAPH_COMPUTE message, places its tensors in this
// connection's buffers and computes it on the device.
func (ss *session) compute(msg []byte) error {
	dev, g, touched, err := ss.decodeGraph(msg)
	defer func() {
		for b := range touched {
			_ = b.buf.Reset()
		}
	}()
	if err != nil {
		return err
	}
	if ss.backends[dev] == nil {
		b, err := ss.srv.Devices[dev].Init(backend.Options{Threads: ss.srv.Threads})
		if err != nil {
			return err
		}
		ss.backends[dev] = b
	}
	if err := backend.Compute(ss.backends[dev], g); err != nil {
		return fmt.Errorf("computing a graph of %d nodes on %s: %w", len(g.Nodes), ss.srv.Devices[dev].Name(), err)
	}
	return nil
}

// decodeGraph checks a serialized graph: sizes, ids (unique, every one
// referred to present), no cycle, every tensor valid and inside this
// connection's buffers, views inside their sources. It returns the graph
// with its tensors placed, and the buffers it placed tensors in.
func (ss *session) decodeGraph(msg []byte) (uint32, *graph.Graph, map[*sbuf]bool, error) {
	touched := map[*sbuf]bool{}
	if len(msg) < 8 {
		return 0, nil, touched, refuse("a graph of %d bytes", len(msg))
	}
	r := reader{b: msg}
	dev, nNodes := r.u32(), r.u32()
	if _, err := ss.device(dev); err != nil {
		return 0, nil, touched, err
	}
	if nNodes == 0 || nNodes > ss.lim.Nodes {
		return 0, nil, touched, refuse("a graph of %d nodes (from 1 to %d)", nNodes, ss.lim.Nodes)
	}
	if uint64(len(r.b)) < 8*uint64(nNodes)+4 {
		return 0, nil, touched, refuse("%d node ids announced, the message is shorter", nNodes)
	}
	nodeIDs := make([]uint64, nNodes)
	for i := range nodeIDs {
		nodeIDs[i] = r.u64()
	}
	nTensors := r.u32()
	if uint64(len(r.b)) != uint64(nTensors)*tensorBytes {
		return 0, nil, touched, refuse("%d tensors announced in %d bytes", nTensors, len(r.b))
	}
	wires := make(map[uint64]*wireTensor, nTensors)
	for range nTensors {
		w := getTensor(r.next(tensorBytes))
		if w.ID == 0 {
			return 0, nil, touched, refuse("a tensor with id 0")
		}
		if wires[w.ID] != nil {
			return 0, nil, touched, refuse("tensor id %#x twice", w.ID)
		}
		wires[w.ID] = &w
	}
	built := make(map[uint64]*graph.Tensor, nTensors)
	bufOf := map[*graph.Tensor]*sbuf{}
	// Depth first over sources and view sources with an explicit stack;
	// a tensor met again while its own sources are being built is a cycle.
	const (
		unseen = iota
		open
		done
	)
	state := make(map[uint64]int, nTensors)
	build := func(root uint64) error {
		type frame struct {
			id   uint64
			next int // 0..maxSrc-1 sources, maxSrc the view source
		}
		stack := []frame{{id: root}}
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			w := wires[f.id]
			if w == nil {
				return refuse("tensor id %#x is referred to but not sent", f.id)
			}
			if f.next == 0 {
				if state[f.id] == done {
					stack = stack[:len(stack)-1]
					continue
				}
				state[f.id] = open
			}
			if f.next <= maxSrc {
				var dep uint64
				if f.next < maxSrc {
					dep = w.Src[f.next]
				} else {
					dep = w.ViewSrc
				}
				f.next++
				if dep == 0 || state[dep] == done {
					continue
				}
				if state[dep] == open {
					return refuse("tensor %#x depends on itself (a cycle)", dep)
				}
				stack = append(stack, frame{id: dep})
				continue
			}
			t, b, err := ss.decode(*w)
			if err != nil {
				return err
			}
			for i, s := range w.Src {
				if s != 0 {
					t.Src[i] = built[s]
				}
			}
			var src *graph.Tensor
			var srcAddr uint64
			if w.ViewSrc != 0 {
				src, srcAddr = built[w.ViewSrc], wires[w.ViewSrc].Data
			}
			if err := ss.place(t, b, w, src, bufOf[src], srcAddr); err != nil {
				return err
			}
			if b != nil {
				touched[b] = true
			}
			built[f.id], state[f.id] = t, done
			bufOf[t] = b
			stack = stack[:len(stack)-1]
		}
		return nil
	}
	g := &graph.Graph{Nodes: make([]*graph.Tensor, nNodes)}
	for i, id := range nodeIDs {
		if err := build(id); err != nil {
			return 0, nil, touched, err
		}
		g.Nodes[i] = built[id]
		g.Nodes[i].Flags |= graph.FlagCompute
	}
	return dev, g, touched, nil
}

// place gives t its memory: its own place in b, or, for a view, its
// source's memory, the view's address having to match its source's plus
// its offset.
func (ss *session) place(t *graph.Tensor, b *sbuf, w *wireTensor, src *graph.Tensor, sb *sbuf, srcAddr uint64) error {
	if src != nil {
		if src.ViewSrc != nil {
			return refuse("tensor %#x views %#x, itself a view", w.ID, w.ViewSrc)
		}
		if sb == nil || b != sb {
			return refuse("tensor %#x is a view of %#x but not in its buffer", w.ID, w.ViewSrc)
		}
		if want, c := bits.Add64(srcAddr, w.ViewOffs, 0); c != 0 || want != w.Data {
			return refuse("tensor %#x: view address %#x is not its source's plus %d", w.ID, w.Data, w.ViewOffs)
		}
		t.ViewSrc, t.ViewOffs = src, w.ViewOffs
		if err := b.buf.InitView(t); err != nil {
			return refuse("tensor %#x: %v", w.ID, err)
		}
		return nil
	}
	if b == nil {
		return nil
	}
	if err := b.buf.AllocTensor(t, w.Data-b.base); err != nil {
		return refuse("tensor %#x: %v", w.ID, err)
	}
	return nil
}
