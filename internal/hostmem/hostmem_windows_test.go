package hostmem

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestMemoryStatusExLayout: MEMORYSTATUSEX is 64 bytes, ullTotalPhys at 8
// and ullAvailPhys at 16.
func TestMemoryStatusExLayout(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(memoryStatusEx{}))
	require.Equal(t, uintptr(8), unsafe.Offsetof(memoryStatusEx{}.totalPhys))
	require.Equal(t, uintptr(16), unsafe.Offsetof(memoryStatusEx{}.availPhys))
}
