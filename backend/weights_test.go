package backend_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/quant"
)

// TestLoadWeights: the weights land in a WEIGHTS buffer of the device
// holding Quantize's bytes, the scheduler runs their product on that
// device, and the product of Q4_0 weights is the dequantized weights'
// within the activation quantization MulMat's documentation states.
func TestLoadWeights(t *testing.T) {
	const k, m = 256, 8
	r := rand.New(rand.NewPCG(1, 2))
	wv, xv := make([]float32, k*m), make([]float32, k)
	for i := range wv {
		wv[i] = float32(r.NormFloat64())
	}
	for i := range xv {
		xv[i] = float32(r.NormFloat64())
	}
	dev := devtest.New(devtest.Config{Name: "FAKE_W", Type: backend.DeviceGPU})
	fake, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	defer fake.Close()
	backends := []backend.Backend{fake, cpuBackend(t)}

	wc := graph.NewContext(graph.ContextOptions{})
	w := wc.NewTensor(quant.Q4_0, k, m)
	bias := wc.NewTensor(quant.F32, m)
	buf, err := backend.LoadWeights(dev, backend.Weight{Tensor: w, Values: wv}, backend.Weight{Tensor: bias, Values: make([]float32, m)})
	require.NoError(t, err)
	defer buf.Free()
	require.Equal(t, buffer.UsageWeights, buf.Usage())
	want, err := quant.Quantize(quant.Q4_0, wv, m, k, nil)
	require.NoError(t, err)
	got := make([]byte, len(want))
	require.NoError(t, buffer.GetTensor(w, got, 0))
	require.Equal(t, want, got, "Quantize's bytes, not FromFloat's")

	s, err := backend.NewScheduler(backends, backend.SchedulerOptions{})
	require.NoError(t, err)
	defer s.Close()
	c := graph.NewContext(graph.ContextOptions{})
	x := graph.SetInput(c.NewTensor(quant.F32, k))
	y := graph.SetOutput(c.Add(c.MulMat(w, x), bias))
	g, err := c.Build(y)
	require.NoError(t, err)
	require.NoError(t, s.AllocGraph(g))
	require.Equal(t, "FAKE_W", s.TensorBackend(y).Name(), "ops on the device's weights run on the device")
	require.NoError(t, backend.SetFloat32(s.TensorBackend(x), x, xv))
	require.NoError(t, s.GraphCompute(g))
	out, err := backend.GetFloat32(s.TensorBackend(y), y)
	require.NoError(t, err)
	deq, err := quant.Dequantize(quant.Q4_0, want, k*m)
	require.NoError(t, err)
	var num, den float64
	for i := range m {
		var exact float64
		for j := range k {
			exact += float64(deq[i*k+j]) * float64(xv[j])
		}
		d := float64(out[i]) - exact
		num, den = num+d*d, den+exact*exact
	}
	nmse := num / den
	t.Logf("Q4_0 product NMSE from the dequantized weights in F32: %.2g", nmse)
	require.Greater(t, nmse, 0.0, "activations go through Q8_0")
	require.Less(t, nmse, 1e-3)
}

func TestLoadWeightsErrors(t *testing.T) {
	dev, err := backend.DeviceByName("CPU")
	require.NoError(t, err)
	c := graph.NewContext(graph.ContextOptions{})
	good := backend.Weight{Tensor: c.NewTensor(quant.Q8_0, 32, 2), Values: make([]float32, 64)}
	for name, ws := range map[string][]backend.Weight{
		"count":   {{Tensor: c.NewTensor(quant.F32, 4), Values: make([]float32, 3)}},
		"nil":     {good, {}},
		"lattice": {good, {Tensor: c.NewTensor(quant.IQ2_XXS, 256), Values: make([]float32, 256)}},
	} {
		_, err := backend.LoadWeights(dev, ws...)
		require.Error(t, err, name)
		require.True(t, good.Tensor.Buffer == nil, "%s: nothing stays placed", name)
	}
	buf, err := backend.LoadWeights(dev, good)
	require.NoError(t, err)
	defer buf.Free()
	_, err = backend.LoadWeights(dev, good)
	require.ErrorContains(t, err, "already has memory")
	_, err = backend.LoadWeights(nil, good)
	require.ErrorIs(t, err, backend.ErrArgument)
}

func TestInitWithCPU(t *testing.T) {
	bs, err := backend.InitWithCPU(backend.Options{Devices: []string{"CPU"}})
	require.NoError(t, err)
	require.Len(t, bs, 1, "the CPU once")
	require.NoError(t, backend.CloseAll(bs))
	_, err = backend.InitWithCPU(backend.Options{Devices: []string{"NOPE"}})
	require.ErrorContains(t, err, `"NOPE"`)
}
