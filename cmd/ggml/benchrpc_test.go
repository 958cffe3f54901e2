package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/rpcref"
)

// ggml bench rpc splits a small generated model over two of our servers
// and two of ggml's, through our client and through ggml's (libllama), and
// times a round trip through each pair.
func TestBenchRPC(t *testing.T) {
	rpcref.Need(t)
	rpcref.Llama(t) // the ggml-client rows need libllama
	code, out, errOut := runCmd("bench", "rpc", "-embd", "64", "-layers", "2", "-vocab", "64", "-tokens", "2", "-runs", "1", "-threads", "1")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^ +local CPU +[\d.]+ +1\.00x +0 +- +-$`, out)
	require.Regexp(t, `(?m)^ +2 of our servers, 1 thread each \(split\) +[\d.]+ +[\d.]+x +[1-9]\d* +[\d.]+ MiB +[\d.]+ MiB$`, out)
	require.Regexp(t, `(?m)^ +2 of ggml's servers, 1 thread each \(split\) +[\d.]+ +[\d.]+x +[1-9]\d* +[\d.]+ MiB +[\d.]+ MiB$`, out)
	require.Regexp(t, `(?m)^ +libllama, local CPU +[\d.]+ +1\.00x +0 +-$`, out)
	// ggml's client on ggml's servers computes what it computes locally,
	// bit for bit; on ours within float rounding.
	require.Regexp(t, `(?m)^ +libllama, 2 of ggml's servers \(split\) +[\d.]+ +[\d.]+x +[1-9]\d* +0$`, out)
	require.Regexp(t, `(?m)^ +libllama, 2 of our servers \(split\) +[\d.]+ +[\d.]+x +[1-9]\d* +[\d.e+-]+$`, out)
	require.Regexp(t, `(?m)^ratio ours/ggml: [\d.]+ \(results within [\d.e+-]+ of each other\)$`, out)
	code, _, errOut = runCmd("bench", "rpc", "-servers", "127.0.0.1:1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "two or more")
}
