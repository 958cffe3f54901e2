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

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// attnCPU is the CPU executor with VIEW, RESHAPE, PERMUTE and TRANSPOSE
// treated as the no-ops they are: the skeleton's kernel table lists them
// with no functions, which kernelFor reads as "unsupported".
// TODO: drop it for CPU once devices/cpu accepts view nodes.
type attnCPU struct{ e *cpu.Engine }

func (attnCPU) Name() string { return "CPU" }

func attnIsView(t *graph.Tensor) bool {
	switch t.Op {
	case ops.View, ops.Reshape, ops.Permute, ops.Transpose:
		return true
	}
	return false
}

func (attnCPU) Supports(g *graph.Graph) error {
	for _, n := range g.Nodes {
		if !attnIsView(n) && !cpu.SupportsOp(n) {
			return fmt.Errorf("%w: %s", cpu.ErrUnsupported, n)
		}
	}
	return nil
}

func (x attnCPU) Compute(g *graph.Graph) error {
	for _, n := range g.Nodes {
		if attnIsView(n) {
			continue
		}
		if err := x.e.ComputeNode(n); err != nil {
			return err
		}
	}
	return nil
}

var attnOps = []string{"ROPE", "ROPE_BACK", "FLASH_ATTN_EXT", "SSM_CONV", "GATED_DELTA_NET", "SOLVE_TRI"}

// TestAttnThreads runs every quick case of the attention family on 1 and 3
// threads: each must be computed (not skipped) and give identical results.
func TestAttnThreads(t *testing.T) {
	one := cpu.New(cpu.Options{Threads: 1})
	defer one.Close()
	three := cpu.New(cpu.Options{Threads: 3})
	defer three.Close()
	cases := Cases(false, attnOps)
	seen := map[string]int{}
	for _, c := range cases {
		seen[OpNameOf(c.Name)]++
		c.Tol = Tolerance{Exact: true}
		r := Run(c, attnCPU{three}, attnCPU{one}, 7)
		require.Equal(t, Passed, r.Status, "%s: %s", c.Name, r.Detail)
	}
	for _, op := range attnOps {
		require.NotZero(t, seen[op], "no quick case of %s", op)
	}
}

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

// TestAttnNaive compares every quick case of the family with attnNaive, an
// independent float64 implementation of the operations' definitions.
func TestAttnNaive(t *testing.T) {
	e := cpu.New(cpu.Options{Threads: 2})
	defer e.Close()
	for _, c := range Cases(false, attnOps) {
		r := Run(c, attnCPU{e}, attnNaive{}, 3)
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

// TestAttnCSVSupport asks our CPU device about every case of the family
// that cpu_support.csv lists and requires the same answer as ggml's.
func TestAttnCSVSupport(t *testing.T) {
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
	agree := map[string]int{}
	listed := map[string]bool{}
	for _, row := range rows[1:] {
		op := row[col["op_name"]]
		if !want[op] || row[col["test_mode"]] != "support" {
			continue
		}
		c, err := FromDesc(op, row[col["op_params"]])
		require.NoError(t, err, "%s(%s)", op, row[col["op_params"]])
		ctx := graph.NewContext(graph.ContextOptions{})
		outs := c.Build(ctx)
		require.NoError(t, ctx.Err(), c.Name)
		g, err := ctx.Build(outs...)
		require.NoError(t, err, c.Name)
		var node *graph.Tensor
		for _, n := range g.Nodes {
			if OpName(n) == op {
				node = n
			}
		}
		require.NotNil(t, node, c.Name)
		require.Equal(t, row[col["supported"]] == "1", cpu.SupportsOp(node), c.Name)
		agree[op]++
		listed[c.Name] = true
	}
	// Our generators reproduce test-backend-ops' lists: the full ones
	// exactly, the FLASH_ATTN_EXT sample from its complete list.
	ours := map[string]bool{}
	for _, c := range Cases(true, attnOps) {
		if OpNameOf(c.Name) != "FLASH_ATTN_EXT" {
			ours[c.Name] = true
		}
	}
	for _, f := range flashAttnAll() {
		ours[f.name()] = true
	}
	for name := range listed {
		require.True(t, ours[name], "not generated: %s", name)
	}
	for name := range ours {
		require.True(t, listed[name], "not in cpu_support.csv: %s", name)
	}
	t.Logf("cases agreeing with cpu_support.csv: %v", agree)
	require.Equal(t, 466, agree["ROPE"])
	require.Equal(t, 5158, agree["FLASH_ATTN_EXT"])
}
