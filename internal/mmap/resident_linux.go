package mmap

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Resident is how many bytes of the pages that mem touches are in the
// resident set (mincore), for memory diagnostics: the whole first and last
// pages count when resident. 0 when mem is empty or not mmap'd memory.
func Resident(mem []byte) uint64 {
	if len(mem) == 0 {
		return 0
	}
	page := uintptr(os.Getpagesize())
	base := uintptr(unsafe.Pointer(&mem[0]))
	start := base &^ (page - 1)
	pages := (base + uintptr(len(mem)) - start + page - 1) / page
	vec := make([]byte, pages)
	// The page-aligned span is mapped wherever mem is (mappings are whole
	// pages); mincore reads only its addresses.
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, start, pages*page, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0
	}
	var n uint64
	for _, v := range vec {
		n += uint64(v & 1)
	}
	return n * uint64(page)
}
