package main

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// The demo's header says what the thread count is, 0 included.
func TestDemoHeaderThreads(t *testing.T) {
	code, out, errOut := runCmd("demo", "-device", "CPU", "-tokens", "2", "-ctx", "4", "-embd", "128")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, fmt.Sprintf(", threads %d (-threads 0: every CPU the Go runtime uses), seed", runtime.GOMAXPROCS(0)))
	code, out, errOut = runCmd("demo", "-device", "CPU", "-threads", "2", "-tokens", "2", "-ctx", "4", "-embd", "128")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, ", threads 2, seed")
}
