package cpu

import "golang.org/x/sys/unix"

// hostMemory is hw.memsize for both: as ggml on unix, all memory counts as
// free (the available figure needs host_statistics, a mach call).
func hostMemory() (free, total uint64) {
	total, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0, 0
	}
	return total, total
}

func cpuModel() string {
	s, err := unix.Sysctl("machdep.cpu.brand_string")
	if err != nil {
		return ""
	}
	return s
}
