package buffer

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ggml-go/ggml/graph"
)

// Storage is the memory behind a buffer, as a device provides it: a
// HostStorage (memory the CPU addresses) or a DeviceStorage (memory reached
// by copies). New wraps it in a Buffer that checks every offset and range
// before calling it, so its methods only ever see ranges inside the buffer.
// Optional interfaces (TensorInitializer, TensorIO, TensorCopier, Resetter)
// add per-tensor behaviour; the buffer finds them by type assertion.
type Storage interface {
	// Base is the address of the first byte (a device address for device
	// memory), or 0 for an empty buffer.
	Base() uintptr
	// Release frees the memory. It is called once, by Free, or by the
	// garbage collector if the buffer is dropped without Free.
	Release() error
}

// HostStorage is Storage the CPU addresses directly.
type HostStorage interface {
	Storage
	// Bytes is the memory, at least the buffer's size long. It must stay
	// valid and in place until Release.
	Bytes() []byte
}

// DeviceStorage is Storage reached through copies.
type DeviceStorage interface {
	Storage
	// Write copies data to byte offset at.
	Write(at uint64, data []byte) error
	// Read copies from byte offset at into data.
	Read(at uint64, data []byte) error
	// Fill sets size bytes from byte offset at to value.
	Fill(at, size uint64, value byte) error
}

// TensorInitializer is Storage that keeps per-tensor state, as ggml's
// init_tensor (a repacking device attaches its layout in Tensor.Extra). It
// is called, with the buffer locked, when a tensor is placed at byte offset
// at or a view initialized; it must not call back into the buffer.
type TensorInitializer interface {
	InitTensor(t *graph.Tensor, at uint64) error
}

// TensorIO is Storage whose tensor contents are not a plain byte copy: a
// device repacking weights into its own layout as they are set (the
// Hexagon backend does for WEIGHTS buffers). The buffer calls it, instead of
// copying bytes, for every tensor set and get, with the tensor's position
// at, the offset within the tensor, and the buffer's usage; the ranges are
// already checked.
type TensorIO interface {
	SetTensor(t *graph.Tensor, u Usage, at, offset uint64, data []byte) error
	GetTensor(t *graph.Tensor, u Usage, at, offset uint64, data []byte) error
}

// TensorCopier is Storage with a copy of its own into a tensor placed at
// byte offset at (device to device, say). It reports false when it cannot
// copy from src, and the buffer then copies through host memory.
type TensorCopier interface {
	CopyTensor(src, dst *graph.Tensor, at uint64) (bool, error)
}

// Resetter is Storage that drops per-tensor state when its buffer is reset.
type Resetter interface {
	Reset() error
}

// extent is where a tensor lives in a buffer.
type extent struct{ at, size uint64 }

// checked is the Buffer New returns: the bounds, alignment and lifetime
// checks around a device's Storage.
type checked struct {
	typ   Type
	st    Storage
	mem   []byte        // the memory of a HostStorage, nil after Free
	dev   DeviceStorage // the storage when it is not host memory, else nil
	io    TensorIO      // the storage's TensorIO, or nil
	size  uint64
	base  uintptr
	data  bool // placed tensors get Tensor.Data
	usage atomic.Int32

	mu      sync.RWMutex
	freed   bool
	placed  map[*graph.Tensor]extent
	views   map[*graph.Tensor]struct{}
	cleanup runtime.Cleanup
}

// New returns a Buffer of typ and size bytes backed by st, which must be a
// HostStorage (required when typ.IsHost()) of at least size bytes or a
// DeviceStorage. Devices call it from their Type's Alloc. If the buffer is
// dropped without Free, the garbage collector releases st, which therefore
// must not refer to the buffer.
func New(typ Type, st Storage, size uint64) (Buffer, error) {
	if typ == nil || st == nil {
		return nil, fmt.Errorf("%w: nil type or storage", ErrArgument)
	}
	if a := typ.Alignment(); a == 0 || a&(a-1) != 0 {
		return nil, fmt.Errorf("%w: %s alignment %d is not a power of two", ErrArgument, typ.Name(), a)
	}
	b := &checked{typ: typ, st: st, size: size, base: st.Base(),
		placed: map[*graph.Tensor]extent{}, views: map[*graph.Tensor]struct{}{}}
	switch s := st.(type) {
	case HostStorage:
		b.mem = s.Bytes()
		if uint64(len(b.mem)) < size {
			return nil, fmt.Errorf("%w: %d bytes of host storage for a buffer of %d", ErrArgument, len(b.mem), size)
		}
		b.mem = b.mem[:size:size]
		b.data = typ.IsHost()
	case DeviceStorage:
		if typ.IsHost() {
			return nil, fmt.Errorf("%w: host type %s needs host storage", ErrArgument, typ.Name())
		}
		b.dev = s
	default:
		return nil, fmt.Errorf("%w: %T is neither HostStorage nor DeviceStorage", ErrArgument, st)
	}
	b.io, _ = st.(TensorIO)
	b.cleanup = runtime.AddCleanup(b, func(st Storage) { _ = st.Release() }, st)
	return b, nil
}

func (b *checked) Name() string     { return b.typ.Name() }
func (b *checked) IsHost() bool     { return b.typ.IsHost() }
func (b *checked) Type() Type       { return b.typ }
func (b *checked) Base() uintptr    { return b.base }
func (b *checked) Size() uint64     { return b.size }
func (b *checked) Usage() Usage     { return Usage(b.usage.Load()) }
func (b *checked) SetUsage(u Usage) { b.usage.Store(int32(u)) }
func (b *checked) String() string   { return fmt.Sprintf("%s buffer of %d bytes", b.typ.Name(), b.size) }
func (b *checked) errFreed() error  { return fmt.Errorf("%w: %s", ErrFreed, b) }

// locate finds t's memory: its first byte's offset and its size. The
// caller holds the lock.
func (b *checked) locate(t *graph.Tensor) (at, n uint64, err error) {
	if t == nil {
		return 0, 0, fmt.Errorf("%w: nil tensor", ErrArgument)
	}
	if n, err = tensorBytes(t); err != nil {
		return 0, 0, err
	}
	owner, offs := t, uint64(0)
	if t.ViewSrc != nil {
		owner, offs = t.ViewSrc, t.ViewOffs
	}
	e, ok := b.placed[owner]
	if !ok {
		return 0, 0, fmt.Errorf("%w: %s (%s)", ErrNotPlaced, owner, b)
	}
	if n == 0 {
		// An empty view may lie anywhere, past its source's end too, as
		// graph and ggml allow; it has no byte to reach.
		return e.at + min(offs, e.size), 0, nil
	}
	if offs > e.size || n > e.size-offs {
		return 0, 0, fmt.Errorf("%w: %s: %d bytes at %d exceed the %d bytes of its memory", ErrOutOfBounds, t, n, offs, e.size)
	}
	return e.at + offs, n, nil
}

// Locate returns the storage and t's place in it (Locator).
func (b *checked) Locate(t *graph.Tensor) (Storage, uint64, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.freed {
		return nil, 0, b.errFreed()
	}
	at, _, err := b.locate(t)
	if err != nil {
		return nil, 0, err
	}
	return b.st, at, nil
}

// within checks that [off, off+size) lies in [0, limit). what names the
// memory in the error; it is formatted only then, as within runs on every
// tensor read and write (a decoded token sets and gets several).
func within(what fmt.Stringer, off, size, limit uint64) error {
	if end, carry := bits.Add64(off, size, 0); carry != 0 || end > limit {
		return fmt.Errorf("%w: %s: %d bytes at offset %d of %d", ErrOutOfBounds, what, size, off, limit)
	}
	return nil
}

// label is a fixed name for within.
type label string

func (l label) String() string { return string(l) }

// span is (n-1)*stride + size, the extent of n blocks of size bytes
// stride bytes apart, or an error when it overflows.
func span(n, stride, size uint64) (uint64, error) {
	hi, lo := bits.Mul64(n-1, stride)
	s, carry := bits.Add64(lo, size, 0)
	if hi != 0 || carry != 0 {
		return 0, fmt.Errorf("%w: %d blocks %d bytes apart overflow", ErrOutOfBounds, n, stride)
	}
	return s, nil
}

func (b *checked) AllocTensor(t *graph.Tensor, offset uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return b.errFreed()
	}
	if t == nil {
		return fmt.Errorf("%w: nil tensor", ErrArgument)
	}
	if t.ViewSrc != nil {
		return fmt.Errorf("%w: %s is a view; views get their source's memory (InitView)", ErrArgument, t)
	}
	if t.Buffer != nil || t.Data != nil {
		return fmt.Errorf("%w: %s", ErrPlaced, t)
	}
	n, err := tensorBytes(t)
	if err != nil {
		return err
	}
	size, err := allocSize(b.typ, t)
	if err != nil {
		return err
	}
	if align := b.typ.Alignment(); (uint64(b.base)+offset)%align != 0 {
		return fmt.Errorf("%w: %s at offset %d of %s (alignment %d)", ErrMisaligned, t, offset, b, align)
	}
	if err := within(t, offset, size, b.size); err != nil {
		return err
	}
	b.placed[t] = extent{offset, size}
	b.place(t, offset, n)
	if err := b.initTensor(t, offset); err != nil {
		delete(b.placed, t)
		t.Buffer, t.Data = nil, nil
		return err
	}
	return nil
}

func (b *checked) InitView(t *graph.Tensor) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return b.errFreed()
	}
	if t == nil || t.ViewSrc == nil {
		return fmt.Errorf("%w: %s is not a view", ErrArgument, t)
	}
	if t.Buffer != nil && t.Buffer != b {
		return fmt.Errorf("%w: view %s is in %s", ErrPlaced, t, t.Buffer.Name())
	}
	at, n, err := b.locate(t)
	if err != nil {
		return err
	}
	b.views[t] = struct{}{}
	b.place(t, at, n)
	if err := b.initTensor(t, at); err != nil {
		delete(b.views, t)
		t.Buffer, t.Data = nil, nil
		return err
	}
	return nil
}

// place points t at n bytes from offset at.
func (b *checked) place(t *graph.Tensor, at, n uint64) {
	t.Buffer, t.Data = b, nil
	if b.data {
		t.Data = b.mem[at : at+n : at+n]
	}
}

func (b *checked) initTensor(t *graph.Tensor, at uint64) error {
	if ti, ok := b.st.(TensorInitializer); ok {
		return ti.InitTensor(t, at)
	}
	return nil
}

// access runs fn on t's memory (its offset and size) with the buffer
// read-locked, so Free waits for it.
func (b *checked) access(t *graph.Tensor, fn func(at, n uint64) error) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.freed {
		return b.errFreed()
	}
	at, n, err := b.locate(t)
	if err != nil {
		return err
	}
	return fn(at, n)
}

func (b *checked) SetTensor(t *graph.Tensor, data []byte, offset uint64) error {
	return b.access(t, func(at, n uint64) error {
		if err := within(t, offset, uint64(len(data)), n); err != nil {
			return err
		}
		return b.write(t, at, offset, data)
	})
}

func (b *checked) GetTensor(t *graph.Tensor, data []byte, offset uint64) error {
	return b.access(t, func(at, n uint64) error {
		if err := within(t, offset, uint64(len(data)), n); err != nil {
			return err
		}
		return b.read(t, at, offset, data)
	})
}

func (b *checked) SetTensor2D(t *graph.Tensor, data []byte, offset, size, n, strideTensor, strideData uint64) error {
	return b.access(t, func(at, nb uint64) error {
		if err := check2D(t, data, offset, size, n, strideTensor, strideData, nb); err != nil || n == 0 || size == 0 {
			return err
		}
		for i := range n {
			d := i * strideData
			if err := b.write(t, at, offset+i*strideTensor, data[d:d+size]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (b *checked) GetTensor2D(t *graph.Tensor, data []byte, offset, size, n, strideTensor, strideData uint64) error {
	return b.access(t, func(at, nb uint64) error {
		if err := check2D(t, data, offset, size, n, strideTensor, strideData, nb); err != nil || n == 0 || size == 0 {
			return err
		}
		for i := range n {
			d := i * strideData
			if err := b.read(t, at, offset+i*strideTensor, data[d:d+size]); err != nil {
				return err
			}
		}
		return nil
	})
}

// check2D checks both sides of a 2-D copy: n blocks of size bytes in a
// tensor of nb bytes and in data.
func check2D(t *graph.Tensor, data []byte, offset, size, n, strideTensor, strideData, nb uint64) error {
	if n == 0 || size == 0 {
		return nil
	}
	ts, err := span(n, strideTensor, size)
	if err != nil {
		return err
	}
	if err := within(t, offset, ts, nb); err != nil {
		return err
	}
	ds, err := span(n, strideData, size)
	if err != nil {
		return err
	}
	return within(label("data"), 0, ds, uint64(len(data)))
}

func (b *checked) write(t *graph.Tensor, at, offset uint64, data []byte) error {
	switch {
	case len(data) == 0:
		return nil
	case b.io != nil:
		return b.io.SetTensor(t, b.Usage(), at, offset, data)
	case b.dev == nil:
		copy(b.mem[at+offset:], data)
		return nil
	}
	return b.dev.Write(at+offset, data)
}

func (b *checked) read(t *graph.Tensor, at, offset uint64, data []byte) error {
	switch {
	case len(data) == 0:
		return nil
	case b.io != nil:
		return b.io.GetTensor(t, b.Usage(), at, offset, data)
	case b.dev == nil:
		copy(data, b.mem[at+offset:])
		return nil
	}
	return b.dev.Read(at+offset, data)
}

func (b *checked) MemsetTensor(t *graph.Tensor, value byte, offset, size uint64) error {
	return b.access(t, func(at, n uint64) error {
		if err := within(t, offset, size, n); err != nil || size == 0 {
			return err
		}
		switch {
		case b.io != nil:
			return b.io.SetTensor(t, b.Usage(), at, offset, filled(make([]byte, size), value))
		case b.dev == nil:
			filled(b.mem[at+offset:at+offset+size], value)
			return nil
		}
		return b.dev.Fill(at+offset, size, value)
	})
}

// filled sets every byte of p to v and returns p.
func filled(p []byte, v byte) []byte {
	if len(p) == 0 {
		return p
	}
	p[0] = v
	for n := 1; n < len(p); n *= 2 {
		copy(p[n:], p[:n])
	}
	return p
}

func (b *checked) CopyTensor(src, dst *graph.Tensor) error {
	if src == nil || dst == nil {
		return fmt.Errorf("%w: nil tensor", ErrArgument)
	}
	if !sameLayout(src, dst) {
		return fmt.Errorf("%w: copy between different layouts, %s and %s", ErrArgument, src, dst)
	}
	// dst must be placed here (and the buffer alive) even for a copy
	// to itself, which has nothing to do.
	var done bool
	err := b.access(dst, func(at, _ uint64) (err error) {
		if src == dst {
			done = true
			return nil
		}
		if c, ok := b.st.(TensorCopier); ok {
			done, err = c.CopyTensor(src, dst, at)
		}
		return err
	})
	if err != nil || done {
		return err
	}
	n, err := tensorBytes(src)
	if err != nil {
		return err
	}
	var tmp []byte
	if sb, err := Of(src); err == nil {
		tmp = make([]byte, n)
		if err := sb.GetTensor(src, tmp, 0); err != nil {
			return err
		}
	} else if uint64(len(src.Data)) >= n {
		tmp = src.Data[:n]
	} else {
		return fmt.Errorf("copying from %s: %w", src, err)
	}
	return b.SetTensor(dst, tmp, 0)
}

func (b *checked) Clear(value byte) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.freed {
		return b.errFreed()
	}
	if b.size == 0 {
		return nil
	}
	if b.dev == nil {
		filled(b.mem, value)
		return nil
	}
	return b.dev.Fill(0, b.size, value)
}

func (b *checked) Reset() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return b.errFreed()
	}
	b.forget(true)
	if r, ok := b.st.(Resetter); ok {
		return r.Reset()
	}
	return nil
}

// forget drops every tensor placed in the buffer; they lose their Data,
// and their Buffer too when unplace.
func (b *checked) forget(unplace bool) {
	drop := func(t *graph.Tensor) {
		if t.Buffer == b {
			t.Data = nil
			if unplace {
				t.Buffer = nil
			}
		}
	}
	for t := range b.placed {
		drop(t)
	}
	for t := range b.views {
		drop(t)
	}
	clear(b.placed)
	clear(b.views)
}

func (b *checked) Free() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return b.errFreed()
	}
	b.freed = true
	b.forget(false)
	b.mem = nil
	b.cleanup.Stop()
	return b.st.Release()
}

// tensorBytes is t.NBytes(), checked: a valid type, no negative dimension,
// and a size that neither overflows nor exceeds what a slice can hold.
func tensorBytes(t *graph.Tensor) (uint64, error) {
	if t == nil {
		return 0, fmt.Errorf("%w: nil tensor", ErrArgument)
	}
	if err := t.Type.Check(); err != nil {
		return 0, fmt.Errorf("%w: %s: %w", ErrArgument, t, err)
	}
	for i, n := range t.Ne {
		if n < 0 {
			return 0, fmt.Errorf("%w: %s: ne[%d] = %d", ErrArgument, t, i, n)
		}
		if n == 0 {
			return 0, nil
		}
	}
	// Built only when needed: this runs for every tensor of every graph
	// placed, and formatting the tensor costs more than the size.
	overflow := func() error { return fmt.Errorf("%w: %s: size overflows", ErrArgument, t) }
	// As ggml_nbytes: whole blocks along dimension 0 for block types, the
	// last element's end otherwise, plus the strides of the other dimensions.
	var n uint64
	if bs := uint64(t.Type.BlockSize()); bs == 1 {
		hi, lo := bits.Mul64(uint64(t.Ne[0]-1), t.Nb[0])
		var carry uint64
		if n, carry = bits.Add64(uint64(t.Type.TypeSize()), lo, 0); hi != 0 || carry != 0 {
			return 0, overflow()
		}
	} else {
		hi, lo := bits.Mul64(uint64(t.Ne[0]), t.Nb[0])
		if hi != 0 {
			return 0, overflow()
		}
		n = lo / bs
	}
	for i := 1; i < graph.MaxDims; i++ {
		hi, lo := bits.Mul64(uint64(t.Ne[i]-1), t.Nb[i])
		var carry uint64
		if n, carry = bits.Add64(n, lo, 0); hi != 0 || carry != 0 {
			return 0, overflow()
		}
	}
	if n > math.MaxInt {
		return 0, overflow()
	}
	return n, nil
}

// sameLayout is ggml_are_same_layout: same type, shape and strides.
func sameLayout(a, b *graph.Tensor) bool {
	return a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb
}
