package hexagon

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

func mmNode(op htp.Op, w, x, dst *graph.Tensor) *opNode {
	n := &opNode{op: op}
	n.inputs[0], n.inputs[1], n.outputs[0] = w, x, dst
	return n
}

// TestSolveMatMulQuant pins the quantized HVX block for Q4_0 weights
// (256 x 64) and three f32 activation rows on 6 threads, worked out by
// hand from the snapshot's planner: fewer rows than threads picks the
// block-parallel kernel; the prefetch depth halves from 16 until the plan
// fits; past depth 2 the flat kernel takes over.
func TestSolveMatMulQuant(t *testing.T) {
	n := mmNode(htp.OpMulMat, tensorOf(quant.Q4_0, 256, 64), tensorOf(quant.F32, 256, 3), tensorOf(quant.F32, 64, 3))
	const tileRow = 256 / 32 * 640 // one output row's tiles in VTCM
	const act = 256 / 32 * 1152    // a Q8_0-tiled activation row
	const scratch = 1024 * 6       // an f32 row per thread, 512-aligned
	kp := solveMatMul(n, 6, 8<<20, false, true)
	require.Equal(t, uint32(mmHVXQuantBlock), kp.KernelType)
	require.Equal(t, [3]uint32{16, 576, 640}, [3]uint32{kp.NPrefetch, kp.TileSize, kp.AlignedTileSize})
	require.Equal(t, uint32(act), kp.Src1RowSize)
	require.Equal(t, [3]uint32{16 * tileRow * 6, 3 * act, scratch}, [3]uint32{kp.VtcmSrc0Size, kp.VtcmSrc1Size, kp.VtcmDstSize})
	require.Equal(t, uint32(16*tileRow*6+3*act+scratch), kp.VtcmSize)
	require.Equal(t, [3]uint32{0, 0, 0}, [3]uint32{kp.NThreads, kp.NHMX, kp.MChunk}, "HVX leaves them zero")
	require.Equal(t, htp.NewFastDiv(3), kp.DivNe1)
	require.Equal(t, htp.NewFastDiv(3), kp.DivNe12Ne1)

	// 95232 bytes: only depth 2 fits.
	kp = solveMatMul(n, 6, 2*tileRow*6+3*act+scratch, false, true)
	require.Equal(t, [2]uint32{mmHVXQuantBlock, 2}, [2]uint32{kp.KernelType, kp.NPrefetch})

	// One byte less: the flat kernel, depth 16, flat activation rows.
	kp = solveMatMul(n, 6, 2*tileRow*6+3*act+scratch-1, false, true)
	require.Equal(t, [2]uint32{mmHVXQuantRowFlat, 16}, [2]uint32{kp.KernelType, kp.NPrefetch})
	require.Equal(t, uint32(256+128), kp.Src1RowSize, "256 quants, 8 fp16 scales padded to 128")
	require.Equal(t, uint32(1280), kp.VtcmSrc1Size, "3 flat rows, 256-aligned")

	// Two rows per thread or more: the row-parallel kernel; more than
	// four rows start at depth 2.
	n.inputs[1], n.outputs[0] = tensorOf(quant.F32, 256, 9), tensorOf(quant.F32, 64, 9)
	kp = solveMatMul(n, 6, 8<<20, false, true)
	require.Equal(t, [2]uint32{mmHVXQuantRow, 2}, [2]uint32{kp.KernelType, kp.NPrefetch})

	// Q4_1 weights read Q8_1 activations.
	n.inputs[0] = tensorOf(quant.Q4_1, 256, 64)
	require.Equal(t, uint32(256/32*1280), solveMatMul(n, 6, 8<<20, false, true).Src1RowSize)

	// MUL_MAT_ID: 4 experts, 2 tokens, the ratio rounds to 0.
	n = mmNode(htp.OpMulMatID, tensorOf(quant.Q8_0, 256, 64, 4), tensorOf(quant.F32, 256, 1, 2), tensorOf(quant.F32, 64, 1, 2))
	kp = solveMatMul(n, 6, 8<<20, false, true)
	require.Equal(t, uint32(mmHVXQuantBlock), kp.KernelType)
	require.Equal(t, uint32(16*(256/32*1152)*6), kp.VtcmSrc0Size)
	require.Equal(t, htp.FastDiv{}, kp.DivR2)
}

// TestSolveMatMulFloat: F16 and F32 weights keep the activation in VTCM
// when it fits and nothing is batched; else both stream from DDR.
func TestSolveMatMulFloat(t *testing.T) {
	n := mmNode(htp.OpMulMat, tensorOf(quant.F16, 100, 64), tensorOf(quant.F32, 100, 1), tensorOf(quant.F32, 64, 1))
	kp := solveMatMul(n, 4, 8<<20, false, true)
	require.Equal(t, uint32(mmHVXF16VTCM), kp.KernelType)
	require.Equal(t, uint32(256), kp.Src1RowSize, "100 fp16, 128-aligned")
	// src0: 16 rows of 200 bytes padded to 256, per thread; one dst row
	// of 256 bytes padded to 128 per thread (a single activation row).
	require.Equal(t, [4]uint32{256, 16 * 256 * 4, 256 * 4, 256 + 16*256*4 + 256*4},
		[4]uint32{kp.VtcmSrc1Size, kp.VtcmSrc0Size, kp.VtcmDstSize, kp.VtcmSize})

	// Batched weights: F16 x F32 from DDR.
	n.inputs[0], n.inputs[1] = tensorOf(quant.F16, 100, 64, 2), tensorOf(quant.F32, 100, 1, 2)
	kp = solveMatMul(n, 4, 8<<20, false, true)
	require.Equal(t, uint32(mmHVXF16F32DDR), kp.KernelType)
	require.Equal(t, uint32(400), kp.Src1RowSize, "src1's own row stride")
	require.Equal(t, uint32(16*400*4), kp.VtcmSrc1Size, "16 rows per thread, 256-aligned")
	require.Zero(t, kp.TileSize)

	// F32 weights whose activation does not fit: the DDR kernel.
	n.inputs[0], n.inputs[1] = tensorOf(quant.F32, 100, 64), tensorOf(quant.F32, 100, 50)
	require.Equal(t, uint32(mmHVXF32DDR), solveMatMul(n, 4, 4096, false, true).KernelType)
	require.Equal(t, uint32(mmHVXF32VTCM), solveMatMul(n, 4, 8<<20, false, true).KernelType)
}

// TestMatMulKernelParamsChecked: the double checks the matmul blocks we
// send (F32 weights 64 x 7 on HVX; F16 64 x 64 with 8 rows on HMX, as
// the double starts one HMX unit); a wrong divisor, kernel choice, VTCM
// sum or HMX chunk fails our code.
func TestMatMulKernelParamsChecked(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		w          quant.Type
		n, m       int64
		kernel     uint32
		spoil      func(*htp.MMKernelParams)
	}{
		{"divisor", "kernel params div_ne1.mp", quant.F32, 7, 5, mmHVXF32VTCM,
			func(kp *htp.MMKernelParams) { kp.DivNe1 = htp.NewFastDiv(6) }},
		{"kernel", "kernel params kernel_type", quant.F32, 7, 5, mmHVXF32VTCM,
			func(kp *htp.MMKernelParams) { kp.KernelType = mmHVXF16VTCM }},
		{"vtcm", "kernel params vtcm_size (the sum", quant.F32, 7, 5, mmHVXF32VTCM,
			func(kp *htp.MMKernelParams) { kp.VtcmSize += 128 }},
		{"hmx-chunk", "kernel params m_chunk/n_chunk", quant.F16, 64, 8, mmHMX2D,
			func(kp *htp.MMKernelParams) { kp.NChunk = 48 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := hexdouble.Open(t, hexdouble.Full)
			r, devs := openRegistry(t, testOptions(d))
			dev := devs[0].(*device)
			b, err := dev.Init(backend.Options{})
			require.NoError(t, err)
			ctx := graph.NewContext(graph.ContextOptions{})
			w, x := ctx.NewTensor(tc.w, 64, tc.n), ctx.NewTensor(quant.F32, 64, tc.m)
			g, err := ctx.Build(ctx.MulMat(w, x))
			require.NoError(t, err)
			buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
			require.NoError(t, err)
			defer buf.Free()
			rng := rand.New(rand.NewPCG(2, 2))
			require.NoError(t, backend.SetFloat32(nil, w, randF32(rng, int(64*tc.n))))
			require.NoError(t, backend.SetFloat32(nil, x, randF32(rng, int(64*tc.m))))
			require.NoError(t, backend.Compute(b, g))
			require.Empty(t, d.Violations())

			kp := (*htp.MMKernelParams)(unsafe.Pointer(&dev.s.cache.ops[0].kparams))
			require.Equal(t, tc.kernel, kp.KernelType)
			tc.spoil(kp)
			err = backend.Compute(b, g)
			require.ErrorIs(t, err, ErrSession)
			require.Contains(t, d.Violations(), tc.want)
			require.NoError(t, r.Close())
		})
	}
}

// TestSolveMatMulHMX pins the HMX 2-D block for F16 weights (64 x 64)
// and 8 activation rows on 6 threads, worked out by hand: chunk costs of
// 256 bytes per weight row (its fp16 row and the dequant scratch), 128
// per activation row and 2 per result; the one 32 x 64 chunk wins (one
// block each way), every thread count needs the same blocks, so 6 stay.
func TestSolveMatMulHMX(t *testing.T) {
	n := mmNode(htp.OpMulMat, tensorOf(quant.F16, 64, 64), tensorOf(quant.F32, 64, 8), tensorOf(quant.F32, 64, 8))
	kp := solveMatMul(n, 6, 8<<20, true, true)
	require.Equal(t, [4]uint32{mmHMX2D, 1, 0, 6}, [4]uint32{kp.KernelType, kp.NHMX, kp.Pipeline, kp.NThreads})
	require.Equal(t, [3]uint32{32, 64, 6}, [3]uint32{kp.MChunk, kp.NChunk, kp.NActThreads})
	// scales 2048, activation 32 x 128, then weights 8192, results 4096
	// and scratch 8192, which the f32 conversion area (at most 20480) overlaps.
	require.Equal(t, uint32(2048+4096+8192+4096+8192), kp.VtcmSize)
	require.Equal(t, uint32(128/32*1152), kp.Src1RowSize)
	require.Equal(t, htp.NewFastDiv(64), kp.DivNe00Padded)
	require.Equal(t, htp.NewFastDiv(6), kp.DivNActThreads)
	require.Zero(t, kp.NPrefetch)

	// Four rows or fewer, or HMX off: HVX.
	require.Equal(t, uint32(mmHVXF16VTCM), solveMatMul(n, 6, 8<<20, false, true).KernelType)
	n.inputs[1] = tensorOf(quant.F32, 64, 4)
	require.Equal(t, uint32(mmHVXF16VTCM), solveMatMul(n, 6, 8<<20, true, true).KernelType)
	// 40 rows pipeline: weights, results and scratch twice.
	n.inputs[1] = tensorOf(quant.F32, 64, 40)
	kp = solveMatMul(n, 6, 8<<20, true, true)
	require.Equal(t, [3]uint32{1, 64, 64}, [3]uint32{kp.Pipeline, kp.MChunk, kp.NChunk})
}
