package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/ggmlref/reftest"
)

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestTestOpsCPU(t *testing.T) {
	code, out, errOut := runCmd("test-ops", "-o", "ADD", "-ref", "cpu", "-v")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "4 passed, 0 failed, 0 skipped", lastLine(out))
	require.Contains(t, out, "passed  ADD(type=f32,ne=[10,5,4,3],nr=[2,1,1,1])\n")
	require.Regexp(t, `(?m)^ +ADD +4 +0 +0$`, out)
	require.NotContains(t, out, "SUB")
}

func TestTestOpsGGML(t *testing.T) {
	reftest.Lib(t)
	code, out, errOut := runCmd("test-ops", "-o", "add,mul", "-ref", "ggml")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "against ggml")
	require.Equal(t, "8 passed, 0 failed, 0 skipped", lastLine(out))
}

func TestTestOpsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-b", "GPU"}, {"-ref", "other"}, {"-cases", "some"}, {"-o", "NO_SUCH_OP"}, {"-threads", "0"}, {"extra"}, {"-nosuchflag"},
	} {
		code, _, errOut := runCmd(append([]string{"test-ops"}, args...)...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
		require.Contains(t, errOut, "ggml test-ops: usage", "%v", args)
	}
}
