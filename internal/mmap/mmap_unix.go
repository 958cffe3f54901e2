//go:build unix

package mmap

import (
	"errors"
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Anon maps size bytes of zeroed memory (plus slack to align the first
// byte to align) with mmap, outside the Go heap. The error wraps mmap's
// errno; ENOMEM is also ErrTooLarge.
func Anon(size, align uint64) (mem, mapping []byte, err error) {
	total := size
	if page := uint64(os.Getpagesize()); align > page {
		total += align - page
	}
	if total < size || total > math.MaxInt {
		return nil, nil, tooLarge{fmt.Errorf("%d bytes", size)}
	}
	m, err := unix.Mmap(-1, 0, int(total), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if errors.Is(err, unix.ENOMEM) {
		return nil, nil, tooLarge{fmt.Errorf("mmap of %d bytes: %w", total, err)}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("mmap of %d bytes: %w", total, err)
	}
	off := pad(uintptr(unsafe.Pointer(&m[0])), align)
	return m[off : off+size : off+size], m, nil
}

// Unmap releases a mapping Anon returned (its second result).
func Unmap(mapping []byte) error {
	if err := unix.Munmap(mapping); err != nil {
		return fmt.Errorf("munmap: %w", err)
	}
	return nil
}

// mapFile maps size bytes of f copy-on-write: until written, the pages
// are the page cache's, shared by every process mapping the model.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap of %d bytes: %w", size, err)
	}
	return m, func() error { return Unmap(m) }, nil
}

// DropPages drops the whole pages inside mem from the resident set
// (madvise MADV_DONTNEED) and returns how many bytes that was: mem stays
// mapped and then reads as zeros (anonymous memory) or as the file (a
// file mapping not written to). mem must be mmap'd memory.
func DropPages(mem []byte) uint64 {
	if len(mem) == 0 {
		return 0
	}
	page := uintptr(os.Getpagesize())
	skip := (page - uintptr(unsafe.Pointer(&mem[0]))%page) % page
	if uintptr(len(mem)) <= skip {
		return 0
	}
	n := (uintptr(len(mem)) - skip) &^ (page - 1)
	if n == 0 || unix.Madvise(mem[skip:skip+n], unix.MADV_DONTNEED) != nil {
		return 0
	}
	return uint64(n)
}
