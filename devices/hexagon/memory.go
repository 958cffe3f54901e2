package hexagon

import (
	"fmt"
	"log/slog"
	"sync"
	"unsafe"

	"github.com/ggml-go/ggml/devices/hexagon/internal/fastrpc"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
)

const pageSize = 4096

// block is one rpcmem allocation: host memory the DSP reaches through its
// fd once a session maps it. One block may be mapped into several sessions
// (upstream's clones); it is freed when its buffer is freed, after every
// mapping is undone. Verified on the double.
type block struct {
	lib    *fastrpc.Lib
	base   uintptr
	fd     int32
	size   uint64
	mem    []byte
	pinned bool

	mu     sync.Mutex
	maps   map[*session]bool // session -> extended
	freed  bool
	closer func() // removes the block from its device's list
}

// blockSize is the rpcmem size for a buffer of size bytes: rounded up to
// 4 KiB plus a 4 KiB guard page, and to 2 MiB for extended (DMA64)
// mappings of non-pinned memory.
func blockSize(size uint64, pinned, dma64 bool) uint64 {
	total := (size+pageSize-1)&^(pageSize-1) + pageSize
	if !pinned && dma64 {
		const align = 2 << 20
		total = (total + align - 1) &^ (align - 1)
	}
	return total
}

func allocBlock(lib *fastrpc.Lib, size uint64, pinned bool) (*block, error) {
	base, fd, err := lib.Alloc(size)
	if err != nil {
		return nil, err
	}
	// base is C memory, which the Go runtime neither moves nor frees.
	mem := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&base))), size)
	return &block{lib: lib, base: base, fd: fd, size: size, mem: mem, pinned: pinned, maps: map[*session]bool{}}, nil
}

// mapInto maps the block into s's domain: pinned memory with
// FASTRPC_MAP_FD, other memory with FD_DELAYED, or FD_DELAYED_EXTENDED
// when extended.
func (b *block) mapInto(s *session, extended bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return fmt.Errorf("hexagon: %s: buffer already freed", s.name)
	}
	if _, ok := b.maps[s]; ok {
		return nil
	}
	flags := uint32(fastrpc.MapFDDelayed)
	switch {
	case b.pinned:
		flags, extended = fastrpc.MapFD, false
	case extended:
		flags = fastrpc.MapFDDelayedExtended
	}
	if err := b.lib.Mmap(s.domainID, b.fd, b.base, b.size, flags); err != nil {
		return fmt.Errorf("hexagon: %s: fastrpc_mmap of %d bytes (fd %d, flags %d): %w", s.name, b.size, b.fd, flags, err)
	}
	b.maps[s] = extended
	s.addMapping(b)
	return nil
}

// extendedIn reports whether the block is mapped extended into s.
func (b *block) extendedIn(s *session) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.maps[s]
}

// unmapFrom undoes the mapping into s: the DSP drops its reference first
// (htp_iface_munmap, for memory it maps lazily), then FastRPC.
func (b *block) unmapFrom(s *session) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.unmapLocked(s)
}

func (b *block) unmapLocked(s *session) error {
	if _, ok := b.maps[s]; !ok {
		return nil
	}
	delete(b.maps, s)
	s.dropMapping(b)
	var err error
	if !b.pinned && s.started {
		if _, e := s.lib.Invoke(s.handle, htp.MunmapCall(uint32(b.fd))); e != nil {
			err = fmt.Errorf("hexagon: %s: %w (fd %d)", s.name, e, b.fd)
		}
	}
	if e := b.lib.Munmap(s.domainID, b.fd, b.base, b.size); e != nil && err == nil {
		err = fmt.Errorf("hexagon: %s: fastrpc_munmap (fd %d): %w", s.name, b.fd, e)
	}
	return err
}

// free unmaps the block from every session and releases it.
func (b *block) free() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return nil
	}
	var first error
	for s := range b.maps {
		if err := b.unmapLocked(s); err != nil && first == nil {
			first = err
		}
	}
	b.freed = true
	b.mem = nil
	b.lib.Free(b.base)
	if b.closer != nil {
		b.closer()
	}
	if first != nil {
		slog.Warn("hexagon: releasing a buffer", "err", first)
	}
	return first
}
