//go:build !purego

package cpu

import (
	"os"
	"slices"
	"strings"
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

// TestF16CMatchesKernel: our CPUID reading agrees with the flags Linux
// reports for the processor.
func TestF16CMatchesKernel(t *testing.T) {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo to compare with: %v", err)
	}
	var flags []string
	for _, line := range strings.Split(string(info), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	require.NotEmpty(t, flags, "no flags line in /proc/cpuinfo")
	require.Equal(t, slices.Contains(flags, "f16c"), hasF16C())
}
