// Package cdouble builds a device's C test double (a shared library that
// stands in for a vendor library) with the system C compiler, once per
// test process, for the test-support packages of each double. It is test
// support: nothing outside tests imports it.
package cdouble

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Build is one double's build: its script runs at most once per process.
type Build struct {
	// Lib names the library the double stands in for, in messages.
	Lib string
	// Script is the build script's path from the repository root; it is
	// run as `sh Script OUTDIR`.
	Script string

	once sync.Once
	dir  string
	out  string
	err  error
}

// Dir builds the double into a temporary folder on the first call and
// returns the folder and the script's output. Off Linux, or without a C
// compiler, the test is skipped, or fails when GGML_REF_REQUIRED=1 (CI),
// so a missing compiler is never a silent pass there.
func (b *Build) Dir(t testing.TB) (dir, output string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the double is a Linux shared library")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(strings.Fields(cc)[0]); err != nil {
		if os.Getenv("GGML_REF_REQUIRED") == "1" {
			t.Fatalf("no C compiler (%s) to build the %s double: %v", cc, b.Lib, err)
		}
		t.Skipf("no C compiler (%s) to build the %s double", cc, b.Lib)
	}
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "cdouble"); b.err != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		script := filepath.Join(filepath.Dir(file), "..", "..", "..", filepath.FromSlash(b.Script))
		out, err := exec.Command("sh", script, b.dir).CombinedOutput()
		b.out = string(out)
		if err != nil {
			b.err = fmt.Errorf("building the %s double: %w\n%s", b.Lib, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.dir, b.out
}

// Cleanup removes the build folder; a TestMain calls it.
func (b *Build) Cleanup() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}
