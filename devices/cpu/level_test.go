package cpu

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// TestLevelChosen: the set in use is the best registered level the
// processor supports (the generic set where there is none), and with
// GGML_TEST_KERNELS set (as .ci/run does for each qemu model and for the
// generic builds) it is that one, so a machine or emulator that stopped
// reporting a feature cannot leave a level untested.
func TestLevelChosen(t *testing.T) {
	want := "generic"
	if l := bestLevel(levels); l != nil {
		want = l.name
	}
	require.Equal(t, want, fastKernels().name)
	if w := os.Getenv("GGML_TEST_KERNELS"); w != "" {
		require.Equal(t, w, want, "GGML_TEST_KERNELS: this processor selects %q (levels: %s)", want, Levels())
	}
	levelsLine := Levels()
	require.True(t, strings.HasSuffix(levelsLine, "generic"+levelState(true, chosen == genericKernels)), levelsLine)
	require.Equal(t, 1, strings.Count(levelsLine, "(in use)"), levelsLine)
	require.Contains(t, levelsLine, chosen.name+" (in use)")
	report := KernelReport()
	require.Contains(t, report, chosen.name+" (in use)")
	require.Contains(t, report, "vector primitives "+chosen.vec.name)
	t.Log(report)
}

// TestLevelsWellFormed checks every level this build registers, whether
// or not the processor runs it (building a set runs no assembly): names
// and priorities are distinct, each list names a type once, an exact tile
// has its edges once built, every repacked type has a layout and every
// interleave and aux fill a product that uses it. A new level's
// registrations are checked here on any machine of its architecture.
func TestLevelsWellFormed(t *testing.T) {
	names, priorities := map[string]bool{"generic": true}, map[int]string{}
	for _, l := range levels {
		require.False(t, names[l.name], "two levels named %q", l.name)
		names[l.name] = true
		require.Empty(t, priorities[l.priority], "levels %s and %s share priority %d", l.name, priorities[l.priority], l.priority)
		priorities[l.priority] = l.name
		require.Positive(t, l.priority, "%s", l.name)
		require.NotNil(t, l.supported, "%s", l.name)

		once := func(what string, typ quant.Type, seen map[quant.Type]bool) {
			require.False(t, seen[typ], "%s lists %s twice in %s", l.name, typ, what)
			seen[typ] = true
		}
		dots, rows, quantizers := map[quant.Type]bool{}, map[quant.Type]bool{}, map[quant.Type]bool{}
		for _, d := range l.dots {
			once("dots", d.typ, dots)
			require.NotNil(t, d.dot, "%s %s", l.name, d.typ)
		}
		for _, r := range l.rows {
			once("rows", r.typ, rows)
			require.True(t, dots[r.typ], "%s has vecDotRows of %s but not its vec_dot", l.name, r.typ)
		}
		for _, q := range l.quantizers {
			once("quantizers", q, quantizers)
			if l.supported() {
				require.NotNil(t, quant.FromFloatKernel(q), "%s runs here, but quant has no assembly %s conversion", l.name, q)
			}
		}
		s := l.kernels()
		require.Equal(t, l.name, s.name)
		require.Equal(t, l.vecName(), s.vec.name)
		for typ, g := range s.gemm {
			require.NotNil(t, g.tileCol, "%s %s tile has no one-column edge", l.name, typ)
			require.NotNil(t, g.one, "%s %s tile has no single edge", l.name, typ)
			require.True(t, g.pack != nil || g.tile != nil, "%s %s has no tile", l.name, typ)
		}
		for typ := range l.repack {
			require.NotNil(t, repackLayouts[typ], "%s repacks %s, which has no layout", l.name, typ)
		}
		for typ := range l.pack {
			require.NotNil(t, l.repack[typ], "%s interleaves %s, which it does not repack", l.name, typ)
		}
		for typ := range l.aux {
			var used bool
			for rt := range l.repack {
				used = used || repackLayouts[rt].aux.vdt == typ
			}
			require.True(t, used, "%s fills %s aux rows no repacked product reads", l.name, typ)
		}
	}
}
