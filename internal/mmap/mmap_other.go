//go:build !unix && !windows

package mmap

import (
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"
)

// Anon takes the memory from the Go heap where there is no mmap or
// VirtualAlloc (js, wasip1, plan9): the buffer keeps it alive.
func Anon(size, align uint64) (mem, mapping []byte, err error) {
	total := size + align - 1
	if total < size || total > math.MaxInt {
		return nil, nil, tooLarge{fmt.Errorf("%d bytes", size)}
	}
	m := make([]byte, total)
	off := pad(uintptr(unsafe.Pointer(&m[0])), align)
	return m[off : off+size : off+size], m, nil
}

// Unmap releases a mapping Anon returned (its second result).
func Unmap([]byte) error { return nil }

// mapFile reads the file into the Go heap: there is no mmap here.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	m := make([]byte, size)
	if _, err := io.ReadFull(f, m); err != nil {
		return nil, nil, err
	}
	return m, func() error { return nil }, nil
}

// DropPages does nothing where there is no mmap.
func DropPages([]byte) uint64 { return 0 }
