package dynlib

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFind(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(a, "libdir.so"), 0o755)) // a folder is not a library
	require.NoError(t, os.WriteFile(filepath.Join(b, "libx.so.2"), nil, 0o644))

	p, tried, err := Find([]string{"libdir.so", "libx.so", "libx.so.2"}, []string{a, "", b})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(b, "libx.so.2"), p)
	require.Equal(t, []string{
		filepath.Join(a, "libdir.so"), filepath.Join(a, "libx.so"), filepath.Join(a, "libx.so.2"),
		filepath.Join(b, "libdir.so"), filepath.Join(b, "libx.so"), filepath.Join(b, "libx.so.2"),
	}, tried)

	p, tried, err = Find([]string{"libnone.so"}, []string{a, b})
	require.ErrorIs(t, err, ErrNotFound)
	require.Empty(t, p)
	require.Len(t, tried, 2)
	for _, tr := range tried {
		require.Contains(t, err.Error(), tr)
	}

	_, tried, err = Find([]string{"libnone.so"}, nil)
	require.ErrorIs(t, err, ErrNotFound)
	require.Empty(t, tried)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	_, tried, err := Load([]string{"libggmlgo_nothere.so"}, []string{dir})
	require.ErrorIs(t, err, ErrNotFound)
	require.Equal(t, []string{filepath.Join(dir, "libggmlgo_nothere.so"), "libggmlgo_nothere.so (system search path)"}, tried)

	// A file that exists but is no library is an open error, not "not found".
	bad := filepath.Join(dir, "libbad.so")
	require.NoError(t, os.WriteFile(bad, []byte("not a library"), 0o644))
	_, _, err = Load([]string{"libbad.so"}, []string{dir})
	require.ErrorIs(t, err, ErrOpen)

	if runtime.GOOS == "linux" {
		lib, tried, err := Load([]string{"libc.so.6"}, []string{dir})
		require.NoError(t, err)
		require.Len(t, tried, 2)
		require.NoError(t, lib.Close())
	}
}

func TestSearchDirs(t *testing.T) {
	sep := string(os.PathListSeparator)
	t.Setenv("GGML_GO_TEST_DIRS", "/a"+sep+sep+"/b")
	require.Equal(t, []string{"/a", "/b", "/usr/lib"}, SearchDirs("GGML_GO_TEST_DIRS", "/usr/lib"))
	t.Setenv("GGML_GO_TEST_DIRS", "")
	require.Equal(t, []string{"/usr/lib"}, SearchDirs("GGML_GO_TEST_DIRS", "/usr/lib"))
}
