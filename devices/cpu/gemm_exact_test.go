package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// exactGemmTypes are the types whose register tiles in gemms promise
// their type's vec_dot bits. The amd64 and arm64 fast sets must have the
// K-quant tiles among them, so that the tests below cannot pass by
// finding nothing to test there.
func exactGemmTypes(t *testing.T, gemms map[quant.Type]*plainGemm) []quant.Type {
	t.Helper()
	var ts []quant.Type
	for typ, g := range gemms {
		if g.exact {
			ts = append(ts, typ)
		}
	}
	if (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") && gemms[quant.F32] != nil { // the assembly set is there
		for _, typ := range []quant.Type{quant.Q4_K, quant.Q5_K, quant.Q6_K} {
			require.Contains(t, ts, typ, "%s's fast set lost its exact %s tiles", runtime.GOARCH, typ)
		}
	}
	if len(ts) == 0 {
		t.Skipf("no exact register tiles on %s", runtime.GOARCH)
	}
	return ts
}

// TestGemmTilesMatchVecDot: the fast set's tiles match its vec_dot
// (checkGemmTiles).
func TestGemmTilesMatchVecDot(t *testing.T) {
	checkGemmTiles(t, fastKernels().gemm)
}

// checkGemmTiles calls an exact type's tile kernels in gemms directly on
// a few rows at a padded stride (the tile over all of them, on packed rows
// and columns where the type packs them; the one-column edge; the single
// pair) and wants each output bit for bit the fast set's vec_dot.
func checkGemmTiles(t *testing.T, gemms map[quant.Type]*plainGemm) {
	rng := rand.New(rand.NewSource(testSeed(t)))
	fast := fastKernels()
	at := func(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
	for _, typ := range exactGemmTypes(t, gemms) {
		g, tr := gemms[typ], fast.traits[typ]
		for i, steps := range []int{1, 2, 3, 16, 1 + rng.Intn(24), 2, 1 + rng.Intn(8)} {
			// The last two cases take random bytes (extremeKRow) where
			// the type has them.
			extreme := i >= 5
			row := func(typ quant.Type, off int) []byte {
				if extreme {
					if b := extremeKRow(rng, typ, steps); b != nil {
						return append(make([]byte, off), b...)[off:]
					}
				}
				b, _ := randomRow(t, rng, typ, steps*g.step, off, false)
				return b
			}
			n := steps * g.step
			rs := int(typ.RowSize(int64(n)))
			stride := rs + rng.Intn(3)*int(typ.TypeSize())
			nrows := g.rows * (1 + rng.Intn(4))
			x := make([]byte, (nrows-1)*stride+rs)
			for r := range nrows {
				copy(x[r*stride:], row(typ, 0))
			}
			var ys, outs [4]unsafe.Pointer
			var yrows [4][]byte
			out := make([]float32, 4*nrows)
			for c := range 4 {
				yrows[c] = row(tr.vecDotType, rng.Intn(8))
				ys[c], outs[c] = at(yrows[c]), unsafe.Pointer(&out[c*nrows])
			}
			name := fmt.Sprintf("%s steps=%d stride=%d rows=%d extreme=%v", typ, steps, stride, nrows, extreme)
			if g.pack != nil {
				// The tile reads packed rows and columns.
				pbytes := g.pack.rowBytes(steps)
				px := make([]byte, nrows*pbytes)
				g.pack.rows(at(px), at(x), uintptr(stride), nrows, steps)
				var yp [4]unsafe.Pointer
				for c := range 4 {
					pc := make([]byte, len(yrows[c]))
					if g.pack.colBytes != nil {
						pc = make([]byte, g.pack.colBytes(steps))
					}
					g.pack.col(at(pc), at(yrows[c]), steps)
					yp[c] = at(pc)
				}
				g.pack.tile(steps, at(px), uintptr(pbytes), nrows, &yp, &outs)
			} else {
				for r := 0; r < nrows; r += g.rows {
					var o [4]unsafe.Pointer
					for c := range 4 {
						o[c] = unsafe.Pointer(&out[c*nrows+r])
					}
					g.tile(steps, at(x[r*stride:]), uintptr(stride), &ys, &o)
				}
			}
			col := make([]float32, g.rows)
			one := make([]float32, 1)
			for c := range 4 {
				for r := range nrows {
					if r%g.rows == 0 {
						g.tileCol(steps, at(x[r*stride:]), uintptr(stride), ys[c], unsafe.Pointer(&col[0]))
					}
					want := math.Float32bits(tr.vecDot(n, x[r*stride:r*stride+rs], yrows[c]))
					require.Equal(t, want, math.Float32bits(out[c*nrows+r]), "%s: tile row %d column %d", name, r, c)
					require.Equal(t, want, math.Float32bits(col[r%g.rows]), "%s: tileCol row %d column %d", name, r, c)
					g.one(steps, at(x[r*stride:]), ys[c], unsafe.Pointer(&one[0]))
					require.Equal(t, want, math.Float32bits(one[0]), "%s: one row %d column %d", name, r, c)
				}
			}
		}
	}
}

// TestGemmMulMatMatchesVecDot runs MUL_MAT of exact types through the
// engine (random shapes: rows short of and past whole tiles, 1 to 3
// columns (the vec_dot paths), 4 to 9 and more so that every remainder of
// four meets the one-column edge,
// a NaN column breaking a group, strided weight rows, broadcast batches;
// one to three threads) and wants every output bit for bit the fast set's
// vec_dot of its weight row and quantized column.
func TestGemmMulMatMatchesVecDot(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t)))
	fast := fastKernels()
	e := New(Options{Threads: 1})
	set := e.Kernels()
	e.Close()
	if set != fast.name {
		t.Skipf("the engines run the %s kernel set (%s=1), which has no tiles", set, EnvGeneric)
	}
	for _, typ := range exactGemmTypes(t, fast.gemm) {
		g, tr := fast.gemm[typ], fast.traits[typ]
		vdt := fast.traits[tr.vecDotType]
		ms := []int64{1, int64(g.rows), int64(g.rows) + 1, 17, 33, 1 + rng.Int63n(60)}
		for i, ncols := range []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 16, 33} {
			steps := []int64{1, 2, 3, 16}[i%4]
			k, m, b2 := steps*int64(g.step), ms[i%len(ms)], int64(1+i%2)
			pad := int64(rng.Intn(2)) * int64(g.step) // extra elements per weight row: a strided view
			name := fmt.Sprintf("%s/k=%d,m=%d,n=%d,b=%d,pad=%d", typ, k, m, ncols, b2, pad)
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			base := c.NewTensor(typ, k+pad, m, b2)
			a := c.View3D(base, k, m, b2, base.Nb[1], base.Nb[2], 0)
			b := c.NewTensor(quant.F32, k, ncols, 2*b2)
			out := c.MulMat(a, b)
			require.NoError(t, c.Err(), name)
			_, err := quant.FromFloat(base.Data, typ, mmRandF32s(rng, base.NElements()))
			require.NoError(t, err)
			bv := mmRandF32s(rng, b.NElements())
			nanCol := int64(-1)
			if ncols > 5 {
				nanCol = 1 + rng.Int63n(ncols-1)
				bv[nanCol*k+3] = float32(math.Inf(1))
			}
			mmSetF32s(b, bv)
			yq := make([]byte, tr.vecDotType.RowSize(k))
			rs := typ.RowSize(k)
			for _, th := range []int{1, 2, 3} {
				e := New(Options{Threads: th})
				e.kset = exactSet(e.kset)
				e.pool.setKernels(e.kset)
				clear(out.Data)
				require.NoError(t, e.ComputeNode(out), name)
				e.Close()
				got := mmF32s(out)
				for i2 := range 2 * b2 {
					for i1 := range ncols {
						col := i2*ncols + i1
						colOK := vdt.fromFloat(yq, bv[col*k:(col+1)*k]) == nil
						require.Equal(t, col != nanCol, colOK, "%s column %d", name, col)
						for r := range m {
							v := got[col*m+r]
							if !colOK {
								require.True(t, math.IsNaN(float64(v)), "%s threads=%d column %d row %d: %v, want NaN", name, th, col, r, v)
								continue
							}
							off := uint64(i2/2)*a.Nb[2] + uint64(r)*a.Nb[1]
							want := tr.vecDot(int(k), a.Data[off:off+uint64(rs)], yq)
							require.Equal(t, math.Float32bits(want), math.Float32bits(v),
								"%s threads=%d column %d row %d: %v, vec_dot %v", name, th, col, r, v, want)
						}
					}
				}
			}
		}
	}
}

// exactSet is s without its matrix-unit products (the amx level's), which
// sum in another order (TestAMXMatchesVecDot bounds them): what is left
// are the tiles and vec_dot kernels s shares with the level below, which
// must agree bit for bit.
func exactSet(s *kernelSet) *kernelSet {
	if s.tileMulMat == nil {
		return s
	}
	c := *s
	c.tileMulMat = nil
	return &c
}

// extremeKRow returns a K-quant or Q8_K row of steps super-blocks of
// random bytes: every level, scale and minimum anywhere in its range, at
// its ends too, which quantized gaussians seldom reach. Some blocks have
// every quant byte the same, at the ends of the levels (Q8_K: -128 or
// 127; the weights' largest or smallest levels), where the integer sums
// come closest to overflowing. Only the float scales are kept finite, and
// Q8_K's bsums are its quants' sums, as the kernels expect. It returns
// nil for other types.
func extremeKRow(rng *rand.Rand, typ quant.Type, steps int) []byte {
	halves := map[quant.Type][]int{quant.Q4_K: {0, 2}, quant.Q5_K: {0, 2}, quant.Q6_K: {208}}
	quants := map[quant.Type][2]int{quant.Q4_K: {16, 144}, quant.Q5_K: {16, 176}, quant.Q6_K: {0, 192}, quant.Q8_K: {4, 260}}
	q, ok := quants[typ]
	if !ok {
		return nil
	}
	bs := int(typ.TypeSize())
	b := make([]byte, steps*bs)
	rng.Read(b)
	for blk := b; len(blk) >= bs; blk = blk[bs:] {
		if fill := []int{-1, -1, 0x00, 0xff, 0x80, 0x7f}[rng.Intn(6)]; fill >= 0 {
			for i := q[0]; i < q[1]; i++ {
				blk[i] = byte(fill)
			}
		}
		// Clearing the top exponent bit keeps a half finite (below 2).
		for _, off := range halves[typ] {
			binary.LittleEndian.PutUint16(blk[off:], binary.LittleEndian.Uint16(blk[off:])&^0x4000)
		}
		if typ == quant.Q8_K {
			binary.LittleEndian.PutUint32(blk, math.Float32bits(rng.Float32()/64))
			for j := range 16 {
				sum := 0
				for _, q := range blk[4+16*j : 4+16*(j+1)] {
					sum += int(int8(q))
				}
				binary.LittleEndian.PutUint16(blk[260+2*j:], uint16(int16(sum)))
			}
		}
	}
	return b
}
