package optest

import (
	"math/rand"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

func init() { Register("binary", binaryCases) }

// binaryCases are ADD, SUB, MUL and DIV over types, broadcasts and
// non-contiguous sources, as test-backend-ops' test_bin_bcast.
func binaryCases(full bool) []Case {
	type op struct {
		name  string
		build func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor
	}
	binOps := []op{
		{"ADD", (*graph.Context).Add}, {"SUB", (*graph.Context).Sub},
		{"MUL", (*graph.Context).Mul}, {"DIV", (*graph.Context).Div},
	}
	shapes := []struct{ ne, nr [4]int64 }{
		{[4]int64{16, 10, 1, 1}, [4]int64{1, 1, 1, 1}},
		{[4]int64{10, 5, 4, 3}, [4]int64{2, 1, 1, 1}},
		{[4]int64{10, 5, 4, 3}, [4]int64{1, 2, 2, 2}},
		{[4]int64{1, 1, 1, 1}, [4]int64{3, 2, 5, 7}},
	}
	types := []quant.Type{quant.F32}
	if full {
		types = append(types, quant.F16, quant.BF16)
	}
	var cases []Case
	for _, o := range binOps {
		for _, typ := range types {
			for _, s := range shapes {
				cases = append(cases, Case{
					Name: Fmt(o.name, "type", typ, "ne", s.ne, "nr", s.nr),
					Build: func(c *graph.Context) []*graph.Tensor {
						a := c.NewTensor(typ, s.ne[0]*s.nr[0], s.ne[1]*s.nr[1], s.ne[2]*s.nr[2], s.ne[3]*s.nr[3])
						b := c.NewTensor(typ, s.ne[:]...)
						return []*graph.Tensor{o.build(c, a, b)}
					},
					Init: func(rng *rand.Rand, t *graph.Tensor) bool {
						// Keep divisors away from zero.
						return o.name == "DIV" && FillUniform(rng, t, 0.5, 1.5) == nil
					},
				})
			}
		}
	}
	return cases
}
