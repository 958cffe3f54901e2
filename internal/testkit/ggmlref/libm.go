package ggmlref

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
)

// Libm holds the C library's float functions that ggml's CPU builds call
// (expf for the leftover elements of its vector loops and for flash
// attention, tanhf for the GELU table, sinf/cosf/sincosf for ROPE): the
// process's libm.so.6, whose resolver picks the same variant (FMA or
// SSE2) for the reference libraries and for the tests.
type Libm struct {
	Expf, Tanhf, Sinf, Cosf func(float32) float32
	sincosf                 func(x float32, s, c *float32)
	lib                     *dynlib.Library
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
		fn   *func(float32) float32
	}{{"expf", &m.Expf}, {"tanhf", &m.Tanhf}, {"sinf", &m.Sinf}, {"cosf", &m.Cosf}} {
		p, err := lib.Sym(f.name)
		if err != nil {
			_ = lib.Close()
			return nil, fmt.Errorf("%w: %w", ErrNotAvailable, err)
		}
		purego.RegisterFunc(f.fn, p)
	}
	p, err := lib.Sym("sincosf")
	if err != nil {
		_ = lib.Close()
		return nil, fmt.Errorf("%w: %w", ErrNotAvailable, err)
	}
	purego.RegisterFunc(&m.sincosf, p)
	return m, nil
}

// Sincosf is the C library's sincosf(x, &s, &c), which GCC calls for
// ROPE's cosf and sinf of the same angle.
func (m *Libm) Sincosf(x float32) (s, c float32) {
	m.sincosf(x, &s, &c)
	return s, c
}
