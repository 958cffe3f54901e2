// Package ovdouble builds the libopenvino_c test double of
// devices/openvino/testdata with the system C compiler and reads its
// counters and sets its knobs through purego, for tests outside package
// openvino (which has its own helpers). It is test support: nothing
// outside tests imports it.
package ovdouble

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
)

var (
	once     sync.Once
	builtDir string
	libPath  string
	buildErr error
)

// Path builds the double once per process into a temporary folder and
// returns the library's path (for openvino.Options.Lib or
// GGML_OPENVINO_LIB). Without a C compiler the test is skipped, or fails
// when GGML_REF_REQUIRED=1 (CI).
func Path(t testing.TB) string {
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
			t.Fatalf("no C compiler (%s) to build the libopenvino_c double: %v", cc, err)
		}
		t.Skipf("no C compiler (%s) to build the libopenvino_c double", cc)
	}
	once.Do(func() {
		builtDir, buildErr = os.MkdirTemp("", "ovdouble")
		if buildErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		script := filepath.Join(filepath.Dir(file), "..", "..", "devices", "openvino", "testdata", "build.sh")
		out, err := exec.Command("sh", script, builtDir).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building the double: %v\n%s", err, out)
			return
		}
		// build.sh prints the library's path last.
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		libPath = lines[len(lines)-1]
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return libPath
}

// Cleanup removes the build folder; TestMain calls it.
func Cleanup() {
	if builtDir != "" {
		_ = os.RemoveAll(builtDir)
	}
}

// Double is the loaded double's hooks: the same instance the code under
// test loads from the same path.
type Double struct {
	stat, set, reset uintptr
}

// Open loads the double at path (from Path) and resets its counters.
func Open(t testing.TB, path string) *Double {
	t.Helper()
	lib, err := dynlib.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d := &Double{}
	for name, dst := range map[string]*uintptr{"ovdouble_stat": &d.stat, "ovdouble_set": &d.set,
		"ovdouble_reset_stats": &d.reset} {
		if *dst, err = lib.Sym(name); err != nil {
			t.Fatal(err)
		}
	}
	d.ResetStats()
	return d
}

func cstr(s string) []byte { return append([]byte(s), 0) }

// Stat reads a counter ("infer.count", "infer.nodes", "calls.FN", "live.X").
func (d *Double) Stat(name string) int64 {
	b := cstr(name)
	r, _, _ := purego.SyscallN(d.stat, uintptr(unsafe.Pointer(&b[0])))
	return int64(r)
}

// ResetStats zeroes the counters.
func (d *Double) ResetStats() { purego.SyscallN(d.reset) }

// Set sets a knob (ovdouble_set: "devices", "version", ...) and restores
// value def when the test ends.
func (d *Double) Set(t testing.TB, name, value, def string) {
	t.Helper()
	set := func(v string) int32 {
		k, val := cstr(name), cstr(v)
		r, _, _ := purego.SyscallN(d.set, uintptr(unsafe.Pointer(&k[0])), uintptr(unsafe.Pointer(&val[0])))
		return int32(uint32(r))
	}
	if r := set(value); r != 0 {
		t.Fatalf("ovdouble_set(%s, %s) = %d", name, value, r)
	}
	t.Cleanup(func() { set(def) })
}
