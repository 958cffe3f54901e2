package mirror_test

import (
	"fmt"
	"testing"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant"
)

// BenchmarkCompute measures one small case (ADD of 600 floats) through the
// mirror: context reuse, copies in and out, and ggml's compute.
func BenchmarkCompute(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			e, err := mirror.New(reftest.Lib(b), threads)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			a := c.NewTensor(quant.F32, 10, 5, 4, 3)
			g, err := c.Build(c.Add(a, a))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := e.Compute(g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
