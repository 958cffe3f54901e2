// Package reftest gives tests the reference ggml, or skips them when it is
// absent, unless GGML_REF_REQUIRED=1 makes absence a failure (as in CI).
package reftest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggml-go/ggml/internal/ggmlref"
)

// Lib returns the process-wide reference library, skipping or failing t
// when it cannot be loaded.
func Lib(t testing.TB) *ggmlref.Lib {
	t.Helper()
	l, err := ggmlref.Default()
	if err != nil {
		fail(t, err.Error())
	}
	return l
}

// EnvOracleDir overrides where the fixed oracle data set is looked for.
const EnvOracleDir = "GGML_ORACLE_DIR"

// OracleDir returns the folder of the fixed reference data
// (shared/oracle/ggml-0.25.1 beside the repository), skipping or failing t
// when it is absent.
func OracleDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(EnvOracleDir)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			fail(t, err.Error())
		}
		dir = filepath.Join(root, "..", "shared", "oracle", "ggml-0.25.1")
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.tsv")); err != nil {
		fail(t, fmt.Sprintf("oracle data not found: %v (set %s)", err, EnvOracleDir))
	}
	return dir
}

func fail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv(ggmlref.EnvRequired) == "1" {
		t.Fatalf("%s (%s=1)", msg, ggmlref.EnvRequired)
	}
	t.Skip("skipping: " + msg)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
