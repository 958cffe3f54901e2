package optest

import (
	"fmt"
	"math/rand"
	"slices"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

func init() {
	Register("reduce", reduceCases)
	RegisterDescribed([]string{
		"SUM", "SUM_ROWS", "MEAN", "ARGMAX", "CUMSUM", "NORM", "RMS_NORM", "L2_NORM",
		"GROUP_NORM", "SOFT_MAX", "ARGSORT", "TOP_K",
	}, reduceFromDesc)
}

// softMaxNMSE is test-backend-ops' tolerance for SOFT_MAX.
const softMaxNMSE = 1e-6

// redShuffledRows fills every row of the F32 leaf t with a shuffle of
// 0, 1, ..., ne0-1, each value divided by denom (integer division), as
// test-backend-ops does for ARGMAX, ARGSORT and TOP_K: denom 1 gives
// distinct values, so the result has no ties.
func redShuffledRows(rng *rand.Rand, t *graph.Tensor, denom int) bool {
	if t.Type != quant.F32 {
		return false
	}
	n := int(t.Ne[0])
	v := make([]float32, 0, t.NElements())
	for range t.NRows() {
		row := make([]float32, n)
		for i := range row {
			row[i] = float32(i / denom)
		}
		rng.Shuffle(n, func(i, j int) { row[i], row[j] = row[j], row[i] })
		v = append(v, row...)
	}
	return SetFloats(t, v) == nil
}

// sumCase is test_sum: SUM of a tensor, optionally permuted first (perm
// all zero: not permuted, and not named).
func sumCase(typ quant.Type, ne [4]int64, perm [4]int) Case {
	kv := []any{"type", typ, "ne", ne}
	permuted := perm != [4]int{}
	if permuted {
		kv = append(kv, "permute", perm)
	}
	var bug string
	if permuted && perm[0] != 0 { // dimension 0 is no longer packed
		bug = "ggml's SUM reads every row as ne0 packed values whatever nb0 is, so on a transposed " +
			"source it adds overlapping windows of memory, not the tensor's elements"
	}
	return Case{
		Name:    Fmt("SUM", kv...),
		GGMLBug: bug,
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typ, ne[:]...)
			if permuted {
				a = c.Permute(a, perm[0], perm[1], perm[2], perm[3])
			}
			return []*graph.Tensor{c.Sum(a)}
		},
		// Away from zero, so the sum does not cancel out.
		Init: uniformInit(-0.9, 1.1),
	}
}

// sumRowsCase is test_sum_rows: SUM_ROWS of a tensor, optionally a strided
// slice of it, optionally permuted so that its rows are not adjacent.
func sumRowsCase(typ quant.Type, ne [4]int64, permute, slice bool) Case {
	return Case{
		Name: Fmt("SUM_ROWS", "type", typ, "ne", ne, "permute", b2i(permute), "slice", b2i(slice)),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typ, ne[:]...)
			if slice {
				a = c.View4D(a, ne[0], ne[1], ne[2]/2, ne[3]-1, a.Nb[1], a.Nb[2]*2, a.Nb[3], a.Nb[3])
			}
			if permute {
				a = c.Permute(a, 0, 2, 3, 1)
			}
			return []*graph.Tensor{c.SumRows(a)}
		},
	}
}

// meanCase is test_mean.
func meanCase(typ quant.Type, ne [4]int64) Case {
	return Case{
		Name: Fmt("MEAN", "type", typ, "ne", ne),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.Mean(c.NewTensor(typ, ne[:]...))}
		},
		Init: uniformInit(-0.9, 1.1),
	}
}

// argmaxCase is test_argmax: rows of distinct values, compared exactly.
func argmaxCase(typ quant.Type, ne [4]int64) Case {
	return Case{
		Name: Fmt("ARGMAX", "type", typ, "ne", ne),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.Argmax(c.NewTensor(typ, ne[:]...))}
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool { return redShuffledRows(rng, t, 1) },
		Tol:  Tolerance{Exact: true},
	}
}

// cumsumCase is test_cumsum.
func cumsumCase(typ quant.Type, ne [4]int64) Case {
	return Case{
		Name: Fmt("CUMSUM", "type", typ, "ne", ne),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.Cumsum(c.NewTensor(typ, ne[:]...))}
		},
	}
}

// normVariant says how a norm case's input is laid out and where the
// result goes: v halves every dimension through a strided view,
// noncontigRows transposes the first two dimensions, inplace writes into
// the input.
type normVariant struct {
	v, noncontigRows, inplace bool
}

// normBuilders are the builders of NORM, RMS_NORM and L2_NORM: out of
// place, then in place.
var normBuilders = map[string][2]func(*graph.Context, *graph.Tensor, float32) *graph.Tensor{
	"NORM":     {(*graph.Context).Norm, (*graph.Context).NormInplace},
	"RMS_NORM": {(*graph.Context).RMSNorm, (*graph.Context).RMSNormInplace},
	"L2_NORM":  {(*graph.Context).L2Norm, (*graph.Context).L2NormInplace},
}

// normCase is test_norm, test_rms_norm and test_l2_norm (op NORM, RMS_NORM
// or L2_NORM), named with each test's parameters in its order; in-place
// NORM and L2_NORM, which test-backend-ops lacks, add "inplace=1".
// RMS_NORM inputs span [-10, 10] as test_rms_norm's do.
func normCase(op string, typ quant.Type, ne [4]int64, eps float32, nv normVariant) Case {
	var kv []any
	var init func(*rand.Rand, *graph.Tensor) bool
	switch op {
	case "NORM":
		kv = []any{"type", typ, "ne", ne, "v", b2i(nv.v), "eps", fmtF(eps), "noncontig_rows", b2i(nv.noncontigRows)}
	case "RMS_NORM":
		kv = []any{"type", typ, "ne", ne, "v", b2i(nv.v), "eps", fmtF(eps), "inplace", b2i(nv.inplace)}
		init = uniformInit(-10, 10)
	case "L2_NORM":
		kv = []any{"type", typ, "ne", ne, "eps", fmtF(eps), "v", b2i(nv.v), "noncontig_rows", b2i(nv.noncontigRows)}
	}
	if nv.inplace && op != "RMS_NORM" {
		kv = append(kv, "inplace", 1)
	}
	build := normBuilders[op][b2i(nv.inplace)]
	return Case{
		Name: Fmt(op, kv...),
		Build: func(c *graph.Context) []*graph.Tensor {
			shape := ne
			if nv.noncontigRows {
				shape[0], shape[1] = shape[1], shape[0]
			}
			a := c.NewTensor(typ, shape[:]...)
			if nv.noncontigRows {
				a = c.Permute(a, 1, 0, 2, 3)
			}
			if nv.v && a != nil {
				a = c.View4D(a, a.Ne[0]/2, a.Ne[1]/2, a.Ne[2]/2, a.Ne[3]/2, a.Nb[1], a.Nb[2], a.Nb[3], 0)
			}
			return []*graph.Tensor{build(c, a, eps)}
		},
		Init: init,
	}
}

// groupNormCase is test_group_norm (inplace is ours: test-backend-ops has
// no in-place case, and names none).
func groupNormCase(typ quant.Type, ne [4]int64, groups int, eps float32, inplace bool) Case {
	kv := []any{"type", typ, "ne", ne, "num_groups", groups, "eps", fmtF(eps)}
	if inplace {
		kv = append(kv, "inplace", 1)
	}
	return Case{
		Name: Fmt("GROUP_NORM", kv...),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typ, ne[:]...)
			if inplace {
				return []*graph.Tensor{c.GroupNormInplace(a, groups, eps)}
			}
			return []*graph.Tensor{c.GroupNorm(a, groups, eps)}
		},
	}
}

// softMaxSpec is test_soft_max's parameters: the input is ne with
// dimensions 2 and 3 multiplied by nr23, the optional mask (of type mPrec)
// is ne itself and so broadcasts over those, sinks are one per head.
type softMaxSpec struct {
	typ            quant.Type
	ne             [4]int64
	mask, sinks    bool
	mPrec          quant.Type
	nr23           [2]int64
	scale, maxBias float32
	inplace        bool
}

func softMaxCase(s softMaxSpec) Case {
	return Case{
		Name: Fmt("SOFT_MAX", "type", s.typ, "ne", s.ne, "mask", b2i(s.mask), "sinks", b2i(s.sinks),
			"m_prec", s.mPrec, "nr23", s.nr23, "scale", fmtF(s.scale), "max_bias", fmtF(s.maxBias),
			"inplace", b2i(s.inplace)),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(s.typ, s.ne[0], s.ne[1], s.ne[2]*s.nr23[0], s.ne[3]*s.nr23[1])
			var mask, sinks *graph.Tensor
			if s.mask {
				mask = c.NewTensor(s.mPrec, s.ne[:]...)
			}
			if s.sinks {
				sinks = c.NewTensor(quant.F32, s.ne[2]*s.nr23[0])
			}
			var out *graph.Tensor
			if s.inplace {
				out = c.SoftMaxExtInplace(a, mask, s.scale, s.maxBias)
			} else {
				out = c.SoftMaxExt(a, mask, s.scale, s.maxBias)
			}
			return []*graph.Tensor{c.SoftMaxAddSinks(out, sinks)}
		},
		Tol: Tolerance{MaxNMSE: softMaxNMSE},
	}
}

// argsortCase is test_argsort: rows of distinct values, compared exactly.
func argsortCase(typ quant.Type, ne [4]int64, order ops.SortOrder) Case {
	return Case{
		Name: Fmt("ARGSORT", "type", typ, "ne", ne, "order", int32(order)),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.Argsort(c.NewTensor(typ, ne[:]...), order)}
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool { return redShuffledRows(rng, t, 1) },
		Tol:  Tolerance{Exact: true},
	}
}

// topKCase is test_top_k: rows of distinct values, or with ties (each
// value repeated up to ten times), compared as sets of indices, or with
// ties as multisets of the values they select.
func topKCase(typ quant.Type, ne [4]int64, k int, ties bool) Case {
	denom := 1
	if ties {
		denom = max(1, min(10, k/2))
	}
	return Case{
		Name: Fmt("TOP_K", "type", typ, "ne", ne, "k", k, "ties", b2i(ties)),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.TopK(c.NewTensor(typ, ne[:]...), k)}
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool { return redShuffledRows(rng, t, denom) },
		Tol:  Tolerance{Compare: func(want, got []float32, out *graph.Tensor) error { return compareTopK(want, got, out, ties) }},
	}
}

// compareTopK checks TOP_K results row by row: the same set of indices,
// or with ties the same multiset of selected values and no index twice.
func compareTopK(want, got []float32, out *graph.Tensor, ties bool) error {
	k := int(out.Ne[0])
	if k == 0 {
		return nil
	}
	var src []float32
	if ties {
		var err error
		if src, err = Floats(out.Src[0]); err != nil {
			return err
		}
	}
	cols := int(out.Src[0].Ne[0])
	for r := 0; r*k < len(want); r++ {
		w, g := want[r*k:(r+1)*k], got[r*k:(r+1)*k]
		wi, gi := make([]int, k), make([]int, k)
		for i := range k {
			wi[i], gi[i] = int(w[i]), int(g[i])
			if float32(gi[i]) != g[i] || gi[i] < 0 || gi[i] >= cols {
				return fmt.Errorf("%w: row %d: %v is not an index of a row of %d", ErrMismatch, r, g[i], cols)
			}
		}
		slices.Sort(gi)
		for i := 1; i < k; i++ {
			if gi[i] == gi[i-1] {
				return fmt.Errorf("%w: row %d: index %d selected twice", ErrMismatch, r, gi[i])
			}
		}
		if ties {
			wv, gv := make([]float32, k), make([]float32, k)
			for i := range k {
				wv[i], gv[i] = src[r*cols+wi[i]], src[r*cols+gi[i]]
			}
			slices.Sort(wv)
			slices.Sort(gv)
			if !slices.Equal(wv, gv) {
				return fmt.Errorf("%w: row %d: selected values %v, reference %v", ErrMismatch, r, gv, wv)
			}
			continue
		}
		slices.Sort(wi)
		if !slices.Equal(wi, gi) {
			return fmt.Errorf("%w: row %d: indices %v, reference %v", ErrMismatch, r, gi, wi)
		}
	}
	return nil
}

// reduceCases are SUM, SUM_ROWS, MEAN, ARGMAX, CUMSUM, the norms, SOFT_MAX,
// ARGSORT and TOP_K as test-backend-ops' make_test_cases_eval lists them,
// plus in-place, F16/BF16 and broadcast variants it lacks. The quick subset
// has a few small cases per operation.
func reduceCases(full bool) []Case {
	var cases []Case
	seen := map[string]bool{}
	add := func(quick bool, c Case) {
		if seen[c.Name] || (!full && !quick) {
			return
		}
		seen[c.Name] = true
		c.Full = !quick
		cases = append(cases, c)
	}
	f32 := quant.F32

	add(true, sumCase(f32, [4]int64{10, 5, 4, 3}, [4]int{}))
	add(true, sumCase(f32, [4]int64{11, 5, 6, 3}, [4]int{0, 2, 1, 3}))
	add(false, sumCase(f32, [4]int64{11, 5, 6, 3}, [4]int{0, 3, 2, 1}))
	add(false, sumCase(f32, [4]int64{11, 5, 6, 3}, [4]int{0, 1, 3, 2}))
	for _, ne := range [][4]int64{{33, 1, 1, 1}, {33, 1024, 1, 1}, {33, 256, 1, 1}} {
		add(false, sumCase(f32, ne, [4]int{}))
	}
	add(false, sumCase(f32, [4]int64{33, 256, 1, 1}, [4]int{1, 0, 2, 3}))
	add(true, sumCase(quant.F16, [4]int64{10, 5, 4, 3}, [4]int{}))
	add(false, sumCase(quant.BF16, [4]int64{10, 5, 4, 3}, [4]int{}))
	add(false, sumCase(quant.F16, [4]int64{33, 256, 1, 1}, [4]int{0, 2, 1, 3}))

	add(true, sumRowsCase(f32, [4]int64{10, 5, 4, 3}, false, false))
	for _, n := range []int64{11, 16} {
		add(n == 11, sumRowsCase(f32, [4]int64{n, 5, 6, 3}, true, false))
		add(false, sumRowsCase(f32, [4]int64{n, 5, 6, 3}, false, true))
		add(n == 11, sumRowsCase(f32, [4]int64{n, 5, 6, 3}, true, true))
	}
	for _, ne := range [][4]int64{{33, 1, 1, 1}, {33, 1024, 1, 1}, {33, 256, 1, 1}} {
		add(false, sumRowsCase(f32, ne, false, false))
	}

	for i, ne := range [][4]int64{{10, 5, 4, 3}, {33, 1, 1, 1}, {33, 256, 1, 1}, {32769, 1, 1, 1},
		{32, 1, 1, 1}, {32, 256, 1, 1}, {32768, 1, 1, 1}} {
		add(i < 2, meanCase(f32, ne))
	}

	for i, ne := range [][4]int64{{32, 1, 1, 1}, {32, 513, 1, 1}, {100, 10, 1, 1}, {1024, 10, 1, 1},
		{1024, 12, 1, 1}, {2000, 10, 1, 1}, {5438, 3, 1, 1}} {
		add(i < 3, argmaxCase(f32, ne))
	}

	for i, ne := range [][4]int64{{10, 5, 4, 3}, {127, 5, 4, 3}, {128, 5, 4, 3}, {128, 128, 4, 4},
		{255, 5, 4, 3}, {256, 5, 4, 3}, {511, 5, 4, 3}, {512, 5, 4, 3}, {1023, 5, 4, 3},
		{1024, 5, 4, 3}, {2047, 5, 4, 3}, {2048, 5, 4, 3}, {201 * 1204, 1, 1, 1},
		{312 * 1205, 1, 1, 1}, {20481, 4, 1, 1}} {
		add(i < 2, cumsumCase(f32, ne))
	}

	for _, eps := range []float32{0, 1e-6, 1e-4, 1e-1, 10} {
		quick := eps == 1e-6
		for _, n := range []int64{64, 1025} {
			ne := [4]int64{n, 5, 4, 3}
			q := quick && n == 64
			for _, v := range []bool{false, true} {
				add(q, normCase("NORM", f32, ne, eps, normVariant{v: v}))
				add(q, normCase("RMS_NORM", f32, ne, eps, normVariant{v: v}))
			}
			add(q, normCase("NORM", f32, ne, eps, normVariant{noncontigRows: true}))
			add(q, normCase("L2_NORM", f32, ne, eps, normVariant{}))
			add(q, normCase("L2_NORM", f32, ne, eps, normVariant{v: true}))
			add(q, normCase("L2_NORM", f32, ne, eps, normVariant{noncontigRows: true}))
		}
		for _, n := range []int64{33, 132, 260} {
			for _, v := range []bool{false, true} {
				add(false, normCase("NORM", f32, [4]int64{n, 5, 4, 3}, eps, normVariant{v: v}))
				add(false, normCase("RMS_NORM", f32, [4]int64{n, 5, 4, 3}, eps, normVariant{v: v}))
			}
		}
	}
	for _, op := range []string{"NORM", "RMS_NORM", "L2_NORM"} {
		add(op == "RMS_NORM", normCase(op, f32, [4]int64{64, 5, 4, 3}, 1e-6, normVariant{inplace: true}))
	}

	add(false, groupNormCase(f32, [4]int64{64, 64, 320, 1}, 32, 1e-6, false))
	add(false, groupNormCase(f32, [4]int64{9, 9, 1280, 1}, 32, 1e-6, false))
	// Groups that do not divide the channels: a short last group, and
	// more groups than channels (empty trailing groups).
	add(true, groupNormCase(f32, [4]int64{7, 5, 30, 2}, 4, 1e-6, false))
	add(true, groupNormCase(f32, [4]int64{8, 3, 5, 2}, 8, 1e-5, false))
	add(false, groupNormCase(f32, [4]int64{16, 4, 12, 3}, 3, 1e-6, true))

	for _, s := range softMaxSpecs() {
		quick := s.ne[0] <= 16 && s.ne[1] <= 16 && s.nr23 == [2]int64{1, 1} && s.scale == 0.1 && !s.inplace
		add(quick, softMaxCase(s))
	}

	for _, order := range []ops.SortOrder{ops.SortAsc, ops.SortDesc} {
		// test-backend-ops builds these with the default (ascending) order.
		for i := int64(4); i <= 1<<20; i *= 2 {
			add(i <= 8, argsortCase(f32, [4]int64{i - 1, 1, 1, 1}, ops.SortAsc))
			add(i <= 8, argsortCase(f32, [4]int64{i, 1, 1, 1}, ops.SortAsc))
		}
		for _, ne := range [][4]int64{{16, 10, 10, 10}, {60, 10, 10, 10}, {1023, 2, 1, 3}, {1024, 2, 1, 3},
			{1025, 2, 1, 3}, {1025, 256, 1, 1}, {2047, 2, 1, 3}, {2048, 2, 1, 3}, {2049, 2, 1, 3},
			{2, 8, 8192, 1}, {2048, 512, 1, 1}} {
			add(ne[0] == 16, argsortCase(f32, ne, order))
		}
	}

	for n := int64(1); n < 5; n++ {
		for k := 1; k <= int(n); k++ {
			add(n == 4, topKCase(f32, [4]int64{n, 2, 1, 3}, k, true))
		}
	}
	for i := range 20 {
		for _, k := range []int{1, 2, 3, 7, 15, 100, 500, 1023, 9999} {
			if k <= 1<<i {
				quick := i == 5 && k == 7
				add(quick, topKCase(f32, [4]int64{1 << i, 1, 1, 1}, k, false))
				add(quick, topKCase(f32, [4]int64{1<<i + 11, 1, 2, 1}, k, false))
				add(quick, topKCase(f32, [4]int64{1<<i + 11, 1, 2, 1}, k, true))
			}
		}
	}
	for _, k := range []int{1, 2, 3, 7, 15} {
		for _, ne := range [][4]int64{{16, 10, 10, 10}, {60, 10, 10, 10}, {1023, 2, 1, 3}, {1024, 2, 1, 3},
			{1025, 2, 1, 3}, {16384, 1, 1, 1}, {2047, 2, 1, 3}, {2048, 2, 1, 3}, {2049, 2, 1, 3}} {
			add(k == 3 && ne[0] == 16, topKCase(f32, ne, k, false))
		}
	}
	return cases
}

// softMaxSpecs are test-backend-ops' SOFT_MAX cases, then masks that
// broadcast over more than one head or batch, which it lacks.
func softMaxSpecs() []softMaxSpec {
	f32, f16 := quant.F32, quant.F16
	var specs []softMaxSpec
	for _, mask := range []bool{false, true} {
		for _, sinks := range []bool{false, true} {
			for _, maxBias := range []float32{0, 8} {
				if !mask && maxBias > 0 {
					continue
				}
				for _, scale := range []float32{1, 0.1} {
					for _, ne0 := range []int64{16, 1024} {
						for _, ne1 := range []int64{16, 1024} {
							if !mask {
								specs = append(specs,
									softMaxSpec{f32, [4]int64{ne0, ne1, 1, 1}, mask, sinks, f32, [2]int64{1, 1}, scale, maxBias, false},
									softMaxSpec{f32, [4]int64{ne0 - 1, ne1 - 1, 1, 1}, mask, sinks, f32, [2]int64{1, 1}, scale, maxBias, false})
								continue
							}
							for _, mp := range []quant.Type{f32, f16} {
								specs = append(specs,
									softMaxSpec{f32, [4]int64{ne0, ne1, 1, 1}, mask, sinks, mp, [2]int64{1, 1}, scale, maxBias, false},
									softMaxSpec{f32, [4]int64{ne0 - 1, ne1 - 1, 1, 1}, mask, sinks, mp, [2]int64{1, 1}, scale, maxBias, false})
								if ne0 <= 32 && ne1 <= 32 {
									specs = append(specs,
										softMaxSpec{f32, [4]int64{ne0, ne1, 1, 3}, mask, sinks, mp, [2]int64{3, 1}, scale, maxBias, false},
										softMaxSpec{f32, [4]int64{ne0 - 1, ne1 - 1, 1, 1}, mask, sinks, mp, [2]int64{2, 3}, scale, maxBias, false})
								}
							}
						}
					}
				}
			}
			specs = append(specs,
				softMaxSpec{f32, [4]int64{16, 2, 32, 1}, mask, sinks, f32, [2]int64{1, 1}, 0.1, 0, true},
				softMaxSpec{f32, [4]int64{16, 2, 32, 1}, mask, sinks, f16, [2]int64{1, 1}, 0.1, 0, true})
		}
	}
	specs = append(specs,
		softMaxSpec{f32, [4]int64{16, 2, 32, 1}, true, true, f32, [2]int64{1, 1}, 0.1, 0, false},
		softMaxSpec{f32, [4]int64{16, 2, 32, 1}, true, false, f16, [2]int64{1, 1}, 0.1, 0, false},
		softMaxSpec{f32, [4]int64{16, 2, 32, 1}, false, true, f32, [2]int64{1, 1}, 0.1, 0, false},
		softMaxSpec{f32, [4]int64{32, 2, 32, 1}, true, true, f32, [2]int64{1, 1}, 0.1, 0, false},
		softMaxSpec{f32, [4]int64{32, 2, 32, 1}, true, false, f16, [2]int64{1, 1}, 0.1, 0, false},
		softMaxSpec{f32, [4]int64{32, 2, 32, 1}, true, true, f32, [2]int64{1, 1}, 0.1, 8, false},
		softMaxSpec{f32, [4]int64{32, 2, 32, 1}, true, true, f16, [2]int64{1, 1}, 0.1, 8, false},
		softMaxSpec{f32, [4]int64{200001, 2, 3, 1}, true, true, f32, [2]int64{1, 1}, 0.1, 8, false},
		softMaxSpec{f32, [4]int64{200001, 2, 3, 1}, true, true, f16, [2]int64{1, 1}, 0.1, 8, false},
		softMaxSpec{f32, [4]int64{200000, 1, 1, 1}, false, false, f32, [2]int64{1, 1}, 1, 0, false},
		softMaxSpec{f32, [4]int64{200000, 4, 1, 1}, false, false, f32, [2]int64{1, 1}, 1, 0, false},
		softMaxSpec{f32, [4]int64{643251, 3, 1, 1}, false, false, f32, [2]int64{1, 1}, 1, 0, false})
	for _, mp := range []quant.Type{f32, f16} {
		specs = append(specs,
			softMaxSpec{f32, [4]int64{16, 8, 2, 3}, true, true, mp, [2]int64{2, 1}, 0.5, 0, false},
			softMaxSpec{f32, [4]int64{20, 6, 3, 2}, true, false, mp, [2]int64{2, 2}, 1, 4, false},
			softMaxSpec{f32, [4]int64{33, 4, 5, 1}, true, true, mp, [2]int64{1, 1}, 0.25, 8, false})
	}
	return specs
}

// reduceFromDesc builds a case of this family from its cpu_support.csv
// description.
func reduceFromDesc(op string, d Desc) (Case, error) {
	p := &descReader{d: d}
	typ := p.dtype("type")
	ne := p.ne("ne")
	var c Case
	switch op {
	case "SUM":
		var perm [4]int
		if _, ok := d["permute"]; ok {
			for i, v := range p.ints("permute", 4) {
				perm[i] = int(v)
			}
		}
		c = sumCase(typ, ne, perm)
	case "SUM_ROWS":
		c = sumRowsCase(typ, ne, p.flag("permute"), p.flag("slice"))
	case "MEAN":
		c = meanCase(typ, ne)
	case "ARGMAX":
		c = argmaxCase(typ, ne)
	case "CUMSUM":
		c = cumsumCase(typ, ne)
	case "NORM", "L2_NORM":
		c = normCase(op, typ, ne, p.float("eps"), normVariant{v: p.flag("v"), noncontigRows: p.flag("noncontig_rows")})
	case "RMS_NORM":
		c = normCase(op, typ, ne, p.float("eps"), normVariant{v: p.flag("v"), inplace: p.flag("inplace")})
	case "GROUP_NORM":
		c = groupNormCase(typ, ne, int(p.num64("num_groups")), p.float("eps"), false)
	case "SOFT_MAX":
		nr := p.ints("nr23", 2)
		s := softMaxSpec{typ: typ, ne: ne, mask: p.flag("mask"), sinks: p.flag("sinks"), mPrec: p.dtype("m_prec"),
			scale: p.float("scale"), maxBias: p.float("max_bias"), inplace: p.flag("inplace")}
		if len(nr) == 2 {
			s.nr23 = [2]int64{nr[0], nr[1]}
		}
		c = softMaxCase(s)
	case "ARGSORT":
		c = argsortCase(typ, ne, ops.SortOrder(p.num64("order")))
	case "TOP_K":
		c = topKCase(typ, ne, int(p.num64("k")), p.flag("ties"))
	default:
		return Case{}, fmt.Errorf("optest: %s is not a reduce operation", op)
	}
	if p.err != nil {
		return Case{}, fmt.Errorf("optest: %s: %w", op, p.err)
	}
	return c, nil
}
