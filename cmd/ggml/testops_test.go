package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/ggmlref/reftest"
	"github.com/ggml-go/ggml/internal/optest"
)

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestTestOpsCPU(t *testing.T) {
	cases := optest.Cases(false, []string{"ADD"})
	require.NotEmpty(t, cases)
	code, out, errOut := runCmd("test-ops", "-o", "ADD", "-ref", "cpu", "-v")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, fmt.Sprintf("%d passed, 0 failed, 0 skipped", len(cases)), lastLine(out))
	require.Contains(t, out, "passed  "+cases[0].Name+"\n")
	require.Regexp(t, fmt.Sprintf(`(?m)^ +ADD +%d +0 +0$`, len(cases)), out)
	require.NotContains(t, out, "SUB")
}

func TestTestOpsGGML(t *testing.T) {
	reftest.Lib(t)
	n := len(optest.Cases(false, []string{"ADD", "MUL"}))
	code, out, errOut := runCmd("test-ops", "-o", "add,mul", "-ref", "ggml")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "against ggml")
	var passed, skipped int
	_, err := fmt.Sscanf(lastLine(out), "%d passed, 0 failed, %d skipped", &passed, &skipped)
	require.NoError(t, err, lastLine(out))
	require.Equal(t, n, passed+skipped)
	require.Greater(t, passed, n/2)
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
