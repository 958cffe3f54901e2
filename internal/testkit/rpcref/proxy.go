package rpcref

import (
	"net"
	"sync"
	"sync/atomic"
)

// Proxy forwards loopback connections to a server, counting the bytes
// both ways: the wire traffic of a client that cannot be instrumented
// (ggml's, inside libllama).
type Proxy struct {
	// Addr is where clients connect instead of the server.
	Addr  string
	ln    net.Listener
	n     atomic.Uint64
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

// NewProxy starts a proxy in front of the server at addr.
func NewProxy(addr string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: ln.Addr().String(), ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			p.wg.Add(2)
			go p.pipe(s, c)
			go p.pipe(c, s)
		}
	}()
	return p, nil
}

// pipe copies src to dst, counting, until either side closes.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		k, err := src.Read(buf)
		p.n.Add(uint64(k))
		if k > 0 {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			_ = dst.Close()
			_ = src.Close()
			return
		}
	}
}

// Bytes is the traffic forwarded so far, both ways.
func (p *Proxy) Bytes() uint64 { return p.n.Load() }

// Close stops the proxy, closing its connections, and waits for them.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
