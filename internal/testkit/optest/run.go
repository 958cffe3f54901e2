package optest

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Executor computes graphs in Go memory (Tensor.Data): a reference the
// device under test is compared with.
type Executor interface {
	// Name identifies the executor in reports ("CPU", "ggml").
	Name() string
	// Supports returns nil when every node of g can be computed, or an
	// error saying which cannot.
	Supports(g *graph.Graph) error
	// Compute computes g's nodes in place, in the tensors' Data.
	Compute(g *graph.Graph) error
}

// Status is a case's outcome.
type Status int

// Outcomes.
const (
	Passed Status = iota
	Failed
	Skipped
)

func (s Status) String() string { return [...]string{"passed", "FAILED", "skipped"}[s] }

// Result is the outcome of one case.
type Result struct {
	Case   Case
	Op     string
	Status Status
	// Detail says why a case failed or was skipped.
	Detail string
}

// instance is one built copy of a case: its context, graph and outputs.
type instance struct {
	ctx     *graph.Context
	graph   *graph.Graph
	outputs []*graph.Tensor
}

// build builds c with every tensor in Go memory, as the reference side of
// a run needs it: the Executors (the ggml mirror, our CPU engine) read and
// write Tensor.Data. The device under test gets its memory from its own
// buffer types instead (RunBackend).
func build(c Case) (*instance, error) {
	in, err := buildGraph(c)
	if err != nil {
		return nil, err
	}
	for _, t := range in.ctx.Tensors() {
		if t.ViewSrc == nil {
			t.Data = make([]byte, t.NBytes())
		}
	}
	for _, t := range in.ctx.Tensors() {
		if v := t.ViewSrc; v != nil {
			n := t.NBytes()
			if t.ViewOffs+n > uint64(len(v.Data)) {
				return nil, fmt.Errorf("view %s exceeds its source", t)
			}
			t.Data = v.Data[t.ViewOffs : t.ViewOffs+n : t.ViewOffs+n]
		}
	}
	return in, nil
}

// buildGraph builds c's tensors and graph, without memory.
func buildGraph(c Case) (*instance, error) {
	ctx := graph.NewContext(graph.ContextOptions{})
	outs := c.Build(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, o := range outs {
		graph.SetOutput(o)
	}
	g, err := ctx.Build(outs...)
	if err != nil {
		return nil, err
	}
	return &instance{ctx: ctx, graph: g, outputs: outs}, nil
}

// fill initializes the inputs (leafs) the same way for any seed-equal call.
func (in *instance) fill(c Case, seed int64) error {
	rng := rand.New(rand.NewSource(seed))
	for _, t := range in.graph.Leafs {
		if t.ViewSrc != nil || t.Data == nil {
			continue
		}
		if c.Init != nil && c.Init(rng, t) {
			continue
		}
		if err := FillUniform(rng, t, -1, 1); err != nil {
			return err
		}
	}
	return nil
}

// FillUniform fills a contiguous tensor with values uniform in [lo, hi),
// quantized for quantized types.
func FillUniform(rng *rand.Rand, t *graph.Tensor, lo, hi float32) error {
	n := int(t.NElements())
	v := make([]float32, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float32()
	}
	return SetFloats(t, v)
}

// SetFloats writes v, in element order, into contiguous tensor t, converting
// to its type (quantizing whole rows for quantized types).
func SetFloats(t *graph.Tensor, v []float32) error {
	if !t.IsContiguous() {
		return fmt.Errorf("optest: SetFloats on non-contiguous %s", t)
	}
	switch t.Type {
	case quant.I32, quant.I64, quant.I16, quant.I8:
		return fmt.Errorf("optest: %s needs an Init for its integer values", t)
	}
	_, err := quant.QuantizeInto(t.Data, t.Type, v, int(t.NRows()), int(t.Ne[0]), nil)
	return err
}

// Floats reads tensor t (any strides) as float32 in element order.
func Floats(t *graph.Tensor) ([]float32, error) {
	out := make([]float32, 0, t.NElements())
	row := make([]float32, t.Ne[0])
	rowBytes := t.RowSize()
	for i3 := range t.Ne[3] {
		for i2 := range t.Ne[2] {
			for i1 := range t.Ne[1] {
				off := uint64(i1)*t.Nb[1] + uint64(i2)*t.Nb[2] + uint64(i3)*t.Nb[3]
				if err := readRow(t, off, rowBytes, row); err != nil {
					return nil, err
				}
				out = append(out, row...)
			}
		}
	}
	return out, nil
}

func readRow(t *graph.Tensor, off, rowBytes uint64, row []float32) error {
	switch t.Type {
	case quant.I32:
		for i := range row {
			o := off + uint64(i)*t.Nb[0]
			row[i] = float32(int32(uint32(t.Data[o]) | uint32(t.Data[o+1])<<8 | uint32(t.Data[o+2])<<16 | uint32(t.Data[o+3])<<24))
		}
		return nil
	case quant.F32, quant.F16, quant.BF16:
		es := uint64(t.Type.TypeSize())
		if t.Nb[0] == es {
			return quant.DequantizeInto(row, t.Type, t.Data[off:off+rowBytes])
		}
		for i := range row {
			o := off + uint64(i)*t.Nb[0]
			if err := quant.DequantizeInto(row[i:i+1], t.Type, t.Data[o:o+es]); err != nil {
				return err
			}
		}
		return nil
	}
	return quant.DequantizeInto(row, t.Type, t.Data[off:off+rowBytes])
}

func (r Result) fail(format string, args ...any) Result {
	r.Status, r.Detail = Failed, fmt.Sprintf(format, args...)
	return r
}

func (r Result) skip(format string, args ...any) Result {
	r.Status, r.Detail = Skipped, fmt.Sprintf(format, args...)
	return r
}

// ErrMismatch reports outputs that differ beyond the tolerance.
var ErrMismatch = errors.New("outputs differ")

func compare(tol Tolerance, want, got []float32, out *graph.Tensor) error {
	if len(want) != len(got) {
		return fmt.Errorf("%w: %d values, reference %d", ErrMismatch, len(got), len(want))
	}
	for i := range want {
		if math.IsNaN(float64(got[i])) || math.IsNaN(float64(want[i])) {
			return fmt.Errorf("%w: NaN at element %d %s: got %v, reference %v", ErrMismatch, i, coords(i, out.Ne), got[i], want[i])
		}
		gi, wi := math.IsInf(float64(got[i]), 0), math.IsInf(float64(want[i]), 0)
		if (gi || wi) && got[i] != want[i] {
			return fmt.Errorf("%w: infinity at element %d %s: got %v, reference %v", ErrMismatch, i, coords(i, out.Ne), got[i], want[i])
		}
	}
	if tol.Compare != nil {
		return tol.Compare(want, got, out)
	}
	if tol.Exact {
		if i := firstDiff(want, got); i >= 0 {
			return fmt.Errorf("%w: element %d %s: got %v, reference %v (exact match required)",
				ErrMismatch, i, coords(i, out.Ne), got[i], want[i])
		}
		return nil
	}
	max := tol.MaxNMSE
	if max == 0 {
		max = DefaultNMSE
	}
	if e := NMSE(want, got); !(e <= max) {
		i, w := firstDiff(want, got), worstDiff(want, got)
		return fmt.Errorf("%w: NMSE %.3g > %.3g; first difference at element %d %s: got %v, reference %v; "+
			"largest at element %d %s: got %v, reference %v",
			ErrMismatch, e, max, i, coords(i, out.Ne), got[i], want[i], w, coords(w, out.Ne), got[w], want[w])
	}
	return nil
}

// firstDiff is the index of the first element that differs, or -1.
func firstDiff(want, got []float32) int {
	for i := range want {
		if want[i] != got[i] {
			return i
		}
	}
	return -1
}

// worstDiff is the index of the largest absolute difference.
func worstDiff(want, got []float32) int {
	w, max := 0, -1.0
	for i := range want {
		if d := math.Abs(float64(want[i]) - float64(got[i])); d > max {
			w, max = i, d
		}
	}
	return w
}

// coords turns an element index into its position "[i0,i1,i2,i3]" in a
// tensor of shape ne.
func coords(i int, ne [4]int64) string {
	var c [4]int64
	n := int64(i)
	for d := range 4 {
		if ne[d] > 0 {
			c[d] = n % ne[d]
			n /= ne[d]
		}
	}
	return fmtValue(c)
}

// NMSE is test-backend-ops' normalized mean squared error,
// sum((a-b)^2) / sum(a^2), skipping infinities (which must agree); it is 0
// when both are all zeros.
func NMSE(want, got []float32) float64 {
	var num, den float64
	for i := range want {
		if math.IsInf(float64(want[i]), 0) {
			continue
		}
		d := float64(want[i]) - float64(got[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if num == 0 {
		return 0
	}
	return num / den
}
