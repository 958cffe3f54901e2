package openvino

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

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
// the layout decodes to ggml's values (exactly where the conversion is
// exact; within upstream's zero-point, f16-scale and requant rounding
// otherwise), and get-tensor's bytes are the original ones where the
// conversion is exact, else the converted values in ggml's format.
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
		// getTol bounds get-tensor's values against the converted ones
		getTol float64
		want   requantType
		// requant is noRequant for the direct layouts used for inputs
		requant requantPolicy
	}{
		{quant.Q4_0, "blk.0.attn_q.weight", KindCPU, true, 0, 0, requantNone, defaultRequant},
		{quant.Q8_0, "blk.0.ffn_up.weight", KindGPU, true, 0, 0, requantNone, defaultRequant},
		{quant.MXFP4, "blk.0.ffn_down.weight", KindCPU, true, 0, 0, requantNone, defaultRequant},
		{quant.Q4_1, "w", KindCPU, false, 1e-5, 1e-5, requantNone, defaultRequant},
		{quant.Q5_1, "w", KindCPU, false, 5e-3, 1e-5, requantNone, defaultRequant},
		{quant.Q4_K, "w", KindCPU, false, 2e-2, 1e-3, requantNone, defaultRequant},
		{quant.Q6_K, "w", KindCPU, false, 1e-6, 1e-6, requantNone, "native"},
		{quant.Q5_K, "w", KindGPU, false, 5e-3, 1e-3, requantNone, "native"},
		{quant.Q6_K, "w", KindCPU, false, 1e-4, 1e-2, requantQ8_0C, defaultRequant},
		{quant.Q5_K, "w", KindGPU, false, 1e-4, 1e-2, requantQ8_0C, defaultRequant},
		{quant.Q4_K, "w", KindCPU, false, 2e-2, 1e-2, requantQ4_0_128, "q4_sym128"},
		{quant.Q5_1, "w", KindCPU, false, 2e-2, 1e-2, requantQ4_0_128, "q4_sym128_all"},
		{quant.Q4_0, "token_embd.weight", KindCPU, false, 1e-4, 1e-2, requantQ8_0C, defaultRequant},
		{quant.Q8_0, "output.weight", KindCPU, false, 1e-4, 1e-2, requantQ8_0C, defaultRequant},
		{quant.Q6_K, "token_embd.weight", KindNPU, false, 1e-6, 1e-2, requantF16, defaultRequant},
		{quant.Q8_0, "blk.1.attn_k.weight", KindNPU, false, 2e-2, 1e-2, requantQ4_0_128, defaultRequant},
		{quant.Q6_K, "w", KindCPU, false, 1e-6, 1e-2, requantNone, noRequant},
		{quant.Q5_K, "w", KindCPU, false, 1e-5, 1e-2, requantNone, noRequant},
		{quant.Q4_0, "token_embd.weight", KindNPU, true, 0, 0, requantNone, noRequant},
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
			got, err := decode(w, l, mem)
			require.NoError(t, err)
			if c.exact {
				require.Equal(t, src, back, "get-tensor must return the original bytes")
				require.Equal(t, ref, got)
				return
			}
			e := nmse(got, ref)
			t.Logf("converted values against ggml's: nmse %.2g", e)
			require.Less(t, e, c.tol)
			// get-tensor: the converted values in t's format, so within
			// one more quantization of them.
			backF, err := quant.Dequantize(c.ty, back, len(ref))
			require.NoError(t, err)
			require.Less(t, nmse(backF, got), c.getTol, "get-tensor's bytes hold the converted values")
		})
	}
}

// TestLayoutSizes is the memory a 4096x4096 weight takes in a WEIGHTS
// buffer: ours (AllocSize's layout) is upstream's ggml_openvino_get_extracted_layout
// (ggml-openvino-extra.cpp, ggml-org/ggml d99724f2): weights n/2 (4-bit)
// or n bytes, f16 scales (MXFP4 e8m0) per group, packed u4/u8 zero points,
// each part 64-byte aligned, at least ggml's bytes. The table's figures are
// worked out from that formula by hand; ggml's are its block sizes. The
// same figures are the devices/openvino README's table.
func TestLayoutSizes(t *testing.T) {
	const n = 4096 * 4096
	for _, c := range []struct {
		ty     quant.Type
		name   string
		kind   Kind
		policy requantPolicy
		parts  uint64 // weights + scales + zero points, upstream's layout
		ggml   uint64
		// ours, when non-zero, is our size where we deliberately differ
		// (Q4_K's, Q5_1's and Q5_K's exact f16 zero points, layoutFor).
		ours uint64
	}{
		{quant.Q4_0, "w", KindCPU, defaultRequant, n/2 + n/32*2, n / 32 * 18, 0},
		{quant.Q8_0, "w", KindCPU, defaultRequant, n + n/32*2, n / 32 * 34, 0},
		{quant.MXFP4, "w", KindCPU, defaultRequant, n/2 + n/32, n / 32 * 17, 0},
		{quant.Q4_1, "w", KindCPU, defaultRequant, n/2 + n/32*2 + n/64, n / 32 * 20, 0},
		{quant.Q5_1, "w", KindCPU, defaultRequant, n + n/32*2 + n/32, n / 32 * 24, n + n/32*2 + n/32*2},
		{quant.Q4_K, "w", KindCPU, defaultRequant, n/2 + n/32*2 + n/64, n / 256 * 144, n/2 + n/32*2 + n/32*2},
		{quant.Q5_K, "w", KindCPU, "native", n + n/32*2 + n/32, n / 256 * 176, n + n/32*2 + n/32*2},
		{quant.Q6_K, "w", KindCPU, "native", n + n/16*2, n / 256 * 210, 0},
		{quant.Q6_K, "w", KindCPU, defaultRequant, n + 4096*2, n / 256 * 210, 0},            // Q8_0_C
		{quant.Q4_K, "w", KindCPU, "q4_sym128", n/2 + n/128*2, n / 256 * 144, 0},            // Q4_0_128
		{quant.Q6_K, "token_embd.weight", KindNPU, defaultRequant, 2 * n, n / 256 * 210, 0}, // F16
	} {
		w := mk(ops.None, c.ty, 4096, 4096)
		w.Name = c.name
		l, ok := layoutFor(w, c.kind, c.policy)
		require.True(t, ok)
		require.Equal(t, c.ggml, w.NBytes())
		upstream := max(c.parts, c.ggml) // total_size: at least ggml_nbytes
		want := upstream
		if c.ours != 0 {
			want = c.ours
		}
		require.Equal(t, want, l.total, "%v %s %q: ours %d, upstream's %d", c.ty, l.requant, c.policy, l.total, upstream)
		t.Logf("%-6v %-9s ours %6.2f MB  upstream %6.2f MB  ggml %6.2f MB", c.ty, l.requant, float64(l.total)/1e6, float64(upstream)/1e6, float64(c.ggml)/1e6)
	}

	w := mk(ops.None, quant.Q4_0, 4096, 32)
	l, ok := layoutFor(w, KindCPU, defaultRequant)
	require.True(t, ok)
	require.Equal(t, align64(uint64(4096*32/2)), l.scalesOff)
	require.Equal(t, l.scalesOff+align64(l.scalesLen), l.zpOff)
	require.Zero(t, l.zpLen)

	// Q4_K keeps exact f16 zero points (our deviation: upstream's packed
	// u4 ones fail test-backend-ops' MUL_MAT tolerance on the real CPU
	// plugin), as inputs converted at graph build do, and so does Q4_1,
	// whose ggml bytes hold them (also for a small weight, at the cost of
	// alignment padding).
	q4k := mk(ops.None, quant.Q4_K, 256, 1)
	l, _ = layoutFor(q4k, KindCPU, defaultRequant)
	require.Equal(t, uint64(16), l.zpLen, "8 f16 zero points")
	l, _ = layoutFor(q4k, KindCPU, noRequant)
	require.Equal(t, uint64(16), l.zpLen, "8 f16 zero points")
	q41 := mk(ops.None, quant.Q4_1, 32, 16)
	l, _ = layoutFor(q41, KindCPU, defaultRequant)
	require.Equal(t, uint64(2*16), l.zpLen, "16 f16 zero points")
	require.Equal(t, uint64(320+32), l.total, "ggml's 320 bytes and 32 of padding")

	for _, ty := range []quant.Type{quant.F16, quant.F32, quant.Q5_0, quant.IQ4_NL} {
		_, ok := layoutFor(mk(ops.None, ty, 256, 2), KindCPU, defaultRequant)
		require.False(t, ok, ty.String())
	}
	_, ok = layoutFor(mk(ops.None, quant.Q4_0, 32, 2, 2, 2), KindCPU, defaultRequant)
	require.False(t, ok, "4-D")
	_, ok = layoutFor(mk(ops.None, quant.MXFP4, 32, 2, 4), KindCPU, defaultRequant)
	require.True(t, ok, "3-D MXFP4 experts are converted too")
	l, ok = layoutFor(mk(ops.None, quant.Q4_1, 32, 2, 4), KindCPU, defaultRequant)
	require.True(t, ok)
	require.Equal(t, uint64(2*8), l.zpLen, "3-D experts have f16 zero points")
}

// TestRequantPolicy is the layout each weight gets on each device kind, as
// upstream's ggml_openvino_get_requant_type, and under each accepted
// GGML_OPENVINO_REQUANT_KQUANT value.
func TestRequantPolicy(t *testing.T) {
	w := func(ty quant.Type, name string, ne ...int64) *graph.Tensor {
		x := mk(ops.None, ty, ne...)
		x.Name = name
		return x
	}
	cases := []struct {
		t             *graph.Tensor
		p             requantPolicy
		cpu, gpu, npu requantType
	}{
		{w(quant.Q6_K, "blk.0.ffn_down.weight", 256, 4), defaultRequant, requantQ8_0C, requantQ8_0C, requantQ4_0_128},
		{w(quant.Q5_K, "blk.0.ffn_down.weight", 256, 4), defaultRequant, requantQ8_0C, requantQ8_0C, requantQ4_0_128},
		{w(quant.Q4_K, "blk.0.attn_q.weight", 256, 4), defaultRequant, requantNone, requantNone, requantQ4_0_128},
		{w(quant.Q4_0, "blk.0.attn_q.weight", 256, 4), defaultRequant, requantNone, requantNone, requantQ4_0_128},
		{w(quant.Q8_0, "blk.0.attn_q.weight", 256, 4), defaultRequant, requantNone, requantNone, requantQ4_0_128},
		{w(quant.Q4_1, "blk.0.attn_q.weight", 96, 4), defaultRequant, requantNone, requantNone, requantNone},
		{w(quant.Q6_K, "token_embd.weight", 256, 4), defaultRequant, requantQ8_0C, requantQ8_0C, requantF16},
		{w(quant.Q4_0, "token_embd.weight", 256, 4), defaultRequant, requantQ8_0C, requantQ8_0C, requantQ8_0C},
		{w(quant.Q4_K, "output.weight", 256, 4), defaultRequant, requantQ8_0C, requantQ8_0C, requantQ8_0C},
		// 3-D experts: Q5_1 and Q8_0 to Q4_0 in groups of 64 on the GPU.
		{w(quant.Q5_1, "blk.0.ffn_up_exps.weight", 128, 4, 8), defaultRequant, requantNone, requantQ4_0_64, requantQ4_0_128},
		{w(quant.Q8_0, "blk.0.ffn_up_exps.weight", 64, 4, 8), defaultRequant, requantNone, requantQ4_0_64, requantNone},
		{w(quant.Q8_0, "blk.0.ffn_up.weight", 64, 4), defaultRequant, requantNone, requantNone, requantNone},
		{w(quant.F16, "blk.0.attn_q.weight", 256, 4), defaultRequant, requantNone, requantNone, requantNone},
		// native keeps K-quants; the name rules and the NPU stay.
		{w(quant.Q6_K, "blk.0.ffn_down.weight", 256, 4), "native", requantNone, requantNone, requantQ4_0_128},
		{w(quant.Q6_K, "output.weight", 256, 4), "native", requantQ8_0C, requantQ8_0C, requantQ8_0C},
		{w(quant.Q4_K, "blk.0.attn_q.weight", 256, 4), "q4_sym128", requantQ4_0_128, requantQ4_0_128, requantQ4_0_128},
		{w(quant.Q8_0, "blk.0.attn_q.weight", 256, 4), "q4_sym128", requantNone, requantNone, requantQ4_0_128},
		{w(quant.Q8_0, "blk.0.attn_q.weight", 256, 4), "q4_sym128_all", requantQ4_0_128, requantQ4_0_128, requantQ4_0_128},
		// Inputs converted at graph build are never requantized.
		{w(quant.Q6_K, "blk.0.ffn_down.weight", 256, 4), noRequant, requantNone, requantNone, requantNone},
	}
	for _, c := range cases {
		for k, want := range map[Kind]requantType{KindCPU: c.cpu, KindGPU: c.gpu, KindNPU: c.npu} {
			require.Equal(t, want, requantFor(c.t, k, c.p), "%s %s ne %v on %s with %q", c.t.Type, c.t.Name, c.t.Ne, k, c.p)
		}
	}
	_, err := optionsFrom(envMap(map[string]string{EnvPrefix + "REQUANT_KQUANT": "q4_asym64"}))
	require.ErrorContains(t, err, `GGML_OPENVINO_REQUANT_KQUANT="q4_asym64": not supported`)
}

// TestWeightConfig: the CPU turns off the plugin's dynamic quantization of
// activations (its effect on the real CPU plugin is TestOpenVINORealModels'
// Q8_0 bound in package model); the GPU and NPU keep their plugins'
// defaults.
func TestWeightConfig(t *testing.T) {
	require.Equal(t, [][2]string{{"DYNAMIC_QUANTIZATION_GROUP_SIZE", "0"}}, (&runtimeCtx{kind: KindCPU}).weightConfig())
	require.Empty(t, (&runtimeCtx{kind: KindGPU}).weightConfig())
	require.Empty(t, (&runtimeCtx{kind: KindNPU}).weightConfig())
}

// TestRequantizeInChunks: requantize works a few rows at a time (not the
// whole tensor in f32); every row of a tensor of several chunks, with
// rows whose length is not a multiple of the group, must hold the bytes
// that requantizing that row alone gives.
func TestRequantizeInChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	cases := []struct {
		ty         quant.Type
		name       string
		kind       Kind
		rows, cols int64
		want       requantType
	}{
		{quant.Q8_0, "output.weight", KindCPU, 300, 96, requantQ8_0C},           // group = row: 2 chunks
		{quant.Q8_0, "blk.0.attn_k.weight", KindNPU, 300, 384, requantQ4_0_128}, // 5 chunks
		{quant.Q6_K, "token_embd.weight", KindNPU, 70, 256, requantF16},
	}
	for _, c := range cases {
		t.Run(c.ty.String()+"/"+c.name, func(t *testing.T) {
			w, src, _ := randomWeight(t, c.ty, c.rows, c.cols, c.name, r)
			l, ok := layoutFor(w, c.kind, defaultRequant)
			require.True(t, ok)
			require.Equal(t, c.want, l.requant)
			mem := make([]byte, l.total)
			require.NoError(t, extract(w, l, src, mem))
			rowBytes := int(c.ty.RowSize(c.cols))
			for i := int64(0); i < c.rows; i++ {
				row := mk(ops.None, c.ty, c.cols, 1)
				row.Name = c.name
				rl, ok := layoutFor(row, c.kind, defaultRequant)
				require.True(t, ok)
				one := make([]byte, rl.total)
				require.NoError(t, extract(row, rl, src[int(i)*rowBytes:int(i+1)*rowBytes], one))
				wb, sb := int64(rl.weightsLen), int64(rl.scalesLen)
				if l.requant == requantQ4_0_128 {
					wb = c.cols / 2
					sb = 2 * c.cols / l.group
				} else if l.requant == requantQ8_0C {
					sb = 2
				}
				require.Equal(t, one[rl.weightsOff:rl.weightsOff+uint64(wb)], mem[l.weightsOff+uint64(i*wb):l.weightsOff+uint64((i+1)*wb)], "row %d weights", i)
				if l.scalesLen > 0 {
					require.Equal(t, one[rl.scalesOff:rl.scalesOff+uint64(sb)], mem[l.scalesOff+uint64(i*sb):l.scalesOff+uint64((i+1)*sb)], "row %d scales", i)
				}
			}
		})
	}
}
