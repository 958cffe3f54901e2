package quant

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// dotTypes are the types whose dot kernels live in dot.go and dot_kquants.go.
var dotTypes = []Type{
	F32, F16, BF16,
	Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q1_0, Q2_0, MXFP4, NVFP4, IQ4_NL,
	Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, TQ1_0, TQ2_0,
}

func TestVecDotTypeMatchesLibrary(t *testing.T) {
	lib := reftest.Lib(t)
	for _, ty := range Types() {
		tr, err := lib.Traits(uint32(ty))
		require.NoError(t, err)
		require.Equal(t, Type(tr.VecDotType), ty.VecDotType(), "%s: vec_dot_type", ty)
		require.Equal(t, tr.HasVecDot(), dotKernel(ty) != nil, "%s: has vec_dot", ty)
	}
	require.Equal(t, F32, Type(4).VecDotType())
	require.Equal(t, F32, Type(1000).VecDotType())
}

// dotLength picks a row length: mostly short rows, sometimes up to 16384.
func dotLength(r *rand.Rand, t Type) int {
	unit := max(t.BlockSize(), t.VecDotType().BlockSize())
	limit := 16384 / unit
	var blocks int
	switch p := r.Intn(20); {
	case p < 10:
		blocks = 1 + r.Intn(min(8, limit))
	case p < 17:
		blocks = 1 + r.Intn(min(64, limit))
	default:
		blocks = 1 + r.Intn(limit)
	}
	if unit == 1 && r.Intn(2) == 0 {
		return min(blocks*(1+r.Intn(16)), 16384) // any length up to 16384, not just round ones
	}
	return blocks * unit
}

// dotFloats decodes n elements of type t, including the activation formats
// the library has no to_float for.
func dotFloats(t *testing.T, lib *ggmlref.Lib, ty Type, b []byte, n int) []float64 {
	t.Helper()
	out := make([]float64, n)
	switch ty {
	case F32:
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case Q8_0, Q8_1:
		size := ty.TypeSize()
		for i := range out {
			blk := b[size*(i/32):]
			out[i] = float64(fp16At(blk)) * float64(int8(blk[size-32+i%32]))
		}
	case Q8_K:
		for i := range out {
			blk := b[q8KBytes*(i/256):]
			out[i] = float64(q8KScale(blk)) * float64(int8(blk[4+i%256]))
		}
	default:
		f, err := lib.ToFloat(uint32(ty), b, int64(n))
		require.NoError(t, err)
		for i, v := range f {
			out[i] = float64(v)
		}
	}
	return out
}

// dotCase is one random operand pair, made by the library: x quantized by
// ggml_quantize_chunk (with or without an imatrix), y by the CPU backend's
// from_float for the vec_dot type.
type dotCase struct {
	n     int
	x, y  []byte
	where string
}

func makeDotCase(t *testing.T, lib *ggmlref.Lib, ty Type, seed int64, c int, dists []inputDist) dotCase {
	t.Helper()
	r := rand.New(rand.NewSource(seed + int64(ty)<<32 + int64(c)))
	n := dotLength(r, ty)
	dx, dy := dists[r.Intn(len(dists))], dists[r.Intn(len(dists))]
	xs, ys := make([]float32, n), make([]float32, n)
	fillValues(r, xs, dx)
	fillValues(r, ys, dy)
	im, imKind := randomImatrix(r, n)
	dc := dotCase{n: n, where: fmt.Sprintf("%s seed %d case %d n %d x %s y %s imatrix %s", ty, seed, c, n, dx, dy, imKind)}
	var err error
	dc.x, err = lib.QuantizeChunk(uint32(ty), xs, 1, int64(n), im)
	require.NoError(t, err, dc.where)
	dc.y, err = lib.FromFloatCPU(uint32(ty.VecDotType()), ys)
	require.NoError(t, err, dc.where)
	return dc
}

const dotCasesPerType = 300

// allDists is every distribution of the kit; simdDists leaves out those
// whose values reach the float32 limits (extreme, huge, subnormal, and mixed,
// which may contain them). There ggml's SIMD vec_dot parts from the generic
// code by more than rounding: AVX-512 BF16 flushes subnormals, and lane sums
// overflow to Inf or NaN where the generic sum stays finite, or the reverse.
var (
	allDists = func() (d []inputDist) {
		for i := range numDists {
			d = append(d, i)
		}
		return d
	}()
	simdDists = []inputDist{distUniform, distGauss, distHeavy, distConstant, distZero, distTiny,
		distTies, distOutlier, distSmallInts, distSparse, distHalfSteps}
)

// TestVecDotMatchesGenericBuild requires bit-identical results, NaN and Inf
// included, with ggml's generic vec_dot, whose float operations and order
// the kernels follow.
func TestVecDotMatchesGenericBuild(t *testing.T) {
	lib := variantLib(t, "x64")
	seed := testSeed(t)
	for _, ty := range dotTypes {
		t.Run(ty.String(), func(t *testing.T) {
			nonFinite := 0
			for c := range liveCases(dotCasesPerType) {
				dc := makeDotCase(t, lib, ty, seed, c, allDists)
				want, err := lib.VecDot(uint32(ty), int64(dc.n), dc.x, dc.y)
				require.NoError(t, err, dc.where)
				got, err := VecDot(ty, dc.n, dc.x, dc.y)
				require.NoError(t, err, dc.where)
				if math.Float32bits(want) != math.Float32bits(got) {
					t.Fatalf("%s: got %v (%#08x), generic ggml %v (%#08x)", dc.where,
						got, math.Float32bits(got), want, math.Float32bits(want))
				}
				if !isFinite32(want) {
					nonFinite++
				}
			}
			t.Logf("%d cases bit-identical (%d non-finite)", liveCases(dotCasesPerType), nonFinite)
		})
	}
}

func isFinite32(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// dotMagnitudes returns sum|x_i*y_i| and the looser sum over x's blocks of
// max|x in block| * sum|y in block|. The SIMD kernels round terms of the
// second size: they fold offsets in through y's block sums (TQ2_0 adds 1 to
// every code and subtracts the sums; Q4_1, Q5_1 and the K-quants with mins
// add min*sum), which are large even where x is mostly zero.
func dotMagnitudes(xf, yf []float64, blockSize int) (terms, bound float64) {
	for b := 0; b < len(xf); b += blockSize {
		var amax, ysum float64
		for i := b; i < b+blockSize; i++ {
			terms += math.Abs(xf[i] * yf[i])
			amax = max(amax, math.Abs(xf[i]))
			ysum += math.Abs(yf[i])
		}
		bound += amax * ysum
	}
	return terms, bound
}

// TestVecDotMatchesLibrary compares VecDot with the vec_dot of the CPU
// variant ggml picks for this machine (AVX2 or AVX-512). That code sums in
// SIMD lanes, in another order and with fused multiply-adds, so results must
// agree to within float rounding of the terms involved (see dotMagnitudes),
// not bit for bit.
// When a scale overflows (huge inputs), both must be non-finite, but NaN and
// Inf may differ: a lane multiplying Inf by a zero partial sum gives NaN
// where the generic code's whole-block sum gives Inf.
func TestVecDotMatchesLibrary(t *testing.T) {
	lib := reftest.Lib(t)
	seed := testSeed(t)
	t.Logf("CPU variant %s", lib.Variant())
	for _, ty := range dotTypes {
		t.Run(ty.String(), func(t *testing.T) {
			yt := ty.VecDotType()
			var worstTerms, worstBound float64
			nonFinite := 0
			for c := range liveCases(dotCasesPerType) {
				dc := makeDotCase(t, lib, ty, seed, c, simdDists)
				want, err := lib.VecDot(uint32(ty), int64(dc.n), dc.x, dc.y)
				require.NoError(t, err, dc.where)
				got, err := VecDot(ty, dc.n, dc.x, dc.y)
				require.NoError(t, err, dc.where)
				if !isFinite32(want) || !isFinite32(got) {
					nonFinite++
					require.False(t, isFinite32(got), "%s: got %v, library %v", dc.where, got, want)
					require.False(t, isFinite32(want), "%s: got %v, library %v", dc.where, got, want)
					continue
				}
				terms, bound := dotMagnitudes(dotFloats(t, lib, ty, dc.x, dc.n), dotFloats(t, lib, yt, dc.y, dc.n), ty.BlockSize())
				diff := math.Abs(float64(got) - float64(want))
				require.LessOrEqual(t, diff, 1e-5*bound+1e-38,
					"%s: got %v, library %v, sum|x*y| %g, sum amax(x block)*|y| %g", dc.where, got, want, terms, bound)
				if terms > 0 {
					worstTerms = max(worstTerms, diff/terms)
				}
				if bound > 0 {
					worstBound = max(worstBound, diff/bound)
				}
			}
			t.Logf("%d cases (%d non-finite): max |ours-ggml| / sum|x*y| = %.3g, / sum amax(x block)*|y| = %.3g",
				liveCases(dotCasesPerType), nonFinite, worstTerms, worstBound)
		})
	}
}

func TestVecDotErrors(t *testing.T) {
	q4 := make([]byte, Q4_0.RowSize(64))
	q8 := make([]byte, Q8_0.RowSize(64))
	for _, c := range []struct {
		name string
		t    Type
		n    int
		x, y []byte
		want error
	}{
		{"removed slot", Type(4), 32, q4, q8, ErrInvalidType},
		{"out of range", TypeCount, 32, q4, q8, ErrInvalidType},
		{"q8_1 has no vec_dot", Q8_1, 32, make([]byte, 36), make([]byte, 36), ErrUnsupported},
		{"q8_K has no vec_dot", Q8_K, 256, make([]byte, 292), make([]byte, 1024), ErrUnsupported},
		{"i32 has no vec_dot", I32, 4, make([]byte, 16), make([]byte, 16), ErrUnsupported},
		{"f64 has no vec_dot", F64, 4, make([]byte, 32), make([]byte, 16), ErrUnsupported},
		{"negative n", Q4_0, -32, q4, q8, ErrBadLength},
		{"n not a block multiple", Q4_0, 48, q4, q8, ErrBadLength},
		{"n not a q1_0 block multiple", Q1_0, 96, make([]byte, 18), make([]byte, 4*34), ErrBadLength},
		{"x too short", Q4_0, 64, q4[:len(q4)-1], q8, ErrBadLength},
		{"y too short", Q4_0, 64, q4, q8[:len(q8)-1], ErrBadLength},
		{"f32 y too short", F32, 3, make([]byte, 12), make([]byte, 11), ErrBadLength},
	} {
		_, err := VecDot(c.t, c.n, c.x, c.y)
		require.Error(t, err, c.name)
		require.True(t, errors.Is(err, c.want), "%s: %v is not %v", c.name, err, c.want)
	}
	for _, ty := range []Type{Q8_1, Q8_K, I8, I16, I32, I64, F64, Type(5), TypeCount + 1} {
		require.Nil(t, dotKernel(ty), "%s", ty)
	}
}

func TestVecDotLengths(t *testing.T) {
	for _, ty := range dotTypes {
		got, err := VecDot(ty, 0, nil, nil)
		require.NoError(t, err, "%s", ty)
		require.Zero(t, got, "%s", ty)
	}

	// Longer buffers are fine: only the first n elements count.
	x := make([]byte, 3*34)
	y := make([]byte, 3*34)
	for b := 0; b < 3; b++ {
		binary.LittleEndian.PutUint16(x[34*b:], FP32ToFP16(0.5))
		binary.LittleEndian.PutUint16(y[34*b:], FP32ToFP16(2))
		for j := 0; j < 32; j++ {
			x[34*b+2+j] = byte(int8(j - 16))
			y[34*b+2+j] = byte(int8(3))
		}
	}
	got, err := VecDot(Q8_0, 64, x, y)
	require.NoError(t, err)
	// Per block: 0.5*2 * 3 * sum(j-16 for j<32) = -48.
	require.Equal(t, float32(-96), got)
	require.Equal(t, got, dotKernel(Q8_0)(64, x[:68], y[:68]))
}

func TestVecDotPlainFloats(t *testing.T) {
	xs := []float32{1, -2, 3.5, 1e-3, 65504}
	ys := []float32{4, 0.25, -2, 1000, 1}
	want := float32(4 - 0.5 - 7 + 1 + 65504)
	for _, ty := range []Type{F32, F16, BF16} {
		x, err := Quantize(ty, xs, 1, len(xs), nil)
		require.NoError(t, err)
		y, err := Quantize(ty, ys, 1, len(ys), nil)
		require.NoError(t, err)
		deqX, err := Dequantize(ty, x, len(xs))
		require.NoError(t, err)
		deqY, err := Dequantize(ty, y, len(ys))
		require.NoError(t, err)
		var exact float64
		for i := range deqX {
			exact += float64(deqX[i]) * float64(deqY[i])
		}
		got, err := VecDot(ty, len(xs), x, y)
		require.NoError(t, err)
		require.Equal(t, float32(exact), got, "%s", ty)
		if ty == F32 {
			require.Equal(t, want, got)
		}
	}
}
