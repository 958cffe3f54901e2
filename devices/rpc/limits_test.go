package rpc

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// tryAlloc asks for a buffer on a raw connection from any goroutine (no
// require): the handle, 0 when the server refused.
func tryAlloc(nc net.Conn, size uint64) (uint64, error) {
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	req := append(append([]byte{byte(cmdAllocBuffer)}, u64(12)...), append(u32(0), u64(size)...)...)
	if _, err := nc.Write(req); err != nil {
		return 0, err
	}
	rsp := make([]byte, 8+16)
	if _, err := io.ReadFull(nc, rsp); err != nil {
		return 0, err
	}
	if n := binary.LittleEndian.Uint64(rsp); n != 16 {
		return 0, fmt.Errorf("ALLOC_BUFFER reply of %d bytes", n)
	}
	return binary.LittleEndian.Uint64(rsp[8:]), nil
}

// TestServerMemoryLimit: five clients at once, each allowed 6 MiB, ask
// for 1 MiB buffers until refused; together they get exactly the
// server-wide 8 MiB. The full server answers our client's allocation
// with a refusal (an error, not a hang), serves every other request, and
// once one client leaves its memory is free for the others.
func TestServerMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	var logged lockedBuffer
	srv := &Server{Devices: []backend.Device{cpu.Device()}, Limits: Limits{Memory: 6 * mib, ServerMemory: 8 * mib},
		Log: slog.New(slog.NewTextHandler(&logged, nil))}
	addr := startServer(t, srv)
	clients := make([]*raw, 5)
	for i := range clients {
		clients[i] = dialRaw(t, addr)
		clients[i].hello()
	}
	bufs := make([][]uint64, len(clients))
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, r := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 7 { // one more than a connection may hold
				h, err := tryAlloc(r.nc, mib)
				if err != nil || h == 0 {
					errs[i] = err
					return
				}
				bufs[i] = append(bufs[i], h)
			}
		}()
	}
	wg.Wait()
	granted := 0
	for i := range clients {
		require.NoError(t, errs[i])
		require.LessOrEqual(t, len(bufs[i]), 6, "client %d holds over its connection's limit", i)
		granted += len(bufs[i])
	}
	require.Equal(t, 8, granted, "1 MiB buffers granted to the five clients together: %v", bufs)
	require.Equal(t, uint64(8*mib), held(srv))
	require.GreaterOrEqual(t, strings.Count(logged.String(), "the server-wide limit is 8388608"), len(clients)-1)

	// Full: our client's allocation is refused, its other requests and
	// every client's buffers are still served.
	dev := connect(t, addr, Options{Timeout: 10 * time.Second})[0]
	_, err := dev.BufferType().Alloc(mib)
	require.ErrorIs(t, err, ErrRefused)
	require.NotZero(t, dev.BufferType().Alignment())
	for i, r := range clients {
		for _, h := range bufs[i] {
			r.send(cmdBufferGetBase, 8, u64(h))
			require.Equal(t, h*bufferSpacing, binary.LittleEndian.Uint64(r.reply(8)))
		}
	}
	// A client that leaves frees its share: our client then computes.
	var leaver int
	for i := range bufs {
		if len(bufs[i]) > 0 {
			leaver = i
			break
		}
	}
	require.NoError(t, clients[leaver].nc.Close())
	require.Eventually(t, func() bool { return held(srv) == uint64(8-len(bufs[leaver]))*mib }, 5*time.Second, 10*time.Millisecond)
	ctx := graph.NewContext(graph.ContextOptions{})
	a := ctx.NewTensor(quant.F32, 1024)
	sum := ctx.Add(a, a)
	g, err := ctx.Build(sum)
	require.NoError(t, err)
	b, err := buffer.AllocTensors(dev.BufferType(), []*graph.Tensor{a, sum})
	require.NoError(t, err)
	defer b.Free()
	be, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	defer be.Close()
	in := make([]float32, 1024)
	for i := range in {
		in[i] = float32(i)
	}
	require.NoError(t, backend.SetFloat32(be, a, in))
	require.NoError(t, backend.Compute(be, g))
	out, err := backend.GetFloat32(be, sum)
	require.NoError(t, err)
	require.Equal(t, float32(2*1023), out[1023])
}

// held is what the server's connections hold together.
func held(s *Server) uint64 {
	s.memMu.Lock()
	defer s.memMu.Unlock()
	return s.memUsed
}

// TestServerConnectionLimit: a connection beyond Limits.Connections is
// closed as it is accepted, with a log line, and the server takes new
// ones again once one leaves.
func TestServerConnectionLimit(t *testing.T) {
	var logged lockedBuffer
	srv := &Server{Devices: []backend.Device{cpu.Device()}, Limits: Limits{Connections: 2},
		Log: slog.New(slog.NewTextHandler(&logged, nil))}
	addr := startServer(t, srv)
	first, second := dialRaw(t, addr), dialRaw(t, addr)
	first.hello()
	second.hello()
	extra := dialRaw(t, addr)
	_, _ = extra.nc.Write(append([]byte{byte(cmdHello)}, u64(helloReqBytes)...))
	require.True(t, extra.closed(), "a third connection was served")
	require.Contains(t, logged.String(), "2 connections are served, the limit")
	require.NoError(t, first.nc.Close())
	require.Eventually(t, func() bool {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(time.Second))
		if _, err := nc.Write(append(append([]byte{byte(cmdHello)}, u64(helloReqBytes)...), make([]byte, helloReqBytes)...)); err != nil {
			return false
		}
		rsp := make([]byte, 8+helloRspBytes)
		_, err = io.ReadFull(nc, rsp)
		return err == nil
	}, 5*time.Second, 20*time.Millisecond)
	second.send(cmdDeviceCount, 0, nil)
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(second.reply(4)))
}
