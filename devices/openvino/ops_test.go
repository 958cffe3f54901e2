package openvino

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/optest"
)

// The conformance suite through the device's own buffers (weights in
// WEIGHTS buffers, converted as set), on the double presenting each
// element-type numbering, and as an NPU (upstream's NPU rules and
// requantization), against the real ggml (our CPU device when it is not
// installed and GGML_REF_REQUIRED is unset).
func TestOpsOnDouble(t *testing.T) {
	p := buildDouble(t)
	// Upstream's requantization (Q6_K/Q5_K to per-row Q8_0 on CPU and GPU,
	// Q4_0 in groups of 128 on the NPU) moves quantized results 2e-5 to
	// 5e-3 (NMSE) from ggml's, beyond the suite's tolerances
	// (TestExtractRoundTrip bounds each): the runs keep the weights' formats.
	if realLibrary() != "" {
		// the real CPU plugin: one configuration, the release it is
		dev := openDevice(t, p, Options{Device: "CPU", keepFormats: true})
		t.Logf("on %s", dev.Description())
		rep := optest.TestDevice(t, dev, optest.Options{Seed: 11})
		require.Positive(t, rep.Tally.Count(optest.Passed))
		return
	}
	for _, c := range []struct{ version, device string }{{"2025.1", "CPU"}, {"2025.0", "CPU"}, {"2025.1", "NPU"}, {"2025.1", "GPU"}} {
		t.Run(c.version+"/"+c.device, func(t *testing.T) {
			if testing.Short() && (c.version != "2025.1" || c.device != "CPU") {
				t.Skip("-short: one configuration")
			}
			knob(t, p, "version", c.version)
			knob(t, p, "devices", "CPU,GPU,NPU")
			dev := openDevice(t, p, Options{Device: c.device, keepFormats: true})
			require.Equal(t, c.device, dev.rt.device)
			rep := optest.TestDevice(t, dev, optest.Options{Seed: 11})
			require.Positive(t, rep.Tally.Count(optest.Passed))
			// The full cases of the translators our CPU device lacks or
			// the quick set samples (ROLL's are full only).
			rep = optest.TestDevice(t, dev, optest.Options{Seed: 11, Full: true, Ops: []string{"ROLL", "POOL_2D"}})
			require.Positive(t, rep.Tally.Count(optest.Passed))
		})
	}
}
