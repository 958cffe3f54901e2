package optest

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// ggmlShared is the process's ggml executor: one CPU backend for every test.
var ggmlShared struct {
	once sync.Once
	e    *mirror.Executor
	err  error
}

// ggmlExecutor returns the real ggml's CPU backend as an Executor, skipping
// t when the reference library is absent (failing it under
// GGML_REF_REQUIRED=1). It computes on one thread: on a small machine,
// waking ggml's worker threads costs far more than the small cases take.
func ggmlExecutor(t testing.TB) *mirror.Executor {
	t.Helper()
	lib := reftest.Lib(t)
	ggmlShared.once.Do(func() { ggmlShared.e, ggmlShared.err = mirror.New(lib, 1) })
	require.NoError(t, ggmlShared.err)
	return ggmlShared.e
}

// testFull reports whether OPTEST_FULL=1 asks the suite-wide tests for
// every case instead of the quick subset (ggml test-ops -cases full runs
// the same set).
func testFull() bool { return os.Getenv("OPTEST_FULL") == "1" }

// TestCasesAgainstGGML runs every case of every family (quick, or full with
// OPTEST_FULL=1) on our CPU device, through its buffers as any device is
// run (RunDevice), and on the real ggml, and fails on any difference
// beyond the case's tolerance, and on any case our CPU refuses that ggml
// computes. Other skips (what ggml refuses, known ggml bugs) are logged.
func TestCasesAgainstGGML(t *testing.T) {
	ref := ggmlExecutor(t)
	cases := Cases(testFull(), nil)
	require.NotEmpty(t, cases)
	rep, err := RunDevice(cpu.Device(), Options{Ref: ref, Cases: cases, Seed: 1, Backend: backend.Options{Threads: 2}})
	require.NoError(t, err)
	for _, r := range rep.Results {
		switch {
		case r.Status == Failed:
			t.Errorf("%s: %s", r.Case.Name, r.Detail)
		case r.Status == Skipped && strings.HasPrefix(r.Detail, "CPU:") && ggmlComputes(t, ref, r.Case):
			t.Errorf("%s: our CPU refuses a case ggml computes: %s", r.Case.Name, r.Detail)
		case r.Status == Skipped:
			t.Logf("skipped %s: %s", r.Case.Name, r.Detail)
		}
	}
	var table strings.Builder
	require.NoError(t, rep.Tally.WriteTable(&table))
	t.Logf("against ggml %s:\n%s%s", reftest.Lib(t).Variant(), table.String(), rep.Tally.String())
}

// ggmlComputes reports whether ggml's CPU backend supports every node of c.
func ggmlComputes(t *testing.T, ref *mirror.Executor, c Case) bool {
	ctx := graph.NewContext(graph.ContextOptions{})
	g, err := ctx.Build(c.Build(ctx)...)
	require.NoError(t, err, c.Name)
	return ref.Supports(g) == nil
}
