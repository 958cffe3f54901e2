package cpu

import "os"

// hostMemory reads /proc/meminfo rather than sysinfo(2) (unix.Sysinfo):
// sysinfo's freeram leaves out the page cache the kernel would give back,
// which MemAvailable counts.
func hostMemory() (free, total uint64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	return parseMeminfo(f)
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	return parseCPUModel(f)
}
