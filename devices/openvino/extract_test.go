package openvino

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// decodeLayout evaluates an extracted layout as the IR's decompression
// subgraph does: (w - zp) * scale per group (f16 arithmetic aside).
func decodeLayout(t *graph.Tensor, l extractedLayout, mem []byte) []float32 {
	n := int(t.NElements())
	out := make([]float32, n)
	get := func(et elemType, b []byte, i int) float32 {
		switch et {
		case etU4:
			return float32((b[i/2] >> (4 * (i % 2))) & 0xf)
		case etI4:
			return float32(int8(((b[i/2]>>(4*(i%2)))&0xf)<<4) >> 4)
		case etF4E2M1:
			v := (b[i/2] >> (4 * (i % 2))) & 0xf
			mag := [8]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}[v&7]
			if v&8 != 0 {
				return -mag
			}
			return mag
		case etU8:
			return float32(b[i])
		case etI8:
			return float32(int8(b[i]))
		case etF16:
			return quant.FP16ToFP32(binary.LittleEndian.Uint16(b[2*i:]))
		case etF32:
			return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		case etF8E8M0:
			return float32(math.Ldexp(1, int(b[i])-127))
		}
		panic(et)
	}
	w, sc, zp := mem[l.weightsOff:], mem[l.scalesOff:], mem[l.zpOff:]
	for i := 0; i < n; i++ {
		if l.requant == requantF16 {
			out[i] = get(etF16, w, i)
			continue
		}
		g := i / int(l.group)
		z := float32(0)
		if !l.symmetric {
			zt := l.wtype
			if l.zpF16 {
				zt = l.zpType
			}
			z = get(zt, zp, g)
		}
		out[i] = (get(l.wtype, w, i) - z) * get(l.scaleType, sc, g)
	}
	return out
}

func randomWeight(t *testing.T, ty quant.Type, rows, cols int64, name string, r *rand.Rand) (*graph.Tensor, []byte, []float32) {
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	q, err := quant.Quantize(ty, x, int(rows), int(cols), nil)
	require.NoError(t, err)
	w := mk(ops.None, ty, cols, rows)
	w.Name = name
	ref, err := quant.Dequantize(ty, q, len(x))
	require.NoError(t, err)
	return w, q, ref
}

func nmse(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i] - b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	return num / den
}

// Every type upstream extracts (and each requant), on each device kind:
// get-tensor's bytes are the original ones, and the layout decodes to
// ggml's values (exactly where the conversion is exact; within
// upstream's zero-point and requant rounding otherwise).
func TestExtractRoundTrip(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	cases := []struct {
		ty    quant.Type
		name  string
		kind  Kind
		exact bool
		tol   float64
		want  requantType
		// requant is false for the direct layouts used for inputs
		requant bool
	}{
		{quant.Q4_0, "blk.0.attn_q.weight", KindCPU, true, 0, requantNone, true},
		{quant.Q8_0, "blk.0.ffn_up.weight", KindGPU, true, 0, requantNone, true},
		{quant.MXFP4, "blk.0.ffn_down.weight", KindCPU, true, 0, requantNone, true},
		{quant.Q4_1, "w", KindCPU, false, 1e-5, requantNone, true},
		{quant.Q5_1, "w", KindCPU, false, 1e-5, requantNone, true},
		{quant.Q4_K, "w", KindCPU, false, 1e-12, requantNone, true},
		{quant.Q6_K, "w", KindCPU, false, 1e-12, requantNone, true},
		{quant.Q5_K, "w", KindGPU, false, 1e-12, requantNone, true},
		{quant.Q4_0, "token_embd.weight", KindCPU, false, 1e-4, requantQ8_0C, true},
		{quant.Q8_0, "output.weight", KindCPU, false, 1e-4, requantQ8_0C, true},
		{quant.Q6_K, "token_embd.weight", KindNPU, false, 1e-6, requantF16, true},
		{quant.Q8_0, "blk.1.attn_k.weight", KindNPU, false, 2e-2, requantQ4_0_128, true},
		{quant.Q6_K, "w", KindCPU, false, 1e-6, requantNone, false},
		{quant.Q5_K, "w", KindCPU, false, 1e-5, requantNone, false},
		{quant.Q4_0, "token_embd.weight", KindNPU, true, 0, requantNone, false},
	}
	for _, c := range cases {
		t.Run(c.ty.String()+"/"+c.name+"/"+c.kind.String(), func(t *testing.T) {
			w, src, ref := randomWeight(t, c.ty, 6, 512, c.name, r)
			l, ok := layoutFor(w, c.kind, c.requant)
			require.True(t, ok)
			require.Equal(t, c.want, l.requant)
			require.Equal(t, c.exact, l.exact)
			require.GreaterOrEqual(t, l.total, w.NBytes())
			mem := make([]byte, l.total)
			require.NoError(t, extract(w, l, src, mem))
			back := make([]byte, w.NBytes())
			require.NoError(t, restore(w, l, mem, back))
			require.Equal(t, src, back, "get-tensor must return the original bytes")
			got := decodeLayout(w, l, mem)
			if c.exact {
				require.Equal(t, ref, got)
			} else {
				require.Less(t, nmse(got, ref), c.tol)
			}
		})
	}
}

func TestLayoutSizes(t *testing.T) {
	w := mk(ops.None, quant.Q4_0, 4096, 32)
	l, ok := layoutFor(w, KindCPU, true)
	require.True(t, ok)
	n := uint64(4096 * 32)
	require.Equal(t, n/2, l.weightsLen)
	require.Equal(t, align64(n/2), l.scalesOff)
	require.Equal(t, n/32*2, l.scalesLen)
	require.Equal(t, l.scalesOff+align64(l.scalesLen), l.zpOff)
	require.Zero(t, l.zpLen)
	require.Equal(t, max(l.zpOff, w.NBytes()), l.total)

	q41 := mk(ops.None, quant.Q4_1, 64, 3)
	l, _ = layoutFor(q41, KindCPU, true)
	require.Equal(t, uint64(64*3/32*2), l.zpLen, "f16 zero points")
	require.Equal(t, align64(max(l.zpOff+l.zpLen, q41.NBytes()))+q41.NBytes(), l.total, "room for the original bytes")

	for _, ty := range []quant.Type{quant.F16, quant.F32, quant.Q5_0, quant.IQ4_NL} {
		_, ok := layoutFor(mk(ops.None, ty, 256, 2), KindCPU, true)
		require.False(t, ok, ty.String())
	}
	_, ok = layoutFor(mk(ops.None, quant.Q4_0, 32, 2, 2, 2), KindCPU, true)
	require.False(t, ok, "4-D")
	_, ok = layoutFor(mk(ops.None, quant.MXFP4, 32, 2, 4), KindCPU, true)
	require.True(t, ok, "3-D MXFP4 experts are converted too")
	l, ok = layoutFor(mk(ops.None, quant.Q4_1, 32, 2, 4), KindCPU, true)
	require.True(t, ok)
	require.True(t, l.zpF16, "3-D experts have f16 zero points")
}
