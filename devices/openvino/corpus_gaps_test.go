//go:build unix

package openvino

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// The three divergences TestIRCorpus once kept (testdata/README.md),
// each on hand-written IRs: a Parameter without element_type, a Constant
// shape with a dimension that is no number, and an IR v10 model's input
// and output precisions. Each case says what the real runtime did,
// measured on 2025.0.0 and 2026.4.1 (the replay of these very IRs); the
// double presenting each release must do the same, and so must every
// fetched real runtime of those releases, replayed beside it (so the
// expectations are checked against the real library wherever it is).

// gapCase is one hand-written model: its XML, the element type of the
// tensor bound to its one input [4] (filled with 1, 2, 3, 4), and per
// release ("2025.0", "2026.4") the stage the real runtime refused it at
// or "ok" with the output's bytes.
type gapCase struct {
	name, xml, bind string
	want            map[string]gapWant
	// shape is the bound tensor's, when not [4] (its elements 1, 2, ...).
	shape []int64
}

type gapWant struct {
	stage, msg string // msg: a part of the refusal's message
	out        []byte
}

// gapIR is Parameter [4] of element type attribute param (the whole
// attribute, or "" for none) and port precision prec, times itself
// (Multiply), or plus Constant of shape attribute constShape (Add) when
// constShape is not "", into one Result, as IR version ver.
func gapIR(ver, param, prec, constShape string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\"?>\n<net name=\"gap\" version=\"%s\">\n<layers>\n", ver)
	fmt.Fprintf(&b, "<layer id=\"0\" name=\"in0\" type=\"Parameter\" version=\"opset1\">\n<data shape=\"4\" %s/>\n"+
		"<output><port id=\"0\" precision=\"%s\" names=\"in0\"><dim>4</dim></port></output>\n</layer>\n", param, prec)
	second := "0"
	op := "Multiply"
	if constShape != "" {
		second, op = "3", "Add"
		fmt.Fprintf(&b, "<layer id=\"3\" name=\"c\" type=\"Const\" version=\"opset1\">\n<data element_type=\"f32\" "+
			"shape=\"%s\" offset=\"0\" size=\"16\"/>\n<output><port id=\"0\" precision=\"FP32\"/></output>\n</layer>\n", constShape)
	}
	fmt.Fprintf(&b, "<layer id=\"1\" name=\"op\" type=\"%s\" version=\"opset1\">\n<input><port id=\"0\"/><port id=\"1\"/></input>\n"+
		"<output><port id=\"2\" precision=\"%s\" names=\"op\"/></output>\n</layer>\n", op, prec)
	b.WriteString("<layer id=\"2\" name=\"out0\" type=\"Result\" version=\"opset1\">\n<input><port id=\"0\"/></input>\n</layer>\n")
	fmt.Fprintf(&b, "</layers>\n<edges>\n<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>\n"+
		"<edge from-layer=\"%s\" from-port=\"0\" to-layer=\"1\" to-port=\"1\"/>\n"+
		"<edge from-layer=\"1\" from-port=\"2\" to-layer=\"2\" to-port=\"0\"/>\n</edges>\n</net>\n", second)
	return b.String()
}

// gapPrecision is the IR port precision of element type name.
func gapPrecision(name string) string {
	switch name {
	case "f16", "f32", "f64":
		return "FP" + name[1:]
	}
	return strings.ToUpper(name)
}

// gapValues is x encoded as element type name (integers truncated).
func gapValues(name string, x ...float64) []byte {
	var b []byte
	for _, v := range x {
		switch name {
		case "f32":
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		case "f64":
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		case "f16":
			b = binary.LittleEndian.AppendUint16(b, quant.FP32ToFP16(float32(v)))
		case "bf16":
			b = binary.LittleEndian.AppendUint16(b, uint16(math.Float32bits(float32(v))>>16))
		case "i8", "u8":
			b = append(b, byte(int64(v)))
		case "i16", "u16":
			b = binary.LittleEndian.AppendUint16(b, uint16(int64(v)))
		case "i32", "u32":
			b = binary.LittleEndian.AppendUint32(b, uint32(int64(v)))
		case "i64", "u64":
			b = binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
		}
	}
	if len(b) == 0 && len(x) > 0 {
		return nil // no such type here: the case's comparison then fails
	}
	return b
}

// bothReleases is w on 2025.0 and 2026.4.
func bothReleases(w gapWant) map[string]gapWant { return map[string]gapWant{"2025.0": w, "2026.4": w} }

// checkGapCases writes the cases as dumps (replayDump's files), replays
// them through the double presenting 2025.0.0 and 2026.4.1 and through
// each fetched real runtime of those releases, and checks each against
// its case's expectation for that release.
func checkGapCases(t *testing.T, cases []gapCase) {
	dir := t.TempDir()
	var models []string
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		shape, vals := []int64{4}, []float64(nil)
		if c.shape != nil {
			shape = c.shape
		}
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		for i := range n {
			vals = append(vals, float64(i+1))
		}
		man := dumpManifest{Inputs: []dumpedIO{{Name: "in0", Type: c.bind, Shape: shape}},
			Outputs: []dumpedIO{{Name: "out0", Type: "f32", Shape: []int64{4}}}}
		b, err := json.Marshal(man)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p+".json", b, 0o644))
		require.NoError(t, os.WriteFile(p+".xml", []byte(c.xml), 0o644))
		require.NoError(t, os.WriteFile(p+".bin", gapValues("f32", 10, 20, 30, 40), 0o644))
		require.NoError(t, os.WriteFile(p+".input0.bin", gapValues(c.bind, vals...), 0o644))
		models = append(models, p)
	}
	type runOn struct {
		label, release, lib string
		env                 []string
	}
	double := buildTheDouble(t)
	runs := []runOn{{"the double presenting 2025.0.0", "2025.0", double, []string{"OVDOUBLE_VERSION=2025.0.0"}},
		{"the double presenting 2026.4.1", "2026.4", double, []string{"OVDOUBLE_VERSION=2026.4.1"}}}
	for _, lib := range fetchCacheDirs(os.Getenv) {
		rel := filepath.Base(filepath.Dir(filepath.Dir(lib)))
		for _, r := range []string{"2025.0", "2026.4"} {
			if strings.HasPrefix(rel, r+".") {
				runs = append(runs, runOn{"the real runtime " + rel, r, lib, nil})
			}
		}
	}
	for _, run := range runs {
		got := replayCorpus(t, run.lib, models, run.env...)
		t.Logf("%d models replayed on %s", len(models), run.label)
		for i, c := range cases {
			w, ok := c.want[run.release]
			require.True(t, ok, "%s: no expectation for %s", c.name, run.release)
			r := got[models[i]]
			if !check(t, r.Stage == w.stage, "%s on %s: stage %s (%s), want %s", c.name, run.label, r.Stage, firstLine(r.Msg), w.stage) {
				continue
			}
			if w.msg != "" {
				check(t, strings.Contains(r.Msg, w.msg), "%s on %s: message %q lacks %q", c.name, run.label, firstLine(r.Msg), w.msg)
			}
			if w.stage == "ok" {
				check(t, len(r.Outputs) == 1 && string(r.Outputs[0]) == string(w.out), "%s on %s: output %x, want %x",
					c.name, run.label, r.Outputs, w.out)
			}
		}
	}
}

// check reports a failure of t unless ok, and returns ok.
func check(t *testing.T, ok bool, format string, args ...any) bool {
	t.Helper()
	if !ok {
		t.Errorf(format, args...)
	}
	return ok
}

// A Parameter without element_type: 2025.0.0's reader refuses the model
// at its consumer, whose input type is undefined; 2026.4.1's reads it as a
// dynamic element type and its CPU plugin refuses it at compile.
func TestIRGapParamTypeMissing(t *testing.T) {
	checkGapCases(t, []gapCase{{name: "param-no-type", xml: gapIR("11", "", "FP32", ""), bind: "f32",
		want: map[string]gapWant{
			"2025.0": {stage: "read", msg: "Multiply layer op with id: 1 has undefined element type for input with index 0!"},
			"2026.4": {stage: "compile", msg: "Memory has not been allocated"},
		}}})
}

// A Constant shape whose dimension is no number: 2025.0.0 reads it as 0
// (the Add's result is empty), 2026.4.1 refuses it at read; both read
// the leading digits of "1x" and ignore the rest, and refuse an empty
// dimension.
func TestIRGapConstShapeText(t *testing.T) {
	sum := gapValues("f32", 11, 22, 33, 44)
	checkGapCases(t, []gapCase{
		{name: "const-x", xml: gapIR("11", `element_type="f32"`, "FP32", "x,4"), bind: "f32", want: map[string]gapWant{
			"2025.0": {stage: "ok", out: []byte{}},
			"2026.4": {stage: "read", msg: "Cannot parse 'x' in \"x,4\""},
		}},
		{name: "const-abc", xml: gapIR("11", `element_type="f32"`, "FP32", "abc,4"), bind: "f32", want: map[string]gapWant{
			"2025.0": {stage: "ok", out: []byte{}},
			"2026.4": {stage: "read", msg: "Cannot parse 'abc'"},
		}},
		{name: "const-1x", xml: gapIR("11", `element_type="f32"`, "FP32", "1x,4"), bind: "f32",
			want: bothReleases(gapWant{stage: "ok", out: sum})},
		// [1,0] does not broadcast with [4]: refused at read by both
		{name: "const-1-x", xml: gapIR("11", `element_type="f32"`, "FP32", "1,x"), bind: "f32",
			want: bothReleases(gapWant{stage: "read"})},
		{name: "const-empty-dim", xml: gapIR("11", `element_type="f32"`, "FP32", ",4"), bind: "f32",
			want: bothReleases(gapWant{stage: "read", msg: "Cannot get vector of parameters"})},
	})
}

// An IR v10 model's inputs and outputs have the legacy API's precisions
// on the real runtime (2025.0.0 and 2026.4.1 alike): an f16 input is f32
// (a bound f16 tensor is refused), every other input keeps its type; f16,
// bf16, f64, i8, i16, u8 and u16 outputs are f32, i64 and u64 are i32.
func TestIRGapVersion10Precisions(t *testing.T) {
	var cases []gapCase
	squares := []float64{1, 4, 9, 16}
	for _, ty := range strings.Fields("f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64") {
		in, out := ty, ty
		switch ty {
		case "f16":
			in, out = "f32", "f32"
		case "bf16", "f64", "i8", "i16", "u8", "u16":
			out = "f32"
		case "i64", "u64":
			out = "i32"
		}
		xml := gapIR("10", `element_type="`+ty+`"`, gapPrecision(ty), "")
		cases = append(cases, gapCase{name: "v10-" + ty, xml: xml, bind: in,
			want: bothReleases(gapWant{stage: "ok", out: gapValues(out, squares...)})})
		if in != ty {
			cases = append(cases, gapCase{name: "v10-" + ty + "-bound-as-" + ty, xml: xml, bind: ty,
				want: bothReleases(gapWant{stage: "bind"})})
		}
		if ty == "f16" || ty == "i64" {
			// IR v11 keeps the model's own types
			cases = append(cases, gapCase{name: "v11-" + ty, xml: gapIR("11", `element_type="`+ty+`"`, gapPrecision(ty), ""),
				bind: ty, want: bothReleases(gapWant{stage: "ok", out: gapValues(ty, squares...)})})
		}
	}
	checkGapCases(t, cases)
}

// gapDynIR is gapIR's square of its input (IR v11, f32) with the
// Parameter's shape dims (the data attribute and the port's dims), for
// dynamic dimensions (-1; the double reads no interval lo..hi, which the
// device never writes: testdata/README.md).
func gapDynIR(dims ...string) string {
	var port strings.Builder
	for _, d := range dims {
		port.WriteString("<dim>" + d + "</dim>")
	}
	x := gapIR("11", `element_type="f32"`, "FP32", "")
	x = strings.Replace(x, `<data shape="4" `, `<data shape="`+strings.Join(dims, ",")+`" `, 1)
	return strings.Replace(x, "<dim>4</dim>", port.String(), 1)
}

// Tensors bound to a Parameter with dynamic dimensions (the device's one
// model for all token counts, dynamic.go): a shape the port's dimensions
// admit is computed; one of another rank, or another size on a static
// dimension, is refused when bound, as by the real runtime (2025.0.0 and
// 2026.4.1, which also accept 2..6 and refuse [4] on 2..3 when bound).
func TestIRGapDynamicShapes(t *testing.T) {
	squares := gapValues("f32", 1, 4, 9, 16)
	checkGapCases(t, []gapCase{
		{name: "dyn-any", xml: gapDynIR("-1"), bind: "f32", want: bothReleases(gapWant{stage: "ok", out: squares})},
		{name: "dyn-2d", xml: gapDynIR("-1", "2"), bind: "f32", shape: []int64{2, 2},
			want: bothReleases(gapWant{stage: "ok", out: squares})},
		{name: "dyn-rank", xml: gapDynIR("-1"), bind: "f32", shape: []int64{2, 2}, want: bothReleases(gapWant{stage: "bind"})},
		{name: "dyn-static-dim", xml: gapDynIR("-1", "2"), bind: "f32", shape: []int64{1, 4}, want: bothReleases(gapWant{stage: "bind"})},
	})
}
