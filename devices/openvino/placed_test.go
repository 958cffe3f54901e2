package openvino

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// testPlacement is an id no scheduler of this test process hands out
// (they count from 1).
const testPlacement = backend.PlacementID(1 << 62)

// A promise is taken at its word: the graph computed again under the id
// it last came with is not compared with its records, so an input moved
// to other memory under a stale promise is still read where it was - the
// check really is skipped - while the same move without a promise, or
// under a new id, is rebound and read from the new memory. Runs on the
// double and on the real runtime (GGML_OPENVINO_LIB): both memories stay
// allocated, so the stale read is only wrong, never a fault.
func TestPlacedGraphSkipsCheck(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{})
	be := newBackend(dev)
	defer be.Close()
	g, a, _, y := addGraph(t, dev, 16)
	require.NoError(t, be.GraphComputePlaced(g, testPlacement))
	require.Equal(t, float32(5+5), getF32(t, y)[5])
	s0 := dev.CacheStats()
	require.NoError(t, be.GraphComputePlaced(g, testPlacement))
	s1 := dev.CacheStats()
	require.Equal(t, s0.Hits+1, s1.Hits)
	require.Equal(t, s0.Vouched+1, s1.Vouched, "the same id again is vouched for")

	orig := *a
	moveTo100(t, dev, a)

	require.NoError(t, be.GraphComputePlaced(g, testPlacement))
	require.Equal(t, float32(5+5), getF32(t, y)[5], "a stale promise: a read where it was")
	require.Equal(t, s1.Vouched+1, dev.CacheStats().Vouched)
	require.NoError(t, be.GraphComputePlaced(g, testPlacement+1))
	require.Equal(t, float32(100+5+5), getF32(t, y)[5], "a new id: checked, a rebound")
	s2 := dev.CacheStats()
	require.Equal(t, s1.Vouched+1, s2.Vouched, "a new id is not vouched for")

	a.Data, a.Buffer, a.Extra = orig.Data, orig.Buffer, orig.Extra
	require.NoError(t, be.GraphCompute(g))
	require.Equal(t, float32(5+5), getF32(t, y)[5], "no promise: checked, a rebound")
	require.Equal(t, s2.Vouched, dev.CacheStats().Vouched)
}

// A promise covers the graph's tensors, not the device's record of their
// contents: a weight set again under the same id is a new model (the
// weights are Constants of it), found by the device's epoch.
func TestPlacedGraphSeesNewWeights(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{})
	be := newBackend(dev)
	defer be.Close()
	wctx := graph.NewContext(graph.ContextOptions{})
	w := wctx.NewTensor(quant.F32, 8, 4)
	w.Name = "blk.0.attn_q.weight"
	wbuf, err := buffer.AllocContextTensors(wctx, dev.BufferType())
	require.NoError(t, err)
	defer wbuf.Free()
	wbuf.SetUsage(buffer.UsageWeights)
	ones := make([]float32, 32)
	for i := range ones {
		ones[i] = 1
	}
	require.NoError(t, buffer.SetTensor(w, quant.F32Bytes(ones), 0))
	ctx := graph.NewContext(graph.ContextOptions{})
	x := ctx.NewTensor(quant.F32, 8, 1)
	y := ctx.MulMat(w, x)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
	require.NoError(t, err)
	defer buf.Free()
	require.NoError(t, buffer.SetTensor(x, quant.F32Bytes(ones[:8]), 0))
	require.NoError(t, be.GraphComputePlaced(g, testPlacement))
	require.NoError(t, be.GraphComputePlaced(g, testPlacement))
	require.Equal(t, []float32{8, 8, 8, 8}, getF32(t, y))
	v := dev.CacheStats().Vouched
	for i := range ones {
		ones[i] = 2
	}
	require.NoError(t, buffer.SetTensor(w, quant.F32Bytes(ones), 0))
	require.NoError(t, be.GraphComputePlaced(g, testPlacement))
	require.Equal(t, []float32{16, 16, 16, 16}, getF32(t, y), "the new weights")
	require.Equal(t, v, dev.CacheStats().Vouched)
}

// The model runner through the scheduler: every generated token after the
// first of its shape comes with the scheduler's promise and is vouched
// for, and the logits are bit for bit those of the same run with the
// promise ignored (every graph checked). On the double and, with
// GGML_OPENVINO_LIB, the real runtime.
func TestPlacedModelLogits(t *testing.T) {
	p := buildDouble(t)
	path := filepath.Join(t.TempDir(), "model.gguf")
	require.NoError(t, genmodel.WriteFile(path, genmodel.Default()))
	run := func(on bool) ([][]float32, CacheStats) {
		old := placedOn
		placedOn = on
		defer func() { placedOn = old }()
		dev := openDevice(t, p, Options{})
		s := lmSession(t, path, model.Options{Device: dev, Threads: 1})
		var out [][]float32
		for range 2 {
			s.Reset()
			lg, err := s.Decode(context.Background(), []int32{1, 5, 9, 12, 3, 8}, nil)
			require.NoError(t, err)
			out = append(out, lg[len(lg)-1])
			for _, tok := range []int32{7, 30, 2, 11, 4, 19} {
				lg, err := s.Decode(context.Background(), []int32{tok}, nil)
				require.NoError(t, err)
				out = append(out, lg[len(lg)-1])
			}
		}
		return out, dev.CacheStats()
	}
	got, st := run(true)
	want, st0 := run(false)
	// Per round: the prompt and the first token are new placements, the
	// other 5 tokens the first token's graph again.
	require.Equal(t, 2*5, st.Vouched, "%+v", st)
	require.Zero(t, st0.Vouched)
	require.Equal(t, st0.Hits, st.Hits)
	for i := range got {
		require.Equal(t, want[i], got[i], "logits %d", i)
	}
}
