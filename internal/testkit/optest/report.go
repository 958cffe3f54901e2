package optest

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/ggml-go/ggml/backend"
)

// Versioner is a Device (or a reference Executor) that can say which
// native libraries, and which versions, it runs on; run reports include
// them, so that a report sent back by a user with real hardware says what
// it was measured with.
type Versioner interface {
	Versions() map[string]string
}

// reportJSON is the JSON form of a Report.
type reportJSON struct {
	Device    propsJSON         `json:"device"`
	Reference string            `json:"reference"`
	Seed      int64             `json:"seed"`
	Libraries map[string]string `json:"libraries,omitempty"`
	Cases     string            `json:"cases,omitempty"`
	Elapsed   float64           `json:"elapsed_seconds"`
	Passed    int               `json:"passed"`
	Failed    int               `json:"failed"`
	Skipped   int               `json:"skipped"`
	Ops       []opJSON          `json:"ops"`
	Failures  []failureJSON     `json:"failures"`
}

type propsJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	DeviceID    string `json:"device_id,omitempty"`
	MemoryFree  uint64 `json:"memory_free"`
	MemoryTotal uint64 `json:"memory_total"`
	Caps        string `json:"caps"`
}

type opJSON struct {
	Op      string `json:"op"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
}

type failureJSON struct {
	Case  string `json:"case"`
	Error string `json:"error"`
}

func (r *Report) json() reportJSON {
	p := r.Device
	j := reportJSON{
		Device: propsJSON{Name: p.Name, Description: p.Description, Type: p.Type.String(), DeviceID: p.DeviceID,
			MemoryFree: p.MemoryFree, MemoryTotal: p.MemoryTotal, Caps: p.Caps.String()},
		Reference: r.Reference, Seed: r.Seed, Libraries: r.Libraries, Cases: r.Cases,
		Elapsed: r.Elapsed.Seconds(),
		Passed:  r.Tally.Count(Passed), Failed: r.Tally.Count(Failed), Skipped: r.Tally.Count(Skipped),
		Ops: []opJSON{}, Failures: []failureJSON{},
	}
	for _, c := range r.Tally.Ops() {
		j.Ops = append(j.Ops, opJSON(c))
	}
	for _, f := range r.Failures() {
		j.Failures = append(j.Failures, failureJSON{f.Case.Name, f.Detail})
	}
	return j
}

// WriteJSON writes the report as one JSON object: the device's properties,
// the reference, seed, libraries, the counts per operation and every
// failure with its case and error.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.json())
}

// WriteMarkdown writes the report for people: the same content as
// WriteJSON, as headings, a table and a list.
func (r *Report) WriteMarkdown(w io.Writer) error {
	j := r.json()
	var b strings.Builder
	fmt.Fprintf(&b, "# ggml test-ops: %s\n\n", j.Device.Name)
	fmt.Fprintf(&b, "- device: %s (%s, %s), caps %s", j.Device.Name, j.Device.Description, j.Device.Type, j.Device.Caps)
	if j.Device.MemoryTotal > 0 {
		fmt.Fprintf(&b, ", memory %d of %d bytes free", j.Device.MemoryFree, j.Device.MemoryTotal)
	}
	fmt.Fprintf(&b, "\n- reference: %s; seed %d", j.Reference, j.Seed)
	if j.Cases != "" {
		fmt.Fprintf(&b, "; cases %s", j.Cases)
	}
	fmt.Fprintf(&b, "\n- time: %s\n", time.Duration(j.Elapsed*float64(time.Second)).Round(time.Millisecond))
	for _, k := range sortedKeys(j.Libraries) {
		fmt.Fprintf(&b, "- %s: %s\n", k, mdEscape(j.Libraries[k]))
	}
	fmt.Fprintf(&b, "\n**%d passed, %d failed, %d skipped**\n\n", j.Passed, j.Failed, j.Skipped)
	b.WriteString("| op | passed | failed | skipped |\n| --- | ---: | ---: | ---: |\n")
	for _, o := range j.Ops {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", o.Op, o.Passed, o.Failed, o.Skipped)
	}
	if len(j.Failures) > 0 {
		b.WriteString("\n## Failures\n\n")
		for _, f := range j.Failures {
			fmt.Fprintf(&b, "- `%s`: %s\n", f.Case, mdEscape(f.Error))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`).Replace(s)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// libraries is the Go version and what the device and the reference say
// about their native libraries.
func libraries(dev backend.Device, ref Executor) map[string]string {
	libs := map[string]string{"go": runtime.Version()}
	for _, x := range []any{dev, ref} {
		if v, ok := x.(Versioner); ok {
			for k, s := range v.Versions() {
				libs[k] = s
			}
		}
	}
	return libs
}
