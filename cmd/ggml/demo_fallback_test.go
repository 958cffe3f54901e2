package main

import (
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/ops"
)

// partialGPU is a GPU with memory of its own that computes with the CPU's
// kernels but supports neither FLASH_ATTN_EXT nor SWIGLU, so the scheduler
// must hand those to the CPU fallback.
var partialGPU = devtest.New(devtest.Config{Name: "PARTIAL0", Type: backend.DeviceGPU, Threads: 2,
	Supports: func(t *graph.Tensor) bool { return t.Op != ops.FlashAttnExt && t.Op != ops.GLU }})

var registerPartial sync.Once

func TestDemoFallsBackToCPU(t *testing.T) {
	registerPartial.Do(func() { require.NoError(t, backend.Register(partialGPU.Registry())) })
	code, out, errOut := runCmd("demo", "-device", "PARTIAL0", "-tokens", "4", "-ctx", "16", "-embd", "128")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, regexp.MustCompile(`(?m)^FLASH_ATTN_EXT +fattn +CPU$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^SWIGLU +ffn_swiglu +CPU$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^MUL_MAT +Qcur +PARTIAL0$`), out)
	m := regexp.MustCompile(`\nsplits: (\d+)\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	require.NotEqual(t, "1", m[1], out)
	require.True(t, strings.Contains(out, "agreement with a CPU-only run: max abs diff 0, nmse 0\n"), out)
	// Per device: nodes, splits, copies, compute and copy times, and the
	// host time around them.
	require.Regexp(t, `(?m)^ +PARTIAL0 +[1-9]\d* +[1-9]\d* +\d+ +[\d.]+ ms +[\d.]+ ms$`, out)
	require.Regexp(t, `(?m)^ +CPU +[1-9]\d* +[1-9]\d* +[1-9]\d* +[\d.]+ ms +[\d.]+ ms$`, out)
	require.Regexp(t, `(?m)^host time around the devices: [\d.]+ ms of [\d.]+ ms$`, out)
}

// -device carries the device's parameters, and a device refuses a
// parameter it does not have.
func TestDemoDeviceParams(t *testing.T) {
	registerPartial.Do(func() { require.NoError(t, backend.Register(partialGPU.Registry())) })
	code, out, errOut := runCmd("demo", "-device", "PARTIAL0:threads=1", "-tokens", "2", "-ctx", "8", "-embd", "64")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "device: PARTIAL0")
	code, _, errOut = runCmd("demo", "-device", "PARTIAL0:bogus=1", "-tokens", "2", "-ctx", "8", "-embd", "64")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `PARTIAL0 has no parameter "bogus"`)
	code, _, errOut = runCmd("demo", "-device", "PARTIAL0:bogus", "-tokens", "2")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "not key=value")
}
