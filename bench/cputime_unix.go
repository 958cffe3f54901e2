//go:build linux || darwin || freebsd || netbsd || openbsd

package bench

import (
	"syscall"
	"time"
)

// processCPU is the user and system time of every thread of the process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
