package rpc

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
	"github.com/ggml-go/ggml/quant"
)

// smallGraph computes (a+b)*a over n floats on d, with a and b given,
// through d's own buffers, and returns the result.
func smallGraph(t *testing.T, d backend.Device, a, b []float32) []float32 {
	t.Helper()
	ctx := graph.NewContext(graph.ContextOptions{})
	ta := graph.SetInput(ctx.NewTensor(quant.F32, int64(len(a))))
	tb := graph.SetInput(ctx.NewTensor(quant.F32, int64(len(b))))
	y := graph.SetOutput(ctx.Mul(ctx.Add(ta, tb), ta))
	g, err := ctx.Build(y)
	require.NoError(t, err)
	ga, err := buffer.NewGraphAllocator(d.BufferType())
	require.NoError(t, err)
	defer ga.Free()
	require.NoError(t, ga.AllocGraph(g))
	be, err := d.Init(backend.Options{Threads: 1})
	require.NoError(t, err)
	defer be.Close()
	require.NoError(t, backend.SetFloat32(be, ta, a))
	require.NoError(t, backend.SetFloat32(be, tb, b))
	require.NoError(t, backend.Compute(be, g))
	out, err := backend.GetFloat32(be, y)
	require.NoError(t, err)
	return out
}

func waves(n int, f func(float64) float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(f(float64(i) / 7))
	}
	return v
}

// requireDevicesCompute checks that ds are distinct devices of the server
// at addr, numbered in order, and that each computes a small graph as the
// local CPU does.
func requireDevicesCompute(t *testing.T, addr string, ds []backend.Device) {
	t.Helper()
	a, b := waves(300, math.Sin), waves(300, math.Cos)
	want := smallGraph(t, cpu.Device(), a, b)
	for i, d := range ds {
		rd := d.(*Device)
		require.Equal(t, fmt.Sprintf("%s device %d", addr, i), rd.Description())
		if i > 0 {
			prev := ds[i-1].(*Device)
			require.NotEqual(t, prev.Name(), rd.Name())
			require.NotSame(t, prev.BufferType(), rd.BufferType(), "devices %d and %d share a buffer type", i-1, i)
		}
		require.Equal(t, want, smallGraph(t, d, a, b), "device %d (%s)", i, d.Name())
	}
}

// TestServerDevices serves two devices from one server of ours (the CPU
// and a fake accelerator with memory of its own) and from one of ggml's
// (its CPU listed twice with -d CPU,CPU): our client sees two devices of
// each, ggml's client two of ours, and every device computes.
func TestServerDevices(t *testing.T) {
	fake := devtest.New(devtest.Config{Name: "FAKE0", Type: backend.DeviceGPU})
	addr := startServer(t, &Server{Devices: []backend.Device{cpu.Device(), fake}, Threads: 1})
	ds := connect(t, addr, Options{})
	require.Len(t, ds, 2)
	requireDevicesCompute(t, addr, ds)
	// The devices' memory is asked per device: the fake device has none.
	_, total := ds[1].Memory()
	require.Zero(t, total)
	_, total = ds[0].Memory()
	require.NotZero(t, total)

	c := rpcref.NewClient(t, addr, false)
	require.Equal(t, 2, c.Devices, "ggml's client counts the devices of our server")

	real := rpcref.StartServer(t, rpcref.Config{Devices: []string{"CPU", "CPU"}})
	rds := connect(t, real.Addr, Options{})
	require.Len(t, rds, 2)
	requireDevicesCompute(t, real.Addr, rds)
}

// TestChunkedTransfers makes the client's largest request 1000 bytes, so
// that a 10000-byte tensor is set, read and filled in pieces, with our
// server and ggml's: the bytes come back whole, and the request count
// shows in the traffic.
func TestChunkedTransfers(t *testing.T) {
	old := maxCopy
	maxCopy = 1000
	t.Cleanup(func() { maxCopy = old })
	for _, srv := range []struct {
		name string
		addr func() string
	}{
		{"ours", func() string { return startServer(t, &Server{}) }},
		{"ggml's", func() string { return rpcref.StartServer(t, rpcref.Config{}).Addr }},
	} {
		t.Run(srv.name, func(t *testing.T) {
			d := connect(t, srv.addr(), Options{})[0].(*Device)
			x, b := tensorOn(t, d, 2500)
			defer b.Free()
			data := make([]byte, 10000)
			for i := range data {
				data[i] = byte(i*7 + i/251)
			}
			s0, _ := d.Traffic()
			require.NoError(t, buffer.SetTensor(x, data, 0))
			s1, _ := d.Traffic()
			// Ten SET_TENSOR requests, each with its header.
			require.Equal(t, uint64(10*(9+setTensorHeader)+len(data)), s1-s0)
			got := make([]byte, len(data))
			require.NoError(t, buffer.GetTensor(x, got, 0))
			require.Equal(t, data, got)
			// A fill of 2500 bytes from byte 3333, then the whole tensor read.
			st, at, err := buffer.Locate(x)
			require.NoError(t, err)
			require.NoError(t, st.(*storage).Fill(at+3333, 2500, 0xAB))
			for i := 3333; i < 3333+2500; i++ {
				data[i] = 0xAB
			}
			require.NoError(t, buffer.GetTensor(x, got, 0))
			require.Equal(t, data, got)
		})
	}
}

// TestEnvServers lists the servers of GGML_RPC_SERVERS: a server's devices
// in order, and one that cannot be reached as an unavailable device saying
// why.
func TestEnvServers(t *testing.T) {
	addr := startServer(t, &Server{Devices: []backend.Device{cpu.Device(), cpu.Device()}})
	t.Setenv(EnvServers, " "+addr+", 127.0.0.1:1 ,")
	r := &registry{}
	ds := r.Devices()
	require.Len(t, ds, 3)
	for i, d := range ds[:2] {
		require.Equal(t, fmt.Sprintf("RPC%d", i), d.Name())
		require.NoError(t, backend.Availability(d))
	}
	require.Equal(t, "RPC[127.0.0.1:1]", ds[2].Name())
	err := backend.Availability(ds[2])
	require.ErrorIs(t, err, backend.ErrUnavailable)
	require.ErrorIs(t, err, ErrLost)
	require.Contains(t, err.Error(), "127.0.0.1:1")
	for _, d := range ds[:2] {
		d.(*Device).c.close()
	}
	// llama.cpp's variable when GGML_RPC_SERVERS is unset, not beside it.
	t.Setenv(EnvLlamaServers, "127.0.0.1:2")
	o, err := ClientOptionsFromEnv()
	require.NoError(t, err)
	require.Equal(t, []string{addr, "127.0.0.1:1"}, o.Servers)
	require.NoError(t, os.Unsetenv(EnvServers))
	o, err = ClientOptionsFromEnv()
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1:2"}, o.Servers)
}
