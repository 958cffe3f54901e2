package optest

import (
	"fmt"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
)

// CPU runs cases on our CPU device.
type CPU struct{ Engine *cpu.Engine }

// Name is "CPU".
func (CPU) Name() string { return "CPU" }

// Supports asks the CPU device's supports-op rule about every node.
func (CPU) Supports(g *graph.Graph) error {
	for _, n := range g.Nodes {
		if !cpu.SupportsOp(n) {
			return fmt.Errorf("%w: %s", cpu.ErrUnsupported, n)
		}
	}
	return nil
}

// Compute runs g on the engine.
func (e CPU) Compute(g *graph.Graph) error { return e.Engine.Compute(g) }
