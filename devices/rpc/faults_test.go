package rpc

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/envopt"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
	"github.com/ggml-go/ggml/quant"
)

// fakeServer answers just enough of the protocol for a client to connect
// and allocate a buffer; what it does with GET_TENSOR is the fault under
// test. hello is the version it claims.
type fakeServer struct {
	ln    net.Listener
	hello [3]byte
	get   func(nc net.Conn, n uint64) // answers a GET_TENSOR of n bytes
	wg    sync.WaitGroup
}

func startFake(t *testing.T, hello [3]byte, get func(nc net.Conn, n uint64)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeServer{ln: ln, hello: hello, get: get}
	var conns []net.Conn
	var mu sync.Mutex
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			f.wg.Add(1)
			go func() { defer f.wg.Done(); f.serve(nc) }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		f.wg.Wait()
	})
	return ln.Addr().String()
}

func (f *fakeServer) serve(nc net.Conn) {
	defer nc.Close()
	send := func(b []byte) { _, _ = nc.Write(append(u64(uint64(len(b))), b...)) }
	for {
		var h [9]byte
		if _, err := io.ReadFull(nc, h[:]); err != nil {
			return
		}
		body := make([]byte, binary.LittleEndian.Uint64(h[1:]))
		if _, err := io.ReadFull(nc, body); err != nil {
			return
		}
		switch command(h[0]) {
		case cmdHello:
			send(append(f.hello[:], make([]byte, 1+connCaps)...))
		case cmdDeviceCount:
			send(u32(1))
		case cmdGetAlignment:
			send(u64(32))
		case cmdGetMaxSize:
			send(u64(1 << 30))
		case cmdGetDeviceMemory:
			send(append(u64(1<<30), u64(1<<30)...))
		case cmdAllocBuffer:
			send(append(u64(7), body[4:12]...))
		case cmdBufferGetBase:
			send(u64(1 << 32))
		case cmdGetTensor:
			f.get(nc, binary.LittleEndian.Uint64(body[len(body)-8:]))
		}
	}
}

// openFDs counts the process's open file descriptors (linux), or -1.
func openFDs() int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es)
}

// leakCheck records the goroutines and descriptors now and, when the test
// ends, waits for them to come back to that (the connections closed).
func leakCheck(t *testing.T) {
	g0, f0 := runtime.NumGoroutine(), openFDs()
	t.Cleanup(func() {
		// Polled by hand: require.Eventually runs goroutines of its own.
		deadline := time.Now().Add(5 * time.Second)
		for (runtime.NumGoroutine() > g0 || openFDs() > f0) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		g1, f1 := runtime.NumGoroutine(), openFDs()
		require.LessOrEqual(t, g1, g0, "goroutines leaked")
		require.LessOrEqual(t, f1, f0, "descriptors leaked")
		t.Logf("goroutines %d -> %d, descriptors %d -> %d", g0, g1, f0, f1)
	})
}

// tensorOn places a tensor of n float32 on d.
func tensorOn(t *testing.T, d backend.Device, n int64) (*graph.Tensor, buffer.Buffer) {
	x := &graph.Tensor{Type: quant.F32, Ne: [4]int64{n, 1, 1, 1}, Nb: [4]uint64{4, 4 * uint64(n), 4 * uint64(n), 4 * uint64(n)}, Name: "x"}
	b, err := buffer.AllocTensors(d.BufferType(), []*graph.Tensor{x})
	require.NoError(t, err)
	return x, b
}

func TestFaultsReplies(t *testing.T) {
	for _, c := range []struct {
		name, want string
		get        func(nc net.Conn, n uint64)
	}{
		{"stops answering", "no answer within", func(net.Conn, uint64) {}},
		{"truncated reply", "EOF", func(nc net.Conn, n uint64) {
			_, _ = nc.Write(append(u64(n), make([]byte, n/2)...))
			_ = nc.Close()
		}},
		{"reply of the wrong size", "the reply has 17 bytes, want 16", func(nc net.Conn, n uint64) {
			_, _ = nc.Write(append(u64(n+1), make([]byte, n+1)...))
		}},
		{"connection reset", "reading the reply", func(nc net.Conn, _ uint64) {
			if tc, ok := nc.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = nc.Close()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			leakCheck(t)
			addr := startFake(t, [3]byte{ProtoMajor, ProtoMinor, ProtoPatch}, c.get)
			dev := connect(t, addr, Options{Timeout: 300 * time.Millisecond})[0].(*Device)
			x, b := tensorOn(t, dev, 4)
			be, err := dev.Init(backend.Options{})
			require.NoError(t, err)
			start := time.Now()
			_, err = backend.GetFloat32(be, x)
			took := time.Since(start)
			require.Error(t, err)
			require.ErrorIs(t, err, ErrLost)
			for _, s := range []string{addr, "GET_TENSOR", c.want} {
				require.Contains(t, err.Error(), s)
			}
			require.Less(t, took, 2*time.Second, "the error took %v", took)
			// The device says it is lost, to the registry too (which
			// then skips it); later calls fail at once.
			require.ErrorIs(t, dev.Err(), ErrLost)
			require.ErrorIs(t, backend.Availability(dev), backend.ErrUnavailable)
			require.ErrorIs(t, backend.Availability(dev), ErrLost)
			_, err = backend.GetFloat32(be, x)
			require.ErrorIs(t, err, ErrLost)
			require.NoError(t, b.Free())
			require.Error(t, be.Close())
			// The other devices stay usable.
			requireCPUWorks(t)
			dev.c.close()
		})
	}
}

// TestTimeoutFromEnv: GGML_RPC_TIMEOUT replaces the 60 s deadline of a
// client whose Options leave it 0 (a server that stops answering fails at
// the variable's deadline), Options.Timeout wins over it, and a value that
// is no duration is an error naming the variable, from Connect and as the
// reason of the registry's unavailable device.
func TestTimeoutFromEnv(t *testing.T) {
	leakCheck(t)
	silent := func(net.Conn, uint64) {}
	for _, c := range []struct {
		env  string
		opt  time.Duration
		want time.Duration
	}{
		{"250ms", 0, 250 * time.Millisecond},
		{"1", 0, time.Second},
		{"30s", 400 * time.Millisecond, 400 * time.Millisecond},
	} {
		t.Setenv(EnvTimeout, c.env)
		o, err := ClientOptionsFromEnv()
		require.NoError(t, err)
		if c.opt == 0 {
			require.Equal(t, c.want, o.Timeout)
		}
		addr := startFake(t, [3]byte{ProtoMajor, ProtoMinor, ProtoPatch}, silent)
		dev := connect(t, addr, Options{Timeout: c.opt})[0].(*Device)
		x, b := tensorOn(t, dev, 4)
		be, err := dev.Init(backend.Options{})
		require.NoError(t, err)
		start := time.Now()
		_, err = backend.GetFloat32(be, x)
		took := time.Since(start)
		require.ErrorIs(t, err, ErrLost)
		require.ErrorContains(t, err, "no answer within "+c.want.String())
		// The deadline is the one chosen, not the 60 s default nor the
		// other setting.
		require.GreaterOrEqual(t, took, c.want)
		require.Less(t, took, c.want+2*time.Second)
		require.NoError(t, b.Free())
		require.Error(t, be.Close())
		dev.c.close()
	}
	for _, bad := range []string{"soon", "-5s", "0"} {
		t.Setenv(EnvTimeout, bad)
		_, err := ClientOptionsFromEnv()
		var ee *envopt.Error
		require.ErrorAs(t, err, &ee, bad)
		require.Equal(t, EnvTimeout, ee.Var)
		_, err = Connect(Options{Servers: []string{"127.0.0.1:1"}})
		require.ErrorContains(t, err, EnvTimeout+"=\""+bad+"\"")
	}
	t.Setenv(EnvServers, "127.0.0.1:1")
	ds := (&registry{}).Devices()
	require.Len(t, ds, 1)
	require.ErrorContains(t, backend.Availability(ds[0]), EnvTimeout+`="0"`)
}

// requireCPUWorks computes a small graph on the CPU.
func requireCPUWorks(t *testing.T) {
	ctx := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := ctx.NewTensor(quant.F32, 4)
	g, err := ctx.Build(ctx.Add(a, a))
	require.NoError(t, err)
	be, err := cpu.Device().Init(backend.Options{Threads: 1})
	require.NoError(t, err)
	defer be.Close()
	require.NoError(t, backend.Compute(be, g))
}

func TestFaultsVersion(t *testing.T) {
	leakCheck(t)
	addr := startFake(t, [3]byte{8, 1, 0}, func(net.Conn, uint64) {})
	_, err := Connect(Options{Servers: []string{addr}, Timeout: time.Second})
	require.ErrorIs(t, err, ErrVersion)
	require.Contains(t, err.Error(), "8.1.0")
	require.Contains(t, err.Error(), "7.0.0")
}

func TestFaultsRefused(t *testing.T) {
	leakCheck(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = Connect(Options{Servers: []string{addr}, Timeout: time.Second})
	require.ErrorIs(t, err, ErrLost)
	require.Contains(t, err.Error(), addr)
	require.Contains(t, err.Error(), "refused")
}

// TestFaultsStoppedWhileIdle: a server that stops while the client's
// connection is idle fails the next Init, naming the server, and the
// device then reports itself unavailable, so InitBest passes over it.
func TestFaultsStoppedWhileIdle(t *testing.T) {
	leakCheck(t)
	srv := &Server{Devices: []backend.Device{cpu.Device()}}
	addr, done := serveLoopback(t, srv)
	dev := connect(t, addr, Options{Timeout: 5 * time.Second})[0].(*Device)
	defer dev.c.close()
	be, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	require.NoError(t, be.Close())
	require.NoError(t, srv.Close())
	require.NoError(t, <-done)
	require.NoError(t, backend.Availability(dev), "nothing has been sent since")
	start := time.Now()
	_, err = dev.Init(backend.Options{})
	require.ErrorIs(t, err, ErrLost)
	require.Contains(t, err.Error(), addr)
	require.Contains(t, err.Error(), "GET_DEVICE_MEMORY")
	require.Less(t, time.Since(start), time.Second)
	require.ErrorIs(t, backend.Availability(dev), backend.ErrUnavailable)
	requireCPUWorks(t)
}

// TestFaultsKilledMidGraph closes the server while a graph computes on
// it (a device that takes 200 ms a node): Synchronize fails within the
// deadline, naming the server and GRAPH_COMPUTE.
func TestFaultsKilledMidGraph(t *testing.T) {
	leakCheck(t)
	slow := devtest.New(devtest.Config{Name: "SLOW0", Type: backend.DeviceGPU, Faults: devtest.Faults{
		Compute: func(*graph.Tensor) error { time.Sleep(200 * time.Millisecond); return nil }}})
	srv := &Server{Devices: []backend.Device{slow}}
	addr, done := serveLoopback(t, srv)
	dev := connect(t, addr, Options{Timeout: 5 * time.Second})[0].(*Device)
	defer dev.c.close()

	ctx := graph.NewContext(graph.ContextOptions{})
	a := ctx.NewTensor(quant.F32, 64)
	y := a
	for range 10 {
		y = ctx.Add(y, a)
	}
	g, err := ctx.Build(y)
	require.NoError(t, err)
	galloc, err := buffer.NewGraphAllocator(dev.BufferType())
	require.NoError(t, err)
	require.NoError(t, galloc.AllocGraph(g))
	be, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	require.NoError(t, be.GraphCompute(g))
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }() // the connection goes away mid-graph
	err = be.Synchronize()
	took := time.Since(start)
	require.ErrorIs(t, err, ErrLost)
	require.Contains(t, err.Error(), addr)
	require.Contains(t, err.Error(), "GRAPH_COMPUTE")
	require.Less(t, took, time.Second, "Synchronize took %v", took)
	t.Logf("%v after the server closed: %v", took, err)
	require.NoError(t, <-closed)
	require.NoError(t, <-done)
	require.True(t, errors.Is(dev.Err(), ErrLost))
	requireCPUWorks(t)
}

// TestFaultsRealServerKilled kills ggml's rpc-server (SIGKILL) while it
// computes a graph of ours: Synchronize fails at once, naming the server
// and GRAPH_COMPUTE.
func TestFaultsRealServerKilled(t *testing.T) {
	s := rpcref.StartServer(t, rpcref.Config{})
	leakCheck(t)
	dev := connect(t, s.Addr, Options{Timeout: 30 * time.Second})[0].(*Device)
	defer dev.c.close()
	ctx := graph.NewContext(graph.ContextOptions{})
	w := ctx.NewTensor(quant.F32, 512, 512)
	y := ctx.NewTensor(quant.F32, 512, 512)
	for range 40 {
		y = ctx.MulMat(w, y)
	}
	g, err := ctx.Build(y)
	require.NoError(t, err)
	galloc, err := buffer.NewGraphAllocator(dev.BufferType())
	require.NoError(t, err)
	require.NoError(t, galloc.AllocGraph(g))
	be, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	require.NoError(t, be.GraphCompute(g))
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	s.Kill()
	err = be.Synchronize()
	took := time.Since(start)
	require.ErrorIs(t, err, ErrLost)
	require.Contains(t, err.Error(), s.Addr)
	require.Contains(t, err.Error(), "GRAPH_COMPUTE")
	require.Less(t, took, 2*time.Second)
	t.Logf("%v after the kill: %v", took, err)
	requireCPUWorks(t)
}
