//go:build !linux

package mmap

// Resident is 0 off linux (the diagnostic reads mincore there only).
func Resident([]byte) uint64 { return 0 }

// CopiedOnWrite cannot tell off linux.
func CopiedOnWrite([]byte) (uint64, bool) { return 0, false }

// MappedResident cannot tell off linux.
func MappedResident([]byte) (uint64, bool) { return 0, false }
