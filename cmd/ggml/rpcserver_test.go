package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/rpc"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
)

// startRPCServer runs ggml rpc-server with args on a free port until the
// test ends, and returns its address and its output so far (all of the
// banner once a client has been served: the server prints it before it
// serves).
func startRPCServer(t *testing.T, args ...string) (string, func() string) {
	t.Helper()
	pr, pw := io.Pipe()
	stop := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() {
		err := serveRPC(append([]string{"-port", "0"}, args...), pw, stop)
		_ = pw.CloseWithError(err)
		done <- err
	}()
	var out lockedText
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			out.add(sc.Text() + "\n")
			if v, ok := strings.CutPrefix(sc.Text(), "  endpoint       : "); ok {
				addrs <- v
			}
		}
		close(addrs)
	}()
	addr := <-addrs
	require.NotEmpty(t, addr, "rpc-server printed:\n%s", out.String())
	t.Cleanup(func() {
		stop <- os.Interrupt
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("rpc-server did not stop on interrupt")
		}
	})
	return addr, out.String
}

// lockedText is text appended by one goroutine and read by another.
type lockedText struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedText) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedText) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// ggml rpc-server serves the CPU to our client and ggml's, binds to
// localhost, says the protocol has no authentication, keeps large weights
// in -cache, with -token refuses a client without it, and with -max-mem
// refuses buffers over that bound.
func TestRPCServerCommand(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	addr, out := startRPCServer(t, "-threads", "1", "-cache", cache)
	require.True(t, strings.HasPrefix(addr, "127.0.0.1:"), addr)
	ds, err := rpc.Connect(rpc.Options{Servers: []string{addr}})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, addr+" device 0", ds[0].Description())
	_, total := ds[0].Memory()
	require.NotZero(t, total)
	// The banner, all printed before the first client was served (the
	// last line may still be on its way through the pipe).
	require.Eventually(t, func() bool { return strings.Contains(out(), "authentication") }, 5*time.Second, 10*time.Millisecond, out())
	banner := out()
	require.Contains(t, banner, "Starting RPC server v7.0.0")
	require.Contains(t, banner, "local cache    : "+cache)
	require.Contains(t, banner, "The RPC protocol has no authentication")
	require.NotContains(t, banner, "WARNING", "localhost is not an open network")
	if _, err := rpcref.LibDir(); err == nil || os.Getenv(rpcref.EnvRequired) == "1" {
		c := rpcref.NewClient(t, addr, false)
		require.Equal(t, 1, c.Devices)
	}

	taddr, tout := startRPCServer(t, "-token", "s3cret")
	_, err = rpc.Connect(rpc.Options{Servers: []string{taddr}, Token: "s3cret"})
	require.NoError(t, err)
	require.NotContains(t, tout(), "no authentication")
	_, err = rpc.Connect(rpc.Options{Servers: []string{taddr}, Timeout: 2 * time.Second})
	require.ErrorIs(t, err, rpc.ErrLost, "a client without the token is served")

	// -max-mem bounds what all clients together hold.
	maddr, mout := startRPCServer(t, "-max-mem", "1")
	md, err := rpc.Connect(rpc.Options{Servers: []string{maddr}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(mout(), "memory limit   : 1 MiB, all clients together") },
		5*time.Second, 10*time.Millisecond, mout())
	_, err = md[0].BufferType().Alloc(2 << 20)
	require.ErrorIs(t, err, rpc.ErrRefused)
	mb, err := md[0].BufferType().Alloc(1 << 19)
	require.NoError(t, err)
	require.NoError(t, mb.Free())

	for _, bad := range [][]string{{"-port", "70000"}, {"-tls-cert", "x"}, {"-device", "NOSUCH0"}, {"-max-conns", "-1"}, {"extra"}} {
		code, _, errOut := runCmd(append([]string{"rpc-server"}, bad...)...)
		require.NotEqual(t, 0, code, "%v", bad)
		require.NotEmpty(t, errOut, "%v", bad)
	}
}
