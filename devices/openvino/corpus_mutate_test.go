//go:build unix

package openvino

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	layerRE = regexp.MustCompile(`(?s)<layer id="(\d+)" name="([^"]*)" type="([^"]*)" version="([^"]*)">\n(.*?)</layer>\n`)
	edgeRE  = regexp.MustCompile(`<edge from-layer="(\d+)" from-port="(\d+)" to-layer="(\d+)" to-port="(\d+)"/>\n`)
	constRE = regexp.MustCompile(`offset="(\d+)" size="(\d+)"`)
)

// irText is a dumped IR taken apart just enough to damage it.
type irText struct {
	x   string
	bin []byte
}

// layers are the byte spans of the layers and their id and type.
func (ir irText) layers() [][]int { return layerRE.FindAllStringSubmatchIndex(ir.x, -1) }

func (ir irText) field(m []int, i int) string { return ir.x[m[2*i]:m[2*i+1]] }

// firstLayer is the first layer whose type is not one of skip.
func (ir irText) firstLayer(skip ...string) []int {
	for _, m := range ir.layers() {
		typ := ir.field(m, 3)
		ok := true
		for _, s := range skip {
			ok = ok && typ != s
		}
		if ok {
			return m
		}
	}
	return nil
}

// opLayer is the first layer that computes (no Parameter, Constant or
// Result).
func (ir irText) opLayer() []int { return ir.firstLayer("Parameter", "Const", "Result") }

// replaceSpan is x with x[a:b] replaced.
func (ir irText) replaceSpan(a, b int, s string) string { return ir.x[:a] + s + ir.x[b:] }

// inLayer replaces the first match of re inside layer m with repl.
func (ir irText) inLayer(m []int, re *regexp.Regexp, repl string) (string, bool) {
	body := ir.x[m[0]:m[1]]
	loc := re.FindStringSubmatchIndex(body)
	if loc == nil {
		return "", false
	}
	nb := body[:loc[0]] + string(re.ExpandString(nil, repl, body, loc)) + body[loc[1]:]
	return ir.replaceSpan(m[0], m[1], nb), true
}

// lastConst is the Constant whose bytes end last in the blob: its
// offset/size span, offset and size.
func (ir irText) lastConst() (span []int, off, size int) {
	for _, m := range constRE.FindAllStringSubmatchIndex(ir.x, -1) {
		o, _ := strconv.Atoi(ir.x[m[2]:m[3]])
		s, _ := strconv.Atoi(ir.x[m[4]:m[5]])
		if span == nil || o+s > off+size {
			span, off, size = m, o, s
		}
	}
	return span, off, size
}

// lastConstElem is the element size of the last Constant's type.
func (ir irText) lastConstElem() int {
	span, _, _ := ir.lastConst()
	head := ir.x[:span[0]]
	i := strings.LastIndex(head, `element_type="`)
	name, _, _ := strings.Cut(head[i+len(`element_type="`):], `"`)
	e, err := elemByName(name)
	if err != nil || elemTypeInfo[e].bits < 8 {
		return 1
	}
	return elemTypeInfo[e].bits / 8
}

// withConst rewrites the last Constant's offset and size.
func (ir irText) withConst(f func(off, size int) (string, string)) (string, bool) {
	span, off, size := ir.lastConst()
	if span == nil {
		return "", false
	}
	o, s := f(off, size)
	return ir.replaceSpan(span[0], span[1], `offset="`+o+`" size="`+s+`"`), true
}

// corpusMutation damages an IR one way; ok is false when the IR has
// nothing to damage that way.
type corpusMutation struct {
	name string
	f    func(ir irText) (x string, bin []byte, ok bool)
}

// xmlOnly adapts a mutation of the XML alone.
func xmlOnly(f func(ir irText) (string, bool)) func(irText) (string, []byte, bool) {
	return func(ir irText) (string, []byte, bool) {
		x, ok := f(ir)
		return x, ir.bin, ok
	}
}

// replaceFirst replaces the first occurrence of old.
func replaceFirst(old, new string) func(irText) (string, []byte, bool) {
	return xmlOnly(func(ir irText) (string, bool) {
		return strings.Replace(ir.x, old, new, 1), strings.Contains(ir.x, old)
	})
}

// onOpLayer applies re -> repl inside the first computing layer.
func onOpLayer(re string, repl string) func(irText) (string, []byte, bool) {
	r := regexp.MustCompile(re)
	return xmlOnly(func(ir irText) (string, bool) {
		m := ir.opLayer()
		if m == nil {
			return "", false
		}
		return ir.inLayer(m, r, repl)
	})
}

// onLayer applies re -> repl inside the first layer of type typ.
func onLayer(typ, re, repl string) func(irText) (string, []byte, bool) {
	r := regexp.MustCompile(re)
	return xmlOnly(func(ir irText) (string, bool) {
		for _, m := range ir.layers() {
			if ir.field(m, 3) == typ {
				return ir.inLayer(m, r, repl)
			}
		}
		return "", false
	})
}

// corpusMutations are the ways the malformed part of the corpus is made:
// each is something an IR writer can get wrong, and each one that the
// real runtime refuses, the double must refuse at the same stage.
var corpusMutations = []corpusMutation{
	{"net-version-9", replaceFirst(`version="11">`, `version="9">`)},
	{"net-version-12", replaceFirst(`version="11">`, `version="12">`)},
	{"net-version-text", replaceFirst(`version="11">`, `version="eleven">`)},
	{"net-version-missing", replaceFirst(` version="11">`, `>`)},
	{"net-version-10", replaceFirst(`version="11">`, `version="10">`)},
	{"no-net", xmlOnly(func(ir irText) (string, bool) {
		return strings.ReplaceAll(strings.ReplaceAll(ir.x, "<net ", "<nut "), "</net>", "</nut>"), true
	})},
	{"xml-truncated", xmlOnly(func(ir irText) (string, bool) { return ir.x[:len(ir.x)/2], true })},
	{"xml-unclosed-layer", xmlOnly(func(ir irText) (string, bool) {
		m := ir.opLayer()
		if m == nil {
			return "", false
		}
		return ir.replaceSpan(m[1]-len("</layer>\n"), m[1], ""), true
	})},
	{"no-edges", xmlOnly(func(ir irText) (string, bool) {
		return edgeRE.ReplaceAllString(ir.x, ""), edgeRE.MatchString(ir.x)
	})},
	{"opset-99", onOpLayer(` version="opset\d+">`, ` version="opset99">`)},
	{"opset-unknown-name", onOpLayer(` version="opset\d+">`, ` version="extension">`)},
	{"opset-missing", onOpLayer(` version="opset\d+">`, `>`)},
	{"opset-0", onOpLayer(` version="opset\d+">`, ` version="opset0">`)},
	{"opset-1", onOpLayer(` version="opset\d+">`, ` version="opset1">`)},
	{"opset-16", onOpLayer(` version="opset\d+">`, ` version="opset16">`)},
	{"opset-17", onOpLayer(` version="opset\d+">`, ` version="opset17">`)},
	{"unknown-op", onOpLayer(` type="[A-Za-z0-9]+"`, ` type="FooBar"`)},
	{"op-lowercase", xmlOnly(func(ir irText) (string, bool) {
		m := ir.opLayer()
		if m == nil {
			return "", false
		}
		return ir.replaceSpan(m[6], m[7], strings.ToLower(ir.field(m, 3))), strings.ToLower(ir.field(m, 3)) != ir.field(m, 3)
	})},
	{"duplicate-id", xmlOnly(func(ir irText) (string, bool) {
		ls := ir.layers()
		if len(ls) < 2 {
			return "", false
		}
		return ir.replaceSpan(ls[1][2], ls[1][3], ir.field(ls[0], 1)), true
	})},
	{"id-missing", onOpLayer(`^<layer id="\d+" `, `<layer `)},
	{"id-text", onOpLayer(`^<layer id="\d+" `, `<layer id="x" `)},
	{"name-missing", onOpLayer(` name="[^"]*"`, ``)},
	{"type-missing", onOpLayer(` type="[^"]*"`, ``)},
	{"edge-missing", xmlOnly(func(ir irText) (string, bool) {
		m := edgeRE.FindStringIndex(ir.x)
		return ir.x[:max(0, m[0])] + ir.x[m[1]:], m != nil
	})},
	{"edge-duplicate", xmlOnly(func(ir irText) (string, bool) {
		m := edgeRE.FindStringIndex(ir.x)
		return ir.x[:m[1]] + ir.x[m[0]:m[1]] + ir.x[m[1]:], m != nil
	})},
	{"edge-to-missing-layer", xmlOnly(func(ir irText) (string, bool) {
		return edgeRE.ReplaceAllStringFunc(ir.x, once(func(e string) string {
			return edgeRE.ReplaceAllString(e, `<edge from-layer="$1" from-port="$2" to-layer="99999" to-port="$4"/>`+"\n")
		})), true
	})},
	{"edge-from-missing-layer", xmlOnly(func(ir irText) (string, bool) {
		return edgeRE.ReplaceAllStringFunc(ir.x, once(func(e string) string {
			return edgeRE.ReplaceAllString(e, `<edge from-layer="99999" from-port="$2" to-layer="$3" to-port="$4"/>`+"\n")
		})), true
	})},
	{"edge-from-missing-port", xmlOnly(func(ir irText) (string, bool) {
		return edgeRE.ReplaceAllStringFunc(ir.x, once(func(e string) string {
			return edgeRE.ReplaceAllString(e, `<edge from-layer="$1" from-port="77" to-layer="$3" to-port="$4"/>`+"\n")
		})), true
	})},
	{"edge-to-missing-port", xmlOnly(func(ir irText) (string, bool) {
		return edgeRE.ReplaceAllStringFunc(ir.x, once(func(e string) string {
			return edgeRE.ReplaceAllString(e, `<edge from-layer="$1" from-port="$2" to-layer="$3" to-port="77"/>`+"\n")
		})), true
	})},
	{"edge-self-loop", xmlOnly(func(ir irText) (string, bool) { return ir.cycle(true) })},
	{"cycle", xmlOnly(func(ir irText) (string, bool) { return ir.cycle(false) })},
	{"edges-reversed", xmlOnly(func(ir irText) (string, bool) {
		es := edgeRE.FindAllString(ir.x, -1)
		if len(es) < 2 {
			return "", false
		}
		for i, j := 0, len(es)-1; i < j; i, j = i+1, j-1 {
			es[i], es[j] = es[j], es[i]
		}
		a, b := strings.Index(ir.x, "<edges>\n")+len("<edges>\n"), strings.Index(ir.x, "</edges>")
		return ir.replaceSpan(a, b, strings.Join(es, "")), true
	})},
	{"layers-reversed", xmlOnly(func(ir irText) (string, bool) {
		ls := ir.layers()
		if len(ls) < 2 {
			return "", false
		}
		var parts []string
		for i := len(ls) - 1; i >= 0; i-- {
			parts = append(parts, ir.x[ls[i][0]:ls[i][1]])
		}
		return ir.replaceSpan(ls[0][0], ls[len(ls)-1][1], strings.Join(parts, "")), true
	})},
	{"input-port-missing", onOpLayer(`(?s)<input>\n<port id="0">.*?</port>\n`, "<input>\n")},
	{"output-port-missing", onOpLayer(`(?s)<output>\n<port [^>]*>.*?</port>\n`, "<output>\n")},
	{"precision-missing", onOpLayer(` precision="[^"]*"`, ``)},
	{"precision-unknown", onOpLayer(` precision="[^"]*"`, ` precision="f99"`)},
	{"precision-legacy-FP32", onOpLayer(` precision="f32"`, ` precision="FP32"`)},
	{"precision-wrong-f16", onOpLayer(` precision="f32"`, ` precision="f16"`)},
	{"precision-wrong-i64", onOpLayer(` precision="f32"`, ` precision="i64"`)},
	{"output-dims-wrong", onOpLayer(`(?s)(<output>\n<port [^>]*>)<dim>\d+</dim>`, `${1}<dim>12345</dim>`)},
	{"input-dims-wrong", onOpLayer(`(?s)(<input>\n<port id="0">)<dim>\d+</dim>`, `${1}<dim>12345</dim>`)},
	{"param-type-i32", onLayer("Parameter", `element_type="f32"`, `element_type="i32"`)},
	{"param-type-unknown", onLayer("Parameter", `element_type="[^"]*"`, `element_type="q4"`)},
	{"param-type-missing", onLayer("Parameter", ` element_type="[^"]*"`, ``)},
	{"param-shape-bigger", onLayer("Parameter", `shape="(\d+)`, `shape="1${1}`)},
	{"param-shape-dynamic", onLayer("Parameter", `shape="(\d+)`, `shape="?`)},
	{"param-shape-minus-one", onLayer("Parameter", `shape="(\d+)`, `shape="-1`)},
	{"param-shape-bounded", onLayer("Parameter", `shape="(\d+)`, `shape="1..${1}`)},
	{"param-shape-text", onLayer("Parameter", `shape="(\d+)`, `shape="abc`)},
	{"param-shape-missing", onLayer("Parameter", ` shape="[^"]*"`, ``)},
	{"result-removed", xmlOnly(func(ir irText) (string, bool) {
		for _, m := range ir.layers() {
			if ir.field(m, 3) == "Result" {
				return ir.replaceSpan(m[0], m[1], ""), true
			}
		}
		return "", false
	})},
	{"data-removed", onOpLayer(`<data [^>]*/>\n`, ``)},
	{"attr-unknown", onOpLayer(`<data `, `<data foo_bar="1" `)},
	{"attr-bad-bool", onLayer("MatMul", `transpose_a="[a-z]+"`, `transpose_a="maybe"`)},
	{"attr-bad-bool-needed", onLayer("MatMul", `transpose_b="true"`, `transpose_b="maybe"`)},
	{"matmul-transpose-b-flipped", onLayer("MatMul", `transpose_b="true"`, `transpose_b="false"`)},
	{"const-type-unknown", onLayer("Const", `element_type="[^"]*"`, `element_type="q4"`)},
	{"const-shape-doubled", onLayer("Const", `shape="(\d+)`, `shape="${1}0`)},
	{"const-shape-text", onLayer("Const", `shape="(\d+)`, `shape="x`)},
	{"const-offset-missing", onLayer("Const", ` offset="\d+"`, ``)},
	{"const-size-missing", onLayer("Const", ` size="\d+"`, ``)},
	{"const-offset-negative", onLayer("Const", `offset="\d+"`, `offset="-1"`)},
	{"const-offset-huge", onLayer("Const", `offset="\d+"`, `offset="18446744073709551615"`)},
	{"const-offset-one-element-past", xmlOnly(func(ir irText) (string, bool) {
		el := 1
		if span, _, _ := ir.lastConst(); span != nil {
			el = ir.lastConstElem()
		}
		return ir.withConst(func(off, size int) (string, string) { return strconv.Itoa(off + el), strconv.Itoa(size) })
	})},
	{"const-offset-one-byte-past", xmlOnly(func(ir irText) (string, bool) {
		return ir.withConst(func(off, size int) (string, string) { return strconv.Itoa(off + 1), strconv.Itoa(size) })
	})},
	{"const-offset-at-end", xmlOnly(func(ir irText) (string, bool) {
		return ir.withConst(func(off, size int) (string, string) { return strconv.Itoa(off + size), strconv.Itoa(size) })
	})},
	{"const-size-plus-one", xmlOnly(func(ir irText) (string, bool) {
		return ir.withConst(func(off, size int) (string, string) { return strconv.Itoa(off), strconv.Itoa(size + 1) })
	})},
	{"const-size-minus-one", xmlOnly(func(ir irText) (string, bool) {
		return ir.withConst(func(off, size int) (string, string) { return strconv.Itoa(off), strconv.Itoa(size - 1) })
	})},
	{"const-size-zero", xmlOnly(func(ir irText) (string, bool) {
		return ir.withConst(func(off, size int) (string, string) { return strconv.Itoa(off), "0" })
	})},
	{"bin-empty", func(ir irText) (string, []byte, bool) { return ir.x, nil, len(ir.bin) > 0 }},
	{"bin-truncated-by-one", func(ir irText) (string, []byte, bool) {
		return ir.x, ir.bin[:max(0, len(ir.bin)-1)], len(ir.bin) > 0
	}},
	{"bin-half", func(ir irText) (string, []byte, bool) { return ir.x, ir.bin[:len(ir.bin)/2], len(ir.bin) > 1 }},
}

// once applies f to the first match only.
func once(f func(string) string) func(string) string {
	done := false
	return func(s string) string {
		if done {
			return s
		}
		done = true
		return f(s)
	}
}

// cycle redirects the first input of a computing layer X to X itself
// (self) or to a layer that X feeds, closing a loop.
func (ir irText) cycle(self bool) (string, bool) {
	es := edgeRE.FindAllStringSubmatchIndex(ir.x, -1)
	get := func(m []int, i int) string { return ir.x[m[2*i]:m[2*i+1]] }
	outPort := map[string]string{} // a layer's first output port id, from the edges leaving it
	for _, e := range es {
		if _, ok := outPort[get(e, 1)]; !ok {
			outPort[get(e, 1)] = get(e, 2)
		}
	}
	for _, e := range es {
		x := get(e, 3)
		port, ok := outPort[x]
		if !ok {
			continue
		}
		from, fromPort := x, port
		if !self {
			// the layer X feeds
			for _, f := range es {
				if get(f, 1) == x {
					if p, ok := outPort[get(f, 3)]; ok {
						from, fromPort = get(f, 3), p
						break
					}
				}
			}
			if from == x {
				continue
			}
		}
		nl := `<edge from-layer="` + from + `" from-port="` + fromPort + `" to-layer="` + x + `" to-port="` + get(e, 4) + `"/>` + "\n"
		return ir.replaceSpan(e[0], e[1], nl), true
	}
	return "", false
}

// packed is the IR with its Constants packed into a blob of their own
// (64-byte aligned, in order): a dump's blob spans every weight buffer at
// its live offsets, which may lie far apart, and each mutation gets a
// copy.
func packed(x string, bin []byte) irText {
	var blob []byte
	at := map[string]int{}
	nx := constRE.ReplaceAllStringFunc(x, func(m string) string {
		sub := constRE.FindStringSubmatch(m)
		if _, ok := at[m]; !ok {
			off, _ := strconv.Atoi(sub[1])
			size, _ := strconv.Atoi(sub[2])
			blob = append(blob, make([]byte, int(align64(uint64(len(blob))))-len(blob))...)
			at[m] = len(blob)
			blob = append(blob, bin[off:off+size]...)
		}
		return `offset="` + strconv.Itoa(at[m]) + `" size="` + sub[2] + `"`
	})
	return irText{x: nx, bin: blob}
}

// mutateCorpus writes every mutation of a few base models of the corpus
// (the first weighted MUL_MAT, an elementwise ADD, a SOFT_MAX and the
// language model's first IR) next to them as bad_<base>_<mutation>, with
// the base's manifest and inputs.
func mutateCorpus(t *testing.T, dir string, valid []string) []string {
	var bases []string
	pick := func(want func(dumpManifest) bool) {
		for _, m := range valid {
			man, err := readManifest(m)
			require.NoError(t, err)
			if want(man) {
				bases = append(bases, m)
				return
			}
		}
	}
	only := func(op string) func(dumpManifest) bool {
		return func(m dumpManifest) bool { return len(m.Ops) <= 3 && m.Ops[len(m.Ops)-1] == op }
	}
	pick(only("MUL_MAT"))
	pick(only("ADD"))
	pick(only("SOFT_MAX"))
	pick(func(m dumpManifest) bool { return len(m.Ops) > 10 })
	require.Len(t, bases, 4, "base models of the malformed corpus")
	var out []string
	for bi, b := range bases {
		x, err := os.ReadFile(b + ".xml")
		require.NoError(t, err)
		bin, err := os.ReadFile(b + ".bin")
		require.NoError(t, err)
		ir := packed(string(x), bin)
		for _, mu := range corpusMutations {
			nx, nbin, ok := mu.f(ir)
			if !ok || nx == ir.x && string(nbin) == string(ir.bin) {
				continue
			}
			p := filepath.Join(dir, "bad_"+strconv.Itoa(bi)+"_"+mu.name)
			require.NoError(t, os.WriteFile(p+".xml", []byte(nx), 0o644))
			require.NoError(t, os.WriteFile(p+".bin", nbin, 0o644))
			files, err := filepath.Glob(b + ".input*.bin")
			require.NoError(t, err)
			for _, f := range append(files, b+".json") {
				require.NoError(t, os.Symlink(f, p+strings.TrimPrefix(f, b)))
			}
			out = append(out, p)
		}
	}
	return out
}
