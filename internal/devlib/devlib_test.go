package devlib

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/internal/dynlib"
)

func TestReason(t *testing.T) {
	dir := t.TempDir()
	_, tried, err := dynlib.Find([]string{"libggmlgo_none.so"}, []string{dir})
	r := Reason("libggmlgo_none.so", tried, err)
	require.Equal(t, backend.LibraryNotFound, r.Kind)
	require.Equal(t, tried, r.Tried)
	require.ErrorIs(t, r, dynlib.ErrNotFound)
	require.ErrorIs(t, r, backend.ErrLibraryNotFound)

	_, err = dynlib.Open(filepath.Join(dir, "libggmlgo_none.so"))
	require.Equal(t, backend.LibraryLoadFailed, Reason("x", nil, err).Kind)
	require.Equal(t, backend.SymbolMissing, Reason("x", nil, dynlib.ErrSymbol).Kind)
	require.Equal(t, backend.InitFailed, Reason("x", nil, errors.New("other")).Kind)
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	_, _, err := Open("libggmlgo_none", []string{"libggmlgo_none.so"}, []string{dir}, nil)
	var r backend.Reason
	require.ErrorAs(t, err, &r)
	require.Equal(t, backend.LibraryNotFound, r.Kind)
	require.Equal(t, []string{filepath.Join(dir, "libggmlgo_none.so"), "libggmlgo_none.so (system search path)"}, r.Tried)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "libbad.so"), []byte("junk"), 0o644))
	_, _, err = Open("libbad", []string{"libbad.so"}, []string{dir}, nil)
	require.ErrorIs(t, err, backend.ErrLibraryLoadFailed)

	if runtime.GOOS != "linux" {
		return
	}
	_, _, err = Open("libc", []string{"libc.so.6"}, nil, []string{"strlen", "ggmlgo_no_such_symbol"})
	require.ErrorAs(t, err, &r)
	require.Equal(t, backend.SymbolMissing, r.Kind)
	require.Equal(t, "ggmlgo_no_such_symbol", r.Symbol)

	lib, syms, err := Open("libc", []string{"libc.so.6"}, nil, []string{"strlen"})
	require.NoError(t, err)
	require.NotZero(t, syms["strlen"])
	require.NoError(t, lib.Close())
}
