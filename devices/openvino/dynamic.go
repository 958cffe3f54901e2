package openvino

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"

	"github.com/ggml-go/ggml/graph"
)

// One compiled model for all token counts (the CPU/GPU path; README
// "Resident memory"). The real CPU plugin repacks every weight into each
// compiled model, so a model per batch shape (the prompt's, the decode
// step's, a new n_kv every 32 cells) held the weights once per shape and
// compiled each. Here a graph whose axes static.go can tag becomes one
// model with those axes dynamic:
//
//   - the graph is cloned at probe sizes of its symbols (tokens, KV cells,
//     outputs, padded mask rows) and each clone translated as usual;
//   - the IRs must agree in every layer, attribute, edge and constant but
//     for i64 constants and port dimensions; each such integer is fitted
//     exactly as a multilinear polynomial of the symbols from the corners
//     of a unit cube of probes, and checked at one probe far from it;
//   - the dynamic IR computes those integers from ShapeOf of the tagged
//     inputs, whose Parameters keep their 4-D shape with -1 on the tagged
//     axes, and writes -1 for every varying port dimension.
//
// The key is the base clone's: graphs equal up to their tagged axes share
// it. Anything that does not fit is computed as before, one static model
// per shape.

// probeBase and probeCheck are the symbols' sizes of the base clone and of
// the check clone; the cube's corners add one to each. They avoid 1 (a
// translator may treat unit axes apart) and the extents of one another.
var (
	probeBase  = cloneSizes{tagTok: 5, tagKV: 11, tagOut: 2, tagPad: 7}
	probeCheck = cloneSizes{tagTok: 9, tagKV: 17, tagOut: 4, tagPad: 13}
)

// errNotDynamic says why a graph keeps one static model per shape.
var errNotDynamic = errors.New("openvino: not one model for all token counts")

func notDynamic(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errNotDynamic, fmt.Sprintf(format, args...))
}

// dynPlan is a graph's analysis for the dynamic path: its tags, the kinds
// of axis it has, and its base clone (the key's graph).
type dynPlan struct {
	info  *staticInfo
	kinds []axisTag
	base  keyInfo
	// paramTags are the tags of the base probe's Parameters (by layer).
	paramTags []paramTag
	// key is the family's; inputs say where the graph's role inputs are
	// (node, source), to read another graph's sizes from its own.
	key    string
	inputs []inputLoc
	// dead is the family's graph's dead writes, as its key spells them.
	dead string
	// deadAt is those writes' node positions.
	deadAt []int
}

type inputLoc struct {
	role      staticRole
	node, src int
}

// maxFamilies is how many families a backend recognizes graphs by.
const maxFamilies = 4

type paramTag struct {
	layer int
	tags  axisTags
}

// portKey is one dimension of one port of a layer.
type portKey struct{ layer, port, dim int }

const dynKeyTag = "|dynamic"

// dynamicKey is the key of g's family, or ok false when g is not one the
// dynamic path takes. A graph that is one of the backend's families at
// other sizes is that family's: a decode step's graph cannot be tagged
// by itself (its token axes have extent 1, which a Reshape's unit axes
// share), so it is recognized as the prompt's clone at its own sizes.
func (be *ovBackend) dynamicKey(g *graph.Graph, kind Kind) (keyInfo, bool) {
	var gk string
	for i, f := range be.families {
		if f.member(g, kind, &gk) {
			copy(be.families[1:i+1], be.families[:i])
			be.families[0] = f
			return keyInfo{key: f.key, g: g, dyn: f}, true
		}
	}
	p, ok := newDynPlan(g, kind)
	if !ok {
		return keyInfo{}, false
	}
	if len(be.families) < maxFamilies {
		be.families = append(be.families, nil)
	}
	copy(be.families[1:], be.families[:len(be.families)-1])
	be.families[0] = p
	return keyInfo{key: p.key, g: g, dyn: p}, true
}

// member reports whether g is p's graph at other sizes: the same key as
// p's clone at g's sizes. gk caches g's own key across families.
func (p *dynPlan) member(g *graph.Graph, kind Kind, gk *string) bool {
	src := p.info.g
	if len(g.Nodes) != len(src.Nodes) {
		return false
	}
	var sz cloneSizes
	for _, in := range p.inputs {
		t := g.Nodes[in.node].Src[in.src]
		if t == nil {
			return false
		}
		switch in.role {
		case rolePos, roleTok:
			sz[tagTok] = t.Ne[0]
		case roleMask:
			sz[tagKV], sz[tagPad] = t.Ne[0], t.Ne[1]
		case roleOut:
			sz[tagOut] = t.Ne[0]
		}
	}
	for _, k := range p.kinds {
		if sz[k] <= 0 {
			return false
		}
	}
	cg, _, err := p.info.cloneSized(sz)
	if err != nil {
		return false
	}
	if *gk == "" {
		*gk = graphKey(g, kind).key
	}
	// The structure up to the tagged axes must be the family's. Which
	// writes are dead (what the allocator placed over them later) may
	// differ, since the tensors' sizes do: the clone has no memory, so that
	// part is compared with the family's own graph's. The family's model
	// writes back its graph's live writes (outputs.go). One it writes that
	// is dead in g lands in memory a later write of g owns: that one
	// overlaps it, so it is bound to scratch memory and copied after the
	// infer, over it (bind). One live in g that the family's graph had
	// dead is not written: the allocator gave that memory away within the
	// family's graph, so the tensor's readers all are nodes of the graph
	// (of the same structure in g) and it is no graph output; ggml's
	// allocator could have given it away in g as well (a decode step's
	// last-layer products, whose memory the prompt's graph reuses). A node
	// flagged as an output never is: it must be a live write of the family.
	ck := graphKey(cg, kind).key
	ci, gi := strings.LastIndexByte(ck, '#'), strings.LastIndexByte(*gk, '#')
	if ci != gi || ck[:ci] != (*gk)[:gi] {
		return false
	}
	for _, i := range p.deadAt {
		if g.Nodes[i].Flags&graph.FlagOutput != 0 {
			return false
		}
	}
	return true
}

// newDynPlan analyzes g as a new family.
func newDynPlan(g *graph.Graph, kind Kind) (*dynPlan, bool) {
	info, err := analyzeGraph(g, true)
	if err != nil {
		logNotDynamic(err)
		return nil, false
	}
	seen := map[axisTag]bool{}
	for _, tg := range info.tags {
		for _, x := range tg {
			if k := x.kind(); k != tagNone {
				seen[k] = true
			}
		}
	}
	if !seen[tagTok] || (seen[tagKV] && info.ctx < probeCheck[tagKV]+1) {
		return nil, false
	}
	p := &dynPlan{info: info}
	for _, k := range []axisTag{tagTok, tagKV, tagOut, tagPad} {
		if seen[k] {
			p.kinds = append(p.kinds, k)
		}
	}
	cg, _, err := info.cloneSized(p.sizes(probeBase, 0))
	if err != nil {
		logNotDynamic(fmt.Errorf("clone: %w", err))
		return nil, false
	}
	if len(cg.Nodes) != len(g.Nodes) {
		logNotDynamic(fmt.Errorf("clone: %d of %d nodes", len(cg.Nodes), len(g.Nodes)))
		return nil, false
	}
	p.base = graphKey(cg, kind)
	own := graphKey(g, kind).key
	p.dead = own[strings.LastIndexByte(own, '#'):]
	p.deadAt = deadWrites(g)
	p.key = p.base.key[:strings.LastIndexByte(p.base.key, '#')] + p.dead + dynKeyTag
	for _, t := range info.inputs {
		loc, ok := p.base.locs[p.cloneOf(cg, t)]
		if !ok || loc.src < 0 || loc.viewSrc {
			return nil, false
		}
		p.inputs = append(p.inputs, inputLoc{role: info.roles[t], node: loc.node, src: loc.src})
	}
	return p, true
}

// cloneOf is the tensor of clone cg standing for input t of p's graph:
// the source at t's first use, at the same place.
func (p *dynPlan) cloneOf(cg *graph.Graph, t *graph.Tensor) *graph.Tensor {
	for i, n := range p.info.g.Nodes {
		for j, x := range n.Src {
			if x == t {
				return cg.Nodes[i].Src[j]
			}
		}
	}
	return nil
}

// sizes is at with the kinds of corner (bit i: kind i plus one).
func (p *dynPlan) sizes(at cloneSizes, corner int) cloneSizes {
	var sz cloneSizes
	for i, k := range p.kinds {
		sz[k] = at[k]
		if corner&(1<<i) != 0 {
			sz[k]++
		}
	}
	return sz
}

// probe is one clone translated.
type probe struct {
	b    *builder
	outs []outputSpec
}

// translateProbe translates the clone of p's graph at sz.
func (p *dynPlan) translateProbe(dev *device, sz cloneSizes, nativeSoftplus bool) (probe, error) {
	cg, m, err := p.info.cloneSized(sz)
	if err != nil {
		return probe{}, notDynamic("%v", err)
	}
	b := newBuilder(dev, cg)
	b.nativeSoftplus = nativeSoftplus
	b.orig = make(map[*graph.Tensor]*graph.Tensor, len(m))
	for o, c := range m {
		b.orig[c] = o
	}
	b.shaped = func(t *graph.Tensor) bool { return p.info.tags[b.orig[t]].any() }
	if err := b.translate(cg); err != nil {
		releaseAll(b.conv)
		return probe{}, notDynamic("%v", err)
	}
	outs := b.outputs(cg)
	for _, o := range outs {
		b.m.result(o.t.Name, o.v)
	}
	return probe{b: b, outs: outs}, nil
}

// buildDynamic translates the probes of k's family and makes the dynamic
// IR: the base probe's builder with its model replaced, and which ports
// are dynamic. An errNotDynamic means the family keeps static models.
func (be *ovBackend) buildDynamic(k keyInfo) (*builder, []outputSpec, error) {
	p := k.dyn
	n := 1 << len(p.kinds)
	probes := make([]probe, 0, n+1)
	defer func() {
		for _, pr := range probes[min(1, len(probes)):] {
			releaseAll(pr.b.conv)
		}
	}()
	for c := 0; c <= n; c++ {
		sz := p.sizes(probeBase, c)
		if c == n {
			sz = p.sizes(probeCheck, 0)
		}
		pr, err := p.translateProbe(be.dev, sz, be.opts.NativeSoftplus)
		if err != nil {
			if len(probes) > 0 {
				releaseAll(probes[0].b.conv)
			}
			return nil, nil, err
		}
		probes = append(probes, pr)
	}
	b0 := probes[0].b
	p.paramTags = p.paramTags[:0]
	for i, pb := range b0.params {
		p.paramTags = append(p.paramTags, paramTag{layer: b0.m.params[i], tags: p.info.tags[b0.orig[pb.t]]})
	}
	ms := make([]*irModel, len(probes))
	for i, pr := range probes {
		ms[i] = pr.b.m
	}
	nm, err := fitDynamic(ms, p, probeCheck)
	if err != nil {
		releaseAll(probes[0].b.conv)
		return nil, nil, err
	}
	b := probes[0].b
	b.m = nm
	return b, probes[0].outs, nil
}

// fitDynamic makes the dynamic model from the probes' models: ms[c] the
// clone at corner c of the unit cube at probeBase, the last at check.
func fitDynamic(ms []*irModel, p *dynPlan, check cloneSizes) (*irModel, error) {
	m0 := ms[0]
	for _, m := range ms[1:] {
		if len(m.layers) != len(m0.layers) || len(m.consts) != len(m0.consts) || len(m.params) != len(m0.params) ||
			len(m.results) != len(m0.results) {
			return nil, notDynamic("the probes' IRs have different layers")
		}
	}
	// Ports whose dimensions vary become -1.
	varies := map[portKey]bool{}
	for id, l := range m0.layers {
		for _, m := range ms[1:] {
			o := m.layers[id]
			if o.typ != l.typ || o.opset != l.opset || len(o.inputs) != len(l.inputs) || len(o.outputs) != len(l.outputs) ||
				len(o.attrs) != len(l.attrs) || o.name != l.name {
				return nil, notDynamic("layer %d differs between probes (%s, %s)", id, l.typ, o.typ)
			}
			for i, a := range l.attrs {
				if o.attrs[i].k != a.k || (o.attrs[i].v != a.v && !(l.typ == "Parameter" && a.k == "shape")) {
					return nil, notDynamic("attribute %s of %s layer %d differs between probes", a.k, l.typ, id)
				}
			}
			for i, in := range l.inputs {
				oi := o.inputs[i]
				if oi.layer != in.layer || oi.port != in.port || len(oi.shape) != len(in.shape) {
					return nil, notDynamic("edges into %s layer %d differ between probes", l.typ, id)
				}
			}
			for i, op := range l.outputs {
				oo := o.outputs[i]
				if oo.et != op.et || oo.names != op.names || len(oo.shape) != len(op.shape) {
					return nil, notDynamic("output %d of %s layer %d differs between probes", i, l.typ, id)
				}
				for d := range op.shape {
					if oo.shape[d] != op.shape[d] {
						varies[portKey{id, len(l.inputs) + i, d}] = true
					}
				}
			}
		}
	}
	// Constants: the same weights and sizes; side bytes equal, or an i64
	// constant fitted element by element.
	fits := map[int][][]int64{} // layer -> per element, coefficients by subset
	ints := map[int][][]int64{} // fitted layer -> per probe, its elements
	corners := len(ms) - 1
	for ci, c := range m0.consts {
		var vals [][]byte
		for _, m := range ms {
			o := m.consts[ci]
			if o.layer != c.layer || o.addr != c.addr || o.size != c.size {
				return nil, notDynamic("constant of layer %d differs between probes", c.layer)
			}
			if c.addr == 0 {
				vals = append(vals, m.side[o.off:o.off+o.size])
			}
		}
		if c.addr != 0 {
			continue
		}
		same := true
		for _, v := range vals[1:] {
			same = same && bytes.Equal(v, vals[0])
		}
		if same {
			continue
		}
		l := m0.layers[c.layer]
		if l.outputs[0].et != etI64 {
			return nil, notDynamic("%v constant of layer %d changes with the token count", l.outputs[0].et, c.layer)
		}
		ne := int(c.size / 8)
		coef := make([][]int64, ne)
		per := make([][]int64, len(vals))
		for i := range per {
			per[i] = make([]int64, ne)
		}
		ints[c.layer] = per
		for e := range ne {
			v := make([]int64, len(vals))
			for i, raw := range vals {
				v[i] = int64(binary.LittleEndian.Uint64(raw[8*e:]))
				per[i][e] = v[i]
			}
			// Möbius inversion over the cube's corners: the coefficient
			// of the product of the deltas in subset s.
			co := make([]int64, corners)
			for s := range corners {
				for r := range corners {
					if r&^s == 0 {
						if (bitCount(s)-bitCount(r))%2 == 0 {
							co[s] += v[r]
						} else {
							co[s] -= v[r]
						}
					}
				}
			}
			var want int64
			for s := range corners {
				term := co[s]
				for i, kd := range p.kinds {
					if s&(1<<i) != 0 {
						term *= check[kd] - probeBase[kd]
					}
				}
				want += term
			}
			if want != v[corners] {
				return nil, notDynamic("constant of layer %d is no multilinear function of the sizes", c.layer)
			}
			coef[e] = co
		}
		fits[c.layer] = coef
	}
	return emitDynamic(m0, p, varies, fits, literalInputs(ms, fits, ints))
}

// literalInput is a layer's integer input written as a constant the
// plugin can see instead of arithmetic on ShapeOf.
type literalInput struct {
	port int
	vals []int64
	// attrs replace the layer's when not nil.
	attrs []attr
}

// literalInputs are the literal forms (by layer of m0) of the fitted
// inputs that allow one. An integer computed from ShapeOf hides the shapes
// from the CPU plugin's transformations, which then neither merge the
// Reshapes nor fuse the element-wise chains around them, and run the model
// slower. Each literal is exact at every size, by what the probes show:
//   - a Reshape's target: the probes' values where they do not vary, 0
//     (special_zero) where they are the input's dimension at every probe,
//     and at most one -1, whose value the element count then fixes;
//   - a Slice's stop that is its axis' extent at every probe: the largest
//     i64, which the Slice clamps to the extent;
//   - a numpy Broadcast's target element that is the input's dimension at
//     every probe: 1, which a bidirectional Broadcast leaves the input's
//     (and bidirectional is numpy wherever the target is not 1).
func literalInputs(ms []*irModel, fits map[int][][]int64, ints map[int][][]int64) map[int]literalInput {
	out := map[int]literalInput{}
	for id, l := range ms[0].layers {
		var port int
		switch {
		case l.typ == "Reshape" && len(l.attrs) == 1 && l.attrs[0] == (attr{"special_zero", "false"}):
			port = 1
		case l.typ == "Broadcast" && len(l.attrs) == 1 && l.attrs[0] == (attr{"mode", "numpy"}):
			port = 1
		case l.typ == "Slice" && len(l.inputs) == 5:
			port = 2
		default:
			continue
		}
		co, ok := fits[l.inputs[port].layer]
		if !ok {
			continue
		}
		per := ints[l.inputs[port].layer]
		t := literalInput{port: port, vals: append([]int64(nil), per[0]...)}
		minus := 0
		for e, c := range co {
			if !slices.ContainsFunc(c[1:], func(x int64) bool { return x != 0 }) {
				if l.typ == "Reshape" && t.vals[e] <= 0 {
					minus = 2
				}
				continue
			}
			// The input's dimension this element stands for: the same
			// place (a Broadcast's aligned from the right), or the Slice's
			// axis.
			copies := true
			for i, m := range ms {
				in := m.layers[id].inputs[0].shape
				d := e
				switch l.typ {
				case "Broadcast":
					d = e - (len(co) - len(in))
				case "Slice":
					d = sliceAxis(m, m.layers[id], e)
				}
				copies = copies && d >= 0 && d < len(in) && in[d] == per[i][e]
			}
			switch {
			case copies && l.typ == "Reshape":
				t.vals[e], t.attrs = 0, []attr{{"special_zero", "true"}}
			case copies && l.typ == "Broadcast":
				t.vals[e], t.attrs = 1, []attr{{"mode", "bidirectional"}}
			case copies && l.typ == "Slice":
				t.vals[e] = math.MaxInt64
			case l.typ == "Reshape":
				t.vals[e] = -1
				minus++
			default:
				minus = 2
			}
		}
		if minus <= 1 {
			out[id] = t
		}
	}
	return out
}

// sliceAxis is the axis element e of Slice l of m slices, or -1 when its
// axes are no constant of m.
func sliceAxis(m *irModel, l *layer, e int) int {
	for _, c := range m.consts {
		if c.layer == l.inputs[4].layer && c.addr == 0 && int(c.size) >= 8*(e+1) {
			return int(int64(binary.LittleEndian.Uint64(m.side[c.off+uint64(8*e):])))
		}
	}
	return -1
}

func bitCount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// emitDynamic writes m0 again with the fitted constants computed from the
// tagged Parameters' shapes and the varying dimensions -1: Parameters
// first (their order kept: it is the inputs' order), then the symbols,
// then every other layer in its order.
func emitDynamic(m0 *irModel, p *dynPlan, varies map[portKey]bool, fits map[int][][]int64,
	literals map[int]literalInput) (*irModel, error) {
	nm := newIRModel()
	nm.side = append([]byte(nil), m0.side...)
	nm.names = m0.names
	newID := make(map[int]int, len(m0.layers))
	repl := map[int]value{} // fitted Constant layer -> its computed value
	shapeOf := func(id int, l *layer, out int) []int64 {
		s := cloneShape(l.outputs[out].shape)
		for d := range s {
			if varies[portKey{id, len(l.inputs) + out, d}] {
				s[d] = -1
			}
		}
		return s
	}
	copyLayer := func(id int) {
		l := m0.layers[id]
		nl := &layer{name: l.name, typ: l.typ, opset: l.opset, attrs: l.attrs}
		t, literal := literals[id]
		if literal && t.attrs != nil {
			nl.attrs = t.attrs
		}
		for i, in := range l.inputs {
			if literal && i == t.port {
				nl.inputs = append(nl.inputs, nm.constI64(m0.layers[in.layer].outputs[0].shape, t.vals...))
				continue
			}
			if v, ok := repl[in.layer]; ok {
				nl.inputs = append(nl.inputs, v)
				continue
			}
			src := m0.layers[in.layer]
			out := in.port - len(src.inputs)
			nl.inputs = append(nl.inputs, value{layer: newID[in.layer], port: in.port, et: in.et, shape: shapeOf(in.layer, src, out)})
		}
		for i, o := range l.outputs {
			nl.outputs = append(nl.outputs, outPort{et: o.et, names: o.names, shape: shapeOf(id, l, i)})
		}
		if l.typ == "Parameter" {
			nl.attrs = []attr{{"shape", dimsAttr(nl.outputs[0].shape)}, {"element_type", l.outputs[0].et.String()}}
		}
		newID[id] = len(nm.layers)
		nm.layers = append(nm.layers, nl)
	}
	for _, id := range m0.params {
		copyLayer(id)
		nm.params = append(nm.params, newID[id])
	}
	// Each symbol from the first tagged Parameter with an axis of its kind
	// (one element per symbol: factor 1), less its base size.
	sym := map[axisTag]value{}
	for _, id := range m0.params {
		l := nm.layers[newID[id]]
		sh := l.outputs[0].shape
		var tagsOf axisTags
		for _, pb := range p.paramTags {
			if pb.layer == id {
				tagsOf = pb.tags
			}
		}
		if len(sh) != 4 {
			continue
		}
		var so value
		for gd, x := range tagsOf {
			if x == tagNone || x.factor() != 1 {
				continue
			}
			if _, ok := sym[x.kind()]; ok {
				continue
			}
			if so.shape == nil {
				in := value{layer: newID[id], port: 0, et: l.outputs[0].et, shape: sh}
				so = nm.add("ShapeOf", "opset3", []attr{{"output_type", "i64"}}, etI64, []int64{4}, in)
			}
			axis := nm.i64s(int64(3 - gd))
			s := nm.add("Gather", "opset8", []attr{{"batch_dims", "0"}}, etI64, []int64{1}, so, axis, nm.constI64(nil, 0))
			sym[x.kind()] = nm.add("Subtract", "opset1", []attr{{"auto_broadcast", "numpy"}}, etI64, []int64{1}, s,
				nm.i64s(probeBase[x.kind()]))
		}
	}
	for _, k := range p.kinds {
		if _, ok := sym[k]; !ok {
			return nil, notDynamic("no input gives the %d axis its size", k)
		}
	}
	mono := map[int]value{}
	elem := map[string]value{}
	whole := map[string]value{}
	bin := func(typ string, x, y value) value {
		return nm.add(typ, "opset1", []attr{{"auto_broadcast", "numpy"}}, etI64, []int64{1}, x, y)
	}
	monomial := func(s int) value {
		if v, ok := mono[s]; ok {
			return v
		}
		var v value
		for i, k := range p.kinds {
			if s&(1<<i) == 0 {
				continue
			}
			if v.shape == nil {
				v = sym[k]
			} else {
				v = bin("Multiply", v, sym[k])
			}
		}
		mono[s] = v
		return v
	}
	element := func(co []int64) value {
		key := fmt.Sprint(co)
		if v, ok := elem[key]; ok {
			return v
		}
		v := nm.i64s(co[0])
		for s := 1; s < len(co); s++ {
			if co[s] == 0 {
				continue
			}
			t := monomial(s)
			if co[s] != 1 {
				t = bin("Multiply", t, nm.i64s(co[s]))
			}
			v = bin("Add", v, t)
		}
		elem[key] = v
		return v
	}
	// A fitted constant whose readers all take a literal target is not
	// computed at all.
	needed := map[int]bool{}
	for id, l := range m0.layers {
		t, literal := literals[id]
		for i, in := range l.inputs {
			needed[in.layer] = needed[in.layer] || !(literal && i == t.port)
		}
	}
	constOf := map[int]constRef{}
	for _, c := range m0.consts {
		constOf[c.layer] = c
	}
	for id, l := range m0.layers {
		if l.typ == "Parameter" {
			continue
		}
		if co, ok := fits[id]; ok {
			if !needed[id] {
				continue
			}
			shape := l.outputs[0].shape
			key := fmt.Sprint(shape, co)
			v, ok := whole[key]
			if !ok {
				parts := make([]value, len(co))
				for e := range co {
					parts[e] = element(co[e])
				}
				v = parts[0]
				if len(parts) > 1 {
					v = nm.add("Concat", "opset1", []attr{{"axis", "0"}}, etI64, []int64{int64(len(parts))}, parts...)
				}
				if !sameShape(shape, v.shape) {
					v = nm.add("Reshape", "opset1", []attr{{"special_zero", "false"}}, etI64, shape, v, nm.i64s(shape...))
				}
				whole[key] = v
			}
			repl[id] = v
			continue
		}
		copyLayer(id)
		if c, ok := constOf[id]; ok {
			c.layer = newID[id]
			nm.consts = append(nm.consts, c)
		}
		for _, r := range m0.results {
			if r == id {
				nm.results = append(nm.results, newID[id])
			}
		}
	}
	return nm, nil
}

// dynShape is the shape a dynamic port takes for tensor t: its flat size
// or its 4-D shape, as the port's rank.
func dynShape(t *graph.Tensor, rank int) ([]int64, error) {
	switch rank {
	case 1:
		return []int64{t.NElements()}, nil
	case 4:
		return ovShapeOf(t), nil
	}
	return nil, fmt.Errorf("a dynamic port of rank %d", rank)
}

func logNotDynamic(err error) {
	slog.Debug("openvino: one model per shape", "reason", err)
}
