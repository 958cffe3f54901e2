package buffer

import (
	"fmt"
	"math"
)

// Limits of the graph allocator's planner, ggml's.
const (
	// maxFreeBlocks is how many free blocks one chunk tracks.
	maxFreeBlocks = 256
	// maxChunks is how many buffers one buffer type's memory is split into.
	maxChunks = 16
)

// address is a position in a planned memory: a chunk (one buffer) and a
// byte offset in it.
type address struct {
	chunk  int
	offset uint64
}

type freeBlock struct{ offset, size uint64 }

// chunk is the plan of one buffer: its free blocks, sorted by offset, the
// last one reaching to the chunk's (virtual) end, and the high-water mark.
type chunk struct {
	free    []freeBlock
	maxSize uint64
}

// dynAlloc plans where tensors go in the memory of one buffer type, without
// touching memory (ggml_dyn_tallocr): best fit among the free blocks, else
// the end of the chunk that wastes least, else a new chunk.
type dynAlloc struct {
	align, maxChunk uint64
	chunks          []*chunk
}

func newDynAlloc(align, maxSize uint64) *dynAlloc {
	return &dynAlloc{align: align, maxChunk: min(maxSize, math.MaxUint64/2)}
}

func (d *dynAlloc) reset() { d.chunks = d.chunks[:0] }

// alloc reserves size bytes (rounded up to the alignment).
func (d *dynAlloc) alloc(size uint64) (address, error) {
	size = alignUp(size, d.align)
	bestChunk, bestBlock := -1, -1
	// The best fitting block that is not a chunk's last. As in ggml the
	// best size restarts with every chunk, so ties go to later chunks.
	for c, ch := range d.chunks {
		bestSize := uint64(math.MaxUint64)
		for i, b := range ch.free[:max(len(ch.free)-1, 0)] {
			if b.size >= size && b.size <= bestSize {
				bestChunk, bestBlock, bestSize = c, i, b.size
			}
		}
	}
	if bestBlock < 0 {
		// A chunk's last block, preferring one the chunk's high-water
		// mark already covers with least to spare, else the one that
		// grows the chunk least.
		bestReuse := int64(math.MinInt64)
		for c, ch := range d.chunks {
			if len(ch.free) == 0 {
				continue
			}
			b := ch.free[len(ch.free)-1]
			reuse := int64(ch.maxSize - b.offset - size)
			betterReuse := bestReuse < 0 && reuse > bestReuse
			betterFit := reuse >= 0 && reuse < bestReuse
			if b.size >= size && (betterReuse || betterFit) {
				bestChunk, bestBlock, bestReuse = c, len(ch.free)-1, reuse
			}
		}
	}
	if bestBlock < 0 {
		if len(d.chunks) >= maxChunks {
			return address{}, fmt.Errorf("%w: %d bytes do not fit in %d buffers", ErrTooLarge, size, maxChunks)
		}
		ch := &chunk{free: []freeBlock{{0, max(size, d.maxChunk)}}}
		if len(d.chunks) == maxChunks-1 {
			// The last chunk is unbounded: a buffer type's allocation
			// decides whether it can be that large.
			ch.free[0].size = max(size, math.MaxUint64/2)
		}
		d.chunks = append(d.chunks, ch)
		bestChunk, bestBlock = len(d.chunks)-1, 0
	}
	ch := d.chunks[bestChunk]
	b := &ch.free[bestBlock]
	addr := address{bestChunk, b.offset}
	b.offset += size
	b.size -= size
	if b.size == 0 {
		ch.free = append(ch.free[:bestBlock], ch.free[bestBlock+1:]...)
	}
	ch.maxSize = max(ch.maxSize, addr.offset+size)
	return addr, nil
}

// release returns size bytes at addr to the free blocks, merging them with
// their neighbours.
func (d *dynAlloc) release(addr address, size uint64) error {
	size = alignUp(size, d.align)
	ch := d.chunks[addr.chunk]
	for i := range ch.free {
		b := &ch.free[i]
		if b.offset+b.size == addr.offset {
			b.size += size
			if i+1 < len(ch.free) && b.offset+b.size == ch.free[i+1].offset {
				b.size += ch.free[i+1].size
				ch.free = append(ch.free[:i+1], ch.free[i+2:]...)
			}
			return nil
		}
		if addr.offset+size == b.offset {
			b.offset = addr.offset
			b.size += size
			if i > 0 && ch.free[i-1].offset+ch.free[i-1].size == b.offset {
				ch.free[i-1].size += b.size
				ch.free = append(ch.free[:i], ch.free[i+1:]...)
			}
			return nil
		}
	}
	if len(ch.free) >= maxFreeBlocks {
		return fmt.Errorf("%w: more than %d free blocks in one buffer", ErrNoSpace, maxFreeBlocks)
	}
	i := 0
	for i < len(ch.free) && ch.free[i].offset < addr.offset {
		i++
	}
	ch.free = append(ch.free, freeBlock{})
	copy(ch.free[i+1:], ch.free[i:])
	ch.free[i] = freeBlock{addr.offset, size}
	return nil
}

// chunkSize is the high-water mark of chunk c, 0 if there is none.
func (d *dynAlloc) chunkSize(c int) uint64 {
	if c < len(d.chunks) {
		return d.chunks[c].maxSize
	}
	return 0
}

// total is the sum of the chunks' high-water marks.
func (d *dynAlloc) total() uint64 {
	var n uint64
	for _, ch := range d.chunks {
		n += ch.maxSize
	}
	return n
}
