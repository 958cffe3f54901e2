package rpc

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
	"github.com/ggml-go/ggml/quant"
)

// TestGraphRecompute: our client sends a graph it sent last to the same
// device as GRAPH_RECOMPUTE (13 bytes on the wire instead of the graph),
// the server computes it on the inputs set since, and after a buffer is
// freed (which makes the server forget its graphs) the graph goes whole
// again; on our server and ggml's, the results right every time.
func TestGraphRecompute(t *testing.T) {
	for _, c := range []struct {
		name string
		addr func() string
	}{
		{"our server", func() string { return startServer(t, &Server{Threads: 1}) }},
		{"ggml's server", func() string { return rpcref.StartServer(t, rpcref.Config{Threads: 1}).Addr }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := connect(t, c.addr(), Options{})[0].(*Device)
			ctx := graph.NewContext(graph.ContextOptions{})
			a := graph.SetInput(ctx.NewTensor(quant.F32, 256))
			w := ctx.NewTensor(quant.F32, 256)
			sum := ctx.Add(a, w)
			y := graph.SetOutput(ctx.Mul(sum, w))
			g, err := ctx.Build(y)
			require.NoError(t, err)
			buf, err := buffer.AllocTensors(dev.BufferType(), []*graph.Tensor{a, w, sum, y})
			require.NoError(t, err)
			defer buf.Free()
			be, err := dev.Init(backend.Options{})
			require.NoError(t, err)
			defer be.Close()
			weights := make([]float32, 256)
			for i := range weights {
				weights[i] = float32(i%7) - 3
			}
			require.NoError(t, backend.SetFloat32(be, w, weights))
			// step computes the graph on input k and returns the bytes
			// the GRAPH_COMPUTE or GRAPH_RECOMPUTE request took.
			step := func(k float32) uint64 {
				in := make([]float32, 256)
				for i := range in {
					in[i] = k + float32(i)
				}
				require.NoError(t, backend.SetFloat32(be, a, in))
				before := dev.c.sent.Load()
				require.NoError(t, be.GraphCompute(g))
				n := dev.c.sent.Load() - before
				out, err := backend.GetFloat32(be, y)
				require.NoError(t, err)
				for i := range out {
					require.Equal(t, (in[i]+weights[i])*weights[i], out[i], "input %g, element %d", k, i)
				}
				return n
			}
			first := step(1)
			require.Greater(t, first, uint64(3*tensorBytes), "the first graph was not sent whole")
			require.Equal(t, uint64(9+4), step(2), "the same graph again was not GRAPH_RECOMPUTE")
			require.Equal(t, uint64(9+4), step(3))
			other, err := dev.BufferType().Alloc(64)
			require.NoError(t, err)
			require.NoError(t, other.Free())
			require.Equal(t, first, step(4), "after FREE_BUFFER the graph must go whole")
			require.Equal(t, uint64(9+4), step(5))
		})
	}
}
