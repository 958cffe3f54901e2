package openvino

import (
	"fmt"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
)

// translateSet: a copy of src0 with src1 written over the region of
// strides nb1..nb3 at offset (src0's own layout: supports-op requires the
// strides to be src0's).
func translateSet(b *builder, n *graph.Tensor) (value, error) {
	a, src := n.Src[0], n.Src[1]
	if !a.IsContiguous() {
		return value{}, fmt.Errorf("set into a non-contiguous tensor")
	}
	av, err := b.get(a)
	if err != nil {
		return value{}, err
	}
	sv, err := b.get(src)
	if err != nil {
		return value{}, err
	}
	p := ops.SetParamsOf(n.Params)
	region := &graph.Tensor{Type: a.Type, Ne: src.Ne, ViewOffs: uint64(p.Offset),
		Nb: [4]uint64{uint64(a.Type.TypeSize()), uint64(p.Nb1), uint64(p.Nb2), uint64(p.Nb3)}}
	idx, err := viewIndices(region)
	if err != nil {
		return value{}, err
	}
	for _, i := range idx {
		if i < 0 || i >= a.NElements() {
			return value{}, fmt.Errorf("set region outside its destination")
		}
	}
	flat := b.reshape(av, []int64{a.NElements()})
	upd := b.reshape(b.convert(b.convert(sv, etF32), av.et), []int64{src.NElements()})
	out := b.m.add("ScatterUpdate", "opset3", nil, av.et, flat.shape, flat, b.indexConst(idx), upd, b.m.constI64(nil, 0))
	return b.reshape(out, ovShapeOf(n)), nil
}

// translateDiag: [n, 1] rows to [n, n] diagonal matrices.
func translateDiag(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	d := n.Ne[0]
	eye := make([]float32, d*d)
	for i := int64(0); i < d; i++ {
		eye[i*d+i] = 1
	}
	y := b.binary("Multiply", x, b.m.constF32([]int64{1, 1, d, d}, eye...))
	return b.finish(n, y)
}

// translateTri keeps the triangle TRI's type names, zero elsewhere (a
// Select, so that NaN and Inf outside it become 0 as in ggml).
func translateTri(b *builder, n *graph.Tensor) (value, error) {
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	typ := ops.TriParamsOf(n.Params).Type
	if !typ.Valid() {
		return value{}, fmt.Errorf("tri type %d", typ)
	}
	r, c := n.Ne[1], n.Ne[0]
	mask := make([]byte, r*c)
	for i1 := int64(0); i1 < r; i1++ {
		for i0 := int64(0); i0 < c; i0++ {
			if typ.Keep(i0, i1) {
				mask[i1*c+i0] = 1
			}
		}
	}
	m := b.m.sideConst(etBoolean, []int64{1, 1, r, c}, mask)
	y := b.m.add("Select", "opset1", []attr{{"auto_broadcast", "numpy"}}, etF32, x.shape, m, x, b.m.scalarF32(0))
	return b.finish(n, y)
}

// translatePad extends each dimension by ggml_pad_ext's left and right
// counts: zeros (one Pad-12, whose negative counts crop as ggml's do), or
// with the circular flag the row wrapped around (a Gather of indices
// modulo the extent).
func translatePad(b *builder, n *graph.Tensor) (value, error) {
	p := ops.PadParamsOf(n.Params)
	x, err := b.f32(n.Src[0])
	if err != nil {
		return value{}, err
	}
	begin, end := make([]int64, 4), make([]int64, 4)
	for d := 0; d < 4; d++ {
		begin[3-d], end[3-d] = int64(p.LP[d]), int64(p.RP[d])
	}
	if !p.Circular {
		if isZero(begin) && isZero(end) {
			return b.finish(n, x)
		}
		return b.finish(n, b.padConst(x, begin, end))
	}
	for axis := range 4 {
		lp, rp := begin[axis], end[axis]
		if lp == 0 && rp == 0 {
			continue
		}
		ext := x.shape[axis]
		idx := make([]int64, ext+lp+rp)
		for i := range idx {
			idx[i] = ((int64(i)-lp)%ext + ext) % ext
		}
		x = b.gather(x, b.indexConst(idx), int64(axis))
	}
	return b.finish(n, x)
}

func isZero(v []int64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// translateAddID: a[i0, i1, i2] + b[i0, ids[i1, i2]].
func translateAddID(b *builder, n *graph.Tensor) (value, error) {
	a, bias, ids := n.Src[0], n.Src[1], n.Src[2]
	av, err := b.f32(a)
	if err != nil {
		return value{}, err
	}
	bv, err := b.f32(bias)
	if err != nil {
		return value{}, err
	}
	iv, err := b.get(ids)
	if err != nil {
		return value{}, err
	}
	rows := b.reshape(bv, []int64{bias.Ne[1], bias.Ne[0]})
	sel := b.gather(rows, b.reshape(iv, []int64{ids.Ne[1] * ids.Ne[0]}), 0)
	return b.finish(n, b.binary("Add", av, b.reshape(sel, ovShapeOf(n))))
}

// translateMulMatID: for every token t and slot e, expert ids[e, t]'s
// matrix times b[:, e % n_b1, t] — the selected experts gathered, then
// one batched MatMul (the standard-opset form of ggml-openvino's
// GatherMatmul).
func translateMulMatID(b *builder, n *graph.Tensor) (value, error) {
	as, src, ids := n.Src[0], n.Src[1], n.Src[2]
	w, err := b.f32(as)
	if err != nil {
		return value{}, err
	}
	x, err := b.f32(src)
	if err != nil {
		return value{}, err
	}
	iv, err := b.get(ids)
	if err != nil {
		return value{}, err
	}
	K, M, E := as.Ne[0], as.Ne[1], as.Ne[2]
	U, T := ids.Ne[0], ids.Ne[1]
	if src.Ne[2] != T || (src.Ne[1] != 1 && src.Ne[1] != U) || as.Ne[3] != 1 || src.Ne[3] != 1 {
		return value{}, fmt.Errorf("mul_mat_id shapes %v %v %v", as.Ne, src.Ne, ids.Ne)
	}
	we := b.reshape(w, []int64{E, M, K})
	if T*U > E {
		return b.finish(n, b.reshape(b.mulMatAllExperts(we, x, iv, T, U, src.Ne[1]), ovShapeOf(n)))
	}
	sel := b.gather(we, b.reshape(iv, []int64{T * U}), 0) // [T*U, M, K]
	xs := b.reshape(x, []int64{T, src.Ne[1], K})
	if src.Ne[1] != U {
		xs = b.m.add("Broadcast", "opset3", []attr{{"mode", "numpy"}}, etF32, []int64{T, U, K}, xs, b.m.i64s(T, U, K))
	}
	xs = b.reshape(xs, []int64{T * U, 1, K})
	y := b.m.add("MatMul", "opset1", []attr{{"transpose_a", "false"}, {"transpose_b", "true"}}, etF32, []int64{T * U, 1, M}, xs, sel)
	return b.finish(n, b.reshape(y, ovShapeOf(n)))
}

// mulMatAllExperts is MUL_MAT_ID where the tokens' slots outnumber the
// experts (T·U > E): every expert times every token row, [E, M, T·U'],
// then each slot's row of its expert gathered, [T·U, M]. Gathering the
// weights per slot instead holds T·U copies of an [M, K] matrix: the
// suite's 32 MXFP4 experts of 2880x2880 with 32 tokens of 2 slots made
// a 2.1 GB f32 gather, and the real CPU plugin (2026.4.1) grew past the
// machine's 23 GB compiling it (OOM). This costs E/U times the products
// in memory bounded by the weights and E·M·T·U' outputs.
func (b *builder) mulMatAllExperts(we, x, ids value, T, U, rows int64) value {
	E, M, K := we.shape[0], we.shape[1], we.shape[2]
	R := T * rows
	xr := b.reshape(x, []int64{1, R, K})
	y := b.m.add("MatMul", "opset1", []attr{{"transpose_a", "false"}, {"transpose_b", "true"}}, etF32, []int64{E, M, R}, we, xr)
	yf := b.reshape(b.transpose(y, []int64{0, 2, 1}), []int64{E * R, M})
	// Slot (t, u) reads row e·R + t·U' + u' of yf, u' = u where each slot
	// has its own row (U' = U), else 0.
	base := make([]int64, T*U)
	for t := range T {
		for u := range U {
			base[t*U+u] = t * rows
			if rows == U {
				base[t*U+u] += u
			}
		}
	}
	e := b.convert(b.reshape(ids, []int64{T * U}), etI64)
	flat := b.binary("Add", b.binary("Multiply", e, b.m.constI64(nil, R)), b.m.i64s(base...))
	return b.gather(yf, flat, 0)
}
