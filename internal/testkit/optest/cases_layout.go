package optest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Cases of the copy, layout and indexing operations, after test-backend-ops'
// test_repeat, test_concat, test_set, test_cpy, test_dup, test_cont,
// test_get_rows, test_set_rows, test_diag, test_pad, test_pad_ext,
// test_im2col and test_pool2d, plus cases of our own for views, reshapes
// and type pairs ggml's list leaves out.
//
// Left out of the registered cases (but described, for the support check):
//   - I8, I16 and I64 tensors, which the runner cannot read or fill;
//   - CPY and SET_ROWS into the lattice types, which neither side computes;
//   - the few test-backend-ops cases with a tensor of more than
//     layoutMaxElements elements (GET_ROWS with 80000 rows or 700x100
//     batches, an IM2COL with a 25M-element kernel).
//
// CPY and SET_ROWS into IQ4_NL are generated, but our CPU refuses them for
// now (see devices/cpu's fromFloatExact), so they are skipped.

// layoutMaxElements bounds the size of any tensor of a generated case.
const layoutMaxElements = 1 << 24

// layoutAllTypes is test-backend-ops' all_types.
var layoutAllTypes = []quant.Type{
	quant.F32, quant.F16, quant.BF16,
	quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q1_0, quant.Q2_0,
	quant.MXFP4, quant.NVFP4,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
	quant.TQ2_0,
	quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M,
	quant.IQ4_NL, quant.IQ3_S, quant.IQ4_XS,
}

// layoutUnreadable reports whether the runner can neither fill nor read a
// tensor of type typ.
func layoutUnreadable(typ quant.Type) bool {
	return typ == quant.I8 || typ == quant.I16 || typ == quant.I64 || typ == quant.F64
}

// layoutLattice reports whether typ is a lattice type: one package quant
// cannot quantize to, and neither can ggml's CPU backend.
func layoutLattice(typ quant.Type) bool { return typ.IsQuantized() && !typ.CanQuantize() }

func one(t *graph.Tensor) []*graph.Tensor { return []*graph.Tensor{t} }

// view4 views t with its own strides and a smaller shape, as the test cases
// make non-contiguous inputs.
func view4(c *graph.Context, t *graph.Tensor, ne [4]int64, offs uint64) *graph.Tensor {
	if t == nil {
		return nil
	}
	return c.View4D(t, ne[0], ne[1], ne[2], ne[3], t.Nb[1], t.Nb[2], t.Nb[3], offs)
}

func permute(c *graph.Context, t *graph.Tensor, p [4]int) *graph.Tensor {
	return c.Permute(t, p[0], p[1], p[2], p[3])
}

// layoutInit is an Init drawing every input from [lo, hi) with fillInput.
func layoutInit(lo, hi float32) func(*rand.Rand, *graph.Tensor) bool {
	return func(rng *rand.Rand, t *graph.Tensor) bool { return fillInput(rng, t, lo, hi) == nil }
}

// fillInput fills input t with values uniform in [lo, hi) as
// test-backend-ops' init_tensor_uniform does, including for the types the
// default fill refuses: I32 tensors get the bits of the floats, and the
// lattice types, which package quant cannot quantize to, random blocks.
func fillInput(rng *rand.Rand, t *graph.Tensor, lo, hi float32) error {
	switch {
	case t.Type == quant.I32:
		for i := range t.NElements() {
			binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(lo+(hi-lo)*rng.Float32()))
		}
		return nil
	case t.Type.IsQuantized() && !t.Type.CanQuantize():
		return fillRandomBlocks(rng, t)
	}
	return FillUniform(rng, t, lo, hi)
}

// fillRandomBlocks fills t with random blocks, drawing each again until it
// decodes to finite values.
func fillRandomBlocks(rng *rand.Rand, t *graph.Tensor) error {
	ts := t.Type.TypeSize()
	vals := make([]float32, t.Type.BlockSize())
	for off := 0; off+ts <= len(t.Data); off += ts {
		blk := t.Data[off : off+ts]
		for finite := false; !finite; {
			rng.Read(blk)
			if err := quant.DequantizeInto(vals, t.Type, blk); err != nil {
				return err
			}
			finite = true
			for _, v := range vals {
				finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
			}
		}
	}
	return nil
}

// quantNMSE is test-backend-ops' tolerance for copies into a few quantized
// types: the NMSE of one value off by one quantization step, for inputs of
// n values spread over a range whose squared mean is 0.25*rng^2.
func quantNMSE(dst quant.Type, step float64, n int64) (float64, bool) {
	switch dst {
	case quant.Q5_0, quant.Q5_1:
		step /= 2
	case quant.Q8_0:
		step /= 8
	case quant.Q2_0, quant.Q4_0, quant.Q4_1, quant.IQ4_NL:
	default:
		return 0, false
	}
	return step * step / (0.25 * float64(n)), true
}

// --- REPEAT ---------------------------------------------------------------------

type repeatCase struct {
	typ    quant.Type
	ne, nr [4]int64
}

func (k repeatCase) Case() Case {
	return Case{
		Name: Fmt("REPEAT", "type", k.typ, "ne", k.ne, "nr", k.nr),
		Build: func(c *graph.Context) []*graph.Tensor {
			target := c.NewTensor(k.typ, k.ne[0]*k.nr[0], k.ne[1]*k.nr[1], k.ne[2]*k.nr[2], k.ne[3]*k.nr[3])
			return one(c.Repeat(c.NewTensor(k.typ, k.ne[:]...), target))
		},
		Init: layoutInit(-1, 1),
	}
}

func repeatCases(full bool) []repeatCase {
	if !full {
		return []repeatCase{
			{quant.F32, [4]int64{10, 5, 4, 3}, [4]int64{2, 2, 2, 2}},
			{quant.F16, [4]int64{10, 5, 4, 1}, [4]int64{2, 1, 1, 1}},
			{quant.I32, [4]int64{10, 5, 4, 3}, [4]int64{1, 2, 1, 1}},
			{quant.BF16, [4]int64{10, 5, 4, 3}, [4]int64{1, 1, 1, 2}},
		}
	}
	var out []repeatCase
	for _, ne3 := range []int64{1, 3} {
		ne := [4]int64{10, 5, 4, ne3}
		for _, nr := range [][4]int64{{1, 1, 1, 1}, {2, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}} {
			out = append(out, repeatCase{quant.F32, ne, nr})
		}
		out = append(out,
			repeatCase{quant.F16, ne, [4]int64{2, 1, 1, 1}},
			repeatCase{quant.I32, ne, [4]int64{2, 1, 1, 1}},
			repeatCase{quant.I16, ne, [4]int64{1, 1, 1, 2}},
			repeatCase{quant.BF16, ne, [4]int64{2, 1, 1, 1}})
	}
	// Our own: every dimension repeated at once, for each type.
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.I32} {
		out = append(out, repeatCase{typ, [4]int64{3, 2, 5, 2}, [4]int64{2, 3, 2, 2}})
	}
	return out
}

// --- CONCAT ---------------------------------------------------------------------

type concatCase struct {
	typ  quant.Type
	neA  [4]int64
	neBD int64
	dim  int
	// v makes the sources views: bit 0 (a) and 1 (b) with gaps in their
	// first three dimensions, bits 2 (a) and 3 (b) in their last two.
	v int
}

func (k concatCase) Case() Case {
	return Case{
		Name: Fmt("CONCAT", "type", k.typ, "ne_a", k.neA, "ne_b_d", k.neBD, "dim", k.dim, "v", k.v),
		Build: func(c *graph.Context) []*graph.Tensor {
			neB := k.neA
			neB[k.dim] = k.neBD
			source := func(ne [4]int64, grow1, grow2 [4]int64, v1, v2 bool) *graph.Tensor {
				grow := [4]int64{1, 1, 1, 1}
				switch {
				case v1:
					grow = grow1
				case v2:
					grow = grow2
				default:
					return c.NewTensor(k.typ, ne[:]...)
				}
				t := c.NewTensor(k.typ, ne[0]*grow[0], ne[1]*grow[1], ne[2]*grow[2], ne[3]*grow[3])
				return view4(c, t, ne, 0)
			}
			a := source(k.neA, [4]int64{2, 4, 3, 1}, [4]int64{1, 1, 2, 4}, k.v&1 != 0, k.v&4 != 0)
			b := source(neB, [4]int64{3, 2, 4, 1}, [4]int64{1, 1, 3, 2}, k.v&2 != 0, k.v&8 != 0)
			return one(c.Concat(a, b, k.dim))
		},
		Init: layoutInit(-1, 1),
	}
}

func concatCases(full bool) []concatCase {
	ne := [4]int64{11, 12, 13, 14}
	qne := [4]int64{128, 12, 13, 14}
	if !full {
		return []concatCase{
			{quant.F32, ne, 7, 0, 0}, {quant.F32, ne, 7, 1, 1}, {quant.F32, ne, 7, 2, 2}, {quant.F32, ne, 7, 3, 3},
			{quant.F16, ne, 7, 1, 3}, {quant.I32, ne, 7, 2, 1},
			{quant.Q4_0, qne, 256, 0, 4}, {quant.Q8_0, qne, 7, 2, 12},
		}
	}
	var out []concatCase
	for v := range 4 {
		for dim := range 4 {
			for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.I8, quant.I16, quant.I32, quant.I64} {
				out = append(out, concatCase{typ, ne, 7, dim, v})
			}
		}
	}
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0} {
		for _, v := range []int{0, 4, 8, 12} {
			for dim := range 4 {
				bd := int64(7)
				if dim == 0 {
					bd = 256
				}
				out = append(out, concatCase{typ, qne, bd, dim, v})
			}
		}
	}
	// Our own: K-quants and other block sizes, and views in all four ways.
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.IQ4_XS, quant.Q1_0, quant.MXFP4} {
		for dim := range 4 {
			bd := int64(2)
			if dim == 0 {
				bd = 512
			}
			out = append(out, concatCase{typ, [4]int64{256, 3, 2, 2}, bd, dim, 12})
		}
	}
	for _, v := range []int{5, 6, 9, 10, 15} {
		out = append(out, concatCase{quant.F32, [4]int64{5, 4, 3, 2}, 3, v % 4, v})
	}
	return out
}

// --- SET ------------------------------------------------------------------------

type setCase struct {
	typSrc, typDst quant.Type
	ne             [4]int64
	// dim is the number of leading dimensions in which the destination is
	// twice the source; the source lands in the middle of them.
	dim     int
	inplace bool
	// mode is "" for ggml_set with the source's strides (as
	// test-backend-ops), "1d" or "2d" for ggml_set_1d and ggml_set_2d with
	// the destination's strides.
	mode string
}

func (k setCase) Case() Case {
	name := Fmt("SET", "type_src", k.typSrc, "type_dst", k.typDst, "ne", k.ne, "dim", k.dim, "inplace", b2i(k.inplace))
	if k.mode != "" {
		name = name[:len(name)-1] + ",mode=" + k.mode + ")"
	}
	return Case{
		Name: name,
		Build: func(c *graph.Context) []*graph.Tensor {
			src := c.NewTensor(k.typSrc, k.ne[:]...)
			neDst := k.ne
			for i := range k.dim {
				neDst[i] *= 2
			}
			dst := c.NewTensor(k.typDst, neDst[:]...)
			if src == nil || dst == nil {
				return nil
			}
			var off uint64
			for i := range k.dim {
				off += uint64((neDst[i]-k.ne[i])/2) * dst.Nb[i]
			}
			switch {
			case k.mode == "1d" && k.inplace:
				return one(c.Set1DInplace(dst, src, off))
			case k.mode == "1d":
				return one(c.Set1D(dst, src, off))
			case k.mode == "2d" && k.inplace:
				return one(c.Set2DInplace(dst, src, dst.Nb[1], off))
			case k.mode == "2d":
				return one(c.Set2D(dst, src, dst.Nb[1], off))
			case k.inplace:
				return one(c.SetInplace(dst, src, src.Nb[1], src.Nb[2], src.Nb[3], off))
			}
			return one(c.Set(dst, src, src.Nb[1], src.Nb[2], src.Nb[3], off))
		},
		Init: layoutInit(-1, 1),
	}
}

func setCases(full bool) []setCase {
	ne := [4]int64{6, 5, 4, 3}
	if !full {
		return []setCase{
			{quant.F32, quant.F32, ne, 1, false, ""}, {quant.F32, quant.F32, ne, 2, true, ""},
			{quant.F32, quant.F32, ne, 3, false, ""}, {quant.I32, quant.I32, ne, 2, true, ""},
			{quant.F32, quant.F32, [4]int64{7, 1, 1, 1}, 1, false, "1d"},
			{quant.F32, quant.F32, [4]int64{6, 5, 1, 1}, 2, true, "2d"},
		}
	}
	var out []setCase
	for _, typ := range []quant.Type{quant.F32, quant.I32} {
		for dim := 1; dim < 4; dim++ {
			out = append(out, setCase{typ, typ, ne, dim, false, ""}, setCase{typ, typ, ne, dim, true, ""})
		}
		// Our own: the whole destination, and the 1-D and 2-D forms.
		for _, inplace := range []bool{false, true} {
			out = append(out,
				setCase{typ, typ, ne, 0, inplace, ""},
				setCase{typ, typ, [4]int64{7, 1, 1, 1}, 1, inplace, "1d"},
				setCase{typ, typ, [4]int64{6, 5, 1, 1}, 2, inplace, "2d"},
				setCase{typ, typ, [4]int64{6, 5, 1, 1}, 1, inplace, "2d"})
		}
	}
	return out
}

// --- CPY ------------------------------------------------------------------------

type cpyCase struct {
	typSrc, typDst   quant.Type
	neSrc            [4]int64
	neDst            [4]int64 // all -1: the (permuted, transposed) source's shape
	permSrc, permDst [4]int   // all 0: no permutation
	transposeSrc     bool
	dstAlloc         [4]int64 // non-zero: the destination views a tensor of this shape
}

// tiesAmbiguous reports copies whose result depends on the build of ggml:
// F16 and BF16 values often fall exactly halfway between two Q8_0/Q8_1
// levels, which ggml's reference quantizer (and its scalar builds, and our
// CPU device) rounds away from zero and its AVX builds to even.
func tiesAmbiguous(src, dst quant.Type) bool {
	return (src == quant.F16 || src == quant.BF16) && (dst == quant.Q8_0 || dst == quant.Q8_1)
}

// oneQ8Level accepts outputs that differ from the reference by at most one
// quantization level (of the block with the largest values) in at most 1%
// of the elements: rounding a tie the other way, and nothing more.
func oneQ8Level(want, got []float32, _ *graph.Tensor) error {
	var amax float64
	for _, v := range want {
		amax = max(amax, math.Abs(float64(v)))
	}
	level := amax / 127 * 1.001
	differ := 0
	for i := range want {
		d := math.Abs(float64(want[i]) - float64(got[i]))
		if d > level {
			return fmt.Errorf("%w: element %d: got %v, reference %v, more than one level (%g) apart", ErrMismatch, i, got[i], want[i], level)
		}
		if d > 0 {
			differ++
		}
	}
	if differ*100 > len(want) {
		return fmt.Errorf("%w: %d of %d elements differ by a level; only rounded ties may", ErrMismatch, differ, len(want))
	}
	return nil
}

// newCpyCase is a copy into a destination shaped like the source.
func newCpyCase(src, dst quant.Type, ne [4]int64, permSrc, permDst [4]int) cpyCase {
	return cpyCase{typSrc: src, typDst: dst, neSrc: ne, neDst: [4]int64{-1, -1, -1, -1}, permSrc: permSrc, permDst: permDst}
}

func (k cpyCase) Case() Case {
	useDstShape := k.neDst[0] >= 0 && k.neDst[1] >= 0 && k.neDst[2] >= 0 && k.neDst[3] >= 0
	useAlloc := k.dstAlloc[0] > 0
	kv := []any{"type_src", k.typSrc, "type_dst", k.typDst, "ne_src", k.neSrc}
	if useDstShape || useAlloc {
		kv = append(kv, "ne_dst", k.neDst)
	}
	kv = append(kv, "permute_src", k.permSrc, "permute_dst", k.permDst, "_src_transpose", b2i(k.transposeSrc))
	if useAlloc {
		kv = append(kv, "dst_alloc", k.dstAlloc)
	}
	tol := Tolerance{MaxNMSE: 1e-6}
	n := k.neSrc[0] * k.neSrc[1] * k.neSrc[2] * k.neSrc[3]
	if k.typSrc == k.typDst {
		tol = Tolerance{Exact: true}
	} else if tiesAmbiguous(k.typSrc, k.typDst) {
		tol = Tolerance{Compare: oneQ8Level}
	} else if e, ok := quantNMSE(k.typDst, 1.0/8*150, n); ok && k.typDst != quant.Q2_0 {
		if k.typDst == quant.IQ4_NL {
			e *= 4 // iq4_nl's levels are spread twice as far
		}
		tol.MaxNMSE = e / (150 * 150)
	}
	return Case{
		Name: Fmt("CPY", kv...),
		Build: func(c *graph.Context) []*graph.Tensor {
			src := c.NewTensor(k.typSrc, k.neSrc[:]...)
			if k.permSrc != [4]int{} {
				src = permute(c, src, k.permSrc)
			}
			if k.transposeSrc {
				src = c.Transpose(src)
			}
			if src == nil {
				return nil
			}
			ne := src.Ne
			if useDstShape {
				ne = k.neDst
			}
			var dst *graph.Tensor
			if useAlloc {
				dst = view4(c, c.NewTensor(k.typDst, k.dstAlloc[:]...), ne, 0)
			} else {
				dst = c.NewTensor(k.typDst, ne[:]...)
				if k.permDst != [4]int{} {
					dst = permute(c, dst, k.permDst)
				}
			}
			return one(c.Cpy(src, dst))
		},
		Init: layoutInit(-150, 150),
		Tol:  tol,
	}
}

func cpyCases(full bool) []cpyCase {
	none := [4]int{}
	p0213, p0312, p1023 := [4]int{0, 2, 1, 3}, [4]int{0, 3, 1, 2}, [4]int{1, 0, 2, 3}
	if !full {
		transposed := newCpyCase(quant.F16, quant.F16, [4]int64{256, 4, 3, 1}, none, none)
		transposed.transposeSrc = true
		return []cpyCase{
			newCpyCase(quant.F32, quant.F32, [4]int64{3, 2, 3, 4}, p0312, p0213),
			newCpyCase(quant.F32, quant.F16, [4]int64{256, 4, 4, 4}, none, none),
			newCpyCase(quant.F16, quant.F32, [4]int64{256, 2, 3, 4}, p1023, none),
			newCpyCase(quant.BF16, quant.F16, [4]int64{256, 2, 3, 4}, p0213, none),
			newCpyCase(quant.F32, quant.Q4_0, [4]int64{256, 2, 3, 4}, p0213, none),
			newCpyCase(quant.Q4_0, quant.F32, [4]int64{256, 2, 3, 4}, p0213, none),
			newCpyCase(quant.F32, quant.Q4_K, [4]int64{256, 4, 4, 4}, none, none),
			newCpyCase(quant.F16, quant.IQ4_XS, [4]int64{256, 4, 4, 4}, none, none),
			newCpyCase(quant.Q4_0, quant.Q4_0, [4]int64{64, 2, 3, 4}, p0312, p0213),
			newCpyCase(quant.IQ2_XXS, quant.F32, [4]int64{256, 2, 3, 4}, p0213, none),
			newCpyCase(quant.F32, quant.I32, [4]int64{256, 2, 3, 4}, none, p1023),
			newCpyCase(quant.I32, quant.F32, [4]int64{256, 2, 3, 4}, none, none),
			transposed,
			{typSrc: quant.F32, typDst: quant.F32, neSrc: [4]int64{3, 5, 7, 32}, neDst: [4]int64{32, 7, 5, 3}},
			{typSrc: quant.F16, typDst: quant.F16, neSrc: [4]int64{128, 2, 3, 1}, neDst: [4]int64{128, 2, 3, 1}, dstAlloc: [4]int64{128, 4, 3, 1}},
		}
	}
	var out []cpyCase
	// Same-type copies.
	for _, typ := range layoutAllTypes {
		nk := int64(typ.BlockSize())
		for k := int64(1); k < 4; k++ {
			ne := [4]int64{k * nk, 2, 3, 4}
			out = append(out, newCpyCase(typ, typ, ne, none, none), newCpyCase(typ, typ, ne, p0213, none),
				newCpyCase(typ, typ, ne, p0312, p0213))
		}
	}
	for _, src := range []quant.Type{quant.F16, quant.BF16, quant.F32} {
		for _, dst := range layoutAllTypes {
			out = append(out, newCpyCase(src, dst, [4]int64{256, 4, 4, 4}, none, none),
				newCpyCase(src, dst, [4]int64{256, 2, 3, 4}, p0213, none))
		}
	}
	for _, src := range layoutAllTypes {
		out = append(out, newCpyCase(src, quant.F32, [4]int64{256, 4, 4, 4}, none, none),
			newCpyCase(src, quant.F32, [4]int64{256, 2, 3, 4}, p0213, none))
	}
	for _, src := range []quant.Type{quant.F16, quant.F32} {
		for _, dst := range []quant.Type{quant.F16, quant.F32} {
			out = append(out, newCpyCase(src, dst, [4]int64{256, 2, 3, 4}, none, p1023))
		}
	}
	out = append(out,
		newCpyCase(quant.F32, quant.Q4_0, [4]int64{96, 1, 1, 1}, none, none),
		newCpyCase(quant.Q4_0, quant.F32, [4]int64{96, 1, 1, 1}, none, none),
		newCpyCase(quant.F32, quant.I32, [4]int64{256, 2, 3, 4}, none, none),
		newCpyCase(quant.F32, quant.I32, [4]int64{256, 2, 3, 4}, none, p1023),
		newCpyCase(quant.I32, quant.F32, [4]int64{256, 2, 3, 4}, none, none),
		newCpyCase(quant.I32, quant.F32, [4]int64{256, 2, 3, 4}, none, p1023))
	for _, c := range []struct {
		typ quant.Type
		ne  [4]int64
	}{
		{quant.F16, [4]int64{256, 4, 3, 1}}, {quant.F32, [4]int64{256, 4, 3, 1}}, {quant.F32, [4]int64{256, 4, 3, 3}},
		{quant.BF16, [4]int64{256, 4, 3, 1}}, {quant.F16, [4]int64{256, 4, 1, 1}}, {quant.F32, [4]int64{256, 4, 1, 1}},
		{quant.BF16, [4]int64{256, 4, 1, 1}}, {quant.I32, [4]int64{256, 4, 1, 1}},
	} {
		k := newCpyCase(c.typ, c.typ, c.ne, none, none)
		k.transposeSrc = true
		out = append(out, k)
	}
	out = append(out,
		newCpyCase(quant.I32, quant.I32, [4]int64{256, 1, 4, 1}, [4]int{1, 2, 0, 3}, none),
		newCpyCase(quant.F32, quant.F32, [4]int64{256, 1, 4, 1}, [4]int{1, 2, 0, 3}, none),
		newCpyCase(quant.F32, quant.F32, [4]int64{2, 2097121, 1, 1}, p1023, none),
		newCpyCase(quant.F32, quant.F32, [4]int64{2, 2, 524281, 1}, p1023, none))
	for _, typ := range []quant.Type{quant.F32, quant.F16} {
		out = append(out, cpyCase{typSrc: typ, typDst: typ, neSrc: [4]int64{128, 2, 3, 1}, neDst: [4]int64{128, 2, 3, 1},
			dstAlloc: [4]int64{128, 4, 3, 1}})
	}
	// Reshaping copies: every permutation of {3, 5, 7, 32} into the sorted
	// and the reversed shape.
	canonical, reversed := [4]int64{3, 5, 7, 32}, [4]int64{32, 7, 5, 3}
	for _, typ := range []quant.Type{quant.F32, quant.F16} {
		for _, cur := range permutations(canonical) {
			if cur != canonical {
				out = append(out, cpyCase{typSrc: typ, typDst: typ, neSrc: cur, neDst: canonical})
			}
			if cur != reversed {
				out = append(out, cpyCase{typSrc: typ, typDst: typ, neSrc: cur, neDst: reversed})
			}
			if cur[0] == 32 && typ == quant.F32 {
				out = append(out, cpyCase{typSrc: quant.Q4_0, typDst: quant.Q4_0, neSrc: cur, neDst: reversed})
			}
		}
	}
	// Our own: conversions into strided destinations, the activation and
	// ternary formats ggml's list leaves out, and F16/BF16 into I32.
	for _, c := range []struct{ src, dst quant.Type }{
		{quant.F32, quant.F16}, {quant.F16, quant.BF16}, {quant.BF16, quant.F32}, {quant.F32, quant.I32},
		{quant.I32, quant.F32}, {quant.Q4_0, quant.F32}, {quant.Q6_K, quant.F32}, {quant.IQ3_S, quant.F32},
	} {
		out = append(out, cpyCase{typSrc: c.src, typDst: c.dst, neSrc: [4]int64{256, 2, 3, 1}, neDst: [4]int64{256, 2, 3, 1},
			dstAlloc: [4]int64{256, 4, 3, 2}})
	}
	for _, dst := range []quant.Type{quant.Q8_1, quant.Q8_K, quant.TQ1_0, quant.I32} {
		for _, src := range []quant.Type{quant.F32, quant.F16, quant.BF16} {
			out = append(out, newCpyCase(src, dst, [4]int64{256, 4, 2, 1}, none, none),
				newCpyCase(src, dst, [4]int64{256, 2, 3, 4}, p0213, none))
		}
	}
	out = append(out, newCpyCase(quant.TQ1_0, quant.F32, [4]int64{256, 2, 3, 4}, p0213, none),
		newCpyCase(quant.TQ1_0, quant.TQ1_0, [4]int64{256, 2, 3, 4}, p0312, p0213),
		newCpyCase(quant.Q8_1, quant.Q8_1, [4]int64{64, 2, 3, 4}, p0213, none))
	return out
}

// permutations lists every ordering of v, starting with v itself when it
// is sorted (the order of repeated std::next_permutation).
func permutations(v [4]int64) [][4]int64 {
	var out [][4]int64
	var rec func(prefix []int64, rest []int64)
	rec = func(prefix []int64, rest []int64) {
		if len(rest) == 0 {
			out = append(out, [4]int64(prefix))
			return
		}
		for i := range rest {
			next := append(append([]int64{}, rest[:i]...), rest[i+1:]...)
			rec(append(append([]int64{}, prefix...), rest[i]), next)
		}
	}
	rec(nil, v[:])
	return out
}

// --- DUP ------------------------------------------------------------------------

type dupCase struct {
	typ     quant.Type
	ne      [4]int64
	permute [4]int // all 0: none
}

func (k dupCase) Case() Case {
	kv := []any{"type", k.typ, "ne", k.ne}
	if k.permute != [4]int{} {
		kv = append(kv, "permute", k.permute)
	}
	return Case{
		Name: Fmt("DUP", kv...),
		Build: func(c *graph.Context) []*graph.Tensor {
			src := c.NewTensor(k.typ, k.ne[:]...)
			if k.permute != [4]int{} {
				src = permute(c, src, k.permute)
			}
			return one(c.Dup(src))
		},
		Init: layoutInit(-1, 1),
	}
}

func dupCases(full bool) []dupCase {
	ne := [4]int64{10, 10, 20, 1}
	ne2 := [4]int64{10, 10, 5, 1}
	if !full {
		return []dupCase{
			{quant.F32, ne, [4]int{}}, {quant.F16, ne2, [4]int{0, 2, 1, 3}}, {quant.F32, ne2, [4]int{1, 0, 2, 3}},
			{quant.I32, ne, [4]int{}},
		}
	}
	out := []dupCase{
		{quant.F32, ne, [4]int{}}, {quant.F16, ne, [4]int{}}, {quant.I32, ne, [4]int{}}, {quant.I16, ne, [4]int{}},
		{quant.F32, ne2, [4]int{0, 2, 1, 3}}, {quant.F16, ne2, [4]int{0, 2, 1, 3}},
		{quant.F32, ne2, [4]int{1, 0, 2, 3}}, {quant.F16, ne2, [4]int{1, 0, 2, 3}},
		{quant.I16, [4]int64{10, 8, 3, 1}, [4]int{0, 2, 1, 3}}, {quant.I16, [4]int64{10, 8, 3, 1}, [4]int{1, 2, 0, 3}},
	}
	// Our own: BF16 and quantized duplicates, permuted.
	for _, typ := range []quant.Type{quant.BF16, quant.Q4_0, quant.Q6_K, quant.IQ2_S} {
		out = append(out, dupCase{typ, [4]int64{256, 3, 2, 2}, [4]int{0, 3, 1, 2}})
	}
	return out
}

// --- CONT -----------------------------------------------------------------------

type contCase struct {
	typ          quant.Type
	ne           [4]int64
	useViewSlice bool
	permute      [4]int   // all 0: the source is transposed or view-sliced
	neDst        [4]int64 // non-zero: ggml_cont_4d into this shape
}

func (k contCase) Case() Case {
	kv := []any{"type", k.typ, "ne", k.ne, "use_view_slice", b2i(k.useViewSlice), "permute", k.permute}
	if k.neDst != [4]int64{} {
		kv = append(kv, "ne_dst", k.neDst)
	}
	return Case{
		Name: Fmt("CONT", kv...),
		Build: func(c *graph.Context) []*graph.Tensor {
			src := c.NewTensor(k.typ, k.ne[:]...)
			if src == nil {
				return nil
			}
			var v *graph.Tensor
			switch {
			case k.permute != [4]int{}:
				v = permute(c, src, k.permute)
			case k.useViewSlice:
				v = view4(c, src, [4]int64{k.ne[0], 1, k.ne[2], k.ne[3]}, src.Nb[0]*uint64(k.ne[1]-1))
			default:
				v = c.Transpose(src)
			}
			if k.neDst != [4]int64{} {
				return one(c.Cont(v, k.neDst[:]...))
			}
			return one(c.Cont(v))
		},
		Init: layoutInit(-1, 1),
	}
}

func contCases(full bool) []contCase {
	none := [4]int{}
	if !full {
		return []contCase{
			{quant.F32, [4]int64{2, 3, 5, 7}, true, none, [4]int64{}},
			{quant.F32, [4]int64{10, 10, 10, 1}, false, none, [4]int64{}},
			{quant.F16, [4]int64{33, 5, 7, 1}, false, [4]int{2, 1, 0, 3}, [4]int64{}},
			{quant.BF16, [4]int64{1, 8, 17, 1}, false, none, [4]int64{}},
			{quant.I32, [4]int64{2, 1, 3, 5}, true, none, [4]int64{}},
			{quant.F32, [4]int64{3, 4, 5, 6}, false, [4]int{2, 0, 3, 1}, [4]int64{12, 5, 3, 2}},
		}
	}
	var out []contCase
	shapes := [][4]int64{{2, 1, 1, 1}, {2, 1, 3, 5}, {2, 3, 5, 7}, {1, 4, 4, 1}, {1, 8, 17, 1}, {10, 10, 10, 1}}
	for _, typ := range []quant.Type{quant.F32, quant.I32, quant.F16, quant.BF16} {
		for _, slice := range []bool{true, false} {
			if slice && (typ == quant.F16 || typ == quant.BF16) {
				continue
			}
			for _, ne := range shapes {
				out = append(out, contCase{typ, ne, slice, none, [4]int64{}})
			}
		}
	}
	for _, typ := range []quant.Type{quant.F32, quant.F16} {
		for _, ne := range [][4]int64{{10, 10, 10, 1}, {33, 5, 7, 1}, {64, 3, 65, 1}, {2, 3, 5, 7},
			{1024, 64, 64, 1}, {2304, 64, 64, 1}, {1000, 33, 65, 1}} {
			for _, perm := range [][4]int{{2, 1, 0, 3}, {1, 2, 0, 3}, {0, 2, 1, 3}} {
				out = append(out, contCase{typ, ne, false, perm, [4]int64{}})
			}
		}
	}
	// Our own: every permutation of a 4-D tensor, made contiguous as is
	// and reshaped (ggml_cont_4d), for the float types and one quantized
	// type whose block rows stay whole.
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16} {
		for _, p := range permutations([4]int64{0, 1, 2, 3}) {
			perm := [4]int{int(p[0]), int(p[1]), int(p[2]), int(p[3])}
			out = append(out, contCase{typ, [4]int64{3, 4, 5, 6}, false, perm, [4]int64{}},
				contCase{typ, [4]int64{3, 4, 5, 6}, false, perm, [4]int64{20, 18, 1, 1}})
		}
	}
	for _, perm := range [][4]int{{0, 2, 1, 3}, {0, 3, 1, 2}, {0, 1, 3, 2}} {
		out = append(out, contCase{quant.Q8_0, [4]int64{64, 3, 4, 5}, false, perm, [4]int64{}},
			contCase{quant.Q4_K, [4]int64{256, 3, 4, 2}, false, perm, [4]int64{}})
	}
	return out
}

// --- GET_ROWS -------------------------------------------------------------------

type getRowsCase struct {
	typ               quant.Type
	n, m, r, be1, be2 int64
	v                 bool // the row numbers are a view with gaps
}

func (k getRowsCase) Case() Case {
	return Case{
		Name: Fmt("GET_ROWS", "type", k.typ, "n", k.n, "m", k.m, "r", k.r, "be1", k.be1, "be2", k.be2, "v", b2i(k.v)),
		Build: func(c *graph.Context) []*graph.Tensor {
			in := c.NewTensor(k.typ, k.n, k.m, k.be1, k.be2)
			rows := c.SetName(c.NewTensor(quant.I32, k.r, k.be1, k.be2), "rows")
			if k.v && rows != nil {
				rows = c.View3D(rows, k.r/2, k.be1, k.be2, rows.Nb[1], rows.Nb[2], 0)
			}
			return one(c.GetRows(in, rows))
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool {
			if t.Name != "rows" {
				return fillInput(rng, t, -1, 1) == nil
			}
			for i := range t.NElements() {
				binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(rng.Int63n(k.m)))
			}
			return true
		},
	}
}

func getRowsCases(full bool) []getRowsCase {
	if !full {
		return []getRowsCase{
			{quant.F32, 256, 5, 4, 1, 1, false}, {quant.F16, 256, 5, 4, 7, 1, true},
			{quant.Q4_0, 256, 5, 4, 7, 1, false}, {quant.Q6_K, 256, 5, 4, 1, 1, true},
			{quant.IQ2_XXS, 256, 5, 4, 1, 1, false}, {quant.I32, 256, 5, 4, 7, 1, true},
			{quant.F32, 1, 8, 2, 1, 1, false}, {quant.BF16, 64, 9, 6, 3, 2, true},
		}
	}
	var out []getRowsCase
	for _, typ := range []quant.Type{quant.F32, quant.Q4_0} {
		out = append(out, getRowsCase{typ, 300 * 256, 5, 4, 1, 2, false}, getRowsCase{typ, 256, 80000, 70000, 2, 1, false},
			getRowsCase{typ, 256, 5, 4, 700, 100, false})
	}
	out = append(out, getRowsCase{quant.F32, 1, 8, 2, 1, 1, false})
	for _, typ := range append(append([]quant.Type{}, layoutAllTypes...), quant.I32) {
		for _, b := range []int64{1, 7} {
			for _, v := range []bool{false, true} {
				out = append(out, getRowsCase{typ, 256, 5, 4, b, 1, v})
			}
		}
	}
	// Our own: batches in both dimensions, and the formats ggml's list
	// leaves out.
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.I32, quant.Q4_K, quant.IQ4_XS, quant.TQ1_0} {
		out = append(out, getRowsCase{typ, 256, 9, 6, 3, 2, true}, getRowsCase{typ, 256, 9, 11, 2, 3, false})
	}
	return out
}

// --- SET_ROWS -------------------------------------------------------------------

type setRowsCase struct {
	typSrc, typDst, typIdx quant.Type
	ne                     [4]int64
	nr23                   [2]int64 // how often the row numbers repeat over dimensions 2 and 3
	r                      int64    // rows to set
	v                      bool     // source and row numbers are views with gaps
}

func (k setRowsCase) Case() Case {
	tol := Tolerance{}
	n := k.ne[0] * k.r * k.ne[2] * k.nr23[0] * k.ne[3] * k.nr23[1]
	step := 1.0 / 8
	if k.typSrc == quant.F16 && k.typDst == quant.Q2_0 {
		step *= 4
	}
	if tiesAmbiguous(k.typSrc, k.typDst) {
		tol.Compare = oneQ8Level
	} else if e, ok := quantNMSE(k.typDst, step, n); ok {
		if k.typSrc == quant.F16 {
			e *= 16
		}
		tol.MaxNMSE = e
	}
	return Case{
		Name: Fmt("SET_ROWS", "type_src", k.typSrc, "type_dst", k.typDst, "type_idx", k.typIdx, "ne", k.ne,
			"nr23", k.nr23, "r", k.r, "v", b2i(k.v)),
		Build: func(c *graph.Context) []*graph.Tensor {
			ne2, ne3 := k.ne[2]*k.nr23[0], k.ne[3]*k.nr23[1]
			dst := c.NewTensor(k.typDst, k.ne[0], k.ne[1], ne2, ne3)
			src := c.NewTensor(k.typSrc, k.ne[0], k.r, ne2, ne3)
			idx := c.SetName(c.NewTensor(k.typIdx, k.r, k.ne[2], k.ne[3]), "row_idxs")
			if k.v && src != nil && idx != nil {
				src = view4(c, src, [4]int64{k.ne[0], k.r / 2, ne2, ne3}, 0)
				idx = c.View3D(idx, k.r/2, k.ne[2], k.ne[3], idx.Nb[1], idx.Nb[2], 0)
			}
			return one(c.SetRows(dst, src, idx))
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool {
			if t.Name != "row_idxs" {
				return fillInput(rng, t, -1, 1) == nil
			}
			// Each row of row numbers is a shuffled subset of the
			// destination's rows (zeros past their count).
			for i2 := range t.Ne[2] {
				for i1 := range t.Ne[1] {
					perm := rng.Perm(int(k.ne[1]))
					for i0 := range t.Ne[0] {
						var r int64
						if i0 < int64(len(perm)) {
							r = int64(perm[i0])
						}
						off := uint64(i1)*t.Nb[1] + uint64(i2)*t.Nb[2] + uint64(i0)*t.Nb[0]
						if t.Type == quant.I64 {
							binary.LittleEndian.PutUint64(t.Data[off:], uint64(r))
						} else {
							binary.LittleEndian.PutUint32(t.Data[off:], uint32(r))
						}
					}
				}
			}
			return true
		},
		Tol: tol,
	}
}

func setRowsCases(full bool) []setRowsCase {
	if !full {
		return []setRowsCase{
			{quant.F32, quant.F32, quant.I64, [4]int64{1, 8, 1, 3}, [2]int64{1, 1}, 2, false},
			{quant.F32, quant.Q8_0, quant.I32, [4]int64{256, 5, 1, 3}, [2]int64{1, 1}, 1, false},
			{quant.F16, quant.F16, quant.I32, [4]int64{1, 8, 1, 3}, [2]int64{1, 1}, 2, true},
			{quant.F32, quant.Q4_K, quant.I64, [4]int64{256, 11, 1, 7}, [2]int64{2, 3}, 7, true},
			{quant.F16, quant.BF16, quant.I64, [4]int64{31, 3, 7, 1}, [2]int64{2, 3}, 2, false},
			{quant.F32, quant.Q5_1, quant.I64, [4]int64{96, 3, 1, 1}, [2]int64{2, 3}, 2, true},
			setRowsKVCache[0], setRowsKVCache[1],
		}
	}
	var out []setRowsCase
	out = append(out,
		setRowsCase{quant.F32, quant.F32, quant.I64, [4]int64{1, 8, 1, 3}, [2]int64{1, 1}, 2, false},
		setRowsCase{quant.F32, quant.F32, quant.I32, [4]int64{1, 8, 1, 3}, [2]int64{1, 1}, 2, false},
		setRowsCase{quant.F32, quant.Q8_0, quant.I32, [4]int64{256, 5, 1, 3}, [2]int64{1, 1}, 1, false})
	dsts := append(append([]quant.Type{}, layoutAllTypes...), quant.Q8_1, quant.Q8_K, quant.TQ1_0, quant.I32)
	for _, src := range []quant.Type{quant.F16, quant.F32} {
		for _, typ := range dsts {
			if layoutLattice(typ) {
				continue
			}
			for _, b := range []int64{1, 7} {
				for _, v := range []bool{false, true} {
					bs := int64(typ.BlockSize())
					out = append(out,
						setRowsCase{src, typ, quant.I64, [4]int64{256, 5, b, 3}, [2]int64{1, 1}, 1, v},
						setRowsCase{src, typ, quant.I64, [4]int64{256, 11, 1, b}, [2]int64{2, 3}, 7, v},
						setRowsCase{src, typ, quant.I64, [4]int64{3 * bs, 3, b, 1}, [2]int64{2, 3}, 2, v})
					if bs == 1 {
						out = append(out,
							setRowsCase{src, typ, quant.I64, [4]int64{31, 3, b, 1}, [2]int64{2, 3}, 2, v},
							setRowsCase{src, typ, quant.I64, [4]int64{33, 5, 1, b}, [2]int64{2, 3}, 1, v})
					}
				}
			}
		}
	}
	for _, idx := range []quant.Type{quant.I64, quant.I32} {
		for _, v := range []bool{false, true} {
			out = append(out, setRowsCase{quant.F16, quant.F16, idx, [4]int64{1, 8, 1, 3}, [2]int64{1, 1}, 2, v})
		}
	}
	// Our own: I32 row numbers into quantized and 16-bit destinations.
	for _, typ := range []quant.Type{quant.F16, quant.BF16, quant.Q4_0, quant.Q5_K, quant.IQ4_XS} {
		out = append(out, setRowsCase{quant.F32, typ, quant.I32, [4]int64{256, 11, 1, 2}, [2]int64{2, 3}, 7, true})
	}
	return append(out, setRowsKVCache...)
}

// setRowsKVCache are our own cases in llama.cpp's KV-cache layout, which
// none of test-backend-ops' SET_ROWS cases has (all have ne[3] >= 3):
// one stream, a [n_embd_gqa, kv_size] cache written at n_tokens cells by
// I64 (and I32) cell numbers, the K (and non-transposed V) cache; the
// transposed V cache, one element per row ([1, kv_size·n_embd_gqa],
// n_tokens·n_embd_gqa row numbers); several heads' caches side by side
// (ne[2] > 1, one set of row numbers for all); and the tokens as a view
// with gaps (v=1). These are the forms ggml-openvino accepts.
var setRowsKVCache = func() []setRowsCase {
	var out []setRowsCase
	for _, dst := range []quant.Type{quant.F16, quant.F32, quant.BF16} {
		for _, idx := range []quant.Type{quant.I64, quant.I32} {
			out = append(out,
				setRowsCase{quant.F32, dst, idx, [4]int64{256, 64, 1, 1}, [2]int64{1, 1}, 7, false},
				setRowsCase{quant.F32, dst, idx, [4]int64{1, 32 * 64, 1, 1}, [2]int64{1, 1}, 64 * 3, false},
				setRowsCase{quant.F32, dst, idx, [4]int64{64, 32, 1, 1}, [2]int64{4, 1}, 5, true})
		}
	}
	out = append(out, setRowsCase{quant.F16, quant.F16, quant.I64, [4]int64{128, 512, 1, 1}, [2]int64{1, 1}, 32, false})
	return out
}()

// --- DIAG -----------------------------------------------------------------------

type diagCase struct {
	typ quant.Type
	ne  [4]int64
}

func (k diagCase) Case() Case {
	return Case{
		Name: Fmt("DIAG", "type", k.typ, "ne", k.ne),
		Build: func(c *graph.Context) []*graph.Tensor {
			return one(c.Diag(c.NewTensor(k.typ, k.ne[:]...)))
		},
	}
}

func diagCases(full bool) []diagCase {
	out := []diagCase{{quant.F32, [4]int64{10, 1, 4, 3}}}
	if full {
		out = append(out, diagCase{quant.F32, [4]int64{79, 1, 19, 13}}, diagCase{quant.F32, [4]int64{256, 1, 8, 16}},
			diagCase{quant.F32, [4]int64{1, 1, 1, 1}})
	}
	return out
}

// --- PAD ------------------------------------------------------------------------

type padCase struct {
	typ quant.Type
	neA [4]int64
	// ext selects test_pad_ext's form (padding on both sides, a view or
	// permutation of the source) over test_pad's (rp[0], rp[1] only).
	ext      bool
	lp, rp   [4]int
	tfrm     int // ext only: 0 none, 1 a view with gaps, 2 dimensions 0 and 2 swapped
	circular bool
}

func (k padCase) Case() Case {
	name := Fmt("PAD", "type", k.typ, "ne_a", k.neA, "pad_0", k.rp[0], "pad_1", k.rp[1], "circular", b2i(k.circular))
	if k.ext {
		name = Fmt("PAD", "type", k.typ, "ne_a", k.neA, "lp0", k.lp[0], "rp0", k.rp[0], "lp1", k.lp[1], "rp1", k.rp[1],
			"lp2", k.lp[2], "rp2", k.rp[2], "lp3", k.lp[3], "rp3", k.rp[3], "tfrm", k.tfrm, "circular", b2i(k.circular))
	}
	return Case{
		Name: name,
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(k.typ, k.neA[:]...)
			switch {
			case !k.ext && k.circular:
				return one(c.PadCircular(a, k.rp[0], k.rp[1], 0, 0))
			case !k.ext:
				return one(c.Pad(a, k.rp[0], k.rp[1], 0, 0))
			case k.tfrm == 1:
				ne := k.neA
				for i := range ne {
					ne[i] = (ne[i] + 1) / 2
				}
				a = view4(c, a, ne, 0)
			case k.tfrm == 2:
				a = c.Permute(a, 2, 1, 0, 3)
			}
			if k.circular {
				return one(c.PadExtCircular(a, k.lp[0], k.rp[0], k.lp[1], k.rp[1], k.lp[2], k.rp[2], k.lp[3], k.rp[3]))
			}
			return one(c.PadExt(a, k.lp[0], k.rp[0], k.lp[1], k.rp[1], k.lp[2], k.rp[2], k.lp[3], k.rp[3]))
		},
	}
}

func padCases(full bool) []padCase {
	simple := func(ne [4]int64, p0, p1 int, circular bool) padCase {
		return padCase{typ: quant.F32, neA: ne, rp: [4]int{p0, p1}, circular: circular}
	}
	ext := func(ne [4]int64, lp, rp [4]int, tfrm int, circular bool) padCase {
		return padCase{typ: quant.F32, neA: ne, ext: true, lp: lp, rp: rp, tfrm: tfrm, circular: circular}
	}
	big := [4]int64{11, 22, 33, 44}
	if !full {
		return []padCase{
			simple([4]int64{33, 17, 2, 1}, 4, 3, true), simple([4]int64{100, 10, 1, 1}, 5, 7, false),
			ext([4]int64{15, 12, 3, 2}, [4]int{1, 3, 5, 7}, [4]int{2, 4, 6, 8}, 0, false),
			ext([4]int64{15, 12, 9, 4}, [4]int{1, 3, 5, 0}, [4]int{2, 0, 6, 1}, 1, true),
			ext([4]int64{15, 12, 9, 4}, [4]int{1, 3, 5, 0}, [4]int{2, 0, 6, 1}, 2, false),
		}
	}
	out := []padCase{
		simple([4]int64{512, 512, 1, 1}, 1, 1, false), simple([4]int64{33, 17, 2, 1}, 4, 3, true),
		ext([4]int64{512, 512, 3, 1}, [4]int{1, 1, 1, 1}, [4]int{1, 1, 1, 1}, 0, false),
		simple([4]int64{1024, 1, 1, 1}, 1, 0, false), simple([4]int64{1024, 2, 1, 1}, 1, 0, false),
		simple([4]int64{1024, 16, 1, 1}, 0, 1, false), simple([4]int64{1023, 1, 1, 1}, 1, 0, false),
		simple([4]int64{1023, 8, 1, 1}, 1, 0, false), simple([4]int64{1025, 1, 1, 1}, 1, 0, false),
		simple([4]int64{1025, 8, 1, 1}, 1, 0, false), simple([4]int64{2048, 1, 1, 1}, 1, 0, false),
		simple([4]int64{2048, 4, 1, 1}, 1, 0, false), simple([4]int64{2049, 1, 1, 1}, 1, 0, false),
		simple([4]int64{100, 1, 1, 1}, 100, 0, false), simple([4]int64{100, 1, 1, 1}, 0, 100, false),
		simple([4]int64{100, 100, 1, 1}, 50, 50, false),
	}
	for _, tfrm := range []int{0, 1, 2} {
		for _, circular := range []bool{false, true} {
			out = append(out, ext([4]int64{512, 512, 1, 1}, [4]int{0, 0, 0, 0}, [4]int{1, 1, 0, 0}, tfrm, circular),
				ext(big, [4]int{1, 3, 5, 7}, [4]int{2, 4, 6, 8}, tfrm, circular))
		}
	}
	// Our own: cropping (negative padding), and circular padding reaching
	// a whole source length before and twice after.
	for _, tfrm := range []int{0, 1, 2} {
		out = append(out, ext([4]int64{9, 8, 7, 6}, [4]int{-2, 1, -1, 0}, [4]int{3, -3, 0, -2}, tfrm, false),
			ext([4]int64{9, 8, 7, 6}, [4]int{-2, 1, -1, 0}, [4]int{3, -3, 0, -2}, tfrm, true))
	}
	out = append(out, ext([4]int64{5, 4, 3, 2}, [4]int{5, 4, 3, 2}, [4]int{11, 9, 7, 5}, 0, true))
	return out
}

// --- IM2COL ---------------------------------------------------------------------

type im2colCase struct {
	typIn, typKernel, dstType quant.Type
	neIn, neKernel            [4]int64
	s0, s1, p0, p1, d0, d1    int
	is2D                      bool
}

func (k im2colCase) Case() Case {
	return Case{
		Name: Fmt("IM2COL", "type_input", k.typIn, "type_kernel", k.typKernel, "dst_type", k.dstType,
			"ne_input", k.neIn, "ne_kernel", k.neKernel, "s0", k.s0, "s1", k.s1, "p0", k.p0, "p1", k.p1,
			"d0", k.d0, "d1", k.d1, "is_2D", b2i(k.is2D)),
		Build: func(c *graph.Context) []*graph.Tensor {
			in := c.NewTensor(k.typIn, k.neIn[:]...)
			kernel := c.NewTensor(k.typKernel, k.neKernel[:]...)
			return one(c.Im2Col(kernel, in, k.s0, k.s1, k.p0, k.p1, k.d0, k.d1, k.is2D, k.dstType))
		},
	}
}

func im2colCases(full bool) []im2colCase {
	f32, f16 := quant.F32, quant.F16
	twoD := func(in, kernel, dst quant.Type) im2colCase {
		return im2colCase{in, kernel, dst, [4]int64{10, 10, 3, 1}, [4]int64{3, 3, 3, 1}, 1, 1, 1, 1, 1, 1, true}
	}
	if !full {
		return []im2colCase{
			{f32, f32, f32, [4]int64{20, 2, 2, 1}, [4]int64{3, 2, 2, 1}, 3, 0, 3, 0, 3, 0, false},
			{f32, f16, f16, [4]int64{30, 4, 3, 1}, [4]int64{3, 4, 5, 1}, 1, 0, 1, 0, 1, 0, false},
			twoD(f32, f32, f32), twoD(f32, f16, f16),
			{f32, f32, f32, [4]int64{20, 20, 2, 2}, [4]int64{3, 3, 2, 2}, 3, 1, 3, 0, 1, 3, true},
			{f16, f16, f16, [4]int64{12, 12, 2, 3}, [4]int64{3, 3, 2, 3}, 1, 1, 1, 1, 1, 1, true},
		}
	}
	out := []im2colCase{
		{f32, f32, f32, [4]int64{3000, 128, 1, 1}, [4]int64{3, 128, 1280, 1}, 1, 0, 1, 0, 1, 0, false},
		{f32, f16, f32, [4]int64{3000, 128, 1, 1}, [4]int64{3, 128, 1280, 1}, 1, 0, 1, 0, 1, 0, false},
		{f32, f16, f16, [4]int64{3000, 128, 1, 1}, [4]int64{3, 128, 1280, 1}, 1, 0, 1, 0, 1, 0, false},
		{f32, f16, f16, [4]int64{3000, 384, 1, 1}, [4]int64{3, 384, 384, 1}, 1, 0, 1, 0, 1, 0, false},
	}
	for _, s0 := range []int{1, 3} {
		for _, p0 := range []int{0, 3} {
			for _, d0 := range []int{1, 3} {
				out = append(out, im2colCase{f32, f32, f32, [4]int64{20, 2, 2, 1}, [4]int64{3, 2, 2, 1}, s0, 0, p0, 0, d0, 0, false})
			}
		}
	}
	out = append(out, twoD(f32, f32, f32), twoD(f32, f32, f16), twoD(f32, f16, f32), twoD(f32, f16, f16))
	for _, s0 := range []int{1, 3} {
		for _, s1 := range []int{1, 3} {
			for _, p0 := range []int{0, 3} {
				for _, p1 := range []int{0, 3} {
					for _, d0 := range []int{1, 3} {
						for _, d1 := range []int{1, 3} {
							out = append(out, im2colCase{f32, f32, f32, [4]int64{20, 20, 2, 2}, [4]int64{3, 3, 2, 2},
								s0, s1, p0, p1, d0, d1, true})
						}
					}
				}
			}
		}
	}
	for _, c := range []struct{ in, kernel [4]int64 }{
		{[4]int64{12, 12, 1, 32}, [4]int64{3, 3, 1, 32}}, {[4]int64{12, 12, 2, 32}, [4]int64{3, 3, 2, 32}},
		{[4]int64{12, 12, 1, 1024}, [4]int64{3, 3, 1, 1024}}, {[4]int64{12, 12, 2, 1024}, [4]int64{3, 3, 2, 1024}},
		{[4]int64{12, 12, 1, 2048}, [4]int64{3, 3, 1, 2048}}, {[4]int64{12, 12, 2, 2048}, [4]int64{3, 3, 2, 2048}},
		{[4]int64{12, 12, 1, 2560}, [4]int64{3, 3, 1, 2560}}, {[4]int64{12, 12, 2, 2560}, [4]int64{3, 3, 2, 2560}},
	} {
		out = append(out, im2colCase{f32, f16, f16, c.in, c.kernel, 1, 1, 1, 1, 1, 1, true})
	}
	out = append(out,
		im2colCase{f32, f16, f16, [4]int64{5, 5, 1, 32}, [4]int64{3, 4, 1, 32}, 1, 1, 0, 0, 1, 1, true},
		im2colCase{f32, f32, f32, [4]int64{2, 2, 1536, 729}, [4]int64{2, 2, 1536, 4096}, 1, 1, 0, 0, 1, 1, true},
		im2colCase{f32, f16, f16, [4]int64{128, 128, 1, 2}, [4]int64{32, 33, 1, 2}, 1, 1, 1, 1, 1, 1, true},
		im2colCase{f32, f16, f16, [4]int64{128, 128, 2, 1}, [4]int64{33, 34, 2, 1}, 1, 1, 1, 1, 1, 1, true})
	// Our own: F16 input, and 1-D with batches.
	out = append(out,
		im2colCase{f16, f16, f16, [4]int64{12, 12, 2, 3}, [4]int64{3, 3, 2, 3}, 1, 1, 1, 1, 1, 1, true},
		im2colCase{f16, f16, f16, [4]int64{30, 4, 3, 1}, [4]int64{5, 4, 2, 1}, 2, 0, 2, 0, 2, 0, false},
		im2colCase{f32, f32, f16, [4]int64{30, 4, 3, 1}, [4]int64{5, 4, 2, 1}, 1, 0, 0, 0, 1, 0, false})
	return out
}

// --- POOL_2D --------------------------------------------------------------------

type pool2DCase struct {
	op                     ops.PoolOp
	typ                    quant.Type
	neIn                   [4]int64
	k0, k1, s0, s1, p0, p1 int
}

func (k pool2DCase) Case() Case {
	return Case{
		Name: Fmt("POOL_2D", "pool_type", k.op, "type_input", k.typ, "ne_input", k.neIn, "k0", k.k0, "k1", k.k1,
			"s0", k.s0, "s1", k.s1, "p0", k.p0, "p1", k.p1),
		Build: func(c *graph.Context) []*graph.Tensor {
			in := c.NewTensor(k.typ, k.neIn[:]...)
			return one(c.Pool2D(in, k.op, k.k0, k.k1, k.s0, k.s1, float32(k.p0), float32(k.p1)))
		},
	}
}

func pool2DCases(full bool) []pool2DCase {
	ne := [4]int64{10, 10, 3, 1}
	if !full {
		return []pool2DCase{
			{ops.PoolAvg, quant.F32, ne, 3, 3, 2, 2, 1, 1}, {ops.PoolMax, quant.F32, ne, 3, 3, 2, 2, 1, 1},
			{ops.PoolAvg, quant.F32, ne, 1, 3, 1, 2, 0, 1}, {ops.PoolMax, quant.F16, [4]int64{9, 7, 2, 2}, 3, 2, 2, 1, 1, 0},
		}
	}
	var out []pool2DCase
	for _, op := range []ops.PoolOp{ops.PoolAvg, ops.PoolMax} {
		for _, k0 := range []int{1, 3} {
			for _, k1 := range []int{1, 3} {
				for _, s0 := range []int{1, 2} {
					for _, s1 := range []int{1, 2} {
						for _, p0 := range []int{0, 1} {
							for _, p1 := range []int{0, 1} {
								out = append(out, pool2DCase{op, quant.F32, ne, k0, k1, s0, s1, p0, p1})
							}
						}
					}
				}
			}
		}
	}
	// Our own: F16 input, batches in dimension 3, wide windows.
	for _, op := range []ops.PoolOp{ops.PoolAvg, ops.PoolMax} {
		out = append(out, pool2DCase{op, quant.F16, [4]int64{9, 7, 2, 2}, 3, 2, 2, 1, 1, 0},
			pool2DCase{op, quant.F32, [4]int64{16, 12, 3, 2}, 5, 4, 3, 2, 2, 1})
	}
	return out
}

// --- registration ---------------------------------------------------------------

// layoutCases gathers every op's cases, leaving out those the runner cannot
// handle or that are too large (see the top of the file).
func layoutCases(full bool) []Case {
	var out []Case
	add := func(k interface{ Case() Case }, types []quant.Type, sizes ...int64) {
		for _, typ := range types {
			if layoutUnreadable(typ) {
				return
			}
		}
		for _, n := range sizes {
			if n > layoutMaxElements {
				return
			}
		}
		out = append(out, k.Case())
	}
	prod := func(ne [4]int64) int64 { return ne[0] * ne[1] * ne[2] * ne[3] }
	for _, k := range repeatCases(full) {
		add(k, []quant.Type{k.typ})
	}
	for _, k := range concatCases(full) {
		add(k, []quant.Type{k.typ})
	}
	for _, k := range setCases(full) {
		add(k, []quant.Type{k.typSrc, k.typDst})
	}
	for _, k := range cpyCases(full) {
		if layoutLattice(k.typDst) {
			continue
		}
		add(k, []quant.Type{k.typSrc, k.typDst}, prod(k.neSrc))
	}
	for _, k := range dupCases(full) {
		add(k, []quant.Type{k.typ})
	}
	for _, k := range contCases(full) {
		add(k, []quant.Type{k.typ}, prod(k.ne))
	}
	for _, k := range getRowsCases(full) {
		add(k, []quant.Type{k.typ}, k.n*k.m*k.be1*k.be2, k.n*k.r*k.be1*k.be2)
	}
	for _, k := range setRowsCases(full) {
		add(k, []quant.Type{k.typSrc, k.typDst})
	}
	for _, k := range diagCases(full) {
		add(k, []quant.Type{k.typ})
	}
	for _, k := range padCases(full) {
		add(k, []quant.Type{k.typ})
	}
	for _, k := range im2colCases(full) {
		add(k, []quant.Type{k.typIn, k.dstType}, prod(k.neIn), prod(k.neKernel))
	}
	for _, k := range pool2DCases(full) {
		add(k, []quant.Type{k.typ})
	}
	for _, k := range rollCases() {
		add(k, []quant.Type{quant.F32})
	}
	return out
}

// --- ROLL -----------------------------------------------------------------------

// rollCase is test_roll: an F32 [10, 5, 4, 3] tensor, or a view of it
// with dimensions 1 and 2 swapped (permute), rolled by four shifts (named
// shift0, shift1, shift3, shift4 as test-backend-ops does).
type rollCase struct {
	shift   [4]int
	permute bool
}

func (k rollCase) Case() Case {
	return Case{
		Name: Fmt("ROLL", "shift0", k.shift[0], "shift1", k.shift[1], "shift3", k.shift[2], "shift4", k.shift[3],
			"permute", b2i(k.permute)),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(quant.F32, 10, 5, 4, 3)
			if k.permute {
				a = c.Permute(a, 0, 2, 1, 3)
			}
			return one(c.Roll(a, k.shift[0], k.shift[1], k.shift[2], k.shift[3]))
		},
		// Our CPU device has no ROLL: the quick set, which it runs as a
		// reference, leaves the cases out.
		Full: true,
	}
}

// rollCases are test-backend-ops' two and shifts of our own: none, and
// nearly whole dimensions either way.
func rollCases() []rollCase {
	return []rollCase{
		{[4]int{3, -2, 1, -1}, false}, {[4]int{3, -2, 1, -1}, true},
		{[4]int{0, 0, 0, 0}, false}, {[4]int{-9, 3, -4, 2}, true},
	}
}

// layoutFromDesc builds the case a cpu_support.csv row describes.
func layoutFromDesc(op string, d Desc) (Case, error) {
	r := &descReader{d: d}
	var k interface{ Case() Case }
	switch op {
	case "REPEAT":
		k = repeatCase{r.dtype("type"), r.ne("ne"), r.ne("nr")}
	case "CONCAT":
		k = concatCase{r.dtype("type"), r.ne("ne_a"), r.num64("ne_b_d"), r.num("dim"), r.num("v")}
	case "SET":
		k = setCase{r.dtype("type_src"), r.dtype("type_dst"), r.ne("ne"), r.num("dim"), r.flag("inplace"), ""}
	case "CPY":
		c := cpyCase{typSrc: r.dtype("type_src"), typDst: r.dtype("type_dst"), neSrc: r.ne("ne_src"), neDst: [4]int64{-1, -1, -1, -1},
			permSrc: r.perm("permute_src"), permDst: r.perm("permute_dst"), transposeSrc: r.flag("_src_transpose")}
		if r.has("ne_dst") {
			c.neDst = r.ne("ne_dst")
		}
		if r.has("dst_alloc") {
			c.dstAlloc = r.ne("dst_alloc")
		}
		k = c
	case "DUP":
		c := dupCase{typ: r.dtype("type"), ne: r.ne("ne")}
		if r.has("permute") {
			c.permute = r.perm("permute")
		}
		k = c
	case "CONT":
		c := contCase{typ: r.dtype("type"), ne: r.ne("ne"), useViewSlice: r.flag("use_view_slice"), permute: r.perm("permute")}
		if r.has("ne_dst") {
			c.neDst = r.ne("ne_dst")
		}
		k = c
	case "GET_ROWS":
		k = getRowsCase{r.dtype("type"), r.num64("n"), r.num64("m"), r.num64("r"), r.num64("be1"), r.num64("be2"), r.flag("v")}
	case "SET_ROWS":
		k = setRowsCase{r.dtype("type_src"), r.dtype("type_dst"), r.dtype("type_idx"), r.ne("ne"), [2]int64(r.ints("nr23", 2)),
			r.num64("r"), r.flag("v")}
	case "DIAG":
		k = diagCase{r.dtype("type"), r.ne("ne")}
	case "PAD":
		c := padCase{typ: r.dtype("type"), neA: r.ne("ne_a"), circular: r.flag("circular")}
		if r.has("pad_0") {
			c.rp[0], c.rp[1] = r.num("pad_0"), r.num("pad_1")
		} else {
			c.ext, c.tfrm = true, r.num("tfrm")
			for i := range 4 {
				c.lp[i], c.rp[i] = r.num(fmt.Sprintf("lp%d", i)), r.num(fmt.Sprintf("rp%d", i))
			}
		}
		k = c
	case "IM2COL":
		k = im2colCase{r.dtype("type_input"), r.dtype("type_kernel"), r.dtype("dst_type"), r.ne("ne_input"), r.ne("ne_kernel"),
			r.num("s0"), r.num("s1"), r.num("p0"), r.num("p1"), r.num("d0"), r.num("d1"), r.flag("is_2D")}
	case "POOL_2D":
		name, err := d.get("pool_type")
		r.keep(err)
		pool, err := ops.ParsePoolOp(name)
		r.keep(err)
		k = pool2DCase{pool, r.dtype("type_input"), r.ne("ne_input"), r.num("k0"), r.num("k1"), r.num("s0"), r.num("s1"),
			r.num("p0"), r.num("p1")}
	default:
		return Case{}, fmt.Errorf("optest: layout cases do not include %s", op)
	}
	if r.err != nil {
		return Case{}, fmt.Errorf("optest: %s: %w", op, r.err)
	}
	return k.Case(), nil
}
