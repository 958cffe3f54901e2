package openvino

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// statefulRun runs a 37-token prompt, three decode steps, spoils ggml's
// KV cache before the last one, and returns the logits of every step.
func statefulRun(t *testing.T, m *lmModel, compute func(*graph.Graph) error, spoil bool) [][]float32 {
	var out [][]float32
	run := func(tokens []int32, p0 int64) {
		g, l := m.step(t, tokens, p0)
		require.NoError(t, compute(g))
		out = append(out, quant.BytesF32(l.Data))
	}
	run(prompt(37), 0)
	run([]int32{3}, 37)
	run([]int32{10}, 38)
	if spoil {
		for _, c := range []*graph.Tensor{m.ck, m.cv} {
			copy(c.Data, bytes.Repeat([]byte{0x00, 0x3c}, int(c.NBytes())/2)) // every cell 1.0
		}
	}
	run([]int32{17}, 39)
	return out
}

// With GGML_OPENVINO_STATEFUL_EXECUTION the KV cache is kept in OpenVINO
// variables (ReadValue/Assign): a decode step that follows its own model's
// previous step reads the variables, so spoiling ggml's cache tensors in
// between changes nothing; without it the same spoiling changes the
// result. A new sequence (position 0) gets fresh variables.
func TestStatefulExecution(t *testing.T) {
	p := buildDouble(t)
	host := func() *lmModel { d := openDevice(t, p, Options{}); return newLM(t, d.HostType(), d.HostType(), 64) }
	want := statefulRun(t, host(), cpu.New(cpu.Options{Threads: 1}).Compute, false)

	dev := openDevice(t, p, Options{StatefulExecution: true})
	be := newBackend(dev)
	defer be.Close()
	m := newLM(t, dev.BufferType(), dev.HostType(), 64)
	got := statefulRun(t, m, be.GraphCompute, true)
	for i := range got {
		e := nmse(got[i], want[i])
		t.Logf("stateful step %d: NMSE %.3g", i, e)
		require.Less(t, e, 5e-4, "step %d", i)
	}
	// Two models (prefill, decode), each a first request: nothing reset.
	require.Equal(t, 0, be.stateResets)
	g, l := m.step(t, prompt(37), 0)
	require.NoError(t, be.GraphCompute(g))
	require.Less(t, nmse(quant.BytesF32(l.Data), want[0]), 5e-4, "a new sequence")
	require.Equal(t, 1, be.stateResets, "position 0 starts fresh variables")

	// Control: stateless, the spoiled cache is read.
	o := dev.rt.opts
	o.StatefulExecution = false
	sl := newBackendOpts(dev, o)
	defer sl.Close()
	m2 := newLM(t, dev.BufferType(), dev.HostType(), 64)
	bad := statefulRun(t, m2, sl.GraphCompute, true)
	require.Less(t, nmse(bad[2], want[2]), 5e-4)
	require.Greater(t, nmse(bad[3], want[3]), 1e-3, "stateless reads ggml's spoiled cache")
}
