package openvino

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/dynlib"
)

// TestErrorInfoStrings: ov_get_error_info gives, for every status, the
// string the real runtime gives (recorded from 2025.0.0 and 2026.4.1 in
// testdata/facts/error-info.txt): the double is checked against the
// record, and with GGML_OPENVINO_LIB the real library is.
func TestErrorInfoStrings(t *testing.T) {
	p := buildDouble(t)
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		names := versioned(runtime.GOOS, p)
		require.NotEmpty(t, names, "GGML_OPENVINO_LIB %s holds no versioned libopenvino_c", p)
		p = filepath.Join(p, names[0])
	}
	facts, err := os.ReadFile("testdata/facts/error-info.txt")
	require.NoError(t, err)
	lib, err := dynlib.Open(p)
	require.NoError(t, err)
	sym, err := lib.Sym("ov_get_error_info")
	require.NoError(t, err)
	n := 0
	for _, l := range strings.Split(string(facts), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		code, quoted, ok := strings.Cut(l, " ")
		require.True(t, ok, "fact line %q", l)
		status, err := strconv.Atoi(code)
		require.NoError(t, err)
		want, err := strconv.Unquote(quoted)
		require.NoError(t, err)
		r, _, _ := purego.SyscallN(sym, uintptr(int64(status)))
		require.Equal(t, want, goString(r), "ov_get_error_info(%d)", status)
		n++
	}
	require.Equal(t, 19, n)
}
