package openvino

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// The inference precision is always chosen (InferencePrecisionFor) and
// reaches the plugin: read back from the core, and an f32 product equal to
// ggml's within f32 rounding. On the real CPU plugin 2026.4.1 here (a CPU
// with AVX512-BF16) the plugin's default, bf16, gave 8.0e-6 on this
// product, so the bound catches a missing hint there.
func TestInferencePrecision(t *testing.T) {
	for _, c := range []struct {
		k    Kind
		o    Options
		want string
	}{
		{KindCPU, Options{}, "f32"},
		{KindGPU, Options{}, "f16"},
		{KindNPU, Options{}, ""},
		{KindCPU, Options{InferencePrecision: "bf16"}, "bf16"},
		{KindGPU, Options{InferencePrecision: "f32"}, "f32"},
	} {
		var got string
		for _, p := range (&runtimeCtx{kind: c.k, opts: c.o}).compileConfig() {
			if p[0] == "INFERENCE_PRECISION_HINT" {
				got = p[1]
			}
		}
		require.Equal(t, c.want, got, "%v %+v", c.k, c.o)
	}
	o, err := optionsFrom(envMap(map[string]string{"GGML_OPENVINO_INFERENCE_PRECISION": "bf16"}))
	require.NoError(t, err)
	require.Equal(t, "bf16", o.InferencePrecision)
	_, err = optionsFrom(envMap(map[string]string{"GGML_OPENVINO_INFERENCE_PRECISION": "f64"}))
	require.ErrorContains(t, err, `GGML_OPENVINO_INFERENCE_PRECISION="f64": want one of f32, bf16, f16`)

	p := buildDouble(t)
	for _, prec := range []string{"", "bf16"} {
		dev := openDevice(t, p, Options{InferencePrecision: prec, DisableCache: true})
		v, err := dev.rt.lib.getProperty(dev.rt.core, "CPU", "INFERENCE_PRECISION_HINT")
		require.NoError(t, err)
		require.Equal(t, dev.rt.opts.InferencePrecisionFor(KindCPU), v)
		if prec == "" {
			got, want, _, _ := mulMatWeights(t, dev, quant.F32, "blk.0.prec.weight", 64, 8, 3, rand.New(rand.NewPCG(7, 7)))
			require.Less(t, nmse(got, want), 1e-10)
		}
	}
}
