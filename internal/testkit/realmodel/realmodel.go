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
