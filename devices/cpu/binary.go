package cpu

import (
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// supportsBinary: ADD, SUB, MUL and DIV on float tensors, src1 broadcast
// over src0, any strides.
func supportsBinary(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return a != nil && b != nil && isFloatType(t.Type) && isFloatType(a.Type) && isFloatType(b.Type) &&
		graph.CanRepeat(b, a) && graph.SameShape(t, a)
}

func computeBinary(p *Params, t *graph.Tensor) {
	a, b := t.Src[0], t.Src[1]
	var f func(x, y float32) float32
	switch t.Op {
	case ops.Add:
		f = func(x, y float32) float32 { return x + y }
	case ops.Sub:
		f = func(x, y float32) float32 { return x - y }
	case ops.Mul:
		f = func(x, y float32) float32 { return x * y }
	case ops.Div:
		f = func(x, y float32) float32 { return x / y }
	}
	forRows(p, t, func(i1, i2, i3 int64) {
		j1, j2, j3 := i1%b.Ne[1], i2%b.Ne[2], i3%b.Ne[3]
		for i0 := range t.Ne[0] {
			x := getF(a.Type, a.Data, offset(a, i0, i1, i2, i3))
			y := getF(b.Type, b.Data, offset(b, i0%b.Ne[0], j1, j2, j3))
			setF(t.Type, t.Data, offset(t, i0, i1, i2, i3), f(x, y))
		}
	})
}
