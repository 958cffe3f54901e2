//go:build !purego

package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAVX2SetSelected: on a processor with AVX2, FMA and F16C the engines
// use the assembly, so the comparisons above test it rather than the
// generic set against itself.
func TestAVX2SetSelected(t *testing.T) {
	if !hasAVX2Set() {
		t.Skip("the processor lacks AVX2, FMA or F16C")
	}
	require.Equal(t, "avx2", fastKernels().name)
	e := New(Options{Threads: 1})
	defer e.Close()
	require.Equal(t, "avx2", e.Kernels())
}
