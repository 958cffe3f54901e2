package cpu

import (
	"cmp"
	"math"
	"slices"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Reductions, norms, softmax and sorting. The kernels keep ggml's
// precision choices where they change results beyond rounding noise: sums
// of F32 rows in float64 (ggml_float), of F16/BF16 rows in float32, running
// sums in float32, and float32 for everything computed per element.

// rowsPacked reports whether t's elements are adjacent within a row; most
// of ggml's kernels here read rows as plain arrays.
func rowsPacked(t *graph.Tensor) bool { return t.Nb[0] == uint64(t.Type.TypeSize()) }

// flatRows reports whether row r of t, counting over dimensions 1 to 3, is
// at byte r*Nb[1]: ggml's sort kernels address rows that way.
func flatRows(t *graph.Tensor) bool {
	return (t.Ne[2] == 1 || t.Nb[2] == uint64(t.Ne[1])*t.Nb[1]) &&
		(t.Ne[3] == 1 || t.Nb[3] == uint64(t.Ne[1]*t.Ne[2])*t.Nb[1])
}

// rowShape is the shape of a per-row reduction of a: [1, ne1, ne2, ne3].
func rowShape(a *graph.Tensor) [graph.MaxDims]int64 {
	return [graph.MaxDims]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}
}

// loadRow reads row (i1, i2, i3) of the float tensor t into row (len Ne[0]).
func loadRow(t *graph.Tensor, i1, i2, i3 int64, row []float32) {
	off := offset(t, 0, i1, i2, i3)
	if t.Nb[0] == uint64(t.Type.TypeSize()) {
		// Packed rows convert in bulk.
		switch t.Type {
		case quant.F32:
			if v := f32Row(t.Data, off, int64(len(row))); v != nil {
				copy(row, v)
				return
			}
		case quant.F16:
			if v := f16Row(t.Data, off, int64(len(row))); v != nil {
				vec.f16ToF32(row, v)
				return
			}
		}
	}
	for i := range row {
		row[i] = getF(t.Type, t.Data, off+uint64(i)*t.Nb[0])
	}
}

// rowF32 is row (i1, i2, i3) of the float tensor t as float32s: a view of
// t's memory when its rows are packed aligned F32 (do not write to it;
// tmp may then be nil), else a copy in tmp (len ne0).
func rowF32(t *graph.Tensor, i1, i2, i3 int64, tmp []float32) []float32 {
	if viewsF32Rows(t) {
		return f32Row(t.Data, offset(t, 0, i1, i2, i3), t.Ne[0])
	}
	loadRow(t, i1, i2, i3, tmp)
	return tmp
}

// viewsF32Rows reports whether rowF32 views every row of t in place.
func viewsF32Rows(t *graph.Tensor) bool { return t.Type == quant.F32 && t.Nb[0] == 4 && f32Aligned(t) }

// storeRow writes row into row (i1, i2, i3) of the float tensor t.
func storeRow(t *graph.Tensor, i1, i2, i3 int64, row []float32) {
	off := offset(t, 0, i1, i2, i3)
	if t.Type == quant.F32 && t.Nb[0] == 4 {
		if v := f32Row(t.Data, off, int64(len(row))); v != nil {
			copy(v, row)
			return
		}
	}
	for i, v := range row {
		setF(t.Type, t.Data, off+uint64(i)*t.Nb[0], v)
	}
}

// sumF64 is ggml_vec_sum_f32_ggf: the float64 sum of float32 values.
func sumF64(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// sumSquaresF64 sums the float32 squares of x in float64, as ggml's
// rms_norm and l2_norm do.
func sumSquaresF64(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v * v)
	}
	return s
}

// sumSquaresF64x4 is sumSquaresF64 of four rows of one length at once:
// each row's sum is the same sequential chain of float64 additions, the
// four chains independent, so that they overlap instead of each waiting
// on its additions' latency.
func sumSquaresF64x4(a, b, c, d []float32) (sa, sb, sc, sd float64) {
	b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
	for i, v := range a {
		sa += float64(v * v)
		sb += float64(b[i] * b[i])
		sc += float64(c[i] * c[i])
		sd += float64(d[i] * d[i])
	}
	return
}

// scaleRow multiplies every element of x by s.
func scaleRow(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// supportsSum: SUM of an F32, F16 or BF16 tensor of any layout into one
// element of the same type. ggml accepts any layout too, but its kernel
// reads rows as packed arrays, so where elements are not adjacent (a
// transposed source) it adds the wrong memory; this one sums the tensor.
func supportsSum(t *graph.Tensor) bool {
	a := t.Src[0]
	return a != nil && isFloatType(a.Type) && t.Type == a.Type && t.NElements() == 1
}

// computeSum adds the rows' sums in order on one thread, as ggml does: in
// float64 for F32, in float32 for F16 and BF16.
func computeSum(p *Params, t *graph.Tensor) {
	if p.Ith != 0 {
		return
	}
	a := t.Src[0]
	row := make([]float32, a.Ne[0])
	var sum64 float64
	var sum32 float32
	for i3 := range a.Ne[3] {
		for i2 := range a.Ne[2] {
			for i1 := range a.Ne[1] {
				loadRow(a, i1, i2, i3, row)
				if a.Type == quant.F32 {
					sum64 += sumF64(row)
					continue
				}
				var rs float32
				for _, v := range row {
					rs += v
				}
				sum32 += rs
			}
		}
	}
	if a.Type == quant.F32 {
		sum32 = float32(sum64)
	}
	setF(t.Type, t.Data, 0, sum32)
}

// supportsRowReduce: SUM_ROWS (F32 result) and MEAN of an F32 tensor
// whose rows are packed; ggml reads rows as arrays.
func supportsRowReduce(t *graph.Tensor) bool {
	a := t.Src[0]
	return a != nil && a.Type == quant.F32 && t.Type == quant.F32 && rowsPacked(a) &&
		t.Ne == rowShape(a)
}

// computeRowReduce writes each row's float64 sum, rounded to float32, and
// for MEAN divides it by the row length in float32.
func computeRowReduce(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	row := make([]float32, a.Ne[0])
	forRows(p, t, func(i1, i2, i3 int64) {
		loadRow(a, i1, i2, i3, row)
		s := float32(sumF64(row))
		if t.Op == ops.Mean {
			s /= float32(a.Ne[0])
		}
		setF(t.Type, t.Data, offset(t, 0, i1, i2, i3), s)
	})
}

// supportsArgmax: ARGMAX of an F32 matrix with packed rows.
func supportsArgmax(t *graph.Tensor) bool {
	a := t.Src[0]
	return a != nil && a.Type == quant.F32 && t.Type == quant.I32 && rowsPacked(a) &&
		a.Ne[2] == 1 && a.Ne[3] == 1 && t.Ne == [graph.MaxDims]int64{a.Ne[1], 1, 1, 1}
}

// computeArgmax picks, as ggml_vec_argmax_f32, the last index at which the
// running maximum equals the element, so ties go to the last occurrence.
func computeArgmax(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	row := make([]float32, a.Ne[0])
	lo, hi := p.Rows(a.Ne[1])
	for i1 := lo; i1 < hi; i1++ {
		loadRow(a, i1, 0, 0, row)
		best, idx := float32(math.Inf(-1)), 0
		for i, v := range row {
			// C's MAX(best, v): a NaN v replaces best.
			if !(best > v) {
				best = v
			}
			if best == v {
				idx = i
			}
		}
		setI32(t.Data, offset(t, i1, 0, 0, 0), int32(idx))
	}
}

// supportsCumsum: CUMSUM of F32 rows, packed in source and result.
func supportsCumsum(t *graph.Tensor) bool {
	a := t.Src[0]
	return a != nil && a.Type == quant.F32 && t.Type == quant.F32 && graph.SameShape(t, a) &&
		rowsPacked(a) && rowsPacked(t)
}

// computeCumsum runs a float32 sum along each row, as ggml_vec_cumsum_f32.
func computeCumsum(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	row := make([]float32, a.Ne[0])
	forRows(p, t, func(i1, i2, i3 int64) {
		loadRow(a, i1, i2, i3, row)
		for i := 1; i < len(row); i++ {
			row[i] += row[i-1]
		}
		storeRow(t, i1, i2, i3, row)
	})
}

// validEps: ggml asserts that the epsilon of a norm is not negative.
func validEps(eps float32) bool { return eps >= 0 }

// supportsNorm: NORM and L2_NORM of F32 tensors of any layout (ggml has a
// strided path), RMS_NORM of F32 tensors with packed source rows.
func supportsNorm(t *graph.Tensor) bool {
	a := t.Src[0]
	if a == nil || a.Type != quant.F32 || t.Type != quant.F32 || !graph.SameShape(t, a) ||
		!validEps(ops.NormParamsOf(t.Params).Eps) {
		return false
	}
	return t.Op != ops.RMSNorm || (rowsPacked(a) && rowsPacked(t))
}

// computeNorm normalizes each row with ggml's mix of precisions: float64
// sums of float32 values and squares, float32 mean, variance and scale.
func computeNorm(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	eps := ops.NormParamsOf(t.Params).Eps
	n := a.Ne[0]
	if t.Op == ops.RMSNorm && computeRMSNormF32(p, t, eps) {
		return
	}
	row := make([]float32, n)
	forRows(p, t, func(i1, i2, i3 int64) {
		loadRow(a, i1, i2, i3, row)
		var scale float32
		switch t.Op {
		case ops.Norm:
			mean := float32(sumF64(row)) / float32(n)
			for i := range row {
				row[i] -= mean
			}
			variance := float32(sumSquaresF64(row) / float64(n))
			scale = 1 / float32(math.Sqrt(float64(variance+eps)))
		case ops.RMSNorm:
			mean := float32(sumSquaresF64(row) / float64(n))
			scale = 1 / float32(math.Sqrt(float64(mean+eps)))
		case ops.L2Norm:
			norm := float32(math.Sqrt(float64(float32(sumSquaresF64(row)))))
			scale = 1 / max(norm, eps)
		}
		scaleRow(row, scale)
		storeRow(t, i1, i2, i3, row)
	})
}

// computeRMSNormF32 is RMS_NORM on rows viewed in place (the supports rule
// has them packed), with computeNorm's arithmetic: the float64 sum of the
// float32 squares, then one float32 scale applied by the vector primitive
// (a plain multiply). It returns false, having done nothing, when a row is
// not 4-byte aligned.
func computeRMSNormF32(p *Params, t *graph.Tensor, eps float32) bool {
	a := t.Src[0]
	if a.Nb[0] != 4 || t.Nb[0] != 4 || !f32Aligned(a) || !f32Aligned(t) {
		return false
	}
	n := a.Ne[0]
	lo, hi := p.Rows(t.NRows())
	row := func(tt *graph.Tensor, r int64) []float32 {
		return f32Row(tt.Data, offset(tt, 0, r%tt.Ne[1], r/tt.Ne[1]%tt.Ne[2], r/(tt.Ne[1]*tt.Ne[2])), n)
	}
	// ggml's arithmetic per row; the sums of four rows at a time unless
	// the result overlaps the source other than row for row (each row
	// then read before an earlier one is written, as ggml reads them).
	group := int64(4)
	if overlaps(a.Data, t.Data) && !(unsafe.SliceData(a.Data) == unsafe.SliceData(t.Data) && a.Nb == t.Nb) {
		group = 1
	}
	var sums [4]float64
	for r := lo; r < hi; r += group {
		k := min(group, hi-r)
		if k == 4 {
			sums[0], sums[1], sums[2], sums[3] = sumSquaresF64x4(row(a, r), row(a, r+1), row(a, r+2), row(a, r+3))
		} else {
			for j := range k {
				sums[j] = sumSquaresF64(row(a, r+int64(j)))
			}
		}
		for j := range k {
			out := row(t, r+int64(j))
			mean := float32(sums[j] / float64(n))
			scale := 1 / float32(math.Sqrt(float64(mean+eps)))
			// In place, the source row is the result row: copy moves
			// nothing.
			copy(out, row(a, r+int64(j)))
			vec.scale(out, scale)
		}
	}
	return true
}

// supportsGroupNorm: GROUP_NORM of F32 tensors with packed source rows
// and a positive group count (ggml divides by it).
func supportsGroupNorm(t *graph.Tensor) bool {
	a := t.Src[0]
	gp := ops.GroupNormParamsOf(t.Params)
	return a != nil && a.Type == quant.F32 && t.Type == quant.F32 && graph.SameShape(t, a) &&
		rowsPacked(a) && rowsPacked(t) && gp.Groups > 0
}

// computeGroupNorm normalizes, for every sample i3, each group of
// ceil(channels/groups) consecutive channels (the last group may be
// smaller, trailing ones empty). Threads split the groups.
func computeGroupNorm(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	gp := ops.GroupNormParamsOf(t.Params)
	channels := a.Ne[2]
	perGroup := (channels + int64(gp.Groups) - 1) / int64(gp.Groups)
	row := make([]float32, a.Ne[0])
	lo, hi := p.Rows(int64(gp.Groups))
	for g := lo; g < hi; g++ {
		start, end := g*perGroup, min((g+1)*perGroup, channels)
		if start >= end {
			continue
		}
		count := float64(a.Ne[0] * a.Ne[1] * (end - start))
		for i3 := range a.Ne[3] {
			var sum float64
			for i2 := start; i2 < end; i2++ {
				for i1 := range a.Ne[1] {
					loadRow(a, i1, i2, i3, row)
					sum += sumF64(row)
				}
			}
			mean := float32(sum / count)
			var sum2 float64
			for i2 := start; i2 < end; i2++ {
				for i1 := range a.Ne[1] {
					loadRow(a, i1, i2, i3, row)
					for i := range row {
						row[i] -= mean
					}
					sum2 += sumSquaresF64(row)
					storeRow(t, i1, i2, i3, row)
				}
			}
			variance := float32(sum2 / count)
			scale := 1 / float32(math.Sqrt(float64(variance+gp.Eps)))
			for i2 := start; i2 < end; i2++ {
				for i1 := range a.Ne[1] {
					loadRow(t, i1, i2, i3, row)
					scaleRow(row, scale)
					storeRow(t, i1, i2, i3, row)
				}
			}
		}
	}
}

// supportsSoftMax: SOFT_MAX of F32 rows (packed, as the result's), with an
// optional F16 or F32 mask with packed rows of the same length, at least as
// many rows, broadcast over dimensions 2 and 3, and optional F32 sinks,
// one per head (dimension 2).
func supportsSoftMax(t *graph.Tensor) bool {
	a, mask, sinks := t.Src[0], t.Src[1], t.Src[2]
	if a == nil || a.Type != quant.F32 || t.Type != quant.F32 || !graph.SameShape(t, a) ||
		!rowsPacked(a) || !rowsPacked(t) {
		return false
	}
	if mask != nil && (mask.Type != quant.F32 && mask.Type != quant.F16 || !rowsPacked(mask) ||
		mask.Ne[0] != a.Ne[0] || mask.Ne[1] < a.Ne[1] || mask.Ne[2] == 0 || mask.Ne[3] == 0) {
		return false
	}
	if sinks != nil && (sinks.Type != quant.F32 || !rowsPacked(sinks) || sinks.Ne[0] < a.Ne[2]) {
		return false
	}
	return mask != nil || ops.SoftMaxParamsOf(t.Params).MaxBias <= 0
}

// alibiSlopes returns ggml's ALiBi slope of head h for nHead heads and
// maxBias (1 for every head when maxBias is not positive), computed in
// float32 as ggml does.
func alibiSlopes(nHead int64, maxBias float32) func(h int64) float32 {
	if maxBias <= 0 {
		return func(int64) float32 { return 1 }
	}
	log2 := int64(1) << uint(math.Floor(math.Log2(float64(nHead))))
	powf := func(x, y float32) float32 { return float32(math.Pow(float64(x), float64(y))) }
	m0 := powf(2, -maxBias/float32(log2))
	m1 := powf(2, -(maxBias/2)/float32(log2))
	return func(h int64) float32 {
		if h < log2 {
			return powf(m0, float32(h+1))
		}
		return powf(m1, float32(2*(h-log2)+1))
	}
}

// computeSoftMax: each row is scaled, gets slope times its mask row (row
// i1 of the mask, broadcast over heads and batches by modulo; a
// multiply-add that ggml's FMA builds fuse, as vec.mad does on those
// paths), and is normalized by ggml_vec_soft_max_f32's exponentials and
// float64 sum (vec.softmax). A sink joins the maximum and the sum as an
// extra logit of its head, through the C library's e^x as in ggml.
func computeSoftMax(p *Params, t *graph.Tensor) {
	a, mask, sinks := t.Src[0], t.Src[1], t.Src[2]
	sp := ops.SoftMaxParamsOf(t.Params)
	slope := alibiSlopes(a.Ne[2], sp.MaxBias)
	w := make([]float32, a.Ne[0])
	m := make([]float32, a.Ne[0])
	forRows(p, t, func(i1, i2, i3 int64) {
		loadRow(a, i1, i2, i3, w)
		vec.scale(w, sp.Scale)
		if mask != nil {
			loadRow(mask, i1, i2%mask.Ne[2], i3%mask.Ne[3], m)
			vec.mad(w, m, slope(i2))
		}
		// ggml_vec_max_f32's MAX(max, x): a NaN becomes the maximum.
		hi := float32(math.Inf(-1))
		for _, v := range w {
			if !(hi > v) {
				hi = v
			}
		}
		var sink float32
		if sinks != nil {
			sink = getF(quant.F32, sinks.Data, offset(sinks, i2, 0, 0, 0))
			hi = max(hi, sink)
		}
		sum := vec.softmax(w, w, hi)
		if sinks != nil {
			sum += float64(libcExpf(sink - hi))
		}
		vec.scale(w, float32(1/sum))
		storeRow(t, i1, i2, i3, w)
	})
}

// supportsSort: ARGSORT and TOP_K of F32 rows into I32 indices, with
// packed rows that ggml addresses as one flat run (flatRows) on both sides,
// and a valid order for ARGSORT.
func supportsSort(t *graph.Tensor) bool {
	a := t.Src[0]
	if a == nil || a.Type != quant.F32 || t.Type != quant.I32 || t.Ne[1] != a.Ne[1] || t.Ne[2] != a.Ne[2] ||
		t.Ne[3] != a.Ne[3] || !rowsPacked(a) || !rowsPacked(t) || !flatRows(a) || !flatRows(t) {
		return false
	}
	if t.Op == ops.Argsort {
		return t.Ne[0] == a.Ne[0] && ops.ArgsortParamsOf(t.Params).Order.Valid()
	}
	return t.Ne[0] <= a.Ne[0]
}

// computeArgsort writes each row's indices in ascending or descending
// order of value. The sort is stable, so equal values keep their index
// order (ggml's is not; its test uses distinct values).
func computeArgsort(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	desc := ops.ArgsortParamsOf(t.Params).Order == ops.SortDesc
	row := make([]float32, a.Ne[0])
	idx := make([]int32, a.Ne[0])
	forRows(p, t, func(i1, i2, i3 int64) {
		loadRow(a, i1, i2, i3, row)
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortStableFunc(idx, func(x, y int32) int {
			if desc {
				return cmp.Compare(row[y], row[x])
			}
			return cmp.Compare(row[x], row[y])
		})
		storeIndices(t, i1, i2, i3, idx)
	})
}

// storeIndices writes idx into row (i1, i2, i3) of the I32 tensor t.
func storeIndices(t *graph.Tensor, i1, i2, i3 int64, idx []int32) {
	off := offset(t, 0, i1, i2, i3)
	for i, v := range idx {
		setI32(t.Data, off+uint64(i)*t.Nb[0], v)
	}
}

// computeTopK writes the indices of each row's Ne[0] largest values,
// largest first, equal values by index: the first k of a stable
// descending argsort (ggml's order is unspecified). A heap of the k best
// so far keeps it O(n log k) for long rows.
func computeTopK(p *Params, t *graph.Tensor) {
	a := t.Src[0]
	k := int(t.Ne[0])
	row := make([]float32, a.Ne[0])
	heap := make([]int32, 0, k)
	// better orders by value, descending, then by index; NaN is smallest.
	better := func(x, y int32) bool {
		c := cmp.Compare(row[x], row[y])
		return c > 0 || c == 0 && x < y
	}
	// siftDown restores the heap (worst element at the root) from i.
	siftDown := func(i int) {
		for {
			w, l, r := i, 2*i+1, 2*i+2
			if l < len(heap) && better(heap[w], heap[l]) {
				w = l
			}
			if r < len(heap) && better(heap[w], heap[r]) {
				w = r
			}
			if w == i {
				return
			}
			heap[i], heap[w] = heap[w], heap[i]
			i = w
		}
	}
	forRows(p, t, func(i1, i2, i3 int64) {
		loadRow(a, i1, i2, i3, row)
		heap = heap[:0]
		for j := range int32(len(row)) {
			if len(heap) < k {
				heap = append(heap, j)
				// Sift up.
				for i := len(heap) - 1; i > 0 && better(heap[(i-1)/2], heap[i]); i = (i - 1) / 2 {
					heap[i], heap[(i-1)/2] = heap[(i-1)/2], heap[i]
				}
				continue
			}
			if better(j, heap[0]) {
				heap[0] = j
				siftDown(0)
			}
		}
		slices.SortFunc(heap, func(x, y int32) int {
			switch {
			case better(x, y):
				return -1
			case better(y, x):
				return 1
			}
			return 0
		})
		storeIndices(t, i1, i2, i3, heap)
	})
}
