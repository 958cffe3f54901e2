package buffer_test

import (
	"fmt"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	_ "github.com/ggml-go/ggml/devices/cpu" // registers the CPU device
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Place a model's weights in one buffer of the device's memory, then let
// a GraphAllocator place a compute graph that reads them, reusing memory
// between its intermediate tensors, as ggml_backend_alloc_ctx_tensors and
// ggml_gallocr do.
func ExampleGraphAllocator() {
	b, err := backend.Init(backend.Options{Devices: []string{"CPU"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	bt := b.Device().BufferType()

	// Weights: tensors without memory, then one buffer for all of them.
	wc := graph.NewContext(graph.ContextOptions{})
	w := wc.NewTensor(quant.Q8_0, 32, 4) // 32 inputs -> 4 outputs, quantized
	bias := wc.NewTensor(quant.F32, 4)
	weights, err := buffer.AllocContextTensors(wc, bt)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer weights.Free()
	weights.SetUsage(buffer.UsageWeights)
	wv := make([]float32, 32*4)
	for i := range wv {
		wv[i] = float32(i%32) / 32
	}
	if err := backend.SetFloat32(b, w, wv); err != nil { // quantized on the way in
		fmt.Println(err)
		return
	}
	if err := backend.SetFloat32(b, bias, []float32{0, 1, 2, 3}); err != nil {
		fmt.Println(err)
		return
	}

	// The compute graph, placed by the allocator.
	c := graph.NewContext(graph.ContextOptions{})
	x := graph.SetInput(c.NewTensor(quant.F32, 32))
	y := graph.SetOutput(c.Add(c.MulMat(w, x), bias))
	g, err := c.Build(y)
	if err != nil {
		fmt.Println(err)
		return
	}
	ga, err := buffer.NewGraphAllocator(bt)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ga.Free()
	if err := ga.AllocGraph(g); err != nil {
		fmt.Println(err)
		return
	}
	xv := make([]float32, 32)
	for i := range xv {
		xv[i] = 1
	}
	if err := backend.SetFloat32(b, x, xv); err != nil {
		fmt.Println(err)
		return
	}
	if err := backend.Compute(b, g); err != nil {
		fmt.Println(err)
		return
	}
	out, err := backend.GetFloat32(b, y) // waits for b before reading
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("weights %d bytes, compute %d bytes, y = %.2f\n", weights.Size(), ga.BufferSize(0), out)
	// Output: weights 192 bytes, compute 160 bytes, y = [15.50 16.50 17.50 18.50]
}
