package cpu_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// TestElementwiseSupports pins down the supports rules where they refuse
// what ggml's kernels abort on, compute wrongly, or store differently.
func TestElementwiseSupports(t *testing.T) {
	type build func(c *graph.Context) *graph.Tensor
	nt := func(c *graph.Context, typ quant.Type, ne ...int64) *graph.Tensor { return c.NewTensor(typ, ne...) }
	f32 := func(c *graph.Context, ne ...int64) *graph.Tensor { return nt(c, quant.F32, ne...) }
	cases := []struct {
		name string
		want bool
		b    build
	}{
		{"ADD f32 permuted src1", true, func(c *graph.Context) *graph.Tensor {
			return c.Add(f32(c, 4, 3, 2), c.Permute(f32(c, 3, 2, 4), 1, 2, 0, 3))
		}},
		{"ADD f32 into a transposed view", false, func(c *graph.Context) *graph.Tensor {
			return c.AddInplace(c.Transpose(f32(c, 4, 4)), f32(c, 4, 4))
		}},
		{"MUL bf16 x f32 -> bf16", true, func(c *graph.Context) *graph.Tensor { return c.Mul(nt(c, quant.BF16, 8, 2), f32(c, 8)) }},
		{"MUL f32 x f16", false, func(c *graph.Context) *graph.Tensor { return c.Mul(f32(c, 8, 2), nt(c, quant.F16, 8)) }},
		{"SUB f16 x bf16", false, func(c *graph.Context) *graph.Tensor { return c.Sub(nt(c, quant.F16, 8), nt(c, quant.BF16, 8)) }},
		{"ADD q4_0 + f32", true, func(c *graph.Context) *graph.Tensor { return c.Add(nt(c, quant.Q4_0, 64, 2), f32(c, 64, 2)) }},
		{"ADD q4_0 + broadcast f32", false, func(c *graph.Context) *graph.Tensor { return c.Add(nt(c, quant.Q4_0, 64, 2), f32(c, 64)) }},
		{"ADD q4_0 + f16", false, func(c *graph.Context) *graph.Tensor { return c.Add(nt(c, quant.Q4_0, 64), nt(c, quant.F16, 64)) }},
		{"SUB q4_0", false, func(c *graph.Context) *graph.Tensor { return c.Sub(nt(c, quant.Q4_0, 64), f32(c, 64)) }},
		{"ADD iq2_xxs -> iq2_xxs (no from_float)", false, func(c *graph.Context) *graph.Tensor {
			return c.Add(nt(c, quant.IQ2_XXS, 256), f32(c, 256))
		}},
		{"ADD iq2_xxs -> f32", true, func(c *graph.Context) *graph.Tensor {
			return c.AddCast(nt(c, quant.IQ2_XXS, 256), f32(c, 256), quant.F32)
		}},
		{"ADD iq4_nl -> iq4_nl (its reference quantizer)", true, func(c *graph.Context) *graph.Tensor {
			return c.Add(nt(c, quant.IQ4_NL, 64), f32(c, 64))
		}},
		{"ADD q8_1 (no to_float)", false, func(c *graph.Context) *graph.Tensor {
			return c.AddCast(nt(c, quant.Q8_1, 64), f32(c, 64), quant.F32)
		}},
		{"ADD_CAST f16 + f16 -> f32", false, func(c *graph.Context) *graph.Tensor {
			return c.AddCast(nt(c, quant.F16, 8), nt(c, quant.F16, 8), quant.F32)
		}},
		{"ADD1 f32 + f16 scalar", false, func(c *graph.Context) *graph.Tensor { return c.Add1(f32(c, 8), nt(c, quant.F16, 1)) }},
		{"ADD1 bf16 + f32 scalar", true, func(c *graph.Context) *graph.Tensor { return c.Add1(nt(c, quant.BF16, 8), f32(c, 1)) }},
		{"ADD1 q4_0 ne3=1", true, func(c *graph.Context) *graph.Tensor { return c.Add1(nt(c, quant.Q4_0, 32, 2, 2), f32(c, 1)) }},
		{"ADD1 q4_0 ne3=2 (ggml misplaces rows, this kernel does not)", true, func(c *graph.Context) *graph.Tensor {
			return c.Add1(nt(c, quant.Q4_0, 32, 2, 2, 2), f32(c, 1))
		}},
		{"GELU bf16", false, func(c *graph.Context) *graph.Tensor { return c.GELU(nt(c, quant.BF16, 8)) }},
		{"ABS bf16", true, func(c *graph.Context) *graph.Tensor { return c.Abs(nt(c, quant.BF16, 8)) }},
		{"SILU strided rows", true, func(c *graph.Context) *graph.Tensor {
			a := f32(c, 8, 3, 2)
			return c.SiLU(c.View3D(a, 4, 3, 2, a.Nb[1], a.Nb[2], 0))
		}},
		{"XIELU rows not flat", false, func(c *graph.Context) *graph.Tensor {
			a := f32(c, 8, 3, 2)
			return c.XIELU(c.View3D(a, 8, 2, 2, a.Nb[1], a.Nb[2], 0), 4, 20, 0.5, 1e-7)
		}},
		{"LEAKY_RELU bf16", false, func(c *graph.Context) *graph.Tensor { return c.LeakyReLU(nt(c, quant.BF16, 8), 0.1, false) }},
		{"LEAKY_RELU rows not flat (ggml reads the wrong rows, this kernel does not)", true, func(c *graph.Context) *graph.Tensor {
			a := f32(c, 8, 3, 2)
			return c.LeakyReLU(c.View3D(a, 8, 2, 2, a.Nb[1], a.Nb[2], 0), 0.1, false)
		}},
		{"CLAMP bf16", false, func(c *graph.Context) *graph.Tensor { return c.Clamp(nt(c, quant.BF16, 8), 0, 1) }},
		{"CLAMP padded rows", true, func(c *graph.Context) *graph.Tensor {
			a := f32(c, 8, 3, 2)
			return c.Clamp(c.View3D(a, 4, 3, 2, a.Nb[1], a.Nb[2], 0), 0, 1)
		}},
		{"SCALE f16", false, func(c *graph.Context) *graph.Tensor { return c.Scale(nt(c, quant.F16, 8), 2) }},
		{"SCALE padded rows", false, func(c *graph.Context) *graph.Tensor {
			a := f32(c, 8, 3)
			return c.Scale(c.View2D(a, 4, 3, a.Nb[1], 0), 2)
		}},
		{"FILL f16", true, func(c *graph.Context) *graph.Tensor { return c.Fill(nt(c, quant.F16, 8), 2) }},
		{"SWIGLU_OAI f16", false, func(c *graph.Context) *graph.Tensor {
			return c.SwiGLUOAI(nt(c, quant.F16, 8), nil, 1.702, 7)
		}},
		{"SWIGLU_CLAMP f16", true, func(c *graph.Context) *graph.Tensor { return c.SwiGLUClamp(nt(c, quant.F16, 8), nil, 7) }},
		{"GEGLU bf16", false, func(c *graph.Context) *graph.Tensor { return c.GeGLU(nt(c, quant.BF16, 8)) }},
		{"ADD_ID f16", false, func(c *graph.Context) *graph.Tensor {
			return c.AddID(nt(c, quant.F16, 8, 2, 3), nt(c, quant.F16, 8, 4), nt(c, quant.I32, 2, 3))
		}},
	}
	for _, tc := range cases {
		c := graph.NewContext(graph.ContextOptions{})
		out := tc.b(c)
		require.NoError(t, c.Err(), tc.name)
		require.Equal(t, tc.want, cpu.SupportsOp(out), tc.name)
	}
}

// TestElementwiseUnsupportedOpsRefused builds nodes no builder makes (types
// ggml would abort on) and checks the engine refuses them with an error.
func TestElementwiseUnsupportedOpsRefused(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	a := c.NewTensor(quant.F16, 8)
	for _, out := range []*graph.Tensor{
		c.NewOp(ops.Unary, quant.F32, a.Ne, ops.UnaryParams{Op: ops.UnaryGELU}.Params(), a),    // GELU f16 -> f32
		c.NewOp(ops.Unary, quant.F16, a.Ne, ops.UnaryParams{Op: ops.UnaryOpCount}.Params(), a), // no such op
		c.NewOp(ops.Tri, quant.F16, a.Ne, ops.TriParams{Type: ops.TriLower}.Params(), a),
		c.NewOp(ops.GLU, quant.F16, [4]int64{4, 1, 1, 1}, ops.GLUParams{Op: 9}.Params(), a),
	} {
		require.NoError(t, c.Err())
		require.False(t, cpu.SupportsOp(out), out.String())
		e := cpu.New(cpu.Options{Threads: 1})
		require.ErrorIs(t, e.ComputeNode(out), cpu.ErrUnsupported)
		e.Close()
	}
}

// TestAddIDBadIDIsAnError checks an id out of range (ggml aborts) comes
// back as an error, not a crash or a stray read.
func TestAddIDBadIDIsAnError(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{Alloc: true})
	ids := c.NewTensor(quant.I32, 1, 2)
	out := c.AddID(c.NewTensor(quant.F32, 4, 1, 2), c.NewTensor(quant.F32, 4, 3), ids)
	require.NoError(t, c.Err())
	binary.LittleEndian.PutUint32(ids.Data[4:], 3)
	e := cpu.New(cpu.Options{Threads: 2})
	defer e.Close()
	require.ErrorContains(t, e.ComputeNode(out), "id out of range")
}

// TestAddLatticeSources adds an F32 tensor to rows of the lattice types
// (which quant can dequantize but not produce), read from the oracle data
// set: the result must be ggml's own dequantization plus the addend.
func TestAddLatticeSources(t *testing.T) {
	dir := filepath.Join(reftest.OracleDir(t), "quant", "sin")
	e := cpu.New(cpu.Options{Threads: 3})
	defer e.Close()
	for _, typ := range []quant.Type{quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M} {
		raw, err := os.ReadFile(filepath.Join(dir, typ.String()+".bin"))
		require.NoError(t, err)
		deq, err := os.ReadFile(filepath.Join(dir, typ.String()+".deq.f32"))
		require.NoError(t, err)
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		a := c.NewTensor(typ, 1024, 4)
		b := c.NewTensor(quant.F32, 1024, 4)
		out := c.AddCast(a, b, quant.F32)
		require.NoError(t, c.Err())
		require.Len(t, a.Data, len(raw))
		copy(a.Data, raw)
		for i := range 4096 {
			binary.LittleEndian.PutUint32(b.Data[4*i:], math.Float32bits(float32(i%7)-3))
		}
		require.NoError(t, e.ComputeNode(out), typ.String())
		for i := range 4096 {
			want := math.Float32frombits(binary.LittleEndian.Uint32(deq[4*i:])) + float32(i%7) - 3
			got := math.Float32frombits(binary.LittleEndian.Uint32(out.Data[4*i:]))
			require.Equal(t, want, got, "%s element %d", typ, i)
		}
	}
}
