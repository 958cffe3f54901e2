package ggmlref

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir)
	require.ErrorIs(t, err, ErrNotAvailable)
	require.Contains(t, err.Error(), dir)
}

func TestLibDirFromEnv(t *testing.T) {
	t.Setenv(EnvLibDir, "/some/where")
	d, err := LibDir()
	require.NoError(t, err)
	require.Equal(t, "/some/where", d)

	t.Setenv(EnvLibDir, "")
	t.Setenv("GGML_REF_CACHE", t.TempDir())
	_, err = LibDir()
	require.ErrorIs(t, err, ErrNotAvailable)
	require.Contains(t, err.Error(), "scripts/fetch-ref")
}

// TestLoaded checks a live load when the library is installed: version,
// commit, a variant this machine runs, and refusal of a bad variant name.
func TestLoaded(t *testing.T) {
	l, err := Default()
	if errors.Is(err, ErrNotAvailable) && os.Getenv(EnvRequired) != "1" {
		t.Skipf("reference not installed: %v", err)
	}
	require.NoError(t, err)
	require.Equal(t, "0.25.1", l.Version())
	require.Equal(t, "0ad4a86", l.Commit())
	require.NotEmpty(t, l.Variant())
	_, err = OpenVariant(l.Dir(), "no-such-variant")
	require.ErrorIs(t, err, ErrNotAvailable)

	tr, err := l.Traits(2)
	require.NoError(t, err)
	require.Equal(t, "q4_0", tr.Name)
	require.EqualValues(t, 32, tr.BlockSize)
	require.EqualValues(t, 18, tr.TypeSize)
	require.True(t, tr.HasToFloat() && tr.HasVecDot())
	_, err = l.Traits(43)
	require.Error(t, err)
	_, err = l.QuantizeChunk(2, make([]float32, 16), 1, 16, nil)
	require.Error(t, err, "16 is not a multiple of 32")
	_, err = l.ToFloat(0, make([]byte, 16), 4)
	require.Error(t, err, "f32 has no to_float")
}
