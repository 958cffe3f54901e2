package buffer

import (
	"fmt"
	"math"
	"os"
	"sync"
)

// MappedFile is a whole file mapped into memory copy-on-write: mmap
// MAP_PRIVATE on unix, a FILE_MAP_COPY view on windows, and a plain read
// into the Go heap where there is neither. Its pages come from the page
// cache, so a model file loaded through it costs no copy and no private
// memory; a page written (a device repacking weights in place) becomes
// this process's own copy, and the file never changes.
type MappedFile struct {
	data    []byte
	release func() error
	once    sync.Once
	err     error
}

// MapFile maps the file at path (opened read-only). An empty file gives an
// empty mapping.
func MapFile(path string) (*MappedFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("buffer: map %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("buffer: map %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: map %s: not a regular file", ErrArgument, path)
	}
	size := fi.Size()
	if size == 0 {
		return &MappedFile{data: []byte{}, release: func() error { return nil }}, nil
	}
	if uint64(size) > math.MaxInt {
		return nil, fmt.Errorf("%w: map %s: %d bytes", ErrTooLarge, path, size)
	}
	data, release, err := mapFile(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("buffer: map %s: %w", path, err)
	}
	return &MappedFile{data: data, release: release}, nil
}

// Bytes is the file's content. It stays valid until Close.
func (m *MappedFile) Bytes() []byte { return m.data }

// Close releases the mapping; Bytes must not be used afterwards. A second
// Close returns the first one's result.
func (m *MappedFile) Close() error {
	m.once.Do(func() {
		m.err = m.release()
		m.data = nil
	})
	return m.err
}
