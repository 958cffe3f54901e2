package hexagon

import (
	"fmt"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
)

// hexBackend is a stream of work on a device's session. Graphs become op
// batches sent over the dspqueue without waiting (async); Synchronize
// waits for every answer. A DSP failure status, a queue failure or a
// malformed answer marks the session: that compute or synchronize and
// every later one return the error (wrapping ErrSession), the process
// goes on, and other devices are unaffected.
type hexBackend struct {
	dev    *device
	s      *session
	gen    uint64
	closed bool
}

func (b *hexBackend) Name() string           { return b.dev.cfg.Name }
func (b *hexBackend) Device() backend.Device { return b.dev }
func (b *hexBackend) check() error {
	if b.closed {
		return fmt.Errorf("%w: %s", backend.ErrClosed, b.Name())
	}
	if b.gen != b.s.gen {
		return fmt.Errorf("%w: %s failed and was reopened for a newer backend", ErrSession, b.Name())
	}
	return b.s.err
}

// SetTensorAsync writes t once the batches in flight are done (they may
// read it), then returns: the write itself is a host copy.
func (b *hexBackend) SetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	return b.afterQueue(func() error { return buffer.SetTensor(t, data, offset) })
}

// GetTensorAsync waits for the batches queued so far, then reads t.
func (b *hexBackend) GetTensorAsync(t *graph.Tensor, data []byte, offset uint64) error {
	return b.afterQueue(func() error { return buffer.GetTensor(t, data, offset) })
}

// afterQueue runs fn once every batch queued so far is done.
func (b *hexBackend) afterQueue(fn func() error) error {
	if err := b.s.flushPeers(true); err != nil {
		return err
	}
	b.s.work.Lock()
	defer b.s.work.Unlock()
	if err := b.check(); err != nil {
		return err
	}
	if err := b.s.sync(); err != nil {
		return err
	}
	return fn()
}

func (b *hexBackend) Synchronize() error {
	if err := b.s.flushPeers(true); err != nil {
		return err
	}
	b.s.work.Lock()
	defer b.s.work.Unlock()
	if err := b.check(); err != nil {
		return err
	}
	return b.s.sync()
}

// GraphCompute turns g's nodes into DSP ops (or takes those built when g
// was last computed here, see nodeCache) and queues them; batches go out
// as they fill, the last one before returning.
func (b *hexBackend) GraphCompute(g *graph.Graph) error {
	if err := b.s.flushPeers(true); err != nil {
		return err
	}
	b.s.work.Lock()
	defer b.s.work.Unlock()
	if err := b.check(); err != nil {
		return err
	}
	fusion := b.dev.opts.OpFusion
	nodes := b.s.cache.lookup(g, fusion)
	if nodes == nil {
		var err error
		if nodes, err = buildNodes(g, fusion); err != nil {
			return err
		}
		for _, n := range nodes {
			if err := b.s.solveKernelParams(n); err != nil {
				return err
			}
		}
		b.s.cache.store(g, fusion, nodes)
	}
	for _, n := range nodes {
		if err := b.prepare(n); err != nil {
			return err
		}
		if err := b.s.enqueue(n); err != nil {
			return err
		}
	}
	return b.s.flushBatch()
}

// buildNodes maps g's nodes to DSP ops, fusing pairs the DSP computes
// together.
func buildNodes(g *graph.Graph, fusion bool) ([]*opNode, error) {
	var nodes []*graph.Tensor
	for _, t := range g.Nodes {
		if !isNoop(t.Op) && !t.IsEmpty() {
			nodes = append(nodes, t)
		}
	}
	built := make([]*opNode, 0, len(nodes))
	for i := 0; i < len(nodes); i++ {
		t := nodes[i]
		var n *opNode
		if fusion && i+1 < len(nodes) {
			if n = fuse(g, t, nodes[i+1]); n != nil {
				i++
			}
		}
		if n == nil {
			var err error
			if n, err = newNode(t); err != nil {
				return nil, err
			}
		}
		built = append(built, n)
	}
	return built, nil
}

// prepare repacks a quantized matmul weight set untiled (run-time repack)
// and marks the output as written in ggml's layout.
func (b *hexBackend) prepare(n *opNode) error {
	if n.op == htp.OpMulMat || n.op == htp.OpMulMatID || n.op == htp.OpMulMatAdd {
		w := n.inputs[0]
		x, err := extraOf(w)
		if err != nil {
			return err
		}
		if isTiledType(w.Type) && !x.tiled() {
			if b.dev.opts.RTRepack == 0 || !isTiledWeight(w) {
				return fmt.Errorf("hexagon: %s: the DSP reads %s weights tiled, and %s is not (GGML_HEXAGON_RT_REPACK=0 or a view)",
					b.Name(), w.Type, w)
			}
			if err := b.s.sync(); err != nil {
				return err
			}
			if err := runtimeRepack(w, x); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close waits for queued work. The session stays open: it belongs to the
// device, as in upstream, and the registry's Close releases it.
func (b *hexBackend) Close() error {
	b.s.work.Lock()
	defer b.s.work.Unlock()
	if b.closed {
		return nil
	}
	err := b.check()
	if err == nil {
		err = b.s.sync()
	}
	b.closed = true
	return err
}
