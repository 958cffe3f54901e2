package openvino

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// The KV cache in USM device memory (usm.go, ocl.go) on the double's GPU
// and OpenCL (testdata/ovd_ocl.c): memory the host cannot address, a queue
// whose commands happen only when waited for. Every claim here is the
// double's only: no GPU here.

// deviceCaches are two F16 caches (64 x 16) in one buffer of the GPU's
// device type, as a session allocates them.
func deviceCaches(t *testing.T, dev *device) (k, v *graph.Tensor, b buffer.Buffer) {
	t.Helper()
	c := graph.NewContext(graph.ContextOptions{})
	k = c.SetName(c.NewTensor(quant.F16, 64, 16), "cache_k_l0")
	v = c.SetName(c.NewTensor(quant.F16, 64, 16), "cache_v_l0")
	b, err := buffer.AllocContextTensors(c, dev.BufferType())
	require.NoError(t, err)
	t.Cleanup(func() { b.Free() })
	return k, v, b
}

// withQueue makes dev's storages from now on, and those of the tensors
// in, use its queue wrapped by wrap (a wrong use of the queue a test
// shows the double catching).
func withQueue(t *testing.T, dev *device, wrap func(*clQueue) devQueue, in ...*graph.Tensor) {
	t.Helper()
	q, err := dev.rt.deviceQueue()
	require.NoError(t, err)
	dev.rt.usm.q = wrap(q.(*clQueue))
	for _, x := range in {
		x.Extra.(*tensorExtra).st.dev = dev.rt.usm.q
	}
}

// Set, get, memset, clear and copies of tensors in device memory go
// through the queue and give the bytes written; no host access faults.
func TestKVCacheUSMDeviceTensorIO(t *testing.T) {
	p := buildDouble(t)
	needsDouble(t, "a GPU and its OpenCL")
	dev := gpuDevice(t, p, Options{})
	k, v, b := deviceCaches(t, dev)
	require.NotNil(t, k.Extra.(*tensorExtra).st.dev, "in device memory")
	require.Nil(t, k.Data, "device memory has no host view")
	n := k.NBytes()
	get := func(x *graph.Tensor) []byte {
		out := make([]byte, n)
		require.NoError(t, buffer.GetTensor(x, out, 0))
		return out
	}
	require.Equal(t, make([]byte, n), get(k), "a new buffer reads as zeros (the double's device memory starts as 0xff)")

	r := rand.New(rand.NewPCG(1, 2))
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	c0 := doubleStat(t, p, "ocl.memcpy_bytes")
	require.NoError(t, buffer.SetTensor(k, want, 0))
	require.Equal(t, want, get(k))
	require.NoError(t, buffer.SetTensor(k, []byte{1, 2, 3}, 5))
	copy(want[5:], []byte{1, 2, 3})
	require.Equal(t, want, get(k), "a partial set")
	require.NoError(t, b.MemsetTensor(k, 9, 7, 100))
	copy(want[7:107], bytes.Repeat([]byte{9}, 100))
	require.Equal(t, want, get(k), "a memset")
	require.Greater(t, doubleStat(t, p, "ocl.memcpy_bytes")-c0, int64(3*n))

	require.NoError(t, buffer.CopyTensor(k, v), "device to device")
	require.Equal(t, want, get(v))
	host := &graph.Tensor{Type: k.Type, Ne: k.Ne, Nb: k.Nb, Data: bytes.Repeat([]byte{4}, int(n))}
	require.NoError(t, buffer.CopyTensor(host, k), "host to device")
	require.Equal(t, host.Data, get(k))
	cpu := graph.NewContext(graph.ContextOptions{})
	dst := cpu.NewTensor(quant.F16, 64, 16)
	cb, err := buffer.AllocContextTensors(cpu, buffer.CPU())
	require.NoError(t, err)
	defer cb.Free()
	require.NoError(t, buffer.CopyTensor(v, dst), "device to host, the scheduler's copy")
	require.Equal(t, want, dst.Data)

	require.NoError(t, b.Clear(7))
	require.Equal(t, bytes.Repeat([]byte{7}, int(n)), get(v))
	require.Zero(t, doubleStat(t, p, "ocl.pending"), "every command waited for")
}

// The host cannot touch the double's device memory: a read of it faults
// (caught here with SetPanicOnFault), and so does a queue that sets, gets
// and fills as if the memory were the host's: the double fails our code
// the moment it bypasses the queue.
func TestKVCacheUSMDeviceHostAccessFaults(t *testing.T) {
	p := buildDouble(t)
	needsDouble(t, "a GPU and its OpenCL")
	dev := gpuDevice(t, p, Options{})
	k, _, _ := deviceCaches(t, dev)
	base := addr(k)
	fault := func(f func()) (at uintptr) {
		t.Helper()
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			e := recover()
			require.NotNil(t, e, "no fault")
			re, ok := e.(interface{ Addr() uintptr })
			require.True(t, ok, "not a memory fault: %v", e)
			at = re.Addr()
		}()
		f()
		return 0
	}
	at := fault(func() { _ = *(*byte)(cPtr(base)) })
	require.Equal(t, base, at, "a host read of device memory")

	withQueue(t, dev, func(q *clQueue) devQueue { return hostQueue{q} }, k)
	at = fault(func() { _ = buffer.SetTensor(k, []byte{1, 2, 3, 4}, 8) })
	require.Equal(t, base+8, at, "a host memcpy into device memory")
	at = fault(func() { deviceCaches(t, dev) })
	require.NotZero(t, at, "a host memset of a new buffer")
}

// hostQueue uses device memory as host memory: what a set-tensor written
// for host buffers would do.
type hostQueue struct{ *clQueue }

func (hostQueue) write(dst uintptr, data []byte) error {
	copy(unsafe.Slice((*byte)(cPtr(dst)), len(data)), data)
	return nil
}

func (hostQueue) setBytes(dst uintptr, v byte, n uint64) error {
	clear(unsafe.Slice((*byte)(cPtr(dst)), n))
	return nil
}

// A command not waited for has not happened: a get-tensor by a
// non-blocking copy without clFinish reads nothing (the bytes arrive at
// the next wait), and fills without clFinish leave a new session's
// cache as the device's garbage when the first infer reads it (the
// double counts the stale infer, and the logits are NaN). Ours wait.
func TestKVCacheUSMDeviceUnfinishedIsStale(t *testing.T) {
	p := buildDouble(t)
	needsDouble(t, "a GPU and its OpenCL")
	dev := gpuDevice(t, p, Options{})
	k, _, _ := deviceCaches(t, dev)
	want := bytes.Repeat([]byte{0x3c, 0x00}, int(k.NBytes()/2))
	require.NoError(t, buffer.SetTensor(k, want, 0))
	withQueue(t, dev, func(q *clQueue) devQueue { return asyncReadQueue{q} }, k)
	got := make([]byte, k.NBytes())
	require.NoError(t, buffer.GetTensor(k, got, 0))
	require.Equal(t, make([]byte, len(got)), got, "read before the copy happened")
	require.Positive(t, doubleStat(t, p, "ocl.pending"))
	q := dev.rt.usm.q.(asyncReadQueue)
	require.NoError(t, clCall("clFinish", q.cl.finish, q.q))
	require.Equal(t, want, got, "the copy happened at the wait")
	runtime.KeepAlive(got)

	good, err := runGPUModel(t, p, gpuDevice(t, p, Options{}))
	require.NoError(t, err)
	dev = gpuDevice(t, p, Options{})
	withQueue(t, dev, func(q *clQueue) devQueue { return noFinishQueue{q} })
	s0, f0 := doubleStat(t, p, "ocl.stale_infers"), doubleStat(t, p, "ocl.freed_pending")
	bad, err := runGPUModel(t, p, dev)
	require.NoError(t, err)
	require.Greater(t, doubleStat(t, p, "ocl.stale_infers"), s0, "the double saw an infer before the fills")
	require.NotEqual(t, good.logits, bad.logits)
	require.True(t, math.IsNaN(float64(bad.logits[0][0])), "the cache read was the device's garbage (0xff: NaN)")
	require.Greater(t, doubleStat(t, p, "ocl.freed_pending"), f0,
		"the unfinished fills outlived the cache: the double dropped them instead of writing freed memory")
	q2 := dev.rt.usm.q.(noFinishQueue)
	require.NoError(t, clCall("clFinish", q2.cl.finish, q2.q))
}

// asyncReadQueue reads without blocking or waiting.
type asyncReadQueue struct{ *clQueue }

func (q asyncReadQueue) read(src uintptr, data []byte) error {
	return clCall(clEnqueueMemcpyINTELName, q.memcpy, q.q, 0, uintptr(unsafe.Pointer(&data[0])), src, uintptr(len(data)), 0, 0, 0)
}

// noFinishQueue fills without clFinish after.
type noFinishQueue struct{ *clQueue }

func (q noFinishQueue) setBytes(dst uintptr, v byte, n uint64) error {
	pat := []byte{v}
	return clCall(clEnqueueMemFillINTEL, q.fill, q.q, dst, uintptr(unsafe.Pointer(&pat[0])), 1, uintptr(n), 0, 0, 0)
}

// A fill pattern of 4 bytes (a word-wide memset) over a range that is no
// multiple of it, or not aligned to it, is refused with OpenCL's code,
// which the error names; ours (1 byte, upstream's) takes any range.
func TestKVCacheUSMDeviceFillPattern(t *testing.T) {
	p := buildDouble(t)
	needsDouble(t, "a GPU and its OpenCL")
	dev := gpuDevice(t, p, Options{})
	k, _, b := deviceCaches(t, dev)
	require.NoError(t, b.MemsetTensor(k, 1, 2, 6))
	withQueue(t, dev, func(q *clQueue) devQueue { return wideFillQueue{q} }, k)
	err := b.MemsetTensor(k, 1, 2, 6)
	require.ErrorIs(t, err, ErrNative)
	require.EqualError(t, err, "openvino: clEnqueueMemFillINTEL: CL_INVALID_VALUE (-30)")
	require.NoError(t, b.MemsetTensor(k, 1, 4, 8), "aligned, a multiple: accepted")
}

// wideFillQueue fills with the byte repeated 4 times.
type wideFillQueue struct{ *clQueue }

func (q wideFillQueue) setBytes(dst uintptr, v byte, n uint64) error {
	pat := []byte{v, v, v, v}
	if err := clCall(clEnqueueMemFillINTEL, q.fill, q.q, dst, uintptr(unsafe.Pointer(&pat[0])), 4, uintptr(n), 0, 0, 0); err != nil {
		return err
	}
	return clCall("clFinish", q.cl.finish, q.q)
}

// Sessions on device memory one after another free their caches: the
// double's live USM allocations return to their count, and no queue is
// left with commands; the two sessions' logits are the same.
func TestKVCacheUSMDeviceSessionsFree(t *testing.T) {
	p := buildDouble(t)
	needsDouble(t, "a GPU and its OpenCL")
	dev := gpuDevice(t, p, Options{})
	path := filepath.Join(t.TempDir(), "model.gguf")
	require.NoError(t, genmodel.WriteFile(path, genmodel.Default()))
	m, err := model.Open(path, model.Options{Device: dev, Threads: 1})
	require.NoError(t, err)
	defer m.Close()
	var first []float32
	for i := range 2 {
		live := doubleStat(t, p, "usm.live")
		s, err := m.NewSession(model.SessionOptions{Ctx: 64, Batch: 16})
		require.NoError(t, err)
		require.Greater(t, doubleStat(t, p, "usm.live"), live, "the session's cache")
		lg, err := s.Decode(context.Background(), []int32{1, 5, 9}, nil)
		require.NoError(t, err)
		if i == 0 {
			first = lg[len(lg)-1]
		} else {
			require.Equal(t, first, lg[len(lg)-1])
		}
		require.NoError(t, s.Close())
		require.Equal(t, live, doubleStat(t, p, "usm.live"), "session %d freed its cache", i)
	}
	require.Zero(t, doubleStat(t, p, "ocl.pending"))
}
