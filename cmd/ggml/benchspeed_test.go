package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// tsvRows returns the data rows of a -tsv table, checking the header.
func tsvRows(t *testing.T, out string) [][]string {
	t.Helper()
	var rows [][]string
	header := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		require.Len(t, cols, 9, line)
		if !header {
			require.Equal(t, "figure", cols[0])
			header = true
			continue
		}
		rows = append(rows, cols)
	}
	require.True(t, header, out)
	return rows
}

// Each speed benchmark prints one row per figure with both sides and the
// ratios (numbers, not "-", when the reference loads).
func TestBenchSpeedRows(t *testing.T) {
	reftest.Lib(t)
	t.Setenv("GGML_DEVICE", "CPU") // the default -b; see TestRunGenerated
	quick := []string{"-sample", "1ms", "-tsv"}
	for _, c := range []struct {
		args []string
		rows []string
	}{
		{[]string{"dispatch", "-threads", "1,2", "-elems", "16"}, []string{"dispatch 1000 x add 16", "dispatch 1000 x add 16"}},
		{[]string{"matmul", "-types", "q4_0", "-n", "1", "-threads", "1"}, []string{"matmul q4_0 n=1"}},
		{[]string{"matmul", "-types", "q4_1", "-shape", "576x192,4096x4096", "-n", "1", "-threads", "1"}, []string{"matmul q4_1 576x192 n=1", "matmul q4_1 n=1"}},
		{[]string{"quant", "-types", "q8_0", "-act", "q8_K"}, []string{"quantize q8_0", "from_float q8_K"}},
		{[]string{"ops", "-ops", "softmax,geglu", "-threads", "1"}, []string{"op softmax x64", "op geglu x64"}},
		{[]string{"demo", "-embd", "64", "-tokens", "2", "-ctx", "8", "-threads", "1"}, []string{"demo embd=64 tokens=2 ctx=8"}},
	} {
		code, out, errOut := runCmd(append(append([]string{"bench"}, c.args...), quick...)...)
		require.Equal(t, 0, code, "%v\n%s\n%s", c.args, out, errOut)
		require.Contains(t, out, "# ggml 0.25.1")
		rows := tsvRows(t, out)
		require.Len(t, rows, len(c.rows), out)
		for i, r := range rows {
			require.Equal(t, c.rows[i], r[0])
			for _, v := range r[3:] {
				require.NotEqual(t, "-", v, "%v", r)
			}
		}
	}
}

func TestBenchSpeedBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"dispatch", "-threads", "0"},
		{"dispatch", "-ref", "what"},
		{"dispatch", "-pool", "what"},
		{"dispatch", "-b", "NOSUCH0"},
		{"matmul", "-types", "q9_9"},
		{"matmul", "-n", "x"},
		{"matmul", "-shape", "576"},
		{"matmul", "-shape", "0x192"},
		{"demo", "-embd", "64,128", "-tokens", "2"},
		{"demo", "-embd", "100", "-tokens", "2"},
		{"quant", "extra"},
		{"ops", "-ops", "what"},
	} {
		code, _, errOut := runCmd(append([]string{"bench"}, args...)...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
	}
}
