package main

import (
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// partialGPU is a GPU that computes with the CPU's kernels but supports
// neither FLASH_ATTN_EXT nor SWIGLU, so the scheduler must hand those to
// the CPU fallback.
type partialGPU struct{ backend.Device }

func (partialGPU) Name() string                 { return "PARTIAL0" }
func (partialGPU) Type() backend.DeviceType     { return backend.DeviceGPU }
func (partialGPU) OffloadOp(*graph.Tensor) bool { return false }
func (d partialGPU) Props() backend.Props {
	p := d.Device.Props()
	p.Name, p.Type = d.Name(), d.Type()
	return p
}
func (d partialGPU) SupportsOp(t *graph.Tensor) bool {
	return t.Op != ops.FlashAttnExt && t.Op != ops.GLU && d.Device.SupportsOp(t)
}
func (d partialGPU) Init(opts backend.Options) (backend.Backend, error) {
	b, err := d.Device.Init(opts)
	if err != nil {
		return nil, err
	}
	return partialBackend{b, d}, nil
}

type partialBackend struct {
	backend.Backend
	dev partialGPU
}

func (b partialBackend) Name() string           { return b.dev.Name() }
func (b partialBackend) Device() backend.Device { return b.dev }

type partialRegistry struct{}

func (partialRegistry) Name() string              { return "PARTIAL" }
func (partialRegistry) Devices() []backend.Device { return []backend.Device{partialGPU{cpu.Device()}} }

var registerPartial sync.Once

func TestDemoFallsBackToCPU(t *testing.T) {
	registerPartial.Do(func() { require.NoError(t, backend.Register(partialRegistry{})) })
	code, out, errOut := runCmd("demo", "-device", "PARTIAL0", "-tokens", "4", "-ctx", "16", "-embd", "128")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, regexp.MustCompile(`(?m)^FLASH_ATTN_EXT +fattn +CPU$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^SWIGLU +ffn_swiglu +CPU$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^MUL_MAT +Qcur +PARTIAL0$`), out)
	m := regexp.MustCompile(`\nsplits: (\d+)\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	require.NotEqual(t, "1", m[1], out)
	require.True(t, strings.Contains(out, "agreement with a CPU-only run: max abs diff 0, nmse 0\n"), out)
}
