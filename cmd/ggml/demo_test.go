package main

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

func TestDemoOnCPU(t *testing.T) {
	for _, rope := range []string{"neox", "normal"} {
		code, out, errOut := runCmd("demo", "-device", "CPU", "-threads", "3", "-tokens", "5", "-ctx", "24", "-embd", "256", "-rope", rope)
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "agreement with a CPU-only run: max abs diff 0, nmse 0\n")
		require.Contains(t, out, "\nsplits: 1\n")
		require.Regexp(t, regexp.MustCompile(`(?m)^weights and KV cache: \d+\.\d MiB in \d+ buffers \(CPU, \d+ repacked\)$`), out)
		require.Regexp(t, regexp.MustCompile(`(?m)^FLASH_ATTN_EXT +fattn +CPU$`), out)
		require.Regexp(t, regexp.MustCompile(`(?m)^CPY +cache_k_cpy +CPU$`), out)
		require.Regexp(t, regexp.MustCompile(`(?m)^SWIGLU +ffn_swiglu +CPU$`), out)
		require.Regexp(t, regexp.MustCompile(`checksum: sum -?\d+\.\d+, fnv64a [0-9a-f]{16}`), out)
		require.NotContains(t, out, "NaN")
	}
}

// With -repack the weights go to the CPU's CPU_REPACK buffers, and the
// result is the plain run's (the products of five tokens take the same
// interleaved kernels either way), on the fast and the generic path.
func TestDemoRepack(t *testing.T) {
	for _, generic := range []string{"", "1"} {
		t.Setenv("GGML_CPU_GENERIC", generic)
		code, out, errOut := runCmd("demo", "-device", "CPU", "-threads", "2", "-tokens", "5", "-ctx", "16", "-embd", "256", "-repack")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "weights in an extra buffer type: blk.0.wq, blk.0.wk, blk.0.wv, blk.0.wo, blk.0.ffn_gate, blk.0.ffn_up, blk.0.ffn_down\n")
		require.Contains(t, out, "agreement with a CPU-only run: max abs diff 0, nmse 0\n")
	}
}

// The output depends only on the seed, not on the thread count.
func TestDemoDeterministic(t *testing.T) {
	sums := map[string]bool{}
	for _, threads := range []string{"1", "4"} {
		code, out, errOut := runCmd("demo", "-device", "cpu", "-threads", threads, "-tokens", "3", "-ctx", "8", "-embd", "128")
		require.Equal(t, 0, code, errOut)
		sums[regexp.MustCompile(`checksum: .*`).FindString(out)] = true
	}
	require.Len(t, sums, 1)
}

func TestDemoBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-device", "NOSUCH0"}, "NOSUCH0"},
		{[]string{"-embd", "100"}, "embd must be a positive multiple of 64"},
		{[]string{"-tokens", "9", "-ctx", "8"}, "0 < tokens <= ctx"},
		{[]string{"-tokens", "0"}, "0 < tokens <= ctx"},
		{[]string{"-threads", "-1"}, "-threads"},
		{[]string{"-rope", "yarn"}, "-rope must be neox or normal"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-nosuchflag"}, "not defined"},
	} {
		code, _, errOut := runCmd(append([]string{"demo"}, c.args...)...)
		require.Equal(t, 2, code, "%v", c.args)
		require.Contains(t, errOut, c.msg, "%v", c.args)
	}
}

// The block agrees with the real ggml within test-backend-ops' tolerance
// for MUL_MAT and FLASH_ATTN_EXT (NMSE 5e-4).
func TestDemoAgainstGGML(t *testing.T) {
	reftest.Lib(t)
	for _, rope := range []string{"neox", "normal"} {
		code, out, errOut := runCmd("demo", "-device", "CPU", "-tokens", "7", "-ctx", "40", "-embd", "256", "-rope", rope)
		require.Equal(t, 0, code, errOut)
		m := regexp.MustCompile(`agreement with the real ggml 0\.25\.1 \(CPU backend\): max abs diff (\S+), nmse (\S+)\n`).FindStringSubmatch(out)
		require.NotNil(t, m, out)
		nmse, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		require.Less(t, nmse, 5e-4, rope)
	}
}
