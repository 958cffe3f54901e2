// Package optest is ggml-go's op-conformance suite, after ggml's
// test-backend-ops: cases build small graphs around one operation with
// varied shapes, types, strides, views, parameters and magnitudes.
// RunDevice (TestDevice in a package's tests) runs them on any
// backend.Device through the device's own buffers, weights in WEIGHTS
// buffers and sentinels between the tensors, and compares the outputs with
// a reference (the real ggml through the graph mirror, or our CPU device)
// with test-backend-ops' error measures and tolerances. Cases either side
// does not support are skipped, never passed; a device error is a failure.
//
// A device package is tested with one call:
//
//	func TestConformance(t *testing.T) {
//		optest.TestDevice(t, mydevice.Device(), optest.Options{})
//	}
package optest

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"

	"github.com/ggml-go/ggml/graph"
)

// Case is one conformance case.
type Case struct {
	// Name describes the case as test-backend-ops does:
	// "ADD(type=f32,ne=[10,5,4,3],nr=[2,1,1,1])".
	Name string
	// Build creates the case's tensors in c and returns the outputs to
	// compare. Leafs are inputs: Run fills them (see Init).
	Build func(c *graph.Context) []*graph.Tensor
	// Init fills input leaf t; nil, or returning false, leaves it to the
	// default: uniform values in [-1, 1] (quantized for quantized types).
	// Index tensors (I32/I64) need an Init.
	Init func(rng *rand.Rand, t *graph.Tensor) bool
	// Tol is the comparison; the zero value is NMSE <= 1e-7.
	Tol Tolerance
	// Full marks cases only the full run includes.
	Full bool
	// GGMLBug, when set, says why the real ggml computes something other
	// than the operation for this case. Run skips the case (with this
	// reason) when either side is the ggml mirror, rather than fail our
	// correct result or pass a wrong one.
	GGMLBug string
}

// Tolerance says how outputs are compared.
type Tolerance struct {
	// MaxNMSE is the largest normalized mean squared error
	// sum((a-b)^2)/sum(a^2) allowed; 0 means 1e-7.
	MaxNMSE float64
	// Exact requires identical values (ARGMAX, CPY to the same type, ...).
	Exact bool
	// Compare replaces the default comparison (e.g. set equality for
	// TOP_K); want and got are the outputs as float32, out the tensor.
	Compare func(want, got []float32, out *graph.Tensor) error
}

// DefaultNMSE is test-backend-ops' default tolerance.
const DefaultNMSE = 1e-7

// Family groups case generators, e.g. "binary" or "rope".
type family struct {
	name string
	gen  func(full bool) []Case
}

var families []family

// Register adds a family of case generators; each cases_*.go file calls it
// from init. gen(full) returns the quick subset, or everything when full.
func Register(name string, gen func(full bool) []Case) {
	families = append(families, family{name, gen})
}

// Cases returns the registered cases, quick or full, whose operation name
// (as OpName reports it) is in only, or all when only is empty.
func Cases(full bool, only []string) []Case {
	want := map[string]bool{}
	for _, o := range only {
		want[strings.ToUpper(strings.TrimSpace(o))] = true
	}
	var out []Case
	for _, f := range families {
		for _, c := range f.gen(full) {
			if c.Full && !full {
				continue
			}
			if len(want) > 0 && !want[OpNameOf(c.Name)] {
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

// OpNameOf is the operation name a case name starts with ("ADD(...)" -> "ADD").
func OpNameOf(caseName string) string {
	if i := strings.IndexByte(caseName, '('); i >= 0 {
		return caseName[:i]
	}
	return caseName
}

// Families lists the registered family names, sorted.
func Families() []string {
	var out []string
	for _, f := range families {
		out = append(out, f.name)
	}
	sort.Strings(out)
	return out
}

// Fmt formats the parameters of a case name: Fmt("ADD", "type", t, "ne",
// ne) gives "ADD(type=f32,ne=[10,5,4,3])". Slices and arrays print as
// [a,b,c].
func Fmt(op string, kv ...any) string {
	var b strings.Builder
	b.WriteString(op)
	b.WriteByte('(')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%v=%s", kv[i], fmtValue(kv[i+1]))
	}
	b.WriteByte(')')
	return b.String()
}

func fmtValue(v any) string {
	s := fmt.Sprint(v)
	if strings.HasPrefix(s, "[") {
		return strings.Join(strings.Fields(s), ",")
	}
	return s
}
