//go:build !purego

package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/quant"
)

// ggmlAMXProduct computes MUL_MAT out on ggml (e, its sapphirerapids
// build) with the weight out.Src[0] in ggml's AMX buffer type, as
// libllama places weights there, and returns the result's bytes; placed
// says whether ggml took the weight (its supports rules refuse some
// shapes, and then the product is its plain CPU one).
func ggmlAMXProduct(t *testing.T, e *mirror.Executor, out *graph.Tensor) (res []byte, placed bool) {
	t.Helper()
	g := graph.NewGraph()
	require.NoError(t, g.Expand(out))
	l, pl, err := e.LoadExtra(g, []*graph.Tensor{out.Src[0]}, mirror.AMXBufferType)
	require.NoError(t, err)
	require.NoError(t, l.Compute())
	d, err := l.Data(out)
	require.NoError(t, err)
	return append([]byte(nil), d...), len(pl) == 1
}

// amxWeights fills a (a 2-D weight of type typ) with rows ggml's AMX
// kernels must get right: quantized gaussians, and rows of random blocks
// whose levels reach both ends (every quant byte the same in some), where
// the integer sums of a step are largest and a float product of them
// stops being exact: a kernel rounding (sum*dx)*dy agrees with ggml's
// sum*(dx*dy) on quantized gaussians almost always and on these not.
func amxWeights(t *testing.T, r *rand.Rand, a *graph.Tensor) {
	typ := a.Type
	k, m := a.Ne[0], a.Ne[1]
	w := make([]float32, a.NElements())
	for j := range w {
		w[j] = float32(r.NormFloat64())
	}
	_, err := quant.FromFloat(a.Data, typ, w)
	require.NoError(t, err)
	rs := int(typ.RowSize(k))
	nb := int(k) / typ.BlockSize()
	bs := int(typ.TypeSize())
	for row := range int(m) {
		if r.IntN(3) != 0 {
			continue
		}
		dst := a.Data[row*rs : (row+1)*rs]
		if x := extremeKRow(mrand.New(mrand.NewSource(r.Int64())), typ, nb); x != nil {
			copy(dst, x)
			continue
		}
		for b := range nb {
			blk := dst[b*bs : (b+1)*bs]
			fill := []int{-1, -1, 0x00, 0xff, 0x88, 0x77}[r.IntN(6)]
			for i := range blk {
				blk[i] = byte(r.Uint32())
				if fill >= 0 && i >= 2 {
					blk[i] = byte(fill)
				}
			}
			// Finite halves below 2: the scale (and Q4_1's minimum).
			for off := 0; off < 4 && off < bs; off += 2 {
				binary.LittleEndian.PutUint16(blk[off:], binary.LittleEndian.Uint16(blk[off:])&^0x4000)
			}
			if typ == quant.Q8_0 {
				for i := 2; i < bs; i++ {
					if blk[i] == 0x80 {
						blk[i] = 0x81 // ggml's quantizers never write -128
					}
				}
			}
		}
	}
}

// amxColumns fills src1 with activations at widely spread sizes, some
// columns constant (every level of a block at ±127) or with one outlier.
func amxColumns(r *rand.Rand, b *graph.Tensor) {
	fillF32Wide(r, b)
	k := int(b.Ne[0])
	for col := range int(b.Ne[1]) {
		row := b.Data[4*k*col : 4*k*(col+1)]
		switch r.IntN(5) {
		case 0:
			v := float32(r.NormFloat64())
			for i := 0; i < k; i++ {
				binary.LittleEndian.PutUint32(row[4*i:], math.Float32bits(v))
			}
		case 1:
			binary.LittleEndian.PutUint32(row[4*r.IntN(k):], math.Float32bits(1e3))
		}
	}
}

// amxExactTypes are the types whose tile products follow ggml's AMX
// order.
var amxExactTypes = []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q8_0, quant.Q4_K, quant.Q6_K}

// TestMulMatMatchesAMXBuild: on the amx level, MUL_MAT of every weight
// type of amxExactTypes (of qtype_has_amx_kernels' types, those the
// real models use) against F32 columns is bit for
// bit ggml's sapphirerapids build with the weight in its AMX buffer type,
// where libllama puts such weights on this processor: random and
// extreme-level rows (amxWeights), activations of spread sizes
// (amxColumns), row counts the AMX buffer takes (multiples of 32), row
// lengths from one block to many, column counts from two (ggml's tiles)
// across the tiles' 16, one to three threads.
// Every case must be placed in the AMX buffer: otherwise ggml would have
// computed something else than the product checked.
func TestMulMatMatchesAMXBuild(t *testing.T) {
	checkAMXBuild(t, func(r *rand.Rand) int64 {
		return []int64{2, 3, 4, 7, 15, 16, 17, 31, 32, 33, 48, 64, 2 + r.Int64N(100)}[r.IntN(13)]
	})
}

// TestMulMatMatchesAMXBuildDecode is TestMulMatMatchesAMXBuild for one
// column, a decode step's product, which ggml's AMX code takes to its
// AVX512-VNNI kernel (tinygemm_kernel_vnni) rather than the tiles.
func TestMulMatMatchesAMXBuildDecode(t *testing.T) {
	checkAMXBuild(t, func(*rand.Rand) int64 { return 1 })
}

// checkAMXBuild checks 12 fresh products of each of amxExactTypes
// against ggml's AMX code, of cols columns each.
func checkAMXBuild(t *testing.T, cols func(r *rand.Rand) int64) {
	if !levelAMX.supported() {
		t.Skip("no AMX-INT8 here (or the kernel refused the tile state)")
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 10))
	e := ggmlVariant(t, "sapphirerapids")
	set := levelAMX.kernels()
	for _, typ := range amxExactTypes {
		bs := int64(typ.BlockSize())
		differ := 0
		for i := range 12 {
			k := bs * []int64{1, 2, 3, 8, 18, 1 + r.Int64N(40)}[i%6]
			m := 32 * []int64{1, 2, 3, 1 + r.Int64N(8)}[i%4]
			if i == 11 {
				// 1024 rows of 32 blocks: the one-column kernels' lanes
				// a sixteenth apart would share cache sets, and the last
				// groups take neighbouring rows (gemvSpacing).
				k, m = 32*bs, 1024
			}
			n := cols(r)
			name := fmt.Sprintf("%s k=%d m=%d n=%d threads=%d", typ, k, m, n, 1+i%3)
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			a := c.NewTensor(typ, k, m)
			amxWeights(t, r, a)
			b := c.NewTensor(quant.F32, k, n)
			amxColumns(r, b)
			out := c.MulMat(a, b)
			require.NoError(t, c.Err())
			want, placed := ggmlAMXProduct(t, e, out)
			require.True(t, placed, "%s: ggml did not take the weight into its AMX buffer", name)
			eng := New(Options{Threads: 1 + i%3})
			eng.kset = set
			eng.pool.setKernels(set)
			clear(out.Data)
			require.NoError(t, eng.ComputeNode(out), name)
			eng.Close()
			if d, first := diffCount(out.Data, want); d > 0 {
				differ++
				x := math.Float32frombits(binary.LittleEndian.Uint32(out.Data[4*first:]))
				y := math.Float32frombits(binary.LittleEndian.Uint32(want[4*first:]))
				t.Errorf("%s: %d of %d outputs differ from ggml's AMX product, first [%d] %v, ggml %v", name, d, m*n, first, x, y)
			}
		}
		t.Logf("%s: %d of 12 products differ", typ, differ)
	}
}
