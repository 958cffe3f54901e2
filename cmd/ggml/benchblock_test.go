package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// ggml bench block runs on any registered device, with its profile, and
// beside the real ggml.
func TestBenchBlock(t *testing.T) {
	reftest.Lib(t)
	fakes(t)
	code, out, errOut := runCmd("bench", "block", "-b", "ASYNCFAKE0", "-runs", "2", "-tokens", "2", "-ctx", "8", "-embd", "64", "-threads", "1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ours on ASYNCFAKE0 (devtest fake device): median ")
	require.Regexp(t, `(?m)^ +ASYNCFAKE0 +[1-9]\d* +1 +\d+ +[\d.]+ ms +[\d.]+ ms$`, out)
	require.Regexp(t, `(?m)^ +CPU +0 +0 +0 `, out, "the fake takes every node")
	require.Regexp(t, `(?m)^ratio ours/ggml: [\d.]+ \(nmse [\d.e-]+\)$`, out)
	code, _, errOut = runCmd("bench", "block", "-b", "NOSUCH0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "NOSUCH0")
}
