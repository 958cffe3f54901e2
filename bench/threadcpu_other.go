//go:build !(linux || darwin || freebsd)

package bench

import "time"

// threadCPU reports no thread CPU time here: callers fall back to wall
// time.
func threadCPU() (time.Duration, bool) { return 0, false }
