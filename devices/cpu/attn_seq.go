package cpu

import (
	"encoding/binary"
	"math"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Sequence ops of state-space and linear-attention models: SSM_CONV,
// GATED_DELTA_NET, and SOLVE_TRI, which their chunked forms use.

// attnStoreF32 writes src as contiguous F32 values at byte offset off of b.
func attnStoreF32(b []byte, off uint64, src []float32) {
	if dst := f32Row(b, off, int64(len(src))); dst != nil {
		copy(dst, src)
		return
	}
	b = b[off : off+uint64(len(src))*4]
	for i, x := range src {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
}

// attnDot is ggml's scalar ggml_vec_dot_f32: float products summed in
// double precision.
func attnDot(x, y []float32) float32 {
	var sum float64
	for i, a := range x {
		sum += float64(a * y[i])
	}
	return float32(sum)
}

// supportsSSMConv: F32 throughout, the rows of sx packed (ggml indexes
// channel i1 at i1*ne0), c a packed matrix, a dense result.
func supportsSSMConv(t *graph.Tensor) bool {
	sx, c := t.Src[0], t.Src[1]
	if sx == nil || c == nil || sx.Type != quant.F32 || c.Type != quant.F32 || t.Type != quant.F32 {
		return false
	}
	nc, nr := c.Ne[0], c.Ne[1]
	return sx.Nb[0] == 4 && sx.Nb[1] == uint64(sx.Ne[0])*4 && c.Nb[0] == 4 && c.Nb[1] == uint64(nc)*4 &&
		c.Ne[2] == 1 && c.Ne[3] == 1 && sx.Ne[1] == nr && sx.Ne[3] == 1 && t.IsContiguous() &&
		t.Ne == [graph.MaxDims]int64{nr, sx.Ne[0] - nc + 1, sx.Ne[2], 1}
}

// computeSSMConv slides each channel's d_conv-wide kernel over its
// sequence, summing in float32 in order as ggml does (not in double).
func computeSSMConv(p *Params, t *graph.Tensor) {
	sx, c := t.Src[0], t.Src[1]
	nc, nr := c.Ne[0], c.Ne[1]
	lo, hi := p.Rows(nr)
	if lo >= hi {
		return
	}
	w := make([]float32, (hi-lo)*nc)
	mustDequantize(w, quant.F32, c.Data[offset(c, 0, lo, 0, 0):])
	win := make([]float32, nc)
	for i3 := range t.Ne[2] {
		for i2 := range t.Ne[1] {
			for i1 := lo; i1 < hi; i1++ {
				mustDequantize(win, quant.F32, sx.Data[offset(sx, i2, i1, i3, 0):])
				var sum float32
				for i0, x := range win {
					sum += float32(x * w[(i1-lo)*nc+int64(i0)])
				}
				setF(quant.F32, t.Data, offset(t, i1, i2, i3, 0), sum)
			}
		}
	}
}

// supportsSolveTri: contiguous F32 A [n, n, ...] and B [k, n, ...] with the
// same batch dimensions, as ggml_solve_tri builds them.
func supportsSolveTri(t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return a != nil && b != nil && a.Type == quant.F32 && b.Type == quant.F32 && t.Type == quant.F32 &&
		a.IsContiguous() && b.IsContiguous() && t.IsContiguous() && t.Ne == b.Ne &&
		a.Ne[0] == a.Ne[1] && a.Ne[1] == b.Ne[1] && a.Ne[2] == b.Ne[2] && a.Ne[3] == b.Ne[3]
}

// computeSolveTri solves the lower-triangular systems column by column by
// forward substitution; the columns of all batches are split over threads.
func computeSolveTri(p *Params, t *graph.Tensor) {
	a, b := t.Src[0], t.Src[1]
	k, n := b.Ne[0], b.Ne[1]
	nb2 := a.Ne[2]
	at := func(tt *graph.Tensor, i0, i1, i2, i3 int64) float32 {
		return getF(quant.F32, tt.Data, offset(tt, i0, i1, i2, i3))
	}
	x := make([]float32, n)
	lo, hi := p.Rows(nb2 * a.Ne[3] * k)
	for ir := lo; ir < hi; ir++ {
		col, i2, i3 := ir%k, ir/k%nb2, ir/(k*nb2)
		for i := range n {
			var sum float32
			for j := range i {
				sum += float32(at(a, j, i, i2, i3) * x[j])
			}
			x[i] = (at(b, col, i, i2, i3) - sum) / at(a, i, i, i2, i3)
			setF(quant.F32, t.Data, offset(t, col, i, i2, i3), x[i])
		}
	}
}

// supportsGatedDeltaNet: F32 throughout, q, k and v with contiguous rows
// (any other strides), g, beta and state contiguous, shapes as
// ggml_gated_delta_net builds them; q and k heads repeat over v's, their
// sequences broadcast when they divide v's.
func supportsGatedDeltaNet(t *graph.Tensor) bool {
	q, k, v, g, beta, state := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5]
	for _, s := range []*graph.Tensor{q, k, v, g, beta, state} {
		if s == nil || s.Type != quant.F32 {
			return false
		}
	}
	if t.Type != quant.F32 || !t.IsContiguous() || q.Nb[0] != 4 || k.Nb[0] != 4 || v.Nb[0] != 4 ||
		!g.IsContiguous() || !beta.IsContiguous() || !state.IsContiguous() {
		return false
	}
	sv, h, nt, ns := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	kk := int64(ops.GatedDeltaNetParamsOf(t.Params).K)
	for _, qk := range []*graph.Tensor{q, k} {
		if qk.Ne[0] != sv || qk.Ne[2] != nt || qk.Ne[1] == 0 || qk.Ne[3] == 0 || ns%qk.Ne[3] != 0 {
			return false
		}
	}
	return (g.Ne[0] == 1 || g.Ne[0] == sv) && g.Ne[1] == h && g.Ne[2] == nt && g.Ne[3] == ns &&
		beta.Ne == [graph.MaxDims]int64{1, h, nt, ns} && state.Ne == [graph.MaxDims]int64{sv, sv, h, ns} &&
		kk >= 1 && t.Ne == [graph.MaxDims]int64{sv * h, nt*ns + kk*sv*ns, 1, 1}
}

// computeGatedDeltaNet runs the recurrence of each (head, sequence) pair
// over its tokens. The state is kept transposed as ggml keeps it: row j
// holds column j of S. Per token: S *= exp(g) (per row of S for KDA),
// delta = (v - Sᵀk)·beta, S += k·deltaᵀ, out = Sᵀq / sqrt(S_v).
func computeGatedDeltaNet(p *Params, t *graph.Tensor) {
	q, k, v, g, beta, state := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5]
	sv, h, nt, ns := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	kSlots := int64(ops.GatedDeltaNetParamsOf(t.Params).K)
	kda := g.Ne[0] == sv
	scale := 1 / float32(math.Sqrt(float64(sv)))

	// The result: every token's output [S_v, H, T, B], then K state
	// snapshots of [S_v, S_v, H, B] each, the newest first.
	attnBytes := uint64(sv*h*nt*ns) * 4
	snapBytes := uint64(sv*sv*h*ns) * 4

	s := make([]float32, sv*sv)
	qv, kv, vv := make([]float32, sv), make([]float32, sv), make([]float32, sv)
	gv, delta, out := make([]float32, g.Ne[0]), make([]float32, sv), make([]float32, sv)
	lo, hi := p.Rows(h * ns)
	for ir := lo; ir < hi; ir++ {
		iv1, iv3 := ir%h, ir/h
		iq1, iq3 := iv1%q.Ne[1], iv3/(ns/q.Ne[3])
		ik1, ik3 := iv1%k.Ne[1], iv3/(ns/k.Ne[3])
		stateOff := uint64(iv3)*state.Nb[3] + uint64(iv1*sv*sv)*4
		mustDequantize(s, quant.F32, state.Data[stateOff:])
		snapOff := uint64(iv3*h+iv1) * uint64(sv*sv) * 4
		for tok := range nt {
			mustDequantize(qv, quant.F32, q.Data[offset(q, 0, iq1, tok, iq3):])
			mustDequantize(kv, quant.F32, k.Data[offset(k, 0, ik1, tok, ik3):])
			mustDequantize(vv, quant.F32, v.Data[offset(v, 0, iv1, tok, iv3):])
			mustDequantize(gv, quant.F32, g.Data[offset(g, 0, iv1, tok, iv3):])
			b := getF(quant.F32, beta.Data, offset(beta, 0, iv1, tok, iv3))

			if kda {
				for i, x := range gv {
					delta[i] = expf(x)
				}
				for j := range sv {
					row := s[j*sv : (j+1)*sv]
					for i := range row {
						row[i] *= delta[i]
					}
				}
			} else {
				scaleRow(s, expf(gv[0]))
			}
			for j := range sv {
				delta[j] = (vv[j] - attnDot(s[j*sv:(j+1)*sv], kv)) * b
			}
			for j := range sv {
				row := s[j*sv : (j+1)*sv]
				for i, x := range kv {
					row[i] += float32(x * delta[j])
				}
			}
			for j := range sv {
				out[j] = attnDot(s[j*sv:(j+1)*sv], qv) * scale
			}
			attnStoreF32(t.Data, uint64((iv3*nt+tok)*h+iv1)*uint64(sv)*4, out)

			if slot := nt - 1 - tok; kSlots > 1 && slot < kSlots {
				attnStoreF32(t.Data, attnBytes+uint64(slot)*snapBytes+snapOff, s)
			}
		}
		if kSlots == 1 {
			attnStoreF32(t.Data, attnBytes+snapOff, s)
		}
	}
}
