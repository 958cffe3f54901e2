package optest

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/internal/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/ggmlref/reftest"
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

// TestCasesAgainstGGML runs every quick case of every family on our CPU
// device and on the real ggml, and fails on any difference beyond the
// case's tolerance. Cases either side does not support are skipped, with
// the reason logged.
func TestCasesAgainstGGML(t *testing.T) {
	ref := ggmlExecutor(t)
	eng := cpu.New(cpu.Options{Threads: 2})
	defer eng.Close()
	cases := Cases(false, nil)
	require.NotEmpty(t, cases)
	var tally Tally
	for _, c := range cases {
		r := Run(c, CPU{eng}, ref, 1)
		tally.Add(r)
		switch r.Status {
		case Failed:
			t.Errorf("%s: %s", c.Name, r.Detail)
		case Skipped:
			t.Logf("skipped %s: %s", c.Name, r.Detail)
		}
	}
	var table strings.Builder
	require.NoError(t, tally.WriteTable(&table))
	t.Logf("against ggml %s:\n%s%s", reftest.Lib(t).Variant(), table.String(), tally.String())
}
