package mmap

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	want := make([]byte, 3*os.Getpagesize()+17)
	for i := range want {
		want[i] = byte(i * 7)
	}
	require.NoError(t, os.WriteFile(p, want, 0o644))
	m, err := Open(p)
	require.NoError(t, err)
	require.Equal(t, want, m.Bytes())
	// Copy-on-write: the process sees its write, the file keeps its bytes.
	m.Bytes()[5] ^= 0xff
	require.Equal(t, want[5]^0xff, m.Bytes()[5])
	onDisk, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, want, onDisk)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "a second Close repeats the first's result")
	require.Nil(t, m.Bytes())

	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	m, err = Open(empty)
	require.NoError(t, err)
	require.Empty(t, m.Bytes())
	require.NoError(t, m.Close())

	_, err = Open(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = Open(dir)
	require.ErrorContains(t, err, "not a regular file")
}
