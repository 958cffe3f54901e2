// Package mmap maps memory outside the Go heap: anonymous zeroed memory
// for host buffers (package buffer) and whole files copy-on-write for
// model weights (package gguf). It sits below both so that reading a GGUF
// file does not link the buffer layer.
package mmap

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"unsafe"
)

// ErrTooLarge reports a mapping the address space or the system refuses
// for its size. The errors that match it keep their own message and the
// system's error.
var ErrTooLarge = errors.New("mmap: mapping too large")

// tooLarge is err, also matching ErrTooLarge, with err's message alone so
// that a caller wrapping it with its own sentinel does not repeat itself.
type tooLarge struct{ err error }

func (e tooLarge) Error() string { return e.err.Error() }

func (e tooLarge) Unwrap() []error { return []error{ErrTooLarge, e.err} }

// File is a whole file mapped into memory copy-on-write: mmap
// MAP_PRIVATE on unix, a FILE_MAP_COPY view on windows, and a plain read
// into the Go heap where there is neither. Its pages come from the page
// cache, so a model file loaded through it costs no copy and no private
// memory; a page written (a device repacking weights in place) becomes
// this process's own copy, and the file never changes.
type File struct {
	data    []byte
	release func() error
	once    sync.Once
	err     error
}

// Open maps the file at path (opened read-only). An empty file gives an
// empty mapping.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("map %s: not a regular file", path)
	}
	size := fi.Size()
	if size == 0 {
		return &File{data: []byte{}, release: func() error { return nil }}, nil
	}
	if uint64(size) > math.MaxInt {
		return nil, tooLarge{fmt.Errorf("map %s: %d bytes", path, size)}
	}
	data, release, err := mapFile(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	return &File{data: data, release: release}, nil
}

// Bytes is the file's content. It stays valid until Close.
func (m *File) Bytes() []byte { return m.data }

// Close releases the mapping; Bytes must not be used afterwards. A second
// Close returns the first one's result.
func (m *File) Close() error {
	m.once.Do(func() {
		m.err = m.release()
		m.data = nil
	})
	return m.err
}

// Evict drops the resident pages wholly inside b, a part of Bytes that
// was never written, and returns how many bytes that was: later reads
// fault them back from the file. It does nothing for b outside the
// mapping, or where there is no mmap.
func (m *File) Evict(b []byte) uint64 {
	if len(b) == 0 || len(m.data) == 0 {
		return 0
	}
	lo, start := uintptr(unsafe.Pointer(&m.data[0])), uintptr(unsafe.Pointer(&b[0]))
	if start < lo || start+uintptr(len(b)) > lo+uintptr(len(m.data)) {
		return 0
	}
	return DropPages(b)
}

// pad is how many bytes after address addr the next multiple of align
// starts.
func pad(addr uintptr, align uint64) uint64 { return (align - uint64(addr)%align) % align }
