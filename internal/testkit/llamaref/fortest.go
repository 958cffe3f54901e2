package llamaref

import (
	"os"
	"testing"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
)

// ForTest returns the process-wide libllama (Default) for a test: when it
// cannot be loaded the test is skipped, or failed when GGML_REF_REQUIRED=1
// (as in CI), saying why.
func ForTest(t testing.TB) *Lib {
	t.Helper()
	l, err := Default()
	if err != nil {
		if os.Getenv(ggmlref.EnvRequired) == "1" {
			t.Fatalf("%v (%s=1)", err, ggmlref.EnvRequired)
		}
		t.Skipf("libllama not available: %v", err)
	}
	return l
}
