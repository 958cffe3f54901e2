//go:build unix

package buffer

import (
	"fmt"
	"math"
	"os"
	"syscall"
	"unsafe"
)

// mapHost maps size bytes of zeroed memory (plus slack to align the first
// byte to align) with mmap, outside the Go heap.
func mapHost(size, align uint64) (mem, mapping []byte, err error) {
	total := size
	if page := uint64(os.Getpagesize()); align > page {
		total += align - page
	}
	if total < size || total > math.MaxInt {
		return nil, nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, size)
	}
	m, err := syscall.Mmap(-1, 0, int(total), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: mmap of %d bytes: %v", ErrTooLarge, total, err)
	}
	off := alignPad(uintptr(unsafe.Pointer(&m[0])), 0, align)
	return m[off : off+size : off+size], m, nil
}

func unmapHost(mapping []byte) error { return syscall.Munmap(mapping) }
