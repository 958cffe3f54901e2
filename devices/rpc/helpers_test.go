package rpc

import (
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/cpu"
)

// startServer serves the given devices (the CPU when none) on a loopback
// port until the test ends, and returns its address.
func startServer(t testing.TB, s *Server) string {
	t.Helper()
	if len(s.Devices) == 0 {
		s.Devices = []backend.Device{cpu.Device()}
	}
	if s.Log == nil {
		s.Log = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	addr, done := serveLoopback(t, s)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		require.NoError(t, <-done)
	})
	return addr
}

// serveLoopback starts s on a loopback port and returns its address and
// the channel that receives Serve's result once s is closed.
func serveLoopback(t testing.TB, s *Server) (string, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	return ln.Addr().String(), done
}

// testWriter sends the server's log lines to the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// connect returns the devices of the server at addr.
func connect(t testing.TB, addr string, o Options) []backend.Device {
	t.Helper()
	o.Servers = []string{addr}
	ds, err := Connect(o)
	require.NoError(t, err)
	require.NotEmpty(t, ds)
	return ds
}

// TestDeviceParams: the RPC device has no parameters, so any key given in
// GGML_DEVICE is an error naming the device, the key and the value.
func TestDeviceParams(t *testing.T) {
	dev := connect(t, startServer(t, &Server{}), Options{})[0]
	_, err := dev.Init(backend.Options{Params: map[string]map[string]string{dev.Name(): {"typo": "1"}}})
	require.ErrorIs(t, err, backend.ErrArgument)
	require.ErrorContains(t, err, "device "+dev.Name()+` has no parameter "typo" (given typo="1"; it takes none)`)
	b, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	require.NoError(t, b.Close())
}
