//go:build !unix && !windows

package buffer

import (
	"fmt"
	"math"
	"unsafe"
)

// mapHost takes the memory from the Go heap where there is no mmap or
// VirtualAlloc (js, wasip1, plan9): the buffer keeps it alive.
func mapHost(size, align uint64) (mem, mapping []byte, err error) {
	total := size + align - 1
	if total < size || total > math.MaxInt {
		return nil, nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, size)
	}
	m := make([]byte, total)
	off := alignPad(uintptr(unsafe.Pointer(&m[0])), 0, align)
	return m[off : off+size : off+size], m, nil
}

func unmapHost([]byte) error { return nil }
