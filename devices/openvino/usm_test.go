package openvino

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// The KV cache in USM memory on a GPU (usm.go). Every claim here is the
// double's only: its GPU models remote contexts and counts the bytes each
// infer copies between host and device (testdata/README.md); there is no
// GPU here.

// gpuDevice opens the double at p presenting a GPU, the device's target.
func gpuDevice(t *testing.T, p string, o Options) *device {
	t.Helper()
	knob(t, p, "devices", "CPU,GPU")
	o.Device = "GPU"
	d := openDevice(t, p, o)
	require.Equal(t, KindGPU, d.rt.kind)
	return d
}

// portBytes is what the last infer on the double copied between host and
// device, split into the ports bound to KV cache tensors (named cache_*,
// upstream's rule) and the others; kvSize is the bytes of the KV ports'
// tensors, what a copying binding moves.
type portBytes struct {
	kvIn, kvOut, otherIn, otherOut int64
	kvPorts                        int
	kvInSize, kvOutSize            int64
}

func lastInferBytes(t *testing.T, p string, be *ovBackend) portBytes {
	t.Helper()
	cm, k := be.lastCM, be.last
	require.NotNil(t, cm)
	require.EqualValues(t, len(cm.params), doubleStat(t, p, "xfer.last.nin"), "the last GPU infer is the last graph's")
	require.EqualValues(t, len(cm.results), doubleStat(t, p, "xfer.last.nout"))
	var b portBytes
	count := func(s slot, stat string, kv, other, size *int64) {
		n := doubleStat(t, p, stat)
		require.GreaterOrEqual(t, n, int64(0), stat)
		if tt := k.resolve(s.loc); isCacheName(baseOf(tt)) {
			*kv += n
			b.kvPorts++
			*size += int64(tt.NBytes())
		} else {
			*other += n
		}
	}
	for i, s := range cm.params {
		count(s, "xfer.last.in."+strconv.Itoa(i), &b.kvIn, &b.otherIn, &b.kvInSize)
	}
	for i, s := range cm.results {
		count(s, "xfer.last.out."+strconv.Itoa(i), &b.kvOut, &b.otherOut, &b.kvOutSize)
	}
	return b
}

// gpuRun is a generated llama model (genmodel, 2 layers, F32) on dev: a
// 5-token prompt and three decode steps, each step's logits, and what the
// last decode step copied. A step's error ends the run and is returned.
type gpuRun struct {
	logits [][]float32
	last   portBytes
	steps  []portBytes // every step's last infer, the prompt's first
	infers int64       // infers of the last decode step
	kvUSM  bool        // the session's KV cache is in USM memory
	kvDev  bool        // in USM device memory
}

// kvMemories are the two USM memories a GPU's KV cache can be in: device
// memory (the default, through the double's OpenCL), and host memory
// (what the device falls back to without OpenCL).
var kvMemories = []struct {
	name string
	opts Options
	dev  bool
}{{"device", Options{}, true}, {"host", Options{noKVDevice: true}, false}}

func runGPUModel(t *testing.T, p string, dev *device) (gpuRun, error) {
	t.Helper()
	var be *ovBackend
	testBackendHook = func(b *ovBackend) { be = b }
	defer func() { testBackendHook = nil }()
	cfg := genmodel.Default()
	path := filepath.Join(t.TempDir(), "model.gguf")
	require.NoError(t, genmodel.WriteFile(path, cfg))
	m, err := model.Open(path, model.Options{Device: dev, Threads: 1})
	require.NoError(t, err)
	defer m.Close()
	s, err := m.NewSession(model.SessionOptions{Ctx: 64, Batch: 16})
	if err != nil {
		return gpuRun{}, err
	}
	defer s.Close()
	var r gpuRun
	for _, tokens := range [][]int32{{1, 5, 9, 12, 3}, {7}, {30}, {2}} {
		i0 := doubleStat(t, p, "infer.count")
		lg, err := s.Decode(context.Background(), tokens, nil)
		if err != nil {
			return r, err
		}
		r.logits = append(r.logits, lg[len(lg)-1])
		r.infers = doubleStat(t, p, "infer.count") - i0
		require.NotNil(t, be, "the model ran on no backend of the device")
		r.steps = append(r.steps, lastInferBytes(t, p, be))
	}
	r.last = r.steps[len(r.steps)-1]
	for _, st := range usmStorages(be) {
		r.kvUSM = r.kvUSM || st != nil
		r.kvDev = r.kvDev || st.dev != nil
	}
	return r, nil
}

// usmStorages are the USM storages the last graph's KV ports lie in.
func usmStorages(be *ovBackend) []*storage {
	var out []*storage
	for _, s := range be.lastCM.params {
		t := baseOf(be.last.resolve(s.loc))
		if e, ok := t.Extra.(*tensorExtra); ok && isCacheName(t) && e.st.usm != 0 {
			out = append(out, e.st)
		}
	}
	return out
}

// On a GPU, not stateful, a decode step binds every KV cache port (each
// layer's K and V, read and written back) to remote tensors over USM
// memory, device or host: the double counts 0 bytes copied for them, while
// the copying binding (host memory, plain host tensors) moves each cache
// both ways, and the logits of the three are bitwise the same. In device
// memory every host access went through the queue, all of it finished
// before each infer. The double only.
func TestKVCacheInUSMCopiesNoKV(t *testing.T) {
	p := buildDouble(t)
	needsDouble(t, "its GPU and transfer counters")
	copying, err := runGPUModel(t, p, gpuDevice(t, p, Options{noKVUSM: true}))
	require.NoError(t, err)
	require.False(t, copying.kvUSM)
	t.Logf("decode step, copying: %+v (%d infer)", copying.last, copying.infers)
	for _, mem := range kvMemories {
		t.Run(mem.name, func(t *testing.T) {
			alloc := "calls.ov_remote_context_create_host_tensor"
			if mem.dev {
				alloc = "calls.ov_remote_context_create_tensor"
			}
			h0, stale0, fill0 := doubleStat(t, p, alloc), doubleStat(t, p, "ocl.stale_infers"), doubleStat(t, p, "ocl.fill_bytes")
			freed0 := doubleStat(t, p, "ocl.freed_pending")
			usm, err := runGPUModel(t, p, gpuDevice(t, p, mem.opts))
			require.NoError(t, err)
			require.Greater(t, doubleStat(t, p, alloc), h0, "the KV cache was not allocated in USM %s memory", mem.name)
			t.Logf("decode step, USM %s memory: %+v (%d infer)", mem.name, usm.last, usm.infers)

			require.True(t, usm.kvUSM)
			require.Equal(t, mem.dev, usm.kvDev)
			require.EqualValues(t, 1, usm.infers, "one GPU infer per decode step")
			require.Equal(t, 2*2*2, usm.last.kvPorts, "2 layers x K, V x read, written")
			for i, b := range usm.steps {
				require.Equal(t, 8, b.kvPorts, "step %d", i)
				require.Zero(t, b.kvIn, "KV bytes uploaded, step %d", i)
				require.Zero(t, b.kvOut, "KV bytes downloaded, step %d", i)
			}
			// The counters are live: the other inputs and the logits are copied.
			require.Positive(t, usm.last.otherIn)
			require.Positive(t, usm.last.otherOut)
			require.Equal(t, copying.last.kvInSize, copying.last.kvIn, "the copying binding uploads every KV cache")
			require.Equal(t, copying.last.kvOutSize, copying.last.kvOut, "and downloads every one written")
			require.Equal(t, usm.last.otherIn, copying.last.otherIn)
			require.Equal(t, usm.last.otherOut, copying.last.otherOut)
			require.Equal(t, copying.logits, usm.logits, "logits of the USM and copying bindings")
			require.Equal(t, stale0, doubleStat(t, p, "ocl.stale_infers"), "an infer ran before the queue finished")
			require.Zero(t, doubleStat(t, p, "ocl.pending"))
			require.Equal(t, freed0, doubleStat(t, p, "ocl.freed_pending"), "memory freed under queued commands")
			if mem.dev {
				// Zeroed when allocated and cleared by the session: every byte of the 4 caches, twice.
				require.EqualValues(t, 2*4*usm.last.kvInSize/4, doubleStat(t, p, "ocl.fill_bytes")-fill0)
			} else {
				require.Equal(t, fill0, doubleStat(t, p, "ocl.fill_bytes"), "USM host memory is filled on the host")
			}
		})
	}
}

// The double fails wrong bindings of a KV cache in USM memory: bound as a
// plain host tensor over the USM memory it counts the copies (the test
// above would fail), bound one row off it computes other logits or
// refuses memory outside the allocation, bound as memory of another
// context or as host memory passed for USM it refuses the tensor. The
// double only.
func TestKVCacheUSMWrongBindingsFail(t *testing.T) {
	for _, mem := range kvMemories {
		t.Run(mem.name, func(t *testing.T) { wrongBindingsFail(t, mem.opts, mem.dev) })
	}
}

func wrongBindingsFail(t *testing.T, opts Options, dev bool) {
	p := buildDouble(t)
	needsDouble(t, "its GPU and transfer counters")
	want, err := runGPUModel(t, p, gpuDevice(t, p, opts))
	require.NoError(t, err)
	require.Equal(t, dev, want.kvDev)
	broken := func(name string, b func(rt *runtimeCtx, s slot, a uintptr) (uintptr, error)) (gpuRun, error) {
		orig := usmBinder
		usmBinder = b
		defer func() { usmBinder = orig }()
		r, err := runGPUModel(t, p, gpuDevice(t, p, opts))
		t.Logf("%s: err %v, last step %+v", name, err, r.last)
		return r, err
	}

	// A plain host tensor over the USM memory: right values, copied; over
	// device memory, which the host cannot address, refused.
	r, err := broken("host tensor over USM", func(rt *runtimeCtx, s slot, a uintptr) (uintptr, error) {
		return rt.lib.hostTensor(s.et, s.shape, a)
	})
	if dev {
		require.ErrorIs(t, err, ErrNative)
		require.Contains(t, err.Error(), "lies in USM device memory, which the host cannot address")
	} else {
		require.NoError(t, err)
		require.Equal(t, want.logits, r.logits)
		require.Equal(t, r.last.kvInSize, r.last.kvIn, "the double counts the upload of every KV cache")
		require.Positive(t, r.last.kvOut)
	}

	// Remote tensors one cache row (of K) past the tensor's memory: the
	// last cache of the buffer reaches past the allocation.
	_, err = broken("one row off", func(rt *runtimeCtx, s slot, a uintptr) (uintptr, error) {
		return rt.usmTensor(s.et, s.shape, a+uintptr(genmodel.Default().Embd/2*4))
	})
	require.ErrorIs(t, err, ErrNative)
	require.Contains(t, err.Error(), "lies in no USM allocation of this GPU context")

	// Every KV port bound to the first cache's memory (all caches have one
	// size here): inside the allocation, accepted, and the double computes
	// with what is bound, so the logits show it.
	var first uintptr
	r, err = broken("all on one cache", func(rt *runtimeCtx, s slot, a uintptr) (uintptr, error) {
		if first == 0 {
			first = a
		}
		return rt.usmTensor(s.et, s.shape, first)
	})
	require.NoError(t, err)
	require.NotEqual(t, want.logits, r.logits, "aliased caches must change the logits")
	require.Zero(t, r.last.kvIn+r.last.kvOut)

	// Remote tensors made in a context of their own, not the compiled
	// model's: refused when made (the memory is no allocation of it).
	otherContext := func(rt *runtimeCtx) uintptr {
		n := rt.lib
		fn, err := n.lib.Sym("ov_core_create_context")
		require.NoError(t, err)
		var c uintptr
		d := cstr(rt.device)
		require.NoError(t, n.call("ov_core_create_context", fn, rt.core, uintptr(unsafe.Pointer(d)), 0, uintptr(unsafe.Pointer(&c))))
		return c
	}
	_, err = broken("another context", func(rt *runtimeCtx, s slot, a uintptr) (uintptr, error) {
		saved := rt.usm.ctx
		rt.usm.ctx = otherContext(rt)
		defer func() { rt.usm.ctx = saved }()
		return rt.usmTensor(s.et, s.shape, a)
	})
	require.ErrorIs(t, err, ErrNative)
	require.Contains(t, err.Error(), "lies in no USM allocation of this GPU context")

	// The whole cache in another context's memory: its tensors are made,
	// and the request refuses them when bound.
	other := gpuDevice(t, p, opts)
	other.rt.usm.once.Do(func() { other.rt.usm.ctx = otherContext(other.rt) })
	_, err = runGPUModel(t, p, other)
	t.Logf("cache in another context: %v", err)
	require.ErrorIs(t, err, ErrNative)
	require.Contains(t, err.Error(), "belongs to another remote context than the compiled model's")

	// Host memory passed as USM memory.
	scratch, free, err := hostAlloc(1 << 20)
	require.NoError(t, err)
	defer free()
	_, err = broken("host memory as USM", func(rt *runtimeCtx, s slot, a uintptr) (uintptr, error) {
		return rt.usmTensor(s.et, s.shape, uintptr(unsafe.Pointer(&scratch[0])))
	})
	require.ErrorIs(t, err, ErrNative)
	require.Contains(t, err.Error(), "lies in no USM allocation")
}

// The rule is upstream's: only a GPU, not stateful, not the static path,
// and only buffers with a cache_* tensor; on the CPU plugin (the one the
// real-runtime tests run) nothing changes and no remote call is made.
func TestKVCacheUSMOnlyWhereUpstreamPutsIt(t *testing.T) {
	p := buildDouble(t)
	kv := func(dev *device, name string) *graph.Tensor {
		c := graph.NewContext(graph.ContextOptions{})
		x := c.SetName(c.NewTensor(quant.F16, 64, 16), name)
		b, err := buffer.AllocContextTensors(c, dev.BufferType())
		require.NoError(t, err)
		t.Cleanup(func() { b.Free() })
		return x
	}
	inUSM := func(x *graph.Tensor) bool { return x.Extra.(*tensorExtra).st.usm != 0 }
	var c0 int64
	if realLibrary() == "" {
		c0 = doubleStat(t, p, "calls.ov_core_get_default_context")
	}
	cpu := openDevice(t, p, Options{})
	require.False(t, inUSM(kv(cpu, "cache_k_l0")), "CPU")
	if realLibrary() == "" {
		require.Equal(t, c0, doubleStat(t, p, "calls.ov_core_get_default_context"), "no remote call on the CPU")
	}
	needsDouble(t, "a GPU")
	gpu := gpuDevice(t, p, Options{})
	require.True(t, inUSM(kv(gpu, "cache_k_l0")), "GPU KV cache")
	require.NotNil(t, kv(gpu, "cache_k_l1").Extra.(*tensorExtra).st.dev, "in USM device memory")
	require.Nil(t, kv(gpuDevice(t, p, Options{noKVDevice: true}), "cache_k_l0").Extra.(*tensorExtra).st.dev, "in USM host memory")
	require.False(t, inUSM(kv(gpu, "blk.0.attn_q.weight")), "GPU, not a cache")
	require.False(t, inUSM(kv(gpuDevice(t, p, Options{StatefulExecution: true}), "cache_k_l0")), "GPU, stateful")
	require.False(t, inUSM(kv(gpuDevice(t, p, Options{ForceStatic: true}), "cache_k_l0")), "GPU, static path")
	c := graph.NewContext(graph.ContextOptions{})
	x := c.SetName(c.NewTensor(quant.F16, 64, 16), "cache_v_l0")
	hb, err := buffer.AllocContextTensors(c, gpu.HostType())
	require.NoError(t, err)
	defer hb.Free()
	require.False(t, inUSM(x), "the host buffer type")
	// Sizes as the default placement: a planner must not change them.
	c2 := graph.NewContext(graph.ContextOptions{})
	c2.NewTensor(quant.F16, 65, 3)
	c2.NewTensor(quant.F32, 7)
	n, err := buffer.ContextTensorsSize(c2, gpu.BufferType())
	require.NoError(t, err)
	require.EqualValues(t, 416+32, n)
}

// Without the remote-context API (a library lacking
// ov_remote_context_create_host_tensor) the cache stays in host memory,
// bound and copied as before, with the same logits; without what device
// memory needs (libOpenCL, the USM extension, the tensor's parameters) it
// is USM host memory, with the reason logged and in `ggml devices`; a
// failing allocation is an error naming the memory. The double only.
func TestKVCacheUSMFallbacks(t *testing.T) {
	want, err := runGPUModel(t, buildDouble(t), gpuDevice(t, buildDouble(t), Options{noKVUSM: true}))
	require.NoError(t, err)
	p := buildDouble(t, "--omit", "ov_remote_context_create_host_tensor")
	dev := gpuDevice(t, p, Options{})
	require.Error(t, dev.rt.lib.remoteAPI())
	got, err := runGPUModel(t, p, dev)
	require.NoError(t, err)
	require.False(t, got.kvUSM)
	require.Equal(t, got.last.kvInSize, got.last.kvIn, "host memory: copied")
	require.Equal(t, want.logits, got.logits)
	require.Contains(t, strings.Join(dev.LibraryReport(), "\n"), "KV cache: host memory (openvino: the library has no ov_remote_context_create_host_tensor")

	for _, c := range []struct {
		name, knob string
		flags      []string
		reason     string
	}{
		{"no libOpenCL", "", []string{"--no-opencl"}, "libOpenCL.so.1: cannot open shared object file"},
		{"no USM extension", "no_usm", nil, "the GPU's OpenCL device lacks cl_intel_unified_shared_memory"},
		{"no tensor parameters", "", []string{"--omit", "ov_remote_tensor_get_params"}, "the library has no ov_remote_tensor_get_params"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := buildDouble(t, c.flags...)
			if c.knob != "" {
				knob(t, p, "ocl", c.knob)
			}
			dev := gpuDevice(t, p, Options{})
			_, err := dev.rt.deviceQueue()
			require.ErrorContains(t, err, c.reason)
			got, err := runGPUModel(t, p, dev)
			require.NoError(t, err)
			require.True(t, got.kvUSM, "USM host memory")
			require.False(t, got.kvDev)
			require.Zero(t, got.last.kvIn+got.last.kvOut)
			require.Equal(t, want.logits, got.logits)
			rep := strings.Join(dev.LibraryReport(), "\n")
			t.Logf("ggml devices: %s", rep)
			require.Contains(t, rep, "KV cache: USM host memory, not device memory (")
			require.Contains(t, rep, c.reason)
		})
	}
	rep := strings.Join(gpuDevice(t, buildDouble(t), Options{}).LibraryReport(), "\n")
	require.Contains(t, rep, "KV cache: USM device memory, through OpenCL")

	for _, mem := range kvMemories {
		t.Run("failing allocation, "+mem.name, func(t *testing.T) {
			p := buildDouble(t)
			dev := gpuDevice(t, p, mem.opts)
			knob(t, p, "fail", "tensor_create")
			_, err := runGPUModel(t, p, dev)
			require.Error(t, err)
			require.Contains(t, err.Error(), "in USM "+mem.name+" memory of GPU")
			require.True(t, errors.Is(err, ErrNative))
		})
	}
}

// GGML_OPENVINO_DISABLE_REMOTE_OUTPUTS, upstream's effect: the updated
// caches are bound as host memory and copied out after the infer, the
// caches read stay remote; the same logits. The double only.
func TestKVCacheUSMDisableRemoteOutputs(t *testing.T) {
	for _, mem := range kvMemories {
		t.Run(mem.name, func(t *testing.T) { disableRemoteOutputs(t, mem.opts, mem.dev) })
	}
}

// disableRemoteOutputs: in device memory the caches written go to host
// scratch memory and back through the queue.
func disableRemoteOutputs(t *testing.T, opts Options, dev bool) {
	p := buildDouble(t)
	needsDouble(t, "its GPU and transfer counters")
	want, err := runGPUModel(t, p, gpuDevice(t, p, opts))
	require.NoError(t, err)
	o, err := optionsFrom(envMap(map[string]string{EnvPrefix + "DISABLE_REMOTE_OUTPUTS": "1"}))
	require.NoError(t, err)
	require.True(t, o.DisableRemoteOutputs)
	o.noKVDevice = opts.noKVDevice
	c0 := doubleStat(t, p, "ocl.memcpy_bytes")
	got, err := runGPUModel(t, p, gpuDevice(t, p, o))
	require.NoError(t, err)
	t.Logf("decode step, remote outputs disabled: %+v", got.last)
	require.True(t, got.kvUSM)
	require.Equal(t, dev, got.kvDev)
	if dev {
		// 4 steps, each writing back every cache written.
		require.EqualValues(t, 4*got.last.kvOutSize, doubleStat(t, p, "ocl.memcpy_bytes")-c0, "written back through the queue")
	}
	require.Zero(t, got.last.kvIn, "the caches read stay remote")
	require.Equal(t, got.last.kvOutSize, got.last.kvOut, "the caches written are downloaded")
	require.Positive(t, got.last.kvOut)
	require.Zero(t, want.last.kvOut)
	require.Equal(t, want.logits, got.logits)
}

// Where no GPU is usable, asking for the remote context is an error with
// OpenVINO's message, on the double and on the real runtime (its GPU
// plugin without OpenCL, its CPU plugin without remote contexts): what
// NewSession reports when a GPU's cache cannot be allocated.
func TestRemoteContextErrorsCarryOpenVINOMessage(t *testing.T) {
	p := buildDouble(t)
	d := openDevice(t, p, Options{})
	for _, dev := range []string{"CPU", "GPU"} {
		rt := &runtimeCtx{lib: d.rt.lib, core: d.rt.core, device: dev}
		_, err := rt.remoteContext()
		t.Logf("%s: %v", dev, err)
		require.ErrorIs(t, err, ErrNative, dev)
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "ov_core_get_default_context", e.Func)
		require.NotEmpty(t, e.Msg)
		if dev == "CPU" {
			require.Contains(t, e.Msg, "get_default_context is not supported by CPU plugin!")
		}
		_, _, err = rt.usmHost(64)
		require.ErrorIs(t, err, ErrNative, "the allocation reports the context's error")
	}
}

// Sessions one after another: a new session's cache allocated where the
// last one's was freed (the same address) gets remote tensors over the new
// allocation, not the request's old ones, whose USM memory the double
// knows is freed ("the USM memory of the input tensor 3 was freed" before
// the binding kept the storage beside the address); the logits are the
// same in every session. The double only.
func TestKVCacheUSMSessionsReuseAddresses(t *testing.T) {
	p := buildDouble(t)
	needsDouble(t, "a GPU")
	dev := gpuDevice(t, p, Options{})
	var be *ovBackend
	testBackendHook = func(b *ovBackend) { be = b }
	defer func() { testBackendHook = nil }()
	path := filepath.Join(t.TempDir(), "model.gguf")
	require.NoError(t, genmodel.WriteFile(path, genmodel.Default()))
	m, err := model.Open(path, model.Options{Device: dev, Threads: 1})
	require.NoError(t, err)
	defer m.Close()
	var out [][]float32
	seen := map[uintptr]int{}
	reused := false
	// Whether the allocator hands a freed cache's address out again is
	// its choice (it did not once in a few runs in three sessions): up to
	// eight sessions, stopping at the first reuse after the third.
	for i := 0; i < 8 && !(reused && i >= 3); i++ {
		s, err := m.NewSession(model.SessionOptions{Ctx: 64, Batch: 16})
		require.NoError(t, err)
		for _, tok := range [][]int32{{1, 5, 9}, {7}} {
			lg, err := s.Decode(context.Background(), tok, nil)
			require.NoError(t, err, "session %d", i)
			out = append(out, lg[len(lg)-1])
		}
		st := usmStorages(be)
		require.NotEmpty(t, st)
		seen[st[0].Base()]++
		reused = reused || seen[st[0].Base()] > 1
		require.NoError(t, s.Close())
	}
	for i := 2; i < len(out); i++ {
		require.Equal(t, out[i%2], out[i], "session %d", i/2)
	}
	require.True(t, reused, "no session's cache was allocated where an earlier one's was: the case is not exercised (%v)", seen)
}
