package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant"
)

func runCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsage(t *testing.T) {
	code, _, errOut := runCmd()
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "quant-stats")
	code, _, errOut = runCmd("no-such-command")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "unknown command")
	code, _, errOut = runCmd("quant-stats", "-type", "q9_9")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "unknown type name")
	code, _, _ = runCmd("quant-stats", "-cols", "100")
	require.Equal(t, 2, code)
}

// TestHelp: every command's -h starts with its usage line and a
// description, and the bench list names every benchmark.
func TestHelp(t *testing.T) {
	for name := range commands {
		if name == "bench" {
			continue
		}
		// The flag sets print their help on os.Stderr.
		r, w, err := os.Pipe()
		require.NoError(t, err)
		stderr := os.Stderr
		os.Stderr = w
		code, out, errOut := runCmd(name, "-h")
		os.Stderr = stderr
		require.NoError(t, w.Close())
		printed, err := io.ReadAll(r)
		require.NoError(t, err)
		require.Equal(t, 0, code, name)
		help := out + errOut + string(printed)
		require.True(t, strings.HasPrefix(help, "usage: ggml "+name), "%s -h: %s", name, help)
		require.NotContains(t, help, "Usage of", name)
	}
	code, out, _ := runCmd("bench", "-h")
	require.Equal(t, 0, code)
	for name := range benchmarks {
		require.Contains(t, out, "\n  "+name+" ", "bench -h lists %s", name)
		require.Contains(t, commands["bench"].summary, name)
	}
}

func TestQuantStats(t *testing.T) {
	code, out, errOut := runCmd("quant-stats", "-ref=false", "-type", "q4_K", "-rows", "2", "-cols", "512", "-time", "1ms")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.Fields(lines[len(lines)-1])
	require.Equal(t, "q4_K", last[0])
	require.Equal(t, "4.5", last[1], "bits per weight")
}

// TestQuantStatsAgainstReference runs every type with a quantizer; the
// lattice types are left out because ggml takes many seconds to build their
// search tables, and quant's own tests cover them.
func TestQuantStatsAgainstReference(t *testing.T) {
	reftest.Lib(t)
	var names []string
	for _, typ := range quant.Types() {
		if typ.CanQuantize() {
			names = append(names, typ.String())
		}
	}
	code, out, errOut := runCmd("quant-stats", "-ref", "-type", strings.Join(names, ","), "-rows", "2", "-cols", "256", "-time", "1ms", "-max-iters", "3")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "reference: ggml 0.25.1")
	require.NotContains(t, out, "DIFFER")
	require.Equal(t, len(names)-1, strings.Count(out, " match\n"), "every type with a quantizer but f32 matches ggml:\n%s", out)
}
