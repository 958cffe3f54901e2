package optest

import (
	"encoding/binary"
	"fmt"
	"math/rand"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func init() {
	Register("binary", binaryCases)
	RegisterDescribed([]string{"ADD", "SUB", "MUL", "DIV"}, binBcastFromDesc)
	RegisterDescribed([]string{"ADD_ID"}, addIDFromDesc)
	RegisterDescribed([]string{"ADD1"}, add1FromDesc)
}

// binOp is one of the broadcasting binary builders.
type binOp struct {
	name    string
	build   func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor
	inplace func(c *graph.Context, a, b *graph.Tensor) *graph.Tensor
}

var binOps = []binOp{
	{"ADD", (*graph.Context).Add, (*graph.Context).AddInplace},
	{"SUB", (*graph.Context).Sub, (*graph.Context).SubInplace},
	{"MUL", (*graph.Context).Mul, (*graph.Context).MulInplace},
	{"DIV", (*graph.Context).Div, (*graph.Context).DivInplace},
}

func binOpNamed(name string) (binOp, error) {
	for _, o := range binOps {
		if o.name == name {
			return o, nil
		}
	}
	return binOp{}, fmt.Errorf("optest: %s is not a binary op", name)
}

// binInit fills inputs as test_bin_bcast does: MUL and DIV have trouble
// near zero, so their inputs are drawn from [0.9, 1.1].
func binInit(op string) func(rng *rand.Rand, t *graph.Tensor) bool {
	return func(rng *rand.Rand, t *graph.Tensor) bool {
		if op == "MUL" || op == "DIV" {
			return FillUniform(rng, t, 0.9, 1.1) == nil
		}
		return FillUniform(rng, t, -1, 1) == nil
	}
}

// binBcastCase is test_bin_bcast: a of shape ne*nr, nf sources of shape ne
// (permuted by (1, 2, 0, 3) when perm1, or overlapping views of a when
// srcOverlap) combined in a chain; with nf > 1 ggml fuses the chain, here
// it is computed node by node. inplace uses the _inplace builders, as the
// WebGPU-motivated cases do.
func binBcastCase(op binOp, typ quant.Type, ne [4]int64, nr [4]int64, nf int, perm1, srcOverlap, inplace bool) Case {
	name := op.name
	build := op.build
	if inplace {
		build = op.inplace
	}
	return Case{
		Name: Fmt(name, "type", typ, "ne", ne, "nr", nr, "nf", nf, "perm1", b2i(perm1), "src_overlap", b2i(srcOverlap)),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typ, ne[0]*nr[0], ne[1]*nr[1], ne[2]*nr[2], ne[3]*nr[3])
			c.SetName(a, "a")
			out := a
			if srcOverlap {
				out = c.View4D(a, ne[0], ne[1], ne[2], 2*(ne[3]/3), a.Nb[1], a.Nb[2], a.Nb[3], 0)
			}
			for i := 0; i < nf; i++ {
				var b *graph.Tensor
				switch {
				case perm1:
					b = c.NewTensor(typ, ne[1], ne[2], ne[0], ne[3])
					b = c.Permute(b, 1, 2, 0, 3)
				case srcOverlap:
					b = c.View4D(a, ne[0], ne[1], ne[2], 2*(ne[3]/3), a.Nb[1], a.Nb[2], a.Nb[3], uint64(ne[3]/3)*a.Nb[3])
				default:
					b = c.NewTensor(typ, ne[:]...)
				}
				out = build(c, out, b)
			}
			return []*graph.Tensor{out}
		},
		Init: binInit(name),
	}
}

// binMixedCase is a binary op over the mixed types ggml's CPU kernels
// take: src0 F16/BF16 with an F32 src1, into src0's type or F32. Only ADD
// has a builder for the latter (ggml_add_cast); SUB, MUL and DIV get the
// node made directly, as ggml's kernels compute it all the same.
func binMixedCase(op binOp, typeA, typeB, typeDst quant.Type, ne, nr [4]int64) Case {
	return Case{
		Name: Fmt(op.name, "type_a", typeA, "type_b", typeB, "type_dst", typeDst, "ne", ne, "nr", nr),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typeA, ne[0]*nr[0], ne[1]*nr[1], ne[2]*nr[2], ne[3]*nr[3])
			b := c.NewTensor(typeB, ne[:]...)
			switch {
			case typeDst == typeA:
				return []*graph.Tensor{op.build(c, a, b)}
			case op.name == "ADD":
				return []*graph.Tensor{c.AddCast(a, b, typeDst)}
			}
			o, _ := ops.ParseOp(op.name)
			return []*graph.Tensor{c.NewOp(o, typeDst, a.Ne, ops.Params{}, a, b)}
		},
		Init: binInit(op.name),
	}
}

// addQuantCase is ADD of a quantized a and an F32 b of the same shape, the
// result in typeDst (a's type through ggml_add, another through
// ggml_add_cast): ggml dequantizes, adds and requantizes each row.
func addQuantCase(typeA, typeDst quant.Type, ne [4]int64) Case {
	return Case{
		Name: Fmt("ADD", "type_a", typeA, "type_b", quant.F32, "type_dst", typeDst, "ne", ne),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typeA, ne[:]...)
			b := c.NewTensor(quant.F32, ne[:]...)
			if typeDst == typeA {
				return []*graph.Tensor{c.Add(a, b)}
			}
			return []*graph.Tensor{c.AddCast(a, b, typeDst)}
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool { return FillUniform(rng, t, -1, 1) == nil },
	}
}

// add1Case is ADD1 of a scalar b (of typeB) to a.
func add1Case(typeA, typeB quant.Type, ne [4]int64, inplace bool) Case {
	return Case{
		Name: Fmt("ADD1", "type_a", typeA, "type_b", typeB, "ne", ne, "inplace", b2i(inplace)),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typeA, ne[:]...)
			b := c.NewTensor(typeB, 1)
			if inplace {
				return []*graph.Tensor{c.Add1Inplace(a, b)}
			}
			return []*graph.Tensor{c.Add1(a, b)}
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool { return FillUniform(rng, t, -1, 1) == nil },
	}
}

// addIDCase is test_add_id: a holds nUsed rows per token, b one bias row
// per expert, ids (a view of the first nUsed columns when fewer than
// nExperts) a shuffled permutation of experts per token.
func addIDCase(typeA, typeB quant.Type, nEmbd, nExperts, nUsed, nToken int64) Case {
	return Case{
		Name: Fmt("ADD_ID", "type_a", typeA, "type_b", typeB, "n_embd", nEmbd, "n_experts", nExperts,
			"n_experts_used", nUsed, "n_token", nToken),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typeA, nEmbd, nUsed, nToken)
			b := c.NewTensor(typeB, nEmbd, nExperts)
			ids := c.NewTensor(quant.I32, nExperts, nToken)
			if nUsed != nExperts {
				ids = c.View2D(ids, nUsed, nToken, ids.Nb[1], 0)
			}
			return []*graph.Tensor{c.AddID(a, b, ids)}
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool {
			if t.Type != quant.I32 {
				return false
			}
			row := make([]int32, t.Ne[0])
			for r := int64(0); r < t.NRows(); r++ {
				for i := range row {
					row[i] = int32(int64(i) % nExperts)
				}
				rng.Shuffle(len(row), func(i, j int) { row[i], row[j] = row[j], row[i] })
				for i, v := range row {
					binary.LittleEndian.PutUint32(t.Data[uint64(r)*t.Nb[1]+uint64(i)*4:], uint32(v))
				}
			}
			return true
		},
	}
}

// binShapes are test-backend-ops' broadcast shapes (ne, nr) for both
// permutations of src1.
var binShapes = [][2][4]int64{
	{{1, 1, 8, 1}, {1, 1, 1, 1}},
	{{1, 1, 1, 1}, {32, 1, 1, 1}},
	{{1, 1, 320, 320}, {1, 1, 1, 1}},
	{{10, 5, 1, 1}, {1, 1, 1, 1}},
	{{10, 5, 4, 1}, {1, 1, 1, 1}},
	{{10, 5, 4, 3}, {1, 1, 1, 1}},
	{{10, 5, 4, 3}, {2, 1, 1, 1}},
	{{10, 5, 4, 3}, {1, 2, 1, 1}},
	{{10, 5, 4, 3}, {1, 1, 2, 1}},
	{{10, 5, 4, 3}, {1, 1, 1, 2}},
	{{10, 5, 4, 3}, {1, 1, 2, 2}},
	{{10, 5, 4, 3}, {1, 2, 2, 2}},
	{{10, 5, 4, 3}, {2, 2, 2, 2}},
}

// binOverlapShapes are the src_overlap shapes.
var binOverlapShapes = [][4]int64{{10, 5, 4, 6}, {10, 5, 4, 5}, {1, 1, 120, 120}, {1, 1, 4, 320}}

// binLargeShapes are the unravel and stable-diffusion shapes.
var binLargeShapes = [][2][4]int64{
	{{1, 1, 65536, 1}, {256, 1, 1, 1}},
	{{1280, 1, 1, 1}, {1, 1, 1, 1}},
	{{1280, 1, 1, 1}, {1, 16, 16, 1}},
	{{1280, 16, 16, 1}, {1, 1, 1, 1}},
	{{1280, 1, 1, 1}, {1, 256, 1, 1}},
	{{1, 1, 1280, 1}, {16, 16, 1, 1}},
	{{16, 16, 1280, 1}, {1, 1, 1, 1}},
	{{1, 1, 1920, 1}, {16, 16, 1, 1}},
	{{1, 1, 2560, 1}, {16, 16, 1, 1}},
	{{1, 1, 1280, 1}, {32, 32, 1, 1}},
	{{1, 1, 1920, 1}, {32, 32, 1, 1}},
	{{1, 1, 640, 1}, {32, 32, 1, 1}},
	{{5120, 1, 1, 1}, {1, 256, 1, 1}},
	{{640, 1, 1, 1}, {1, 1, 1, 1}},
	{{64, 262144, 1, 1}, {1, 1, 1, 1}},
}

// binaryCases are ADD, SUB, MUL, DIV (test_bin_bcast's broadcasts,
// permuted and overlapping sources, in-place chains; BF16 and the mixed
// and quantized type combinations ggml's CPU kernels accept), ADD1 and
// ADD_ID.
func binaryCases(full bool) []Case {
	var cases []Case
	add := func(quick bool, c Case) {
		c.Full = !quick
		cases = append(cases, c)
	}
	one := [4]int64{1, 1, 1, 1}
	for _, typ := range []quant.Type{quant.F16, quant.F32} {
		for _, perm1 := range []bool{false, true} {
			for i, s := range binShapes {
				for _, op := range binOps {
					quick := typ == quant.F32 && !perm1 && (i == 6 || i == 11) || typ == quant.F16 && perm1 && i == 12
					add(quick, binBcastCase(op, typ, s[0], s[1], 1, perm1, false, false))
				}
			}
		}
		for i, ne := range binOverlapShapes {
			for _, op := range binOps {
				add(typ == quant.F32 && i == 1, binBcastCase(op, typ, ne, one, 1, false, true, false))
			}
		}
		for _, s := range binLargeShapes {
			for _, op := range binOps {
				add(false, binBcastCase(op, typ, s[0], s[1], 1, false, false, false))
			}
		}
	}
	for _, op := range binOps {
		add(false, binBcastCase(op, quant.F32, [4]int64{16, 5, 4, 3}, one, 16, false, false, true))
	}
	add(false, binBcastCase(binOps[0], quant.F32, [4]int64{10, 5, 4, 3}, [4]int64{2, 1, 1, 1}, 2, false, false, false))
	add(false, binBcastCase(binOps[0], quant.F32, [4]int64{16, 5, 4, 3}, [4]int64{1, 2, 1, 1}, 3, false, false, false))
	add(false, binBcastCase(binOps[0], quant.F32, [4]int64{10, 5, 4, 3}, [4]int64{1, 1, 2, 1}, 4, false, false, false))
	add(false, binBcastCase(binOps[0], quant.F32, [4]int64{16, 5, 4, 3}, [4]int64{1, 1, 1, 2}, 5, false, false, false))
	add(false, binBcastCase(binOps[0], quant.F32, [4]int64{10, 5, 4, 3}, [4]int64{1, 1, 2, 2}, 6, false, false, false))
	add(false, binBcastCase(binOps[0], quant.F32, [4]int64{10, 5, 4, 3}, [4]int64{1, 2, 2, 2}, 7, false, false, false))
	add(false, binBcastCase(binOps[0], quant.F32, [4]int64{16, 5, 4, 3}, [4]int64{2, 2, 2, 2}, 8, false, false, false))
	add(false, binBcastCase(binOps[0], quant.F32, [4]int64{16, 5, 4, 3}, one, 16, false, false, false))

	// Beyond test-backend-ops: BF16, which ggml's CPU kernels take like F16.
	for _, perm1 := range []bool{false, true} {
		for i, s := range binShapes {
			for _, op := range binOps {
				add(!perm1 && i == 12, binBcastCase(op, quant.BF16, s[0], s[1], 1, perm1, false, false))
			}
		}
	}
	// Mixed types: F16/BF16 with an F32 src1.
	mixedShapes := [][2][4]int64{{{10, 5, 4, 3}, {2, 2, 2, 2}}, {{10, 5, 4, 3}, {1, 2, 1, 2}}, {{64, 8, 1, 1}, {1, 1, 1, 1}}}
	for _, typ := range []quant.Type{quant.F16, quant.BF16} {
		for i, s := range mixedShapes {
			for _, op := range binOps {
				add(i == 0 && op.name == "MUL", binMixedCase(op, typ, quant.F32, typ, s[0], s[1]))
			}
			for _, op := range binOps {
				if op.name == "ADD" && s[1][0] != 1 {
					continue // ggml_add_cast repeats whole rows only
				}
				add(i == 1 && op.name == "ADD", binMixedCase(op, typ, quant.F32, quant.F32, s[0], s[1]))
			}
		}
	}
	// Quantized ADD: every type ggml dequantizes and requantizes exactly
	// whose inputs quant.Quantize can make (not the lattice types).
	for _, typ := range quant.Types() {
		if !typ.IsQuantized() || typ == quant.Q8_1 || typ == quant.Q8_K || !typ.CanQuantize() {
			continue
		}
		ne := [4]int64{int64(typ.BlockSize()) * 2, 3, 2, 1}
		add(typ == quant.Q4_0 || typ == quant.Q4_K, addQuantCase(typ, typ, ne))
		add(typ == quant.IQ4_NL, addQuantCase(typ, quant.F32, ne))
		add(false, addQuantCase(typ, quant.F16, ne))
	}
	add(false, addQuantCase(quant.Q4_K, quant.Q8_0, [4]int64{256, 3, 2, 1}))
	add(false, addQuantCase(quant.Q4_0, quant.Q8_K, [4]int64{256, 3, 2, 1}))
	add(false, addQuantCase(quant.Q5_1, quant.BF16, [4]int64{64, 3, 2, 1}))

	// ADD1.
	for _, ne := range [][4]int64{{10, 5, 4, 3}, {128, 3, 1, 1}, {1, 1, 1, 1}} {
		for _, ab := range [][2]quant.Type{
			{quant.F32, quant.F32}, {quant.F16, quant.F16}, {quant.F16, quant.F32},
			{quant.BF16, quant.BF16}, {quant.BF16, quant.F32},
		} {
			for _, inplace := range []bool{false, true} {
				quick := ne[0] == 10 && !inplace && ab[0] != quant.BF16
				add(quick, add1Case(ab[0], ab[1], ne, inplace))
			}
		}
	}
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q5_1, quant.Q8_0, quant.Q4_K, quant.Q6_K, quant.MXFP4, quant.TQ2_0} {
		add(typ == quant.Q8_0, add1Case(typ, quant.F32, [4]int64{int64(typ.BlockSize()) * 2, 3, 2, 1}, false))
	}
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q4_K} {
		c := add1Case(typ, quant.F32, [4]int64{int64(typ.BlockSize()), 3, 2, 2}, false)
		c.GGMLBug = "ggml_compute_forward_add1_q_f32 stores row (i1, i2, i3) at i3*nb0 instead of i3*nb3"
		add(typ == quant.Q4_0, c)
	}

	// ADD_ID.
	for _, nMats := range []int64{4, 8} {
		for _, nUsed := range []int64{1, 2, 4} {
			for _, nEmbd := range []int64{32, 129} {
				for _, nToken := range []int64{1, 32, 129} {
					quick := nMats == 8 && nUsed == 2 && nToken == 32
					add(quick, addIDCase(quant.F32, quant.F32, nEmbd, nMats, nUsed, nToken))
				}
			}
		}
	}
	return cases
}

func binBcastFromDesc(op string, d Desc) (Case, error) {
	o, err := binOpNamed(op)
	if err != nil {
		return Case{}, err
	}
	if _, ok := d["type_a"]; ok {
		return Case{}, fmt.Errorf("optest: %s: only test_bin_bcast descriptions are parsed", op)
	}
	r := &descReader{d: d}
	c := binBcastCase(o, r.dtype("type"), r.ne("ne"), r.ne("nr"), r.num("nf"), r.flag("perm1"), r.flag("src_overlap"), false)
	return c, r.err
}

func addIDFromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := addIDCase(r.dtype("type_a"), r.dtype("type_b"), r.num64("n_embd"), r.num64("n_experts"),
		r.num64("n_experts_used"), r.num64("n_token"))
	return c, r.err
}

func add1FromDesc(_ string, d Desc) (Case, error) {
	r := &descReader{d: d}
	c := add1Case(r.dtype("type_a"), r.dtype("type_b"), r.ne("ne"), r.flag("inplace"))
	return c, r.err
}
