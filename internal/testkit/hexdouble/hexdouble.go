// Package hexdouble builds the libcdsprpc test double of
// devices/hexagon/testdata with the system C compiler and drives its test
// hooks (knobs, counters, call log) through purego, for the Hexagon
// tests. It is test support: nothing outside tests imports it.
package hexdouble

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
	"github.com/ggml-go/ggml/internal/testkit/cdouble"
)

var build = cdouble.Build{Lib: "libcdsprpc", Script: "devices/hexagon/testdata/build.sh"}

// Dir builds the double once per process into a temporary folder and
// returns it (libcdsprpc.so, nosysreq/, noalloc2/). Without a C compiler
// the test is skipped, or fails when GGML_REF_REQUIRED=1 (CI).
func Dir(t testing.TB) string {
	t.Helper()
	dir, _ := build.Dir(t)
	return dir
}

// Cleanup removes the build folder; TestMain calls it.
func Cleanup() { build.Cleanup() }

// Double is one loaded variant's hooks, or a real libcdsprpc standing in
// for it (RealEnv).
type Double struct {
	Path                                      string
	lib                                       *dynlib.Library
	configure, reset, stat, log, logClear, vi uintptr
	// t is the test a real library serves; what needs the double's hooks
	// skips it.
	t testing.TB
}

// RealEnv names the variable that points the tests at a real libcdsprpc
// (a file or its folder) instead of the double: the device's own
// GGML_HEXAGON_LIB. A test that needs the double's knobs, faults,
// counters or call log then skips, saying which.
const RealEnv = "GGML_HEXAGON_LIB"

// Real reports whether d is a real library, not the double.
func (d *Double) Real() bool { return d.lib == nil }

func (d *Double) needs(what string) {
	d.t.Helper()
	d.t.Skipf("needs the test double's %s; %s=%s is a real libcdsprpc", what, RealEnv, d.Path)
}

// Variants of the double.
const (
	Full     = ""         // rpcmem_alloc2 and remote_system_request
	NoSysReq = "nosysreq" // as the open-source library
	NoAlloc2 = "noalloc2" // no rpcmem_alloc2 either, as older phones
)

// Open loads variant v (the same instance the code under test loads from
// Path) and resets it.
// With RealEnv set, it is that library instead: variants other than Full
// skip.
func Open(t testing.TB, v string) *Double {
	t.Helper()
	if real := os.Getenv(RealEnv); real != "" {
		d := &Double{Path: real, t: t}
		if v != Full {
			d.needs(v + " variant")
		}
		return d
	}
	p := filepath.Join(Dir(t), v, "libcdsprpc.so")
	lib, err := dynlib.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	d := &Double{Path: p, lib: lib, t: t}
	for name, dst := range map[string]*uintptr{"htpdouble_configure": &d.configure, "htpdouble_reset": &d.reset,
		"htpdouble_stat": &d.stat, "htpdouble_log": &d.log, "htpdouble_log_clear": &d.logClear,
		"htpdouble_violations": &d.vi} {
		if *dst, err = lib.Sym(name); err != nil {
			t.Fatal(err)
		}
	}
	d.Reset()
	t.Cleanup(func() { d.Reset() })
	return d
}

func cstr(s string) []byte { return append([]byte(s), 0) }

// Configure applies knobs ("arch=79;fail.open=1:0x72").
func (d *Double) Configure(t testing.TB, spec string) {
	t.Helper()
	if d.Real() {
		d.t = t
		d.needs("knobs (" + spec + ")")
	}
	b := cstr(spec)
	if r, _, _ := purego.SyscallN(d.configure, uintptr(unsafe.Pointer(&b[0]))); int32(r) != 0 {
		t.Fatalf("htpdouble_configure(%q) = 0x%x\n%s", spec, r, d.Log())
	}
}

// Reset restores the defaults and clears faults, counters and the log.
func (d *Double) Reset() {
	if !d.Real() {
		purego.SyscallN(d.reset)
	}
}

// Stat reads a counter.
func (d *Double) Stat(name string) uint64 {
	if d.Real() {
		d.t.Helper()
		d.needs("counter " + name)
	}
	b := cstr(name)
	r, _, _ := purego.SyscallN(d.stat, uintptr(unsafe.Pointer(&b[0])))
	return uint64(r)
}

func (d *Double) read(fn uintptr) string {
	n, _, _ := purego.SyscallN(fn, 0, 0)
	buf := make([]byte, n+1)
	purego.SyscallN(fn, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return string(bytes.TrimRight(buf, "\x00"))
}

// Log is the call log so far ("" from a real library: the tests use it
// in failure messages; CallLog is for assertions).
func (d *Double) Log() string {
	if d.Real() {
		return ""
	}
	return d.read(d.log)
}

// CallLog is the call log for a test that asserts on it; a real library
// has none, so the test skips.
func (d *Double) CallLog(t testing.TB) string {
	t.Helper()
	if d.Real() {
		d.t = t
		d.needs("call log")
	}
	return d.read(d.log)
}

// ClearLog drops the log.
func (d *Double) ClearLog() {
	if !d.Real() {
		purego.SyscallN(d.logClear)
	}
}

// Violations are the protocol violations the double saw; a real library
// checks none: "" (logged), so a test's own checks still count.
func (d *Double) Violations() string {
	if d.Real() {
		d.t.Log("no protocol-violation check: a real libcdsprpc")
		return ""
	}
	return d.read(d.vi)
}

// Leaks lists live counters that are not zero; a real library has no
// counters: nil (logged), so a test's own checks still count.
func (d *Double) Leaks() []string {
	if d.Real() {
		d.t.Log("no leak check from live counters: a real libcdsprpc")
		return nil
	}
	var l []string
	for _, c := range []string{"rpcmem_live", "maps_live", "iface_maps_live", "handles_live", "handles_started", "queues_live", "dsp_threads_live"} {
		if n := d.Stat(c); n != 0 {
			l = append(l, fmt.Sprintf("%s=%d", c, n))
		}
	}
	return l
}
