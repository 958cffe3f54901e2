package model

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/realmodel"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// opKey names a kind of node: operation, result and source types.
func opKey(n *graph.Tensor) string {
	var b strings.Builder
	b.WriteString(n.OpDesc())
	fmt.Fprintf(&b, " %s <-", n.Type)
	for _, s := range n.Src {
		if s != nil {
			fmt.Fprintf(&b, " %s", s.Type)
		}
	}
	return b.String()
}

type opStat struct {
	nodes, differ int
	worst         float64 // largest relative difference
	first         string
}

// stepwise computes the batch graph of tokens node by node, each node on
// our CPU and on ggml's (lib) from the same sources, and tallies per kind
// of node how many results differ in any bit. The batch follows prefix,
// decoded by our session in calls of the sizes calls gives (nil: none).
func stepwise(t *testing.T, lib *ggmlref.Lib, path string, prefix []int32, calls []int, tokens []int32) map[string]*opStat {
	ex, m, bg := batchAfter(t, lib, path, prefix, calls, tokens)
	amx := lib.Variant() == "sapphirerapids" && len(cpu.MatrixUnitTypes()) > 0
	n := len(tokens)
	be := m.backends[len(m.backends)-1]
	stats := map[string]*opStat{}
	for i, node := range bg.g.Nodes {
		v, err := bg.g.View(i, i+1)
		require.NoError(t, err)
		compute := node.Op != ops.None && node.Op != ops.View && node.Op != ops.Reshape &&
			node.Op != ops.Permute && node.Op != ops.Transpose
		var l *mirror.Loaded
		switch {
		case compute && amx && node.Op == ops.MulMat && slices.Contains(cpu.MatrixUnitTypes(), node.Src[0].Type):
			// As libllama places them on an AMX machine: ggml's AMX
			// code then computes the products our amx level follows.
			l, _, err = ex.LoadExtra(v, []*graph.Tensor{node.Src[0]}, mirror.AMXBufferType)
			require.NoError(t, err, "node %d %s", i, mirror.Describe(node))
		case compute:
			l, err = ex.Load(v)
			require.NoError(t, err, "node %d %s", i, mirror.Describe(node))
		}
		require.NoError(t, be.GraphCompute(v))
		if !compute {
			continue
		}
		require.NoError(t, l.Compute())
		ref, err := l.Data(node)
		require.NoError(t, err)
		ours := node.Data[:node.NBytes()]
		k := opKey(node)
		st := stats[k]
		if st == nil {
			st = &opStat{}
			stats[k] = st
		}
		st.nodes++
		if string(ours) == string(ref) {
			continue
		}
		st.differ++
		rel, cnt := 0.0, 0
		if node.Type == quant.F32 {
			var num, den float64
			for j := 0; j+4 <= len(ours); j += 4 {
				a := float64(math.Float32frombits(binary.LittleEndian.Uint32(ours[j:])))
				b := float64(math.Float32frombits(binary.LittleEndian.Uint32(ref[j:])))
				if a != b {
					cnt++
				}
				num += (a - b) * (a - b)
				den += b * b
			}
			rel = math.Sqrt(num / max(den, 1e-300))
		}
		st.worst = max(st.worst, rel)
		if st.first == "" {
			st.first = fmt.Sprintf("node %d %s: %d of %d floats differ, rel %.3g", i, mirror.Describe(node), cnt, len(ours)/4, rel)
		}
	}
	// The whole graph, as a session computes it (fused where the device
	// fuses), gives the logits of the node by node run bit for bit.
	whole, err := m.NewSession(SessionOptions{Ctx: 512, Batch: 64})
	require.NoError(t, err)
	defer whole.Close()
	decodeCalls(t, whole, prefix, calls)
	logits, err := whole.Decode(context.Background(), tokens, allOutputs(n))
	require.NoError(t, err)
	stepped := bg.logits.Data
	nv := m.HParams.NVocab
	same := 0
	for p, row := range logits {
		for j, v := range row {
			if math.Float32bits(v) == binary.LittleEndian.Uint32(stepped[4*(p*nv+j):]) {
				same++
			}
		}
	}
	require.Equal(t, n*nv, same, "whole graph against node by node: logits identical")
	return stats
}

// promptGraph opens the model at path and builds, with its inputs set,
// the graph of a fresh session's first batch: tokens, every position's
// logits out. ex computes on ggml's CPU (lib); all three close with t.
func promptGraph(t *testing.T, lib *ggmlref.Lib, path string, tokens []int32) (*mirror.Executor, *Model, *batchGraph) {
	return batchAfter(t, lib, path, nil, nil, tokens)
}

// batchAfter is promptGraph for a session that has decoded prefix first,
// in calls of the sizes calls gives: the batch of tokens then reads the
// cache prefix filled.
func batchAfter(t *testing.T, lib *ggmlref.Lib, path string, prefix []int32, calls []int, tokens []int32) (*mirror.Executor, *Model, *batchGraph) {
	ex, err := mirror.New(lib, 1)
	require.NoError(t, err)
	t.Cleanup(ex.Close)
	m, err := Open(path, Options{Threads: 1})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	s, err := m.NewSession(SessionOptions{Ctx: 512, Batch: 64})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	decodeCalls(t, s, prefix, calls)
	n := len(tokens)
	bs := batchShape{nTokens: n, nKV: s.nKV(s.nPast+n, n), nOutputs: n}
	bg, err := s.placedGraph(bs)
	require.NoError(t, err)
	require.NoError(t, s.setInputs(&bg.in, bs, tokens, s.scratch.outIdx(allOutputs(n))))
	return ex, m, bg
}

// decodeCalls decodes tokens with s in calls of the sizes calls gives,
// which cover tokens.
func decodeCalls(t *testing.T, s *Session, tokens []int32, calls []int) {
	at := 0
	for _, c := range calls {
		_, err := s.Decode(context.Background(), tokens[at:at+c], nil)
		require.NoError(t, err)
		at += c
	}
	require.Equal(t, len(tokens), at, "calls cover the prefix")
}

// allOutputs asks for the logits of each of n positions.
func allOutputs(n int) []bool {
	want := make([]bool, n)
	for i := range want {
		want[i] = true
	}
	return want
}

// ggmlGraphLogits computes the prompt graph of tokens whole on ggml's CPU
// (lib) and returns its logits, row after row.
func ggmlGraphLogits(t *testing.T, lib *ggmlref.Lib, path string, tokens []int32) []float32 {
	ex, _, bg := promptGraph(t, lib, path, tokens)
	l, err := ex.Load(bg.g)
	require.NoError(t, err)
	require.NoError(t, l.Compute())
	raw, err := l.Data(bg.logits)
	require.NoError(t, err)
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// roundingOnly are the kinds of node that may part from ggml's build by a
// rounding: on haswell the products whose sums run in another order: Q4_0
// against 4 or more columns (ours interleave eight rows on the fly), and
// the K-quants but Q4_K and Q6_K. Every other node, on x64 every node, must
// be bit for bit ggml's: the F32, Q8_0 and Q4_K products (ggml's AVX2
// vec_dot orders: devices/cpu's TestVecDotMatchesHaswell, and for Q8_0
// against 8 or more columns, where ggml takes llamafile's tinyBLAS_Q0_AVX
// in the same order, its TestMulMatQ8_0MatchesHaswell;
// ggml_vec_dot_f32's order,
// and llamafile's sgemm where ggml takes it: devices/cpu's
// TestMulMatF32MatchesGGML), SOFT_MAX, SWIGLU and GEGLU among them (ggml's
// own vector e^x and GELU table, devices/cpu's vexp.go) and ROPE (glibc's
// sincosf, libm_sincosf.go, and the build's rotation). Where the amx
// kernel level is in use, its types' products (cpu.MatrixUnitTypes) are
// rounding-only too; against the sapphirerapids build, whose AMX code
// they follow, only Q5_0's.
func roundingOnly(variant, key string) bool {
	op, _, _ := strings.Cut(key, " ")
	switch op {
	case "MUL_MAT":
		if variant == "sapphirerapids" {
			// Q5_0's tile products sum in the amx level's own order:
			// ggml's AMX code does not take Q5_0.
			return strings.Contains(key, "<- q5_0 ")
		}
		if variant != "haswell" {
			return false
		}
		for _, w := range []string{"<- q4_0 ", "<- q2_K ", "<- q3_K ", "<- q5_K "} {
			if strings.Contains(key, w) {
				return true
			}
		}
		// The amx level's tile products (16 columns or more, as these
		// 16-token prompts have) sum each step's exact integers in
		// float32 in another order.
		for _, typ := range cpu.MatrixUnitTypes() {
			if strings.Contains(key, "<- "+typ.String()+" ") {
				return true
			}
		}
	}
	return false
}

// TestRealModelNodes checks that each real model's prompt graph (16
// tokens), computed whole by ggml, gives libllama's logits on the same
// build bit for bit (the same computation), then computes it node by
// node, every node on our CPU and on ggml's from the same sources: the
// build our kernels follow (llamaref.KernelVariant: x64 for the generic
// ones, sapphirerapids on the amx level, else haswell), or the one
// GGML_REF_CPU_VARIANT names. Against sapphirerapids with the amx level
// in use, each product of a weight of the level's tile types has the
// weight in ggml's AMX buffer type, as libllama places it on such a
// processor. Nodes of the kinds roundingOnly names may differ by
// roundings (relative 1e-5; a level of an activation moved products by
// 5e-4 to 2e-3); all others must agree bit for bit. The same holds node by
// node for a one-token step reading 260 cells of the cache.
func TestRealModelNodes(t *testing.T) {
	variant := os.Getenv(ggmlref.EnvVariant)
	if variant == "" {
		variant = llamaref.KernelVariant()
	}
	def, err := ggmlref.Default()
	if err != nil {
		if os.Getenv(ggmlref.EnvRequired) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	lib, err := ggmlref.OpenVariant(def.Dir(), variant)
	require.NoError(t, err)
	defer lib.Close()
	ll, err := llamaref.Open(def.Dir(), variant)
	require.NoError(t, err)
	defer ll.Close()
	for _, mc := range []modelcache.Model{modelcache.SmolLM2, modelcache.Gemma3} {
		t.Run(mc.Name, func(t *testing.T) {
			path := realmodel.Run(t, mc)
			m, err := Open(path, Options{Threads: 1})
			require.NoError(t, err)
			tokens, err := m.Tokenize("The history of the printing press begins in the fifteenth century, when Johannes Gutenberg "+
				"combined movable metal type, oil-based ink and a wooden screw press.", true)
			require.NoError(t, err)
			require.NoError(t, m.Close())
			require.GreaterOrEqual(t, len(tokens), 16)
			stats := stepwise(t, lib, path, nil, nil, tokens[:16])
			// Our graph computed whole by ggml against libllama's own
			// graph on the same build: where they agree bit for bit, the
			// graphs are the same computation and every difference of
			// ours from libllama is one of the nodes below.
			ref, err := ll.LoadModelParams(path, ll.CompareModelParams())
			require.NoError(t, err)
			rc, err := ref.NewContext(llamaref.CompareOptions(512, 64, 1))
			require.NoError(t, err)
			lw, err := rc.Evaluate(tokens[:16], 0, nil)
			require.NoError(t, err)
			rc.Free()
			ref.Free()
			gg := ggmlGraphLogits(t, lib, path, tokens[:16])
			same := 0
			for p, row := range lw {
				for j, v := range row {
					if math.Float32bits(v) == math.Float32bits(gg[p*len(row)+j]) {
						same++
					}
				}
			}
			require.Equal(t, len(gg), same, "our graph on ggml %s against libllama on it: logits identical", variant)
			checkStats(t, variant, "prompt", stats)
			// A one-token step reading 260 cells (padded to 512), after
			// the text repeated: its one-column products, the attention
			// over more than 256 cells and its cache writes.
			var long []int32
			for len(long) < 260 {
				long = append(long, tokens...)
			}
			checkStats(t, variant, "step at 259", stepwise(t, lib, path, long[:259], []int{64, 64, 64, 64, 3}, long[259:260]))
		})
	}
}

// checkStats logs stepwise's tallies of a graph (what) and wants every
// kind of node bit for bit ggml's but those roundingOnly names, which may
// part by a rounding.
func checkStats(t *testing.T, variant, what string, stats map[string]*opStat) {
	keys := make([]string, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		st := stats[k]
		t.Logf("%s, %s: %-32s %4d nodes, %4d differ, worst rel %.3g %s", variant, what, k, st.nodes, st.differ, st.worst, st.first)
	}
	for _, k := range keys {
		st := stats[k]
		if roundingOnly(variant, k) {
			assert.LessOrEqual(t, st.worst, 1e-5, "%s: %s: %s", what, k, st.first)
		} else {
			assert.Zero(t, st.differ, "%s: %s: %s", what, k, st.first)
		}
	}
}
