package hostmem

import "syscall"

// Physical is sysinfo's total RAM for both figures (sysconf's
// _SC_PHYS_PAGES times the page size, as ggml on unix, which counts all
// of it as available), or 0, 0 when the call fails.
func Physical() (avail, total uint64) {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0, 0
	}
	total = uint64(si.Totalram) * uint64(si.Unit)
	return total, total
}
