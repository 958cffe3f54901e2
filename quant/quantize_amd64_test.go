//go:build !purego

package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// asmCaseBlocks are blocks of 32 values that exercise the assembly
// quantizers' corners: zeros (and negative zeros), ties of magnitude with
// either sign first, values on the rounding boundaries, a lone value,
// scales too small to invert, subnormals, and large values.
func asmCaseBlocks(r *rand.Rand) [][]float32 {
	var blocks [][]float32
	fill := func(f func(j int) float32) {
		b := make([]float32, legacyBlock)
		for j := range b {
			b[j] = f(j)
		}
		blocks = append(blocks, b)
	}
	fill(func(int) float32 { return 0 })
	fill(func(int) float32 { return float32(math.Copysign(0, -1)) })
	fill(func(j int) float32 { return float32(j%5) - 2 })
	fill(func(j int) float32 { return float32(j%7)*0.5 - 1.5 })
	fill(func(j int) float32 {
		if j == 3 {
			return -1
		}
		if j == 9 {
			return 1
		}
		return 0.25
	})
	fill(func(j int) float32 {
		if j == 17 {
			return 3
		}
		return 0
	})
	fill(func(j int) float32 { return float32(j-16) * 1e-40 })
	fill(func(j int) float32 { return float32(j+1) * 1e-39 })
	fill(func(j int) float32 { return float32(j-15) * 1e30 })
	fill(func(j int) float32 { return float32(j) * 127 / 31 })
	for range 2000 {
		scale := math.Pow(10, r.Float64()*12-6)
		fill(func(int) float32 { return float32(r.NormFloat64() * scale) })
	}
	return blocks
}

// TestQuantizeAsmMatchesGo checks the assembly Q4_0 and Q8_0 quantizers
// byte for byte against the Go reference ones, block by block and over
// runs of blocks where the assembly hands some back to Go.
func TestQuantizeAsmMatchesGo(t *testing.T) {
	if !hasQuantAsm() {
		t.Skip("no AVX2/F16C: the Go quantizers are the only ones")
	}
	r := rand.New(rand.NewPCG(3, 4))
	blocks := asmCaseBlocks(r)
	var src []float32
	for _, b := range blocks {
		src = append(src, b...)
	}
	for _, c := range []struct {
		typ   Type
		block func(b []byte, x []float32)
	}{{Q4_0, quantizeBlockQ4_0}, {Q8_0, quantizeBlockQ8_0}} {
		ts := c.typ.TypeSize()
		want := make([]byte, len(blocks)*ts)
		for i, b := range blocks {
			c.block(want[i*ts:(i+1)*ts], b)
		}
		got := make([]byte, len(want))
		_, err := QuantizeInto(got, c.typ, src, len(blocks), legacyBlock, nil)
		require.NoError(t, err)
		for i := range blocks {
			require.Equal(t, want[i*ts:(i+1)*ts], got[i*ts:(i+1)*ts], "%s block %d: %v", c.typ, i, blocks[i])
		}
	}
}
