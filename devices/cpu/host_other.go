//go:build !linux && !windows && !darwin

package cpu

// hostMemory is unknown (0, 0) on the remaining systems (the BSDs, plan9,
// wasm): reading it would need a further dependency.
func hostMemory() (free, total uint64) { return 0, 0 }

func cpuModel() string { return "" }
