//go:build unix

package buffer

import (
	"errors"
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapHost maps size bytes of zeroed memory (plus slack to align the first
// byte to align) with mmap, outside the Go heap. The error wraps mmap's
// errno; ENOMEM is also ErrTooLarge.
func mapHost(size, align uint64) (mem, mapping []byte, err error) {
	total := size
	if page := uint64(os.Getpagesize()); align > page {
		total += align - page
	}
	if total < size || total > math.MaxInt {
		return nil, nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, size)
	}
	m, err := unix.Mmap(-1, 0, int(total), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if errors.Is(err, unix.ENOMEM) {
		return nil, nil, fmt.Errorf("%w: mmap of %d bytes: %w", ErrTooLarge, total, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("buffer: mmap of %d bytes: %w", total, err)
	}
	off := alignPad(uintptr(unsafe.Pointer(&m[0])), 0, align)
	return m[off : off+size : off+size], m, nil
}

func unmapHost(mapping []byte) error {
	if err := unix.Munmap(mapping); err != nil {
		return fmt.Errorf("buffer: munmap: %w", err)
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
	return m, func() error { return unmapHost(m) }, nil
}
