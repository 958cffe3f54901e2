package hexagon

import (
	"math"
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

// TestSolveUnary pins the unary block for a row-blocked and a
// column-tiled case, worked out by hand from the snapshot's rules.
func TestSolveUnary(t *testing.T) {
	const vtcm = 8 << 20
	n := &opNode{op: htp.OpScale}
	n.inputs[0] = tensorOf(quant.F32, 4096, 7)
	n.outputs[0] = n.inputs[0]
	kp := solveUnary(n, 6, vtcm)
	row := uint32(4096 * 4)
	perThread := uint32(vtcm / (6 * 2 * (2 * 16384))) // rows each thread keeps in VTCM: 21
	require.Equal(t, uint32(21), perThread)
	require.Equal(t, htp.UnaryKernelParams{
		NThreads: 6, VtcmRowPerThread: perThread, Block: perThread,
		VtcmSrc0SizePerThread: row * perThread * 2, VtcmDstSizePerThread: row * perThread * 2,
		VtcmSrc0Size: row * perThread * 2 * 6, VtcmDstSize: row * perThread * 2 * 6,
		Src0RowSizeAligned: row, DstRowSizeAligned: row, VtcmSize: 2 * row * perThread * 2 * 6,
		DivNe01: htp.NewFastDiv(7), DivNe02: htp.NewFastDiv(1), DivNe012: htp.NewFastDiv(7), DivTPR: htp.NewFastDiv(1),
	}, kp)

	// A row of 4 MiB fits no thread's VTCM: column tiles of a quarter of
	// a thread's share, 128-byte aligned.
	n.inputs[0] = tensorOf(quant.F32, 1<<20, 3)
	n.outputs[0] = n.inputs[0]
	kp = solveUnary(n, 6, vtcm)
	tile := uint32(vtcm/3/4) &^ 127 // three threads: three rows
	require.Equal(t, uint32(3), kp.NThreads)
	require.Equal(t, tile/4, kp.ColTile)
	require.Zero(t, kp.Block)
	require.Equal(t, 2*tile*2*3, kp.VtcmSize)
	require.Equal(t, htp.NewFastDiv((1<<20+tile/4-1)/(tile/4)), kp.DivTPR)

	// RMS_NORM_MUL with one broadcast weight row.
	n = &opNode{op: htp.OpRMSNormMul}
	n.inputs[0], n.inputs[1] = tensorOf(quant.F32, 100, 50), tensorOf(quant.F32, 100)
	n.outputs[0] = n.inputs[0]
	kp = solveUnary(n, 6, vtcm)
	require.Equal(t, uint32(1), kp.BroadcastWeight)
	require.Equal(t, uint32(512), kp.Src1RowSizeAligned, "100 floats, 128-byte aligned")
	require.Equal(t, uint32(512), kp.VtcmSrc1SizePerThread, "one weight row per thread")
}

// TestKernelParamsChecked: the double checks the unary blocks we send
// (every field a shape fixes); a wrong one fails our code.
func TestKernelParamsChecked(t *testing.T) {
	d := hexdouble.Open(t, hexdouble.Full)
	r, devs := openRegistry(t, testOptions(d))
	dev := devs[0].(*device)
	b, err := dev.Init(backend.Options{})
	require.NoError(t, err)
	ctx := graph.NewContext(graph.ContextOptions{})
	x := ctx.NewTensor(quant.F32, 300, 9, 2)
	y := ctx.SiLU(ctx.Scale(x, 0.5))
	g, err := ctx.Build(y)
	require.NoError(t, err)
	buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	defer buf.Free()
	require.NoError(t, backend.SetFloat32(nil, x, randF32(rand.New(rand.NewPCG(1, 1)), 300*9*2)))
	require.NoError(t, backend.Compute(b, g))
	require.Empty(t, d.Violations())

	// A solver bug: the first op's divisor of ne01 off by one.
	kp := (*htp.UnaryKernelParams)(unsafe.Pointer(&dev.s.cache.ops[0].kparams))
	kp.DivNe01 = htp.NewFastDiv(10)
	err = backend.Compute(b, g)
	require.ErrorIs(t, err, ErrSession)
	require.Contains(t, d.Violations(), "kernel params div_ne01")
	require.NoError(t, r.Close())
}

// TestSolveFlashAttn pins the HVX block for a decode step: one f32 query
// row per head, 8 heads over 2 KV heads, 100 KV rows, a mask, softcap.
func TestSolveFlashAttn(t *testing.T) {
	n := &opNode{op: htp.OpFlashAttnExt}
	n.inputs[0] = tensorOf(quant.F32, 64, 1, 8)
	n.inputs[1] = tensorOf(quant.F16, 64, 100, 2)
	n.inputs[2] = tensorOf(quant.F16, 64, 100, 2)
	n.inputs[3] = tensorOf(quant.F16, 100, 1)
	n.outputs[0] = tensorOf(quant.F32, 64, 8, 1)
	n.params[0] = int32(math.Float32bits(0.125))
	n.params[2] = int32(math.Float32bits(30))
	kp := solveFlashAttn(n, 6)
	require.Equal(t, [4]uint8{faKernelHVX, 1, 1, 6}, [4]uint8{kp.KernelType, kp.IsQFP32, kp.IsDstFP32, kp.NThreads})
	require.Equal(t, [4]uint16{1, 64, 2, 4}, [4]uint16{kp.Br, kp.Bc, kp.NKVBlocks, kp.G})
	require.Equal(t, float32(0.125)/30, kp.Scale, "the softcap divides the scale")
	require.Equal(t, float32(1), kp.M0, "no ALiBi")
	require.Equal(t, uint32(8), kp.NHeadLog2)
	perThread := 256 + 2*128*64 + 2*128*64 + 128*128 + 256 // q row, K and V blocks twice, mask cache, accumulator
	require.Equal(t, uint32(perThread*6), kp.VtcmSize)
	require.Equal(t, [2]uint32{8, 2}, [2]uint32{kp.QRows, kp.QRowsPerThread})
	require.Equal(t, htp.NewFastDiv(4), kp.BroadcastRK2)
	u := (*faHVXUnion)(unsafe.Pointer(&kp.U))
	require.Equal(t, [3]uint32{256, 128, 128}, [3]uint32{u.SizeQRowPadded, u.SizeKRowPadded, u.SizeVRowPadded})
	require.Equal(t, htp.NewFastDiv(8), u.Src0Div21)
}

// TestSupportsAsksTheSolvers: supports-op runs the kernel-parameter
// solvers compute uses, for the session's VTCM: a FLASH_ATTN_EXT whose
// HVX plan needs more VTCM than a 64 KiB DSP has is not claimed (it would
// break the session; the scheduler keeps it on the CPU), the same op on
// 8 MiB is; computing it anyway is an error of that call, and the session
// goes on.
func TestSupportsAsksTheSolvers(t *testing.T) {
	fa := func() *graph.Tensor {
		ctx := graph.NewContext(graph.ContextOptions{})
		q := ctx.NewTensor(quant.F32, 128, 4, 8)
		k := ctx.NewTensor(quant.F16, 128, 256, 8)
		v := ctx.NewTensor(quant.F16, 128, 256, 8)
		return ctx.FlashAttnExt(q, k, v, nil, 0.1, 0, 0)
	}
	for _, c := range []struct {
		knobs string
		want  bool
	}{{"", true}, {"vtcm=65536", false}} {
		d := hexdouble.Open(t, hexdouble.Full)
		d.Configure(t, c.knobs)
		r, devs := openRegistry(t, testOptions(d))
		require.NoError(t, backend.Availability(devs[0]))
		require.True(t, supportsOp(fa()), "the static rule claims it")
		require.Equal(t, c.want, devs[0].SupportsOp(fa()), c.knobs)
		if !c.want {
			dev := devs[0].(*device)
			n, err := newNode(fa())
			require.NoError(t, err)
			require.ErrorContains(t, dev.s.solveKernelParams(n), "bytes of VTCM, the session has 65536")
			checkCompute(t, devs[0])
		}
		require.NoError(t, r.Close())
	}
}
