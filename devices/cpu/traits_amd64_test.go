//go:build !purego

package cpu

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
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
