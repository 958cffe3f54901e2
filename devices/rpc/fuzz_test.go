package rpc

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/cpu"
)

// FuzzServerMessages feeds arbitrary bytes to a server connection, after
// a valid HELLO and one allocated buffer: whatever they say, the session
// ends with an error or at the stream's end, never with a panic (which
// run would report as "panicked").
func FuzzServerMessages(f *testing.F) {
	w := f32(1, 1, bufferSpacing, 16)
	set := append(append(w.put(nil), 0), u64(0)...)
	f.Add(append(append([]byte{byte(cmdSetTensor)}, u64(uint64(len(set)+64))...), append(set, make([]byte, 64)...)...))
	get := append(append(w.put(nil), u64(0)...), u64(64)...)
	f.Add(append(append([]byte{byte(cmdGetTensor)}, u64(uint64(len(get)))...), get...))
	a := f32(2, 1, bufferSpacing+64, 16)
	a.Op, a.Src[0], a.Src[1] = 2, 1, 1
	g := graphMsg(0, []uint64{2}, w, a)
	f.Add(append(append([]byte{byte(cmdGraphCompute)}, u64(uint64(len(g)))...), g...))
	f.Add([]byte{byte(cmdDeviceCount), 0, 0, 0, 0, 0, 0, 0, 0})
	srv := &Server{Devices: []backend.Device{cpu.Device()}, Limits: Limits{Memory: 1 << 20, Nodes: 64},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f.Fuzz(func(t *testing.T, stream []byte) {
		client, server := net.Pipe()
		go func() { _, _ = io.Copy(io.Discard, client) }()
		go func() {
			hello := append([]byte{byte(cmdHello)}, u64(helloReqBytes)...)
			hello = append(hello, make([]byte, helloReqBytes)...)
			alloc := append(append([]byte{byte(cmdAllocBuffer)}, u64(12)...), append(u32(0), u64(4096)...)...)
			for _, p := range [][]byte{hello, alloc, stream} {
				if _, err := client.Write(p); err != nil {
					return
				}
			}
			_ = client.Close()
		}()
		// The first buffer of a fresh process has handle 1; later ones
		// are higher, so give the seeds' handle 1 to this session's buffer.
		handles.Store(0)
		ss := &session{srv: srv, nc: server, lim: srv.Limits.withDefaults(), bufs: map[uint64]*sbuf{},
			backends: make([]backend.Backend, 1), graphs: make([][]byte, 1)}
		err := ss.run()
		ss.release()
		_ = server.Close()
		if err != nil && strings.Contains(err.Error(), "panicked") {
			t.Fatal(err)
		}
	})
}
