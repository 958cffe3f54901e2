package rpc

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/envopt"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// EnvServers lists the servers the registry connects to on first use, as
// host:port entries separated by commas, the format of llama.cpp's --rpc
// option. When it is unset, EnvLlamaServers is read.
const EnvServers = "GGML_RPC_SERVERS"

// EnvLlamaServers is the variable llama.cpp's --rpc option reads (same
// format), so that a shell set up for llama.cpp finds the same servers.
const EnvLlamaServers = "LLAMA_ARG_RPC"

// EnvTimeout overrides DefaultTimeout, the deadline of every call: a Go
// duration ("90s", "5m") or a whole number of seconds. ggml's client has
// no deadline and no such variable; the name keeps ggml's GGML_RPC_
// prefix (GGML_RPC_DEBUG).
const EnvTimeout = "GGML_RPC_TIMEOUT"

// Options describe the servers to connect to. ClientOptionsFromEnv reads
// them from GGML_RPC_SERVERS and GGML_RPC_TIMEOUT; Go callers may fill
// them directly.
type Options struct {
	// Servers are host:port endpoints.
	Servers []string
	// Timeout bounds every call, a remote graph computation included
	// (a large model's prompt on a slow server may need more than the
	// default); 0 is GGML_RPC_TIMEOUT when set, else DefaultTimeout.
	Timeout time.Duration
	// Token is the shared secret of our own server's -token; empty for a
	// stock ggml server, which knows no token.
	Token string
	// TLS, when set, connects with TLS (our server's -tls-cert/-tls-key);
	// nil is plain TCP, which a stock ggml server speaks.
	TLS *tls.Config
}

// ClientOptionsFromEnv reads GGML_RPC_SERVERS (else LLAMA_ARG_RPC) and
// GGML_RPC_TIMEOUT. A timeout that is not a positive duration is an error
// naming the variable; the servers are returned with it.
func ClientOptionsFromEnv() (Options, error) {
	var o Options
	list, ok := os.LookupEnv(EnvServers)
	if !ok {
		list = os.Getenv(EnvLlamaServers)
	}
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.Servers = append(o.Servers, s)
		}
	}
	_, err := envVars.Read(&o, os.Getenv)
	return o, err
}

// envVars are the GGML_RPC_* variables that fill Options (the server list
// is read apart: it falls back on llama.cpp's variable).
var envVars = &envopt.Table[Options]{Device: "rpc", Prefix: "GGML_RPC_", Vars: []envopt.Var[Options]{
	{Name: strings.TrimPrefix(EnvTimeout, "GGML_RPC_"), Set: func(o *Options, v string) error {
		d, err := parseTimeout(v)
		if err != nil {
			return err
		}
		o.Timeout = d
		return nil
	}},
}}

// errTimeout is what parseTimeout accepts.
var errTimeout = errors.New(`want a positive duration ("90s", "5m") or a whole number of seconds`)

// parseTimeout reads a Go duration or a whole number of seconds.
func parseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.ParseUint(v, 10, 32)
		if nerr != nil {
			return 0, errTimeout
		}
		d = time.Duration(n) * time.Second
	}
	if d <= 0 {
		return 0, errTimeout
	}
	return d, nil
}

func init() {
	if err := backend.Register(std); err != nil {
		backend.Logger().Warn("rpc: registry not registered", "err", err)
	}
}

// std is the process's RPC registry: the servers of GGML_RPC_SERVERS,
// connected on first use, then those Connect adds.
var std = &registry{}

// Registry is the RPC registry ("RPC").
func Registry() backend.Registry { return std }

type registry struct {
	once sync.Once
	mu   sync.Mutex
	devs []backend.Device
	next int // the next device number, across servers as ggml counts
}

func (*registry) Name() string { return "RPC" }

// Devices connects to the servers of GGML_RPC_SERVERS the first time, and
// lists one device per remote device, RPC0, RPC1, ... across servers in
// order. A server that cannot be reached is listed as one unavailable
// device saying why.
func (r *registry) Devices() []backend.Device {
	r.once.Do(func() {
		env, envErr := ClientOptionsFromEnv()
		for _, addr := range env.Servers {
			err := envErr
			if err == nil {
				_, err = r.connect(addr, env)
			}
			if err != nil {
				r.mu.Lock()
				r.devs = append(r.devs, backend.NewUnavailable(fmt.Sprintf("RPC[%s]", addr), addr, backend.DeviceGPU,
					backend.Reason{Kind: backend.InitFailed, Library: "RPC server " + addr, Err: err}))
				r.mu.Unlock()
			}
		}
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]backend.Device(nil), r.devs...)
}

// Connect connects to each of opts.Servers and returns their devices,
// which also join the RPC registry (so backend.DeviceByName finds them).
func Connect(opts Options) ([]backend.Device, error) {
	std.Devices() // the environment's servers come first, as in ggml
	var all []backend.Device
	for _, addr := range opts.Servers {
		ds, err := std.connect(addr, opts)
		if err != nil {
			return all, err
		}
		all = append(all, ds...)
	}
	return all, nil
}

func (r *registry) connect(addr string, opts Options) ([]backend.Device, error) {
	if opts.Timeout == 0 {
		env, err := ClientOptionsFromEnv()
		if err != nil {
			return nil, err
		}
		opts.Timeout = env.Timeout
	}
	c, err := dial(addr, dialConfig{timeout: opts.Timeout, token: opts.Token, tls: opts.TLS})
	if err != nil {
		return nil, err
	}
	rsp := make([]byte, 4)
	if err := c.call(cmdDeviceCount, nil, rsp); err != nil {
		c.close()
		return nil, err
	}
	n := le32(rsp)
	if n == 0 || n > maxServerDevices {
		c.close()
		return nil, fmt.Errorf("%w: %s: DEVICE_COUNT: %d devices", ErrProtocol, addr, n)
	}
	var ds []backend.Device
	for i := range n {
		d := &Device{addr: addr, index: i, c: c}
		if err := d.bt.init(d); err != nil {
			c.close()
			return nil, err
		}
		ds = append(ds, d)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range ds {
		d.(*Device).name = fmt.Sprintf("RPC%d", r.next)
		r.next++
		r.devs = append(r.devs, d)
	}
	return ds, nil
}

// maxServerDevices bounds a server's device count (GGML_RPC_MAX_SERVERS is
// ggml's bound on servers; devices per server have none, but no machine
// has this many).
const maxServerDevices = 256

// Device is one device of a server: its memory in buffers on the server,
// its graphs computed there.
type Device struct {
	name  string
	addr  string
	index uint32
	c     *conn
	bt    bufferType
}

// Name is "RPC" and the device's number, as ggml names them.
func (d *Device) Name() string { return d.name }

// Description is the server's endpoint and the device's index there.
func (d *Device) Description() string { return fmt.Sprintf("%s device %d", d.addr, d.index) }

// Addr is the server's host:port.
func (d *Device) Addr() string { return d.addr }

// Memory asks the server (GET_DEVICE_MEMORY); 0, 0 when it cannot be asked.
func (d *Device) Memory() (free, total uint64) {
	rsp := make([]byte, 16)
	if err := d.c.call(cmdGetDeviceMemory, u32(d.index), rsp); err != nil {
		return 0, 0
	}
	return le64(rsp), le64(rsp[8:])
}

// Type is GPU, as ggml's RPC device reports.
func (d *Device) Type() backend.DeviceType { return backend.DeviceGPU }

// Props gather the device's description. The device is asynchronous: a
// graph computation returns once sent.
func (d *Device) Props() backend.Props {
	free, total := d.Memory()
	return backend.Props{Name: d.name, Description: d.Description(), Type: d.Type(),
		MemoryFree: free, MemoryTotal: total, Caps: backend.Caps{Async: true}}
}

// BufferType is the server device's memory.
func (d *Device) BufferType() buffer.Type { return &d.bt }

// SupportsOp is what our CPU device computes: the protocol cannot ask the
// server (ggml's client answers yes to everything), and every server's
// CPU device computes what ggml's does.
func (d *Device) SupportsOp(t *graph.Tensor) bool {
	if t.Op == ops.None || t.Op.IsView() {
		return true
	}
	return cpu.SupportsOp(t)
}

// SupportsBufferType accepts this device's memory only.
func (d *Device) SupportsBufferType(bt buffer.Type) bool { return bt == &d.bt }

// OffloadOp is false, as ggml's RPC device has no offload rule.
func (d *Device) OffloadOp(*graph.Tensor) bool { return false }

// Err is why the device's server was lost, or nil.
func (d *Device) Err() error { return d.c.err() }

// Traffic is the bytes sent to and received from the device's server so
// far (all its devices together).
func (d *Device) Traffic() (sent, received uint64) { return d.c.sent.Load(), d.c.recvd.Load() }

// Init starts a backend. The device takes no parameters. It asks the
// server for the device's memory first: an idle connection whose server
// has gone shows nothing until it is used, and a backend started on it
// would fail only at its first graph, after InitBest had chosen it over
// the devices that work.
func (d *Device) Init(opts backend.Options) (backend.Backend, error) {
	for k, v := range opts.DeviceParams(d.name) {
		return nil, backend.UnknownParam(d.name, k, v)
	}
	if err := d.c.call(cmdGetDeviceMemory, u32(d.index), make([]byte, 16)); err != nil {
		return nil, err
	}
	return &Backend{dev: d}, nil
}

// bufferType is a server device's memory (ggml's RPC buffer type), with
// its alignment and maximum size asked once.
type bufferType struct {
	dev              *Device
	align, maxSize   uint64
	allocMu          sync.Mutex
	allocSizes       map[[6]uint64]uint64
	name, deviceName string
}

func (bt *bufferType) init(d *Device) error {
	bt.dev = d
	rsp := make([]byte, 8)
	if err := d.c.call(cmdGetAlignment, u32(d.index), rsp); err != nil {
		return err
	}
	bt.align = le64(rsp)
	if bt.align == 0 || bt.align&(bt.align-1) != 0 || bt.align > 1<<20 {
		return fmt.Errorf("%w: %s: GET_ALIGNMENT: %d is not a power of two up to 1 MiB", ErrProtocol, d.addr, bt.align)
	}
	if err := d.c.call(cmdGetMaxSize, u32(d.index), rsp); err != nil {
		return err
	}
	bt.maxSize = le64(rsp)
	bt.allocSizes = map[[6]uint64]uint64{}
	return nil
}

func (bt *bufferType) Name() string       { return fmt.Sprintf("%s[%s]", bt.dev.name, bt.dev.addr) }
func (bt *bufferType) Alignment() uint64  { return bt.align }
func (bt *bufferType) MaxSize() uint64    { return bt.maxSize }
func (bt *bufferType) IsHost() bool       { return false }
func (bt *bufferType) DeviceName() string { return bt.dev.name }

// AllocSize asks the server for the tensors ggml's client asks about
// (quantized rows that a CUDA server pads), remembering the answer, and
// takes the tensor's size for the rest.
func (bt *bufferType) AllocSize(t *graph.Tensor) uint64 {
	n := t.NBytes()
	if !t.Type.IsQuantized() || t.Ne[0]%512 == 0 || t.ViewSrc != nil {
		return n
	}
	key := [6]uint64{uint64(t.Type), uint64(t.Ne[0]), uint64(t.Ne[1]), uint64(t.Ne[2]), uint64(t.Ne[3]), uint64(t.Op)}
	bt.allocMu.Lock()
	defer bt.allocMu.Unlock()
	if v, ok := bt.allocSizes[key]; ok {
		return max(v, n)
	}
	wt, err := flatOf(t)
	if err != nil {
		return n
	}
	req := u32(bt.dev.index)
	req = wt.put(req)
	var empty wireTensor
	for range maxSrc {
		req = empty.put(req)
	}
	rsp := make([]byte, 8)
	if err := bt.dev.c.call(cmdGetAllocSize, req, rsp); err != nil {
		return n
	}
	bt.allocSizes[key] = le64(rsp)
	return max(le64(rsp), n)
}

// Alloc allocates a buffer on the server (ALLOC_BUFFER) and asks its base
// address (BUFFER_GET_BASE), which tensors' addresses are relative to.
func (bt *bufferType) Alloc(size uint64) (buffer.Buffer, error) {
	c := bt.dev.c
	rsp := make([]byte, 16)
	req := append(u32(bt.dev.index), u64(size)...)
	if err := c.call(cmdAllocBuffer, req, rsp); err != nil {
		return nil, err
	}
	handle, got := le64(rsp), le64(rsp[8:])
	if handle == 0 {
		return nil, fmt.Errorf("%w: %s: ALLOC_BUFFER: the server could not allocate %d bytes on device %d", ErrRefused, bt.dev.addr, size, bt.dev.index)
	}
	st := &storage{c: c, addr: bt.dev.addr, handle: handle, size: got}
	if got < size {
		st.Release()
		return nil, fmt.Errorf("%w: %s: ALLOC_BUFFER: %d bytes allocated for %d asked", ErrProtocol, bt.dev.addr, got, size)
	}
	rsp = rsp[:8]
	if err := c.call(cmdBufferGetBase, u64(handle), rsp); err != nil {
		return nil, err
	}
	st.base = le64(rsp)
	return buffer.New(bt, st, got)
}

// flatOf is t as the server needs it for a size question: shape, type and
// operation only.
func flatOf(t *graph.Tensor) (wireTensor, error) {
	w := wireTensor{ID: 1, Type: uint32(t.Type), Op: uint32(t.Op), Params: t.Params}
	for i := range maxDims {
		if !fitsU32(t.Ne[i]) || !fitsU32(t.Nb[i]) {
			return w, fmt.Errorf("%s: shape or stride %d does not fit the protocol's 32 bits", t, i)
		}
		w.Ne[i], w.Nb[i] = uint32(t.Ne[i]), uint32(t.Nb[i])
	}
	w.setName(t.Name)
	return w, nil
}

// flatBytes is a wire tensor of n bytes (type I8) at address at of the
// server buffer handle: the unit of the byte copies.
func flatBytes(handle, at, n uint64) wireTensor {
	w := wireTensor{ID: 1, Type: uint32(quant.I8), Buffer: handle, Data: at}
	w.Ne = [maxDims]uint32{uint32(n), 1, 1, 1}
	w.Nb = [maxDims]uint32{1, uint32(n), uint32(n), uint32(n)}
	return w
}

// maxCopy is the most bytes one SET_TENSOR, GET_TENSOR or MEMSET_TENSOR
// moves: the flat tensor's length must fit 32 bits, so larger transfers go
// in several requests. A variable so that a test can make it small.
var maxCopy uint64 = 1 << 30

// storage is a server buffer (buffer.DeviceStorage and buffer.TensorIO):
// every access is a request to the server.
type storage struct {
	c      *conn
	addr   string
	handle uint64 // the server's name for the buffer
	base   uint64 // its base address, in the server's address space
	size   uint64
}

func (s *storage) Base() uintptr { return uintptr(s.base) }

// Release frees the server buffer (FREE_BUFFER); a lost server has freed
// it already.
func (s *storage) Release() error {
	if s.c.err() != nil {
		return nil
	}
	return s.c.send(cmdFreeBuffer, u64(s.handle))
}

func (s *storage) Write(at uint64, data []byte) error {
	for len(data) > 0 {
		n := min(uint64(len(data)), maxCopy)
		w := flatBytes(s.handle, s.base+at, n)
		hdr := w.put(nil)
		hdr = append(hdr, 0)
		hdr = append(hdr, u64(0)...)
		if err := s.c.send(cmdSetTensor, hdr, data[:n]); err != nil {
			return err
		}
		data, at = data[n:], at+n
	}
	return nil
}

func (s *storage) Read(at uint64, data []byte) error {
	for len(data) > 0 {
		n := min(uint64(len(data)), maxCopy)
		w := flatBytes(s.handle, s.base+at, n)
		req := w.put(nil)
		req = append(req, u64(0)...)
		req = append(req, u64(n)...)
		if err := s.c.call(cmdGetTensor, req, data[:n]); err != nil {
			return err
		}
		data, at = data[n:], at+n
	}
	return nil
}

// Fill clears the whole buffer with BUFFER_CLEAR, a part of it with
// MEMSET_TENSOR.
func (s *storage) Fill(at, size uint64, value byte) error {
	if at == 0 && size == s.size {
		return s.c.send(cmdBufferClear, append(u64(s.handle), value))
	}
	for size > 0 {
		n := min(size, maxCopy)
		w := flatBytes(s.handle, s.base+at, n)
		req := w.put(nil)
		req = append(req, u64(0)...)
		req = append(req, u64(n)...)
		req = append(req, value)
		if err := s.c.send(cmdMemsetTensor, req); err != nil {
			return err
		}
		size, at = size-n, at+n
	}
	return nil
}

// SetTensor offers weights larger than ggml's threshold by hash first
// (SET_TENSOR_HASH), so a server with a cache folder that has them skips
// the upload; when it has not, the data goes with the flag asking it to
// keep a copy. Everything else is a plain write.
func (s *storage) SetTensor(_ *graph.Tensor, u buffer.Usage, at, offset uint64, data []byte) error {
	if u != buffer.UsageWeights || len(data) <= hashThreshold || uint64(len(data)) > maxCopy {
		return s.Write(at+offset, data)
	}
	w := flatBytes(s.handle, s.base+at+offset, uint64(len(data)))
	req := w.put(nil)
	req = append(req, u64(0)...)
	req = append(req, u64(fnv1a(data))...)
	rsp := make([]byte, 1)
	if err := s.c.call(cmdSetTensorHash, req, rsp); err != nil {
		return err
	}
	if rsp[0] != 0 {
		return nil
	}
	hdr := w.put(nil)
	hdr = append(hdr, 1)
	hdr = append(hdr, u64(0)...)
	return s.c.send(cmdSetTensor, hdr, data)
}

func (s *storage) GetTensor(_ *graph.Tensor, _ buffer.Usage, at, offset uint64, data []byte) error {
	return s.Read(at+offset, data)
}

// CopyTensor copies on the server (COPY_TENSOR) when src is in a buffer
// of the same connection.
func (s *storage) CopyTensor(src, dst *graph.Tensor, at uint64) (bool, error) {
	sst, sat, err := buffer.Locate(src)
	if err != nil {
		return false, nil
	}
	from, ok := sst.(*storage)
	if !ok || from.c != s.c {
		return false, nil
	}
	n := src.NBytes()
	if n > maxCopy {
		return false, nil
	}
	a := flatBytes(from.handle, from.base+sat, n)
	b := flatBytes(s.handle, s.base+at, n)
	req := a.put(nil)
	req = b.put(req)
	rsp := make([]byte, 1)
	if err := s.c.call(cmdCopyTensor, req, rsp); err != nil {
		return false, err
	}
	return rsp[0] != 0, nil
}

// Backend is a stream of work on a server device: copies are done when
// they return, graphs are sent (GRAPH_COMPUTE has no reply) and waited
// for by Synchronize.
type Backend struct {
	dev    *Device
	closed bool
}

func (b *Backend) Name() string           { return b.dev.name }
func (b *Backend) Device() backend.Device { return b.dev }

func (b *Backend) SetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	if b.closed {
		return backend.ErrClosed
	}
	return buffer.SetTensor(t, data, offset)
}

func (b *Backend) GetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	if b.closed {
		return backend.ErrClosed
	}
	return buffer.GetTensor(t, data, offset)
}

// Synchronize waits for a graph sent to the server: GRAPH_COMPUTE has no
// reply, so a small request with one (GET_ALIGNMENT) is queued behind it;
// its answer comes once the graph is done, and a server that died
// computing it is an error here.
func (b *Backend) Synchronize() error {
	if b.closed {
		return backend.ErrClosed
	}
	c := b.dev.c
	c.mu.Lock()
	pending := c.computing
	c.mu.Unlock()
	if !pending {
		return c.err()
	}
	return c.call(cmdGetAlignment, u32(b.dev.index), make([]byte, 8))
}

// GraphCompute sends g to the server (GRAPH_COMPUTE, or GRAPH_RECOMPUTE
// when it is the device's last graph again).
func (b *Backend) GraphCompute(g *graph.Graph) error {
	if b.closed {
		return backend.ErrClosed
	}
	msg, err := encodeGraph(b.dev.index, g, b.dev.c)
	if err != nil {
		return fmt.Errorf("rpc: %s: GRAPH_COMPUTE: %w", b.dev.addr, err)
	}
	return b.dev.c.sendGraph(b.dev.index, msg)
}

// CopyTensorAsync copies between two buffers of the same server on the
// server (backend.TensorCopier).
func (b *Backend) CopyTensorAsync(from backend.Backend, src, dst *graph.Tensor) error {
	bs, err := buffer.Of(dst)
	if err != nil {
		return err
	}
	dstSt, at, err := buffer.Locate(dst)
	if err != nil {
		return err
	}
	st, ok := dstSt.(*storage)
	if !ok || bs == nil {
		return backend.ErrUnsupported
	}
	done, err := st.CopyTensor(src, dst, at)
	if err != nil {
		return err
	}
	if !done {
		return backend.ErrUnsupported
	}
	return nil
}

// Close waits for queued work; the connection stays, shared with the
// server's other devices.
func (b *Backend) Close() error {
	if b.closed {
		return backend.ErrClosed
	}
	err := b.Synchronize()
	b.closed = true
	return err
}

// encodeGraph serializes g as ggml's client does: | device (4) | n_nodes
// (4) | node ids (8 each) | n_tensors (4) | tensors |, the tensors being
// every node and what it reaches through sources and view sources, each
// after what it reaches.
func encodeGraph(device uint32, g *graph.Graph, c *conn) ([]byte, error) {
	ids := map[*graph.Tensor]uint64{}
	var order []*graph.Tensor
	var visit func(t *graph.Tensor)
	visit = func(t *graph.Tensor) {
		if t == nil || ids[t] != 0 {
			return
		}
		ids[t] = uint64(len(ids) + 1)
		for _, s := range t.Src {
			visit(s)
		}
		visit(t.ViewSrc)
		order = append(order, t)
	}
	for _, n := range g.Nodes {
		visit(n)
	}
	msg := make([]byte, 0, 12+8*len(g.Nodes)+tensorBytes*len(order))
	msg = append(msg, u32(device)...)
	msg = append(msg, u32(uint32(len(g.Nodes)))...)
	for _, n := range g.Nodes {
		msg = append(msg, u64(ids[n])...)
	}
	msg = append(msg, u32(uint32(len(order)))...)
	isNode := make(map[*graph.Tensor]bool, len(g.Nodes))
	for _, n := range g.Nodes {
		isNode[n] = true
	}
	for _, t := range order {
		w, err := flatOf(t)
		if err != nil {
			return nil, err
		}
		w.ID = ids[t]
		w.Flags = int32(t.Flags)
		if isNode[t] {
			// ggml's CPU backend skips nodes without the flag.
			w.Flags |= int32(graph.FlagCompute)
			w.UseCount = int32(g.UseCount(t))
		}
		for i, s := range t.Src {
			w.Src[i] = ids[s]
		}
		w.ViewSrc, w.ViewOffs = ids[t.ViewSrc], t.ViewOffs
		if st, at, err := buffer.Locate(t); err == nil {
			if s, ok := st.(*storage); ok && s.c == c {
				w.Buffer, w.Data = s.handle, s.base+at
			}
		}
		msg = w.put(msg)
	}
	return msg, nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }
