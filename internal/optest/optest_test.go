package optest

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
)

// TestCPUSelfConsistent runs the quick cases with our CPU device against
// itself on 1 and 3 threads: results must not depend on the thread count.
func TestCPUSelfConsistent(t *testing.T) {
	one := cpu.New(cpu.Options{Threads: 1})
	defer one.Close()
	three := cpu.New(cpu.Options{Threads: 3})
	defer three.Close()
	cases := Cases(false, nil)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		r := Run(c, CPU{three}, CPU{one}, 1)
		require.NotEqual(t, Failed, r.Status, "%s: %s", c.Name, r.Detail)
	}
}

// skewed computes on the CPU and then changes one output element, so a
// comparison must fail and say where.
type skewed struct{ CPU }

func (s skewed) Compute(g *graph.Graph) error {
	if err := s.CPU.Compute(g); err != nil {
		return err
	}
	out := g.Nodes[len(g.Nodes)-1]
	v := math.Float32frombits(binary.LittleEndian.Uint32(out.Data[4*7:]))
	binary.LittleEndian.PutUint32(out.Data[4*7:], math.Float32bits(v+1))
	return nil
}

func TestMismatchDetail(t *testing.T) {
	eng := cpu.New(cpu.Options{Threads: 1})
	defer eng.Close()
	c := Cases(false, []string{"ADD"})[1] // ne=[20,5,4,3]
	r := Run(c, skewed{CPU{eng}}, CPU{eng}, 1)
	require.Equal(t, Failed, r.Status)
	require.Regexp(t, `^output 0 \(node_0\): outputs differ: NMSE \S+ > 1e-07; first difference at element 7 \[7,0,0,0\]: `+
		`got \S+, reference \S+; largest at element 7 \[7,0,0,0\]`, r.Detail)

	c.Tol.Exact = true
	r = Run(c, skewed{CPU{eng}}, CPU{eng}, 1)
	require.Regexp(t, `element 7 \[7,0,0,0\]: got \S+, reference \S+ \(exact match required\)$`, r.Detail)
}
