//go:build windows

package buffer

import (
	"fmt"
	"math"
	"syscall"
	"unsafe"
)

var (
	kernel32     = syscall.NewLazyDLL("kernel32.dll")
	virtualAlloc = kernel32.NewProc("VirtualAlloc")
	virtualFree  = kernel32.NewProc("VirtualFree")
)

const (
	memCommit     = 0x1000
	memReserve    = 0x2000
	memRelease    = 0x8000
	pageReadWrite = 0x04
	// allocationGranularity is where VirtualAlloc places allocations.
	allocationGranularity = 64 << 10
)

// mapHost commits size bytes of zeroed memory (plus slack to align the
// first byte to align) with VirtualAlloc, outside the Go heap.
func mapHost(size, align uint64) (mem, mapping []byte, err error) {
	total := size
	if align > allocationGranularity {
		total += align - allocationGranularity
	}
	if total < size || total > math.MaxInt {
		return nil, nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, size)
	}
	addr, _, callErr := virtualAlloc.Call(0, uintptr(total), memCommit|memReserve, pageReadWrite)
	if addr == 0 {
		return nil, nil, fmt.Errorf("%w: VirtualAlloc of %d bytes: %v", ErrTooLarge, total, callErr)
	}
	// The memory belongs to the OS, not the Go heap; the round trip
	// through uintptr that vet warns about is safe for it.
	m := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), total)
	off := alignPad(addr, 0, align)
	return m[off : off+size : off+size], m, nil
}

func unmapHost(mapping []byte) error {
	if r, _, err := virtualFree.Call(uintptr(unsafe.Pointer(&mapping[0])), 0, memRelease); r == 0 {
		return fmt.Errorf("buffer: VirtualFree: %v", err)
	}
	return nil
}
