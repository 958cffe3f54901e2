package backend_test

import (
	"fmt"

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

	// SetFloat32 hands b bytes of its own, so nothing needs waiting for
	// before the slice is reused; GetFloat32 synchronizes b before it
	// reads.
	if err := backend.SetFloat32(b, x, []float32{1, 2, 3}); err != nil {
		fmt.Println(err)
		return
	}
	if err := backend.Compute(b, g); err != nil { // GraphCompute, then Synchronize
		fmt.Println(err)
		return
	}
	out, err := backend.GetFloat32(b, y)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out)
	// Output: [1 2 3]
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

// Run a graph on the best device with the CPU as fallback: the scheduler
// gives the accelerator what it supports and the CPU the rest, copying
// tensors between them. On a machine with only the CPU, the CPU runs
// everything.
func ExampleScheduler() {
	best, err := backend.InitBest() // GGML_DEVICE, else the best GPU, IGPU or CPU
	if err != nil {
		fmt.Println(err)
		return
	}
	defer best.Close()
	backends := []backend.Backend{best}
	if best.Device().Type() != backend.DeviceCPU {
		host, err := backend.Init(backend.Options{Devices: []string{"CPU"}})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer host.Close()
		backends = append(backends, host) // the fallback comes last
	}
	s, err := backend.NewScheduler(backends, backend.SchedulerOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	c := graph.NewContext(graph.ContextOptions{})
	x := graph.SetInput(c.NewTensor(quant.F32, 4))
	y := graph.SetOutput(c.SoftMax(c.Scale(x, 2)))
	g, err := c.Build(y)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.AllocGraph(g); err != nil { // split across the backends, and placed
		fmt.Println(err)
		return
	}
	if err := backend.SetFloat32(s.TensorBackend(x), x, []float32{0, 0.5, 1, 1.5}); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.GraphCompute(g); err != nil { // computes and synchronizes every backend
		fmt.Println(err)
		return
	}
	out, err := backend.GetFloat32(s.TensorBackend(y), y)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.3f\n", out)
	// Output: [0.032 0.087 0.237 0.644]
}
