//go:build !purego

package cpu

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/quant"
)

// TestARM64SetSelected: the engines use the assembly, with dotprod exactly
// where the processor has it (or a level above both), so the comparisons
// in traits_test.go test the set this processor (or qemu's -cpu model)
// selects. With GGML_TEST_KERNELS set (as .ci/run does for each qemu
// model), TestLevelChosen wants that set selected, so a model that stopped
// reporting dotprod cannot leave its kernels untested.
func TestARM64SetSelected(t *testing.T) {
	want := levelNEON
	if cpu.ARM64.HasASIMDDP {
		want = levelNEONDotProd
	}
	best := bestLevel(levels)
	t.Logf("ASIMDDP %v, ASIMDHP %v: kernel set %q", cpu.ARM64.HasASIMDDP, cpu.ARM64.HasASIMDHP, fastKernels().name)
	require.GreaterOrEqual(t, best.priority, want.priority, "level %s chosen over %s", best.name, want.name)
	require.Equal(t, best.name, fastKernels().name)
	if !cpu.ARM64.HasASIMDDP {
		require.Same(t, levelNEON, best, "no dotprod, yet level %s is chosen", best.name)
	}
	e := New(Options{Threads: 1})
	defer e.Close()
	require.Equal(t, best.name, e.Kernels())
}

// TestNEONQuantizersTakeFiniteRows: the assembly quantizers do the work on
// ordinary rows (rather than handing every row back to Go, which would
// make TestFromFloatAgrees pass on the generic bytes), match the generic
// bytes there, and hand back the rows they must.
func TestNEONQuantizersTakeFiniteRows(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t)))
	for _, typ := range levelNEON.quantizers {
		k, block := quant.FromFloatKernel(typ), typ.BlockSize()
		require.NotNil(t, k, "%s has no assembly conversion", typ)
		nb := 1 + rng.Intn(8)
		src := make([]float32, nb*block)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		want := make([]byte, typ.RowSize(int64(len(src))))
		require.NoError(t, genericKernels.traits[typ].fromFloat(want, src))
		got := make([]byte, len(want))
		require.True(t, k(got, src), "%s handed back a gaussian row", typ)
		require.Equal(t, want, got, "%s", typ)

		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1)), 1e-40} {
			row := append([]float32(nil), src...)
			if bad == 1e-40 {
				// A block of subnormals: its scale cannot be inverted.
				for i := range block {
					row[i] = bad * float32(i%3)
				}
			} else {
				row[rng.Intn(len(row))] = bad
			}
			require.False(t, k(got, row), "%s took a row with %v", typ, bad)
		}
	}
}
