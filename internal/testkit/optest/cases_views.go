package optest

import (
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

func init() { Register("views", viewCases) }

// viewCases cover the four operations that compute nothing (RESHAPE, VIEW,
// PERMUTE, TRANSPOSE): each case takes a view of an input and materializes
// it with a CONT. The mirror hands ggml our view's shape and strides, so
// these cases check computing through views; that the builders give the
// strides ggml's give is graph's builder-mirror test. Names follow
// test-backend-ops' style with the view operation first (test-backend-ops
// itself reaches views only through other ops).
func viewCases(full bool) []Case {
	types := []quant.Type{quant.F32, quant.F16}
	if full {
		types = append(types, quant.BF16)
	}
	shapes := [][4]int64{{8, 6, 4, 2}, {5, 7, 3, 1}}
	if full {
		shapes = append(shapes, [4]int64{16, 1, 9, 3}, [4]int64{1, 10, 1, 6})
	}
	perms := [][4]int{{1, 0, 2, 3}, {0, 2, 1, 3}, {2, 3, 0, 1}}
	if full {
		perms = append(perms, [4]int{3, 2, 1, 0}, [4]int{1, 2, 3, 0}, [4]int{0, 1, 3, 2})
	}
	var cases []Case
	for _, typ := range types {
		for _, ne := range shapes {
			n := ne[0] * ne[1] * ne[2] * ne[3]
			cases = append(cases,
				viewCase(Fmt("RESHAPE", "type", typ, "ne", ne, "ne_new", [4]int64{n / ne[3], ne[3], 1, 1}), typ, ne,
					func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.Reshape(a, n/ne[3], ne[3]) }),
				viewCase(Fmt("TRANSPOSE", "type", typ, "ne", ne), typ, ne, (*graph.Context).Transpose),
				// Every other row of every other plane, from an offset.
				viewCase(Fmt("VIEW", "type", typ, "ne", ne, "step", [2]int{2, 2}), typ, ne,
					func(c *graph.Context, a *graph.Tensor) *graph.Tensor {
						return c.View4D(a, ne[0]-1, (ne[1]+1)/2, (ne[2]+1)/2, ne[3],
							2*a.Nb[1], 2*a.Nb[2], a.Nb[3], a.Nb[0])
					}),
			)
			for _, p := range perms {
				cases = append(cases, viewCase(Fmt("PERMUTE", "type", typ, "ne", ne, "perm", p), typ, ne,
					func(c *graph.Context, a *graph.Tensor) *graph.Tensor { return c.Permute(a, p[0], p[1], p[2], p[3]) }))
			}
		}
	}
	return cases
}

func viewCase(name string, typ quant.Type, ne [4]int64, view func(c *graph.Context, a *graph.Tensor) *graph.Tensor) Case {
	return Case{
		Name: name,
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typ, ne[:]...)
			return []*graph.Tensor{c.Cont(view(c, a))}
		},
	}
}
