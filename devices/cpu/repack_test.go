package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant"
)

// repackCase is a MUL_MAT of a k x m weight of type typ by F32
// activations of shape k x n x n2, built twice: the weight in a CPU
// buffer (plain) and in a repack buffer (packed), with the same bytes.
type repackCase struct {
	plain, packed *graph.Tensor // the products
	wPacked       *graph.Tensor
	weight        []byte
	bufs          []buffer.Buffer
}

func newRepackCase(t *testing.T, rng *rand.Rand, typ quant.Type, k, m, n, n2 int64) *repackCase {
	t.Helper()
	c := graph.NewContext(graph.ContextOptions{})
	wPlain := c.NewTensor(typ, k, m)
	wPacked := c.NewTensor(typ, k, m)
	x := c.NewTensor(quant.F32, k, n, n2)
	rc := &repackCase{plain: c.MulMat(wPlain, x), packed: c.MulMat(wPacked, x), wPacked: wPacked}
	require.NoError(t, c.Err())
	t.Cleanup(func() {
		for _, b := range rc.bufs {
			_ = b.Free()
		}
	})
	rb, err := RepackBufferType().Alloc(RepackBufferType().AllocSize(wPacked))
	require.NoError(t, err)
	rc.bufs = append(rc.bufs, rb)
	require.NoError(t, rb.AllocTensor(wPacked, 0))
	hb, err := buffer.AllocTensors(buffer.CPU(), []*graph.Tensor{wPlain, x, rc.plain, rc.packed})
	require.NoError(t, err)
	rc.bufs = append(rc.bufs, hb)

	rc.weight, err = quant.Quantize(typ, mmRandF32s(rng, k*m), int(m), int(k), nil)
	require.NoError(t, err)
	require.NoError(t, buffer.SetTensor(wPlain, rc.weight, 0))
	require.NoError(t, buffer.SetTensor(wPacked, rc.weight, 0))
	mmSetF32s(x, mmRandF32s(rng, x.NElements()))
	return rc
}

func (rc *repackCase) compute(t *testing.T, opts Options) (plain, packed []float32) {
	t.Helper()
	e := New(opts)
	defer e.Close()
	for _, o := range []*graph.Tensor{rc.plain, rc.packed} {
		require.True(t, SupportsOp(o), "%s", describe(o))
		require.NoError(t, e.ComputeNode(o))
	}
	return mmF32s(rc.plain), mmF32s(rc.packed)
}

// repackShapes are (k, m, n, n2) with edge sizes: one block, one group of
// rows, column counts around the four-column tile and the column tile,
// more groups than columns (shared by the threads tile by tile).
var repackShapes = [][4]int64{
	{32, 8, 1, 1}, {64, 16, 3, 1}, {96, 8, 4, 1}, {256, 24, 5, 2}, {32, 40, 7, 1},
	{512, 64, 9, 1}, {160, 8, 33, 1}, {128, 16, 65, 2}, {1024, 32, 70, 1},
	{256, 200, 6, 1}, {4096, 160, 2, 1},
}

// TestRepackedMulMatMatchesPlain: a product with a repacked weight gives
// the plain weight's bits on the generic path, and the fast plain result
// within float rounding on the fast one (whose activations are those of
// ggml's AVX builds, a level off the generic ones in places), the same
// bits for every thread count.
func TestRepackedMulMatMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewSource(rand.Int63()))
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.IQ4_NL} {
		for _, s := range repackShapes {
			t.Run(fmt.Sprintf("%s/%v", typ, s), func(t *testing.T) {
				rc := newRepackCase(t, rng, typ, s[0], s[1], s[2], s[3])
				want, got := rc.compute(t, Options{Threads: 1, Generic: true})
				require.Equal(t, want, got, "generic: repacked and plain differ")
				var first []float32
				for _, th := range []int{1, 2, 3} {
					plain, fast := rc.compute(t, Options{Threads: th})
					requireCloseRows(t, plain, fast, s[0])
					if first == nil {
						first = fast
					}
					require.Equal(t, first, fast, "%d threads: the bits differ from 1 thread's", th)
				}
			})
		}
	}
}

// requireCloseRows checks fast against the result want, products
// of k terms each of which is below 1 in size.
func requireCloseRows(t *testing.T, want, got []float32, k int64) {
	t.Helper()
	require.Len(t, got, len(want))
	tol := 1e-5 * float64(k)
	for i := range want {
		require.InDelta(t, want[i], got[i], tol, "element %d", i)
	}
}

// TestRepackedNaNColumn: a column of non-finite activations is NaN, the
// others are not, on both paths.
func TestRepackedNaNColumn(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	rc := newRepackCase(t, rng, quant.Q4_0, 64, 16, 6, 1)
	x := rc.packed.Src[1]
	bv := mmF32s(x)
	bv[64*2+5] = float32(math.NaN())
	mmSetF32s(x, bv)
	for _, generic := range []bool{true, false} {
		_, got := rc.compute(t, Options{Threads: 2, Generic: generic})
		for i, v := range got {
			require.Equal(t, i/16 == 2, math.IsNaN(float64(v)), "generic %v, element %d = %v", generic, i, v)
		}
	}
}

// TestRepackRoundTrip: what is set comes back, whole or in any range,
// and partial writes land where they belong.
func TestRepackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(rand.Int63()))
	rc := newRepackCase(t, rng, quant.Q4_0, 96, 24, 1, 1)
	w := rc.wPacked
	got := make([]byte, len(rc.weight))
	require.NoError(t, buffer.GetTensor(w, got, 0))
	require.Equal(t, rc.weight, got)
	for range 20 {
		off := rng.Intn(len(rc.weight))
		n := rng.Intn(len(rc.weight) - off + 1)
		part := make([]byte, n)
		require.NoError(t, buffer.GetTensor(w, part, uint64(off)))
		require.Equal(t, rc.weight[off:off+n], part)

		patch := make([]byte, n)
		rng.Read(patch)
		require.NoError(t, buffer.SetTensor(w, patch, uint64(off)))
		copy(rc.weight[off:], patch)
		require.NoError(t, buffer.GetTensor(w, got, 0))
		require.Equal(t, rc.weight, got)
	}
	// The bytes stored are not ggml's: the interleave did happen.
	st, at, err := buffer.Locate(w)
	require.NoError(t, err)
	stored := st.(buffer.HostStorage).Bytes()[at : at+w.NBytes()]
	require.NotEqual(t, rc.weight, stored)
}

// TestRepackRefuses: tensors without a layout are refused when placed,
// and a repacked weight is usable only as a MUL_MAT's src0 with F32
// activations.
func TestRepackRefuses(t *testing.T) {
	c := graph.NewContext(graph.ContextOptions{})
	bad := []*graph.Tensor{
		c.NewTensor(quant.Q4_1, 32, 8),  // no layout
		c.NewTensor(quant.Q4_0, 32, 12), // not whole groups of rows
	}
	w := c.NewTensor(quant.Q4_0, 64, 8)
	get := c.GetRows(w, c.NewTensor(quant.I32, 2))
	q8 := c.MulMat(w, c.NewTensor(quant.Q8_0, 64, 2))
	good := c.MulMat(w, c.NewTensor(quant.F32, 64, 2))
	view := c.MulMat(c.View2D(w, 32, 8, w.Nb[1], 0), c.NewTensor(quant.F32, 32, 2))
	require.NoError(t, c.Err())
	b, err := RepackBufferType().Alloc(4096)
	require.NoError(t, err)
	defer func() { _ = b.Free() }()
	for _, x := range bad {
		err := b.AllocTensor(x, 0)
		require.Error(t, err, "%s", x.Type)
		require.True(t, errors.Is(err, ErrNotRepackable), "%v", err)
	}
	require.NoError(t, b.AllocTensor(w, 0))
	require.NoError(t, b.InitView(view.Src[0]))
	require.True(t, SupportsOp(good))
	for _, n := range []*graph.Tensor{get, q8, view} {
		require.False(t, SupportsOp(n), "%s", describe(n))
	}
	require.True(t, Device().SupportsBufferType(RepackBufferType()))
	require.Contains(t, Device().(interface{ ExtraBufferTypes() []buffer.Type }).ExtraBufferTypes(), RepackBufferType())
}

// kernelCase is a random group of eight rows of nb blocks (plain, as
// ggml stores them; x, interleaved by the layout's pack) and four random
// activation columns with their aux rows, for calling repackKernels
// directly.
type kernelCase struct {
	nb       int
	plain, x []byte
	ys, auxs [4][]byte
}

func newKernelCase(t *testing.T, rng *rand.Rand, typ quant.Type, l *repackLayout, nb int) *kernelCase {
	t.Helper()
	n := l.aux.block * nb
	plain, err := quant.Quantize(typ, mmRandF32s(rng, int64(8*n)), 8, n, nil)
	require.NoError(t, err)
	kc := &kernelCase{nb: nb, plain: plain, x: make([]byte, l.groupSize(uint64(len(plain))))}
	l.pack(kc.x, plain, len(plain)/8)
	for c := range 4 {
		kc.ys[c] = make([]byte, l.aux.vdt.RowSize(int64(n)))
		require.NoError(t, genericKernels.traits[l.aux.vdt].fromFloat(kc.ys[c], mmRandF32s(rng, int64(n))))
		kc.auxs[c] = make([]byte, nb*l.aux.size)
		l.aux.fill(kc.auxs[c], kc.ys[c], nb)
	}
	return kc
}

// run returns k's results column by column (one) and four at a time
// (four; nil without a four-column kernel).
func (kc *kernelCase) run(k *repackKernel) (one, four [4][]float32) {
	for c := range 4 {
		one[c] = make([]float32, 8)
		k.one(kc.nb, kc.x, kc.ys[c], kc.auxs[c], one[c])
	}
	if k.four != nil {
		for c := range 4 {
			four[c] = make([]float32, 8)
		}
		k.four(kc.nb, kc.x, &kc.ys, &kc.auxs, &four)
	}
	return one, four
}

// TestRepackKernelFourIsOne: the four-column kernel and the tile kernel
// (one to four columns, one to five groups of rows a call: amd64's
// one-column tiles run groups g and g+n/2 side by side, so five makes two
// pairs and the odd one) give each column of each group exactly the
// single-column kernel's bits, so results do not depend on the grouping;
// and the fast pack writes the layout's bytes.
func TestRepackKernelFourIsOne(t *testing.T) {
	rng := rand.New(rand.NewSource(rand.Int63()))
	const groups = 5
	for typ, l := range repackLayouts {
		k := repackKernelFor(fastKernels(), typ)
		if k == nil || k.four == nil && k.tile == nil {
			continue
		}
		kc := newKernelCase(t, rng, typ, l, 37*32/l.aux.block)
		if f := fastKernels().pack[typ]; f != nil {
			y := make([]byte, len(kc.x))
			f(y, kc.plain, len(kc.plain)/8)
			require.Equal(t, kc.x, y, "%s: the fast pack differs", typ)
		}
		one, four := kc.run(k)
		for c := range 4 {
			if k.four != nil {
				require.Equal(t, one[c], four[c], "%s column %d", typ, c)
			}
		}
		// The tile kernel: groups of other cases after kc's, against kc's
		// columns.
		x := slices.Clone(kc.x)
		var ones [groups][4][]float32
		ones[0] = one
		for g := 1; g < groups; g++ {
			o := newKernelCase(t, rng, typ, l, kc.nb)
			x = append(x, o.x...)
			for c := range 4 {
				ones[g][c] = make([]float32, 8)
				k.one(kc.nb, o.x, kc.ys[c], kc.auxs[c], ones[g][c])
			}
		}
		gsize := len(kc.x)
		tile := k.tiles()
		for ng := 1; ng <= groups; ng++ {
			for nc := 1; nc <= 4; nc++ {
				// The columns in another order, so that each slot
				// meets another column than in one.
				var cy, ca [4][]byte
				var out [4][]float32
				for j := range nc {
					c := (j + nc) % 4
					cy[j], ca[j], out[j] = kc.ys[c], kc.auxs[c], make([]float32, 8*ng)
				}
				tile(nc, kc.nb, ng, x[(groups-ng)*gsize:], &cy, &ca, &out)
				for j := range nc {
					for g := range ng {
						require.Equal(t, ones[groups-ng+g][(j+nc)%4], out[j][8*g:8*g+8], "%s: %d columns, %d groups: column %d group %d", typ, nc, ng, j, g)
					}
				}
			}
		}
	}
}

// TestRepackedAgainstGGML: products with repacked weights agree with the
// real ggml's, its weight in its own CPU_REPACK where it takes the type,
// within test-backend-ops' MUL_MAT tolerance (NMSE 5e-4).
func TestRepackedAgainstGGML(t *testing.T) {
	e, err := mirror.New(reftest.Lib(t), 2)
	require.NoError(t, err)
	defer e.Close()
	rng := rand.New(rand.NewSource(rand.Int63()))
	for typ := range repackLayouts {
		for _, n := range []int64{1, 5, 33} {
			name := fmt.Sprintf("%s/n=%d", typ, n)
			rc := newRepackCase(t, rng, typ, 256, 24, n, 1)
			_, ours := rc.compute(t, Options{Threads: 2})

			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			w := c.NewTensor(typ, 256, 24)
			x := c.NewTensor(quant.F32, 256, n)
			out := c.MulMat(w, x)
			require.NoError(t, c.Err())
			copy(w.Data, rc.weight)
			copy(x.Data, rc.packed.Src[1].Data)
			g, err := c.Build(out)
			require.NoError(t, err)
			l, _, err := e.LoadRepacked(g, []*graph.Tensor{w})
			require.NoError(t, err, name)
			require.NoError(t, l.Compute(), name)
			l.Read()
			theirs := mmF32s(out)
			var num, den float64
			for i := range theirs {
				d := float64(ours[i] - theirs[i])
				num += d * d
				den += float64(theirs[i]) * float64(theirs[i])
			}
			require.Less(t, num/den, 5e-4, name)
		}
	}
}

// TestSumInt8x32: the word-at-a-time sum is the byte-at-a-time one, on
// random bytes and on all -128 and all 127.
func TestSumInt8x32(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	q := make([]byte, 32)
	for it := range 2000 {
		for i := range q {
			switch it {
			case 0:
				q[i] = 0x80
			case 1:
				q[i] = 0x7f
			default:
				q[i] = byte(rng.Uint32())
			}
		}
		var want int32
		for _, b := range q {
			want += int32(int8(b))
		}
		if got := sumInt8x32(q); got != want {
			t.Fatalf("sumInt8x32(%v) = %d, want %d", q, got, want)
		}
	}
}

// TestFillAuxFast: the fast kernel set's aux rows are fillAux's bytes,
// on quantized random rows and on blocks of all -128 and all 127.
func TestFillAuxFast(t *testing.T) {
	fast := q8_0Aux.filler(fastKernels())
	rng := rand.New(rand.NewSource(rand.Int63()))
	for _, nb := range []int{1, 2, 7, 128} {
		y := make([]byte, 34*nb)
		_, err := quant.FromFloat(y, quant.Q8_0, mmRandF32s(rng, int64(32*nb)))
		require.NoError(t, err)
		if nb > 1 {
			for i := range 32 {
				y[2+i], y[36+i] = 0x80, 0x7f
			}
		}
		want, got := make([]byte, 8*nb), make([]byte, 8*nb)
		fillAux(want, y, nb)
		fast(got, y, nb)
		require.Equal(t, want, got, "nb=%d", nb)
	}
}

// TestOverlaps: convertRows reads F32 rows in place only when the
// destination does not share their memory.
func TestOverlaps(t *testing.T) {
	b := make([]byte, 64)
	cases := []struct {
		x, y []byte
		want bool
	}{
		{b[:32], b[32:], false},
		{b[:33], b[32:], true},
		{b[10:20], b[:64], true},
		{b[:0], b, false},
		{b, make([]byte, 64), false},
	}
	for i, c := range cases {
		if got := overlaps(c.x, c.y); got != c.want || overlaps(c.y, c.x) != c.want {
			t.Errorf("case %d: overlaps = %v, want %v", i, got, c.want)
		}
	}
}
