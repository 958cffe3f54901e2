// Package devlib loads a device's native library and says, as a
// backend.Reason, why it could not: not found (with every path searched),
// refused by the system loader, or lacking a symbol. It joins
// internal/dynlib and package backend so that backend itself stays free of
// native loading (and of purego): a program using only the CPU device links
// no native-library code.
package devlib

import (
	"errors"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/internal/dynlib"
)

// Reason classifies an error of dynlib.Find, Load, Open or Library.Sym:
// library not found, failed to load, or symbol missing; any other error is
// an init failure. library names what was looked for; tried is the list
// Find or Load returned.
func Reason(library string, tried []string, err error) backend.Reason {
	r := backend.Reason{Kind: backend.InitFailed, Library: library, Tried: tried, Err: err}
	switch {
	case errors.Is(err, dynlib.ErrNotFound):
		r.Kind = backend.LibraryNotFound
	case errors.Is(err, dynlib.ErrOpen):
		r.Kind = backend.LibraryLoadFailed
	case errors.Is(err, dynlib.ErrSymbol):
		r.Kind = backend.SymbolMissing
	}
	return r
}

// Open loads the library under one of names from dirs, else through the
// system search path (dynlib.Load), and resolves symbols. On failure the
// error is a backend.Reason; the library is closed again when a symbol is
// missing.
func Open(library string, names, dirs, symbols []string) (*dynlib.Library, map[string]uintptr, error) {
	lib, tried, err := dynlib.Load(names, dirs)
	if err != nil {
		return nil, nil, Reason(library, tried, err)
	}
	syms := make(map[string]uintptr, len(symbols))
	for _, s := range symbols {
		p, err := lib.Sym(s)
		if err != nil {
			_ = lib.Close()
			r := Reason(lib.Path(), nil, err)
			r.Symbol = s
			return nil, nil, r
		}
		syms[s] = p
	}
	return lib, syms, nil
}
