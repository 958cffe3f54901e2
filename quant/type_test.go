package quant

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// TestTypesMatchLibrary compares every slot of our type table with the real
// ggml's type traits.
func TestTypesMatchLibrary(t *testing.T) {
	lib := reftest.Lib(t)
	require.Equal(t, "0.25.1", lib.Version())
	for v := uint32(0); v < uint32(TypeCount); v++ {
		tr, err := lib.Traits(v)
		require.NoError(t, err)
		typ := Type(v)
		if tr.TypeSize == 0 {
			require.False(t, typ.Valid(), "slot %d is removed in ggml", v)
			continue
		}
		require.True(t, typ.Valid(), "slot %d", v)
		require.Equal(t, tr.Name, typ.String())
		require.EqualValues(t, tr.BlockSize, typ.BlockSize(), typ.String())
		require.EqualValues(t, tr.TypeSize, typ.TypeSize(), typ.String())
		require.Equal(t, tr.IsQuantized, typ.IsQuantized(), typ.String())
		if typ.CanQuantize() && typ != Q8_1 && typ != Q8_K {
			require.Equal(t, lib.RequiresImatrix(v), typ.RequiresImatrix(), typ.String())
		}
	}
	_, err := lib.Traits(uint32(TypeCount))
	require.Error(t, err)
}

func TestTypeNames(t *testing.T) {
	require.Len(t, Types(), 35)
	for _, typ := range Types() {
		got, err := ParseType(typ.String())
		require.NoError(t, err)
		require.Equal(t, typ, got)
	}
	got, err := ParseType("Q4_K")
	require.NoError(t, err)
	require.Equal(t, Q4_K, got)
	for _, bad := range []string{"", "q4_2", "f33", "DEPRECATED"} {
		_, err := ParseType(bad)
		require.ErrorIs(t, err, ErrInvalidType, bad)
	}
}

func TestInvalidTypes(t *testing.T) {
	for _, v := range []Type{4, 5, 31, 32, 33, 36, 37, 38, TypeCount, 1000, math.MaxUint32} {
		require.False(t, v.Valid())
		require.ErrorIs(t, v.Check(), ErrInvalidType)
		require.Zero(t, v.BlockSize())
		require.Zero(t, v.TypeSize())
		require.EqualValues(t, -1, v.RowSize(32))
		require.False(t, v.IsQuantized())
		require.False(t, v.CanQuantize())
		require.False(t, v.CanDequantize())
		require.Contains(t, v.String(), "Type(")
		_, err := Quantize(v, make([]float32, 32), 1, 32, nil)
		require.ErrorIs(t, err, ErrInvalidType)
		_, err = Dequantize(v, make([]byte, 64), 32)
		require.ErrorIs(t, err, ErrInvalidType)
	}
}

func TestRowSize(t *testing.T) {
	require.EqualValues(t, 18*4, Q4_0.RowSize(128))
	require.EqualValues(t, 210, Q6_K.RowSize(256))
	require.EqualValues(t, 8, F16.RowSize(4))
	require.EqualValues(t, 0, Q4_K.RowSize(0))
	require.EqualValues(t, -1, Q4_K.RowSize(255))
	require.EqualValues(t, -1, F32.RowSize(-1))
	require.EqualValues(t, -1, F64.RowSize(math.MaxInt64))
	require.EqualValues(t, -1, Q8_0.RowSize(math.MaxInt64/32*32))
}

func TestBadLengths(t *testing.T) {
	src := make([]float32, 64)
	for _, c := range []struct {
		name     string
		typ      Type
		src      []float32
		nrows, n int
		im       []float32
	}{
		{"row not a block multiple", Q8_0, src[:40], 1, 40, nil},
		{"short src", F32, src[:32], 2, 32, nil},
		{"long src", F32, src, 1, 32, nil},
		{"negative rows", F32, src, -1, 64, nil},
		{"negative row", F32, src, 1, -64, nil},
		{"imatrix length", F16, src, 1, 64, make([]float32, 63)},
		{"overflow", F32, src, math.MaxInt / 2, 64, nil},
		{"element overflow", Q1_0, src, math.MaxInt / 64, 256, nil},
	} {
		_, err := Quantize(c.typ, c.src, c.nrows, c.n, c.im)
		require.ErrorIs(t, err, ErrBadLength, c.name)
	}
	_, err := QuantizeInto(make([]byte, 10), F32, src[:4], 1, 4, nil)
	require.ErrorIs(t, err, ErrBadLength)
	n, err := QuantizeInto(make([]byte, 16), F32, src[:4], 1, 4, nil)
	require.NoError(t, err)
	require.Equal(t, 16, n)

	_, err = Dequantize(F16, make([]byte, 6), 4)
	require.ErrorIs(t, err, ErrBadLength)
	_, err = Dequantize(F16, make([]byte, 8), -4)
	require.ErrorIs(t, err, ErrBadLength)
	for _, typ := range []Type{I8, I16, I32, I64, F64} {
		_, err = Dequantize(typ, make([]byte, 64), 4)
		require.ErrorIs(t, err, ErrUnsupported, typ.String())
		_, err = Quantize(typ, src[:4], 1, 4, nil)
		require.ErrorIs(t, err, ErrUnsupported, typ.String())
	}
}

func TestNonFiniteInput(t *testing.T) {
	for _, typ := range Types() {
		if !typ.CanQuantize() || !typ.IsQuantized() {
			continue
		}
		bs := typ.BlockSize()
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			src := make([]float32, bs)
			src[bs/3] = bad
			_, err := Quantize(typ, src, 1, bs, make([]float32, bs))
			require.ErrorIs(t, err, ErrNonFinite, typ.String())
		}
	}
	// The float formats convert non-finite values like ggml does.
	b, err := Quantize(F16, []float32{float32(math.Inf(-1)), float32(math.NaN())}, 1, 2, nil)
	require.NoError(t, err)
	require.Equal(t, []byte{0x00, 0xfc, 0x00, 0x7e}, b)
}

func TestFirstNonFinite(t *testing.T) {
	for n := range 20 {
		v := make([]float32, n)
		require.Equal(t, -1, firstNonFinite(v))
		for i := range n {
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
				v[i] = bad
				require.Equal(t, i, firstNonFinite(v), "n %d at %d", n, i)
				v[i] = math.MaxFloat32
				require.Equal(t, -1, firstNonFinite(v))
			}
		}
	}
}
