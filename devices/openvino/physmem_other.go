//go:build !linux

package openvino

// physicalMemory is unknown (0) outside linux here; not verified.
func physicalMemory() uint64 { return 0 }
