package dynlib

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "libnothere.so"))
	require.ErrorIs(t, err, ErrOpen)
	require.Contains(t, err.Error(), "libnothere.so")
}

func TestSymbols(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("libc name is linux-specific")
	}
	l, err := Open("libc.so.6")
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	p, err := l.Sym("strlen")
	require.NoError(t, err)
	require.NotZero(t, p)
	_, err = l.Sym("no_such_symbol_here")
	require.True(t, errors.Is(err, ErrSymbol))
	require.Contains(t, err.Error(), "no_such_symbol_here")
}
