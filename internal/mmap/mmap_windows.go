//go:build windows

package mmap

import (
	"errors"
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// allocationGranularity is where VirtualAlloc places allocations.
const allocationGranularity = 64 << 10

// Anon commits size bytes of zeroed memory (plus slack to align the
// first byte to align) with VirtualAlloc, outside the Go heap. The error
// wraps the Windows error; ERROR_NOT_ENOUGH_MEMORY and
// ERROR_COMMITMENT_LIMIT are also ErrTooLarge.
func Anon(size, align uint64) (mem, mapping []byte, err error) {
	total := size
	if align > allocationGranularity {
		total += align - allocationGranularity
	}
	if total < size || total > math.MaxInt {
		return nil, nil, tooLarge{fmt.Errorf("%d bytes", size)}
	}
	addr, err := windows.VirtualAlloc(0, uintptr(total), windows.MEM_COMMIT|windows.MEM_RESERVE, windows.PAGE_READWRITE)
	if errors.Is(err, windows.ERROR_NOT_ENOUGH_MEMORY) || errors.Is(err, windows.ERROR_COMMITMENT_LIMIT) {
		return nil, nil, tooLarge{fmt.Errorf("VirtualAlloc of %d bytes: %w", total, err)}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("VirtualAlloc of %d bytes: %w", total, err)
	}
	// The memory belongs to the OS, not the Go heap; the round trip
	// through uintptr that vet warns about is safe for it.
	m := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), total)
	off := pad(addr, align)
	return m[off : off+size : off+size], m, nil
}

// Unmap releases a mapping Anon returned (its second result).
func Unmap(mapping []byte) error {
	if err := windows.VirtualFree(uintptr(unsafe.Pointer(&mapping[0])), 0, windows.MEM_RELEASE); err != nil {
		return fmt.Errorf("VirtualFree: %w", err)
	}
	return nil
}

// mapFile maps size bytes of f copy-on-write. The mapping object can be
// closed at once: the view keeps the section alive until UnmapViewOfFile.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	h, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_WRITECOPY, 0, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("CreateFileMapping: %w", err)
	}
	defer windows.CloseHandle(h)
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_COPY, 0, 0, uintptr(size))
	if err != nil {
		return nil, nil, fmt.Errorf("MapViewOfFile of %d bytes: %w", size, err)
	}
	// The view belongs to the OS, not the Go heap (see Anon).
	m := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), size)
	return m, func() error {
		if err := windows.UnmapViewOfFile(addr); err != nil {
			return fmt.Errorf("UnmapViewOfFile: %w", err)
		}
		return nil
	}, nil
}

// DropPages does nothing on windows (no MADV_DONTNEED for mapped views).
func DropPages([]byte) uint64 { return 0 }
