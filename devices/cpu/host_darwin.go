package cpu

import (
	"encoding/binary"
	"syscall"
)

// hostMemory is hw.memsize for both: as ggml on unix, all memory counts as
// free (the available figure needs host_statistics, a mach call).
func hostMemory() (free, total uint64) {
	s, err := syscall.Sysctl("hw.memsize")
	// Sysctl returns the raw 8-byte value as a string, minus one trailing
	// zero byte; put it back.
	if err != nil || len(s) > 8 {
		return 0, 0
	}
	var b [8]byte
	copy(b[:], s)
	total = binary.LittleEndian.Uint64(b[:])
	return total, total
}

func cpuModel() string {
	s, err := syscall.Sysctl("machdep.cpu.brand_string")
	if err != nil {
		return ""
	}
	return s
}
