package graph

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// randType draws any valid type, plain types more often.
func randType(rng *rand.Rand) quant.Type {
	if rng.Intn(2) == 0 {
		return []quant.Type{quant.F32, quant.F16, quant.BF16, quant.I32}[rng.Intn(4)]
	}
	types := quant.Types()
	return types[rng.Intn(len(types))]
}

// randShape draws a small shape whose first dimension is a whole number of
// typ's blocks; zero dimensions are rare but present.
func randShape(rng *rand.Rand, typ quant.Type) [MaxDims]int64 {
	var ne [MaxDims]int64
	for i := range ne {
		switch r := rng.Intn(20); {
		case r == 0:
			ne[i] = 0
		case r < 8:
			ne[i] = 1
		default:
			ne[i] = 1 + rng.Int63n(6)
		}
	}
	ne[0] *= int64(typ.BlockSize())
	return ne
}

// randStrides draws strides for a tensor of type typ and shape ne: dense,
// permuted, transposed, with gaps (as views make), or arbitrary.
func randStrides(rng *rand.Rand, typ quant.Type, ne *[MaxDims]int64) [MaxDims]uint64 {
	nb, err := denseStrides(typ, *ne)
	if err != nil {
		panic(err)
	}
	switch rng.Intn(6) {
	case 0: // dense
	case 1: // a permutation of dense dimensions
		p := rng.Perm(MaxDims)
		ne0, nb0 := *ne, nb
		for i, j := range p {
			ne[j], nb[j] = ne0[i], nb0[i]
		}
	case 2: // transposed
		ne[0], ne[1] = ne[1], ne[0]
		nb[0], nb[1] = nb[1], nb[0]
	case 3: // gaps between rows and planes, as a view into something larger
		ts := uint64(typ.TypeSize())
		for i := 1; i < MaxDims; i++ {
			gap := uint64(0)
			if rng.Intn(2) == 0 {
				gap = ts * uint64(rng.Intn(4))
			}
			n := ne[i-1]
			if i == 1 {
				n /= int64(typ.BlockSize())
			}
			nb[i] = nb[i-1]*uint64(max(n, 1)) + gap
		}
	case 4: // arbitrary multiples of the element size
		for i := range nb {
			nb[i] = uint64(typ.TypeSize()) * uint64(rng.Intn(64))
		}
	case 5: // arbitrary
		for i := range nb {
			nb[i] = uint64(rng.Intn(4096))
		}
	}
	return nb
}

// TestPredicatesMatchGGML compares the layout predicates with ggml's own on
// the same type, shape and strides.
func TestPredicatesMatchGGML(t *testing.T) {
	c := newRefCtx(t)
	r := c.r
	rng := rand.New(rand.NewSource(1))
	for i := range 20000 {
		typ := randType(rng)
		ne := randShape(rng, typ)
		nb := randStrides(rng, typ, &ne)
		x := &Tensor{Type: typ, Ne: ne, Nb: nb}
		p := c.tensorAs(typ, ne, nb)
		msg := func(what string) string { return fmt.Sprintf("%s of %s nb=%v (case %d)", what, x, nb, i) }
		require.EqualValues(t, r.NBytes(p), x.NBytes(), msg("NBytes"))
		require.Equal(t, r.IsContiguous(p), x.IsContiguous(), msg("IsContiguous"))
		require.Equal(t, r.IsContiguous0(p), x.IsContiguous(), msg("IsContiguous0"))
		require.Equal(t, r.IsContiguous1(p), x.IsContiguous1(), msg("IsContiguous1"))
		require.Equal(t, r.IsContiguous2(p), x.IsContiguous2(), msg("IsContiguous2"))
		require.Equal(t, r.IsContiguousTo1(p), x.IsContiguousTo(1), msg("IsContiguousTo(1)"))
		require.Equal(t, r.IsContiguousTo2(p), x.IsContiguousTo(2), msg("IsContiguousTo(2)"))
		require.Equal(t, r.IsContiguousTo3(p), x.IsContiguousTo(3), msg("IsContiguousTo(3)"))
		require.Equal(t, r.IsContiguousRows(p), x.IsContiguousRows(), msg("IsContiguousRows"))
		require.Equal(t, r.IsContiguouslyAllocated(p), x.IsContiguouslyAllocated(), msg("IsContiguouslyAllocated"))
		require.Equal(t, r.IsPermuted(p), x.IsPermuted(), msg("IsPermuted"))
		require.Equal(t, r.IsTransposed(p), x.IsTransposed(), msg("IsTransposed"))
		require.Equal(t, r.IsEmpty(p), x.IsEmpty(), msg("IsEmpty"))
		require.Equal(t, r.NElements(p), x.NElements(), msg("NElements"))
		require.Equal(t, r.NRows(p), x.NRows(), msg("NRows"))
		require.EqualValues(t, r.NDims(p), x.NDims(), msg("NDims"))
	}
}

// TestCanRepeatMatchesGGML compares CanRepeat and CanRepeatRows with
// ggml_can_repeat on shape pairs, many of them related by whole factors.
func TestCanRepeatMatchesGGML(t *testing.T) {
	c := newRefCtx(t)
	r := c.r
	rng := rand.New(rand.NewSource(2))
	var agree [2]int
	for range 20000 {
		a := randShape(rng, quant.F32)
		b := randShape(rng, quant.F32)
		if rng.Intn(2) == 0 { // b a divisor shape of a, mostly
			for i := range b {
				b[i] = 1
				if a[i] > 0 && rng.Intn(3) > 0 {
					b[i] = a[i]
				}
			}
		}
		ta, tb := &Tensor{Type: quant.F32, Ne: a}, &Tensor{Type: quant.F32, Ne: b}
		pa, pb := c.tensorAs(quant.F32, a, [MaxDims]uint64{}), c.tensorAs(quant.F32, b, [MaxDims]uint64{})
		want := r.CanRepeat(pb, pa)
		require.Equal(t, want, CanRepeat(tb, ta), "CanRepeat(%v, %v)", b, a)
		// ggml_can_repeat_rows is static inline in ggml.c; it is this.
		require.Equal(t, want && a[0] == b[0], CanRepeatRows(tb, ta), "CanRepeatRows(%v, %v)", b, a)
		agree[b2i(want)]++
	}
	require.Positive(t, agree[0])
	require.Positive(t, agree[1])
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestNewTensorMatchesGGML: shapes and dense strides of new tensors, every
// type, one to four dimensions, as ggml_new_tensor makes them.
func TestNewTensorMatchesGGML(t *testing.T) {
	c := newRefCtx(t)
	rng := rand.New(rand.NewSource(3))
	ctx := NewContext(ContextOptions{})
	for _, typ := range quant.Types() {
		for range 50 {
			ne := randShape(rng, typ)
			nd := 1 + rng.Intn(MaxDims)
			x := ctx.NewTensor(typ, ne[:nd]...)
			require.NoError(t, ctx.Err())
			want := c.newTensor(typ, ne[:nd]...)
			require.Equal(t, want.Ne, x.Ne, "%s %v", typ, ne[:nd])
			require.Equal(t, want.Nb, x.Nb, "%s %v", typ, ne[:nd])
			require.Equal(t, typ, x.Type)
			require.EqualValues(t, c.r.NBytes(want), x.NBytes())
			require.True(t, x.IsContiguous())
			require.Nil(t, x.Data)
			require.Empty(t, x.Name)
		}
	}
	require.Len(t, ctx.Tensors(), 50*len(quant.Types()))
}

func TestNewTensorAlloc(t *testing.T) {
	c := NewContext(ContextOptions{Alloc: true})
	for _, typ := range quant.Types() {
		x := c.NewTensor(typ, 2*int64(typ.BlockSize()), 3, 1, 2)
		require.NoError(t, c.Err())
		require.Len(t, x.Data, int(x.NBytes()))
		require.Equal(t, len(x.Data), cap(x.Data))
		require.Equal(t, uint64(12*typ.TypeSize()), x.NBytes())
		for _, b := range x.Data {
			require.Zero(t, b)
		}
	}
	empty := c.NewTensor(quant.F32, 4, 0, 3)
	require.NoError(t, c.Err())
	require.Zero(t, empty.NBytes())
	require.NotNil(t, empty.Data)
	require.Empty(t, empty.Data)
}

func TestNewTensorErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  quant.Type
		ne   []int64
		want error
	}{
		{"no dims", quant.F32, nil, ErrShape},
		{"five dims", quant.F32, []int64{1, 1, 1, 1, 1}, ErrShape},
		{"negative", quant.F32, []int64{4, -1}, ErrShape},
		{"negative first", quant.F16, []int64{-4}, ErrShape},
		{"partial block", quant.Q4_0, []int64{33}, ErrShape},
		{"removed type", quant.Type(4), []int64{32}, ErrType},
		{"type out of range", quant.TypeCount, []int64{32}, ErrType},
		{"overflow rows", quant.F32, []int64{1 << 40, 1 << 30}, ErrShape},
		{"overflow planes", quant.F32, []int64{1 << 20, 1 << 20, 1 << 20, 1 << 20}, ErrShape},
		{"overflow row", quant.F32, []int64{math.MaxInt64}, ErrShape},
		{"overflow last", quant.I8, []int64{1 << 31, 1 << 31, 4}, ErrShape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewContext(ContextOptions{Alloc: true})
			require.Nil(t, c.NewTensor(tc.typ, tc.ne...))
			require.ErrorIs(t, c.Err(), tc.want)
			require.Empty(t, c.Tensors())
		})
	}
}

// TestHugeTensorWithoutAlloc: a description may be far larger than memory.
func TestHugeTensorWithoutAlloc(t *testing.T) {
	c := NewContext(ContextOptions{})
	x := c.NewTensor(quant.F32, 1<<20, 1<<20, 1<<10)
	require.NoError(t, c.Err())
	require.EqualValues(t, uint64(4)<<50, x.NBytes())
	require.Nil(t, x.Data)
}

func TestTensorString(t *testing.T) {
	var x *Tensor
	require.Equal(t, "<nil tensor>", x.String())
	c := NewContext(ContextOptions{})
	y := c.SetName(c.NewTensor(quant.Q4_0, 64, 2), "w")
	require.Equal(t, `"w" NONE q4_0 [64 2 1 1]`, y.String())
	require.Equal(t, 2, y.NDims())
	require.EqualValues(t, 2*36, y.NBytes())
	require.EqualValues(t, 36, y.RowSize())
}

func TestSetName(t *testing.T) {
	c := NewContext(ContextOptions{})
	x := c.NewTensor(quant.F32, 1)
	long := string(make([]byte, 100))
	require.Len(t, c.SetName(x, long).Name, MaxName)
	require.Nil(t, c.SetName(nil, "x"))
	require.Nil(t, SetInput(nil))
	require.Nil(t, SetOutput(nil))
	require.Equal(t, FlagInput|FlagOutput, SetOutput(SetInput(x)).Flags)
}
