package rpc

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Errors of the client; test them with errors.Is.
var (
	// ErrLost reports a server the client has lost: a network error, a
	// deadline passed or a malformed reply on an earlier call. The
	// connection is closed and every later call fails with this error;
	// the other devices of a scheduler stay usable.
	ErrLost = errors.New("rpc: server lost")
	// ErrVersion reports a server speaking another protocol version.
	ErrVersion = errors.New("rpc: protocol version mismatch")
	// ErrProtocol reports a reply that breaks the protocol (a wrong size).
	ErrProtocol = errors.New("rpc: malformed reply")
	// ErrRefused reports a request the server answered with a failure
	// (no memory for a buffer).
	ErrRefused = errors.New("rpc: request refused")
)

// DefaultTimeout bounds every call to a server, from its first byte sent
// to its last byte received, a graph computed in between included.
const DefaultTimeout = 60 * time.Second

// dialConfig is how a client reaches a server.
type dialConfig struct {
	timeout time.Duration
	token   string      // the -token of our own server, sent after HELLO
	tls     *tls.Config // nil: plain TCP, as ggml
}

// conn is one connection to a server, shared by the server's devices as
// ggml shares one dispatcher per endpoint. Calls are serialized: the
// protocol answers requests in order.
type conn struct {
	addr string
	cfg  dialConfig

	mu   sync.Mutex
	nc   net.Conn
	lost error
	// computing is set while a GRAPH_COMPUTE, which has no reply, may be
	// running on the server.
	computing bool
	// graphs is the last GRAPH_COMPUTE body sent to each device, which
	// the server keeps for GRAPH_RECOMPUTE until a buffer is freed.
	graphs map[uint32][]byte

	sent, recvd atomic.Uint64
}

// dial connects to addr and says hello: the server's protocol must have
// our major version and no newer minor one.
func dial(addr string, cfg dialConfig) (*conn, error) {
	if cfg.timeout <= 0 {
		cfg.timeout = DefaultTimeout
	}
	d := net.Dialer{Timeout: cfg.timeout}
	var nc net.Conn
	var err error
	if cfg.tls != nil {
		nc, err = tls.DialWithDialer(&d, "tcp", addr, cfg.tls)
	} else {
		nc, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: connecting: %w", ErrLost, addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c := &conn{addr: addr, cfg: cfg, nc: nc}
	rsp := make([]byte, helloRspBytes)
	if err := c.call(cmdHello, make([]byte, helloReqBytes), rsp); err != nil {
		return nil, err
	}
	if err := checkVersion(addr, rsp[0], rsp[1], rsp[2]); err != nil {
		c.close()
		return nil, err
	}
	if cfg.token != "" {
		if err := c.send(cmdAuth, []byte(cfg.token)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func checkVersion(addr string, major, minor, patch uint8) error {
	if major != ProtoMajor || minor > ProtoMinor {
		return fmt.Errorf("%w: the server at %s speaks RPC protocol %d.%d.%d, this client %d.%d.%d (the major versions must match, and the server's minor version must not be newer)",
			ErrVersion, addr, major, minor, patch, ProtoMajor, ProtoMinor, ProtoPatch)
	}
	return nil
}

// call sends cmd with req and reads a reply of exactly len(rsp) bytes into
// rsp.
func (c *conn) call(cmd command, req, rsp []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.request(cmd, req); err != nil {
		return err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(c.nc, hdr[:]); err != nil {
		return c.fail(cmd, fmt.Errorf("reading the reply: %w", err))
	}
	if n := binary.LittleEndian.Uint64(hdr[:]); n != uint64(len(rsp)) {
		return c.fail(cmd, fmt.Errorf("%w: the reply has %d bytes, want %d", ErrProtocol, n, len(rsp)))
	}
	if _, err := io.ReadFull(c.nc, rsp); err != nil {
		return c.fail(cmd, fmt.Errorf("reading the reply: %w", err))
	}
	c.recvd.Add(8 + uint64(len(rsp)))
	// A reply comes after every earlier request is done.
	c.computing = false
	return nil
}

// send sends cmd with req, for the commands ggml answers with nothing.
func (c *conn) send(cmd command, req ...[]byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.request(cmd, req...); err != nil {
		return err
	}
	if cmd == cmdGraphCompute || cmd == cmdGraphRecompute {
		c.computing = true
	}
	return nil
}

// sendGraph sends a graph for device to compute: GRAPH_RECOMPUTE (4
// bytes) when msg is byte for byte the last graph sent to that device
// and no buffer was freed since, as a model's decode steps repeat their
// graph with new inputs in the same tensors; GRAPH_COMPUTE otherwise.
func (c *conn) sendGraph(device uint32, msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cmd, body := cmdGraphCompute, msg
	if last, ok := c.graphs[device]; ok && bytes.Equal(last, msg) {
		cmd, body = cmdGraphRecompute, u32(device)
	}
	if err := c.request(cmd, body); err != nil {
		return err
	}
	c.computing = true
	if c.graphs == nil {
		c.graphs = map[uint32][]byte{}
	}
	c.graphs[device] = msg
	return nil
}

// request writes | cmd (1 byte) | size (8 bytes) | data | under a deadline
// that also bounds the reply; the caller holds mu.
func (c *conn) request(cmd command, parts ...[]byte) error {
	if c.lost != nil {
		return fmt.Errorf("%w: %s: %s not sent: %w", ErrLost, c.addr, cmd, c.lost)
	}
	if cmd == cmdFreeBuffer {
		// The server forgets its stored graphs, whose tensors may be in
		// the buffer (ggml's would otherwise compute with freed memory).
		clear(c.graphs)
	}
	var n uint64
	for _, p := range parts {
		n += uint64(len(p))
	}
	hdr := make([]byte, 9)
	hdr[0] = byte(cmd)
	binary.LittleEndian.PutUint64(hdr[1:], n)
	if err := c.nc.SetDeadline(time.Now().Add(c.cfg.timeout)); err != nil {
		return c.fail(cmd, err)
	}
	bufs := net.Buffers(append([][]byte{hdr}, parts...))
	if _, err := bufs.WriteTo(c.nc); err != nil {
		return c.fail(cmd, fmt.Errorf("sending: %w", err))
	}
	c.sent.Add(9 + n)
	return nil
}

// fail records the connection as lost and closes it: after an I/O error
// the stream's position is unknown. The caller holds mu.
func (c *conn) fail(cmd command, err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = fmt.Errorf("no answer within %v: %w", c.cfg.timeout, err)
	}
	what := cmd.String()
	if c.computing {
		// GRAPH_COMPUTE has no reply: its failure shows on the next
		// request's.
		what = fmt.Sprintf("GRAPH_COMPUTE (the graph sent was computing; waiting for %s)", cmd)
	}
	c.lost = fmt.Errorf("%s: %w", what, err)
	_ = c.nc.Close()
	return fmt.Errorf("%w: %s: %s: %w", ErrLost, c.addr, what, err)
}

// err is the reason the connection was lost, or nil.
func (c *conn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost != nil {
		return fmt.Errorf("%w: %s: %w", ErrLost, c.addr, c.lost)
	}
	return nil
}

func (c *conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost == nil {
		c.lost = errors.New("connection closed")
	}
	_ = c.nc.Close()
}

// u32 and u64 are little-endian request fields.
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
