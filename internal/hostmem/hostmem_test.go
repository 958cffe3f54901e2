package hostmem

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// On the systems it reads, the figures are there and available memory is
// at most the total.
func TestPhysical(t *testing.T) {
	avail, total := Physical()
	switch runtime.GOOS {
	case "linux", "windows", "darwin":
		require.NotZero(t, total)
		require.LessOrEqual(t, avail, total)
	default:
		require.Zero(t, total)
	}
}
