package hexagon

import (
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// nodeCache keeps the DSP ops last built for a graph (upstream's graph-uid
// node cache: cached_uid and cached_nodes): a graph computed again reuses
// them, skipping the op mapping, fusion and kernel-parameter solving; the
// batches are still built afresh, since the DSP rewrites their
// descriptors and the tensors may have moved.
//
// A ggml graph carries a uid that changes when it is rebuilt; a Go graph
// has none, so the graph's identity stands for it. Because a Go graph can
// be edited in place, a hit also needs every node to be the same tensor
// with the same op, parameters, flags, sources, type and shape as when the
// ops were built. Invalidation, as upstream's: another graph replaces the
// cache; stricter than upstream's: a changed graph rebuilds, and so does a
// reopened session.
type nodeCache struct {
	g      *graph.Graph
	fusion bool
	keys   []nodeKey
	ops    []*opNode

	hits, misses int // for tests
}

// nodeKey is what building a node's ops reads from it.
type nodeKey struct {
	t      *graph.Tensor
	op     ops.Op
	params ops.Params
	flags  graph.Flags
	src    [graph.MaxSrc]*graph.Tensor
	typ    quant.Type
	ne     [graph.MaxDims]int64
	nb     [graph.MaxDims]uint64
	uses   int
}

func keyOf(g *graph.Graph, t *graph.Tensor) nodeKey {
	return nodeKey{t: t, op: t.Op, params: t.Params, flags: t.Flags, src: t.Src, typ: t.Type, ne: t.Ne, nb: t.Nb,
		uses: g.UseCount(t)}
}

// lookup returns the cached ops of g, or nil.
func (c *nodeCache) lookup(g *graph.Graph, fusion bool) []*opNode {
	if c.g != g || c.fusion != fusion || len(c.keys) != len(g.Nodes) {
		c.misses++
		return nil
	}
	for i, t := range g.Nodes {
		if keyOf(g, t) != c.keys[i] {
			c.misses++
			return nil
		}
	}
	c.hits++
	return c.ops
}

// store makes ops g's cached ops.
func (c *nodeCache) store(g *graph.Graph, fusion bool, built []*opNode) {
	c.g, c.fusion, c.ops = g, fusion, built
	c.keys = c.keys[:0]
	for _, t := range g.Nodes {
		c.keys = append(c.keys, keyOf(g, t))
	}
}

func (c *nodeCache) reset() { *c = nodeCache{} }
