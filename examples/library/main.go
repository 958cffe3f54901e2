// Command library is the program README's "Use it as a library" shows: a
// matrix-vector product through the scheduler on the best device, with
// the CPU running whatever that device cannot.
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
	// GGML_DEVICE, else the best GPU, IGPU or CPU; then the CPU, unless
	// it is the CPU, last to run what the first cannot.
	backends, err := backend.InitBestWithCPU()
	check(err)
	defer backend.CloseAll(backends)
	s, err := backend.NewScheduler(backends, backend.SchedulerOptions{})
	check(err)
	defer s.Close()

	c := graph.NewContext(graph.ContextOptions{}) // tensors the scheduler places
	w := graph.SetInput(c.NewTensor(quant.F32, 3, 2))
	x := graph.SetInput(c.NewTensor(quant.F32, 3))
	y := graph.SetOutput(c.MulMat(w, x)) // y[i] = row i of w · x
	g, err := c.Build(y)
	check(err)
	check(s.AllocGraph(g))
	check(backend.SetFloat32(s.TensorBackend(w), w, []float32{1, 2, 3, 4, 5, 6}))
	check(backend.SetFloat32(s.TensorBackend(x), x, []float32{1, 0, -1}))
	check(s.GraphCompute(g)) // every split computed, every backend synchronized
	out, err := backend.GetFloat32(s.TensorBackend(y), y)
	check(err)
	fmt.Println(out)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
