package cpu

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestMemoryStatusExLayout: MEMORYSTATUSEX is 64 bytes, ullTotalPhys at 8.
func TestMemoryStatusExLayout(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(memoryStatusEx{}))
	require.Equal(t, uintptr(8), unsafe.Offsetof(memoryStatusEx{}.totalPhys))
	free, total := hostMemory()
	require.NotZero(t, total)
	require.LessOrEqual(t, free, total)
}
