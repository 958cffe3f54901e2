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
	"github.com/ggml-go/ggml/internal/hexdouble"
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
