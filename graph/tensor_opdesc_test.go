package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func TestOpDesc(t *testing.T) {
	ctx := NewContext(ContextOptions{})
	a := ctx.NewTensor(quant.F32, 8, 2)
	b := ctx.NewTensor(quant.F32, 8, 2)
	require.Equal(t, "NONE", a.OpDesc())
	require.Equal(t, "ADD", ctx.Add(a, b).OpDesc())
	require.Equal(t, "SILU", ctx.SiLU(a).OpDesc())
	require.Equal(t, "SWIGLU", ctx.SwiGLUSplit(a, b).OpDesc())
	require.NoError(t, ctx.Err())
	var nilT *Tensor
	require.Equal(t, ops.None.String(), nilT.OpDesc())
}
