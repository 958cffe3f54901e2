package cpu

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant"
)

// The fast kernel set is checked against the generic one on every run:
// each kernel pair on random rows of many lengths at unaligned addresses,
// the four-column kernels bit for bit against the single ones, and whole
// products (batches, broadcasts, odd sizes, both column groupings) through
// two engines.

// kernelTestTypes are the weight types whose products the tests run: every
// type with a vec_dot whose activations the CPU can produce.
func kernelTestTypes() []quant.Type {
	var ts []quant.Type
	for _, t := range quant.Types() {
		tr := genericKernels.traits[t]
		if tr.vecDot != nil && t.IsQuantized() == (t != quant.F32 && t != quant.F16 && t != quant.BF16) &&
			hasFromFloat(tr.vecDotType) && !latticeType(t) {
			ts = append(ts, t)
		}
	}
	return ts
}

// randomRow returns n gaussian values of type typ placed at byte offset
// off of a fresh buffer (to test unaligned loads), and the values the row
// holds (dequantized; the source floats for types without a to_float).
// With extreme set, some blocks get scales at the ends of their range.
func randomRow(t *testing.T, rng *rand.Rand, typ quant.Type, n, off int, extreme bool) ([]byte, []float32) {
	t.Helper()
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(rng.NormFloat64())
	}
	rs := int(typ.RowSize(int64(n)))
	buf := make([]byte, off+rs)
	row := buf[off : off+rs : off+rs]
	_, err := quant.FromFloat(row, typ, f)
	require.NoError(t, err)
	if extreme {
		setExtremeScales(rng, typ, row)
	}
	if v, err := quant.Dequantize(typ, row, n); err == nil {
		f = v
	}
	return row, f
}

// setExtremeScales gives every block one scale where the fast kernels
// take separate paths (MXFP4's subnormal powers of two) or a large one
// (short of overflowing the sums).
func setExtremeScales(rng *rand.Rand, typ quant.Type, row []byte) {
	if typ != quant.MXFP4 {
		return
	}
	e := []byte{0, 1, 2, 3, 160}[rng.Intn(5)]
	for b := 0; b+17 <= len(row); b += 17 {
		row[b] = e
	}
}

// rowLengths are the lengths tried for a type with block size bs: the
// edges of every unrolled loop, and a few random ones.
func rowLengths(rng *rand.Rand, typ quant.Type) []int {
	bs := int(max(typ.BlockSize(), typ.VecDotType().BlockSize()))
	ns := []int{0}
	for b := 1; b <= 9; b++ {
		ns = append(ns, b*bs)
	}
	if bs == 1 {
		for n := 10; n <= 40; n++ {
			ns = append(ns, n)
		}
	}
	for range 4 {
		ns = append(ns, bs*(1+rng.Intn(4096/bs)))
	}
	return append(ns, 4096)
}

// TestKernelSetsAgree: the vec_dot kernels of every level the processor
// runs (the chosen one and those below it) agree with the generic ones
// within float rounding, and their four-column and many-row forms with
// them bit for bit.
func TestKernelSetsAgree(t *testing.T) {
	sets := runnableSets()
	for _, s := range sets {
		t.Logf("kernel set %q", s.name)
	}
	seed := testSeed(t)
	for _, typ := range kernelTestTypes() {
		t.Run(typ.String(), func(t *testing.T) {
			for _, set := range sets {
				checkKernelSet(t, rand.New(rand.NewSource(seed+int64(typ))), typ, set)
			}
		})
	}
}

// runnableSets are the kernel sets of every registered level this
// processor supports, the best first, or the generic set alone where none
// is.
func runnableSets() []*kernelSet {
	var sets []*kernelSet
	for _, l := range byPriority(levels) {
		if l.supported() {
			sets = append(sets, l.kernels())
		}
	}
	if len(sets) == 0 {
		sets = append(sets, genericKernels)
	}
	return sets
}

// checkKernelSet compares set's vec_dot of typ with the generic one on
// random rows of rowLengths.
func checkKernelSet(t *testing.T, rng *rand.Rand, typ quant.Type, set *kernelSet) {
	t.Helper()
	gen, fst := genericKernels.traits[typ], set.traits[typ]
	require.Equal(t, gen.vecDotType, fst.vecDotType)
	for _, n := range rowLengths(rng, typ) {
		x, xf := randomRow(t, rng, typ, n, rng.Intn(8), rng.Intn(2) == 0)
		var ys [4][]byte
		var tol [4]float64
		for c := range ys {
			var yf []float32
			ys[c], yf = randomRow(t, rng, gen.vecDotType, n, rng.Intn(8), false)
			for i := range xf {
				tol[c] += math.Abs(float64(xf[i]) * float64(yf[i]))
			}
			// Both sum exact per-block integers (or float
			// products) in float32, in different orders.
			tol[c] = 2e-5*tol[c] + 1e-37
		}
		for c, y := range ys {
			want := gen.vecDot(n, x, y)
			v := fst.vecDot(n, x, y)
			require.InDelta(t, want, v, tol[c], "%s n=%d column %d", set.name, n, c)
		}
		if fst.vecDot4 != nil {
			checkVecDot4(t, rng, typ, fst, n, &ys)
		}
		if fst.vecDotRows != nil {
			checkVecDotRows(t, rng, typ, fst, n, ys[0])
		}
	}
}

// checkVecDot4 runs tr.vecDot4 over a few rows of x at a padded stride and
// wants each result bit for bit what tr.vecDot gives.
func checkVecDot4(t *testing.T, rng *rand.Rand, typ quant.Type, tr typeTraits, n int, ys *[4][]byte) {
	t.Helper()
	rs := int(typ.RowSize(int64(n)))
	nrows, stride := 1+rng.Intn(5), rs+rng.Intn(3)*17
	x := make([]byte, (nrows-1)*stride+rs)
	for r := range nrows {
		row, _ := randomRow(t, rng, typ, n, 0, false)
		copy(x[r*stride:], row)
	}
	out := make([]float32, 4*nrows)
	tr.vecDot4(n, x, uint64(stride), nrows, ys, make([]float32, n/8+1), out)
	for r := range nrows {
		for c, y := range ys {
			v := tr.vecDot(n, x[r*stride:r*stride+rs], y)
			require.Equal(t, math.Float32bits(v), math.Float32bits(out[4*r+c]),
				"n=%d row %d of %d column %d: vecDot4 %v, vecDot %v", n, r, nrows, c, out[4*r+c], v)
		}
	}
}

// checkVecDotRows runs tr.vecDotRows over a random number of rows of x at
// a padded stride (counts on both sides of whole groups of four quarters)
// and wants each result bit for bit what tr.vecDot gives.
func checkVecDotRows(t *testing.T, rng *rand.Rand, typ quant.Type, tr typeTraits, n int, y []byte) {
	t.Helper()
	rs := int(typ.RowSize(int64(n)))
	nrows := []int{1, 3, 4, 5, 8, 16, 17, 23}[rng.Intn(8)] + 4*rng.Intn(3)
	stride := rs + rng.Intn(3)*17
	x := make([]byte, (nrows-1)*stride+rs)
	for r := range nrows {
		row, _ := randomRow(t, rng, typ, n, 0, rng.Intn(2) == 0)
		copy(x[r*stride:], row)
	}
	out := make([]float32, nrows+1)
	out[nrows] = 42
	tr.vecDotRows(n, x, uint64(stride), nrows, y, make([]float32, rowsScratch(n)), out[:nrows])
	require.Equal(t, float32(42), out[nrows], "n=%d: vecDotRows wrote past %d rows", n, nrows)
	for r := range nrows {
		v := tr.vecDot(n, x[r*stride:r*stride+rs], y)
		require.Equal(t, math.Float32bits(v), math.Float32bits(out[r]),
			"n=%d row %d of %d: vecDotRows %v, vecDot %v", n, r, nrows, out[r], v)
	}
}

// testSeed returns GGML_TEST_SEED if set, else a fresh seed, and logs it.
func testSeed(t *testing.T) int64 {
	t.Helper()
	seed := rand.Int63()
	if s := os.Getenv("GGML_TEST_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "GGML_TEST_SEED")
	}
	t.Logf("seed %d (set GGML_TEST_SEED to repeat)", seed)
	return seed
}

// TestMulMatKernelSets runs random products through an engine with the
// fast kernels and one with the generic ones: the results agree within
// float rounding, and the fast engine's do not depend on the thread count
// (which changes how columns are grouped).
func TestMulMatKernelSets(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	gen := New(Options{Threads: 1, Generic: true})
	defer gen.Close()
	require.Equal(t, "generic", gen.Kernels())
	engines := []*Engine{New(Options{Threads: 1}), New(Options{Threads: 3})}
	for _, e := range engines {
		defer e.Close()
	}
	for _, typ := range kernelTestTypes() {
		for trial := range 3 {
			bs := max(typ.BlockSize(), typ.VecDotType().BlockSize())
			k := int64(bs) * int64(1+rng.Intn(3))
			m, n := int64(1+rng.Intn(37)), int64(1+rng.Intn(19))
			if trial == 0 {
				n = 8 // whole groups of four columns
			}
			a2, r2 := int64(1+rng.Intn(2)), int64(1+rng.Intn(2))
			name := fmt.Sprintf("%s/k=%d,m=%d,n=%d,batch=%dx%d", typ, k, m, n, a2, r2)
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			a := c.NewTensor(typ, k, m, a2)
			b := c.NewTensor(quant.F32, k, n, a2*r2)
			out := c.MulMat(a, b)
			require.NoError(t, c.Err(), name)
			af := mmRandF32s(rng, a.NElements())
			_, err := quant.FromFloat(a.Data, typ, af)
			require.NoError(t, err, name)
			mmSetF32s(b, mmRandF32s(rng, b.NElements()))

			require.NoError(t, gen.ComputeNode(out), name)
			want := mmF32s(out)
			// Float rounding, and for Q8_0/Q8_1 activations the quantizers'
			// difference: the fast set's levels are haswell's (rounded to
			// nearest even), the generic set's the reference's (half away
			// from zero), which part by one level in a few percent of
			// blocks (quant.FromFloatKernelAVX), each such level moving the
			// product by up to max|w|*max|x|/127 (both are at most 1 here);
			// two such levels per product are allowed.
			tol := 1e-4 * float64(k)
			if vt := typ.VecDotType(); vt == quant.Q8_0 || vt == quant.Q8_1 {
				tol += 2.0 / 127
			}
			var first []float32
			for _, e := range engines {
				clear(out.Data)
				require.NoError(t, e.ComputeNode(out), name)
				got := mmF32s(out)
				for i := range want {
					require.InDelta(t, want[i], got[i], tol, "%s element %d", name, i)
				}
				if first == nil {
					first = got
				} else {
					require.Equal(t, first, got, "%s: results differ between thread counts", name)
				}
			}
		}
	}
}

// TestGenericOption: Options.Generic and the environment variable (read
// once, at start) select the generic set.
func TestGenericOption(t *testing.T) {
	require.Same(t, genericKernels, selectKernels(Options{Generic: true}))
	require.Same(t, chosen, selectKernels(Options{}))
	require.Same(t, genericKernels, chooseSet(fastKernels(), true))
	require.Same(t, fastKernels(), chooseSet(fastKernels(), false))
	want := fastKernels()
	if envGeneric() {
		want = genericKernels
	}
	require.Same(t, want, chosen)
}

// TestFromFloatAgrees: the fast activation quantizers write exactly the
// generic bytes, or for the types the level converts as ggml's AVX builds
// do those of ggml's haswell build, on rows of every kind that matters to
// them: gaussian,
// ties (levels landing on .5 when max|x| is 127), all-zero blocks, tiny
// and huge magnitudes, largest magnitudes of both signs; and both refuse
// non-finite input.
func TestFromFloatAgrees(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t)))
	fast := fastKernels()
	kinds := []func(i int) float32{
		func(int) float32 { return float32(rng.NormFloat64()) },
		func(i int) float32 {
			if i%32 == 0 {
				return 127
			}
			return float32(rng.Intn(254)-127) + 0.5*float32(rng.Intn(2))
		},
		func(i int) float32 {
			if rng.Intn(4) == 0 {
				return 0
			}
			return float32(rng.NormFloat64())
		},
		func(int) float32 { return float32(rng.NormFloat64()) * 1e-41 },
		func(int) float32 { return float32(rng.NormFloat64()) * 1e30 },
		func(int) float32 { return 0 },
		func(int) float32 { return float32(1 - 2*rng.Intn(2)) },
	}
	// Mixed rows take each block's kind at random, so that zero,
	// subnormal and huge blocks share the kernels' groups of eight
	// blocks (their scales are divided eight at a time).
	mixed := len(kinds)
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K} {
		gen, fst := genericKernels.traits[typ].fromFloat, fast.traits[typ].fromFloat
		if slices.Contains(fast.avxFromFloatTypes, typ) {
			lib, err := ggmlref.OpenVariant(reftest.Lib(t).Dir(), "haswell")
			require.NoError(t, err)
			defer lib.Close()
			gen = func(dst []byte, src []float32) error { return lib.FromFloatCPUInto(dst, uint32(typ), src) }
		}
		bs := int(typ.BlockSize())
		for trial := range 80 {
			n := bs * (1 + rng.Intn(20))
			src := make([]float32, n)
			k := trial % (len(kinds) + 1)
			kind := k
			for i := range src {
				if k == mixed && i%bs == 0 {
					kind = rng.Intn(len(kinds))
				}
				src[i] = kinds[kind](i)
			}
			want := make([]byte, typ.RowSize(int64(n)))
			got := make([]byte, len(want))
			require.NoError(t, gen(want, src))
			require.NoError(t, fst(got, src))
			require.Equal(t, want, got, "%s trial %d (kind %d, n=%d)", typ, trial, trial%(len(kinds)+1), n)
		}
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			src := make([]float32, bs*(1+rng.Intn(20)))
			src[rng.Intn(len(src))] = bad
			require.ErrorIs(t, fst(make([]byte, typ.RowSize(int64(len(src)))), src), quant.ErrNonFinite, "%s %v", typ, bad)
		}
	}
}
