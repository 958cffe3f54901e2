package bench

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// OpNames are the element-wise and softmax figures Op makes, at the sizes
// a prompt of 64 tokens gives the real models: SmolLM2's SOFT_MAX over
// 256 keys for its 9 heads (F16 causal mask, scaled) and its SWIGLU and
// SILU of 1536 features, Gemma 3 270M's GEGLU of 2048.
var OpNames = []string{"softmax", "swiglu", "silu", "geglu"}

// opTokens is the rows (tokens) of every Op figure.
const opTokens = 64

// Op is the workload of one of OpNames: the operation alone on fresh
// random sources (normal values; the mask causal with -Inf).
func Op(name string) (Workload, error) {
	var build func(c *graph.Context) *graph.Tensor
	switch name {
	case "softmax":
		build = func(c *graph.Context) *graph.Tensor {
			kq := c.SetName(c.NewTensor(quant.F32, 256, opTokens, 9), "kq")
			mask := c.SetName(c.NewTensor(quant.F16, 256, opTokens), "mask")
			return c.SoftMaxExt(kq, mask, 0.125, 0)
		}
	case "swiglu":
		build = func(c *graph.Context) *graph.Tensor {
			return c.SwiGLUSplit(c.SetName(c.NewTensor(quant.F32, 1536, opTokens), "x"), c.SetName(c.NewTensor(quant.F32, 1536, opTokens), "g"))
		}
	case "silu":
		build = func(c *graph.Context) *graph.Tensor {
			return c.SiLU(c.SetName(c.NewTensor(quant.F32, 1536, opTokens), "x"))
		}
	case "geglu":
		build = func(c *graph.Context) *graph.Tensor {
			return c.GeGLUSplit(c.SetName(c.NewTensor(quant.F32, 2048, opTokens), "x"), c.SetName(c.NewTensor(quant.F32, 2048, opTokens), "g"))
		}
	default:
		return Workload{}, fmt.Errorf("bench: no op figure %q (have %v)", name, OpNames)
	}
	return Workload{
		Build: func(c *graph.Context) (*graph.Graph, error) { return c.Build(build(c)) },
		Data: func(t *graph.Tensor) ([]byte, error) {
			// Each leaf's own stream: x and g differ.
			r := rand.New(rand.NewPCG(uint64(t.Name[0]), 1))
			n := t.NElements()
			if t.Type == quant.F16 {
				b := make([]byte, 2*n)
				for i := range n {
					v := float32(0)
					if i%t.Ne[0] > 192+i/t.Ne[0] {
						v = float32(math.Inf(-1))
					}
					binary.LittleEndian.PutUint16(b[2*i:], quant.FP32ToFP16(v))
				}
				return b, nil
			}
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.NormFloat64() * 3)
			}
			return quant.F32Bytes(v), nil
		},
	}, nil
}
