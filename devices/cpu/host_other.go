//go:build !linux && !windows

package cpu

// hostMemory is unknown (0, 0) where reading it would need cgo or a
// further dependency (darwin's sysctl hw.memsize).
func hostMemory() (free, total uint64) { return 0, 0 }

func cpuModel() string { return "" }
