package openvino

import "syscall"

// physicalMemory is the host's RAM (sysconf(_SC_PHYS_PAGES) * page size,
// as upstream).
func physicalMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
