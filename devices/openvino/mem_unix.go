//go:build unix

package openvino

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// spillKeeps reports whether spillMap's memory keeps its contents when
// its pages are dropped (MADV_DONTNEED on a shared file mapping refills
// from the file).
const spillKeeps = true

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
