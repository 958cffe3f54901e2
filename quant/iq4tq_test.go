package quant

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// Format-specific checks of the IQ4, ternary and Q8_K formats; the generic
// differential tests (live_test.go) cover them on random inputs.

// TestQ8KZeroBlockInto quantizes an all-zero block into a dirty buffer.
// ggml leaves that block's sums as they were; we write zeros, which is
// what the CPU backend's from_float gives into a cleared buffer.
func TestQ8KZeroBlockInto(t *testing.T) {
	dst := make([]byte, Q8_K.TypeSize())
	for i := range dst {
		dst[i] = 0xa5
	}
	n, err := QuantizeInto(dst, Q8_K, make([]float32, 256), 1, 256, nil)
	require.NoError(t, err)
	require.Equal(t, len(dst), n)
	require.Equal(t, make([]byte, len(dst)), dst)
}

// TestQ8KCPUVariantsAgree compares Quantize(Q8_K) with the from_float of
// ggml's generic x86-64 build and of its AVX2 (haswell) build: in 0.25.1
// both forward to the reference quantizer, so all must agree byte for byte.
func TestQ8KCPUVariantsAgree(t *testing.T) {
	libs := []*ggmlref.Lib{variantLib(t, "x64"), variantLib(t, "haswell")}
	seed := testSeed(t)
	for c := range liveCases(100) {
		r := rand.New(rand.NewSource(seed + int64(c)))
		nrows, nPerRow := randomShape(r, Q8_K.BlockSize())
		dist := inputDist(c % int(numDists))
		src := make([]float32, nrows*nPerRow)
		fillValues(r, src, dist)
		what := fmt.Sprintf("seed %d case %d: %d x %d, %v", seed, c, nrows, nPerRow, dist)
		got, err := Quantize(Q8_K, src, nrows, nPerRow, nil)
		require.NoError(t, err, what)
		for _, l := range libs {
			want, err := l.FromFloatCPU(uint32(Q8_K), src)
			require.NoError(t, err, what)
			requireSameBytes(t, Q8_K, want, got, what+" variant "+l.Variant())
		}
	}
}

// TestIQ4NLTies places values exactly halfway between two levels (at
// weight zero, so that the scale found is exactly 1) and requires ggml's
// choice of level for them.
func TestIQ4NLTies(t *testing.T) {
	lib := reftest.Lib(t)
	x := make([]float32, 32)
	w := make([]float32, 32)
	for k, v := range kvaluesIQ4NL {
		x[k], w[k] = float32(v), 1
		if k > 0 {
			x[15+k] = (float32(kvaluesIQ4NL[k-1]) + float32(v)) / 2
		}
	}
	x[31], w[31] = float32(kvaluesIQ4NL[0]), 1
	for _, neg := range []bool{false, true} {
		if neg {
			for i := range x {
				x[i] = -x[i]
			}
		}
		want, err := lib.QuantizeChunk(uint32(IQ4_NL), x, 1, 32, w)
		require.NoError(t, err)
		require.Equal(t, FP32ToFP16(map[bool]float32{false: 1, true: -1}[neg]),
			binary.LittleEndian.Uint16(want), "the crafted block should get scale ±1")
		got, err := Quantize(IQ4_NL, x, 1, 32, w)
		require.NoError(t, err)
		requireSameBytes(t, IQ4_NL, want, got, fmt.Sprintf("ties (negated %v)", neg))
	}
}

// TestIQ4Levels checks the level table through ggml: with a scale of 1,
// nibble k dequantizes to level k.
func TestIQ4Levels(t *testing.T) {
	lib := reftest.Lib(t)
	q := make([]byte, 18)
	binary.LittleEndian.PutUint16(q, FP32ToFP16(1))
	for j := range 16 {
		q[2+j] = byte(j) | byte(15-j)<<4
	}
	want, err := lib.ToFloat(uint32(IQ4_NL), q, 32)
	require.NoError(t, err)
	for k := range 16 {
		require.Equal(t, float32(kvaluesIQ4NL[k]), want[k], "level %d", k)
		require.Equal(t, float32(kvaluesIQ4NL[15-k]), want[16+k], "level %d", 15-k)
	}
}
