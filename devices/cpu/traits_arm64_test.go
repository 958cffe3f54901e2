//go:build !purego

package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"
)

// TestARM64SetSelected: the engines use the assembly, with dotprod exactly
// where the processor has it, so the comparisons in traits_test.go test
// the set this processor (or qemu's -cpu model) selects.
func TestARM64SetSelected(t *testing.T) {
	want := "neon"
	if cpu.ARM64.HasASIMDDP {
		want = "neon-dotprod"
	}
	t.Logf("ASIMDDP %v, ASIMDHP %v: kernel set %q", cpu.ARM64.HasASIMDDP, cpu.ARM64.HasASIMDHP, fastKernels().name)
	require.Equal(t, want, fastKernels().name)
	e := New(Options{Threads: 1})
	defer e.Close()
	require.Equal(t, want, e.Kernels())
}
