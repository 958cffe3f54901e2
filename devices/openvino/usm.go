package openvino

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// The KV cache in USM memory (GPU, not stateful, not static).
//
// Upstream (the upstream ggml OpenVINO backend, ggml-openvino.cpp as
// crates.io sipp-sys 0.1.4 ships it, 2026) moves a buffer to USM device
// memory in init_tensor when its first tensor is named cache_*, the device
// is a GPU and GGML_OPENVINO_STATEFUL_EXECUTION is off
// (create_usm_device_tensor of the GPU plugin's remote context); set,
// get, memset and clear then go through its own OpenCL queue
// (clEnqueueMemcpyINTEL, clEnqueueMemFillINTEL). Its inputs are bound as
// the tensor's extra, the USM tensor itself, and its outputs in a remote
// buffer as that same tensor unless GGML_OPENVINO_DISABLE_REMOTE_OUTPUTS,
// so the updated cache is written in place; a cache sliced to n_kv cells
// is a USM_USER_BUFFER over the cache's memory,
// ClContext::create_tensor(type, shape, usm_ptr) (a newer upstream
// utils.cpp, 2026: convert_ggml_input_to_ov, create_ov_output_tensor,
// try_make_kv_sliced_tensor).
//
// Here the same rule picks the buffers (AllocTensors below, the hook the
// model's session allocates its cache through), and their memory is USM
// device memory as upstream's (create_tensor of the default context with
// SHARED_MEM_TYPE USM_DEVICE_BUFFER, its address the MEM_HANDLE of
// ov_remote_tensor_get_params): the host cannot address it, so every set,
// get, fill, clear and copy of the scheduler goes through a queue of our
// own in the GPU plugin's cl_context (ocl.go). Where that cannot be had
// (no libOpenCL, no cl_intel_unified_shared_memory, a library without the
// parameter calls) the cache is USM *host* memory of the same context
// (ov_remote_context_create_host_tensor), host-visible, copied as host
// memory; the reason is logged once and `ggml devices` says it. Every
// port of an infer request bound to either memory gets a remote tensor
// over it (ov_remote_context_create_tensor, USM_USER_BUFFER), never a
// plain host tensor, and the updated cache is written in place as
// upstream's. A GPU then reads and writes the cache where it is, with no
// upload before an infer and no download after it, and with device memory
// none over the bus. Verified on the double only (usm_test.go,
// usmdev_test.go): no GPU here.

// errNoVariadics reports a variadic call the ABI cannot make (variadicPairs).
var errNoVariadics = fmt.Errorf("openvino: variadic C calls are not ABI-safe on %s/%s", runtime.GOOS, runtime.GOARCH)

// usmContext is the device's default remote context and the OpenCL queue
// reaching its device memory, each made once.
type usmContext struct {
	once sync.Once
	ctx  uintptr
	err  error

	qOnce sync.Once
	q     devQueue
	qErr  error
}

// devQueue reaches USM device memory from the host (clQueue; tests wrap
// it with wrong uses to show that the double catches them).
type devQueue interface {
	copy(dst, src uintptr, n uint64) error
	write(dst uintptr, data []byte) error
	read(src uintptr, data []byte) error
	setBytes(dst uintptr, v byte, n uint64) error
}

// remoteAPI says why the library cannot hold KV caches in USM memory, or
// nil when it can.
func (n *native) remoteAPI() error {
	for _, s := range []struct {
		name string
		p    uintptr
	}{{"ov_core_get_default_context", n.defaultContext}, {"ov_remote_context_create_host_tensor", n.remoteHostTensor},
		{"ov_remote_context_create_tensor", n.remoteTensor}} {
		if s.p == 0 {
			return fmt.Errorf("openvino: the library has no %s (remote-context API)", s.name)
		}
	}
	if !variadicPairs {
		return errNoVariadics
	}
	return nil
}

// remoteContext is the default remote context of the runtime's device
// (ov_core_get_default_context), created on first use and kept with the
// runtime, as upstream's process-wide one.
func (rt *runtimeCtx) remoteContext() (uintptr, error) {
	rt.usm.once.Do(func() {
		n := rt.lib
		d := cstr(rt.device)
		rt.usm.err = n.callPlugin("ov_core_get_default_context", n.defaultContext, rt.core, uintptr(unsafe.Pointer(d)), uintptr(unsafe.Pointer(&rt.usm.ctx)))
		runtime.KeepAlive(d)
	})
	return rt.usm.ctx, rt.usm.err
}

// usmHost allocates size bytes of USM host memory of the device's default
// context: the U8 tensor holding it and its (host-visible) memory.
func (rt *runtimeCtx) usmHost(size uint64) (uintptr, []byte, error) {
	ctx, err := rt.remoteContext()
	if err != nil {
		return 0, nil, err
	}
	n := rt.lib
	d := []int64{int64(size), 0}
	t := new(uintptr)
	if err := callCtxShape(n, "ov_remote_context_create_host_tensor", n.remoteHostTensor, ctx, uintptr(n.num.c(etU8)), 1, d, t); err != nil {
		return 0, nil, err
	}
	var p uintptr
	if err := n.call("ov_tensor_data", n.tensorData, *t, uintptr(unsafe.Pointer(&p))); err != nil {
		n.freeTensor(*t)
		return 0, nil, err
	}
	if p == 0 || p%tensorAlignment != 0 {
		n.freeTensor(*t)
		return 0, nil, fmt.Errorf("openvino: USM host memory at %#x is not aligned to %d bytes", p, tensorAlignment)
	}
	mem := unsafe.Slice((*byte)(cPtr(p)), size)
	clear(mem) // buffers start zeroed; USM memory need not be
	return *t, mem, nil
}

// usmTensor is a remote tensor of the device's default context over USM
// memory at ptr (USM_USER_BUFFER), with a port's type and shape: how a
// port bound to a KV cache in USM memory is bound.
func (rt *runtimeCtx) usmTensor(e elemType, dims []int64, ptr uintptr) (uintptr, error) {
	k1, v1, k2 := cstr("SHARED_MEM_TYPE"), cstr("USM_USER_BUFFER"), cstr("MEM_HANDLE")
	t, err := rt.remoteTensor(e, dims, uintptr(unsafe.Pointer(k1)), uintptr(unsafe.Pointer(v1)), uintptr(unsafe.Pointer(k2)), ptr)
	runtime.KeepAlive([]*byte{k1, v1, k2})
	return t, err
}

// remoteTensor calls ov_remote_context_create_tensor of the default
// context with the (key, value) arguments pairs.
func (rt *runtimeCtx) remoteTensor(e elemType, dims []int64, pairs ...uintptr) (uintptr, error) {
	ctx, err := rt.remoteContext()
	if err != nil {
		return 0, err
	}
	n := rt.lib
	d := make([]int64, len(dims)+1)
	copy(d, dims)
	t := new(uintptr)
	err = callRemoteTensor(n, n.remoteTensor, ctx, uintptr(n.num.c(e)), int64(len(dims)), d, t, pairs...)
	runtime.KeepAlive(d)
	if err == nil && *t == 0 {
		err = errors.New("openvino: ov_remote_context_create_tensor returned no tensor")
	}
	return *t, err
}

// usmDevice allocates size bytes of USM device memory of the default
// context, as upstream's create_usm_device_tensor: the U8 tensor and the
// memory's device address (its MEM_HANDLE).
func (rt *runtimeCtx) usmDevice(size uint64) (uintptr, uintptr, error) {
	k, v := cstr("SHARED_MEM_TYPE"), cstr("USM_DEVICE_BUFFER")
	t, err := rt.remoteTensor(etU8, []int64{int64(size)}, uintptr(unsafe.Pointer(k)), uintptr(unsafe.Pointer(v)))
	runtime.KeepAlive([]*byte{k, v})
	if err != nil {
		return 0, 0, err
	}
	n := rt.lib
	h, err := n.params("ov_remote_tensor_get_params", n.remoteTensorParams, t, "MEM_HANDLE")
	if err == nil && (h == 0 || h%tensorAlignment != 0) {
		err = fmt.Errorf("openvino: USM device memory at %#x is not aligned to %d bytes", h, tensorAlignment)
	}
	if err != nil {
		n.freeTensor(t)
		return 0, 0, err
	}
	return t, h, nil
}

// params reads the handle named key from the "KEY value KEY value"
// string of ov_remote_context_get_params or ov_remote_tensor_get_params
// (fn) of obj; the string is released with ov_free.
func (n *native) params(name string, fn, obj uintptr, key string) (uintptr, error) {
	if fn == 0 {
		return 0, fmt.Errorf("openvino: the library has no %s", name)
	}
	var size, p uintptr
	if err := n.call(name, fn, obj, uintptr(unsafe.Pointer(&size)), uintptr(unsafe.Pointer(&p))); err != nil {
		return 0, err
	}
	s := goString(p)
	if p != 0 {
		purego.SyscallN(n.free, p)
	}
	f := strings.Fields(s)
	for i := 0; i+1 < len(f); i += 2 {
		if f[i] != key {
			continue
		}
		v, err := strconv.ParseUint(f[i+1], 0, 64)
		if err != nil {
			v, err = strconv.ParseUint(f[i+1], 16, 64)
		}
		if err != nil {
			return 0, fmt.Errorf("openvino: %s: %s is %q, not a handle", name, key, f[i+1])
		}
		return uintptr(v), nil
	}
	return 0, fmt.Errorf("openvino: %s gives no %s (%q)", name, key, s)
}

// deviceQueue is the OpenCL queue reaching the GPU's USM device memory,
// made once: libOpenCL, the cl_context of the default remote context
// (OCL_CONTEXT), the USM extension's functions. Its error says why the
// KV cache cannot be held in device memory.
func (rt *runtimeCtx) deviceQueue() (devQueue, error) {
	rt.usm.qOnce.Do(func() {
		n := rt.lib
		if n.remoteTensorParams == 0 {
			rt.usm.qErr = errors.New("openvino: the library has no ov_remote_tensor_get_params (USM device address)")
			return
		}
		ctx, err := rt.remoteContext()
		if err != nil {
			rt.usm.qErr = err
			return
		}
		clCtx, err := n.params("ov_remote_context_get_params", n.remoteParams, ctx, "OCL_CONTEXT")
		if err != nil {
			rt.usm.qErr = err
			return
		}
		cl, err := loadOpenCL(n.lib.Path())
		if err != nil {
			rt.usm.qErr = err
			return
		}
		q, err := newCLQueue(cl, clCtx, rt.opts.Profiling >= 2)
		if err != nil {
			rt.usm.qErr = err
			return
		}
		rt.usm.q = q
	})
	return rt.usm.q, rt.usm.qErr
}

// isCacheName is upstream's test of a KV cache tensor in init_tensor.
func isCacheName(t *graph.Tensor) bool { return strings.HasPrefix(t.Name, "cache_") }

// kvMem is where a buffer's memory is: host memory, or USM host or device
// memory of the GPU's default context.
type kvMem int

const (
	memHost kvMem = iota
	memUSMHost
	memUSMDevice
)

// kvPlacement is where tensors ts (a buffer's, as AllocTensors gets them)
// go: upstream's rule (a GPU, not stateful, not the static path, a tensor
// named cache_*) puts them in USM device memory, or USM host memory when
// the OpenCL queue cannot be had, or host memory when the library lacks
// the remote-context API (each logged once, the cache then bound as
// before); tests turn either off.
func (bt *bufferType) kvPlacement(ts []*graph.Tensor) kvMem {
	rt := bt.dev.rt
	o := &rt.opts
	if bt.host || rt.kind != KindGPU || o.statefulOn(rt.kind) || o.Static(rt.kind) || o.noKVUSM {
		return memHost
	}
	cache := false
	for _, t := range ts {
		cache = cache || (t.ViewSrc == nil && isCacheName(t))
	}
	if !cache {
		return memHost
	}
	if err := rt.lib.remoteAPI(); err != nil {
		bt.dev.usmWarn.Do(func() {
			slog.Warn("openvino: KV cache stays in host memory, uploaded every infer", "reason", err)
		})
		return memHost
	}
	if o.noKVDevice {
		return memUSMHost
	}
	if _, err := rt.deviceQueue(); err != nil {
		bt.dev.usmDevWarn.Do(func() {
			slog.Warn("openvino: KV cache in USM host memory, not device memory", "reason", err)
		})
		return memUSMHost
	}
	return memUSMDevice
}

// kvReport is the `ggml devices` line saying where a GPU's KV cache goes
// and, when not in device memory, why; nothing for other targets.
func (d *device) kvReport() []string {
	rt := d.rt
	if rt.kind != KindGPU || rt.opts.statefulOn(rt.kind) || rt.opts.Static(rt.kind) {
		return nil
	}
	if err := rt.lib.remoteAPI(); err != nil {
		return []string{"KV cache: host memory (" + err.Error() + ")"}
	}
	if _, err := rt.deviceQueue(); err != nil {
		return []string{"KV cache: USM host memory, not device memory (" + err.Error() + ")"}
	}
	return []string{"KV cache: USM device memory, through OpenCL (cl_intel_unified_shared_memory)"}
}

// AllocTensors places ts as buffer.AllocTensors would, in USM memory when
// kvPlacement says so (the KV cache of a session on a GPU), else in the
// type's ordinary memory: the buffers are of this type either way, so
// the scheduler and SupportsBufferType see no difference.
func (bt *bufferType) AllocTensors(ts []*graph.Tensor) (buffer.Buffer, error) {
	return buffer.AllocTensors(&allocAs{bt: bt, mem: bt.kvPlacement(ts)}, ts)
}

// TensorsSize is what AllocTensors allocates: the tensors without memory,
// each padded to the alignment (one buffer: the type has no size limit).
func (bt *bufferType) TensorsSize(ts []*graph.Tensor) uint64 {
	var n uint64
	for _, t := range ts {
		if t.ViewSrc == nil && t.Data == nil && t.Buffer == nil {
			n += (bt.AllocSize(t) + tensorAlignment - 1) &^ (tensorAlignment - 1)
		}
	}
	return n
}

// allocAs is bt as a plain buffer.Type (no TensorPlanner), whose Alloc
// takes the memory mem names.
type allocAs struct {
	bt  *bufferType
	mem kvMem
}

func (a *allocAs) Name() string                             { return a.bt.Name() }
func (a *allocAs) Alignment() uint64                        { return a.bt.Alignment() }
func (a *allocAs) MaxSize() uint64                          { return a.bt.MaxSize() }
func (a *allocAs) AllocSize(t *graph.Tensor) uint64         { return a.bt.AllocSize(t) }
func (a *allocAs) IsHost() bool                             { return a.bt.IsHost() }
func (a *allocAs) DeviceName() string                       { return a.bt.DeviceName() }
func (a *allocAs) Alloc(size uint64) (buffer.Buffer, error) { return a.bt.alloc(size, a.mem) }

// usmOf is the USM storage holding t's memory, or nil for host memory.
func usmOf(t *graph.Tensor) *storage {
	if e, ok := baseOf(t).Extra.(*tensorExtra); ok && e.st != nil && e.st.usm != 0 {
		return e.st
	}
	return nil
}

// allocDevice is a buffer of size bytes of USM device memory, zeroed
// through the queue (device memory starts as garbage).
func (bt *bufferType) allocDevice(size uint64) (buffer.Buffer, error) {
	rt := bt.dev.rt
	st := &storage{typ: bt, extras: map[*graph.Tensor]*tensorExtra{}}
	if size > 0 {
		q, err := rt.deviceQueue()
		var t, p uintptr
		if err == nil {
			t, p, err = rt.usmDevice(size)
		}
		if err != nil {
			return nil, fmt.Errorf("openvino: KV cache of %d bytes in USM device memory of %s: %w", size, rt.device, err)
		}
		if err := q.setBytes(p, 0, size); err != nil {
			rt.lib.freeTensor(t)
			return nil, fmt.Errorf("openvino: clearing the KV cache in USM device memory of %s: %w", rt.device, err)
		}
		st.usm, st.devPtr, st.dev = t, p, q
		st.release = func() error { rt.lib.freeTensor(t); return nil }
	}
	return buffer.New(bt, &devStorage{st}, size)
}

// devStorage is a storage of USM device memory as the buffer package's
// DeviceStorage: every byte reached through the queue. Its tensors'
// extras point at the storage inside, as those of host memory do.
type devStorage struct{ s *storage }

func (d *devStorage) Base() uintptr                               { return d.s.Base() }
func (d *devStorage) Release() error                              { return d.s.Release() }
func (d *devStorage) InitTensor(t *graph.Tensor, at uint64) error { return d.s.InitTensor(t, at) }
func (d *devStorage) Reset() error                                { return d.s.Reset() }

func (d *devStorage) Write(at uint64, data []byte) error {
	return d.s.dev.write(d.s.devPtr+uintptr(at), data)
}

func (d *devStorage) Read(at uint64, data []byte) error {
	return d.s.dev.read(d.s.devPtr+uintptr(at), data)
}

func (d *devStorage) Fill(at, size uint64, v byte) error {
	return d.s.dev.setBytes(d.s.devPtr+uintptr(at), v, size)
}

// CopyTensor is upstream's cpy_tensor into a remote buffer: from host
// memory or from device memory of the same queue, one copy on the queue;
// anything else goes through host memory (false).
func (d *devStorage) CopyTensor(src, _ *graph.Tensor, at uint64) (bool, error) {
	n := src.NBytes()
	if s := usmOf(src); s != nil && s.dev == d.s.dev && s.dev != nil {
		return true, d.s.dev.copy(d.s.devPtr+uintptr(at), addr(src), n)
	}
	if uint64(len(src.Data)) >= n { // host memory: a tensor's own, or a host buffer's
		return true, d.s.dev.write(d.s.devPtr+uintptr(at), src.Data[:n])
	}
	return false, nil
}

// hostBytes is t's first n bytes as the host can read them: its memory,
// or for USM device memory a copy read through the queue.
func hostBytes(t *graph.Tensor, n uint64) ([]byte, error) {
	if s := usmOf(t); s != nil && s.dev != nil {
		b := make([]byte, n)
		return b, s.dev.read(addr(t), b)
	}
	return memBytes(t, n), nil
}

// devScatter is scatterInto for a tensor in USM device memory: the
// elements src written with t's strides, through the queue (a strided
// view's span read, scattered into and written back).
func (s *storage) devScatter(t *graph.Tensor, span uint64, src []byte) error {
	a := addr(t)
	if t.ViewSrc == nil || t.IsContiguous() {
		return s.dev.write(a, src[:span])
	}
	tmp := make([]byte, span)
	if err := s.dev.read(a, tmp); err != nil {
		return err
	}
	scatter(t, tmp, src)
	return s.dev.write(a, tmp)
}
