//go:build !linux && !windows && !darwin

package hostmem

// Physical is unknown (0, 0) on the remaining systems (the BSDs, plan9,
// wasm): reading it would need a further dependency.
func Physical() (avail, total uint64) { return 0, 0 }
