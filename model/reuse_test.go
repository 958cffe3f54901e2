package model_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// TestGraphReuse: a session computes the last batch's graph again while
// the batch shape stays the same, with only the inputs rewritten. Its
// logits are bit for bit those of a session building and placing every
// batch's graph afresh, across the cache-length steps (256 cells for one
// token, 32 for several), batches of several tokens, a Reset and output
// rows chosen per batch.
func TestGraphReuse(t *testing.T) {
	c := genmodel.Config{Arch: "qwen2", Type: quant.Q4_0, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300, Seed: 8}
	path := genFile(t, c)
	m, err := model.Open(path, model.Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	ctx := context.Background()
	for _, so := range []model.SessionOptions{
		{Ctx: 300, Batch: 16},
		{Ctx: 300, Batch: 16, FlashAttn: true, CacheType: quant.F16},
	} {
		reused, err := m.NewSession(so)
		require.NoError(t, err)
		fresh, err := m.NewSession(so)
		require.NoError(t, err)
		tokens := prompt(290, c.VocabSize, 2)
		// Batches: a prompt in two calls, single tokens past the cache
		// steps, a three-token batch with its middle row unwanted, then
		// from position 0 again.
		type batch struct {
			at, n int
			want  []bool
			reset bool
		}
		batches := []batch{{at: 0, n: 10}, {at: 10, n: 10}}
		for at := 20; at < 270; at++ {
			batches = append(batches, batch{at: at, n: 1})
		}
		batches = append(batches, batch{at: 270, n: 3, want: []bool{true, false, true}},
			batch{at: 273, n: 3, want: []bool{true, false, true}}, batch{at: 0, n: 1, reset: true}, batch{at: 1, n: 1})
		var graphs []*graph.Graph
		for _, b := range batches {
			if b.reset {
				reused.Reset()
				fresh.Reset()
			}
			model.DropGraph(fresh)
			got, err := reused.Decode(ctx, tokens[b.at:b.at+b.n], b.want)
			require.NoError(t, err)
			want, err := fresh.Decode(ctx, tokens[b.at:b.at+b.n], b.want)
			require.NoError(t, err)
			require.Len(t, got, len(want))
			for i := range want {
				require.Equal(t, want[i] == nil, got[i] == nil)
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("%+v: batch at %d, row %d, logit %d: %v after reuse, %v fresh", so, b.at, i, j, got[i][j], want[i][j])
					}
				}
			}
			graphs = append(graphs, model.LastGraph(reused))
		}
		// The single tokens share a graph while the cells they attend
		// over stay the same: 64-cell multiples on the CPU without flash
		// attention, 256 with it (cpuStepKVPad, stepKVPad); the next multiple
		// builds a new one.
		pad := 64
		if so.FlashAttn {
			pad = 256
		}
		cells := func(i int) int { return (batches[i].at + 1 + pad - 1) / pad * pad }
		for i := 3; batches[i].n == 1; i++ {
			if cells(i) == cells(i-1) {
				require.Same(t, graphs[i-1], graphs[i], "%+v: token at %d", so, batches[i].at)
			} else {
				require.NotSame(t, graphs[i-1], graphs[i], "%+v: the graph grows past %d cells", so, cells(i-1))
			}
		}
		require.NoError(t, reused.Close())
		require.NoError(t, fresh.Close())
	}
}

// TestDecodeInto: DecodeInto writes a token's logits into the row it is
// given (the same memory, no new row), bit for bit what Decode returns for
// the same tokens, makes the rows it is not given, and refuses a row count
// other than the token count.
func TestDecodeInto(t *testing.T) {
	c := genmodel.Config{Arch: "llama", Type: quant.Q4_0, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300, Seed: 3}
	m, err := model.Open(genFile(t, c), model.Options{Threads: 1})
	require.NoError(t, err)
	defer m.Close()
	ctx := context.Background()
	a, err := m.NewSession(model.SessionOptions{Ctx: 64, Batch: 8})
	require.NoError(t, err)
	b, err := m.NewSession(model.SessionOptions{Ctx: 64, Batch: 8})
	require.NoError(t, err)
	rows := [][]float32{make([]float32, c.VocabSize)}
	first := &rows[0][0]
	for i, tok := range prompt(12, c.VocabSize, 5) {
		want, err := a.Decode(ctx, []int32{tok}, nil)
		require.NoError(t, err)
		got, err := b.DecodeInto(ctx, []int32{tok}, nil, rows)
		require.NoError(t, err)
		require.Same(t, first, &got[0][0], "token %d: a new row", i)
		for j := range want[0] {
			require.Equal(t, math.Float32bits(want[0][j]), math.Float32bits(got[0][j]), "token %d logit %d", i, j)
		}
	}
	got, err := b.DecodeInto(ctx, []int32{1, 2}, nil, make([][]float32, 2))
	require.NoError(t, err)
	require.Nil(t, got[0])
	require.Len(t, got[1], c.VocabSize)
	_, err = b.DecodeInto(ctx, []int32{1, 2}, nil, rows)
	require.ErrorIs(t, err, model.ErrArgument)
}
