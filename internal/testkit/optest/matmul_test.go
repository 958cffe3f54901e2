package optest

import (
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
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

// matmulOps are the case names of the matmul family.
var matmulOps = []string{"MUL_MAT", "MUL_MAT_HADAMARD", "MUL_MAT_ID", "OUT_PROD"}

// matmulSupportedByGGML reports whether ggml's CPU supports every product
// node of c, by cpu_support.csv's rule: MUL_MAT and MUL_MAT_ID with src1
// F32 or src0's vec_dot type, OUT_PROD with F32 src1 (and, but for F32
// src0, the same batch dimensions).
func matmulSupportedByGGML(c Case) bool {
	ctx := graph.NewContext(graph.ContextOptions{})
	g, err := ctx.Build(c.Build(ctx)...)
	if err != nil {
		return false
	}
	for _, n := range g.Nodes {
		a, b := n.Src[0], n.Src[1]
		switch n.Op {
		case ops.MulMat, ops.MulMatID:
			if b.Type != quant.F32 && b.Type != a.Type.VecDotType() {
				return false
			}
		case ops.OutProd:
			if b.Type != quant.F32 || a.Type != quant.F32 && (a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3]) {
				return false
			}
		}
	}
	return true
}

// TestMatmulNaive compares the family's cases (all of them with
// OPTEST_FULL=1) with a float64 product of the dequantized inputs, written
// independently of the CPU kernels' indexing: it checks shapes, broadcasts,
// permutations, views and expert selection, the tolerance absorbing the
// quantization of the activations.
func TestMatmulNaive(t *testing.T) {
	e := cpuBackend(t, 4)
	for _, c := range Cases(testFull(), matmulOps) {
		r := RunBackend(c, e, naiveMatmul{}, 3)
		if r.Status == Skipped && !matmulSupportedByGGML(c) {
			continue
		}
		require.Equal(t, Passed, r.Status, "%s: %s", c.Name, r.Detail)
	}
}

// naiveMatmul computes MUL_MAT, MUL_MAT_ID, OUT_PROD and ADD of same-shaped
// tensors element by element in float64 from Floats of the sources.
type naiveMatmul struct{}

func (naiveMatmul) Name() string { return "naive" }

func (naiveMatmul) Supports(g *graph.Graph) error {
	for _, n := range g.Nodes {
		switch n.Op {
		case ops.MulMat, ops.MulMatID, ops.OutProd, ops.Add, ops.View, ops.Permute, ops.Transpose:
		default:
			return fmt.Errorf("naiveMatmul: %s", n.Op)
		}
	}
	return nil
}

func (naiveMatmul) Compute(g *graph.Graph) error {
	for _, n := range g.Nodes {
		var src [3][]float32
		for i := range src {
			if s := n.Src[i]; s != nil && n.Op != ops.View && n.Op != ops.Permute && n.Op != ops.Transpose {
				v, err := Floats(s)
				if err != nil {
					return err
				}
				src[i] = v
			}
		}
		at := func(i int, i0, i1, i2, i3 int64) float64 {
			ne := n.Src[i].Ne
			return float64(src[i][i0+ne[0]*(i1+ne[1]*(i2+ne[2]*i3))])
		}
		out := make([]float32, n.NElements())
		a, b := n.Src[0], n.Src[1]
		for j := range out {
			i0 := int64(j) % n.Ne[0]
			i1 := int64(j) / n.Ne[0] % n.Ne[1]
			i2 := int64(j) / (n.Ne[0] * n.Ne[1]) % n.Ne[2]
			i3 := int64(j) / (n.Ne[0] * n.Ne[1] * n.Ne[2])
			var sum float64
			switch n.Op {
			case ops.MulMat:
				for k := range a.Ne[0] {
					sum += at(0, k, i0, i2/(b.Ne[2]/a.Ne[2]), i3/(b.Ne[3]/a.Ne[3])) * at(1, k, i1, i2, i3)
				}
			case ops.MulMatID:
				expert := int64(at(2, i1, i2, 0, 0))
				for k := range a.Ne[0] {
					sum += at(0, k, i0, expert, 0) * at(1, k, i1%b.Ne[1], i2, 0)
				}
			case ops.OutProd:
				for k := range a.Ne[1] {
					sum += at(0, i0, k, i2/(b.Ne[2]/a.Ne[2]), i3/(b.Ne[3]/a.Ne[3])) * at(1, i1, k, i2, i3)
				}
			case ops.Add:
				sum = at(0, i0, i1, i2, i3) + at(1, i0, i1, i2, i3)
			default:
				continue
			}
			out[j] = float32(sum)
		}
		if n.Op == ops.MulMat || n.Op == ops.MulMatID || n.Op == ops.OutProd || n.Op == ops.Add {
			if err := SetFloats(n, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestMatmulOracle multiplies the oracle's weights of every type (16 rows
// of 256, quantized by ggml) with its 1 and 8 activation rows and compares
// with what ggml 0.25.1's CPU backend computed from the same bytes.
func TestMatmulOracle(t *testing.T) {
	dir := filepath.Join(reftest.OracleDir(t), "matmul")
	x := readMatmulOracle(t, filepath.Join(dir, "x.f32"))
	e := cpu.New(cpu.Options{Threads: 2})
	defer e.Close()
	for _, typ := range quant.Types() {
		w, err := os.ReadFile(filepath.Join(dir, typ.String()+".w.bin"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		require.NoError(t, err)
		for _, n := range []int64{1, 8} {
			want := readMatmulOracle(t, filepath.Join(dir, fmt.Sprintf("%s.y_n%d.f32", typ, n)))
			ctx := graph.NewContext(graph.ContextOptions{Alloc: true})
			a := ctx.NewTensor(typ, 256, 16)
			b := ctx.NewTensor(quant.F32, 256, n)
			out := ctx.MulMat(a, b)
			require.NoError(t, ctx.Err())
			copy(a.Data, w)
			require.NoError(t, SetFloats(b, x[:256*n]))
			g, err := ctx.Build(out)
			require.NoError(t, err)
			require.NoError(t, e.Compute(g), "%s", typ)
			got, err := Floats(out)
			require.NoError(t, err)
			nmse := NMSE(want, got)
			require.LessOrEqual(t, nmse, 1e-6, "%s n=%d", typ, n)
			t.Logf("%-8s n=%d NMSE vs ggml %.2g", typ, n, nmse)
		}
	}
}

func readMatmulOracle(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// TestMatmulFullNames checks that the full case list holds every matmul
// case of cpu_support.csv by name, and counts them.
func TestMatmulFullNames(t *testing.T) {
	f, err := os.Open(filepath.Join(reftest.OracleDir(t), "cpu_support.csv"))
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	have := map[string]bool{}
	perOp := map[string]int{}
	for _, c := range Cases(true, matmulOps) {
		have[c.Name] = true
		perOp[OpNameOf(c.Name)]++
	}
	for _, rec := range recs[1:] {
		for _, o := range matmulOps {
			if rec[1] == o {
				require.True(t, have[o+"("+rec[2]+")"], "full cases lack %s(%s)", o, rec[2])
			}
		}
	}
	t.Logf("full cases per op: %v", perOp)
}

// TestMatmulBuilders checks the builders' shape and type checks: errors on
// the Context, never panics, and nothing built after the first error.
func TestMatmulBuilders(t *testing.T) {
	type build func(c *graph.Context) *graph.Tensor
	bad := map[string]struct {
		kind  error
		build build
	}{
		"mul_mat k mismatch": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMat(c.NewTensor(quant.F32, 4, 3), c.NewTensor(quant.F32, 5, 2))
		}},
		"mul_mat no broadcast": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMat(c.NewTensor(quant.F32, 4, 3, 2), c.NewTensor(quant.F32, 4, 2, 3))
		}},
		"mul_mat empty batch": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMat(c.NewTensor(quant.F32, 4, 3, 0), c.NewTensor(quant.F32, 4, 2, 3))
		}},
		"mul_mat transposed a": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMat(c.Transpose(c.NewTensor(quant.F32, 4, 4)), c.NewTensor(quant.F32, 4, 2))
		}},
		"mul_mat nil": {graph.ErrNil, func(c *graph.Context) *graph.Tensor {
			return c.MulMat(nil, c.NewTensor(quant.F32, 4, 2))
		}},
		"set_prec on add": {graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			a := c.NewTensor(quant.F32, 4)
			s := c.Add(a, a)
			c.MulMatSetPrec(s, ops.PrecF32)
			return s
		}},
		"set_hint on leaf": {graph.ErrArgument, func(c *graph.Context) *graph.Tensor {
			a := c.NewTensor(quant.F32, 4)
			c.MulMatSetHint(a, ops.HintSrc0IsHadamard)
			return a
		}},
		"mul_mat_id ids type": {graph.ErrType, func(c *graph.Context) *graph.Tensor {
			return c.MulMatID(c.NewTensor(quant.F32, 8, 4, 3), c.NewTensor(quant.F32, 8, 2, 5), c.NewTensor(quant.F32, 2, 5))
		}},
		"mul_mat_id 4d experts": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMatID(c.NewTensor(quant.F32, 8, 4, 3, 2), c.NewTensor(quant.F32, 8, 2, 5), c.NewTensor(quant.I32, 2, 5))
		}},
		"mul_mat_id 4d b": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMatID(c.NewTensor(quant.F32, 8, 4, 3), c.NewTensor(quant.F32, 8, 2, 5, 2), c.NewTensor(quant.I32, 2, 5))
		}},
		"mul_mat_id 3d ids": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMatID(c.NewTensor(quant.F32, 8, 4, 3), c.NewTensor(quant.F32, 8, 2, 5), c.NewTensor(quant.I32, 2, 5, 2))
		}},
		"mul_mat_id tokens": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMatID(c.NewTensor(quant.F32, 8, 4, 3), c.NewTensor(quant.F32, 8, 2, 5), c.NewTensor(quant.I32, 2, 4))
		}},
		"mul_mat_id k": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMatID(c.NewTensor(quant.F32, 8, 4, 3), c.NewTensor(quant.F32, 9, 2, 5), c.NewTensor(quant.I32, 2, 5))
		}},
		"mul_mat_id broadcast": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMatID(c.NewTensor(quant.F32, 8, 4, 3), c.NewTensor(quant.F32, 8, 2, 5), c.NewTensor(quant.I32, 3, 5))
		}},
		"mul_mat_id empty b": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.MulMatID(c.NewTensor(quant.F32, 8, 4, 3), c.NewTensor(quant.F32, 8, 0, 5), c.NewTensor(quant.I32, 3, 5))
		}},
		"out_prod k mismatch": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.OutProd(c.NewTensor(quant.F32, 4, 3), c.NewTensor(quant.F32, 5, 2))
		}},
		"out_prod no broadcast": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.OutProd(c.NewTensor(quant.F32, 4, 3, 1, 2), c.NewTensor(quant.F32, 5, 3, 1, 3))
		}},
		"out_prod transposed a": {graph.ErrShape, func(c *graph.Context) *graph.Tensor {
			return c.OutProd(c.Transpose(c.NewTensor(quant.F32, 3, 4)), c.NewTensor(quant.F32, 5, 3))
		}},
	}
	for name, tc := range bad {
		c := graph.NewContext(graph.ContextOptions{})
		require.NotPanics(t, func() { tc.build(c) }, name)
		require.ErrorIs(t, c.Err(), tc.kind, name)
		require.Nil(t, c.MulMat(c.NewTensor(quant.F32, 4, 3), c.NewTensor(quant.F32, 4, 2)), "%s: a builder after the error", name)
	}

	c := graph.NewContext(graph.ContextOptions{})
	a := c.NewTensor(quant.Q4_0, 64, 3, 2, 1)
	b := c.NewTensor(quant.F32, 64, 5, 4, 3)
	mmOut := c.MulMat(a, b)
	c.MulMatSetPrec(mmOut, ops.PrecF32)
	c.MulMatSetHint(mmOut, ops.HintSrc0IsHadamard)
	id := c.MulMatID(c.NewTensor(quant.F16, 8, 6, 4), c.NewTensor(quant.F32, 8, 1, 7), c.NewTensor(quant.I32, 3, 7))
	op := c.OutProd(c.NewTensor(quant.F32, 6, 9, 2, 1), c.Transpose(c.NewTensor(quant.F32, 9, 5, 4, 3)))
	require.NoError(t, c.Err())
	require.Equal(t, [4]int64{3, 5, 4, 3}, mmOut.Ne)
	require.Equal(t, quant.F32, mmOut.Type)
	require.Equal(t, ops.MulMatParams{Prec: ops.PrecF32, Hint: ops.HintSrc0IsHadamard}, ops.MulMatParamsOf(mmOut.Params))
	require.EqualValues(t, 10, mmOut.Params.I32(0), "prec in slot 0 as ggml")
	require.EqualValues(t, 1, mmOut.Params.I32(1), "hint in slot 1 as ggml")
	require.Equal(t, [4]int64{6, 3, 7, 1}, id.Ne)
	require.Equal(t, ops.MulMatID, id.Op)
	require.NotNil(t, id.Src[2])
	require.Equal(t, [4]int64{6, 5, 4, 3}, op.Ne)
	require.Equal(t, ops.OutProd, op.Op)
}
