package openvino

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/optest"
)

// ovExec runs conformance cases on an OpenVINO backend (on the double).
type ovExec struct {
	dev *device
	be  *ovBackend
}

func (e ovExec) Name() string { return e.dev.Name() }

func (e ovExec) Supports(g *graph.Graph) error {
	for _, n := range g.Nodes {
		if ok, reason := supportsOp(e.dev.rt.kind, n); !ok {
			return fmt.Errorf("%s: %s", n.Op, reason)
		}
	}
	return nil
}

func (e ovExec) Compute(g *graph.Graph) error { return e.be.GraphCompute(g) }

// runCases runs the conformance cases of ops on the device against our
// CPU device and returns per-op pass/fail/skip counts.
func runCases(t *testing.T, dev *device, only []string, full bool) map[string][3]int {
	exec := ovExec{dev: dev, be: newBackend(dev)}
	t.Cleanup(func() { exec.be.Close() })
	ref := optest.CPU{Engine: cpu.New(cpu.Options{Threads: 1})}
	counts := map[string][3]int{}
	for i, c := range optest.Cases(full, only) {
		r := optest.Run(c, exec, ref, int64(1000+i))
		k := counts[r.Op]
		k[r.Status]++
		counts[r.Op] = k
		if r.Status == optest.Failed {
			t.Errorf("%s: %s", c.Name, r.Detail)
		}
		if r.Status == optest.Skipped && os.Getenv("OV_VERBOSE") != "" {
			t.Logf("skip %s: %s", c.Name, r.Detail)
		}
	}
	return counts
}

func logCounts(t *testing.T, counts map[string][3]int) (passed int) {
	ops := make([]string, 0, len(counts))
	for o := range counts {
		ops = append(ops, o)
	}
	sort.Strings(ops)
	var b strings.Builder
	for _, o := range ops {
		c := counts[o]
		passed += c[0]
		fmt.Fprintf(&b, "%s %d/%d/%d  ", o, c[0], c[1], c[2])
	}
	t.Logf("passed/failed/skipped: %s", b.String())
	return passed
}

func TestOpsOnDouble(t *testing.T) {
	p := buildDouble(t)
	for _, v := range []string{"2025.1", "2025.0"} {
		t.Run(v, func(t *testing.T) {
			knob(t, p, "version", v)
			dev := openDevice(t, p, Options{})
			counts := runCases(t, dev, nil, false)
			require.Positive(t, logCounts(t, counts))
		})
	}
}
