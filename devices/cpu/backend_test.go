package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

func TestDeviceRegistered(t *testing.T) {
	require.Contains(t, backend.Registries(), Registry())
	require.Contains(t, backend.Devices(), Device())
	d, err := backend.DeviceByName("cpu")
	require.NoError(t, err)
	require.Same(t, Device(), d)
	d, err = backend.DeviceByType(backend.DeviceCPU)
	require.NoError(t, err)
	require.Same(t, Device(), d)
	require.ErrorIs(t, backend.Register(&registry{}), backend.ErrDuplicate)
}

func TestInitBestCPU(t *testing.T) {
	for _, env := range []string{"", "CPU", "OPENVINO0,CPU", "cpu"} {
		t.Setenv(backend.EnvDevice, env)
		b, err := backend.InitBest()
		require.NoError(t, err, env)
		require.Equal(t, "CPU", b.Name())
		require.Same(t, Device(), b.Device())
		require.NoError(t, b.Close())
	}
	t.Setenv(backend.EnvDevice, "OPENVINO0")
	_, err := backend.InitBest()
	require.ErrorIs(t, err, backend.ErrNotFound)
}

// TestDeviceParams: GGML_DEVICE's CPU parameters are threads only; a typo
// or a value that is no thread count is an error naming the device, the
// key and the value, never a backend started as if nothing were said.
func TestDeviceParams(t *testing.T) {
	for env, threads := range map[string]int{"CPU:threads=3": 3, "cpu:threads=0": 0} {
		t.Setenv(backend.EnvDevice, env)
		b, err := backend.InitBest()
		require.NoError(t, err, env)
		if threads == 0 {
			threads = runtime.GOMAXPROCS(0)
		}
		require.Equal(t, threads, b.(interface{ Threads() int }).Threads(), env)
		require.NoError(t, b.Close())
	}
	for env, want := range map[string]string{
		"CPU:typo=1":        `device CPU has no parameter "typo" (given typo="1"; it has threads)`,
		"CPU:threads=abc":   `device CPU: parameter threads="abc": want a thread count`,
		"CPU:threads=-1":    `threads="-1"`,
		"CPU:threads=99999": `threads="99999"`,
	} {
		t.Setenv(backend.EnvDevice, env)
		_, err := backend.InitBest()
		require.ErrorIs(t, err, backend.ErrArgument, env)
		var pe *backend.ParamError
		require.ErrorAs(t, err, &pe, env)
		require.ErrorContains(t, err, want, env)
		require.NotContains(t, err.Error(), "%!", env)
	}
}

func TestDeviceProps(t *testing.T) {
	d := Device()
	p := d.Props()
	require.Equal(t, "CPU", p.Name)
	require.Equal(t, backend.DeviceCPU, p.Type)
	require.NotEmpty(t, p.Description)
	require.Equal(t, backend.Caps{BufferFromHostPtr: true, Mmap: true}, p.Caps, "ggml's CPU caps")
	require.LessOrEqual(t, p.MemoryFree, p.MemoryTotal)
	require.Same(t, buffer.CPU(), d.BufferType())
	require.True(t, d.SupportsBufferType(buffer.CPU()))
	require.False(t, d.SupportsBufferType(nil))
	_, ok := d.(backend.HostBufferTyper)
	require.False(t, ok, "no host buffer type, as host_buffer=false")

	hm, ok := d.(backend.HostMemoryBufferer)
	require.True(t, ok)
	b, err := hm.BufferFromHostMemory(nil, 0)
	require.NoError(t, err)
	require.Equal(t, "CPU_Mapped", b.Name())
	require.NoError(t, b.Free())

	c := graph.NewContext(graph.ContextOptions{})
	a := c.NewTensor(quant.F32, 4)
	require.True(t, d.SupportsOp(c.Add(a, a)))
	require.False(t, d.OffloadOp(c.Add(a, a)))
}

func TestParseMeminfo(t *testing.T) {
	const info = "MemTotal:       16303460 kB\nMemFree:          500000 kB\nMemAvailable:    8000000 kB\nBuffers: x kB\nbogus\n"
	free, total := parseMeminfo(strings.NewReader(info))
	require.Equal(t, uint64(16303460*1024), total)
	require.Equal(t, uint64(8000000*1024), free)
	free, total = parseMeminfo(strings.NewReader("MemTotal: 100 kB\nMemFree: 40 kB\n"))
	require.Equal(t, uint64(40*1024), free, "kernels without MemAvailable")
	require.Equal(t, uint64(100*1024), total)
	free, total = parseMeminfo(strings.NewReader(""))
	require.Zero(t, free+total)

	require.Equal(t, "Intel(R) Xeon(R) CPU @ 2.20GHz",
		parseCPUModel(strings.NewReader("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz \nmodel name\t: other\n")))
	require.Empty(t, parseCPUModel(strings.NewReader("processor\t: 0\nBogoMIPS\t: 50\n")))
}

// smallGraph builds gelu(w·x + bias) followed by a scaled soft_max, with
// x, w and bias as inputs.
func smallGraph(t *testing.T, alloc bool) (g *graph.Graph, in []*graph.Tensor, out *graph.Tensor) {
	c := graph.NewContext(graph.ContextOptions{Alloc: alloc})
	x := graph.SetInput(c.NewTensor(quant.F32, 16, 5))
	w := graph.SetInput(c.NewTensor(quant.F32, 16, 7))
	bias := graph.SetInput(c.NewTensor(quant.F32, 7, 1))
	h := c.GELU(c.Add(c.MulMat(w, x), bias))
	out = graph.SetOutput(c.SoftMax(c.Scale(h, 0.5)))
	g, err := c.Build(out)
	require.NoError(t, err)
	return g, []*graph.Tensor{x, w, bias}, out
}

func randomBytes(rng *rand.Rand, n int64) []byte {
	b := make([]byte, 4*n)
	for i := int64(0); i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(rng.Float32()*2-1))
	}
	return b
}

// TestBackendComputesLikeEngine: the backend, with its graph placed by the
// graph allocator in CPU buffers and inputs set through it, gives the bytes
// an Engine gives on the same graph in Go memory.
func TestBackendComputesLikeEngine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gRef, inRef, outRef := smallGraph(t, true)
	g, in, out := smallGraph(t, false)
	data := make([][]byte, len(in))
	for i, x := range in {
		data[i] = randomBytes(rng, x.NElements())
		copy(inRef[i].Data, data[i])
	}
	require.NoError(t, newEngine(t, 3).Compute(gRef))

	b, err := Device().Init(backend.Options{Threads: 3})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	ga, err := buffer.NewGraphAllocator(b.Device().BufferType())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ga.Free()) })
	require.NoError(t, ga.AllocGraph(g))
	for i, x := range in {
		require.NoError(t, b.SetTensorAsync(x, data[i], 0))
	}
	require.NoError(t, backend.Compute(b, g))
	got := make([]byte, out.NBytes())
	require.NoError(t, b.GetTensorAsync(out, got, 0))
	require.Equal(t, outRef.Data, got)

	// The same through the host-copy fallback of CopyTensorAsync.
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	dst := c.NewTensor(quant.F32, out.Ne[0], out.Ne[1])
	dstBuf, err := buffer.CPU().Alloc(dst.NBytes())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dstBuf.Free()) })
	dst.Data = nil
	require.NoError(t, dstBuf.AllocTensor(dst, 0))
	require.NoError(t, backend.CopyTensorAsync(b, b, out, dst))
	require.Equal(t, outRef.Data, dst.Data)
}

func TestBackendThreadsAndClose(t *testing.T) {
	b, err := Device().Init(backend.Options{Threads: 2})
	require.NoError(t, err)
	cb := b.(*cpuBackend)
	require.Equal(t, 2, cb.Threads())
	require.NoError(t, cb.SetThreads(4))
	require.Equal(t, 4, cb.Threads())

	g, _, _ := smallGraph(t, true)
	require.NoError(t, b.GraphCompute(g))
	require.ErrorIs(t, b.GraphCompute(nil), backend.ErrArgument)

	// Unplaced tensors are an error, not a crash.
	gu, in, _ := smallGraph(t, false)
	require.ErrorIs(t, b.GraphCompute(gu), ErrNoData)
	require.Error(t, b.SetTensorAsync(in[0], make([]byte, 4), 0))

	require.NoError(t, b.Close())
	require.NoError(t, b.Close())
	require.Zero(t, cb.Threads())
	require.ErrorIs(t, b.GraphCompute(g), backend.ErrClosed)
	require.ErrorIs(t, b.Synchronize(), backend.ErrClosed)
	require.ErrorIs(t, b.SetTensorAsync(in[0], nil, 0), backend.ErrClosed)
	require.ErrorIs(t, b.GetTensorAsync(in[0], nil, 0), backend.ErrClosed)
	require.ErrorIs(t, cb.SetThreads(1), backend.ErrClosed)
}

// TestBackendsConcurrently: separate backends on the CPU device compute at
// the same time without sharing state (run with -race).
func TestBackendsConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		g, _, _ := smallGraph(t, true)
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := backend.Init(backend.Options{Devices: []string{"CPU"}, Threads: 2})
			if !assertNoError(t, err) {
				return
			}
			defer b.Close()
			assertNoError(t, backend.Compute(b, g))
		}()
	}
	wg.Wait()
}

func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}
