package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

func TestBenchAlloc(t *testing.T) {
	reftest.Lib(t)
	code, out, errOut := runCmd("bench", "alloc", "-small")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "reference: ggml 0.25.1")
	row := regexp.MustCompile(`(?m)^ *(\S.*\S) +(\d+) +(\d+) +(\d+) +(\d+\.\d+)$`)
	rows := row.FindAllStringSubmatch(out, -1)
	require.Len(t, rows, len(allocGraphs(true)), out)
	for _, r := range rows {
		ours, _ := strconv.ParseUint(r[3], 10, 64)
		theirs, _ := strconv.ParseUint(r[4], 10, 64)
		require.NotZero(t, ours, r[0])
		require.LessOrEqual(t, ours, theirs, r[0])
	}
	require.Contains(t, out, "4-layer stack")
	require.Contains(t, out, "attention (flash)")
	require.Contains(t, out, "attention (soft_max)")
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{{"bench"}, {"bench", "nosuch"}, {"bench", "alloc", "extra"}, {"bench", "alloc", "-x"}} {
		code, _, errOut := runCmd(args...)
		require.Equal(t, 2, code, strings.Join(args, " "))
		require.NotEmpty(t, errOut)
	}
}
