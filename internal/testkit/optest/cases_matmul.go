package optest

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func init() {
	Register("matmul", matmulCases)
	RegisterDescribed([]string{"MUL_MAT", "MUL_MAT_HADAMARD"}, mulMatFromDesc)
	RegisterDescribed([]string{"MUL_MAT_ID"}, mulMatIDFromDesc)
	RegisterDescribed([]string{"OUT_PROD"}, outProdFromDesc)
}

// matmulTol is test-backend-ops' tolerance for every matrix product.
var matmulTol = Tolerance{MaxNMSE: 5e-4}

// test-backend-ops' base_types and other_types (all_types is layoutAllTypes).
var (
	mmBaseTypes = []quant.Type{
		quant.F32, quant.F16, quant.Q8_0, quant.Q1_0, quant.Q2_0, quant.Q4_0, quant.Q4_1,
		quant.Q4_K, quant.MXFP4, quant.NVFP4, quant.IQ2_XXS,
	}
	mmOtherTypes = []quant.Type{
		quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q1_0, quant.Q2_0,
		quant.Q2_K, quant.Q3_K, quant.Q5_K, quant.Q6_K, quant.TQ2_0,
		quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M,
		quant.IQ4_NL, quant.IQ3_S, quant.IQ4_XS, quant.BF16,
	}
)

// mmNoPerm is the unpermuted axis order.
var mmNoPerm = [4]int{0, 1, 2, 3}

// mulMat describes a test_mul_mat case: a [k, m, bs...] times b [k, n,
// bs*nr...], optionally built permuted (per), as views of rows k_v long,
// as overlapping views of ones tensor, summed o times, or with src0 hinted
// to be a Hadamard matrix (MUL_MAT_HADAMARD).
type mulMat struct {
	typeA, typeB quant.Type
	m, n, k      int64
	bs, nr       [2]int64
	per          [4]int
	kv           int64
	o            int
	overlap      bool
	hadamard     bool
}

// mm is test_mul_mat's constructor without its optional arguments.
func mm(ta, tb quant.Type, m, n, k int64, bs, nr [2]int64) mulMat {
	return mulMat{typeA: ta, typeB: tb, m: m, n: n, k: k, bs: bs, nr: nr, per: mmNoPerm, o: 1}
}

// permuted builds a and b with their axes in order per, then permutes them back.
func (s mulMat) permuted(per [4]int) mulMat { s.per = per; return s }

// viewed makes a and b views of the first k of kv elements of each row, and
// sums o products of them.
func (s mulMat) viewed(kv int64, o int) mulMat { s.kv, s.o = kv, o; return s }

// overlapping makes a and b interleaved views of ones tensor.
func (s mulMat) overlapping() mulMat { s.overlap = true; return s }

func (s mulMat) name() string {
	op := "MUL_MAT"
	if s.hadamard {
		op = "MUL_MAT_HADAMARD"
	}
	return Fmt(op, "type_a", s.typeA, "type_b", s.typeB, "m", s.m, "n", s.n, "k", s.k,
		"bs", s.bs, "nr", s.nr, "per", s.per, "k_v", s.kv, "o", s.o, "src_overlap", b2i(s.overlap))
}

func (s mulMat) build(c *graph.Context) []*graph.Tensor {
	var a, b *graph.Tensor
	nb2, nb3 := s.bs[0]*s.nr[0], s.bs[1]*s.nr[1]
	switch {
	case s.per != mmNoPerm:
		neA := [4]int64{s.k, s.m, s.bs[0], s.bs[1]}
		neB := [4]int64{s.k, s.n, nb2, nb3}
		p := s.per
		a = c.SetName(c.NewTensor(s.typeA, neA[p[0]], neA[p[1]], neA[p[2]], neA[p[3]]), "a")
		b = c.SetName(c.NewTensor(s.typeB, neB[p[0]], neB[p[1]], neB[p[2]], neB[p[3]]), "b")
		a = c.Permute(a, p[0], p[1], p[2], p[3])
		b = c.Permute(b, p[0], p[1], p[2], p[3])
	case s.overlap:
		// a and b interleave in the rows of ones tensor, as a fused QKV.
		base := c.NewTensor(s.typeA, 2*s.k, max(s.m, s.n), nb2, nb3)
		if base == nil {
			return nil
		}
		a = c.View4D(base, s.k, s.m, s.bs[0], s.bs[1], base.Nb[1], base.Nb[2], base.Nb[3], 0)
		b = c.View4D(base, s.k, s.n, nb2, nb3, base.Nb[1], base.Nb[2], base.Nb[3], uint64(s.k)*uint64(s.typeA.TypeSize()))
	default:
		kp := s.k
		if s.kv != 0 {
			kp = s.kv
		}
		a = c.SetName(c.NewTensor(s.typeA, kp, s.m, s.bs[0], s.bs[1]), "a")
		b = c.SetName(c.NewTensor(s.typeB, kp, s.n, nb2, nb3), "b")
		if s.kv != 0 && a != nil && b != nil {
			a = c.View4D(a, s.k, s.m, s.bs[0], s.bs[1], a.Nb[1], a.Nb[2], a.Nb[3], 0)
			b = c.View4D(b, s.k, s.n, nb2, nb3, b.Nb[1], b.Nb[2], b.Nb[3], 0)
		}
	}
	out := s.product(c, a, b)
	for i := 1; i < s.o; i++ {
		out = c.Add(out, s.product(c, a, b))
	}
	return []*graph.Tensor{out}
}

func (s mulMat) product(c *graph.Context, a, b *graph.Tensor) *graph.Tensor {
	t := c.MulMat(a, b)
	if s.hadamard {
		c.MulMatSetHint(t, ops.HintSrc0IsHadamard)
	}
	return t
}

func (s mulMat) init(rng *rand.Rand, t *graph.Tensor) bool {
	if s.hadamard && t.Name == "a" {
		return fillHadamard(t) == nil
	}
	return fillInput(rng, t, -1, 1) == nil
}

func (s mulMat) testCase() Case {
	return Case{Name: s.name(), Build: s.build, Init: s.init, Tol: matmulTol}
}

// fillHadamard sets every n x n matrix of F32 tensor t to the
// Sylvester-Hadamard matrix scaled by 1/sqrt(n), as MUL_MAT_HADAMARD's
// src0: element (r, i) is the parity of the bits r and i share.
func fillHadamard(t *graph.Tensor) error {
	n := t.Ne[0]
	scale := 1 / float32(math.Sqrt(float64(n)))
	v := make([]float32, t.NElements())
	for j := range v {
		r, i := int64(j)/n, int64(j)%n
		v[j] = scale
		if bits.OnesCount64(uint64(r&i))%2 != 0 {
			v[j] = -scale
		}
	}
	return SetFloats(t, v)
}

// mulMatID describes a test_mul_mat_id case: n_mats experts [k, m], of
// which each of n tokens uses n_used (b: ones activation row shared by them).
type mulMatID struct {
	typeA, typeB quant.Type
	nMats, nUsed int64
	b            bool
	m, n, k      int64
}

func (s mulMatID) name() string {
	return Fmt("MUL_MAT_ID", "type_a", s.typeA, "type_b", s.typeB, "n_mats", s.nMats, "n_used", s.nUsed,
		"b", b2i(s.b), "m", s.m, "n", s.n, "k", s.k)
}

func (s mulMatID) build(c *graph.Context) []*graph.Tensor {
	as := c.SetName(c.NewTensor(s.typeA, s.k, s.m, s.nMats), "as")
	ids := c.SetName(c.NewTensor(quant.I32, s.nMats, s.n), "ids")
	if s.nUsed != s.nMats && ids != nil {
		ids = c.View2D(ids, s.nUsed, s.n, ids.Nb[1], 0)
	}
	rows := s.nUsed
	if s.b {
		rows = 1
	}
	b := c.SetName(c.NewTensor(s.typeB, s.k, rows, s.n), "b")
	return []*graph.Tensor{c.MulMatID(as, b, ids)}
}

// init gives every row of the ids tensor a random permutation of the
// experts (as init_mul_mat_id_tensors), so a token never uses an expert twice.
func (s mulMatID) init(rng *rand.Rand, t *graph.Tensor) bool {
	if t.Type != quant.I32 {
		return fillInput(rng, t, -1, 1) == nil
	}
	ids := make([]int32, t.Ne[0])
	for r := range t.NRows() {
		for i := range ids {
			ids[i] = int32(int64(i) % s.nMats)
		}
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		for i, id := range ids {
			binary.LittleEndian.PutUint32(t.Data[uint64(r)*t.Nb[1]+uint64(i)*t.Nb[0]:], uint32(id))
		}
	}
	return true
}

func (s mulMatID) testCase() Case {
	return Case{Name: s.name(), Build: s.build, Init: s.init, Tol: matmulTol}
}

// outProd describes a test_out_prod case: a [m, k, bs...] and b [n, k,
// bs*nr...] (built transposed when transB).
type outProd struct {
	typeA, typeB quant.Type
	m, n, k      int64
	bs, nr       [2]int64
	transB       bool
}

func (s outProd) name() string {
	return Fmt("OUT_PROD", "type_a", s.typeA, "type_b", s.typeB, "m", s.m, "n", s.n, "k", s.k,
		"bs", s.bs, "nr", s.nr, "trans_b", b2i(s.transB))
}

func (s outProd) build(c *graph.Context) []*graph.Tensor {
	a := c.SetName(c.NewTensor(s.typeA, s.m, s.k, s.bs[0], s.bs[1]), "a")
	nb2, nb3 := s.bs[0]*s.nr[0], s.bs[1]*s.nr[1]
	var b *graph.Tensor
	if s.transB {
		b = c.Transpose(c.NewTensor(s.typeB, s.k, s.n, nb2, nb3))
	} else {
		b = c.NewTensor(s.typeB, s.n, s.k, nb2, nb3)
	}
	c.SetName(b, "b")
	return []*graph.Tensor{c.OutProd(a, b)}
}

func (s outProd) testCase() Case {
	return Case{Name: s.name(), Build: s.build, Init: layoutInit(-1, 1), Tol: matmulTol}
}

// matmulCases are MUL_MAT, MUL_MAT_HADAMARD, MUL_MAT_ID and OUT_PROD as
// test-backend-ops' make_test_cases_eval lists them (full), or a quick
// sample of their types and layouts. Both also multiply by activations
// already in the vec_dot type, which ggml's list leaves out.
func matmulCases(full bool) []Case {
	var cases []Case
	for _, s := range mulMatList(full) {
		cases = append(cases, s.testCase())
	}
	for _, s := range mulMatIDList(full) {
		cases = append(cases, s.testCase())
	}
	for _, s := range outProdList(full) {
		cases = append(cases, s.testCase())
	}
	return cases
}

// vecDotInputs are products whose src1 already has src0's vec_dot type.
func vecDotInputs() []mulMat {
	return []mulMat{
		mm(quant.Q4_0, quant.Q8_0, 16, 5, 256, [2]int64{3, 2}, [2]int64{2, 1}),
		mm(quant.Q4_1, quant.Q8_1, 16, 5, 256, [2]int64{1, 1}, [2]int64{1, 1}),
		mm(quant.Q4_K, quant.Q8_K, 16, 5, 512, [2]int64{2, 1}, [2]int64{1, 2}),
		mm(quant.BF16, quant.BF16, 16, 8, 256, [2]int64{2, 3}, [2]int64{1, 1}).permuted([4]int{0, 2, 1, 3}),
	}
}

func mulMatList(full bool) []mulMat {
	ones := [2]int64{1, 1}
	bs := func(a, b int64) [2]int64 { return [2]int64{a, b} }
	f32, f16 := quant.F32, quant.F16
	hadamard := func(m, n, k int64, b [2]int64) mulMat {
		s := mm(f32, f32, m, n, k, b, ones)
		s.hadamard = true
		return s
	}
	if !full {
		return append([]mulMat{
			hadamard(64, 1, 64, ones),
			hadamard(128, 4, 128, bs(2, 3)),
			mm(f32, f32, 16, 1, 256, ones, ones),
			mm(f32, f32, 16, 16, 256, bs(3, 2), bs(2, 2)),
			mm(f16, f32, 16, 8, 256, bs(2, 3), ones).permuted([4]int{0, 2, 1, 3}),
			mm(f16, f16, 64, 32, 80, ones, ones),
			mm(quant.BF16, f32, 16, 8, 256, bs(2, 3), ones).permuted([4]int{0, 1, 3, 2}),
			mm(quant.Q4_0, f32, 16, 16, 256, bs(3, 2), bs(2, 2)),
			mm(quant.Q8_0, f32, 16, 8, 256, bs(2, 3), ones).permuted([4]int{0, 3, 2, 1}),
			mm(quant.Q4_1, f32, 16, 1, 32, ones, ones),
			mm(quant.Q4_K, f32, 16, 9, 256, ones, ones),
			mm(quant.NVFP4, f32, 16, 3, 256, ones, ones),
			mm(quant.IQ2_XXS, f32, 16, 4, 256, ones, ones),
			mm(quant.IQ1_M, f32, 16, 1, 256, ones, ones),
			mm(f32, f32, 16, 32, 32, ones, ones).viewed(64, 3),
			mm(f32, f32, 32, 4, 96, bs(3, 2), ones).overlapping(),
			mm(f16, f32, 129, 1, 1057, bs(2, 1), bs(4, 1)).viewed(2*1056+1, 1),
		}, vecDotInputs()...)
	}

	var l []mulMat
	for _, s := range []struct {
		m, n, k int64
		b       [2]int64
	}{
		{128, 1, 128, ones}, {64, 1, 64, ones}, {256, 1, 256, ones}, {512, 1, 512, ones},
		{128, 32, 128, ones}, {128, 4, 128, bs(2, 3)}, {256, 512, 256, ones},
		{32, 1, 32, ones}, {1024, 1, 1024, ones},
	} {
		l = append(l, hadamard(s.m, s.n, s.k, s.b))
	}
	for _, ta := range layoutAllTypes {
		for i := int64(1); i < 10; i++ {
			l = append(l, mm(ta, f32, 16, i, 256, ones, ones))
		}
	}
	for _, ta := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.MXFP4} {
		l = append(l, mm(ta, f32, 2880, 32, 2880, ones, ones))
	}
	for _, n := range []int64{1, 7, 8, 9, 16, 128, 512} {
		l = append(l, mm(f32, f32, 1, n, 2048, ones, ones))
	}
	for _, ta := range mmBaseTypes {
		for _, tb := range []quant.Type{f32, f16} {
			ks := []int64{256}
			if ta.BlockSize() == 1 {
				ks = append(ks, 4)
			}
			for _, k := range ks {
				for _, c := range []struct {
					n      int64
					bs, nr [2]int64
				}{
					{1, ones, ones}, {1, ones, bs(2, 1)}, {1, ones, bs(1, 2)}, {1, bs(3, 1), ones},
					{1, bs(3, 1), bs(2, 1)}, {1, bs(3, 2), ones}, {1, bs(3, 2), bs(2, 1)},
					{1, bs(3, 2), bs(1, 2)}, {1, bs(3, 2), bs(2, 2)}, {4, bs(3, 2), bs(2, 2)},
					{16, ones, ones}, {16, ones, bs(2, 1)}, {16, ones, bs(1, 2)}, {16, bs(3, 1), ones},
					{16, bs(3, 1), bs(2, 1)}, {16, bs(3, 2), ones}, {16, bs(3, 2), bs(2, 1)},
					{16, bs(3, 2), bs(1, 2)}, {16, bs(3, 2), bs(2, 2)},
				} {
					l = append(l, mm(ta, tb, 16, c.n, k, c.bs, c.nr))
				}
				for _, c := range []struct {
					n   int64
					per [4]int
				}{
					{1, [4]int{0, 2, 1, 3}}, {1, [4]int{0, 1, 3, 2}}, {1, [4]int{0, 3, 2, 1}},
					{4, [4]int{0, 3, 2, 1}},
					{8, [4]int{0, 2, 1, 3}}, {8, [4]int{0, 1, 3, 2}}, {8, [4]int{0, 3, 2, 1}},
					{16, [4]int{0, 2, 1, 3}}, {16, [4]int{0, 1, 3, 2}}, {16, [4]int{0, 3, 2, 1}},
				} {
					l = append(l, mm(ta, tb, 16, c.n, k, bs(2, 3), ones).permuted(c.per))
				}
			}
			for _, n := range []int64{1, 8, 16} {
				l = append(l, mm(ta, tb, 16, n, 1024, bs(3, 2), ones))
			}
			l = append(l, mm(ta, tb, 16, 8, 256, bs(1536, 1), ones))
		}
	}
	for _, n := range []int64{1, 8, 16} {
		for _, per := range [][4]int{{0, 2, 1, 3}, {0, 1, 3, 2}, {0, 3, 2, 1}} {
			l = append(l, mm(quant.BF16, f32, 16, n, 256, bs(2, 3), ones).permuted(per))
		}
	}
	for _, ta := range mmOtherTypes {
		if ta.BlockSize() != 256 {
			l = append(l, mm(ta, f32, 16, 1, int64(ta.BlockSize()), ones, ones))
		}
		l = append(l, mm(ta, f32, 16, 1, 256, ones, ones))
	}
	l = append(l,
		mm(f16, f32, 64, 2, 128, bs(8, 1), ones),
		mm(f16, f32, 83, 2, 128, bs(8, 1), bs(4, 1)),
		mm(f16, f32, 64, 2, 64, bs(8, 1), bs(4, 1)),
		mm(f16, f32, 83, 2, 64, bs(8, 1), bs(4, 1)),
		mm(f16, f32, 64, 45, 128, bs(8, 1), bs(4, 1)),
		mm(f16, f32, 128, 45, 64, bs(8, 1), bs(4, 1)),
		mm(f16, f32, 1056, 1, 193, ones, bs(4, 1)).permuted([4]int{0, 2, 1, 3}),
		mm(f16, f32, 1056, 1, 67, ones, bs(4, 1)).permuted([4]int{0, 2, 1, 3}),
		mm(f32, f32, 16, 32, 32, ones, ones).viewed(64, 3),
		mm(f32, f32, 64, 77, 77, bs(12, 1), ones),
		mm(f32, f32, 32, 4, 96, bs(3, 2), ones).overlapping(),
		mm(quant.Q4_0, f32, 576, 512, 576, ones, ones),
		mm(quant.Q4_0, f32, 1, 2048, 8192, ones, ones),
	)
	for _, ta := range layoutAllTypes {
		l = append(l, mm(ta, f32, 1, 64, 256, ones, ones))
	}
	l = append(l,
		mm(quant.Q8_0, f32, 6, 4096, 5120, ones, ones),
		// K not a multiple of 32.
		mm(f16, f16, 64, 32, 65, ones, ones),
		mm(f16, f16, 64, 32, 80, ones, ones),
		mm(f16, f32, 64, 32, 80, ones, ones),
		mm(f32, f32, 64, 32, 80, ones, ones),
		mm(f16, f16, 64, 32, 588, ones, ones),
		mm(f16, f16, 64, 32, 80, bs(4, 1), ones),
	)
	for _, bs2 := range []int64{1, 3} {
		for _, b := range []int64{1, 2, 4, 8} {
			for _, nr := range []int64{1, 4} {
				for m := int64(0); m < 2; m++ {
					for k := int64(0); k < 2; k++ {
						for _, ta := range []quant.Type{f16, quant.BF16, f32} {
							l = append(l,
								mm(ta, f32, 1056+m, 1, 128+k, bs(b, bs2), bs(nr, 1)).permuted([4]int{0, 2, 1, 3}),
								mm(ta, f32, 128+m, 1, 1056+k, bs(b, bs2), bs(nr, 1)).viewed(2*1056+k, 1))
						}
					}
				}
			}
		}
	}
	return append(l, vecDotInputs()...)
}

func mulMatIDList(full bool) []mulMatID {
	f32, f16 := quant.F32, quant.F16
	id := func(ta quant.Type, nMats, nUsed int64, b bool, m, n, k int64) mulMatID {
		return mulMatID{typeA: ta, typeB: f32, nMats: nMats, nUsed: nUsed, b: b, m: m, n: n, k: k}
	}
	if !full {
		return []mulMatID{
			id(f16, 1, 1, false, 8, 16, 1),
			id(quant.Q4_0, 4, 2, false, 64, 16, 96),
			id(quant.Q4_K, 4, 2, false, 64, 16, 768),
			id(quant.IQ2_XXS, 4, 2, false, 64, 5, 768),
			id(f32, 8, 4, true, 64, 5, 256),
		}
	}
	var l []mulMatID
	for _, b := range []bool{false, true} {
		l = append(l,
			id(f16, 16, 16, b, 32, 1024, 16),
			id(f16, 2, 2, b, 32, 8192, 64),
			id(f16, 16, 16, b, 50, 200, 64),
			id(quant.BF16, 16, 16, b, 32, 1024, 16),
			id(quant.BF16, 16, 16, b, 50, 200, 64))
	}
	l = append(l,
		id(f16, 1, 1, false, 8, 16, 1),
		id(quant.MXFP4, 32, 2, false, 2880, 32, 2880),
		id(quant.Q4_0, 32, 2, false, 2880, 32, 2880))
	for _, ta := range layoutAllTypes {
		l = append(l, id(ta, 4, 2, false, 64, 16, 3*int64(ta.BlockSize())))
	}
	for _, ta := range mmBaseTypes {
		for _, nMats := range []int64{4, 8} {
			for _, nUsed := range []int64{1, 2, 4} {
				for _, b := range []bool{false, true} {
					for _, n := range []int64{1, 4, 5, 17, 32, 129} {
						l = append(l, id(ta, nMats, nUsed, b, 512, n, 256))
					}
				}
			}
		}
	}
	for _, ta := range mmOtherTypes {
		for _, n := range []int64{1, 32} {
			l = append(l, id(ta, 4, 2, false, 512, n, 256))
		}
	}
	return l
}

func outProdList(full bool) []outProd {
	f32 := quant.F32
	op := func(ta, tb quant.Type, n, k int64, bs, nr [2]int64) outProd {
		return outProd{typeA: ta, typeB: tb, m: 256, n: n, k: k, bs: bs, nr: nr}
	}
	ones := [2]int64{1, 1}
	if !full {
		trans := op(f32, f32, 16, 16, ones, ones)
		trans.transB = true
		return []outProd{
			op(f32, f32, 16, 16, [2]int64{3, 3}, [2]int64{2, 2}),
			op(quant.Q4_0, f32, 16, 16, [2]int64{3, 1}, ones),
			op(quant.F16, f32, 1, 16, [2]int64{1, 3}, ones),
			op(quant.IQ2_XXS, f32, 16, 1, ones, ones),
			trans,
		}
	}
	var l []outProd
	for _, ta := range mmBaseTypes {
		for _, tb := range []quant.Type{f32, quant.F16} {
			for _, n := range []int64{1, 16} {
				for _, k := range []int64{1, 16} {
					for _, bs2 := range []int64{1, 3} {
						for _, bs3 := range []int64{1, 3} {
							for _, nr2 := range []int64{1, 2} {
								for _, nr3 := range []int64{1, 2} {
									l = append(l, op(ta, tb, n, k, [2]int64{bs2, bs3}, [2]int64{nr2, nr3}))
								}
							}
						}
					}
				}
			}
		}
	}
	for _, ne2 := range []int64{1, 8, 16, 32} {
		l = append(l, op(f32, f32, 16, 16, [2]int64{ne2, 1}, ones))
	}
	for _, nr2 := range []int64{8, 16, 32} {
		l = append(l, op(f32, f32, 16, 16, ones, [2]int64{nr2, 1}))
	}
	trans := op(f32, f32, 16, 16, [2]int64{3, 2}, [2]int64{2, 1})
	trans.transB = true
	return append(l, trans)
}

// pair reads a two-element list such as bs=[3,2].
func mmPair(r *descReader, k string) [2]int64 { return [2]int64(r.ints(k, 2)) }

func mulMatFromDesc(op string, d Desc) (Case, error) {
	r := &descReader{d: d}
	s := mulMat{
		typeA: r.dtype("type_a"), typeB: r.dtype("type_b"),
		m: r.num64("m"), n: r.num64("n"), k: r.num64("k"),
		bs: mmPair(r, "bs"), nr: mmPair(r, "nr"), per: r.perm("per"),
		kv: r.num64("k_v"), o: r.num("o"), overlap: r.flag("src_overlap"),
		hadamard: op == "MUL_MAT_HADAMARD",
	}
	return s.testCase(), r.err
}

func mulMatIDFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	s := mulMatID{
		typeA: r.dtype("type_a"), typeB: r.dtype("type_b"),
		nMats: r.num64("n_mats"), nUsed: r.num64("n_used"), b: r.flag("b"),
		m: r.num64("m"), n: r.num64("n"), k: r.num64("k"),
	}
	return s.testCase(), r.err
}

func outProdFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	s := outProd{
		typeA: r.dtype("type_a"), typeB: r.dtype("type_b"),
		m: r.num64("m"), n: r.num64("n"), k: r.num64("k"),
		bs: mmPair(r, "bs"), nr: mmPair(r, "nr"), transB: r.flag("trans_b"),
	}
	return s.testCase(), r.err
}
