package reftest

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestArchive: the repository's archive holds a complete, checksummed data
// set, which OracleDir unpacks; a changed or unlisted file is caught.
func TestArchive(t *testing.T) {
	p, err := ArchivePath()
	require.NoError(t, err)
	files := map[string][]byte{}
	require.NoError(t, walkArchive(p, func(name string, r io.Reader) error {
		b, err := io.ReadAll(r)
		files[name] = b
		return err
	}))
	require.NoError(t, checkSums(files))
	for _, name := range []string{"manifest.tsv", "cpu_support.csv", "inputs/sin.f32", "conv/f16_to_f32_all.f32", "matmul/x.f32", "quant/sin/q4_0.bin"} {
		require.Contains(t, files, name)
	}

	dir := OracleDir(t)
	for name, b := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		require.NoError(t, err)
		require.Equal(t, b, got, name)
	}

	files["quant/sin/q4_0.bin"][0] ^= 1
	require.ErrorContains(t, checkSums(files), "quant/sin/q4_0.bin")
	files["quant/sin/q4_0.bin"][0] ^= 1
	files["extra"] = nil
	require.ErrorContains(t, checkSums(files), "lists")
}
