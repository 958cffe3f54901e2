//go:build !purego

package cpu

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// amxTolerance bounds a tile product's difference from the vec_dot of its
// weight row and quantized column, relative to the sum of the magnitudes
// of the row's and column's element products (the scale of the partial
// sums both round): both sum exact integers of each step (or super-block)
// in float32, in different orders, so they differ by a few roundings of
// the partial sums.
const amxTolerance = 1e-6

// TestAMXMatchesVecDot runs MUL_MAT of every type the amx level tiles
// through the engine (rows short of and past whole tiles of 16, 16 to 70
// columns so that every column tile edge occurs, and one column, a NaN
// column, one to three threads, strided weight rows) and wants each output within
// amxTolerance of the vec_dot (avx512vnni's, the same bits as avx2's).
// The relative differences it logs fail a kernel that drops a step, a
// row's scale or minimum, or a column (they move outputs by 1e-2 or
// more).
func TestAMXMatchesVecDot(t *testing.T) {
	if !levelAMX.supported() {
		t.Skip("no AMX-INT8 here (or the kernel refused the tile state)")
	}
	rng := rand.New(rand.NewSource(testSeed(t)))
	e0 := New(Options{Threads: 1})
	set := e0.Kernels()
	e0.Close()
	if set != levelAMX.name {
		t.Skipf("the engines run the %s kernel set", set)
	}
	types := make([]quant.Type, 0, len(amxTypes))
	for typ := range amxTypes {
		types = append(types, typ)
	}
	slices.Sort(types)
	ref := levelAVX512VNNI.kernels()
	for _, typ := range types {
		bs := typ.BlockSize()
		tr := ref.traits[typ]
		vdt := ref.traits[tr.vecDotType]
		worst := 0.0
		for i, ncols := range []int64{16, 17, 31, 33, 48, 70, 1, 1} {
			k := int64(bs) * []int64{1, 2, 3, 8, 24, 7, 5, 40}[i]
			if bs == 256 {
				k = 256 * []int64{1, 2, 3, 4, 1, 8, 3, 9}[i]
			}
			m := []int64{1, 15, 16, 17, 40, 100, 32, 96}[i]
			pad := int64(rng.Intn(2)) * int64(bs)
			name := fmt.Sprintf("%s/k=%d,m=%d,n=%d,pad=%d", typ, k, m, ncols, pad)
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			base := c.NewTensor(typ, k+pad, m)
			a := c.View2D(base, k, m, base.Nb[1], 0)
			b := c.NewTensor(quant.F32, k, ncols)
			out := c.MulMat(a, b)
			require.NoError(t, c.Err(), name)
			_, err := quant.FromFloat(base.Data, typ, mmRandF32s(rng, base.NElements()))
			require.NoError(t, err)
			bv := mmRandF32s(rng, b.NElements())
			// One column: NaN or not, in turn.
			nanCol := int64(i%2) - 1
			if ncols > 1 {
				nanCol = 1 + rng.Int63n(ncols-1)
			}
			if nanCol >= 0 {
				bv[nanCol*k+3] = float32(math.NaN())
			}
			mmSetF32s(b, bv)
			yq := make([]byte, tr.vecDotType.RowSize(k))
			rs := typ.RowSize(k)
			xf := make([]float32, k)
			for _, th := range []int{1, 2, 3} {
				e := New(Options{Threads: th})
				clear(out.Data)
				require.NoError(t, e.ComputeNode(out), name)
				e.Close()
				got := mmF32s(out)
				for col := range ncols {
					colOK := vdt.fromFloat(yq, bv[col*k:(col+1)*k]) == nil
					require.Equal(t, col != nanCol, colOK, "%s column %d", name, col)
					want, scale := make([]float64, m), make([]float64, m)
					for r := range m {
						off := uint64(r) * a.Nb[1]
						want[r] = float64(tr.vecDot(int(k), a.Data[off:off+uint64(rs)], yq))
						require.NoError(t, quant.DequantizeInto(xf, typ, a.Data[off:off+uint64(rs)]))
						for i, x := range xf {
							scale[r] += math.Abs(float64(x) * float64(bv[col*k+int64(i)]))
						}
					}
					for r := range m {
						v := float64(got[col*m+r])
						if !colOK {
							require.True(t, math.IsNaN(v), "%s threads=%d column %d row %d: %v, want NaN", name, th, col, r, v)
							continue
						}
						d := math.Abs(v-want[r]) / max(scale[r], 1e-30)
						worst = max(worst, d)
						require.LessOrEqual(t, d, amxTolerance, "%s threads=%d column %d row %d: %v, vec_dot %v", name, th, col, r, v, want[r])
					}
				}
			}
		}
		t.Logf("%s: worst difference %.2g of the sum of the products' magnitudes", typ, worst)
	}
}

// TestAMXPackAsm: the assembly packers give the Go packer's bytes, on 16
// random rows at a padded stride.
func TestAMXPackAsm(t *testing.T) {
	if !levelAMX.supported() {
		t.Skip("no AMX-INT8 here (or the kernel refused the tile state)")
	}
	rng := rand.New(rand.NewSource(testSeed(t)))
	for typ, at := range amxTypes {
		if at.packAsm == nil {
			continue
		}
		nb := 1 + rng.Intn(40)
		bs := int(typ.TypeSize())
		stride := nb*bs + rng.Intn(3)*bs
		x := make([]byte, 16*stride)
		for r := range 16 {
			row, _ := randomRow(t, rng, typ, nb*typ.BlockSize(), 0, false)
			copy(x[r*stride:], row)
		}
		want := make([]byte, at.packSize(nb))
		got := make([]byte, len(want))
		at.pack(want, x, stride, 16, nb, bs)
		at.packRows(got, x, stride, 16, nb, bs)
		require.Equal(t, want, got, "%s nb=%d stride=%d", typ, nb, stride)
	}
}
