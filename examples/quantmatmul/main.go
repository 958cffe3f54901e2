// Command quantmatmul multiplies Q4_0 weights by a vector through the
// scheduler on the best device (GGML_DEVICE, else the best GPU, IGPU or
// CPU), the CPU running whatever that device cannot.
package main

import (
	"fmt"
	"log"

	"github.com/ggml-go/ggml/backend"
	_ "github.com/ggml-go/ggml/devices/cpu" // registers the CPU device
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

func main() {
	const k, m = 64, 4 // a Q4_0 row holds whole 32-value blocks
	wv, xv := make([]float32, k*m), make([]float32, k)
	for i := range wv {
		wv[i] = float32(i%k)/k - float32(i/k)/4
	}
	for i := range xv {
		xv[i] = 1
	}

	backends, err := backend.InitBestWithCPU()
	check(err)
	defer backend.CloseAll(backends)
	wc := graph.NewContext(graph.ContextOptions{}) // the weights
	w := wc.NewTensor(quant.Q4_0, k, m)
	weights, err := backend.LoadWeights(backends[0].Device(), backend.Weight{Tensor: w, Values: wv})
	check(err)
	defer weights.Free()

	s, err := backend.NewScheduler(backends, backend.SchedulerOptions{})
	check(err)
	defer s.Close()
	c := graph.NewContext(graph.ContextOptions{})
	x := graph.SetInput(c.NewTensor(quant.F32, k))
	y := graph.SetOutput(c.MulMat(w, x)) // activations x go through Q8_0
	g, err := c.Build(y)
	check(err)
	check(s.AllocGraph(g))
	check(backend.SetFloat32(s.TensorBackend(x), x, xv))
	check(s.GraphCompute(g))
	out, err := backend.GetFloat32(s.TensorBackend(y), y)
	check(err)
	fmt.Printf("%.2f on %s\n", out, s.TensorBackend(y).Name())
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
