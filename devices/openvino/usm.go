package openvino

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"unsafe"

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
// *host* memory of the device's default context
// (ov_remote_context_create_host_tensor): the C API has no call reading or
// writing USM device memory from the host, which the session needs (the
// cache is cleared when it starts; the scheduler may copy from it). Every
// port of an infer request bound to such memory gets a remote tensor over
// it (ov_remote_context_create_tensor, USM_USER_BUFFER), never a plain
// host tensor, and the updated cache is written in place as upstream's.
// A GPU then reads and writes the cache where it is, with no upload
// before an infer and no download after it (on a discrete GPU over the
// bus: only device memory would keep that traffic off it). Verified on
// the double only (usm_test.go): no GPU here.

// errNoVariadics reports a variadic call the ABI cannot make (variadicPairs).
var errNoVariadics = fmt.Errorf("openvino: variadic C calls are not ABI-safe on %s/%s", runtime.GOOS, runtime.GOARCH)

// usmContext is the device's default remote context, made once.
type usmContext struct {
	once sync.Once
	ctx  uintptr
	err  error
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
	ctx, err := rt.remoteContext()
	if err != nil {
		return 0, err
	}
	n := rt.lib
	d := make([]int64, len(dims)+1)
	copy(d, dims)
	k1, v1, k2 := cstr("SHARED_MEM_TYPE"), cstr("USM_USER_BUFFER"), cstr("MEM_HANDLE")
	t := new(uintptr)
	err = callUserBuffer(n, n.remoteTensor, ctx, uintptr(n.num.c(e)), int64(len(dims)), d, t, k1, v1, k2, ptr)
	runtime.KeepAlive(d)
	if err == nil && *t == 0 {
		err = errors.New("openvino: ov_remote_context_create_tensor returned no tensor")
	}
	return *t, err
}

// isCacheName is upstream's test of a KV cache tensor in init_tensor.
func isCacheName(t *graph.Tensor) bool { return strings.HasPrefix(t.Name, "cache_") }

// kvInUSM reports whether tensors ts (a buffer's, as AllocTensors gets
// them) go to USM memory: upstream's rule (a GPU, not stateful, not the
// static path, a tensor named cache_*), unless turned off (tests) or the
// library lacks the remote-context API, which is logged once and leaves
// the cache in host memory, bound as today.
func (bt *bufferType) kvInUSM(ts []*graph.Tensor) bool {
	rt := bt.dev.rt
	o := &rt.opts
	if bt.host || rt.kind != KindGPU || o.statefulOn(rt.kind) || o.Static(rt.kind) || o.noKVUSM {
		return false
	}
	cache := false
	for _, t := range ts {
		cache = cache || (t.ViewSrc == nil && isCacheName(t))
	}
	if !cache {
		return false
	}
	if err := rt.lib.remoteAPI(); err != nil {
		bt.dev.usmWarn.Do(func() {
			slog.Warn("openvino: KV cache stays in host memory, uploaded every infer", "reason", err)
		})
		return false
	}
	return true
}

// AllocTensors places ts as buffer.AllocTensors would, in USM host memory
// when kvInUSM says so (the KV cache of a session on a GPU), else in the
// type's ordinary memory: the buffers are of this type either way, so
// the scheduler and SupportsBufferType see no difference.
func (bt *bufferType) AllocTensors(ts []*graph.Tensor) (buffer.Buffer, error) {
	return buffer.AllocTensors(&allocAs{bt: bt, usm: bt.kvInUSM(ts)}, ts)
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
// takes USM host memory when usm is set.
type allocAs struct {
	bt  *bufferType
	usm bool
}

func (a *allocAs) Name() string                             { return a.bt.Name() }
func (a *allocAs) Alignment() uint64                        { return a.bt.Alignment() }
func (a *allocAs) MaxSize() uint64                          { return a.bt.MaxSize() }
func (a *allocAs) AllocSize(t *graph.Tensor) uint64         { return a.bt.AllocSize(t) }
func (a *allocAs) IsHost() bool                             { return a.bt.IsHost() }
func (a *allocAs) DeviceName() string                       { return a.bt.DeviceName() }
func (a *allocAs) Alloc(size uint64) (buffer.Buffer, error) { return a.bt.alloc(size, a.usm) }

// usmOf is the USM storage holding t's memory, or nil for host memory.
func usmOf(t *graph.Tensor) *storage {
	if e, ok := baseOf(t).Extra.(*tensorExtra); ok && e.st != nil && e.st.usm != 0 {
		return e.st
	}
	return nil
}
