package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant/internal/unroll"
)

// preparedTypes are the types whose DotRowsKernel prepares y.
var preparedTypes = []Type{Q8_0, Q4_0, Q4_K, Q6_K}

// scaleFields are the byte offsets of the float scales in a block of each
// type the prepared kernels read (fp16 unless the type is Q8_K's float32).
var scaleFields = map[Type][]int{
	Q8_0: {0}, Q4_0: {0}, Q4_K: {0, 2}, Q6_K: {208}, Q8_K: {0},
}

// randomBlocks returns n elements of type ty as random bytes: quants of
// every value, extreme quants (all -128, all 127, alternating, a ramp),
// and scales that are mostly finite but sometimes any bits (NaN, Inf,
// subnormal).
func randomBlocks(r *rand.Rand, ty Type, n int) []byte {
	b := make([]byte, ty.RowSize(int64(n)))
	size := int(ty.TypeSize())
	for blk := 0; blk < len(b); blk += size {
		q := b[blk : blk+size]
		switch r.IntN(8) {
		case 0:
			fillByte(q, 0x80)
		case 1:
			fillByte(q, 0x7f)
		case 2:
			for i := range q {
				q[i] = []byte{0x80, 0x7f}[i%2]
			}
		case 3:
			for i := range q {
				q[i] = byte(i * 37)
			}
		default:
			for i := range q {
				q[i] = byte(r.Uint32())
			}
		}
		for _, off := range scaleFields[ty] {
			if r.IntN(10) == 0 {
				continue // whatever bits the quants left there
			}
			v := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(20)-10)))
			if ty == Q8_K {
				binary.LittleEndian.PutUint32(q[off:], math.Float32bits(v))
			} else {
				binary.LittleEndian.PutUint16(q[off:], FP32ToFP16(v))
			}
		}
	}
	return b
}

func fillByte(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

// TestPreparedRowsMatchDot: the prepared kernels give each row's DotKernel
// result bit for bit on random bytes (every quant value, the extremes -128
// and 127 on both sides, Q8_K group sums that need not match its quants,
// non-finite scales), for row counts from 1 to 11, padded strides, and
// lengths from one block to 16384 elements.
func TestPreparedRowsMatchDot(t *testing.T) {
	r := rand.New(rand.NewPCG(uint64(testSeed(t)), 17))
	for _, ty := range preparedTypes {
		rows, dot := DotRowsKernel(ty), DotKernel(ty)
		require.NotNil(t, rows, "%s", ty)
		unit := max(ty.BlockSize(), ty.VecDotType().BlockSize())
		for trial := range 300 {
			blocks := []int{1, 2, 3, 16, 1 + r.IntN(64), 16384 / unit}[trial%6]
			n := blocks * unit
			nrows := 1 + r.IntN(11)
			rs := int(ty.RowSize(int64(n)))
			stride := rs + r.IntN(3)*int(ty.TypeSize())
			x := randomBlocks(r, ty, (nrows*stride)/int(ty.TypeSize())*ty.BlockSize()+n)
			y := randomBlocks(r, ty.VecDotType(), n)
			out := make([]float32, nrows+1)
			out[nrows] = 42
			rows(n, x, uint64(stride), nrows, y, out[:nrows])
			require.Equal(t, float32(42), out[nrows], "%s: wrote past nrows", ty)
			for row := range nrows {
				want := dot(n, x[row*stride:row*stride+rs], y)
				if want != want && out[row] != out[row] {
					continue // both NaN: see TestDotRowsKernelMatchesDot
				}
				require.Equal(t, math.Float32bits(want), math.Float32bits(out[row]),
					"%s trial %d row %d of %d, n=%d: got %v, DotKernel %v", ty, trial, row, nrows, n, out[row], want)
			}
		}
	}
}

// TestPreparedRowsMatchGenericBuild: on operands made by the library (x
// by ggml_quantize_chunk, several rows at once, y by the CPU's
// from_float), every row of the prepared kernels is bit for bit ggml's
// generic vec_dot of that row.
func TestPreparedRowsMatchGenericBuild(t *testing.T) {
	lib := variantLib(t, "x64")
	seed := testSeed(t)
	for _, ty := range preparedTypes {
		t.Run(ty.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), uint64(ty)))
			rows := DotRowsKernel(ty)
			for c := range liveCases(60) {
				rr := mrand.New(mrand.NewSource(seed + int64(ty)<<32 + int64(c)))
				n := dotLength(rr, ty)
				nrows := 1 + r.IntN(6)
				dx, dy := allDists[r.IntN(len(allDists))], allDists[r.IntN(len(allDists))]
				xs, ys := make([]float32, nrows*n), make([]float32, n)
				fillValues(rr, xs, dx)
				fillValues(rr, ys, dy)
				x, err := lib.QuantizeChunk(uint32(ty), xs, int64(nrows), int64(n), nil)
				require.NoError(t, err)
				y, err := lib.FromFloatCPU(uint32(ty.VecDotType()), ys)
				require.NoError(t, err)
				rs := int(ty.RowSize(int64(n)))
				out := make([]float32, nrows)
				rows(n, x, uint64(rs), nrows, y, out)
				for row := range nrows {
					want, err := lib.VecDot(uint32(ty), int64(n), x[row*rs:(row+1)*rs], y)
					require.NoError(t, err)
					require.Equal(t, math.Float32bits(want), math.Float32bits(out[row]),
						"%s case %d row %d of %d, n=%d, x %s y %s: got %v, generic ggml %v", ty, c, row, nrows, n, dx, dy, out[row], want)
				}
			}
		})
	}
}

// TestPreparedKernelsGenerated regenerates dot_prepared_gen.go and requires
// the committed file to be identical.
func TestPreparedKernelsGenerated(t *testing.T) {
	got, err := unroll.Generate()
	require.NoError(t, err)
	want, err := os.ReadFile("dot_prepared_gen.go")
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "dot_prepared_gen.go is stale: run go generate ./quant")
}
