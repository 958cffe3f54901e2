package ggmlref

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
)

// Libm holds the C library's float functions that ggml's CPU builds call
// (expf for the leftover elements of its vector loops and for flash
// attention, sincosf for ROPE): the process's libm.so.6, whose resolver
// picks the same variant (FMA or SSE2) for the reference libraries and
// for the tests.
type Libm struct {
	// The float argument is declared float64 so that floatArg can
	// NaN-box it where the ABI asks (purego passes a float32 with the
	// register's upper half zero, which a riscv64 callee reads as NaN);
	// the callee reads the register's low 32 bits, where floatArg puts x.
	expf    func(x float64) float32
	sincosf func(x float64, s, c *float32)
	lib     *dynlib.Library
}

var (
	libmOnce sync.Once
	libm     *Libm
	libmErr  error
)

// LibmDefault opens libm.so.6 once per process (linux only; elsewhere it
// reports ErrNotAvailable).
func LibmDefault() (*Libm, error) {
	libmOnce.Do(func() { libm, libmErr = openLibm() })
	return libm, libmErr
}

func openLibm() (*Libm, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("%w: libm.so.6 is glibc's, this is %s", ErrNotAvailable, runtime.GOOS)
	}
	lib, err := dynlib.Open("libm.so.6")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotAvailable, err)
	}
	m := &Libm{lib: lib}
	for _, f := range []struct {
		name string
		fn   any
	}{{"expf", &m.expf}, {"sincosf", &m.sincosf}} {
		p, err := lib.Sym(f.name)
		if err != nil {
			_ = lib.Close()
			return nil, fmt.Errorf("%w: %w", ErrNotAvailable, err)
		}
		purego.RegisterFunc(f.fn, p)
	}
	return m, nil
}

// floatArg is x as the 64-bit floating-point register a C float parameter
// arrives in: its bits in the low half, and on riscv64 the upper half all
// ones (the NaN-boxing the RISC-V D extension requires of single-precision
// values; without it the callee sees the canonical NaN).
func floatArg(x float32) float64 {
	b := uint64(math.Float32bits(x))
	if runtime.GOARCH == "riscv64" {
		b |= 0xffffffff << 32
	}
	return math.Float64frombits(b)
}

// Expf is the C library's expf(x).
func (m *Libm) Expf(x float32) float32 { return m.expf(floatArg(x)) }

// Sincosf is the C library's sincosf(x, &s, &c), which GCC calls for
// ROPE's cosf and sinf of the same angle.
func (m *Libm) Sincosf(x float32) (s, c float32) {
	m.sincosf(floatArg(x), &s, &c)
	return s, c
}
