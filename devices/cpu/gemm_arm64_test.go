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
// set (so gemm_test.go and repack_test.go test them rather than finding
// no types), the repacked ones with dotprod exactly where the processor
// has it.
func TestARM64GemmSelected(t *testing.T) {
	require.NotNil(t, archGemm[quant.F32], "no tiled F32 kernels")
	want, name := neonRepack, "neon"
	if cpu.ARM64.HasASIMDDP {
		want, name = sdotRepack, "sdot"
	}
	require.Equal(t, reflect.ValueOf(want).Pointer(), reflect.ValueOf(archRepack).Pointer(), "the repacked kernels are not the %s set", name)
	for typ := range repackLayouts {
		require.NotNil(t, archRepack[typ], "%s has no repacked kernels", typ)
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
	sets := []map[quant.Type]*repackKernel{neonRepack}
	if cpu.ARM64.HasASIMDDP {
		sets = append(sets, sdotRepack)
	}
	for typ, l := range repackLayouts {
		for _, nb := range []int{1, 2, 7, 40} {
			n := l.aux.block * nb
			rs := int(typ.RowSize(int64(n)))
			plain, err := quant.Quantize(typ, mmRandF32s(rng, int64(8*n)), 8, n, nil)
			require.NoError(t, err)
			x := make([]byte, l.groupSize(uint64(len(plain))))
			l.pack(x, plain, rs)
			var ys, auxs [4][]byte
			for c := range 4 {
				ys[c] = make([]byte, l.aux.vdt.RowSize(int64(n)))
				require.NoError(t, genericKernels.traits[l.aux.vdt].fromFloat(ys[c], mmRandF32s(rng, int64(n))))
				auxs[c] = make([]byte, nb*l.aux.size)
				l.aux.fill(auxs[c], ys[c], nb)
			}
			var first [4][]float32
			for si, set := range sets {
				k := set[typ]
				var four [4][]float32
				for c := range 4 {
					four[c] = make([]float32, 8)
				}
				k.four(nb, x, &ys, &auxs, &four)
				for c := range 4 {
					want, one := make([]float32, 8), make([]float32, 8)
					genericRepack[typ].one(nb, x, ys[c], auxs[c], want)
					k.one(nb, x, ys[c], auxs[c], one)
					requireCloseRows(t, want, one, int64(n))
					require.Equal(t, one, four[c], "%s nb=%d set %d column %d: four columns differ from one", typ, nb, si, c)
					if si == 0 {
						first[c] = one
					} else {
						require.Equal(t, first[c], one, "%s nb=%d column %d: SDOT and NEON differ", typ, nb, c)
					}
				}
			}
		}
	}
}
