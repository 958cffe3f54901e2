package openvino

import (
	"fmt"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// GGML_OPENVINO_ENABLE_FALLBACK: ggml-openvino then asks is_model_splitted
// whether the graph it got is the whole model or a piece the scheduler cut
// out around ops another device runs, and does not cache the compiled
// pieces (their boundaries move with the scheduler's choices). The test is
// upstream's: a node some node outside the piece also reads (its use count
// in the whole graph, which a scheduler split keeps, exceeds its uses in
// the piece), or a source that is neither a node of the piece, a weight
// nor a leaf of it (token ids excepted).
func splitGraph(g *graph.Graph) bool {
	if len(g.Nodes) <= 1 && len(g.Leafs) == 0 {
		return false // test-backend-ops' one-node views
	}
	if len(g.Nodes) == 1 && (g.Nodes[0].Op == ops.Transpose || g.Nodes[0].Op == ops.Permute) {
		return false
	}
	uses := make(map[*graph.Tensor]int, len(g.Nodes))
	nodes := make(map[*graph.Tensor]bool, len(g.Nodes))
	for _, n := range g.Nodes {
		nodes[n] = true
		for _, s := range n.Src {
			if s != nil {
				uses[s]++
			}
		}
	}
	for _, n := range g.Nodes {
		if n.Op != ops.None && g.UseCount(n) != uses[n] {
			return true
		}
	}
	leafs := make(map[*graph.Tensor]bool, len(g.Leafs))
	for _, l := range g.Leafs {
		leafs[l] = true
	}
	for _, n := range g.Nodes {
		for j, s := range n.Src {
			if s == nil || nodes[s] || isWeight(s) || leafs[s] {
				continue
			}
			if n.Op == ops.GetRows && j == 1 && n.Src[0] != nil && n.Src[0].Op == ops.None {
				return false // token ids: the first piece of a model
			}
			return true
		}
	}
	return false
}

// uncached reports whether g's compiled model stays out of the cache:
// DISABLE_CACHE, or a split piece with ENABLE_FALLBACK.
func (be *ovBackend) uncached(g *graph.Graph) bool {
	return be.opts.DisableCache || (be.opts.EnableFallback && splitGraph(g))
}

// cacheOnlyMiss is the error of GGML_OPENVINO_COMPILED_MODEL_CACHE_ONLY for
// a graph with no exported model: upstream never reads the weights then,
// so a missing graph cannot be compiled.
func (be *ovBackend) cacheOnlyMiss(blob string) error {
	if be.opts.CompiledModelCacheDir == "" {
		return fmt.Errorf("openvino: GGML_OPENVINO_COMPILED_MODEL_CACHE_ONLY needs GGML_OPENVINO_COMPILED_MODEL_CACHE_DIR")
	}
	if blob == "" {
		return fmt.Errorf("openvino: GGML_OPENVINO_COMPILED_MODEL_CACHE_ONLY: this OpenVINO has no ov_core_import_model/ov_compiled_model_export_model")
	}
	return fmt.Errorf("openvino: GGML_OPENVINO_COMPILED_MODEL_CACHE_ONLY: no compiled model %s for this graph", blob)
}
