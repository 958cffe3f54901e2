package graph_test

import (
	"fmt"

	"github.com/ggml-go/ggml/backend"
	_ "github.com/ggml-go/ggml/devices/cpu" // registers the CPU device
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Build a two-layer perceptron, y = softmax(W2·relu(W1·x + b1)), for a
// batch of two inputs and compute it on the CPU. The tensors have Go memory
// of their own (Alloc), the simplest way to run small graphs; models place
// their weights in device buffers instead (see package buffer).
func ExampleContext_Build() {
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	x := c.NewTensor(quant.F32, 3, 2)  // 3 features, 2 inputs
	w1 := c.NewTensor(quant.F32, 3, 4) // 3 -> 4
	b1 := c.NewTensor(quant.F32, 4)
	w2 := c.NewTensor(quant.F32, 4, 2) // 4 -> 2 classes
	h := c.ReLU(c.Add(c.MulMat(w1, x), b1))
	y := c.SoftMax(c.MulMat(w2, h))
	g, err := c.Build(y) // the first builder error, if any, comes out here
	if err != nil {
		fmt.Println(err)
		return
	}

	for _, p := range []struct {
		t  *graph.Tensor
		vs []float32
	}{
		{x, []float32{1, 0, 2, -1, 1, 0}},
		{w1, []float32{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}},
		{b1, []float32{0, 0, 0, -1}},
		{w2, []float32{1, -1, 1, 0, 0, 1, -1, 1}},
	} {
		if err := backend.SetFloat32(nil, p.t, p.vs); err != nil {
			fmt.Println(err)
			return
		}
	}
	b, err := backend.Init(backend.Options{Devices: []string{"CPU"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	if err := backend.Compute(b, g); err != nil { // computes and synchronizes
		fmt.Println(err)
		return
	}
	out, err := backend.GetFloat32(nil, y)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.3f\n", out)
	// Output: [0.953 0.047 0.119 0.881]
}
