//go:build unix

package openvino

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// spillMap backs size bytes with an unlinked file in dir, mapped
// MAP_SHARED: file pages are reclaimable, anonymous ones only swappable
// (upstream's GGML_OPENVINO_SPILL_DIR). dir must be real storage, not a
// tmpfs. Verified on linux (the double); not on darwin.
func spillMap(dir string, size uint64) ([]byte, func() error, error) {
	f, err := os.CreateTemp(dir, fmt.Sprintf("ggml-ov-weights-%d-", os.Getpid()))
	if err != nil {
		return nil, nil, fmt.Errorf("openvino: GGML_OPENVINO_SPILL_DIR: %w", err)
	}
	defer f.Close()
	// Unlinked at once: the mapping keeps the file alive, and it vanishes
	// when the process ends.
	if err := os.Remove(f.Name()); err != nil {
		return nil, nil, fmt.Errorf("openvino: GGML_OPENVINO_SPILL_DIR: %w", err)
	}
	if err := f.Truncate(int64(size)); err != nil {
		return nil, nil, fmt.Errorf("openvino: GGML_OPENVINO_SPILL_DIR: ftruncate %d bytes in %s: %w", size, filepath.Clean(dir), err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("openvino: GGML_OPENVINO_SPILL_DIR: mmap %d bytes: %w", size, err)
	}
	return m, func() error { return syscall.Munmap(m) }, nil
}

// dropPages drops the whole pages inside mem (madvise MADV_DONTNEED): the
// mapping stays valid and reads as zeros (anonymous) or the file's content.
func dropPages(mem []byte) uint64 {
	if len(mem) == 0 {
		return 0
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&mem[0]))
	skip := (page - start%page) % page
	if uintptr(len(mem)) <= skip {
		return 0
	}
	n := (uintptr(len(mem)) - skip) &^ (page - 1)
	if n == 0 {
		return 0
	}
	if err := madvise(mem[skip:skip+n], syscall.MADV_DONTNEED); err != nil {
		return 0
	}
	return uint64(n)
}

func madvise(b []byte, advice int) error {
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(advice))
	if e != 0 {
		return e
	}
	return nil
}
