//go:build !purego

package cpu

import (
	"math"
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant"
)

// TestAVX2SetSelected: on a processor with AVX2, FMA and F16C the engines
// use the assembly (avx2, or a level above it), so the comparisons above
// test it rather than the generic set against itself.
func TestAVX2SetSelected(t *testing.T) {
	if !levelAVX2.supported() {
		t.Skip("the processor lacks AVX2, FMA or F16C")
	}
	best := bestLevel(levels)
	require.GreaterOrEqual(t, best.priority, levelAVX2.priority, "level %s chosen over avx2", best.name)
	require.Equal(t, best.name, fastKernels().name)
	// GGML_CPU_GENERIC=1 (a whole test run on the generic path) picks
	// the generic set for an Engine of default options; an explicit
	// Options.Generic always does.
	want := best.name
	if os.Getenv(EnvGeneric) == "1" {
		want = "generic"
	}
	e := New(Options{Threads: 1})
	defer e.Close()
	require.Equal(t, want, e.Kernels())
	g := New(Options{Threads: 1, Generic: true})
	defer g.Close()
	require.Equal(t, "generic", g.Kernels())
}

// haswellExact are the weight types whose AVX2 vec_dot gives the bits of
// ggml's haswell build (the same fused multiply-add per block in the same
// order, the same horizontal sum); the others sum in another order, a
// rounding apart (TestVecDotMatchesHaswell logs how often).
var haswellExact = []quant.Type{quant.F32, quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_1, quant.Q5_1, quant.Q4_K, quant.Q6_K}

// TestVecDotMatchesHaswell: the vec_dot of the best level that follows
// the haswell build (levelBuilds: the amx level's F32 follows
// sapphirerapids, TestMulMatF32MatchesGGML) against that build's on
// random rows of 256 to 2048 elements, its activations made by the
// level's from_float (the AVX builds' conversion): haswellExact bit for
// bit.
func TestVecDotMatchesHaswell(t *testing.T) {
	var fast *kernelSet
	for _, l := range byPriority(levels) {
		if fast == nil && levelBuilds[l.name] == "haswell" && l.supported() {
			fast = l.kernels()
		}
	}
	if fast == nil {
		t.Skip("no AVX2: the generic kernels are the x64 build's (quant's TestVecDotMatchesGenericBuild)")
	}
	lib, err := ggmlref.OpenVariant(reftest.Lib(t).Dir(), "haswell")
	require.NoError(t, err)
	defer lib.Close()
	rng := rand.New(rand.NewSource(testSeed(t)))
	for _, typ := range kernelTestTypes() {
		tr := fast.traits[typ]
		vdt := tr.vecDotType
		differ := 0
		const cases = 200
		for range cases {
			n := 256 * (1 + rng.Intn(8))
			x := make([]byte, typ.RowSize(int64(n)))
			_, err := quant.FromFloat(x, typ, mmRandF32s(rng, int64(n)))
			require.NoError(t, err)
			y := make([]byte, vdt.RowSize(int64(n)))
			require.NoError(t, fast.traits[vdt].fromFloat(y, mmRandF32s(rng, int64(n))))
			want, err := lib.VecDot(uint32(typ), int64(n), x, y)
			require.NoError(t, err)
			if got := tr.vecDot(n, x, y); math.Float32bits(got) != math.Float32bits(want) {
				require.NotContains(t, haswellExact, typ, "%s n=%d: %v, haswell %v", typ, n, got, want)
				differ++
			}
		}
		t.Logf("%s·%s: %d of %d differ from the haswell build", typ, vdt, differ, cases)
	}
}
