// Package realmodel gives tests the real GGUF models of internal/modelcache:
// a test skips when one is not installed, and fails instead under
// GGML_REF_REQUIRED=1, as CI runs (scripts/fetch-ref installs them through
// scripts/fetch-models).
package realmodel

import (
	"os"
	"testing"

	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
)

// Path returns m's file, skipping the test (failing it under
// GGML_REF_REQUIRED=1) when it is not installed.
func Path(t testing.TB, m modelcache.Model) string {
	t.Helper()
	p, err := m.Path()
	if err != nil {
		if os.Getenv(ggmlref.EnvRequired) == "1" {
			t.Fatalf("%v (%s=1)", err, ggmlref.EnvRequired)
		}
		t.Skip(err)
	}
	return p
}

// Run returns m's file as Path does, for a test that computes with the
// whole model: such a test is also skipped in short mode (-short, the race
// detector's run in .ci/run), where a real model's minutes of arithmetic
// under the race detector would buy nothing the full run does not check.
func Run(t testing.TB, m modelcache.Model) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: a whole real model is not run in short mode (the full run checks it)", m.Name)
	}
	return Path(t, m)
}
