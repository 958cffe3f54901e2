package quant

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant/internal/grids"
)

// latticeFormats lists the lattice types with their grids, as the tests
// check coverage of every codebook point.
var latticeFormats = []struct {
	typ    Type
	unpack func([]byte) gridBlock
	points []uint64 // the codebook points a group can hold
	// signPatterns is the number of sign bytes a group can hold: 128
	// parity-fixed patterns for formats that store 7 bits, all 256
	// otherwise, none for IQ1.
	signPatterns int
}{
	{IQ2_XXS, unpackIQ2XXS, iq2xxsGrid[:], 128},
	{IQ2_XS, unpackIQ2XS, iq2xsGrid[:], 128},
	{IQ2_S, unpackIQ2S, iq2sGrid[:], 256},
	{IQ3_XXS, unpackIQ3XXS, widenGrid(iq3xxsGrid[:]), 128},
	{IQ3_S, unpackIQ3S, widenGrid(iq3sGrid[:]), 256},
	{IQ1_S, unpackIQ1S, iq1sGrid[:], 0},
	{IQ1_M, unpackIQ1M, iq1sGrid[:], 0},
}

func widenGrid(g []uint32) []uint64 {
	out := make([]uint64, len(g))
	for i, v := range g {
		out[i] = uint64(v)
	}
	return out
}

// latticeRand returns a generator seeded by testSeed.
func latticeRand(t *testing.T) (*rand.Rand, uint64) {
	t.Helper()
	seed := uint64(testSeed(t))
	return rand.New(rand.NewPCG(seed, 0x1a77)), seed
}

// requireLatticeFloats compares bit patterns and reports the first difference
// by block and byte offset.
func requireLatticeFloats(t *testing.T, typ Type, src []byte, want, got []float32, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			blk := i / typ.BlockSize()
			t.Fatalf("%s %s: element %d (block %d, bytes %d..%d, element %d in block): want %v (%#08x), got %v (%#08x); block % x",
				typ, what, i, blk, blk*typ.TypeSize(), (blk+1)*typ.TypeSize()-1, i%typ.BlockSize(),
				want[i], math.Float32bits(want[i]), got[i], math.Float32bits(got[i]),
				src[blk*typ.TypeSize():(blk+1)*typ.TypeSize()])
		}
	}
}

// TestLatticeGridsGenerated regenerates grids_gen.go from the library and
// requires the committed file to be identical.
func TestLatticeGridsGenerated(t *testing.T) {
	got, err := grids.Generate(reftest.Lib(t))
	require.NoError(t, err)
	want, err := os.ReadFile("grids_gen.go")
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "grids_gen.go is stale: run go generate ./quant")
}

// TestLatticeSigns checks the rule behind the 7-bit sign fields: the eighth
// sign makes the count of negatives even.
func TestLatticeSigns(t *testing.T) {
	seen := map[uint8]bool{}
	for v := range uint32(128) {
		s := iqSigns(v | 0x80) // bits above 7 are ignored
		require.Equal(t, uint8(v), s&0x7f)
		require.Zero(t, bits.OnesCount8(s)%2, "signs %#02x", s)
		seen[s] = true
	}
	require.Len(t, seen, 128)
}

// TestLatticeDequantizeRandom decodes random block bytes (every bit pattern
// of the scales, so also NaN, infinite and subnormal fp16 block scales) and
// requires the library's floats bit for bit. It also requires the random
// data to have hit every codebook point and every sign pattern.
func TestLatticeDequantizeRandom(t *testing.T) {
	lib := reftest.Lib(t)
	rng, seed := latticeRand(t)
	for _, f := range latticeFormats {
		t.Run(f.typ.String(), func(t *testing.T) {
			points := map[uint64]bool{}
			signs := map[uint8]bool{}
			var u gridBlock
			cases, blocks := 0, 0
			for c := range 60 {
				nblocks := 1 + rng.IntN(64)
				if c == 0 {
					nblocks = 1024 // enough to hit all 2048 IQ1 points
				}
				src := make([]byte, nblocks*f.typ.TypeSize())
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				if c%4 == 1 {
					// Finite block scales only, so every value is checked as a number too.
					for b := range nblocks {
						setLatticeFiniteScale(f.typ, src[b*f.typ.TypeSize():], rng)
					}
				}
				n := nblocks * qkGrid
				want, err := lib.ToFloat(uint32(f.typ), src, int64(n))
				require.NoError(t, err)
				got, err := Dequantize(f.typ, src, n)
				require.NoError(t, err)
				requireLatticeFloats(t, f.typ, src, want, got, fmt.Sprintf("seed %d case %d", seed, c))
				for b := range nblocks {
					u = f.unpack(src[b*f.typ.TypeSize() : (b+1)*f.typ.TypeSize()])
					for g := range gridGroups {
						if f.typ == IQ3_XXS || f.typ == IQ3_S {
							points[u.point[g]&0xffffffff] = true
							points[u.point[g]>>32] = true
						} else {
							points[u.point[g]] = true
						}
						signs[u.signs[g]] = true
					}
				}
				cases++
				blocks += nblocks
			}
			for i, p := range f.points {
				require.True(t, points[p], "seed %d: codebook point %d (%#x) never decoded", seed, i, p)
			}
			if f.signPatterns > 0 {
				require.Len(t, signs, f.signPatterns, "seed %d: sign patterns", seed)
			}
			t.Logf("%d cases, %d blocks", cases, blocks)
		})
	}
}

// setLatticeFiniteScale overwrites the block scale of one block with a random
// finite half.
func setLatticeFiniteScale(typ Type, b []byte, rng *rand.Rand) {
	h := uint16(rng.Uint32())
	for h&0x7c00 == 0x7c00 {
		h = uint16(rng.Uint32())
	}
	if typ != IQ1_M {
		binary.LittleEndian.PutUint16(b, h)
		return
	}
	// IQ1_M keeps its half in the top nibbles of the four scale words.
	for k := range 4 {
		w := binary.LittleEndian.Uint16(b[48+2*k:])
		binary.LittleEndian.PutUint16(b[48+2*k:], w&0x0fff|(h>>(4*k)&0xf)<<12)
	}
}

// latticeData fills n floats from one of several distributions, mixing them
// within a row for kind "mix".
func latticeData(rng *rand.Rand, kind string, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch kind {
		case "uniform":
			x[i] = 2*rng.Float32() - 1
		case "gaussian":
			x[i] = float32(rng.NormFloat64())
		case "heavy":
			x[i] = float32(rng.NormFloat64() / (rng.Float64() + 1e-3))
		case "constant":
			x[i] = 0.75
		case "zero":
			x[i] = 0
		case "tiny":
			x[i] = float32(rng.NormFloat64() * 1e-30)
		case "large":
			// Not ~1e30: ggml's lattice quantizers abort (GGML_ASSERT in
			// nearest_int) once squares overflow, from about 1e18 up.
			x[i] = float32(rng.NormFloat64() * 1e12)
		case "mix":
			k := []string{"uniform", "gaussian", "heavy", "constant", "zero", "tiny"}[i/qkGrid%6]
			x[i] = latticeData(rng, k, 1)[0]
		}
	}
	return x
}

func latticeImatrix(rng *rand.Rand, n int, zeros bool) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = rng.Float32()*4 + 1e-3
		if zeros && rng.IntN(8) == 0 {
			w[i] = 0
		}
	}
	return w
}

// latticeSlowInit explains the short-mode skips: on first use of each type
// ggml builds its lattice search tables, about 16 s for all seven together.
const latticeSlowInit = "the library's lattice quantizers take ~16 s to initialize"

var latticeKinds = []string{"uniform", "gaussian", "heavy", "constant", "zero", "tiny", "large", "mix"}

// TestLatticeDequantizeQuantized decodes what the library's quantizers
// produce and requires the library's floats bit for bit; Quantize itself
// must report the types as unsupported.
func TestLatticeDequantizeQuantized(t *testing.T) {
	lib := reftest.Lib(t)
	if testing.Short() {
		t.Skip(latticeSlowInit)
	}
	rng, seed := latticeRand(t)
	for _, f := range latticeFormats {
		t.Run(f.typ.String(), func(t *testing.T) {
			_, err := Quantize(f.typ, make([]float32, qkGrid), 1, qkGrid, make([]float32, qkGrid))
			require.ErrorIs(t, err, ErrUnsupported)
			require.Equal(t, lib.RequiresImatrix(uint32(f.typ)), f.typ.RequiresImatrix())
			cases := 0
			for c := range 40 {
				kind := latticeKinds[c%len(latticeKinds)]
				nPerRow := qkGrid * (1 + rng.IntN(8))
				if c%10 == 0 {
					nPerRow = 16384
				}
				nrows := 1 + rng.IntN(4)
				if nPerRow == 16384 {
					nrows = 1
				}
				src := latticeData(rng, kind, nrows*nPerRow)
				var im []float32
				if c%3 != 0 || f.typ.RequiresImatrix() {
					im = latticeImatrix(rng, nPerRow, c%2 == 0)
				}
				q, err := lib.QuantizeChunk(uint32(f.typ), src, int64(nrows), int64(nPerRow), im)
				require.NoError(t, err)
				want, err := lib.ToFloat(uint32(f.typ), q, int64(nrows*nPerRow))
				require.NoError(t, err)
				got := make([]float32, nrows*nPerRow)
				require.NoError(t, DequantizeInto(got, f.typ, q))
				requireLatticeFloats(t, f.typ, q, want, got,
					fmt.Sprintf("seed %d case %d (%s, %d x %d, imatrix %v)", seed, c, kind, nrows, nPerRow, im != nil))
				cases++
			}
			t.Logf("%d cases", cases)
		})
	}
}

// TestLatticeVecDot compares the reference dot products with the library's
// CPU vec_dot, which sums in a different order (SIMD), within a few 1e-6 of
// the sum of the absolute products; and bit for bit with the generic
// (x64) build of the CPU backend when it loads.
func TestLatticeVecDot(t *testing.T) {
	lib := reftest.Lib(t)
	rng, seed := latticeRand(t)
	generic := variantLib(t, "x64")
	t.Logf("checking against %s within tolerance and %s exactly", lib.Variant(), generic.Variant())
	if testing.Short() {
		t.Log("short mode: random blocks only, " + latticeSlowInit)
	}
	for _, f := range latticeFormats {
		t.Run(f.typ.String(), func(t *testing.T) {
			cases := 0
			for c := range 60 {
				n := qkGrid * (1 + rng.IntN(16))
				if c%15 == 0 {
					n = 16384
				}
				kind := latticeKinds[c%len(latticeKinds)]
				if kind == "large" || kind == "tiny" {
					kind = "gaussian"
				}
				var x []byte
				var err error
				if c%2 == 0 && !testing.Short() {
					x, err = lib.QuantizeChunk(uint32(f.typ), latticeData(rng, kind, n), 1, int64(n), latticeImatrix(rng, n, c%4 == 0))
					require.NoError(t, err)
				} else {
					// Random codebook indices, signs and scales under a sane block scale.
					x = make([]byte, n/qkGrid*f.typ.TypeSize())
					for i := range x {
						x[i] = byte(rng.Uint32())
					}
					for b := range n / qkGrid {
						setLatticeFiniteScale(f.typ, x[b*f.typ.TypeSize():], rng)
					}
				}
				y, err := lib.FromFloatCPU(uint32(Q8_K), latticeData(rng, "gaussian", n))
				require.NoError(t, err)

				got, err := VecDot(f.typ, n, x, y)
				require.NoError(t, err)
				want, err := lib.VecDot(uint32(f.typ), int64(n), x, y)
				require.NoError(t, err)
				xs, err := Dequantize(f.typ, x, n)
				require.NoError(t, err)
				var scale float64
				for i, v := range xs {
					yd := math.Float32frombits(binary.LittleEndian.Uint32(y[i/qkGrid*Q8_K.TypeSize():]))
					scale += math.Abs(float64(v) * float64(yd) * float64(int8(y[i/qkGrid*Q8_K.TypeSize()+4+i%qkGrid])))
				}
				msg := fmt.Sprintf("%s seed %d case %d (n %d)", f.typ, seed, c, n)
				if math.IsInf(scale, 0) || math.IsNaN(scale) {
					t.Fatalf("%s: products overflow", msg)
				}
				require.InDelta(t, float64(want), float64(got), 4e-6*scale+1e-30, msg)
				exact, err := generic.VecDot(uint32(f.typ), int64(n), x, y)
				require.NoError(t, err)
				require.Equal(t, math.Float32bits(exact), math.Float32bits(got), "%s: generic %v, got %v", msg, exact, got)
				cases++
			}
			t.Logf("%d cases", cases)
		})
	}
}
