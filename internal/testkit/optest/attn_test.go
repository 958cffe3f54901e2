package optest

import (
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

var attnOps = []string{"ROPE", "ROPE_BACK", "FLASH_ATTN_EXT", "SSM_CONV", "GATED_DELTA_NET", "SOLVE_TRI"}

// attnTestCases are the family's quick cases, or all of them with
// OPTEST_FULL=1.
func attnTestCases() []Case { return Cases(testFull(), attnOps) }

// TestAttnCaseNames checks the generated names against test-backend-ops'
// format for a few cases copied from cpu_support.csv.
func TestAttnCaseNames(t *testing.T) {
	want := []string{
		"ROPE(type=f32,ne_a=[128,32,2,1],n_dims=128,mode=0,n_ctx=512,fs=1.000000,ef=0.000000,af=1.000000,ff=0,v=0,inplace=0,n_offs=0)",
		"ROPE_BACK(type=f16,ne_a=[128,12,2,1],n_dims=24,mode=8,n_ctx=512,fs=1.424500,ef=0.746500,af=1.424500,ff=1,v=0,inplace=0,n_offs=32)",
		"FLASH_ATTN_EXT(hsk=576,hsv=512,nh=1,nr23=[20,1],kv=512,nb=75,mask=1,sinks=1,max_bias=0.000000,logit_softcap=0.000000,prec=f32,type_K=f16,type_V=f16,permute=[0,2,1,3],kv_view=1,v_is_view_of_k=1)",
		"FLASH_ATTN_EXT(hsk=128,hsv=64,nh=4,nr23=[1,1],kv=128,nb=2,mask=1,sinks=0,max_bias=0.000000,logit_softcap=0.000000,prec=f32,type_K=q1_0,type_V=q4_0,permute=[0,1,2,3],kv_view=1,v_is_view_of_k=0)",
		"SSM_CONV(type=f32,ne_a=[66,1024,4,1],ne_b=[3,1024,1,1])",
		"GATED_DELTA_NET(type=f32,head_count=8,head_size=32,n_seq_tokens=4,n_seqs=2,v_repeat=2,permuted=0,kda=1,K=4)",
		"SOLVE_TRI(type=f32,ne_lhs=[79,79,5,3],ne_rhs=[417,79,5,3])",
	}
	names := map[string]bool{}
	for _, c := range Cases(true, attnOps) {
		names[c.Name] = true
	}
	all := map[string]bool{}
	for _, f := range flashAttnAll() {
		all[f.name()] = true
	}
	for _, w := range want {
		require.True(t, names[w] || all[w], "missing %s", w)
		op, desc, _ := strings.Cut(strings.TrimSuffix(w, ")"), "(")
		c, err := FromDesc(op, desc)
		require.NoError(t, err, w)
		require.Equal(t, w, c.Name)
	}
}

// TestAttnNaive compares the family's cases with attnNaive, an independent
// float64 implementation of the operations' definitions.
func TestAttnNaive(t *testing.T) {
	e := cpuBackend(t, 2)
	for _, c := range attnTestCases() {
		r := RunBackend(c, e, attnNaive{}, 3)
		require.Equal(t, Passed, r.Status, "%s: %s", c.Name, r.Detail)
	}
}

// attnNaive computes the family's operations from their definitions in
// float64: angles from powers rather than ggml's running products, plain
// softmax attention over the unquantized queries, the delta rule on an
// untransposed state. It checks our kernels before the ggml mirror can.
type attnNaive struct{}

func (attnNaive) Name() string { return "naive" }

func (attnNaive) Supports(g *graph.Graph) error {
	for _, n := range g.Nodes {
		switch n.Op {
		case ops.View, ops.Reshape, ops.Permute, ops.Transpose, ops.Rope, ops.RopeBack,
			ops.FlashAttnExt, ops.SSMConv, ops.SolveTri, ops.GatedDeltaNet:
		default:
			return fmt.Errorf("naive: %s", n.Op)
		}
	}
	return nil
}

func (attnNaive) Compute(g *graph.Graph) error {
	for _, n := range g.Nodes {
		var out []float64
		switch n.Op {
		case ops.Rope, ops.RopeBack:
			out = naiveRope(n)
		case ops.FlashAttnExt:
			out = naiveFlashAttn(n)
		case ops.SSMConv:
			out = naiveSSMConv(n)
		case ops.SolveTri:
			out = naiveSolveTri(n)
		case ops.GatedDeltaNet:
			out = naiveGatedDeltaNet(n)
		default:
			continue
		}
		naiveStore(n, out)
	}
	return nil
}

// naiveTensor is a tensor's values in element order, indexed by (i0..i3).
type naiveTensor struct {
	ne [4]int64
	v  []float32
}

func naiveLoad(t *graph.Tensor) naiveTensor {
	v, err := Floats(t)
	if err != nil {
		panic(err)
	}
	return naiveTensor{t.Ne, v}
}

func (n naiveTensor) at(i0, i1, i2, i3 int64) float64 {
	return float64(n.v[((i3*n.ne[2]+i2)*n.ne[1]+i1)*n.ne[0]+i0])
}

// naiveStore writes values in element order into t, whatever its strides.
func naiveStore(t *graph.Tensor, v []float64) {
	i := 0
	for i3 := range t.Ne[3] {
		for i2 := range t.Ne[2] {
			for i1 := range t.Ne[1] {
				for i0 := range t.Ne[0] {
					off := uint64(i0)*t.Nb[0] + uint64(i1)*t.Nb[1] + uint64(i2)*t.Nb[2] + uint64(i3)*t.Nb[3]
					switch t.Type {
					case quant.F32:
						binary.LittleEndian.PutUint32(t.Data[off:], math.Float32bits(float32(v[i])))
					case quant.F16:
						binary.LittleEndian.PutUint16(t.Data[off:], quant.FP32ToFP16(float32(v[i])))
					default:
						panic("naive: output type " + t.Type.String())
					}
					i++
				}
			}
		}
	}
}

func naiveRope(t *graph.Tensor) []float64 {
	a := naiveLoad(t.Src[0])
	pos := naiveLoad(t.Src[1])
	p := ops.RopeParamsOf(t.Params)
	var freq naiveTensor
	if t.Src[2] != nil {
		freq = naiveLoad(t.Src[2])
	}
	nd, offs, ne := int64(p.NDims), int64(p.NOffs), a.ne
	// YaRN's correction range.
	corr := func(beta float32) float64 {
		return float64(nd) * math.Log(float64(p.NCtxOrig)/(float64(beta)*2*math.Pi)) / (2 * math.Log(float64(p.FreqBase)))
	}
	low := math.Max(0, math.Floor(corr(p.BetaFast)))
	high := math.Min(float64(nd-1), math.Ceil(corr(p.BetaSlow)))
	s := p.Sections
	nPairs := nd / 2
	if p.Mode == ops.RopeVision {
		nPairs = ne[0] / 2
	}
	out := make([]float64, len(a.v))
	for i := range a.v {
		out[i] = float64(a.v[i])
	}
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			for pair := range nPairs {
				// The position stream and frequency index of this pair.
				stream, k, sect := int64(0), pair, pair
				if p.Mode.UsesSections() {
					sect = pair % int64(s[0]+s[1]+s[2]+s[3])
				}
				switch p.Mode {
				case ops.RopeMRope:
					switch {
					case sect < int64(s[0]):
					case sect < int64(s[0]+s[1]):
						stream = 1
					case sect < int64(s[0]+s[1]+s[2]):
						stream = 2
					default:
						stream = 3
					}
				case ops.RopeIMRope:
					switch {
					case sect%3 == 1 && sect < 3*int64(s[1]):
						stream = 1
					case sect%3 == 2 && sect < 3*int64(s[2]):
						stream = 2
					case sect%3 == 0 && sect < 3*int64(s[0]):
					default:
						stream = 3
					}
				case ops.RopeVision:
					if k = sect; sect >= int64(s[0]) {
						stream, k = 1, sect-int64(s[0])
					}
				}
				ff := 1.0
				if t.Src[2] != nil {
					ff = freq.at(pair, 0, 0, 0)
				}
				extrap := pos.at(i2+stream*ne[2], 0, 0, 0) * math.Pow(float64(p.FreqBase), -2*float64(k)/float64(nd)) / ff
				theta, mscale := float64(p.FreqScale)*extrap, float64(p.AttnFactor)
				if p.ExtFactor != 0 {
					y := (float64(pair) - low) / math.Max(0.001, high-low)
					mix := (1 - math.Min(1, math.Max(0, y))) * float64(p.ExtFactor)
					theta = theta*(1-mix) + extrap*mix
					mscale *= 1 + 0.1*math.Log(1/float64(p.FreqScale))
				}
				cos, sin := math.Cos(theta)*mscale, math.Sin(theta)*mscale
				if t.Op == ops.RopeBack {
					sin = -sin
				}
				var ia, ib int64
				switch p.Mode {
				case ops.RopeNormal:
					ia, ib = offs+2*pair, offs+2*pair+1
				case ops.RopeVision:
					ia, ib = pair, pair+nd
				default:
					ia, ib = offs+pair, offs+pair+nd/2
				}
				for i1 := range ne[1] {
					x0, x1 := a.at(ia, i1, i2, i3), a.at(ib, i1, i2, i3)
					row := ((i3*ne[2]+i2)*ne[1] + i1) * ne[0]
					out[row+ia] = x0*cos - x1*sin
					out[row+ib] = x0*sin + x1*cos
				}
			}
		}
	}
	return out
}

func naiveFlashAttn(t *graph.Tensor) []float64 {
	q, k, v := naiveLoad(t.Src[0]), naiveLoad(t.Src[1]), naiveLoad(t.Src[2])
	fp := ops.FlashAttnParamsOf(t.Params)
	var mask, sinks naiveTensor
	hasMask, hasSinks := t.Src[3] != nil, t.Src[4] != nil
	if hasMask {
		mask = naiveLoad(t.Src[3])
	}
	if hasSinks {
		sinks = naiveLoad(t.Src[4])
	}
	dk, dv, nq, nh, nkv := q.ne[0], v.ne[0], q.ne[1], q.ne[2], k.ne[1]
	nLog2 := int64(1) << int64(math.Floor(math.Log2(float64(nh))))
	out := make([]float64, t.NElements())
	score := make([]float64, nkv)
	for i3 := range q.ne[3] {
		for h := range nh {
			slope := 1.0
			if fp.MaxBias > 0 {
				if h < nLog2 {
					slope = math.Pow(math.Pow(2, -float64(fp.MaxBias)/float64(nLog2)), float64(h+1))
				} else {
					slope = math.Pow(math.Pow(2, -float64(fp.MaxBias)/2/float64(nLog2)), float64(2*(h-nLog2)+1))
				}
			}
			kh, kb := h/(nh/k.ne[2]), i3/(q.ne[3]/k.ne[3])
			vh, vb := h/(nh/v.ne[2]), i3/(q.ne[3]/v.ne[3])
			for i1 := range nq {
				m := math.Inf(-1)
				for j := range nkv {
					var s float64
					for d := range dk {
						s += q.at(d, i1, h, i3) * k.at(d, j, kh, kb)
					}
					s *= float64(fp.Scale)
					if c := float64(fp.LogitSoftcap); c != 0 {
						s = c * math.Tanh(s/c)
					}
					if hasMask {
						s += slope * mask.at(j, i1, h%mask.ne[2], i3%mask.ne[3])
					}
					score[j] = s
					m = math.Max(m, s)
				}
				if hasSinks {
					m = math.Max(m, sinks.at(h, 0, 0, 0))
				}
				var sum float64
				acc := make([]float64, dv)
				for j := range nkv {
					if math.IsInf(score[j], -1) {
						continue
					}
					w := math.Exp(score[j] - m)
					sum += w
					for d := range dv {
						acc[d] += w * v.at(d, j, vh, vb)
					}
				}
				if hasSinks {
					sum += math.Exp(sinks.at(h, 0, 0, 0) - m)
				}
				base := ((i3*nq+i1)*nh + h) * dv
				for d := range dv {
					if sum != 0 {
						out[base+d] = acc[d] / sum
					}
				}
			}
		}
	}
	return out
}

func naiveSSMConv(t *graph.Tensor) []float64 {
	sx, w := naiveLoad(t.Src[0]), naiveLoad(t.Src[1])
	out := make([]float64, t.NElements())
	i := 0
	for s := range t.Ne[2] {
		for tok := range t.Ne[1] {
			for ch := range t.Ne[0] {
				for j := range w.ne[0] {
					out[i] += sx.at(tok+j, ch, s, 0) * w.at(j, ch, 0, 0)
				}
				i++
			}
		}
	}
	return out
}

func naiveSolveTri(t *graph.Tensor) []float64 {
	a, b := naiveLoad(t.Src[0]), naiveLoad(t.Src[1])
	k, n := b.ne[0], b.ne[1]
	out := make([]float64, t.NElements())
	for i3 := range b.ne[3] {
		for i2 := range b.ne[2] {
			base := (i3*b.ne[2] + i2) * n * k
			for col := range k {
				for i := range n {
					x := b.at(col, i, i2, i3)
					for j := range i {
						x -= a.at(j, i, i2, i3) * out[base+j*k+col]
					}
					out[base+i*k+col] = x / a.at(i, i, i2, i3)
				}
			}
		}
	}
	return out
}

func naiveGatedDeltaNet(t *graph.Tensor) []float64 {
	q, k, v := naiveLoad(t.Src[0]), naiveLoad(t.Src[1]), naiveLoad(t.Src[2])
	g, beta, state := naiveLoad(t.Src[3]), naiveLoad(t.Src[4]), naiveLoad(t.Src[5])
	n, h, nt, ns := v.ne[0], v.ne[1], v.ne[2], v.ne[3]
	slots := int64(ops.GatedDeltaNetParamsOf(t.Params).K)
	out := make([]float64, t.NElements())
	attn := n * h * nt * ns
	for seq := range ns {
		for head := range h {
			// st[i][j]: key dimension i, value dimension j.
			st := make([][]float64, n)
			for i := range n {
				st[i] = make([]float64, n)
				for j := range n {
					st[i][j] = state.at(i, j, head, seq)
				}
			}
			qh, kh := head%q.ne[1], head%k.ne[1]
			qs, ks := seq/(ns/q.ne[3]), seq/(ns/k.ne[3])
			save := func(slot int64) {
				base := attn + slot*n*n*h*ns + (seq*h+head)*n*n
				for i := range n {
					for j := range n {
						out[base+j*n+i] = st[i][j]
					}
				}
			}
			for tok := range nt {
				for i := range n {
					decay := math.Exp(g.at(min(i, g.ne[0]-1), head, tok, seq))
					for j := range n {
						st[i][j] *= decay
					}
				}
				b := beta.at(0, head, tok, seq)
				for j := range n {
					var pred float64
					for i := range n {
						pred += st[i][j] * k.at(i, kh, tok, ks)
					}
					delta := (v.at(j, head, tok, seq) - pred) * b
					for i := range n {
						st[i][j] += k.at(i, kh, tok, ks) * delta
					}
				}
				for j := range n {
					var o float64
					for i := range n {
						o += st[i][j] * q.at(i, qh, tok, qs)
					}
					out[((seq*nt+tok)*h+head)*n+j] = o / math.Sqrt(float64(n))
				}
				if slot := nt - 1 - tok; slots > 1 && slot < slots {
					save(slot)
				}
			}
			if slots == 1 {
				save(0)
			}
		}
	}
	return out
}

// TestAttnCasesMatchCSV checks that our generators reproduce
// test-backend-ops' case lists, as cpu_support.csv records them: the full
// lists exactly (but for our YaRN cases), FLASH_ATTN_EXT's complete list,
// of which the full run takes a sample.
func TestAttnCasesMatchCSV(t *testing.T) {
	f, err := os.Open(filepath.Join(reftest.OracleDir(t), "cpu_support.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	want := map[string]bool{}
	for _, op := range attnOps {
		want[op] = true
	}
	listed := map[string]bool{}
	for _, row := range rows[1:] {
		if op := row[col["op_name"]]; want[op] && row[col["test_mode"]] == "support" {
			listed[op+"("+row[col["op_params"]]+")"] = true
		}
	}
	ours := map[string]bool{}
	for _, c := range Cases(true, attnOps) {
		if OpNameOf(c.Name) != "FLASH_ATTN_EXT" && !strings.Contains(c.Name, "n_ctx_orig") {
			ours[c.Name] = true
		}
	}
	for _, f := range flashAttnAll() {
		ours[f.name()] = true
	}
	require.Len(t, listed, 466+404+5158+45+36+24)
	for name := range listed {
		require.True(t, ours[name], "not generated: %s", name)
	}
	for name := range ours {
		require.True(t, listed[name], "not in cpu_support.csv: %s", name)
	}
}

// TestAttnBuilders checks the builders' results (type, shape, sources,
// op_params layout) and that every shape or type ggml asserts on is an
// error recorded on the Context, not a panic.
func TestAttnBuilders(t *testing.T) {
	type build func(c *graph.Context) *graph.Tensor
	f32, f16, i32 := quant.F32, quant.F16, quant.I32
	newT := func(c *graph.Context, typ quant.Type, ne ...int64) *graph.Tensor { return c.NewTensor(typ, ne...) }
	rp := ops.RopeParams{NDims: 8, Mode: ops.RopeNeox, NCtxOrig: 4096, FreqBase: 1e6, FreqScale: 0.5,
		ExtFactor: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1, Sections: [4]int32{1, 2, 1, 0}, NOffs: 4}

	t.Run("valid", func(t *testing.T) {
		c := graph.NewContext(graph.ContextOptions{})
		a := newT(c, f16, 16, 3, 5)
		pos := newT(c, i32, 5)
		freq := newT(c, f32, 4)
		r := c.RopeExt(a, pos, freq, rp)
		require.NoError(t, c.Err())
		require.Equal(t, ops.Rope, r.Op)
		require.Equal(t, f16, r.Type)
		require.Equal(t, a.Ne, r.Ne)
		require.Equal(t, []*graph.Tensor{a, pos, freq}, r.Src[:3])
		got := ops.RopeParamsOf(r.Params)
		want := rp
		want.Sections, want.NOffs = [4]int32{}, 0 // only RopeMulti keeps sections; offsets come from RopeSetOffset
		require.Equal(t, want, got)
		require.Equal(t, int32(math.Float32bits(1e6)), r.Params.I32(5))
		require.Equal(t, int32(4), c.RopeSetOffset(r, 4).Params.I32(15))

		m := c.RopeMultiInplace(a, newT(c, i32, 20), nil, ops.RopeParams{NDims: 8, Mode: ops.RopeMRope, FreqBase: 1e4, FreqScale: 1, AttnFactor: 1, Sections: [4]int32{2, 1, 1, 0}})
		require.NoError(t, c.Err())
		require.Equal(t, a, m.ViewSrc)
		require.Equal(t, [4]int32{2, 1, 1, 0}, ops.RopeParamsOf(m.Params).Sections)
		require.Equal(t, ops.RopeBack, c.RopeExtBack(a, pos, nil, rp).Op)

		q := newT(c, f32, 64, 7, 8, 2)
		k := newT(c, f16, 64, 33, 2, 2)
		v := newT(c, f16, 48, 33, 2, 2)
		mask := newT(c, f16, 33, 7, 1, 2)
		fa := c.FlashAttnExt(q, k, v, mask, 0.125, 8, 30)
		fa = c.FlashAttnExtAddSinks(fa, newT(c, f32, 8))
		fa = c.FlashAttnExtSetPrec(fa, ops.PrecF32)
		require.NoError(t, c.Err())
		require.Equal(t, [4]int64{48, 8, 7, 2}, fa.Ne)
		require.Equal(t, f32, fa.Type)
		require.Equal(t, ops.FlashAttnParams{Scale: 0.125, MaxBias: 8, LogitSoftcap: 30, Prec: 10}, ops.FlashAttnParamsOf(fa.Params))
		require.NotNil(t, fa.Src[4])
		require.Nil(t, c.FlashAttnExtAddSinks(fa, nil).Src[4])

		conv := c.SSMConv(newT(c, f32, 7, 16, 3), newT(c, f32, 4, 16))
		require.Equal(t, [4]int64{16, 4, 3, 1}, conv.Ne)
		st := c.SolveTri(newT(c, f32, 5, 5, 2), newT(c, f32, 3, 5, 2), true, true, false)
		require.Equal(t, [4]int64{3, 5, 2, 1}, st.Ne)
		gd := c.GatedDeltaNet(newT(c, f32, 8, 2, 3, 2), newT(c, f32, 8, 2, 3, 2), newT(c, f32, 8, 4, 3, 2),
			newT(c, f32, 8, 4, 3, 2), newT(c, f32, 1, 4, 3, 2), newT(c, f32, 8, 8, 4, 2), 3)
		require.NoError(t, c.Err())
		require.Equal(t, [4]int64{32, 3*2 + 3*8*2, 1, 1}, gd.Ne)
		require.Equal(t, int32(3), ops.GatedDeltaNetParamsOf(gd.Params).K)
	})

	bad := map[string]build{
		"rope odd mode":       func(c *graph.Context) *graph.Tensor { return c.Rope(newT(c, f32, 8, 2, 3), newT(c, i32, 3), 8, 1) },
		"rope F32 positions":  func(c *graph.Context) *graph.Tensor { return c.Rope(newT(c, f32, 8, 2, 3), newT(c, f32, 3), 8, 0) },
		"rope 2-D positions":  func(c *graph.Context) *graph.Tensor { return c.Rope(newT(c, f32, 8, 2, 3), newT(c, i32, 3, 2), 8, 0) },
		"rope position count": func(c *graph.Context) *graph.Tensor { return c.Rope(newT(c, f32, 8, 2, 3), newT(c, i32, 4), 8, 0) },
		"mrope position count": func(c *graph.Context) *graph.Tensor {
			return c.Rope(newT(c, f32, 8, 2, 3), newT(c, i32, 3), 8, ops.RopeMRope)
		},
		"rope F16 freq": func(c *graph.Context) *graph.Tensor {
			return c.RopeExt(newT(c, f32, 8, 2, 3), newT(c, i32, 3), newT(c, f16, 4), rp)
		},
		"rope short freq": func(c *graph.Context) *graph.Tensor {
			return c.RopeExt(newT(c, f32, 8, 2, 3), newT(c, i32, 3), newT(c, f32, 3), rp)
		},
		"rope nil positions": func(c *graph.Context) *graph.Tensor { return c.Rope(newT(c, f32, 8, 2, 3), nil, 8, 0) },
		"offset of non-rope": func(c *graph.Context) *graph.Tensor { return c.RopeSetOffset(newT(c, f32, 8), 2) },
		"negative offset": func(c *graph.Context) *graph.Tensor {
			return c.RopeSetOffset(c.Rope(newT(c, f32, 8, 2, 3), newT(c, i32, 3), 4, 0), -2)
		},
		"vision offset": func(c *graph.Context) *graph.Tensor {
			p := ops.RopeParams{NDims: 4, Mode: ops.RopeVision, FreqBase: 1e4, FreqScale: 1, AttnFactor: 1, Sections: [4]int32{1, 1, 0, 0}}
			return c.RopeSetOffset(c.RopeMulti(newT(c, f32, 8, 2, 3), newT(c, i32, 12), nil, p), 2)
		},
		"fa head size": func(c *graph.Context) *graph.Tensor {
			return c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 32, 9, 4), newT(c, f16, 32, 9, 4), nil, 1, 0, 0)
		},
		"fa heads": func(c *graph.Context) *graph.Tensor {
			return c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 3), newT(c, f16, 64, 9, 3), nil, 1, 0, 0)
		},
		"fa batch": func(c *graph.Context) *graph.Tensor {
			return c.FlashAttnExt(newT(c, f32, 64, 4, 4, 2), newT(c, f16, 64, 9, 4, 2), newT(c, f16, 64, 9, 4, 1), nil, 1, 0, 0)
		},
		"fa no kv heads": func(c *graph.Context) *graph.Tensor {
			return c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 0), newT(c, f16, 64, 9, 0), nil, 1, 0, 0)
		},
		"fa empty mask": func(c *graph.Context) *graph.Tensor {
			return c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 9, 4, 0), 1, 0, 0)
		},
		"fa F32 mask": func(c *graph.Context) *graph.Tensor {
			return c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 64, 9, 4), newT(c, f32, 9, 4), 1, 0, 0)
		},
		"fa mask heads": func(c *graph.Context) *graph.Tensor {
			return c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 9, 4, 3), 1, 0, 0)
		},
		"fa permuted mask": func(c *graph.Context) *graph.Tensor {
			m := c.Permute(newT(c, f16, 4, 9), 1, 0, 2, 3)
			return c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 64, 9, 4), m, 1, 0, 0)
		},
		"fa alibi without mask": func(c *graph.Context) *graph.Tensor {
			return c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 64, 9, 4), nil, 1, 8, 0)
		},
		"sinks count": func(c *graph.Context) *graph.Tensor {
			fa := c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 64, 9, 4), nil, 1, 0, 0)
			return c.FlashAttnExtAddSinks(fa, newT(c, f32, 3))
		},
		"sinks F16": func(c *graph.Context) *graph.Tensor {
			fa := c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 64, 9, 4), nil, 1, 0, 0)
			return c.FlashAttnExtAddSinks(fa, newT(c, f16, 4))
		},
		"sinks twice": func(c *graph.Context) *graph.Tensor {
			fa := c.FlashAttnExt(newT(c, f32, 64, 4, 4), newT(c, f16, 64, 9, 4), newT(c, f16, 64, 9, 4), nil, 1, 0, 0)
			return c.FlashAttnExtAddSinks(c.FlashAttnExtAddSinks(fa, newT(c, f32, 4)), newT(c, f32, 4))
		},
		"sinks of non-fa": func(c *graph.Context) *graph.Tensor { return c.FlashAttnExtAddSinks(newT(c, f32, 4), newT(c, f32, 4)) },
		"prec of non-fa":  func(c *graph.Context) *graph.Tensor { return c.FlashAttnExtSetPrec(newT(c, f32, 4), 10) },
		"ssm 4-D sx":      func(c *graph.Context) *graph.Tensor { return c.SSMConv(newT(c, f32, 7, 16, 3, 2), newT(c, f32, 4, 16)) },
		"ssm 3-D c":       func(c *graph.Context) *graph.Tensor { return c.SSMConv(newT(c, f32, 7, 16, 3), newT(c, f32, 4, 16, 2)) },
		"ssm channels":    func(c *graph.Context) *graph.Tensor { return c.SSMConv(newT(c, f32, 7, 16, 3), newT(c, f32, 4, 8)) },
		"ssm short":       func(c *graph.Context) *graph.Tensor { return c.SSMConv(newT(c, f32, 2, 16, 3), newT(c, f32, 4, 16)) },
		"tri F16": func(c *graph.Context) *graph.Tensor {
			return c.SolveTri(newT(c, f16, 5, 5), newT(c, f32, 3, 5), true, true, false)
		},
		"tri not square": func(c *graph.Context) *graph.Tensor {
			return c.SolveTri(newT(c, f32, 5, 4), newT(c, f32, 3, 4), true, true, false)
		},
		"tri rows": func(c *graph.Context) *graph.Tensor {
			return c.SolveTri(newT(c, f32, 5, 5), newT(c, f32, 3, 4), true, true, false)
		},
		"tri batch": func(c *graph.Context) *graph.Tensor {
			return c.SolveTri(newT(c, f32, 5, 5, 2), newT(c, f32, 3, 5, 3), true, true, false)
		},
		"tri upper": func(c *graph.Context) *graph.Tensor {
			return c.SolveTri(newT(c, f32, 5, 5), newT(c, f32, 3, 5), true, false, false)
		},
		"tri right": func(c *graph.Context) *graph.Tensor {
			return c.SolveTri(newT(c, f32, 5, 5), newT(c, f32, 3, 5), false, true, false)
		},
		"tri unit": func(c *graph.Context) *graph.Tensor {
			return c.SolveTri(newT(c, f32, 5, 5), newT(c, f32, 3, 5), true, true, true)
		},
		"tri transposed b": func(c *graph.Context) *graph.Tensor {
			return c.SolveTri(newT(c, f32, 5, 5), c.Transpose(newT(c, f32, 5, 3)), true, true, false)
		},
	}
	gdn := func(tweak func(ts []*graph.Tensor, c *graph.Context) []*graph.Tensor, k int64) build {
		return func(c *graph.Context) *graph.Tensor {
			ts := []*graph.Tensor{newT(c, f32, 8, 2, 3, 2), newT(c, f32, 8, 2, 3, 2), newT(c, f32, 8, 4, 3, 2),
				newT(c, f32, 1, 4, 3, 2), newT(c, f32, 1, 4, 3, 2), newT(c, f32, 8, 8, 4, 2)}
			ts = tweak(ts, c)
			return c.GatedDeltaNet(ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], k)
		}
	}
	keep := func(ts []*graph.Tensor, _ *graph.Context) []*graph.Tensor { return ts }
	set := func(i int, typ quant.Type, ne ...int64) func([]*graph.Tensor, *graph.Context) []*graph.Tensor {
		return func(ts []*graph.Tensor, c *graph.Context) []*graph.Tensor { ts[i] = newT(c, typ, ne...); return ts }
	}
	bad["gdn K=0"] = gdn(keep, 0)
	bad["gdn F16 q"] = gdn(set(0, f16, 8, 2, 3, 2), 1)
	bad["gdn gate width"] = gdn(set(3, f32, 3, 4, 3, 2), 1)
	bad["gdn beta width"] = gdn(set(4, f32, 2, 4, 3, 2), 1)
	bad["gdn state shape"] = gdn(set(5, f32, 8, 8, 2, 2), 1)
	bad["gdn nil state"] = gdn(func(ts []*graph.Tensor, _ *graph.Context) []*graph.Tensor { ts[5] = nil; return ts }, 1)
	bad["gdn transposed q"] = gdn(func(ts []*graph.Tensor, c *graph.Context) []*graph.Tensor {
		ts[0] = c.Transpose(newT(c, f32, 2, 8, 3, 2))
		return ts
	}, 1)
	bad["gdn permuted gate"] = gdn(func(ts []*graph.Tensor, c *graph.Context) []*graph.Tensor {
		ts[3] = c.Permute(newT(c, f32, 1, 3, 4, 2), 0, 2, 1, 3)
		return ts
	}, 1)

	for name, fn := range bad {
		t.Run(name, func(t *testing.T) {
			c := graph.NewContext(graph.ContextOptions{})
			var out *graph.Tensor
			require.NotPanics(t, func() { out = fn(c) })
			require.Nil(t, out)
			require.Error(t, c.Err())
		})
	}
}

// TestAttnParamsRoundTrip checks the typed op_params against ggml's slot
// layout and back.
func TestAttnParamsRoundTrip(t *testing.T) {
	rp := ops.RopeParams{NDims: 64, Mode: ops.RopeIMRope, NCtxOrig: 4096, FreqBase: 1e6, FreqScale: 0.25,
		ExtFactor: 1, AttnFactor: 1.5, BetaFast: 32, BetaSlow: 1, Sections: [4]int32{11, 11, 10, 0}, NOffs: 8}
	q := rp.Params()
	require.Equal(t, int32(0), q.I32(0)) // n_past
	require.Equal(t, int32(64), q.I32(1))
	require.Equal(t, int32(40), q.I32(2))
	require.Equal(t, int32(0), q.I32(3)) // n_ctx
	require.Equal(t, int32(4096), q.I32(4))
	require.Equal(t, float32(1e6), q.F32(5))
	require.Equal(t, float32(1), q.F32(10))
	require.Equal(t, int32(10), q.I32(13))
	require.Equal(t, int32(8), q.I32(15))
	require.Equal(t, rp, ops.RopeParamsOf(q))

	fp := ops.FlashAttnParams{Scale: 0.125, MaxBias: 8, LogitSoftcap: 30, Prec: ops.PrecF32, NKVMax: 77}
	require.Equal(t, fp, ops.FlashAttnParamsOf(fp.Params()))
	fq := fp.Params()
	require.Equal(t, int32(10), fq.I32(3))
	require.Equal(t, ops.GatedDeltaNetParams{K: 4}, ops.GatedDeltaNetParamsOf(ops.GatedDeltaNetParams{K: 4}.Params()))

	// ggml_rope_yarn_corr_dims: with n_ctx_orig = 0 (as test-backend-ops
	// passes it) the range collapses to [0, -inf].
	require.Equal(t, [2]float32{0, float32(math.Inf(-1))}, ops.RopeYarnCorrDims(128, 0, 10000, 32, 1))
	require.Equal(t, [2]float32{20, 46}, ops.RopeYarnCorrDims(128, 4096, 10000, 32, 1))
}
