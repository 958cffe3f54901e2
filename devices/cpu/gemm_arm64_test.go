//go:build !purego

package cpu

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/quant"
)

// TestARM64GemmSelected: the tiled and repacked kernels are in the fast
// set (so gemm_test.go, gemm_exact_test.go and repack_test.go test them
// rather than finding no types), both with dotprod exactly where the
// processor has it.
func TestARM64GemmSelected(t *testing.T) {
	fast := fastKernels()
	require.NotNil(t, fast.gemm[quant.F32], "no tiled F32 kernels")
	for typ := range repackLayouts {
		require.NotNil(t, fast.repack[typ], "%s has no repacked kernels", typ)
	}
	if best := bestLevel(levels); best == levelNEON || best == levelNEONDotProd {
		want := levelNEON
		if cpu.ARM64.HasASIMDDP {
			want = levelNEONDotProd
		}
		require.Same(t, want, best, "the products are the %s level's", best.name)
		require.Equal(t, reflect.ValueOf(want.repack).Pointer(), reflect.ValueOf(fast.repack).Pointer(), "the repacked kernels are not the %s level's", want.name)
	}
}

// TestARM64RepackSets: on random groups of eight rows, each repacked
// kernel this processor can run (the NEON ones always, the SDOT ones with
// dotprod) agrees with the generic kernel within float rounding, and the
// two sets give the same bits, one column or four at a time: their
// integer sums are exact and their float steps the same. Under qemu -cpu
// max this is what tests the NEON kernels, which that model does not
// select.
func TestARM64RepackSets(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t)))
	sets := []map[quant.Type]*repackKernel{levelNEON.repack}
	if cpu.ARM64.HasASIMDDP {
		sets = append(sets, levelNEONDotProd.repack)
	}
	for typ, l := range repackLayouts {
		for _, nb := range []int{1, 2, 7, 40} {
			kc := newKernelCase(t, rng, typ, l, nb)
			want, _ := kc.run(genericRepack[typ])
			var first [4][]float32
			for si, set := range sets {
				one, four := kc.run(set[typ])
				for c := range 4 {
					requireCloseRows(t, want[c], one[c], int64(nb*l.aux.block))
					require.Equal(t, one[c], four[c], "%s nb=%d set %d column %d: four columns differ from one", typ, nb, si, c)
					if si == 0 {
						first[c] = one[c]
					} else {
						require.Equal(t, first[c], one[c], "%s nb=%d column %d: SDOT and NEON differ", typ, nb, c)
					}
				}
			}
		}
	}
}

// TestARM64GemmSets: the K-quant tiles of each set this processor can run
// (the NEON ones always, the SDOT ones with dotprod) are bit for bit the
// fast set's vec_dot (checkGemmTiles). Under qemu -cpu max this is what
// tests the NEON tiles, which that model does not select.
func TestARM64GemmSets(t *testing.T) {
	t.Run("neon", func(t *testing.T) { checkGemmTiles(t, levelNEON.kernels().gemm) })
	if cpu.ARM64.HasASIMDDP {
		t.Run("sdot", func(t *testing.T) { checkGemmTiles(t, levelNEONDotProd.kernels().gemm) })
	}
}
