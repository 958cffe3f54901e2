package openvino

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// An IR v11 model under construction: layers in topological order (every
// layer's inputs are made before it), each output port typed and shaped,
// Constants pointing into one weights blob. The shapes are static: a graph
// of other sizes is another model.

// value is an output port of a layer: what a translator passes on.
type value struct {
	layer, port int
	et          elemType
	shape       []int64
}

func (v value) rank() int { return len(v.shape) }

func (v value) numel() int64 {
	n := int64(1)
	for _, d := range v.shape {
		n *= d
	}
	return n
}

type attr struct{ k, v string }

type outPort struct {
	et    elemType
	shape []int64
	names string
}

type layer struct {
	name, typ, opset string
	attrs            []attr
	inputs           []value
	outputs          []outPort
}

// constRef is a Constant's bytes: in a weight buffer at an absolute
// address, or in the model's side blob at an offset.
type constRef struct {
	layer int
	addr  uintptr // absolute, for weights; 0 for side-blob constants
	off   uint64  // in the side blob
	size  uint64
}

type irModel struct {
	layers  []*layer
	consts  []constRef
	side    []byte // small constants (shapes, axes, tables), 64-byte aligned
	params  []int  // layer ids of Parameters, in input order
	results []int  // layer ids of Results, in output order
	names   map[string]int
}

func newIRModel() *irModel { return &irModel{names: map[string]int{}} }

func cloneShape(s []int64) []int64 { return append([]int64(nil), s...) }

// add appends a layer with one output and returns that output.
func (m *irModel) add(typ, opset string, attrs []attr, et elemType, shape []int64, inputs ...value) value {
	return m.addN(typ, opset, attrs, []outPort{{et: et, shape: cloneShape(shape)}}, inputs...)[0]
}

// addN appends a layer with several outputs.
func (m *irModel) addN(typ, opset string, attrs []attr, outs []outPort, inputs ...value) []value {
	id := len(m.layers)
	m.layers = append(m.layers, &layer{name: fmt.Sprintf("%s_%d", strings.ToLower(typ), id), typ: typ, opset: opset,
		attrs: attrs, inputs: inputs, outputs: outs})
	vals := make([]value, len(outs))
	for i, o := range outs {
		vals[i] = value{layer: id, port: len(inputs) + i, et: o.et, shape: o.shape}
	}
	return vals
}

// uniqueName makes s a tensor name no other port has.
func (m *irModel) uniqueName(s string) string {
	n := m.names[s]
	m.names[s] = n + 1
	if n == 0 {
		return s
	}
	return s + "#" + strconv.Itoa(n)
}

// parameter adds an input; its index is the order of creation.
func (m *irModel) parameter(name string, et elemType, shape []int64) value {
	v := m.add("Parameter", "opset1", []attr{{"shape", dimsAttr(shape)}, {"element_type", et.String()}}, et, shape)
	l := m.layers[v.layer]
	l.name = name
	l.outputs[0].names = m.uniqueName(portName(name))
	m.params = append(m.params, v.layer)
	return v
}

// result adds an output fed by v; its index is the order of creation.
func (m *irModel) result(name string, v value) {
	m.layers[v.layer].outputs[v.port-len(m.layers[v.layer].inputs)].names = m.uniqueName(portName(name))
	id := len(m.layers)
	m.layers = append(m.layers, &layer{name: name + "/sink_port_0", typ: "Result", opset: "opset1", inputs: []value{v}})
	m.results = append(m.results, id)
}

// sideConst adds a Constant holding raw bytes in the side blob.
func (m *irModel) sideConst(et elemType, shape []int64, raw []byte) value {
	off := align64(uint64(len(m.side)))
	m.side = append(m.side, make([]byte, off-uint64(len(m.side)))...)
	m.side = append(m.side, raw...)
	v := m.add("Const", "opset1", []attr{{"element_type", et.String()}, {"shape", dimsAttr(shape)}}, et, shape)
	m.consts = append(m.consts, constRef{layer: v.layer, off: off, size: uint64(len(raw))})
	return v
}

// weightConst adds a Constant over size bytes of weight memory at addr.
func (m *irModel) weightConst(et elemType, shape []int64, addr uintptr, size uint64) value {
	v := m.add("Const", "opset1", []attr{{"element_type", et.String()}, {"shape", dimsAttr(shape)}}, et, shape)
	m.consts = append(m.consts, constRef{layer: v.layer, addr: addr, size: size})
	return v
}

func (m *irModel) constI64(shape []int64, vals ...int64) value {
	raw := make([]byte, 8*len(vals))
	for i, x := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return m.sideConst(etI64, shape, raw)
}

// i64s is a 1-D i64 Constant.
func (m *irModel) i64s(vals ...int64) value { return m.constI64([]int64{int64(len(vals))}, vals...) }

func (m *irModel) constF32(shape []int64, vals ...float32) value {
	raw := make([]byte, 4*len(vals))
	for i, x := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return m.sideConst(etF32, shape, raw)
}

// scalarF32 is an f32 Constant of shape [] (broadcast everywhere).
func (m *irModel) scalarF32(x float32) value { return m.constF32(nil, x) }

// dimsAttr spells a shape as the IR does ("1, 4, 2"); "" for a scalar.
func dimsAttr(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, ", ")
}

// portName makes a tensor name safe for a port's names list: OpenVINO
// splits that list at commas (a comma inside a name is written "\,") and
// has no escape for a backslash before a comma, so backslashes become
// slashes; characters XML cannot carry become '_'.
func portName(s string) string {
	s = xmlSafe(s)
	s = strings.ReplaceAll(s, `\`, "/")
	s = strings.TrimSpace(s)
	if s == "" {
		s = "t"
	}
	return strings.ReplaceAll(s, ",", `\,`)
}

// xmlSafe replaces what XML 1.0 cannot hold in an attribute (invalid
// UTF-8, control characters other than tab, newline, carriage return)
// with '_'.
func xmlSafe(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n <= 1, r < 0x20 && r != '\t' && r != '\n' && r != '\r',
			r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// escapeAttr escapes an attribute value for double quotes, including the
// whitespace characters XML would otherwise normalize to spaces.
func escapeAttr(s string) string {
	var b strings.Builder
	for _, r := range xmlSafe(s) {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		case '\t':
			b.WriteString("&#9;")
		case '\n':
			b.WriteString("&#10;")
		case '\r':
			b.WriteString("&#13;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// precision is the IR spelling of an output port's precision: the
// ov::element name, which the reader accepts beside the legacy ones.
func precision(e elemType) string { return e.String() }

// xml writes the model as IR v11. blobBase maps constants to offsets in
// the weights blob: weights at addr get addr-blobBase, side constants
// sideOff+off.
func (m *irModel) xml(name string, offsets func(c constRef) uint64) []byte {
	constAt := make(map[int]constRef, len(m.consts))
	for _, c := range m.consts {
		constAt[c.layer] = c
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\"?>\n<net name=\"%s\" version=\"11\">\n<layers>\n", escapeAttr(name))
	for id, l := range m.layers {
		fmt.Fprintf(&b, "<layer id=\"%d\" name=\"%s\" type=\"%s\" version=\"%s\">\n", id, escapeAttr(l.name), l.typ, l.opset)
		attrs := l.attrs
		if c, ok := constAt[id]; ok {
			attrs = append(append([]attr(nil), attrs...), attr{"offset", strconv.FormatUint(offsets(c), 10)},
				attr{"size", strconv.FormatUint(c.size, 10)})
		}
		if len(attrs) > 0 {
			b.WriteString("<data")
			for _, a := range attrs {
				fmt.Fprintf(&b, " %s=\"%s\"", a.k, escapeAttr(a.v))
			}
			b.WriteString("/>\n")
		}
		if len(l.inputs) > 0 {
			b.WriteString("<input>\n")
			for i, in := range l.inputs {
				fmt.Fprintf(&b, "<port id=\"%d\">", i)
				writeDims(&b, in.shape)
				b.WriteString("</port>\n")
			}
			b.WriteString("</input>\n")
		}
		if len(l.outputs) > 0 {
			b.WriteString("<output>\n")
			for i, o := range l.outputs {
				fmt.Fprintf(&b, "<port id=\"%d\" precision=\"%s\"", len(l.inputs)+i, precision(o.et))
				if o.names != "" {
					fmt.Fprintf(&b, " names=\"%s\"", escapeAttr(o.names))
				}
				b.WriteString(">")
				writeDims(&b, o.shape)
				b.WriteString("</port>\n")
			}
			b.WriteString("</output>\n")
		}
		b.WriteString("</layer>\n")
	}
	b.WriteString("</layers>\n<edges>\n")
	for id, l := range m.layers {
		for i, in := range l.inputs {
			fmt.Fprintf(&b, "<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\"/>\n", in.layer, in.port, id, i)
		}
	}
	b.WriteString("</edges>\n</net>\n")
	return []byte(b.String())
}

func writeDims(b *strings.Builder, shape []int64) {
	for _, d := range shape {
		fmt.Fprintf(b, "<dim>%d</dim>", d)
	}
}
