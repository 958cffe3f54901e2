package fastrpc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/internal/devlib"
	"github.com/ggml-go/ggml/internal/dynlib"
)

// LibraryName names the library in reasons and logs.
const LibraryName = "libcdsprpc"

// Required are the symbols ggml's htp-drv resolves and fails without
// (AEE_EUNABLETOLOAD).
var Required = []string{
	"rpcmem_alloc", "rpcmem_free", "rpcmem_to_fd", "fastrpc_mmap", "fastrpc_munmap",
	"dspqueue_create", "dspqueue_close", "dspqueue_export", "dspqueue_write", "dspqueue_read",
	"remote_handle64_open", "remote_handle64_invoke", "remote_handle64_close",
	"remote_handle_control", "remote_handle64_control", "remote_session_control",
}

// Optional symbols: rpcmem_alloc2 (buffers over 2 GiB; rpcmem_alloc is the
// fallback, as on older phones) and remote_system_request (domain
// discovery; the open-source libraries lack it, and the static cdsp/cdsp1
// table is the fallback).
const (
	SymAlloc2        = "rpcmem_alloc2"
	SymSystemRequest = "remote_system_request"
)

// ErrMissing reports a call to an optional function the loaded library
// lacks.
var ErrMissing = errors.New("fastrpc: function not in this libcdsprpc")

// Lib is an open libcdsprpc. Its methods may be called from several
// goroutines (the library is thread-safe).
type Lib struct {
	lib  *dynlib.Library
	path string
	// Tried lists the paths searched before it was found.
	Tried []string

	rpcmemAlloc, rpcmemAlloc2, rpcmemFree, rpcmemToFD uintptr
	mmap, munmap                                      uintptr
	qCreate, qClose, qExport, qWrite, qRead           uintptr
	hOpen, hInvoke, hClose, hControl, h64Control      uintptr
	sessControl, sysRequest                           uintptr
}

// SearchPlaces returns the library names and folders tried for the
// platform, after env (GGML_HEXAGON_LIB: a file, used alone, or a folder,
// searched first).
func SearchPlaces(env string) (names, dirs []string) {
	names, dirs = platformPlaces()
	if env == "" {
		return names, dirs
	}
	if fi, err := os.Stat(env); err == nil && !fi.IsDir() {
		return []string{filepath.Base(env)}, []string{filepath.Dir(env)}
	} else if err == nil || filepath.Ext(env) == "" {
		return names, append([]string{env}, dirs...)
	}
	// A file that does not exist: report exactly it.
	return []string{filepath.Base(env)}, []string{filepath.Dir(env)}
}

// Open finds and opens libcdsprpc (see SearchPlaces) and resolves its
// symbols. The error is a backend.Reason: not found with every path
// searched, failed to load, or a required symbol missing.
func Open(env string) (*Lib, error) {
	names, dirs := SearchPlaces(env)
	lib, tried, err := dynlib.Load(names, dirs)
	if err != nil {
		return nil, devlib.Reason(LibraryName, tried, err)
	}
	l := &Lib{lib: lib, path: lib.Path(), Tried: tried}
	for i, p := range []*uintptr{&l.rpcmemAlloc, &l.rpcmemFree, &l.rpcmemToFD, &l.mmap, &l.munmap,
		&l.qCreate, &l.qClose, &l.qExport, &l.qWrite, &l.qRead,
		&l.hOpen, &l.hInvoke, &l.hClose, &l.hControl, &l.h64Control, &l.sessControl} {
		if *p, err = lib.Sym(Required[i]); err != nil {
			_ = lib.Close()
			r := devlib.Reason(lib.Path(), nil, err)
			r.Symbol = Required[i]
			return nil, r
		}
	}
	l.rpcmemAlloc2, _ = lib.Sym(SymAlloc2)
	l.sysRequest, _ = lib.Sym(SymSystemRequest)
	return l, nil
}

// Path is the file the library was loaded from.
func (l *Lib) Path() string { return l.path }

// Has reports whether the optional symbol name (SymAlloc2,
// SymSystemRequest) is present.
func (l *Lib) Has(name string) bool {
	switch name {
	case SymAlloc2:
		return l.rpcmemAlloc2 != 0
	case SymSystemRequest:
		return l.sysRequest != 0
	}
	return false
}

// Close unloads the library. Nothing taken from it may be used after.
func (l *Lib) Close() error { return l.lib.Close() }

// call is purego.SyscallN returning the AEE code. Its uintptr arguments
// are pointers converted at the call (&local, &buf[0]): like SyscallN it
// must move what they point to onto the heap, or a stack growth between
// the conversion and the C call leaves the library writing into the old
// stack (seen as a dspqueue_read that "answered" 0 bytes and 0 buffers).
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(uint32(r))
}

// MaxAlloc is the largest block Alloc can return: rpcmem_alloc takes an
// int size, so without rpcmem_alloc2 blocks stop below 2 GiB.
func (l *Lib) MaxAlloc() uint64 {
	if l.rpcmemAlloc2 != 0 {
		return 1 << 62
	}
	return 1<<31 - 1
}

// Alloc returns a block of shared memory (rpcmem_alloc2 on the system
// heap with the default flags, or rpcmem_alloc without it) and its fd.
func (l *Lib) Alloc(size uint64) (base uintptr, fd int32, err error) {
	if size > l.MaxAlloc() {
		return 0, -1, fmt.Errorf("fastrpc: %d bytes need rpcmem_alloc2, which this libcdsprpc (%s) lacks", size, l.path)
	}
	var r uintptr
	if l.rpcmemAlloc2 != 0 {
		r, _, _ = purego.SyscallN(l.rpcmemAlloc2, HeapIDSystem, DefaultFlags, uintptr(size))
	} else {
		r, _, _ = purego.SyscallN(l.rpcmemAlloc, HeapIDSystem, DefaultFlags, uintptr(size))
	}
	if r == 0 {
		return 0, -1, fmt.Errorf("fastrpc: rpcmem_alloc of %d bytes failed (no DMA heap, or out of memory)", size)
	}
	fd = call(l.rpcmemToFD, r)
	if fd < 0 {
		purego.SyscallN(l.rpcmemFree, r)
		return 0, -1, fmt.Errorf("fastrpc: rpcmem_to_fd failed")
	}
	return r, fd, nil
}

// Free releases a block from Alloc.
func (l *Lib) Free(base uintptr) { purego.SyscallN(l.rpcmemFree, base) }

// Mmap maps a block into the DSP domain's address space (fastrpc_mmap,
// offset 0).
func (l *Lib) Mmap(domain uint32, fd int32, base uintptr, size uint64, flags uint32) error {
	return Check(call(l.mmap, uintptr(domain), uintptr(uint32(fd)), base, 0, uintptr(size), uintptr(flags)))
}

// Munmap undoes Mmap.
func (l *Lib) Munmap(domain uint32, fd int32, base uintptr, size uint64) error {
	return Check(call(l.munmap, uintptr(domain), uintptr(uint32(fd)), base, uintptr(size)))
}

// SessionControl is remote_session_control(req, data, sizeof *data). The
// library rejects a length other than the struct's size.
func (l *Lib) SessionControl(req uint32, data unsafe.Pointer, size uintptr) error {
	return Check(call(l.sessControl, uintptr(req), uintptr(data), size))
}

// HandleControl is remote_handle_control(req, data, size).
func (l *Lib) HandleControl(req uint32, data unsafe.Pointer, size uintptr) error {
	return Check(call(l.hControl, uintptr(req), uintptr(data), size))
}

// Handle64Control is remote_handle64_control(h, req, data, size).
func (l *Lib) Handle64Control(h uint64, req uint32, data unsafe.Pointer, size uintptr) error {
	return Check(call(l.h64Control, uintptr(h), uintptr(req), uintptr(data), size))
}

// Arch asks the DSP of domain for its Hexagon version (htpdrv_get_arch):
// 0x73 becomes 73, 0x81 becomes 81.
func (l *Lib) Arch(domain uint32) (int, error) {
	c := DSPCapability{Domain: domain, AttributeID: AttrArchVer}
	if err := l.HandleControl(GetDSPInfo, unsafe.Pointer(&c), unsafe.Sizeof(c)); err != nil {
		return 0, err
	}
	v := c.Capability & 0xff
	return int(v>>4)*10 + int(v&0xf), nil
}

// cString is a NUL-terminated copy of s, pinned for the length of a call
// that receives a struct holding its address.
func cString(p *runtime.Pinner, s string) (uintptr, uint32) {
	b := append([]byte(s), 0)
	p.Pin(&b[0])
	return uintptr(unsafe.Pointer(&b[0])), uint32(len(s))
}

// ReserveSession reserves a new session on the named domain
// (FASTRPC_RESERVE_NEW_SESSION) and returns its id and effective domain.
func (l *Lib) ReserveSession(domain, name string, session uint32) (sessionID, effDomain uint32, err error) {
	var p runtime.Pinner
	defer p.Unpin()
	a := ReserveNewSessionArg{SessionID: session}
	a.DomainName, a.DomainNameLen = cString(&p, domain)
	a.SessionName, a.SessionNameLen = cString(&p, name)
	if err := l.SessionControl(ReserveNewSession, unsafe.Pointer(&a), unsafe.Sizeof(a)); err != nil {
		return 0, 0, err
	}
	return a.SessionID, a.EffectiveDomainID, nil
}

// EffectiveDomain returns the effective domain id of session 0 on the
// named domain (FASTRPC_GET_EFFECTIVE_DOMAIN_ID).
func (l *Lib) EffectiveDomain(domain string) (uint32, error) {
	var p runtime.Pinner
	defer p.Unpin()
	var a EffectiveDomainIDArg
	a.DomainName, a.DomainNameLen = cString(&p, domain)
	if err := l.SessionControl(GetEffectiveDomainID, unsafe.Pointer(&a), unsafe.Sizeof(a)); err != nil {
		return 0, err
	}
	return a.EffectiveDomainID, nil
}

// EnableUnsignedModules allows unsigned DSP modules in domain
// (DSPRPC_CONTROL_UNSIGNED_MODULE).
func (l *Lib) EnableUnsignedModules(domain uint32) error {
	a := UnsignedModuleArg{Domain: int32(domain), Enable: 1}
	return l.SessionControl(ControlUnsignedModule, unsafe.Pointer(&a), unsafe.Sizeof(a))
}

// SessionURI asks FastRPC for the URI of module on the domain and session
// (FASTRPC_GET_URI).
func (l *Lib) SessionURI(domain string, session uint32, module string) (string, error) {
	var p runtime.Pinner
	defer p.Unpin()
	buf := make([]byte, 256)
	p.Pin(&buf[0])
	a := GetURIArg{SessionID: session, URI: uintptr(unsafe.Pointer(&buf[0])), URILen: uint32(len(buf))}
	a.DomainName, a.DomainNameLen = cString(&p, domain)
	a.ModuleURI, a.ModuleURILen = cString(&p, module)
	if err := l.SessionControl(GetURI, unsafe.Pointer(&a), unsafe.Sizeof(a)); err != nil {
		return "", err
	}
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i]), nil
		}
	}
	return "", fmt.Errorf("fastrpc: FASTRPC_GET_URI returned an unterminated URI")
}

// SetLatency asks for the PM QoS latency mode on an open handle
// (DSPRPC_CONTROL_LATENCY, enable RPC_PM_QOS, latency 0: upstream leaves
// it uninitialised).
func (l *Lib) SetLatency(h uint64) error {
	a := ControlLatencyArg{Enable: RPCPMQoS}
	return l.Handle64Control(h, ControlLatency, unsafe.Pointer(&a), unsafe.Sizeof(a))
}

// OpenHandle is remote_handle64_open(uri, &h).
func (l *Lib) OpenHandle(uri string) (uint64, error) {
	u := append([]byte(uri), 0)
	var h uint64
	if err := Check(call(l.hOpen, uintptr(unsafe.Pointer(&u[0])), uintptr(unsafe.Pointer(&h)))); err != nil {
		return 0, err
	}
	return h, nil
}

// CloseHandle is remote_handle64_close(h).
func (l *Lib) CloseHandle(h uint64) error { return Check(call(l.hClose, uintptr(h))) }

// Invoke runs an htp_iface method through remote_handle64_invoke: its
// input buffer, then its output buffer, as the remote_arg array; it
// returns the output buffer.
func (l *Lib) Invoke(h uint64, c htp.Call) ([]byte, error) {
	var args [2]RemoteBuf
	var out []byte
	n := 0
	if c.In != nil {
		args[n] = RemoteBuf{Pv: uintptr(unsafe.Pointer(&c.In[0])), NLen: uintptr(len(c.In))}
		n++
	}
	if c.OutLen > 0 {
		out = make([]byte, c.OutLen)
		args[n] = RemoteBuf{Pv: uintptr(unsafe.Pointer(&out[0])), NLen: uintptr(len(out))}
		n++
	}
	var p runtime.Pinner
	defer p.Unpin()
	var pra uintptr
	if n > 0 {
		if c.In != nil {
			p.Pin(&c.In[0])
		}
		if out != nil {
			p.Pin(&out[0])
		}
		pra = uintptr(unsafe.Pointer(&args[0]))
	}
	if err := Check(call(l.hInvoke, uintptr(h), uintptr(c.Scalars), pra)); err != nil {
		return nil, fmt.Errorf("htp_iface_%s: %w", c.Name, err)
	}
	runtime.KeepAlive(&args)
	return out, nil
}

// Queue is a dspqueue_t.
type Queue uintptr

// CreateQueue is dspqueue_create(domain, 0, req, rsp, NULL, NULL, NULL,
// &q): no callbacks, the host reads responses itself.
func (l *Lib) CreateQueue(domain uint32, reqSize, rspSize uint32) (Queue, error) {
	var q uintptr
	if err := Check(call(l.qCreate, uintptr(domain), 0, uintptr(reqSize), uintptr(rspSize), 0, 0, 0,
		uintptr(unsafe.Pointer(&q)))); err != nil {
		return 0, err
	}
	return Queue(q), nil
}

// ExportQueue is dspqueue_export: the id the DSP side imports.
func (l *Lib) ExportQueue(q Queue) (uint64, error) {
	var id uint64
	if err := Check(call(l.qExport, uintptr(q), uintptr(unsafe.Pointer(&id)))); err != nil {
		return 0, err
	}
	return id, nil
}

// CloseQueue is dspqueue_close.
func (l *Lib) CloseQueue(q Queue) error { return Check(call(l.qClose, uintptr(q))) }

// Write sends msg with one buffer descriptor (dspqueue_write).
func (l *Lib) Write(q Queue, buf *QueueBuffer, msg []byte, timeoutUS uint32) error {
	return Check(call(l.qWrite, uintptr(q), 0, 1, uintptr(unsafe.Pointer(buf)), uintptr(len(msg)),
		uintptr(unsafe.Pointer(&msg[0])), uintptr(timeoutUS)))
}

// Read receives one message and up to one buffer descriptor
// (dspqueue_read); it returns the number of buffers and the message
// length.
func (l *Lib) Read(q Queue, buf *QueueBuffer, msg []byte, timeoutUS uint32) (nBufs, msgLen uint32, err error) {
	var flags uint32
	err = Check(call(l.qRead, uintptr(q), uintptr(unsafe.Pointer(&flags)), 1, uintptr(unsafe.Pointer(&nBufs)),
		uintptr(unsafe.Pointer(buf)), uintptr(len(msg)), uintptr(unsafe.Pointer(&msgLen)),
		uintptr(unsafe.Pointer(&msg[0])), uintptr(timeoutUS)))
	return nBufs, msgLen, err
}

// NSPDomains lists the NSP domains FASTRPC_GET_DOMAINS reports that are
// up, by instance id. It fails with ErrMissing when the library lacks
// remote_system_request, or with the library's code (0x6c on older
// phones).
func (l *Lib) NSPDomains() (map[int]DomainInfo, error) {
	if l.sysRequest == 0 {
		return nil, fmt.Errorf("%w: %s", ErrMissing, SymSystemRequest)
	}
	req := SystemRequest{ID: SysGetDomains, Sys: DomainsInfo{Flags: DomainTypeNSP & 31}}
	if err := Check(call(l.sysRequest, uintptr(unsafe.Pointer(&req)))); err != nil {
		return nil, err
	}
	n := req.Sys.NumDomains
	if n <= 0 || n > 64 {
		return nil, fmt.Errorf("fastrpc: FASTRPC_GET_DOMAINS reports %d domains", n)
	}
	doms := make([]DomainInfo, n)
	var p runtime.Pinner
	defer p.Unpin()
	p.Pin(&doms[0])
	req.Sys.Domains, req.Sys.MaxDomains = uintptr(unsafe.Pointer(&doms[0])), n
	if err := Check(call(l.sysRequest, uintptr(unsafe.Pointer(&req)))); err != nil {
		return nil, err
	}
	out := map[int]DomainInfo{}
	for i := 0; i < int(min(req.Sys.NumDomains, n)); i++ {
		d := doms[i]
		if d.Type != DomainTypeNSP || d.Status == 0 {
			continue
		}
		out[int(d.InstanceID)] = d
	}
	return out, nil
}

// DomainName is d's name as a Go string.
func (d *DomainInfo) DomainName() string {
	for i, c := range d.Name {
		if c == 0 {
			return string(d.Name[:i])
		}
	}
	return string(d.Name[:])
}
