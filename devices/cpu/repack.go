package cpu

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Repacked weights, as ggml's CPU_REPACK extra buffer type: a weight set
// into a RepackBufferType buffer is stored with groups of rows
// interleaved block by block, so that a matrix product reads several rows'
// blocks with one load and sums them in separate vector lanes, without a
// horizontal sum per output. What is set is what is read back: GetTensor
// undoes the interleave. Only MUL_MAT reads such a tensor (SupportsOp
// refuses every other use), and only as its src0, a 2-D weight against F32
// activations.

// repackLayout is one type's interleaved layout: groups of rows rows, each
// group the same size as the rows it holds, so a tensor keeps its size and
// group g sits where its rows sat.
type repackLayout struct {
	typ  quant.Type
	rows int
	// pack writes the interleave of the rows plain rows in src (rowSize
	// bytes each) into dst; unpack undoes it (nil for a layout only
	// products make, on the fly).
	pack, unpack func(dst, src []byte, rowSize int)
	// packedSize is the size of a group of plain size bytes once
	// interleaved; nil: the same.
	packedSize func(plain uint64) uint64
	// aux is what the kernels need of the activations.
	aux *actAux
}

// groupSize is the interleaved size of a group of plain bytes.
func (l *repackLayout) groupSize(plain uint64) uint64 {
	if l.packedSize == nil {
		return plain
	}
	return l.packedSize(plain)
}

// repackLayouts are the types a RepackBufferType buffer takes.
var repackLayouts = map[quant.Type]*repackLayout{
	quant.Q4_0:   x8Layout(quant.Q4_0, 18),
	quant.Q8_0:   x8Layout(quant.Q8_0, 34),
	quant.IQ4_NL: x8Layout(quant.IQ4_NL, 18),
}

// ErrNotRepackable reports a tensor a RepackBufferType buffer cannot hold.
// errors.Is also matches it to errors.ErrUnsupported.
var ErrNotRepackable = fmt.Errorf("cpu: tensor cannot be repacked: %w", errors.ErrUnsupported)

// layoutFor returns t's repacked layout: t is dense, not a view, of a type
// with a layout, with whole groups of rows in each matrix.
func layoutFor(t *graph.Tensor) (*repackLayout, error) {
	l := repackLayouts[t.Type]
	switch {
	case l == nil:
		return nil, fmt.Errorf("%w: %s has type %s (repacked: Q4_0, Q8_0, IQ4_NL)", ErrNotRepackable, t.Name, t.Type)
	case t.ViewSrc != nil:
		return nil, fmt.Errorf("%w: %s is a view", ErrNotRepackable, t.Name)
	case t.Ne[1]%int64(l.rows) != 0:
		return nil, fmt.Errorf("%w: %s has %d rows, not a multiple of %d", ErrNotRepackable, t.Name, t.Ne[1], l.rows)
	case !t.IsContiguous():
		return nil, fmt.Errorf("%w: %s is not contiguous", ErrNotRepackable, t.Name)
	}
	return l, nil
}

// repackType is the buffer type behind RepackBufferType.
type repackType struct{}

var repackBufferType = &repackType{}

// RepackBufferType is the CPU's extra buffer type for weights
// ("CPU_REPACK", ggml_backend_cpu_repack_buffer_type): Q4_0, Q8_0 and
// IQ4_NL weights whose row count is a multiple of 8 are stored with eight
// rows interleaved, which the matrix products read faster. Placing any other tensor in it is
// an error wrapping ErrNotRepackable. The CPU device lists it in
// ExtraBufferTypes.
func RepackBufferType() buffer.Type { return repackBufferType }

func (*repackType) Name() string { return "CPU_REPACK" }

// Alignment is 64, a cache line: each group of rows starts one.
func (*repackType) Alignment() uint64 { return 64 }

func (*repackType) MaxSize() uint64 { return math.MaxInt64 }

// AllocSize is the tensor's size: the interleave moves bytes, it adds none.
func (*repackType) AllocSize(t *graph.Tensor) uint64 { return t.NBytes() }

// IsHost is false: the bytes are not in ggml's layout, so tensors get no
// Tensor.Data, and the scheduler copies nothing out of them directly.
func (*repackType) IsHost() bool { return false }

func (*repackType) DeviceName() string { return "CPU" }

// Alloc returns a buffer of size bytes of zeroed memory.
func (rt *repackType) Alloc(size uint64) (buffer.Buffer, error) {
	if size > rt.MaxSize() {
		return nil, fmt.Errorf("%w: %d bytes", buffer.ErrTooLarge, size)
	}
	st := &repackStorage{}
	if size > 0 {
		raw := make([]byte, size+rt.Alignment())
		pad := (rt.Alignment() - uint64(uintptr(unsafe.Pointer(&raw[0])))%rt.Alignment()) % rt.Alignment()
		st.mem = raw[pad : pad+size : pad+size]
	}
	return buffer.New(rt, st, size)
}

// repackStorage is the memory of a repack buffer and the layout of each
// tensor placed in it.
type repackStorage struct {
	mem     []byte
	mu      sync.RWMutex
	layouts map[*graph.Tensor]*repackLayout
}

func (s *repackStorage) Bytes() []byte { return s.mem }

func (s *repackStorage) Base() uintptr { return buffer.BytesBase(s.mem) }

func (s *repackStorage) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem, s.layouts = nil, nil
	return nil
}

// InitTensor refuses what cannot be repacked (ggml's init_tensor finds no
// repack traits for it) and records the layout of what can. A view needs
// nothing: its bytes are read and written as ranges of its source, and no
// operation takes it (SupportsOp).
func (s *repackStorage) InitTensor(t *graph.Tensor, _ uint64) error {
	if t.ViewSrc != nil {
		return nil
	}
	l, err := layoutFor(t)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.layouts == nil {
		s.layouts = map[*graph.Tensor]*repackLayout{}
	}
	s.layouts[t] = l
	return nil
}

// Reset forgets the layouts with the tensors.
func (s *repackStorage) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.layouts)
	return nil
}

// owner turns a range of view t (at its place at) into the same range of
// its source.
func owner(t *graph.Tensor, at, offset uint64) (*graph.Tensor, uint64, uint64) {
	if t.ViewSrc == nil {
		return t, at, offset
	}
	return t.ViewSrc, at - t.ViewOffs, offset + t.ViewOffs
}

func (s *repackStorage) layout(t *graph.Tensor) (*repackLayout, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.layouts[t]
	if l == nil {
		return nil, fmt.Errorf("%w: %s is not placed in this buffer", ErrNotRepackable, t.Name)
	}
	return l, nil
}

// groups returns the byte range of t's memory (placed at at) covering
// [offset, offset+n) in whole groups of rows, and the group size.
func groups(t *graph.Tensor, l *repackLayout, at, offset, n uint64) (lo, hi, size uint64) {
	size = uint64(l.rows) * t.Nb[1]
	lo = offset / size * size
	hi = min((offset+n+size-1)/size*size, t.NBytes())
	return at + lo, at + hi, size
}

// SetTensor interleaves data into t. A write that does not cover whole
// groups of rows first unpacks the groups it touches, so any range may be
// set, in any order.
func (s *repackStorage) SetTensor(t *graph.Tensor, _ buffer.Usage, at, offset uint64, data []byte) error {
	t, at, offset = owner(t, at, offset)
	l, err := s.layout(t)
	if err != nil {
		return err
	}
	lo, hi, size := groups(t, l, at, offset, uint64(len(data)))
	plain := data
	if lo != at+offset || hi != at+offset+uint64(len(data)) {
		plain = make([]byte, hi-lo)
		s.unpackRange(l, t, plain, lo, hi, size)
		copy(plain[at+offset-lo:], data)
	}
	rs := int(t.Nb[1])
	for g := lo; g < hi; g += size {
		l.pack(s.mem[g:g+size], plain[g-lo:g-lo+size], rs)
	}
	return nil
}

// GetTensor reads t's bytes in ggml's layout.
func (s *repackStorage) GetTensor(t *graph.Tensor, _ buffer.Usage, at, offset uint64, data []byte) error {
	t, at, offset = owner(t, at, offset)
	l, err := s.layout(t)
	if err != nil {
		return err
	}
	lo, hi, size := groups(t, l, at, offset, uint64(len(data)))
	plain := make([]byte, hi-lo)
	s.unpackRange(l, t, plain, lo, hi, size)
	copy(data, plain[at+offset-lo:])
	return nil
}

func (s *repackStorage) unpackRange(l *repackLayout, t *graph.Tensor, plain []byte, lo, hi, size uint64) {
	rs := int(t.Nb[1])
	for g := lo; g < hi; g += size {
		l.unpack(plain[g-lo:g-lo+size], s.mem[g:g+size], rs)
	}
}

// repacked is a weight in a repack buffer as the products read it.
type repacked struct {
	layout *repackLayout
	data   []byte // the interleaved bytes, t.NBytes() long
}

// repackedOf returns t's interleaved bytes when t is placed in a repack
// buffer.
func repackedOf(t *graph.Tensor) (*repacked, bool) {
	if t == nil || t.Buffer == nil || t.ViewSrc != nil {
		return nil, false
	}
	buf, ok := t.Buffer.(buffer.Buffer)
	if !ok || buf.Type() != RepackBufferType() {
		return nil, false
	}
	st, at, err := buffer.Locate(t)
	if err != nil {
		return nil, false
	}
	s, ok := st.(*repackStorage)
	if !ok {
		return nil, false
	}
	l, err := s.layout(t)
	if err != nil {
		return nil, false
	}
	n := t.NBytes()
	return &repacked{layout: l, data: s.mem[at : at+n : at+n]}, true
}

// inRepackBuffer reports whether t's memory is in a repack buffer.
func inRepackBuffer(t *graph.Tensor) bool {
	// Host memory is never repacked (IsHost is false), and checking it
	// first keeps the buffer's interface call out of every node's
	// dispatch: this runs for each node and each of its sources.
	if t == nil || t.Data != nil {
		return false
	}
	if t.ViewSrc != nil {
		t = t.ViewSrc
	}
	buf, ok := t.Buffer.(buffer.Buffer)
	return ok && buf.Type() == RepackBufferType()
}
