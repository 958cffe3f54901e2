package openvino

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/ggml-go/ggml/graph"
)

// translationTag keeps the compiled models of option settings that change
// the IR of a graph apart in the device's cache.
func (o *Options) translationTag() string {
	if o.NativeSoftplus {
		return "|native_softplus"
	}
	return ""
}

// cgraphFile is where GGML_OPENVINO_DUMP_CGRAPH writes, in the working
// directory, as upstream does.
const cgraphFile = "cgraph_ov.txt"

// dumpCgraph writes the graph about to be translated to cgraphFile: one
// line per node and leaf with its op, type, shape, strides and sources by
// name; with addresses, each tensor's data address too
// (GGML_OPENVINO_PRINT_CGRAPH_TENSOR_ADDRESS).
func dumpCgraph(g *graph.Graph, addresses bool) error {
	var sb strings.Builder
	line := func(kind string, i int, t *graph.Tensor) {
		fmt.Fprintf(&sb, "%s %d: %s %q %s ne=%v nb=%v", kind, i, t.Op, t.Name, t.Type, t.Ne, t.Nb)
		if addresses {
			fmt.Fprintf(&sb, " data=%#x", addr(t))
		}
		for j, s := range t.Src {
			if s != nil {
				fmt.Fprintf(&sb, " src%d=%q", j, s.Name)
			}
		}
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, "=== GRAPH ===\nn_nodes = %d\n", len(g.Nodes))
	for i, t := range g.Nodes {
		line("node", i, t)
	}
	fmt.Fprintf(&sb, "n_leafs = %d\n", len(g.Leafs))
	for i, t := range g.Leafs {
		line("leaf", i, t)
	}
	sb.WriteString("========================================\n")
	if err := os.WriteFile(cgraphFile, []byte(sb.String()), 0o644); err != nil {
		return fmt.Errorf("openvino: GGML_OPENVINO_DUMP_CGRAPH: %w", err)
	}
	return nil
}

// logSlots logs each input or output of an infer: its tensor, element
// type and shape (GGML_OPENVINO_DEBUG_INPUT, GGML_OPENVINO_DEBUG_OUTPUT).
func logSlots(msg string, slots []slot, k keyInfo) {
	for i, s := range slots {
		t := k.resolve(s.loc)
		slog.Info(msg, "index", i, "tensor", t.Name, "type", s.et.String(), "shape", s.shape)
	}
}
