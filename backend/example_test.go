package backend_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	_ "github.com/ggml-go/ggml/devices/cpu" // registers the CPU device
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Start a backend, place a graph in the device's memory, set its input,
// compute and read the result.
func Example() {
	b, err := backend.Init(backend.Options{Devices: []string{"CPU"}, Threads: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()

	c := graph.NewContext(graph.ContextOptions{}) // tensors without memory
	x := graph.SetInput(c.NewTensor(quant.F32, 3))
	y := graph.SetOutput(c.Scale(c.Add(x, x), 0.5))
	g, err := c.Build(y)
	if err != nil {
		fmt.Println(err)
		return
	}

	ga, err := buffer.NewGraphAllocator(b.Device().BufferType())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ga.Free()
	if err := ga.AllocGraph(g); err != nil {
		fmt.Println(err)
		return
	}

	in := make([]byte, 12)
	for i, v := range []float32{1, 2, 3} {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(v))
	}
	if err := b.SetTensorAsync(x, in, 0); err != nil {
		fmt.Println(err)
		return
	}
	if err := backend.Compute(b, g); err != nil {
		fmt.Println(err)
		return
	}
	out := make([]byte, 12)
	if err := b.GetTensorAsync(y, out, 0); err != nil {
		fmt.Println(err)
		return
	}
	for i := range 3 {
		fmt.Print(math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])), " ")
	}
	fmt.Println()
	// Output: 1 2 3
}

// Devices lists every registered device, with the reason for those that
// cannot be used.
func ExampleDevices() {
	for _, d := range backend.Devices() {
		if err := backend.Availability(d); err != nil {
			fmt.Println(d.Name(), "unavailable:", err)
			continue
		}
		fmt.Println(d.Name(), d.Type(), d.Props().Caps)
	}
	// Output: CPU CPU buffer_from_host_ptr,mmap
}
