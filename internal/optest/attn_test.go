package optest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
)

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
		r := Run(c, CPU{three}, CPU{one}, 7)
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
