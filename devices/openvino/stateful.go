package openvino

import (
	"encoding/binary"
	"strings"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// GGML_OPENVINO_STATEFUL_EXECUTION: the KV cache lives in the model as
// OpenVINO variables instead of in ggml's cache tensors. ggml-openvino
// gets there with MakeStateful (each KV Parameter/Result pair becomes a
// ReadValue/Assign) and drives the variables through the C++
// VariableState API: reset_state when a sequence starts at position 0,
// trimming by set_state when it goes back, a rebuild from the KV input
// when it jumps ahead. The C API has no state functions in any release
// (openvino.md 2.3), so here the variables are written into the IR:
//
//	Parameter(cache) -> ReadValue(variable_id, init = the Parameter) -> ...
//	... -> updated cache contents -> Assign(variable_id)
//
// and a fresh infer request, whose variables are unset, stands for
// reset_state and for the rebuild: its first infer initializes each
// variable from the ggml cache the Parameter is bound to. The variables
// hold the whole cache (static shapes), so going back needs no trimming:
// the cells past the position are masked and then overwritten.
//
// One difference is forced by the C API: a variable belongs to one infer
// request of one compiled model, and here a graph of another shape (the
// prefill, a decode over more cells) is another model. So the updated
// cache is also written to ggml's cache tensor, and a request whose
// variables another request's run made stale (or a sequence starting
// over, or jumping ahead) is replaced by a fresh one, which reads the
// current cache. A request that runs again after itself reads its
// variables, not ggml's cache. Stateful execution is off on the NPU and
// on the static path, as in ggml-openvino.

// statefulOn reports whether graphs run stateful on a device of kind k.
func (o *Options) statefulOn(k Kind) bool { return o.Stateful(k) && !o.Static(k) }

// statefulKeyTag keeps stateful and stateless models of one graph apart
// in the compiled-model cache (upstream's key has is_stateful too).
const statefulKeyTag = "|stateful"

// isKVCache is ggml-openvino's test for a KV cache tensor: the
// destination of a SET_ROWS, or a tensor named cache_*.
func isKVCache(g *graph.Graph, t *graph.Tensor) bool {
	if strings.HasPrefix(t.Name, "cache_") {
		return true
	}
	for _, n := range g.Nodes {
		if n.Op == ops.SetRows && (n.Src[2] == t || n.ViewSrc == t) {
			return true
		}
	}
	return false
}

// stateRead turns the Parameter f bound to base t into the variable of t
// when t is a KV cache of a stateful graph.
func (b *builder) stateRead(t *graph.Tensor, f value) value {
	if b.stateIDs == nil || !isKVCache(b.g, t) {
		return f
	}
	id := t.Name
	b.stateIDs[t] = id
	return b.m.add("ReadValue", "opset6", []attr{{"variable_id", id}, {"variable_type", f.et.String()},
		{"variable_shape", dimsAttr(f.shape)}}, f.et, f.shape, f)
}

// stateAssign writes the final contents of a KV cache output into its
// variable too (the Result is still made: see above).
func (b *builder) stateAssign(o outputSpec) {
	base := o.t
	if base.ViewSrc != nil {
		base = base.ViewSrc
	}
	id, ok := b.stateIDs[base]
	if !ok {
		return
	}
	if v, err := b.flatOf(base); err == nil {
		b.m.addN("Assign", "opset6", []attr{{"variable_id", id}}, nil, v)
	}
}

// statePosition is where the graph's tokens start and how many there are
// (its ROPE positions), or ok false for a graph without positions.
func statePosition(g *graph.Graph) (pos0, n int64, ok bool) {
	for _, nd := range g.Nodes {
		if nd.Op != ops.Rope || nd.Src[1] == nil {
			continue
		}
		p := nd.Src[1]
		raw := tensorBytes(p)
		if len(raw) < 4 {
			return 0, 0, false
		}
		return int64(int32(binary.LittleEndian.Uint32(raw))), p.Ne[0], true
	}
	return 0, 0, false
}

// stateStep applies the state policy to the request of stateful model cm
// before it runs g: a sequence starting over (position 0), jumping past
// what the variables hold, or a cache another request wrote since this
// one last ran, gets a fresh request; continuing or going back keeps it.
// It returns the request to run.
func (be *ovBackend) stateStep(g *graph.Graph, cm *compiledModel, r *reqState) (*reqState, error) {
	if !cm.stateful {
		return r, nil
	}
	pos0, n, ok := statePosition(g)
	stale := be.kvOwner != r || !ok || pos0 == 0 || pos0 > r.kvSize
	if stale && r.infers > 0 {
		r.free(be.dev.rt.lib)
		delete(be.reqs, cm)
		var err error
		if r, err = be.request(cm); err != nil {
			return nil, err
		}
		be.stateResets++
	}
	r.kvSize = pos0 + n
	r.infers++
	be.kvOwner = r
	return r, nil
}
