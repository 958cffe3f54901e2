package hexagon

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

func tensorOf(typ quant.Type, ne ...int64) *graph.Tensor {
	t := &graph.Tensor{Type: typ, Ne: [4]int64{1, 1, 1, 1}}
	copy(t.Ne[:], ne)
	t.Nb[0] = uint64(typ.TypeSize())
	t.Nb[1] = uint64(typ.RowSize(t.Ne[0]))
	t.Nb[2] = t.Nb[1] * uint64(t.Ne[1])
	t.Nb[3] = t.Nb[2] * uint64(t.Ne[2])
	return t
}

// quantized returns real blocks of typ for random floats: scales are
// finite fp16 values, as a DSP would see them.
func quantized(t *testing.T, r *rand.Rand, tt *graph.Tensor) []byte {
	x := make([]float32, tt.NElements())
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	b, err := quant.Quantize(tt.Type, x, int(tt.NRows()), int(tt.Ne[0]), nil)
	require.NoError(t, err)
	require.Len(t, b, int(tt.NBytes()))
	return b
}

// TestRepackRoundTrip: for every tiled type and shapes with and without
// padded rows, unpacking the repacked tensor gives back the ggml bytes,
// whole and row range by row range; pad rows dequantize to zero.
func TestRepackRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q8_0, quant.IQ4_NL, quant.MXFP4} {
		for _, ne := range [][]int64{{32, 1}, {64, 32}, {96, 45, 2}, {256, 70, 3, 2}} {
			tt := tensorOf(typ, ne...)
			require.True(t, isTiledWeight(tt))
			src := quantized(t, r, tt)
			tiled := make([]byte, tiledSize(tt))
			require.GreaterOrEqual(t, len(tiled), len(src))
			require.NoError(t, repack(tt, tiled, src))
			require.NotEqual(t, src, tiled[:len(src)], "%s %v: the layout changed", typ, ne)

			back := make([]byte, len(src))
			rows := int(tt.NRows())
			require.NoError(t, unpackRows(tt, back, tiled, 0, rows))
			require.Equal(t, src, back, "%s %v", typ, ne)
			rb := int(tt.Nb[1])
			for r0 := 0; r0 < rows; r0 += 7 {
				r1 := min(rows, r0+7)
				part := make([]byte, (r1-r0)*rb)
				require.NoError(t, unpackRows(tt, part, tiled, r0, r1))
				require.Equal(t, src[r0*rb:r1*rb], part)
			}

			// A pad row (past ne1 in the last column tile) is zero.
			if ne1 := tt.Ne[1]; ne1%32 != 0 {
				g, err := newTiling(tt)
				require.NoError(t, err)
				blk := make([]byte, g.blockBytes)
				g.codec.unpack(blk, g.tile(tiled, 0, int(ne1), 0), int(ne1%32))
				y, err := quant.Dequantize(typ, blk, 32)
				require.NoError(t, err)
				for _, v := range y {
					require.Zero(t, v, "%s pad row", typ)
				}
			}
		}
	}
}

// TestRepackLayout pins the tile layout of hexagon.md §10 on one Q4_0 and
// one Q8_0 block.
func TestRepackLayout(t *testing.T) {
	tt := tensorOf(quant.Q4_0, 64, 2)
	src := make([]byte, tt.NBytes())
	blk := src[18:36] // row 0, K block 1
	blk[0], blk[1] = 0x34, 0x12
	blk[2], blk[3] = 0x21, 0x43 // q0=1 q16=2, q1=3 q17=4
	row1 := src[36:54]          // row 1, K block 0
	row1[2+15] = 0xf0           // q15=0, q31=15
	tiled := make([]byte, tiledSize(tt))
	require.Len(t, tiled, 2*576*1) // 2 K tiles, 1 column tile
	require.NoError(t, repack(tt, tiled, src))
	t1 := tiled[576:]
	require.Equal(t, byte(0x31), t1[0*32+0], "q0 | q1<<4")
	require.Equal(t, byte(0x42), t1[8*32+0], "q16 | q17<<4")
	require.Equal(t, []byte{0x34, 0x12}, t1[512:514], "row 0's d")
	require.Equal(t, byte(0xf0), tiled[15*32+1], "row 1: q30 | q31<<4")
	require.Equal(t, byte(0x88), tiled[0*32+5], "pad row 5")

	q8 := tensorOf(quant.Q8_0, 32, 1)
	src = make([]byte, 34)
	for i := range 32 {
		src[2+i] = byte(i + 1)
	}
	tiled = make([]byte, tiledSize(q8))
	require.Len(t, tiled, 1088)
	require.NoError(t, repack(q8, tiled, src))
	require.Equal(t, []byte{3, 4}, tiled[1*64:1*64+2], "cp 1 of row 0")
	require.Equal(t, []byte{31, 32}, tiled[15*64:15*64+2])
}

func TestRepackErrors(t *testing.T) {
	require.False(t, isTiledWeight(tensorOf(quant.F16, 64, 2)))
	require.False(t, isTiledWeight(tensorOf(quant.Q4_K, 256, 2)))
	tt := tensorOf(quant.Q4_0, 64, 2)
	require.Error(t, repack(tt, make([]byte, 10), make([]byte, tt.NBytes())))
	require.Error(t, unpackRows(tt, make([]byte, 36), make([]byte, tiledSize(tt)), 0, 3))
	require.Error(t, repack(tensorOf(quant.F32, 32, 1), nil, nil))
}
