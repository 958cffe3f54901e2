package openvino

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// ErrTranslate reports a node the IR builder cannot express.
var ErrTranslate = errors.New("openvino: cannot translate")

// A translator turns one ggml node into IR, from the values of its
// sources (the builder resolves them), and returns the node's value in its
// own type and shape ([ne3, ne2, ne1, ne0]). Every translator uses the
// public opsets only: ggml-openvino's internal RoPE, RMS and GatherMatmul
// are decomposed.
type translator func(b *builder, n *graph.Tensor) (value, error)

// ovShape is a tensor's shape in OpenVINO order: [ne3, ne2, ne1, ne0].
func ovShapeOf(t *graph.Tensor) []int64 { return []int64{t.Ne[3], t.Ne[2], t.Ne[1], t.Ne[0]} }

// builder translates one graph.
type builder struct {
	m    *irModel
	dev  *device
	kind Kind

	inGraph map[*graph.Tensor]int   // node -> position
	vals    map[*graph.Tensor]value // computed values of nodes
	flat    map[*graph.Tensor]value // current contents of base tensors, 1-D
	params  []paramBinding          // in Parameter order
	writes  map[*graph.Tensor][]int // base -> positions of nodes writing into it
	wvals   map[*graph.Tensor]value // writing node -> value it writes
	weights map[*graph.Tensor]value // weight subgraphs already built, 4-D
	mats    map[*graph.Tensor]value // the same in matShape
	// conv holds the conversions of quantized tensors outside WEIGHTS
	// buffers that the model's Constants point at (hostconv.go).
	conv []*convEntry
	// uses says how the model reads each weight (RELEASE_WEIGHTS on the
	// CPU drops only what MatMuls alone read).
	uses map[*graph.Tensor]weightUse
	// g is the graph translated; stateIDs, non-nil for a stateful model,
	// holds the variable of each KV cache (stateful.go).
	g        *graph.Graph
	stateIDs map[*graph.Tensor]string
	// nativeSoftplus builds SOFTPLUS as SoftPlus-4
	// (GGML_OPENVINO_NATIVE_SOFTPLUS).
	nativeSoftplus bool
	// orig, for a probe clone (dynamic.go), is the graph tensor each
	// cloned tensor stands for: its memory decides what is an input and
	// which writes outlive the graph. shaped marks the inputs whose
	// Parameters keep their 4-D shape, so that their tagged axes can be
	// dynamic.
	orig   map[*graph.Tensor]*graph.Tensor
	shaped func(*graph.Tensor) bool
}

// memOf is the tensor whose memory t stands for.
func (b *builder) memOf(t *graph.Tensor) *graph.Tensor {
	if o, ok := b.orig[t]; ok {
		return o
	}
	return t
}

// paramBinding is a Parameter and the memory it is bound to: the whole of
// base tensor t.
type paramBinding struct {
	t     *graph.Tensor
	et    elemType
	shape []int64
}

func newBuilder(dev *device, g *graph.Graph) *builder {
	b := &builder{m: newIRModel(), dev: dev, kind: dev.rt.kind,
		inGraph: map[*graph.Tensor]int{}, vals: map[*graph.Tensor]value{}, flat: map[*graph.Tensor]value{},
		writes: map[*graph.Tensor][]int{}, wvals: map[*graph.Tensor]value{}, weights: map[*graph.Tensor]value{}, mats: map[*graph.Tensor]value{}, g: g}
	for i, n := range g.Nodes {
		b.inGraph[n] = i
	}
	return b
}

// isViewOp reports the ops that only reinterpret their source's memory.
func isViewOp(o ops.Op) bool {
	return o == ops.View || o == ops.Reshape || o == ops.Permute || o == ops.Transpose || o == ops.None
}

// translate builds every node.
func (b *builder) translate(g *graph.Graph) error {
	for i, n := range g.Nodes {
		if n.Op == ops.None {
			continue
		}
		tr, ok := opTranslators[n.Op]
		if !ok {
			return fmt.Errorf("%w: op %s (%s)", ErrTranslate, n.Op, n.Name)
		}
		if isViewOp(n.Op) {
			continue // views are resolved where they are read
		}
		v, err := tr(b, n)
		if err != nil {
			return fmt.Errorf("%w: %s (%s): %w", ErrTranslate, n.Name, n.Op, err)
		}
		if v.et != mustElem(n.Type) || !sameShape(v.shape, ovShapeOf(n)) {
			return fmt.Errorf("%w: %s (%s) translated to %v%v, want %v%v", ErrTranslate, n.Name, n.Op, v.et, v.shape, n.Type, ovShapeOf(n))
		}
		b.vals[n] = v
		base := n
		if n.ViewSrc != nil {
			base = n.ViewSrc
		}
		b.writes[base] = append(b.writes[base], i)
		b.wvals[n] = v
		if n.ViewSrc != nil {
			if err := b.writeView(n.ViewSrc, n, v); err != nil {
				return err
			}
		} else if _, viewed := b.flat[n]; viewed {
			b.flat[n] = b.reshape(v, []int64{n.NElements()})
		}
	}
	return nil
}

func mustElem(t quant.Type) elemType {
	e, err := ggmlElem(t)
	if err != nil {
		return etDynamic
	}
	return e
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// get is the value of t as a node of this graph reads it.
func (b *builder) get(t *graph.Tensor) (value, error) {
	if t == nil {
		return value{}, fmt.Errorf("missing source")
	}
	if v, ok := b.vals[t]; ok {
		return v, nil
	}
	if t.ViewSrc != nil {
		if t.Type.IsQuantized() {
			return value{}, fmt.Errorf("view %s of a quantized tensor", t.Name)
		}
		f, err := b.flatOf(t.ViewSrc)
		if err != nil {
			return value{}, err
		}
		return b.viewOf(f, t)
	}
	if _, ok := b.inGraph[t]; ok && t.Op != ops.None {
		return value{}, fmt.Errorf("source %s used before it is computed", t.Name)
	}
	if w, ok, err := b.weight(t); ok || err != nil {
		return w, err
	}
	if t.Type.IsQuantized() {
		return value{}, fmt.Errorf("quantized input %s outside a weight", t.Name)
	}
	f, err := b.flatOf(t)
	if err != nil {
		return value{}, err
	}
	return b.reshape(f, ovShapeOf(t)), nil
}

// f32 is get converted to f32 (float sources; integers are converted too).
func (b *builder) f32(t *graph.Tensor) (value, error) {
	v, err := b.get(t)
	if err != nil {
		return v, err
	}
	return b.convert(v, etF32), nil
}

// flatOf is the current contents of base tensor t, 1-D: the Parameter
// bound to its memory, or its value computed here.
func (b *builder) flatOf(t *graph.Tensor) (value, error) {
	if f, ok := b.flat[t]; ok {
		return f, nil
	}
	if v, ok := b.vals[t]; ok {
		f := b.reshape(v, []int64{t.NElements()})
		b.flat[t] = f
		return f, nil
	}
	et, err := ggmlElem(t.Type)
	if err != nil {
		return value{}, err
	}
	if addr(b.memOf(t)) == 0 {
		return value{}, fmt.Errorf("input %s has no host memory", t.Name)
	}
	shape := []int64{t.NElements()}
	var f value
	if b.shaped != nil && b.shaped(t) {
		s4 := ovShapeOf(t)
		f = b.reshape(b.m.parameter(t.Name, et, s4), shape)
		b.params = append(b.params, paramBinding{t: t, et: et, shape: s4})
	} else {
		f = b.m.parameter(t.Name, et, shape)
		b.params = append(b.params, paramBinding{t: t, et: et, shape: shape})
	}
	f = b.stateRead(t, f)
	b.flat[t] = f
	return f, nil
}

// viewOf reads view t (any strides, ViewOffs) from f, the 1-D contents of
// its base: a Slice when the view is a contiguous range, a Slice, Reshape
// and Transpose when it is a permutation of one, else a Gather of every
// element.
func (b *builder) viewOf(f value, t *graph.Tensor) (value, error) {
	es := uint64(t.Type.TypeSize())
	if t.ViewOffs%es != 0 {
		return value{}, fmt.Errorf("view %s at byte %d, not a multiple of %d", t.Name, t.ViewOffs, es)
	}
	start := int64(t.ViewOffs / es)
	n := t.NElements()
	if perm, phys, ok := permutedContiguous(t); ok {
		s := b.slice1(f, start, start+n)
		if unitMovesOnly(perm, phys) {
			// Only axes of extent 1 move (a [N] cache viewed as [1, N]
			// rows of one element, the transposed V cache that SET_ROWS
			// writes): the same elements in the same order, a Reshape.
			return b.reshape(s, ovShapeOf(t)), nil
		}
		return b.transpose(b.reshape(s, phys), perm), nil
	}
	if start, block, keep, ok := boxView(t, f.shape[0]); ok {
		total := int64(1)
		for _, e := range block {
			total *= e
		}
		v := b.reshape(b.slice1(f, start, start+total), block)
		for i := range block {
			if keep[i] < block[i] {
				v = b.sliceAxis(v, i, 0, keep[i])
			}
		}
		perm, phys := permOf(t, strideOrder(t))
		v = b.reshape(v, phys)
		if unitMovesOnly(perm, phys) {
			return b.reshape(v, ovShapeOf(t)), nil
		}
		return b.transpose(v, perm), nil
	}
	idx, err := viewIndices(t)
	if err != nil {
		return value{}, err
	}
	return b.reshape(b.gather(f, b.indexConst(idx), 0), ovShapeOf(t)), nil
}

// permutedContiguous reports whether view t is a permutation of a
// contiguous block: phys is that block's shape (OpenVINO order, slowest
// first) and perm the Transpose taking it to t's [ne3, ne2, ne1, ne0].
func permutedContiguous(t *graph.Tensor) (perm []int64, phys []int64, ok bool) {
	es := uint64(t.Type.TypeSize())
	order := strideOrder(t)
	want := es
	for _, d := range order {
		if t.Ne[d] == 1 {
			continue
		}
		if t.Nb[d] != want {
			return nil, nil, false
		}
		want *= uint64(t.Ne[d])
	}
	perm, phys = permOf(t, order)
	return perm, phys, true
}

// strideOrder is t's ggml dims sorted by stride, fastest first; extents of
// 1 may have any stride and are placed last, by their index.
func strideOrder(t *graph.Tensor) []int {
	order := []int{0, 1, 2, 3}
	for i := 1; i < 4; i++ {
		for j := i; j > 0; j-- {
			a, c := order[j-1], order[j]
			ka, kc := t.Nb[a], t.Nb[c]
			if t.Ne[a] == 1 {
				ka = math.MaxUint64
			}
			if t.Ne[c] == 1 {
				kc = math.MaxUint64
			}
			if ka > kc || (ka == kc && a > c) {
				order[j-1], order[j] = c, a
			}
		}
	}
	return order
}

// permOf is the dense block of t's extents in stride order (phys, slowest
// first) and the Transpose taking it to t's [ne3, ne2, ne1, ne0].
func permOf(t *graph.Tensor, order []int) (perm []int64, phys []int64) {
	// phys lists dims slowest first; perm[i] is the phys axis holding OV
	// axis i (ggml dim 3-i).
	phys = make([]int64, 4)
	pos := make([]int64, 4)
	for i, d := range order {
		phys[3-i] = t.Ne[d]
		pos[d] = int64(3 - i)
	}
	perm = []int64{pos[3], pos[2], pos[1], pos[0]}
	return perm, phys
}

// boxView reports whether view t is a box cut from a block of its base: its
// strides, in stride order, each a multiple of the last and at least the
// last's extent times it (rows of a cache read over their first n_kv
// cells, the transposed V cache). block is that block's shape (slowest
// first) from element start on, keep how much of each axis t takes (from
// 0); it must lie inside the base's n elements. Read as Slices, it needs
// no index list: one per element (viewIndices) grows with the view and,
// for the KV cells, with every token count.
func boxView(t *graph.Tensor, n int64) (start int64, block, keep []int64, ok bool) {
	es := uint64(t.Type.TypeSize())
	if t.ViewOffs%es != 0 {
		return 0, nil, nil, false
	}
	var dims []int
	for _, d := range strideOrder(t) {
		if t.Ne[d] > 1 {
			dims = append(dims, d)
		}
	}
	if len(dims) == 0 || t.Nb[dims[0]]%es != 0 {
		return 0, nil, nil, false
	}
	// Fastest first, then reversed.
	if inner := int64(t.Nb[dims[0]] / es); inner > 1 {
		block, keep = append(block, inner), append(keep, 1)
	}
	for i, d := range dims {
		ext := t.Ne[d]
		if i+1 < len(dims) {
			next := t.Nb[dims[i+1]]
			if next%t.Nb[d] != 0 || next < t.Nb[d]*uint64(t.Ne[d]) {
				return 0, nil, nil, false
			}
			ext = int64(next / t.Nb[d])
		}
		block, keep = append(block, ext), append(keep, t.Ne[d])
	}
	start = int64(t.ViewOffs / es)
	total := int64(1)
	for _, e := range block {
		total *= e
	}
	if start+total > n {
		return 0, nil, nil, false
	}
	slices.Reverse(block)
	slices.Reverse(keep)
	return start, block, keep, true
}

// unitMovesOnly reports whether Transpose perm of a tensor of shape phys
// keeps the axes of extent above 1 in their order (the identity
// included): it then reorders no element.
func unitMovesOnly(perm, phys []int64) bool {
	last := int64(-1)
	for _, a := range perm {
		if phys[a] == 1 {
			continue
		}
		if a < last {
			return false
		}
		last = a
	}
	return true
}

// viewIndices lists, in t's logical order, the element index in its base
// of every element of view t.
func viewIndices(t *graph.Tensor) ([]int64, error) {
	es := uint64(t.Type.TypeSize())
	for i := 0; i < 4; i++ {
		if t.Ne[i] > 1 && t.Nb[i]%es != 0 {
			return nil, fmt.Errorf("view %s stride %d not a multiple of %d", t.Name, t.Nb[i], es)
		}
	}
	idx := make([]int64, 0, t.NElements())
	for i3 := int64(0); i3 < t.Ne[3]; i3++ {
		for i2 := int64(0); i2 < t.Ne[2]; i2++ {
			for i1 := int64(0); i1 < t.Ne[1]; i1++ {
				for i0 := int64(0); i0 < t.Ne[0]; i0++ {
					off := t.ViewOffs + uint64(i0)*t.Nb[0] + uint64(i1)*t.Nb[1] + uint64(i2)*t.Nb[2] + uint64(i3)*t.Nb[3]
					idx = append(idx, int64(off/es))
				}
			}
		}
	}
	return idx, nil
}

// writeView records that node n wrote v into view region n of base: the
// base's contents become a copy with those elements replaced
// (ScatterUpdate, or Concat around a contiguous range).
func (b *builder) writeView(base, n *graph.Tensor, v value) error {
	f, err := b.flatOf(base)
	if err != nil {
		return err
	}
	cnt := n.NElements()
	upd := b.reshape(v, []int64{cnt})
	es := uint64(n.Type.TypeSize())
	if n.IsContiguous() && n.ViewOffs%es == 0 {
		start := int64(n.ViewOffs / es)
		total := base.NElements()
		parts := []value{}
		if start > 0 {
			parts = append(parts, b.slice1(f, 0, start))
		}
		parts = append(parts, upd)
		if start+cnt < total {
			parts = append(parts, b.slice1(f, start+cnt, total))
		}
		if len(parts) == 1 {
			b.flat[base] = parts[0]
		} else {
			b.flat[base] = b.m.add("Concat", "opset1", []attr{{"axis", "0"}}, f.et, f.shape, parts...)
		}
		return nil
	}
	idx, err := viewIndices(n)
	if err != nil {
		return err
	}
	b.flat[base] = b.m.add("ScatterUpdate", "opset3", nil, f.et, f.shape, f, b.indexConst(idx), upd, b.m.constI64(nil, 0))
	return nil
}

// indexConst is a 1-D i64 Constant of indices.
func (b *builder) indexConst(idx []int64) value { return b.m.i64s(idx...) }

// --- small IR helpers ---

func (b *builder) convert(v value, et elemType) value {
	if v.et == et {
		return v
	}
	return b.m.add("Convert", "opset1", []attr{{"destination_type", et.String()}}, et, v.shape, v)
}

func (b *builder) reshape(v value, shape []int64) value {
	if sameShape(v.shape, shape) {
		return v
	}
	return b.m.add("Reshape", "opset1", []attr{{"special_zero", "false"}}, v.et, shape, v, b.m.i64s(shape...))
}

func (b *builder) transpose(v value, perm []int64) value {
	shape := make([]int64, len(perm))
	for i, p := range perm {
		shape[i] = v.shape[p]
	}
	return b.m.add("Transpose", "opset1", nil, v.et, shape, v, b.m.i64s(perm...))
}

// slice1 is v[start:stop] of a 1-D value.
func (b *builder) slice1(v value, start, stop int64) value {
	if start == 0 && stop == v.shape[0] {
		return v
	}
	return b.sliceAxis(v, 0, start, stop)
}

// sliceAxis is v[..., start:stop, ...] along axis.
func (b *builder) sliceAxis(v value, axis int, start, stop int64) value {
	shape := cloneShape(v.shape)
	shape[axis] = stop - start
	return b.m.add("Slice", "opset8", nil, v.et, shape, v, b.m.i64s(start), b.m.i64s(stop), b.m.i64s(1), b.m.i64s(int64(axis)))
}

func (b *builder) gather(data, idx value, axis int64) value {
	shape := append(append(cloneShape(data.shape[:axis]), idx.shape...), data.shape[axis+1:]...)
	return b.m.add("Gather", "opset8", []attr{{"batch_dims", "0"}}, data.et, shape, data, idx, b.m.constI64(nil, axis))
}

func (b *builder) unaryOp(typ string, x value) value {
	return b.m.add(typ, "opset1", nil, x.et, x.shape, x)
}

// binary applies a numpy-broadcasting opset1 op.
func (b *builder) binary(typ string, x, y value) value {
	return b.m.add(typ, "opset1", []attr{{"auto_broadcast", "numpy"}}, x.et, broadcastShape(x.shape, y.shape), x, y)
}

func broadcastShape(a, c []int64) []int64 {
	n := max(len(a), len(c))
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		da, dc := int64(1), int64(1)
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(c)); j >= 0 {
			dc = c[j]
		}
		out[i] = max(da, dc)
	}
	return out
}

func (b *builder) clamp(x value, lo, hi float32) value {
	return b.m.add("Clamp", "opset1", []attr{{"min", fmtFloat(lo)}, {"max", fmtFloat(hi)}}, x.et, x.shape, x)
}

func fmtFloat(f float32) string {
	switch {
	case math.IsInf(float64(f), 1):
		return "3.4028234663852886e+38"
	case math.IsInf(float64(f), -1):
		return "-3.4028234663852886e+38"
	}
	return fmt.Sprintf("%g", f)
}

func (b *builder) reduce(typ string, x value, axis int64) value {
	shape := cloneShape(x.shape)
	shape[axis] = 1
	return b.m.add(typ, "opset1", []attr{{"keep_dims", "true"}}, x.et, shape, x, b.m.i64s(axis))
}

// finish converts an f32 result to n's type.
func (b *builder) finish(n *graph.Tensor, v value) (value, error) {
	et, err := ggmlElem(n.Type)
	if err != nil {
		return value{}, err
	}
	if et == etBF16 && v.et == etF32 {
		v = b.roundBF16(v)
	}
	return b.convert(v, et), nil
}

// exp is e^x, as the square of e^(x/2) above 88: the real CPU plugin's Exp
// (2025.0.0) overflows to +Inf a little below f32's limit (88.72), where
// ggml's bf16 EXP still gives 2.72e38 at 88.5.
func (b *builder) exp(x value) value {
	h := b.unaryOp("Exp", b.binary("Multiply", x, b.m.scalarF32(0.5)))
	big := b.m.add("Greater", "opset1", []attr{{"auto_broadcast", "numpy"}}, etBoolean, x.shape, x, b.m.scalarF32(88))
	return b.m.add("Select", "opset1", []attr{{"auto_broadcast", "numpy"}}, x.et, x.shape, big, b.binary("Multiply", h, h), b.unaryOp("Exp", x))
}

// roundBF16 rounds f32 values to bf16's 8 significant bits, to nearest,
// in f32 arithmetic (Veltkamp's split: t = x*(2^16+1), x rounded =
// t - (t - x)), so that the Convert to bf16 after it is exact: the real
// CPU plugin (2025.0.0 and 2026.4.1, AVX2) converts f32 to bf16 toward
// zero where ggml rounds to nearest even (DIV bf16: every result one bf16
// step low, NMSE 1e-5). Magnitudes above 2^100, where t would overflow,
// are scaled by 2^-64 first (exact); infinities and NaNs pass unchanged.
func (b *builder) roundBF16(x value) value {
	gt := func(a value, c float32) value {
		return b.m.add("Greater", "opset1", []attr{{"auto_broadcast", "numpy"}}, etBoolean, x.shape, a, b.m.scalarF32(c))
	}
	sel := func(c, a, e value) value {
		return b.m.add("Select", "opset1", []attr{{"auto_broadcast", "numpy"}}, etF32, x.shape, c, a, e)
	}
	ax := b.unaryOp("Abs", x)
	big := gt(ax, 0x1p100)
	xs := sel(big, b.binary("Multiply", x, b.m.scalarF32(0x1p-64)), x)
	t := b.binary("Multiply", xs, b.m.scalarF32(65537))
	r := b.binary("Subtract", t, b.binary("Subtract", t, xs))
	r = sel(big, b.binary("Multiply", r, b.m.scalarF32(0x1p64)), r)
	return sel(gt(ax, math.MaxFloat32), x, r)
}

// memBytes is t's memory (host or device buffer) as bytes.
func memBytes(t *graph.Tensor, n uint64) []byte {
	a := addr(t)
	if a == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(cPtr(a)), n)
}

// weight is the subgraph of a weight in ggml's 4-D shape: its matrix
// (weightMatrix) reshaped. ok is false for a tensor that is not a weight.
func (b *builder) weight(t *graph.Tensor) (value, bool, error) {
	b.use(t, useOther)
	if v, ok := b.weights[t]; ok {
		return v, true, nil
	}
	m, ok, err := b.weightMatrix(t)
	if !ok || err != nil {
		return m, ok, err
	}
	v := b.reshape(m, ovShapeOf(t))
	b.weights[t] = v
	return v, true, nil
}

// weightUse is how a model reads a weight: as the weights of a MatMul,
// which the real CPU plugin (2025.0.0, 2026.4.1) repacks into memory of
// its own at compile time (FullyConnectedCompressed) and reads no more,
// or otherwise (a Gather, a Multiply by a norm weight: the plugin computes
// from the Constant's memory in place; dropping all weight pages made the
// RSS test's greedy tokens 0 from the first released step). useDynamic
// marks a weight of a model with dynamic dimensions (dynamic.go): the CPU
// plugin repacks a MatMul weight again when a new input shape picks
// another kernel, at any inference (measured on 2025.0.0 and 2026.4.1:
// the RSS test's tokens changed from the step after the release).
type weightUse uint8

const (
	useMatMul weightUse = 1 << iota
	useOther
	useDynamic
)

func (b *builder) use(t *graph.Tensor, u weightUse) {
	if !isWeight(t) {
		return
	}
	if b.uses == nil {
		b.uses = map[*graph.Tensor]weightUse{}
	}
	b.uses[t] |= u
}

// matShape is the shape a weight's subgraph ends in: [ne1, ne0] for a
// 2-D weight, ggml's 4-D shape otherwise (3-D experts). The CPU plugin
// (real, 2025.0.0 and 2026.4.1) turns a MatMul into a FullyConnected over
// compressed weights only when the decompression ends in a 2-D matrix
// (3-D [rows, groups, group] reshaped to 2-D); a 4-D end made it fold the
// decompression into an f32 copy of every weight in every compiled model
// (a 4096x4096 Q8_0 weight: 17.8 MB held, 67 MB more per model).
func matShape(t *graph.Tensor) []int64 {
	if t.Ne[2] == 1 && t.Ne[3] == 1 {
		return []int64{t.Ne[1], t.Ne[0]}
	}
	return ovShapeOf(t)
}

// matrixOf is weightMatrix for a 2-D weight that a node reads directly
// (no view, not computed here: get's rules); ok is false otherwise.
func (b *builder) matrixOf(t *graph.Tensor) (value, bool, error) {
	if _, computed := b.vals[t]; computed || t.ViewSrc != nil || t.Op != ops.None || t.Ne[2] != 1 || t.Ne[3] != 1 {
		return value{}, false, nil
	}
	return b.weightMatrix(t)
}

// weightMatrix is the subgraph of a weight in matShape: a Constant over
// its memory (a float weight), or the dequantization of its extracted
// layout (made now, into the side blob, for a quantized tensor not
// converted at set time). ok is false for a tensor that is not a weight.
func (b *builder) weightMatrix(t *graph.Tensor) (value, bool, error) {
	if v, ok := b.mats[t]; ok {
		return v, true, nil
	}
	e, _ := t.Extra.(*tensorExtra)
	isWeight := e != nil && e.weight
	if !isWeight && !t.Type.IsQuantized() {
		return value{}, false, nil
	}
	if b.dev.weights.isLost() {
		return value{}, true, fmt.Errorf("%w: rebuilding a model needs %s", ErrWeightsReleased, t.Name)
	}
	var v value
	switch {
	case !t.Type.IsQuantized():
		et, err := ggmlElem(t.Type)
		if err != nil {
			return value{}, true, err
		}
		v = b.convert(b.m.weightConst(et, matShape(t), addr(t), t.NBytes()), etF32)
	case isWeight && e.layout != nil:
		v = b.dequant(t, *e.layout, addr(t), 0)
	default:
		l, ok := layoutFor(t, b.kind, noRequant)
		if !ok {
			return value{}, true, fmt.Errorf("%w: %v weight %s", ErrUnsupportedType, t.Type, t.Name)
		}
		src := memBytes(t, t.NBytes())
		if src == nil {
			return value{}, true, fmt.Errorf("quantized tensor %s has no memory", t.Name)
		}
		e, err := b.dev.conv.acquire(t, l, src)
		if err != nil {
			return value{}, true, err
		}
		if e.keeps {
			b.dev.unmapSpill()
		}
		b.conv = append(b.conv, e)
		v = b.dequant(t, e.layout, buffer.BytesBase(e.mem), 0)
	}
	b.mats[t] = v
	return v, true, nil
}

// dequant builds ggml-openvino's decompression subgraph: Const weights
// [rows, cols/G, G] -> Convert f16 -> (Subtract zero point) -> Multiply
// scale [rows, cols/G, 1] -> Reshape -> Convert f32, as f32 in matShape.
// The parts are at base+offset (a weight buffer) or
// side+offset (base 0).
func (b *builder) dequant(t *graph.Tensor, l extractedLayout, base uintptr, side uint64) value {
	rows, cols := t.Ne[1]*t.Ne[2], t.Ne[0]
	part := func(et elemType, shape []int64, off, size uint64) value {
		if base != 0 {
			return b.m.weightConst(et, shape, base+uintptr(off), size)
		}
		v := b.m.add("Const", "opset1", []attr{{"element_type", et.String()}, {"shape", dimsAttr(shape)}}, et, shape)
		b.m.consts = append(b.m.consts, constRef{layer: v.layer, off: side + off, size: size})
		return v
	}
	if l.requant == requantF16 {
		w := part(etF16, []int64{rows, cols}, l.weightsOff, l.weightsLen)
		return b.reshape(b.convert(w, etF32), matShape(t))
	}
	g := l.group
	gshape := []int64{rows, cols / g, g}
	sshape := []int64{rows, cols / g, 1}
	// MXFP4's E8M0 scales exceed f16's range and the K-quants' f32
	// scales its precision: those subgraphs run in f32.
	ct := etF16
	if l.scaleType != etF16 {
		ct = etF32
	}
	w := b.convert(part(l.wtype, gshape, l.weightsOff, l.weightsLen), ct)
	if !l.symmetric {
		zp := b.convert(part(l.zpType, sshape, l.zpOff, l.zpLen), ct)
		w = b.binary("Subtract", w, zp)
	}
	s := b.convert(part(l.scaleType, sshape, l.scalesOff, l.scalesLen), ct)
	w = b.binary("Multiply", w, s)
	return b.convert(b.reshape(w, matShape(t)), etF32)
}

// --- translators ---

func binaryTranslator(typ string) translator {
	return func(b *builder, n *graph.Tensor) (value, error) {
		x, err := b.f32(n.Src[0])
		if err != nil {
			return value{}, err
		}
		y, err := b.f32(n.Src[1])
		if err != nil {
			return value{}, err
		}
		// ggml repeats src1 to src0's shape (tiling); numpy broadcasting
		// covers extents of 1, a Tile the rest.
		rep := make([]int64, 4)
		tile := false
		for i := 0; i < 4; i++ {
			d0, d1 := x.shape[i], y.shape[i]
			rep[i] = 1
			if d0 != d1 && d1 != 1 {
				if d0%d1 != 0 {
					return value{}, fmt.Errorf("broadcast of %d over %d", d1, d0)
				}
				rep[i], tile = d0/d1, true
			}
		}
		if tile {
			shape := make([]int64, 4)
			for i := range shape {
				shape[i] = y.shape[i] * rep[i]
			}
			y = b.m.add("Tile", "opset1", nil, y.et, shape, y, b.m.i64s(rep...))
		}
		if typ == "Add" && n.Op == ops.Add1 {
			y = b.reshape(y, nil)
		}
		return b.finish(n, b.binary(typ, x, y))
	}
}

func unaryNode(f func(b *builder, x value) value) translator {
	return func(b *builder, n *graph.Tensor) (value, error) {
		x, err := b.f32(n.Src[0])
		if err != nil {
			return value{}, err
		}
		return b.finish(n, f(b, x))
	}
}

// translateSqr: x * x.
func translateSqr(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	return b.finish(n, b.binary("Multiply", x, x))
}

func translateScale(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	p := ops.ScaleParamsOf(n.Params)
	y := b.binary("Multiply", x, b.m.scalarF32(p.Scale))
	if p.Bias != 0 {
		y = b.binary("Add", y, b.m.scalarF32(p.Bias))
	}
	return b.finish(n, y)
}

func translateClamp(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	p := ops.ClampParamsOf(n.Params)
	return b.finish(n, b.clamp(x, p.Min, p.Max))
}

func translateUnary(b *builder, n *graph.Tensor) (value, error) {
	f, ok := unaryTranslators[n.Params.Unary()]
	if !ok {
		return value{}, fmt.Errorf("unary %s", n.Params.Unary())
	}
	return unaryNode(f)(b, n)
}

func translateGLU(b *builder, n *graph.Tensor) (value, error) {
	p := ops.GLUParamsOf(n.Params)
	f, ok := gluTranslators[p.Op]
	if !ok {
		return value{}, fmt.Errorf("glu %s", p.Op)
	}
	a, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	var g value
	if n.Src[1] != nil {
		if g, err = b.f32(n.Src[1]); err != nil {
			return value{}, err
		}
		// a fused input's first ne0 elements (ggml reads ne0 = the output's)
		a = b.sliceAxis(a, 3, 0, n.Ne[0])
		g = b.sliceAxis(g, 3, 0, n.Ne[0])
	} else {
		h := n.Ne[0]
		a, g = b.sliceAxis(a, 3, 0, h), b.sliceAxis(a, 3, h, 2*h)
	}
	if p.Swapped {
		a, g = g, a
	}
	return b.finish(n, f(b, a, g, p))
}

func translateNorm(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	eps := b.m.scalarF32(ops.NormParamsOf(n.Params).Eps)
	var y value
	switch n.Op {
	case ops.RMSNorm: // x / sqrt(mean(x^2) + eps)
		ms := b.reduce("ReduceMean", b.binary("Multiply", x, x), 3)
		y = b.binary("Divide", x, b.unaryOp("Sqrt", b.binary("Add", ms, eps)))
	case ops.Norm: // (x - mean) / sqrt(var + eps)
		// ggml sums in double and subtracts the mean rounded to f32; the
		// real CPU plugin sums in f32, and rows far from zero (offset 1e4,
		// spread 1) lost 1e-3 of their mean (NMSE 1e-6 > 1e-7). A second
		// pass over x - mean1 finds what the first lost, and mean1 + mean2
		// is the mean rounded to f32, as ggml's (subtracting the two
		// separately is more exact than ggml: NMSE 1.5e-7).
		m1 := b.reduce("ReduceMean", x, 3)
		m := b.binary("Add", m1, b.reduce("ReduceMean", b.binary("Subtract", x, m1), 3))
		d := b.binary("Subtract", x, m)
		v := b.reduce("ReduceMean", b.binary("Multiply", d, d), 3)
		y = b.binary("Divide", d, b.unaryOp("Sqrt", b.binary("Add", v, eps)))
	default: // L2: x / max(sqrt(sum x^2), eps)
		s := b.unaryOp("Sqrt", b.reduce("ReduceSum", b.binary("Multiply", x, x), 3))
		y = b.binary("Divide", x, b.binary("Maximum", s, eps))
	}
	return b.finish(n, y)
}

func translateSumRows(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	// Rows as a [rows, ne0] matrix: summing the last axis of the 4-D view
	// of a flat input (a Reshape adding unit axes) makes the 2025.0.0 CPU
	// plugin's PullReshapeThroughReduce pass fail the compile of
	// [33, 1024, 1, 1] ("Axis 1 out of the tensor rank range").
	ne := n.Src[0].Ne
	rows := b.reshape(x, []int64{ne[1] * ne[2] * ne[3], ne[0]})
	return b.finish(n, b.reshape(b.reduce("ReduceSum", rows, 1), ovShapeOf(n)))
}

// maskFor reads a mask (or any 4-D addend) broadcast over a [*, *, rows,
// cols] score: rows beyond the score's are sliced off (ggml pads masks),
// other extents must be equal or 1.
func (b *builder) maskFor(m *graph.Tensor, rows int64, like value) (value, error) {
	v, err := b.f32(m)
	if err != nil {
		return value{}, err
	}
	if v.shape[2] > rows {
		v = b.sliceAxis(v, 2, 0, rows)
	}
	// ggml broadcasts the mask's planes by repetition (plane i2 % m2).
	rep, tile := []int64{1, 1, 1, 1}, false
	for i := 0; i < 4; i++ {
		if v.shape[i] != like.shape[i] && v.shape[i] != 1 {
			if like.shape[i]%v.shape[i] != 0 {
				return value{}, fmt.Errorf("mask extent %d over %d in axis %d", v.shape[i], like.shape[i], i)
			}
			rep[i], tile = like.shape[i]/v.shape[i], true
		}
	}
	if tile {
		shape := make([]int64, 4)
		for i := range shape {
			shape[i] = v.shape[i] * rep[i]
		}
		v = b.m.add("Tile", "opset1", nil, v.et, shape, v, b.m.i64s(rep...))
	}
	return v, nil
}

func translateSoftMax(b *builder, n *graph.Tensor) (value, error) {
	p := ops.SoftMaxParamsOf(n.Params)
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	if p.Scale != 1 {
		x = b.binary("Multiply", x, b.m.scalarF32(p.Scale))
	}
	if n.Src[1] != nil {
		m, err := b.maskFor(n.Src[1], n.Ne[1], x)
		if err != nil {
			return value{}, err
		}
		if p.MaxBias > 0 {
			m = b.binary("Multiply", m, b.m.constF32([]int64{1, n.Ne[2], 1, 1}, alibiSlopes(p.MaxBias, n.Ne[2])...))
		}
		x = b.binary("Add", x, m)
	}
	if n.Src[2] == nil {
		return b.finish(n, b.m.add("Softmax", "opset8", []attr{{"axis", "3"}}, etF32, x.shape, x))
	}
	// Sinks: one extra logit per head joins the normalization and is
	// dropped from the result.
	sk, err := b.f32(n.Src[2])
	if err != nil {
		return value{}, err
	}
	col := []int64{x.shape[0], x.shape[1], x.shape[2], 1}
	sk = b.m.add("Broadcast", "opset3", []attr{{"mode", "numpy"}}, etF32, col, b.reshape(sk, []int64{1, n.Ne[2], 1, 1}), b.m.i64s(col...))
	wide := cloneShape(x.shape)
	wide[3]++
	y := b.m.add("Concat", "opset1", []attr{{"axis", "3"}}, etF32, wide, x, sk)
	y = b.m.add("Softmax", "opset8", []attr{{"axis", "3"}}, etF32, wide, y)
	return b.finish(n, b.sliceAxis(y, 3, 0, x.shape[3]))
}

// alibiSlopes are ggml's ALiBi slopes of heads 0..n-1 for max_bias.
func alibiSlopes(maxBias float32, n int64) []float32 {
	log2 := int64(1) << int64(math.Floor(math.Log2(float64(n))))
	m0 := math.Pow(2, -float64(maxBias)/float64(log2))
	m1 := math.Pow(2, -float64(maxBias)/2/float64(log2))
	s := make([]float32, n)
	for h := int64(0); h < n; h++ {
		if h < log2 {
			s[h] = float32(math.Pow(m0, float64(h+1)))
		} else {
			s[h] = float32(math.Pow(m1, float64(2*(h-log2)+1)))
		}
	}
	return s
}

// expandBatch repeats each of w's [d0, d1] matrices to cover [t0, t1]
// ggml-style (matrix j serves rows j*r .. j*r+r-1), as MUL_MAT broadcasts
// src0 over src1's batch.
func (b *builder) expandBatch(w value, t0, t1 int64) (value, error) {
	d0, d1 := w.shape[0], w.shape[1]
	if t0%d0 != 0 || t1%d1 != 0 {
		return value{}, fmt.Errorf("batch %dx%d over %dx%d", d0, d1, t0, t1)
	}
	r0, r1 := t0/d0, t1/d1
	if r0 == 1 && r1 == 1 {
		return w, nil
	}
	m, k := w.shape[2], w.shape[3]
	// [d0, 1, d1, 1, m, k] -> broadcast [d0, r0, d1, r1, m, k] -> [t0, t1, m, k]
	x := b.reshape(w, []int64{d0, 1, d1, 1, m, k})
	tgt := []int64{d0, r0, d1, r1, m, k}
	x = b.m.add("Broadcast", "opset3", []attr{{"mode", "numpy"}}, x.et, tgt, x, b.m.i64s(tgt...))
	return b.reshape(x, []int64{t0, t1, m, k}), nil
}

// translateMulMat: MatMul(src1, src0, transpose_b) — ggml's rows of src0
// are in_features innermost, as OpenVINO's B transposed.
func translateMulMat(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.f32(n.Src[1])
	if err != nil {
		return value{}, err
	}
	// A 2-D weight as its matrix, broadcast over x's batch.
	if m, ok, err := b.matrixOf(n.Src[0]); err != nil {
		return value{}, err
	} else if ok {
		b.use(n.Src[0], useMatMul)
		shape := []int64{x.shape[0], x.shape[1], x.shape[2], m.shape[0]}
		return b.finish(n, b.m.add("MatMul", "opset1", []attr{{"transpose_a", "false"}, {"transpose_b", "true"}}, etF32, shape, x, m))
	}
	w, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	if w, err = b.expandBatch(w, x.shape[0], x.shape[1]); err != nil {
		return value{}, err
	}
	shape := []int64{x.shape[0], x.shape[1], x.shape[2], w.shape[2]}
	y := b.m.add("MatMul", "opset1", []attr{{"transpose_a", "false"}, {"transpose_b", "true"}}, etF32, shape, x, w)
	return b.finish(n, y)
}

// translateCopy: the source's elements, in logical order, in the
// destination's type and shape (CPY writes them into src[1]'s memory,
// which the builder records).
func translateCopy(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.get(n.Src[0])
	if err != nil {
		return value{}, err
	}
	if n.Src[0].NElements() != n.NElements() {
		return value{}, fmt.Errorf("copy of %d elements into %d", n.Src[0].NElements(), n.NElements())
	}
	et, err := ggmlElem(n.Type)
	if err != nil {
		return value{}, err
	}
	if x.et != et && isFloat(x.et) && isFloat(et) && x.et != etF32 && et != etF32 {
		x = b.convert(x, etF32) // f16 <-> bf16 through f32
	}
	return b.reshape(b.convert(x, et), ovShapeOf(n)), nil
}

func isFloat(e elemType) bool { return e == etF32 || e == etF16 || e == etBF16 || e == etF64 }

// translateView is never called: views are read lazily (get).
func translateView(b *builder, n *graph.Tensor) (value, error) { return b.get(n) }

func translateGetRows(b *builder, n *graph.Tensor) (value, error) {
	idx, err := b.get(n.Src[1])
	if err != nil {
		return value{}, err
	}
	// data [a3, a2, rows, ne0], indices [a3, a2, n]: a Gather of rows
	// with the two batch dimensions (ggml requires them equal).
	r := n.Src[1]
	if r.Ne[3] != 1 || r.Ne[1] != n.Src[0].Ne[2] || r.Ne[2] != n.Src[0].Ne[3] {
		return value{}, fmt.Errorf("get_rows indices %v over %v", r.Ne, n.Src[0].Ne)
	}
	// A 2-D weight's rows straight from its matrix: the CPU plugin
	// gathers from compressed weights only when the Gather reads the
	// decompression itself (else an f32 copy of token_embd in every
	// compiled model).
	rows, isMat, err := b.matrixOf(n.Src[0])
	if err != nil {
		return value{}, err
	}
	if isMat {
		b.use(n.Src[0], useOther)
	}
	data := rows
	if !isMat {
		if data, err = b.get(n.Src[0]); err != nil {
			return value{}, err
		}
		if isFloat(data.et) {
			data = b.convert(data, etF32)
		}
	}
	shape := ovShapeOf(n)
	if isMat || (data.shape[0] == 1 && data.shape[1] == 1) {
		// No batch: a plain Gather of rows. The real CPU plugin's
		// element-wise gather kernel (2025.0.0 and 2026.4.1) reads indices
		// past the tensor's end with batch_dims 2 and rows of one element
		// (GET_ROWS f32 n=1 m=8 r=2 faulted in vpgatherdd); batch_dims 0
		// takes another path.
		if !isMat {
			rows = b.reshape(data, []int64{data.shape[2], data.shape[3]})
		}
		g := b.m.add("Gather", "opset8", []attr{{"batch_dims", "0"}}, rows.et, []int64{r.Ne[0], rows.shape[1]},
			rows, b.reshape(idx, []int64{r.Ne[0]}), b.m.constI64(nil, 0))
		return b.finish(n, b.reshape(g, shape))
	}
	ids := b.reshape(idx, []int64{r.Ne[2], r.Ne[1], r.Ne[0]})
	out := b.m.add("Gather", "opset8", []attr{{"batch_dims", "2"}}, data.et, shape, data, ids, b.m.constI64(nil, 2))
	return b.finish(n, out)
}

// translateSetRows: a[ids[i]] = b[i] (ggml_set_rows), a ScatterUpdate of
// the destination's contents along its rows.
func translateSetRows(b *builder, n *graph.Tensor) (value, error) {
	// Sources as ggml orders them: the rows, their row numbers, then the
	// destination (the result is a view of it).
	src, ids, a := n.Src[0], n.Src[1], n.Src[2]
	if a == nil {
		a = n.ViewSrc
	}
	if src == nil || ids == nil || a == nil {
		return value{}, fmt.Errorf("set_rows without rows, row numbers or destination")
	}
	dst, err := b.get(a)
	if err != nil {
		return value{}, err
	}
	upd, err := b.get(src)
	if err != nil {
		return value{}, err
	}
	idx, err := b.get(ids)
	if err != nil {
		return value{}, err
	}
	if src.Ne[2] != a.Ne[2] || src.Ne[3] != a.Ne[3] || ids.NElements() != src.Ne[1] {
		return value{}, fmt.Errorf("set_rows with broadcast indices")
	}
	upd = b.convert(b.convert(upd, etF32), dst.et)
	i := b.reshape(idx, []int64{src.Ne[1]})
	return b.m.add("ScatterUpdate", "opset3", nil, dst.et, dst.shape, dst, i, upd, b.m.constI64(nil, 2)), nil
}

func translateConcat(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.get(n.Src[0])
	if err != nil {
		return value{}, err
	}
	y, err := b.get(n.Src[1])
	if err != nil {
		return value{}, err
	}
	et, _ := ggmlElem(n.Type)
	x, y = b.convert(x, et), b.convert(y, et)
	axis := 3 - int(ops.ConcatParamsOf(n.Params).Dim)
	return b.m.add("Concat", "opset1", []attr{{"axis", fmt.Sprint(axis)}}, et, ovShapeOf(n), x, y), nil
}

func translateRepeat(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.get(n.Src[0])
	if err != nil {
		return value{}, err
	}
	rep := make([]int64, 4)
	for i, d := range ovShapeOf(n) {
		if d%x.shape[i] != 0 {
			return value{}, fmt.Errorf("repeat %v to %v", x.shape, ovShapeOf(n))
		}
		rep[i] = d / x.shape[i]
	}
	et, _ := ggmlElem(n.Type)
	return b.m.add("Tile", "opset1", nil, x.et, ovShapeOf(n), b.convert(x, et), b.m.i64s(rep...)), nil
}

func translateCumsum(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	return b.finish(n, b.m.add("CumSum", "opset3", []attr{{"exclusive", "false"}, {"reverse", "false"}}, etF32, x.shape, x, b.m.constI64(nil, 3)))
}

func translateFill(b *builder, n *graph.Tensor) (value, error) {
	shape := ovShapeOf(n)
	c := b.m.scalarF32(ops.FillParamsOf(n.Params).C)
	v := b.m.add("Broadcast", "opset3", []attr{{"mode", "numpy"}}, etF32, shape, c, b.m.i64s(shape...))
	return b.finish(n, v)
}

// translateRope decomposes ROPE (normal and NeoX pairing, YaRN, frequency
// factors, a rotated window at n_offs): angle = pos * c_i with c_i the
// per-pair frequency, computed on the host as ggml's rope cache does.
func translateRope(b *builder, n *graph.Tensor) (value, error) {
	rp := ops.RopeParamsOf(n.Params)
	if rp.Mode != ops.RopeNormal && rp.Mode != ops.RopeNeox && rp.Mode != ops.RopeIMRope {
		return value{}, fmt.Errorf("rope mode %d", rp.Mode)
	}
	a := n.Src[0]
	x, err := b.f32(a)
	if err != nil {
		return value{}, err
	}
	pos, err := b.get(n.Src[1])
	if err != nil {
		return value{}, err
	}
	nd, offs := int64(rp.NDims), int64(rp.NOffs)
	if nd == 0 {
		nd = a.Ne[0]
	}
	h := nd / 2
	// per-pair frequency, ggml's theta progression in f32, with YaRN's
	// blend folded in (theta = theta_extrap * (fs*(1-mix) + mix)).
	step := float32(math.Pow(float64(rp.FreqBase), float64(-2/float32(nd))))
	corr := rp.YarnCorrDims()
	mscale := rp.AttnFactor
	if rp.ExtFactor != 0 {
		mscale *= 1 + 0.1*float32(math.Log(float64(1/rp.FreqScale)))
	}
	freq := make([]float32, h)
	th := float32(1)
	for i := int64(0); i < h; i++ {
		mix := float32(0)
		if rp.ExtFactor != 0 {
			mix = ops.RopeYarnRamp(corr[0], corr[1], int(2*i)) * rp.ExtFactor
		}
		freq[i] = th * (rp.FreqScale*(1-mix) + mix)
		th *= step
	}
	T := a.Ne[2]
	var ang value
	if rp.Mode == ops.RopeIMRope {
		// Four position streams (t, h, w, e), interleaved over the pairs:
		// angle[t, i] = pos[stream(i)][t] * freq[i], one MatMul with a
		// [4, h] table holding freq[i] in its stream's row.
		tab := make([]float32, 4*h)
		for i := int64(0); i < h; i++ {
			tab[imropeStream(rp.Sections, int(i))*h+i] = freq[i]
		}
		p4 := b.transpose(b.reshape(b.convert(pos, etF32), []int64{4, T}), []int64{1, 0})
		mm := b.m.add("MatMul", "opset1", []attr{{"transpose_a", "false"}, {"transpose_b", "false"}}, etF32, []int64{T, h},
			p4, b.m.constF32([]int64{4, h}, tab...))
		ang = b.reshape(mm, []int64{1, T, 1, h})
	} else {
		p := b.reshape(b.convert(pos, etF32), []int64{1, T, 1, 1})
		ang = b.binary("Multiply", p, b.m.constF32([]int64{1, 1, 1, h}, freq...))
	}
	if n.Src[2] != nil { // frequency factors divide the angle
		ff, err := b.f32(n.Src[2])
		if err != nil {
			return value{}, err
		}
		ang = b.binary("Divide", ang, b.reshape(ff, []int64{1, 1, 1, h}))
	}
	cos := b.binary("Multiply", b.unaryOp("Cos", ang), b.m.scalarF32(mscale))
	sin := b.binary("Multiply", b.unaryOp("Sin", ang), b.m.scalarF32(mscale))
	D := a.Ne[0]
	win := b.sliceAxis(x, 3, offs, offs+nd)
	var rot value
	if rp.Mode != ops.RopeNormal { // NeoX pairing (IMROPE too)
		x1, x2 := b.sliceAxis(win, 3, 0, h), b.sliceAxis(win, 3, h, nd)
		r1 := b.binary("Subtract", b.binary("Multiply", x1, cos), b.binary("Multiply", x2, sin))
		r2 := b.binary("Add", b.binary("Multiply", x1, sin), b.binary("Multiply", x2, cos))
		rot = b.m.add("Concat", "opset1", []attr{{"axis", "3"}}, etF32, win.shape, r1, r2)
	} else {
		s5 := []int64{x.shape[0], x.shape[1], x.shape[2], h, 2}
		w5 := b.reshape(win, s5)
		x1, x2 := b.sliceAxis(w5, 4, 0, 1), b.sliceAxis(w5, 4, 1, 2)
		c5, s5v := b.reshape(cos, []int64{1, T, 1, h, 1}), b.reshape(sin, []int64{1, T, 1, h, 1})
		r1 := b.binary("Subtract", b.binary("Multiply", x1, c5), b.binary("Multiply", x2, s5v))
		r2 := b.binary("Add", b.binary("Multiply", x1, s5v), b.binary("Multiply", x2, c5))
		rot = b.reshape(b.m.add("Concat", "opset1", []attr{{"axis", "4"}}, etF32, s5, r1, r2), win.shape)
	}
	parts := []value{}
	if offs > 0 {
		parts = append(parts, b.sliceAxis(x, 3, 0, offs))
	}
	parts = append(parts, rot)
	if offs+nd < D {
		parts = append(parts, b.sliceAxis(x, 3, offs+nd, D))
	}
	y := rot
	if len(parts) > 1 {
		y = b.m.add("Concat", "opset1", []attr{{"axis", "3"}}, etF32, x.shape, parts...)
	}
	return b.finish(n, y)
}

// translateFlashAttn: softmax(scale * Q K^T + mask) V per head, K and V
// heads repeated for grouped-query attention, the output permuted to
// ggml's [Dv, n_head, n_q, ne3].
func translateFlashAttn(b *builder, n *graph.Tensor) (value, error) {
	p := ops.FlashAttnParamsOf(n.Params)
	if p.MaxBias != 0 || p.LogitSoftcap != 0 || n.Src[4] != nil {
		return value{}, fmt.Errorf("flash_attn_ext with ALiBi, softcap or sinks")
	}
	q, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	k, err := b.f32(n.Src[1])
	if err != nil {
		return value{}, err
	}
	v, err := b.f32(n.Src[2])
	if err != nil {
		return value{}, err
	}
	// q [q3, H, nq, D], k [k3, Hkv, nkv, D]
	if k, err = b.expandBatch(k, q.shape[0], q.shape[1]); err != nil {
		return value{}, err
	}
	if v, err = b.expandBatch(v, q.shape[0], q.shape[1]); err != nil {
		return value{}, err
	}
	s := b.m.add("MatMul", "opset1", []attr{{"transpose_a", "false"}, {"transpose_b", "true"}}, etF32,
		[]int64{q.shape[0], q.shape[1], q.shape[2], k.shape[2]}, q, k)
	s = b.binary("Multiply", s, b.m.scalarF32(p.Scale))
	if n.Src[3] != nil {
		m, err := b.maskFor(n.Src[3], q.shape[2], s)
		if err != nil {
			return value{}, err
		}
		s = b.binary("Add", s, m)
	}
	s = b.m.add("Softmax", "opset8", []attr{{"axis", "3"}}, etF32, s.shape, s)
	o := b.m.add("MatMul", "opset1", []attr{{"transpose_a", "false"}, {"transpose_b", "false"}}, etF32,
		[]int64{q.shape[0], q.shape[1], q.shape[2], v.shape[3]}, s, v)
	return b.finish(n, b.transpose(o, []int64{0, 2, 1, 3}))
}

// imropeStream is the position stream (0 t, 1 h, 2 w, 3 e) driving pair
// i of interleaved multi-section RoPE, as ggml_mrope_cache_init.
func imropeStream(s [ops.RopeSections]int32, i int) int64 {
	dims := int(s[0] + s[1] + s[2] + s[3])
	if dims <= 0 {
		return 3 // no sections: ggml divides by zero here
	}
	sector := i % dims
	switch {
	case sector%3 == 1 && sector < 3*int(s[1]):
		return 1
	case sector%3 == 2 && sector < 3*int(s[2]):
		return 2
	case sector%3 == 0 && sector < 3*int(s[0]):
		return 0
	}
	return 3
}
