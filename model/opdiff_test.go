package model

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
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
// of node how many results differ in any bit.
func stepwise(t *testing.T, lib *ggmlref.Lib, path string, tokens []int32, pre int) map[string]*opStat {
	ex, err := mirror.New(lib, 1)
	require.NoError(t, err)
	defer ex.Close()
	m, err := Open(path, Options{Threads: 1})
	require.NoError(t, err)
	defer m.Close()
	s, err := m.NewSession(SessionOptions{Ctx: 512, Batch: 64})
	require.NoError(t, err)
	defer s.Close()
	if pre > 0 {
		_, err := s.Decode(context.Background(), tokens[:pre], nil)
		require.NoError(t, err)
		tokens = tokens[pre:]
	}
	n := len(tokens)
	want := make([]bool, n)
	for i := range want {
		want[i] = true
	}
	outIdx := s.scratch.outIdx(want)
	bs := batchShape{nTokens: n, nKV: s.nKV(s.nPast + n), nOutputs: n}
	bg, err := s.placedGraph(bs)
	require.NoError(t, err)
	require.NoError(t, s.setInputs(&bg.in, bs, tokens, outIdx))
	be := m.backends[len(m.backends)-1]
	stats := map[string]*opStat{}
	for i, node := range bg.g.Nodes {
		v, err := bg.g.View(i, i+1)
		require.NoError(t, err)
		compute := node.Op != ops.None && node.Op != ops.View && node.Op != ops.Reshape &&
			node.Op != ops.Permute && node.Op != ops.Transpose
		var l *mirror.Loaded
		if compute {
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
		if rel > st.worst || st.first == "" {
			st.worst = max(st.worst, rel)
		}
		if st.first == "" {
			st.first = fmt.Sprintf("node %d %s: %d of %d floats differ, rel %.3g", i, mirror.Describe(node), cnt, len(ours)/4, rel)
		}
	}
	return stats
}

// TestOpsAgainstVariant is a diagnostic: every node of a real model's
// prompt graph, ours against ggml's CPU variant (GGML_REF_CPU_VARIANT).
func TestOpsAgainstVariant(t *testing.T) {
	which := os.Getenv("OPDIFF_MODEL")
	if which == "" {
		t.Skip("OPDIFF_MODEL unset")
	}
	name := map[string]modelcache.Model{"smollm2": modelcache.SmolLM2, "gemma3": modelcache.Gemma3}[which]
	path := realmodel.Run(t, name)
	lib, err := ggmlref.Default()
	require.NoError(t, err)
	t.Logf("variant %s", lib.Variant())
	m, err := Open(path, Options{Threads: 1})
	require.NoError(t, err)
	tokens, err := m.Tokenize("The history of the printing press begins in the fifteenth century, when Johannes Gutenberg "+
		"combined movable metal type, oil-based ink and a wooden screw press. Within fifty years,", true)
	require.NoError(t, err)
	m.Close()
	stats := stepwise(t, lib, path, tokens[:16], 0)
	var keys []string
	for k := range stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		st := stats[k]
		t.Logf("%-40s %4d nodes, %4d differ, worst rel %.3g %s", k, st.nodes, st.differ, st.worst, st.first)
	}
}
