package hostmem

import "golang.org/x/sys/unix"

// Physical is hw.memsize for both figures: as ggml on unix, all memory
// counts as available (the available figure needs host_statistics, a
// mach call), or 0, 0 when the sysctl fails.
func Physical() (avail, total uint64) {
	total, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0, 0
	}
	return total, total
}
