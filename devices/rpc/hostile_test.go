package rpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/quant"
)

// raw is a hand-driven connection to a server, for sending what no
// honest client sends.
type raw struct {
	t  testing.TB
	nc net.Conn
}

func dialRaw(t testing.TB, addr string) *raw {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	r := &raw{t: t, nc: nc}
	return r
}

func (r *raw) send(cmd command, size uint64, body []byte) {
	r.t.Helper()
	hdr := append([]byte{byte(cmd)}, u64(size)...)
	_ = r.nc.SetDeadline(time.Now().Add(5 * time.Second))
	_, err := r.nc.Write(append(hdr, body...))
	require.NoError(r.t, err)
}

func (r *raw) reply(n int) []byte {
	r.t.Helper()
	_ = r.nc.SetDeadline(time.Now().Add(5 * time.Second))
	var hdr [8]byte
	_, err := io.ReadFull(r.nc, hdr[:])
	require.NoError(r.t, err)
	require.Equal(r.t, uint64(n), binary.LittleEndian.Uint64(hdr[:]))
	b := make([]byte, n)
	_, err = io.ReadFull(r.nc, b)
	require.NoError(r.t, err)
	return b
}

func (r *raw) hello() {
	r.t.Helper()
	r.send(cmdHello, helloReqBytes, make([]byte, helloReqBytes))
	rsp := r.reply(helloRspBytes)
	require.Equal(r.t, []byte{ProtoMajor, ProtoMinor, ProtoPatch}, rsp[:3])
}

// alloc allocates a buffer of size bytes and returns its handle and base.
func (r *raw) alloc(size uint64) (handle, base uint64) {
	r.t.Helper()
	r.send(cmdAllocBuffer, 12, append(u32(0), u64(size)...))
	rsp := r.reply(16)
	handle = binary.LittleEndian.Uint64(rsp)
	require.NotZero(r.t, handle)
	r.send(cmdBufferGetBase, 8, u64(handle))
	return handle, binary.LittleEndian.Uint64(r.reply(8))
}

// closed reports whether the server closed the connection (a refusal).
func (r *raw) closed() bool {
	_ = r.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	_, err := r.nc.Read(b[:])
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

// f32 is a wire tensor of n float32 at address at of buffer h.
func f32(id, h, at uint64, n uint32) wireTensor {
	w := wireTensor{ID: id, Type: uint32(quant.F32), Buffer: h, Data: at}
	w.Ne = [4]uint32{n, 1, 1, 1}
	w.Nb = [4]uint32{4, 4 * n, 4 * n, 4 * n}
	return w
}

func graphMsg(dev uint32, nodes []uint64, ts ...wireTensor) []byte {
	b := u32(dev)
	b = append(b, u32(uint32(len(nodes)))...)
	for _, n := range nodes {
		b = append(b, u64(n)...)
	}
	b = append(b, u32(uint32(len(ts)))...)
	for _, t := range ts {
		b = t.put(b)
	}
	return b
}

// TestHostileMessages sends crafted requests to our server: each must be
// refused (the connection closed, or a failed allocation answered), the
// server must keep serving a well-behaved client meanwhile, and its
// memory must stay bounded.
func TestHostileMessages(t *testing.T) {
	var logged lockedBuffer
	srv := &Server{Devices: []backend.Device{cpu.Device()}, Limits: Limits{Memory: 64 << 20, Nodes: 4096},
		Log: slog.New(slog.NewTextHandler(&logged, nil))}
	addr := startServer(t, srv)
	good := connect(t, addr, Options{Timeout: 10 * time.Second})[0]
	gb, err := good.BufferType().Alloc(1024)
	require.NoError(t, err)
	defer gb.Free()

	// Another connection's buffer, for the cases reaching across.
	other := dialRaw(t, addr)
	other.hello()
	otherH, otherBase := other.alloc(4096)

	tensorMsg := func(w wireTensor, tail ...byte) []byte { return append(w.put(nil), tail...) }
	badName := func(h, base uint64) wireTensor {
		w := f32(1, h, base, 4)
		for i := range w.Name {
			w.Name[i] = 'x'
		}
		return w
	}
	type tc struct {
		name string
		// run sends the crafted request on a fresh connection (after
		// HELLO, with one buffer of 4 KiB allocated) and reports whether
		// it was refused.
		run func(r *raw, h, base uint64) bool
	}
	closes := func(cmd command, body []byte) func(r *raw, h, base uint64) bool {
		return func(r *raw, _, _ uint64) bool { r.send(cmd, uint64(len(body)), body); return r.closed() }
	}
	get := func(w wireTensor, off, n uint64) []byte { return append(append(w.put(nil), u64(off)...), u64(n)...) }
	cases := []tc{
		{"second HELLO", func(r *raw, _, _ uint64) bool {
			r.send(cmdHello, helloReqBytes, make([]byte, helloReqBytes))
			return r.closed()
		}},
		{"unknown command", closes(200, nil)},
		{"GET_ALIGNMENT of 5 bytes", closes(cmdGetAlignment, make([]byte, 5))},
		{"device out of range", closes(cmdGetAlignment, u32(7))},
		{"huge allocation", func(r *raw, _, _ uint64) bool {
			r.send(cmdAllocBuffer, 12, append(u32(0), u64(math.MaxInt64)...))
			return binary.LittleEndian.Uint64(r.reply(16)) == 0
		}},
		{"allocation over the connection's limit", func(r *raw, _, _ uint64) bool {
			r.send(cmdAllocBuffer, 12, append(u32(0), u64(65<<20)...))
			return binary.LittleEndian.Uint64(r.reply(16)) == 0
		}},
		{"base of an unknown buffer", closes(cmdBufferGetBase, u64(12345))},
		{"free of another connection's buffer", closes(cmdFreeBuffer, u64(otherH))},
		{"tensor past its buffer's end", func(r *raw, h, base uint64) bool {
			body := tensorMsg(f32(1, h, base+4000, 100), append([]byte{0}, u64(0)...)...)
			body = append(body, make([]byte, 400)...)
			r.send(cmdSetTensor, uint64(len(body)), body)
			return r.closed()
		}},
		{"SET_TENSOR shorter than its header", closes(cmdSetTensor, make([]byte, 20))},
		{"address before the buffer", func(r *raw, h, base uint64) bool {
			r.send(cmdGetTensor, tensorBytes+16, get(f32(1, h, base-64, 4), 0, 16))
			return r.closed()
		}},
		{"SET_TENSOR announcing 2^62 bytes", func(r *raw, h, base uint64) bool {
			body := tensorMsg(f32(1, h, base, 16), append([]byte{0}, u64(0)...)...)
			r.send(cmdSetTensor, 1<<62, body)
			return r.closed()
		}},
		{"offset overflowing", func(r *raw, h, base uint64) bool {
			r.send(cmdGetTensor, tensorBytes+16, get(f32(1, h, base, 16), math.MaxUint64-8, 16))
			return r.closed()
		}},
		{"negative size", func(r *raw, h, base uint64) bool {
			r.send(cmdGetTensor, tensorBytes+16, get(f32(1, h, base, 16), 0, uint64(math.MaxUint64-7)))
			return r.closed()
		}},
		{"type 99", func(r *raw, h, base uint64) bool {
			w := f32(1, h, base, 4)
			w.Type = 99
			r.send(cmdGetTensor, tensorBytes+16, get(w, 0, 16))
			return r.closed()
		}},
		{"name without its terminating zero", func(r *raw, h, base uint64) bool {
			r.send(cmdGetTensor, tensorBytes+16, get(badName(h, base), 0, 16))
			return r.closed()
		}},
		{"partial quantized block", func(r *raw, h, base uint64) bool {
			w := f32(1, h, base, 7)
			w.Type = uint32(quant.Q4_0)
			r.send(cmdGetTensor, tensorBytes+16, get(w, 0, 4))
			return r.closed()
		}},
		{"size overflowing 64 bits", func(r *raw, h, base uint64) bool {
			w := f32(1, h, base, math.MaxUint32)
			w.Ne = [4]uint32{math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32}
			w.Nb = w.Ne
			r.send(cmdGetTensor, tensorBytes+16, get(w, 0, 4))
			return r.closed()
		}},
		{"copy between buffers of two connections", func(r *raw, h, base uint64) bool {
			body := append(f32(1, otherH, otherBase, 16).put(nil), f32(2, h, base, 16).put(nil)...)
			r.send(cmdCopyTensor, uint64(len(body)), body)
			return r.closed()
		}},
		{"memset past the end", func(r *raw, h, base uint64) bool {
			body := append(append(f32(1, h, base, 1024).put(nil), u64(4000)...), u64(200)...)
			body = append(body, 7)
			r.send(cmdMemsetTensor, uint64(len(body)), body)
			return r.closed()
		}},
		{"graph of 10^7 nodes", func(r *raw, _, _ uint64) bool {
			body := append(u32(0), u32(10_000_000)...)
			r.send(cmdGraphCompute, 12+8*10_000_000+10_000_000*tensorBytes, body)
			return r.closed()
		}},
		{"graph announcing 10^7 nodes in a short message", closes(cmdGraphCompute, append(append(u32(0), u32(10_000_000)...), make([]byte, 64)...))},
		{"graph with a cycle", func(r *raw, h, base uint64) bool {
			a, b := f32(1, h, base, 4), f32(2, h, base+64, 4)
			a.Op, b.Op = 2, 2 // ADD
			a.Src[0], a.Src[1], b.Src[0], b.Src[1] = 2, 2, 1, 1
			msg := graphMsg(0, []uint64{1}, a, b)
			r.send(cmdGraphCompute, uint64(len(msg)), msg)
			return r.closed()
		}},
		{"unknown operation", func(r *raw, h, base uint64) bool {
			a := f32(1, h, base, 4)
			a.Op = 150
			msg := graphMsg(0, []uint64{1}, a)
			r.send(cmdGraphCompute, uint64(len(msg)), msg)
			return r.closed()
		}},
		{"source not sent", func(r *raw, h, base uint64) bool {
			a := f32(1, h, base, 4)
			a.Op, a.Src[0], a.Src[1] = 2, 9, 9
			msg := graphMsg(0, []uint64{1}, a)
			r.send(cmdGraphCompute, uint64(len(msg)), msg)
			return r.closed()
		}},
		{"view whose source is in another connection's buffer", func(r *raw, h, base uint64) bool {
			src := f32(1, otherH, otherBase, 16)
			v := f32(2, h, base, 4)
			v.Op, v.ViewSrc = 34, 1 // VIEW
			msg := graphMsg(0, []uint64{2}, src, v)
			r.send(cmdGraphCompute, uint64(len(msg)), msg)
			return r.closed()
		}},
		{"view outside its source", func(r *raw, h, base uint64) bool {
			src := f32(1, h, base, 16)
			v := f32(2, h, base+512, 4)
			v.Op, v.ViewSrc, v.ViewOffs = 34, 1, 16
			msg := graphMsg(0, []uint64{2}, src, v)
			r.send(cmdGraphCompute, uint64(len(msg)), msg)
			return r.closed()
		}},
		{"tensor id twice", func(r *raw, h, base uint64) bool {
			msg := graphMsg(0, []uint64{1}, f32(1, h, base, 4), f32(1, h, base, 4))
			r.send(cmdGraphCompute, uint64(len(msg)), msg)
			return r.closed()
		}},
		{"recompute with no graph", closes(cmdGraphRecompute, u32(0))},
		{"mismatched shapes", func(r *raw, h, base uint64) bool {
			a, b, c := f32(1, h, base, 4), f32(2, h, base+64, 8), f32(3, h, base+128, 4)
			c.Op, c.Src[0], c.Src[1] = 29, 1, 2 // MUL_MAT with mismatched rows
			msg := graphMsg(0, []uint64{3}, a, b, c)
			r.send(cmdGraphCompute, uint64(len(msg)), msg)
			return r.closed()
		}},
	}
	require.GreaterOrEqual(t, len(cases), 20)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, c := range cases {
		r := dialRaw(t, addr)
		r.hello()
		h, base := r.alloc(4096)
		require.True(t, c.run(r, h, base), "%s: not refused", c.name)
		// The well-behaved client is still served.
		require.NoError(t, gb.Clear(1), "after %s", c.name)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapSys) - int64(before.HeapSys)
	t.Logf("%d crafted requests refused; the process's heap grew by %d KiB (HeapSys %d -> %d MiB)",
		len(cases), grew>>10, before.HeapSys>>20, after.HeapSys>>20)
	require.Less(t, grew, int64(64<<20), "the server's memory grew past 64 MiB")
	// Every refusal left a line saying why (the two allocations are
	// answered, the rest close their connection).
	require.Eventually(t, func() bool {
		return strings.Count(logged.String(), "rpc: connection closed") >= len(cases)-2
	}, 5*time.Second, 10*time.Millisecond, "log:\n%s", logged.String())
	require.Equal(t, 2, strings.Count(logged.String(), "ALLOC_BUFFER refused"))
}

// lockedBuffer is a log destination for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
