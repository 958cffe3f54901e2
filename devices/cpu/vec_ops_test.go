package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// vecOpRuns computes out once with each set of primitives in sets (the
// sources restored in between, for in-place operations) and returns each
// run's result bytes; vec is restored afterwards.
func vecOpRuns(t *testing.T, out *graph.Tensor, sets ...vecKernels) [][]byte {
	t.Helper()
	saved := vec
	defer func() { vec = saved }()
	var srcs [][]byte
	for _, s := range out.Src {
		if s != nil {
			srcs = append(srcs, append([]byte(nil), s.Data...))
		}
	}
	e := New(Options{Threads: 2})
	defer e.Close()
	var res [][]byte
	for _, set := range sets {
		i := 0
		for _, s := range out.Src {
			if s != nil {
				copy(s.Data, srcs[i])
				i++
			}
		}
		vec = set
		require.NoError(t, e.ComputeNode(out))
		res = append(res, append([]byte(nil), out.Data...))
	}
	return res
}

func fillF32(r *rand.Rand, t *graph.Tensor, scale float64) {
	for i := 0; i+4 <= len(t.Data); i += 4 {
		binary.LittleEndian.PutUint32(t.Data[i:], math.Float32bits(float32(r.NormFloat64()*scale)))
	}
}

func fillF16(r *rand.Rand, t *graph.Tensor) {
	for i := 0; i+2 <= len(t.Data); i += 2 {
		binary.LittleEndian.PutUint16(t.Data[i:], quant.FP32ToFP16(float32(r.NormFloat64())))
	}
}

// TestVecOpsFlashAttn: FLASH_ATTN_EXT with F16 K and V (views of a longer
// cache, so rows are further apart than their length), grouped heads, a
// mask with masked keys or none, ALiBi and the logit softcap, computed with
// the processor's primitives: bit for bit what the same primitives give
// with the attention steps composed of them (the fused kernels promise
// the same arithmetic), and within float rounding of the portable
// primitives. Where the reference ggml cannot run (arm64 under qemu) this
// is the operation-level check of the assembly.
func TestVecOpsFlashAttn(t *testing.T) {
	t.Logf("vector primitives: %s", vec.name)
	r := rand.New(rand.NewPCG(31, 7))
	for _, tc := range []struct {
		dk, dv, nq, nkv, heads, kvHeads, pad int64
		mask                                 bool
		maxBias, softcap                     float32
	}{
		{64, 64, 3, 37, 4, 2, 8, true, 0, 0},
		{128, 128, 1, 130, 2, 1, 0, true, 0, 0},
		{72, 72, 4, 20, 2, 2, 3, false, 0, 0},
		{80, 65, 2, 33, 4, 4, 0, true, 8, 0},
		{64, 64, 2, 17, 2, 1, 5, true, 0, 30},
		{7, 9, 3, 5, 1, 1, 1, true, 0, 0},
	} {
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		q := c.NewTensor(quant.F32, tc.dk, tc.nq, tc.heads, 1)
		kc := c.NewTensor(quant.F16, tc.dk, tc.nkv+tc.pad, tc.kvHeads, 1)
		vc := c.NewTensor(quant.F16, tc.dv, tc.nkv+tc.pad, tc.kvHeads, 1)
		k := c.View3D(kc, tc.dk, tc.nkv, tc.kvHeads, kc.Nb[1], kc.Nb[2], 0)
		v := c.View3D(vc, tc.dv, tc.nkv, tc.kvHeads, vc.Nb[1], vc.Nb[2], 0)
		var mask *graph.Tensor
		if tc.mask {
			mask = c.NewTensor(quant.F16, tc.nkv, tc.nq, 1, 1)
		}
		out := c.FlashAttnExt(q, k, v, mask, 1/float32(math.Sqrt(float64(tc.dk))), tc.maxBias, tc.softcap)
		require.NoError(t, c.Err())
		fillF32(r, q, 1)
		fillF16(r, kc)
		fillF16(r, vc)
		if mask != nil {
			for i := 0; i < len(mask.Data); i += 2 {
				m := float32(0)
				switch r.IntN(4) {
				case 0:
					m = float32(math.Inf(-1))
				case 1:
					m = -float32(r.Float64() * 4)
				}
				binary.LittleEndian.PutUint16(mask.Data[i:], quant.FP32ToFP16(m))
			}
		}
		res := vecOpRuns(t, out, vec, composeAttn(vec), genericVec)
		requireSameBytes(t, res[1], res[0], "%+v: fused steps against composed ones", tc)
		got, want := bytesF32(res[0]), bytesF32(res[2])
		var num, den float64
		for i := range want {
			d := float64(got[i]) - float64(want[i])
			num += d * d
			den += float64(want[i]) * float64(want[i])
		}
		// The portable primitives sum the dot products in another order
		// and round the fp16 accumulators twice where the assembly fuses:
		// NMSE 1e-9 here, far below test-backend-ops' 5e-4 (a wrong row
		// or weight gives near 1).
		require.Less(t, num/den, 1e-7, "%+v: against the portable primitives", tc)
	}
}

// requireSameBytes: two results are the same bytes; a difference is
// reported at the first byte that differs.
func requireSameBytes(t *testing.T, want, got []byte, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s: byte %d of %d is %#x, want %#x", fmt.Sprintf(msg, args...), i, len(want), got[i], want[i])
		}
	}
}

func bytesF32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// TestVecOpsRope: ROPE on F32 and F16 rows is bit for bit ggml's: the
// portable primitives its x64 build's, the AVX2 ones its haswell build's
// (glibc's sincosf, libcSincosf, and the builds' rotations): both modes,
// a partial rotation, YaRN with frequency factors, the multi-section
// mode, the inverse (ROPE_BACK), in place, over positions up to a long
// context.
func TestVecOpsRope(t *testing.T) {
	variants := vexpVariants(t)
	r := rand.New(rand.NewPCG(5, 17))
	yarn := func(nd int32, mode ops.RopeMode) ops.RopeParams {
		p := ops.DefaultRopeParams(nd, mode)
		p.NCtxOrig, p.FreqBase, p.FreqScale, p.ExtFactor, p.AttnFactor, p.BetaFast, p.BetaSlow = 4096, 500000, 0.25, 1, 1, 32, 1
		return p
	}
	for _, tc := range []struct {
		name    string
		typ     quant.Type
		ne0, nd int64
		build   func(c *graph.Context, a, pos, freq *graph.Tensor, nd int32) *graph.Tensor
	}{
		{"normal", quant.F32, 64, 64, func(c *graph.Context, a, pos, _ *graph.Tensor, nd int32) *graph.Tensor {
			return c.Rope(a, pos, nd, ops.RopeNormal)
		}},
		{"neox", quant.F32, 128, 128, func(c *graph.Context, a, pos, _ *graph.Tensor, nd int32) *graph.Tensor {
			return c.Rope(a, pos, nd, ops.RopeNeox)
		}},
		{"neox partial in place", quant.F32, 80, 36, func(c *graph.Context, a, pos, _ *graph.Tensor, nd int32) *graph.Tensor {
			return c.RopeInplace(a, pos, nd, ops.RopeNeox)
		}},
		{"normal yarn freq", quant.F32, 96, 90, func(c *graph.Context, a, pos, freq *graph.Tensor, nd int32) *graph.Tensor {
			return c.RopeExt(a, pos, freq, yarn(nd, ops.RopeNormal))
		}},
		{"neox yarn freq back", quant.F32, 64, 64, func(c *graph.Context, a, pos, freq *graph.Tensor, nd int32) *graph.Tensor {
			return c.RopeExtBack(a, pos, freq, yarn(nd, ops.RopeNeox))
		}},
		{"neox f16", quant.F16, 64, 64, func(c *graph.Context, a, pos, _ *graph.Tensor, nd int32) *graph.Tensor {
			return c.Rope(a, pos, nd, ops.RopeNeox)
		}},
		{"mrope", quant.F32, 128, 128, func(c *graph.Context, a, _, freq *graph.Tensor, nd int32) *graph.Tensor {
			p := yarn(nd, ops.RopeMRope)
			p.Sections = [ops.RopeSections]int32{16, 24, 24, 0}
			pos4 := c.NewTensor(quant.I32, 4*a.Ne[2])
			for i := 0; i < len(pos4.Data); i += 4 {
				binary.LittleEndian.PutUint32(pos4.Data[i:], uint32(r.IntN(1<<15)))
			}
			return c.RopeMulti(a, pos4, freq, p)
		}},
	} {
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		const heads, tokens = 3, 9
		a := c.NewTensor(tc.typ, tc.ne0, heads, tokens)
		pos := c.NewTensor(quant.I32, tokens)
		freq := c.NewTensor(quant.F32, tc.nd/2)
		out := tc.build(c, a, pos, freq, int32(tc.nd))
		require.NoError(t, c.Err(), tc.name)
		if tc.typ == quant.F32 {
			fillF32(r, a, 1)
		} else {
			fillF16(r, a)
		}
		for i := 0; i < len(pos.Data); i += 4 {
			binary.LittleEndian.PutUint32(pos.Data[i:], uint32(r.IntN(1<<17)))
		}
		for i := 0; i < len(freq.Data); i += 4 {
			binary.LittleEndian.PutUint32(freq.Data[i:], math.Float32bits(1+3*r.Float32()))
		}
		for _, v := range variants {
			requireGGMLBits(t, ggmlVariant(t, v.variant), out, v.set, v.variant+" "+tc.name)
		}
	}
}
