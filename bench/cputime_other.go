//go:build !(linux || darwin || freebsd || netbsd || openbsd || windows)

package bench

import "time"

// processCPU is not read on this platform: the tables show no CPU times.
func processCPU() time.Duration { return 0 }
