package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// gemmTypes are the types with register-tiled kernels in the fast set,
// and those whose plain weights it interleaves on the fly.
func gemmTypes() []quant.Type {
	var ts []quant.Type
	for typ := range fastKernels().gemm {
		ts = append(ts, typ)
	}
	for typ := range fastKernels().repack {
		ts = append(ts, typ)
	}
	return ts
}

// computeEngines computes out with the generic kernels (on the fast set's
// activations, fastActivationsEngine) and with the fast
// ones on 1, 2 and 3 threads: the fast results agree with the generic
// within float rounding (k terms each below 1) and do not depend on the
// thread count, which moves rows and columns between tiles and edges.
func computeEngines(t *testing.T, name string, out *graph.Tensor, k int64) {
	t.Helper()
	gen := fastActivationsEngine()
	defer gen.Close()
	require.NoError(t, gen.ComputeNode(out), name)
	want := mmF32s(out)
	var first []float32
	for _, th := range []int{1, 2, 3} {
		e := New(Options{Threads: th})
		clear(out.Data)
		require.NoError(t, e.ComputeNode(out), name)
		e.Close()
		got := mmF32s(out)
		for i := range want {
			if math.IsNaN(float64(want[i])) {
				require.True(t, math.IsNaN(float64(got[i])), "%s element %d = %v, want NaN", name, i, got[i])
				continue
			}
			require.InDelta(t, want[i], got[i], 2e-6*float64(k), "%s element %d", name, i)
		}
		if first == nil {
			first = got
		} else {
			for i := range first {
				require.Equal(t, math.Float32bits(first[i]), math.Float32bits(got[i]), "%s element %d: differs between thread counts", name, i)
			}
		}
	}
}

// fastActivationsEngine is a one-thread engine of the generic kernels
// whose activations are converted as the fast set converts them (ggml's
// AVX builds round some a level away from the generic conversion): the
// reference a fast product agrees with to within float rounding.
func fastActivationsEngine() *Engine {
	ks := *genericKernels
	ks.name = "generic, fast activations"
	for _, typ := range chosen.avxFromFloatTypes {
		ks.traits[typ].fromFloat = chosen.traits[typ].fromFloat
	}
	e := &Engine{pool: newPool(1), kset: &ks}
	e.pool.setKernels(e.kset)
	return e
}

// TestGemmMatchesGeneric: tiled products of random shapes (rows around
// the tile of three, columns around the tile of four and the column tile,
// lengths of whole steps and not) against the generic kernels.
func TestGemmMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t)))
	shapes := [][4]int64{{8, 3, 4, 1}, {16, 7, 5, 1}, {64, 10, 9, 2}, {256, 4, 70, 1}, {40, 31, 33, 1}, {12, 5, 8, 1}, {1032, 6, 6, 1}}
	for _, typ := range gemmTypes() {
		// More groups of eight rows than columns (the threads share the
		// groups tile by tile), the last group partial.
		more := [][4]int64{{512, 19, 4, 1}, {96, 8, 13, 3}, {256, 203, 5, 1}, {64, 100, 4, 2}}
		for _, s := range append(shapes, more...) {
			bs := int64(typ.BlockSize())
			k, m, n, b2 := (s[0]+bs-1)/bs*bs, s[1], s[2], s[3]
			name := fmt.Sprintf("%s/k=%d,m=%d,n=%d,b=%d", typ, k, m, n, b2)
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			a := c.NewTensor(typ, k, m)
			b := c.NewTensor(quant.F32, k, n, b2)
			out := c.MulMat(a, b)
			require.NoError(t, c.Err(), name)
			_, err := quant.FromFloat(a.Data, typ, mmRandF32s(rng, a.NElements()))
			require.NoError(t, err)
			bv := mmRandF32s(rng, b.NElements())
			if n > 4 {
				bv[k*2+1] = float32(math.Inf(1)) // a column of NaN among tiled ones
			}
			mmSetF32s(b, bv)
			computeEngines(t, name, out, k)
		}
	}
}

// TestGemmMulMatID: expert products whose neighbouring columns meet
// different matrices (not groupable into one tile) and ids out of range.
func TestGemmMulMatID(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t)))
	for _, typ := range gemmTypes() {
		c := graph.NewContext(graph.ContextOptions{Alloc: true})
		k := int64(max(64, typ.BlockSize()))
		as := c.NewTensor(typ, k, 7, 3)
		b := c.NewTensor(quant.F32, k, 2, 9)
		ids := c.NewTensor(quant.I32, 2, 9)
		out := c.MulMatID(as, b, ids)
		require.NoError(t, c.Err())
		_, err := quant.FromFloat(as.Data, typ, mmRandF32s(rng, as.NElements()))
		require.NoError(t, err)
		mmSetF32s(b, mmRandF32s(rng, b.NElements()))
		for i := range 18 {
			id := int32(i / 5 % 3)
			if i == 11 {
				id = 7
			}
			binary.LittleEndian.PutUint32(ids.Data[4*i:], uint32(id))
		}
		computeEngines(t, typ.String()+"/id", out, k)
	}
}
