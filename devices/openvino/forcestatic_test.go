package openvino

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
)

// GGML_OPENVINO_FORCE_STATIC takes the NPU's static path (a prefill model
// of PREFILL_CHUNK_SIZE tokens and a decode model of one, both over the
// whole KV cache, inputs padded) on the device the option is given for:
// on the real CPU plugin (GGML_OPENVINO_LIB) that compiles and runs the
// static IRs, which only the double had run before. A 37-token prompt in
// chunks of 16 and 4 decode steps: two models compiled, 3 chunks and 4
// steps run, and the logits of every step those of the same device on the
// dynamic path (DynamicShapes: one model for both shapes) and of our CPU
// device.
func TestForceStaticKeepsLogits(t *testing.T) {
	p := buildDouble(t)
	run := func(o Options) ([][]float32, *ovBackend, *device) {
		dev := openDevice(t, p, o)
		m := newLM(t, dev.BufferType(), dev.HostType(), 64)
		be := newBackend(dev)
		t.Cleanup(func() { be.Close() })
		logits, _ := runLM(t, m, prompt(37), 4, be.GraphCompute)
		return logits, be, dev
	}
	static, sbe, sdev := run(Options{ForceStatic: true, PrefillChunkSize: 16})
	require.Equal(t, KindCPU, sdev.rt.kind)
	require.Equal(t, 3+4, sbe.static.runs, "3 prefill chunks of 16, 4 decode steps")
	require.Equal(t, 2, len(sdev.cache.models), "one prefill and one decode model for the whole conversation")
	dynamic, dbe, ddev := run(Options{DynamicShapes: true})
	require.Zero(t, dbe.static.runs)
	require.Equal(t, 1, len(ddev.cache.models), "the dynamic path: one model for the 37-token prompt and 1 token over n_kv 48 (dynamic.go)")

	host := newLM(t, sdev.HostType(), sdev.HostType(), 64)
	want, _ := runLM(t, host, prompt(37), 4, cpu.New(cpu.Options{Threads: 1}).Compute)
	for i := range static {
		es, ed, esd := nmse(static[i], want[i]), nmse(dynamic[i], want[i]), nmse(static[i], dynamic[i])
		t.Logf("%s step %d: logits NMSE static %.3g, dynamic %.3g (against our CPU device), static against dynamic %.3g",
			sdev.rt.lib.version, i, es, ed, esd)
		require.Less(t, es, 1e-6, "step %d", i)
		require.Less(t, esd, 1e-6, "step %d: the static path changes the logits", i)
	}
}
