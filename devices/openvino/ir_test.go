package openvino

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

type xmlNet struct {
	Version string `xml:"version,attr"`
	Layers  []struct {
		ID      string `xml:"id,attr"`
		Name    string `xml:"name,attr"`
		Type    string `xml:"type,attr"`
		Outputs []struct {
			Names     string `xml:"names,attr"`
			Precision string `xml:"precision,attr"`
		} `xml:"output>port"`
	} `xml:"layers>layer"`
	Edges []struct {
		From string `xml:"from-layer,attr"`
		To   string `xml:"to-layer,attr"`
	} `xml:"edges>edge"`
}

// splitNames splits a port's names list as OpenVINO does: at commas not
// escaped with a backslash.
func splitNames(s string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == ',' {
			cur.WriteByte(',')
			i++
			continue
		}
		if s[i] == ',' {
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(s[i])
	}
	return append(out, cur.String())
}

// buildNamed is a small model whose Parameter and Result carry name.
func buildNamed(name string) []byte {
	m := newIRModel()
	x := m.parameter(name, etF32, []int64{2, 3})
	y := m.parameter(name, etF32, []int64{2, 3})
	s := m.add("Add", "opset1", []attr{{"auto_broadcast", "numpy"}}, etF32, []int64{2, 3}, x, y)
	m.result(name, s)
	return m.xml(name, func(constRef) uint64 { return 0 })
}

func checkIR(t *testing.T, name string, doc []byte) {
	var net xmlNet
	require.NoError(t, xml.Unmarshal(doc, &net), "IR for name %q:\n%s", name, doc)
	require.Equal(t, "11", net.Version)
	require.Len(t, net.Layers, 4)
	safe := xmlSafe(name)
	require.Equal(t, safe, net.Layers[0].Name, "friendly names survive escaping")
	require.Equal(t, safe+"/sink_port_0", net.Layers[3].Name)
	seen := map[string]bool{}
	for _, l := range net.Layers {
		for _, o := range l.Outputs {
			require.NotEmpty(t, o.Precision)
			if o.Names == "" {
				continue
			}
			parts := splitNames(o.Names)
			require.Len(t, parts, 1, "one tensor name per port: %q", o.Names)
			require.False(t, seen[parts[0]], "tensor names are unique")
			seen[parts[0]] = true
			require.True(t, utf8.ValidString(parts[0]))
		}
	}
	require.Len(t, seen, 3)
	require.Len(t, net.Edges, 3)
}

func TestIRNamesEscaped(t *testing.T) {
	for _, name := range []string{"x", "a,b", `a\,b`, `<&"'>`, "tab\there", "nl\nx", "\x00\x01ctl", "\xff\xfe", "", " ", "ü, 漢字", "a\\", `\`} {
		checkIR(t, name, buildNamed(name))
	}
}

func FuzzIRNames(f *testing.F) {
	for _, s := range []string{"x", "a,b", `a\,b`, `<&"'>`, "\x00", "\xff", "ok (view)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) { checkIR(t, name, buildNamed(name)) })
}
