//go:build !linux

package mmap

// Resident is 0 off linux (the diagnostic reads mincore there only).
func Resident([]byte) uint64 { return 0 }
