package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGenModelAndGGUFInfo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.gguf")
	code, out, errOut := runCmd("gen-model", "-o", p, "-arch", "qwen2", "-type", "q8_0", "-layers", "1", "-tied", "-seed", "5")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "qwen2, q8_0 weights, 14 tensors")

	code, out, errOut = runCmd("gguf-info", "-n", "3", p)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{
		"GGUF v3, alignment 32",
		"* Dumping 17 key/value pair(s)",
		"| GGUF.tensor_count = 14",
		`STRING     |        1 | general.architecture = "qwen2"`,
		"UINT32     |        1 | qwen2.block_count = 1",
		"FLOAT32    |        1 | qwen2.attention.layer_norm_rms_epsilon = 1e-06",
		"* Dumping 14 tensor(s)",
		"131072 |   256,   512,     1,     1 | Q8_0    |            0 |       139264 | token_embd.weight",
		"128 |   128,     1,     1,     1 | F32     |",
		"* Totals: 14 tensors,",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "| output.weight", "tied")
	// Offsets are each tensor's padded predecessor's end.
	var prevEnd int64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 6 || strings.Contains(line, "offset") {
			continue
		}
		var off, size int64
		_, err := fmt.Sscan(f[3], &off)
		require.NoError(t, err)
		_, err = fmt.Sscan(f[4], &size)
		require.NoError(t, err)
		require.Equal(t, (prevEnd+31)/32*32, off, line)
		prevEnd = off + size
	}
	require.Positive(t, prevEnd)

	code, _, errOut = runCmd("gen-model", "-o", p, "-vocab", "wordpiece")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "none, spm or bpe")
	code, _, _ = runCmd("gen-model", "-vocab", "none")
	require.Equal(t, 2, code, "-o is required")
	code, _, errOut = runCmd("gen-model", "-o", p, "-type", "q4_K", "-embd", "64", "-heads", "2", "-kv-heads", "1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "multiples of 256")
	code, _, _ = runCmd("gguf-info")
	require.Equal(t, 2, code)
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	require.NoError(t, os.WriteFile(bad, []byte("GGUF\x01\x00\x00\x00"), 0o644))
	code, _, errOut = runCmd("gguf-info", bad)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "version 1 is no longer supported")
}
