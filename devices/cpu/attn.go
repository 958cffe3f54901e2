package cpu

import (
	"math"
	"unsafe"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// supportsFlashAttnExt: F32 queries; K of any type with a vec_dot (the
// queries are converted to its vec_dot type, as ggml does); V F32 or any
// type that dequantizes; rows of Q, K and V contiguous, any other strides
// (views, permutations); K/V heads broadcast over Q's; an F16 mask with
// contiguous rows covering every query and key; F32 sinks; default or F32
// precision. ggml 0.25.1's n_kv_max hint is not implemented.
func supportsFlashAttnExt(t *graph.Tensor) bool {
	q, k, v, mask, sinks := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	if q == nil || k == nil || v == nil || t.Type != quant.F32 || q.Type != quant.F32 {
		return false
	}
	if _, err := quant.VecDot(k.Type, 0, nil, nil); err != nil || !k.Type.VecDotType().CanQuantize() {
		return false
	}
	if v.Type != quant.F32 && !v.Type.CanDequantize() {
		return false
	}
	if q.Nb[0] != 4 || k.Nb[0] != uint64(k.Type.TypeSize()) || v.Nb[0] != uint64(v.Type.TypeSize()) {
		return false
	}
	if q.Ne[0] != k.Ne[0] || k.Ne[1] > v.Ne[1] || !t.IsContiguous() ||
		t.Ne != [graph.MaxDims]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]} {
		return false
	}
	for _, kv := range []*graph.Tensor{k, v} {
		if kv.Ne[2] == 0 || kv.Ne[3] == 0 || q.Ne[2]%kv.Ne[2] != 0 || q.Ne[3]%kv.Ne[3] != 0 {
			return false
		}
	}
	if mask != nil && (mask.Type != quant.F16 || mask.Nb[0] != 2 || mask.Ne[0] < k.Ne[1] || mask.Ne[1] < q.Ne[1] ||
		mask.Ne[2] == 0 || mask.Ne[3] == 0) {
		return false
	}
	if sinks != nil && (sinks.Type != quant.F32 || sinks.Nb[0] != 4 || sinks.Ne[0] < q.Ne[2]) {
		return false
	}
	fp := ops.FlashAttnParamsOf(t.Params)
	return (fp.Prec == ops.PrecDefault || fp.Prec == ops.PrecF32) && fp.NKVMax == 0
}

// computeFlashAttnExt follows ggml's reference path (one query row at a
// time, online softmax over the keys): each query row is converted to K's
// vec_dot type and dotted with every key; the weighted values accumulate
// in F16 when V is F16 (rounded at every step, as ggml does) and in F32
// otherwise; sinks join the softmax at the end.
func computeFlashAttnExt(p *Params, t *graph.Tensor) {
	q, k, v, mask, sinks := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	fp := ops.FlashAttnParamsOf(t.Params)
	dk, dv := q.Ne[0], v.Ne[0]
	nq, nHead := q.Ne[1], q.Ne[2]

	scale := fp.Scale
	if fp.LogitSoftcap != 0 {
		scale /= fp.LogitSoftcap
	}
	slope := alibiSlopes(nHead, fp.MaxBias)

	qdt := k.Type.VecDotType()
	kRow := uint64(k.Type.RowSize(dk))
	vRow := uint64(v.Type.RowSize(dv))
	nkv := k.Ne[1]
	w := newFlashScratch(p, t)
	lo, hi := p.Rows(nq * nHead * q.Ne[3])
	for ir := lo; ir < hi; ir++ {
		iq1, iq2, iq3 := ir%nq, ir/nq%nHead, ir/(nq*nHead)
		ik2, ik3 := iq2/(nHead/k.Ne[2]), iq3/(q.Ne[3]/k.Ne[3])
		iv2, iv3 := iq2/(nHead/v.Ne[2]), iq3/(q.Ne[3]/v.Ne[3])

		qOff := offset(q, 0, iq1, iq2, iq3)
		qf := f32RowOr(q.Data, qOff, dk, w.qf)
		if w.q16 != nil {
			vec.f32ToF16(w.q16, qf)
			vec.f16ToF32(w.qr, w.q16)
		} else if _, err := quant.FromFloat(w.qq, qdt, qf); err != nil {
			panic(err)
		}
		mslope := slope(iq2)
		kBase, vBase := offset(k, 0, 0, ik2, ik3), offset(v, 0, 0, iv2, iv3)

		// The keys the mask lets through first, then their scores, then
		// the softmax's running maximum over them, then every
		// exponential, then the weighted values: each step the same
		// arithmetic in the same order as one pass over the keys, but
		// the exponentials no longer wait for one another and the F16
		// steps take all keys in one call.
		keys, mvs, ex, newMax := w.keys, w.mvs, w.ex, w.newMax
		n := 0
		if mask != nil {
			maskRow := f16RowOr(mask.Data, offset(mask, 0, iq1, iq2%mask.Ne[2], iq3%mask.Ne[3]), nkv, w.mask16)
			if mslope == 1 {
				// Without ALiBi a key is masked exactly when its mask
				// value is the fp16 -Inf.
				for ic, h := range maskRow {
					if h != fp16NegInf {
						keys[n], mvs[n] = int32(ic), quant.FP16ToFP32(h)
						n++
					}
				}
			} else {
				for ic, h := range maskRow {
					mv := mslope * quant.FP16ToFP32(h)
					if mv >= -math.MaxFloat32 || mv != mv {
						keys[n], mvs[n] = int32(ic), mv
						n++
					}
				}
			}
		} else {
			for ic := range nkv {
				keys[n], mvs[n] = int32(ic), 0
				n++
			}
		}
		// On a new maximum M of the scores so far the accumulated values
		// are rescaled by ms = e^(M_old-M) and the key weighs 1;
		// otherwise it weighs vs = e^(s-M) (attnRunningMax, attnWeights).
		var m float32
		switch {
		case w.q16 != nil && fp.LogitSoftcap == 0:
			m = vec.attnScoresMaxF16(ex[:n], keys[:n], k.Data[kBase:], k.Nb[1], w.q16, w.qr, w.k16, scale, mvs[:n], newMax[:n])
		default:
			if w.q16 != nil {
				vec.attnScoresF16(ex[:n], keys[:n], k.Data[kBase:], k.Nb[1], w.q16, w.qr, w.k16)
			} else {
				for j, ic := range keys[:n] {
					ex[j] = flashScore(k, kBase+uint64(ic)*k.Nb[1], kRow, dk, w.qq, qf)
				}
			}
			sc := scale
			if fp.LogitSoftcap != 0 {
				for j, s := range ex[:n] {
					ex[j] = fp.LogitSoftcap * tanhf(s*scale)
				}
				sc = 1
			}
			m = attnRunningMax(ex[:n], mvs[:n], newMax[:n], sc)
		}
		vec.expf(ex[:n], ex[:n])
		vkq := w.vkq
		clear(vkq)
		var sum float32 // S: the softmax denominator
		if w.vkq16 != nil {
			// The accumulators stay fp16, rounded at every step, as
			// ggml's are.
			clear(w.vkq16)
			sum = vec.attnAccF16(w.vkq16, keys[:n], v.Data[vBase:], v.Nb[1], ex[:n], newMax[:n], w.v16)
			vec.f16ToF32(vkq, w.vkq16)
		} else {
			for j, ic := range keys[:n] {
				vOff := vBase + uint64(ic)*v.Nb[1]
				vr := w.v32
				if v.Type == quant.F32 {
					vr = f32RowOr(v.Data, vOff, dv, w.v32)
				} else {
					mustDequantize(w.v32, v.Type, v.Data[vOff:vOff+vRow])
				}
				ms, vs := attnWeights(ex[j], newMax[j])
				if ms != 1 {
					vec.scale(vkq, ms)
				}
				vec.mad(vkq, vr, vs)
				sum = float32(sum*ms) + vs
			}
		}

		if sinks != nil {
			s := getF(quant.F32, sinks.Data, uint64(iq2)*sinks.Nb[0])
			ms, vs := float32(1), float32(1)
			if s > m {
				ms = expf(m - s)
				vec.scale(vkq, ms)
			} else {
				vs = expf(s - m)
			}
			sum = float32(sum*ms) + vs
		}

		var inv float32
		if sum != 0 {
			inv = 1 / sum
		}
		// The result swaps Q's dimensions 1 and 2: [DV, heads, n_q, batch].
		vec.scale(vkq, inv)
		attnStoreF32(t.Data, offset(t, 0, iq2, iq1, iq3), vkq)
	}
}

// fp16NegInf is -Inf in fp16.
const fp16NegInf = 0xfc00

// flashScratch is one thread's buffers for computeFlashAttnExt, carved
// from its share of the operation's work memory (flashAttnWorkSize) so
// that a call allocates nothing.
type flashScratch struct {
	qf, qr   []float32 // the query row, and for F16 keys its fp16 values as floats
	qq       []byte    // the query in K's vec_dot type
	q16, k16 []uint16  // F16 keys: the query as fp16, an unaligned key
	vkq, v32 []float32 // the weighted sum, a value row as floats
	// F16 values: the fp16 accumulators, an unaligned value row.
	vkq16, v16 []uint16
	mask16     []uint16 // an unaligned mask row
	// Per query row and key the mask lets through: its index, mask
	// value, score (then exponential) and whether it was a new maximum.
	keys    []int32
	mvs, ex []float32
	newMax  []bool
}

// flashScratchLayout carves b (nil: only counts) into a flashScratch for t
// and returns the bytes it takes.
func flashScratchLayout(t *graph.Tensor, b []byte) (flashScratch, int) {
	q, k, v, mask := t.Src[0], t.Src[1], t.Src[2], t.Src[3]
	dk, dv, nkv := int(q.Ne[0]), int(v.Ne[0]), int(k.Ne[1])
	var w flashScratch
	used := 0
	// Every slice starts 8-byte aligned, as b does (Go allocates it so).
	take := func(n, size int) []byte {
		at := used
		used += (n*size + 7) &^ 7
		if b == nil {
			return nil
		}
		return b[at : at+n*size]
	}
	f32 := func(n int) []float32 { return carve[float32](take(n, 4), n) }
	u16 := func(n int) []uint16 { return carve[uint16](take(n, 2), n) }
	w.qf, w.vkq, w.v32 = f32(dk), f32(dv), f32(dv)
	w.qq = take(int(k.Type.VecDotType().RowSize(int64(dk))), 1)
	if k.Type == quant.F16 {
		w.q16, w.qr, w.k16 = u16(dk), f32(dk), u16(dk)
	}
	if v.Type == quant.F16 {
		w.vkq16, w.v16 = u16(dv), u16(dv)
	}
	if mask != nil {
		w.mask16 = u16(nkv)
	}
	w.keys = carve[int32](take(nkv, 4), nkv)
	w.mvs, w.ex = f32(nkv), f32(nkv)
	w.newMax = carve[bool](take(nkv, 1), nkv)
	return w, used
}

// carve views b, aligned for T, as n values of T (nil when b is).
func carve[T any](b []byte, n int) []T {
	if b == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// flashAttnWorkSize is every thread's flashScratch.
func flashAttnWorkSize(t *graph.Tensor, nth int) int {
	_, n := flashScratchLayout(t, nil)
	return n * nth
}

// newFlashScratch is thread p.Ith's scratch: its share of p.Work, or new
// memory when p comes without it (a Params made outside an engine).
func newFlashScratch(p *Params, t *graph.Tensor) flashScratch {
	_, n := flashScratchLayout(t, nil)
	w, _ := flashScratchLayout(t, p.threadWork(n))
	return w
}

// flashScore is the dot product of key row kOff of k (not F16) with the
// query: the query converted to K's vec_dot type in qq or, for F32 keys,
// as floats in qf.
func flashScore(k *graph.Tensor, kOff, kRow uint64, dk int64, qq []byte, qf []float32) float32 {
	if k.Type == quant.F32 {
		if kr := f32Row(k.Data, kOff, dk); kr != nil {
			return vec.dot(kr, qf)
		}
	}
	s, err := quant.VecDot(k.Type, int(dk), k.Data[kOff:kOff+kRow], qq)
	if err != nil {
		panic(err)
	}
	return s
}
