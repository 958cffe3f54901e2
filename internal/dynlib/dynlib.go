// Package dynlib opens native shared libraries at run time without cgo and
// reports, in its errors, why one could not be used. Every device binding
// and the reference loader go through it, so library handling behaves the
// same everywhere.
package dynlib

import (
	"errors"
	"fmt"
)

var (
	// ErrOpen reports a library that could not be loaded.
	ErrOpen = errors.New("dynlib: cannot load library")
	// ErrSymbol reports a symbol missing from a loaded library.
	ErrSymbol = errors.New("dynlib: symbol not found")
)

// Library is an open shared library.
type Library struct {
	path   string
	handle uintptr
}

// Open loads the library at path (RTLD_NOW|RTLD_LOCAL on unix, so two
// libraries can bring their own copies of a dependency).
func Open(path string) (*Library, error) {
	h, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrOpen, path, err)
	}
	return &Library{path: path, handle: h}, nil
}

// Path is the path the library was opened with.
func (l *Library) Path() string { return l.path }

// Sym returns the address of the named symbol.
func (l *Library) Sym(name string) (uintptr, error) {
	p, err := sym(l.handle, name)
	if err != nil || p == 0 {
		return 0, fmt.Errorf("%w: %s in %s: %w", ErrSymbol, name, l.path, err)
	}
	return p, nil
}

// Close unloads the library; symbols taken from it must not be used after.
func (l *Library) Close() error {
	if l == nil || l.handle == 0 {
		return nil
	}
	err := closeLib(l.handle)
	l.handle = 0
	return err
}
