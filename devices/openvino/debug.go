package openvino

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

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

// dumpDir is where GGML_OPENVINO_DUMP_IR writes, in the working directory.
const dumpDir = "ggml_openvino_ir"

// dumpSeq numbers the dumped models of the process.
var dumpSeq atomic.Int64

// dumpManifest is model_<n>.json: what a replay needs besides the XML and
// the weights to bind the inputs and check the outputs.
type dumpManifest struct {
	// Ops are the ggml ops of the graph, in node order.
	Ops []string `json:"ops"`
	// Weights is the size of the weights blob (model_<n>.bin).
	Weights uint64     `json:"weights"`
	Inputs  []dumpedIO `json:"inputs"`
	Outputs []dumpedIO `json:"outputs"`
}

// dumpedIO is one Parameter or Result of a dumped model, in port order:
// Shape is that of the dumped run's tensor (what its .input<i>.bin and
// .output<i>.bin hold), Declared the port's own where it has dynamic
// dimensions (-1; dynamic.go).
type dumpedIO struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Shape    []int64 `json:"shape"`
	Declared []int64 `json:"declared,omitempty"`
}

// dumpIR writes, for GGML_OPENVINO_DUMP_IR, exactly what is about to be
// read and compiled: the XML (after irMutator) as ggml_openvino_ir/
// model_<n>.xml and the weights blob as model_<n>.bin, each Constant's
// bytes at the offset the XML gives it (the live offset from lo; the
// gaps between the weight buffers the blob spans are left as holes of a
// sparse file, never read), and model_<n>.json naming the inputs and
// outputs. The first run adds model_<n>.input<i>.bin and
// .output<i>.bin (dumpSlots), so a replay checks the offsets and the
// results. It returns the path prefix.
func dumpIR(xml []byte, consts []constRef, absolute func(constRef) uintptr, lo, hi uintptr, cm *compiledModel, g *graph.Graph, ins, outs []*graph.Tensor) (string, error) {
	if err := os.MkdirAll(dumpDir, 0o755); err != nil {
		return "", err
	}
	name := filepath.Join(dumpDir, "model_"+strconv.FormatInt(dumpSeq.Add(1), 10))
	man := dumpManifest{}
	for _, n := range g.Nodes {
		man.Ops = append(man.Ops, n.Op.String())
	}
	if len(consts) > 0 {
		man.Weights = uint64(hi - lo)
	}
	io := func(slots []slot, ts []*graph.Tensor) ([]dumpedIO, error) {
		var out []dumpedIO
		for i, s := range slots {
			d := dumpedIO{Name: ts[i].Name, Type: s.et.String(), Shape: s.shape}
			if s.dyn {
				shape, err := s.shapeFor(ts[i])
				if err != nil {
					return nil, err
				}
				d.Shape, d.Declared = shape, s.shape
			}
			out = append(out, d)
		}
		return out, nil
	}
	var errIn, errOut error
	man.Inputs, errIn = io(cm.params, ins)
	man.Outputs, errOut = io(cm.results, outs)
	if err := errors.Join(errIn, errOut); err != nil {
		return "", err
	}
	js, err := json.MarshalIndent(man, "", " ")
	if err != nil {
		return "", err
	}
	f, err := os.Create(name + ".bin")
	if err != nil {
		return "", err
	}
	err = f.Truncate(int64(man.Weights))
	for _, c := range consts {
		if err != nil {
			break
		}
		_, err = f.WriteAt(unsafe.Slice((*byte)(cPtr(absolute(c))), c.size), int64(absolute(c)-lo))
	}
	return name, errors.Join(err, f.Close(), os.WriteFile(name+".xml", xml, 0o644), os.WriteFile(name+".json", js, 0o644))
}

// dumpSlots writes the bytes of each input (st nil, before the infer) or
// output (after it) of a dumped model as prefix<i>.bin, in the port's
// element order: an output bound to scratch memory is taken from there,
// before it is scattered into a strided tensor.
func dumpSlots(prefix string, slots []slot, k keyInfo, st *reqState) {
	for i, s := range slots {
		t := k.resolve(s.loc)
		n := uint64(t.NElements()) * uint64(t.Type.TypeSize())
		var b []byte
		if st != nil && st.copyOut[i] {
			b = st.scratch[i][:n]
		} else if hb, err := hostBytes(t, n); err != nil {
			slog.Warn("openvino: GGML_OPENVINO_DUMP_IR", "err", err)
			return
		} else {
			b = hb
		}
		if err := os.WriteFile(prefix+strconv.Itoa(i)+".bin", b, 0o644); err != nil {
			slog.Warn("openvino: GGML_OPENVINO_DUMP_IR", "err", err)
			return
		}
	}
}
