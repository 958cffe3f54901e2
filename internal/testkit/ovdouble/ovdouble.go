// Package ovdouble builds the libopenvino_c test double of
// devices/openvino/testdata with the system C compiler and reads its
// counters and sets its knobs through purego, for tests outside package
// openvino (which has its own helpers). It is test support: nothing
// outside tests imports it.
package ovdouble

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
	"github.com/ggml-go/ggml/internal/testkit/cdouble"
)

var build = cdouble.Build{Lib: "libopenvino_c", Script: "devices/openvino/testdata/build.sh"}

// Path builds the double once per process into a temporary folder and
// returns the library's path (for openvino.Options.Lib or
// GGML_OPENVINO_LIB). Without a C compiler the test is skipped, or fails
// when GGML_REF_REQUIRED=1 (CI).
func Path(t testing.TB) string {
	t.Helper()
	_, out := build.Dir(t)
	// build.sh prints the library's path last.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// Cleanup removes the build folder; TestMain calls it.
func Cleanup() { build.Cleanup() }

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
