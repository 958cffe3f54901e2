package hexagon

import (
	"fmt"
	"sync"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/graph"
)

// Alignment is the alignment of every tensor in a Hexagon buffer (HVX
// vectors are 128 bytes).
const Alignment = 128

// extra is a tensor's state in a Hexagon buffer (htp_tensor_extra): its
// block, its byte offset there, its wire flags, and the shadow copy a
// tiled weight is assembled in while it is written in pieces.
type extra struct {
	blk   *block
	at    uint64
	owner *extra // a view's source

	mu        sync.Mutex
	flags     uint32
	shadow    []byte
	shadowLen uint64
}

func (x *extra) root() *extra {
	if x.owner != nil {
		return x.owner
	}
	return x
}

func (x *extra) tiled() bool {
	r := x.root()
	r.mu.Lock()
	defer r.mu.Unlock()
	return x.owner == nil && r.flags&htp.TensorTiled != 0
}

// extraOf is t's extra. A view that was given its source's buffer
// without InitView (a builder copies Buffer from the source when it is
// placed already) gets one derived from its source's, as upstream does
// for tensors missing init_tensor.
func extraOf(t *graph.Tensor) (*extra, error) {
	if x, ok := t.Extra.(*extra); ok && x != nil {
		return x, nil
	}
	if v := t.ViewSrc; v != nil && t.Extra == nil {
		if o, ok := v.Extra.(*extra); ok && o != nil {
			r := o.root()
			x := &extra{blk: r.blk, at: r.at + t.ViewOffs, owner: r}
			t.Extra = x
			return x, nil
		}
	}
	return nil, fmt.Errorf("hexagon: %s is not in a Hexagon buffer", t)
}

// bufferType is a Hexagon buffer type: device memory (tensors reached
// through copies, weights repacked), or the host type (HOSTBUF: the same
// rpcmem, addressed by the CPU, never repacked).
type bufferType struct {
	dev  *device
	name string
	host bool
}

func (bt *bufferType) Name() string       { return bt.name }
func (bt *bufferType) Alignment() uint64  { return Alignment }
func (bt *bufferType) MaxSize() uint64    { return bt.dev.opts.MbufDyn }
func (bt *bufferType) IsHost() bool       { return bt.host }
func (bt *bufferType) DeviceName() string { return bt.dev.cfg.Name }

// AllocSize is the tiled size of a weight that may be repacked (the padded
// rows), else the tensor's bytes.
func (bt *bufferType) AllocSize(t *graph.Tensor) uint64 {
	n := t.NBytes()
	if !bt.host && isTiledWeight(t) {
		n = max(n, tiledSize(t))
	}
	return n
}

// Alloc returns a buffer of rpcmem memory (4 KiB rounded plus a guard
// page), refused above the session's vmem.
func (bt *bufferType) Alloc(size uint64) (buffer.Buffer, error) {
	s, err := bt.dev.sess()
	if err != nil {
		return nil, err
	}
	if s.maxVmem > 0 && size > s.maxVmem {
		return nil, fmt.Errorf("%w: %s: %d bytes exceed the DSP's vmem of %d", buffer.ErrTooLarge, bt.name, size, s.maxVmem)
	}
	blk, err := allocBlock(bt.dev.lib, blockSize(size, false, bt.dev.opts.DMA64 == 1), false)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", buffer.ErrTooLarge, bt.name, err)
	}
	bt.dev.track(blk)
	st := &storage{blk: blk, host: bt.host, extras: map[*graph.Tensor]*extra{}}
	b, err := buffer.New(bt, st, size)
	if err != nil {
		_ = blk.free()
		return nil, err
	}
	return b, nil
}

// storage is the memory of one Hexagon buffer.
type storage struct {
	blk    *block
	host   bool
	mu     sync.Mutex
	extras map[*graph.Tensor]*extra
}

func (st *storage) Base() uintptr  { return st.blk.base }
func (st *storage) Bytes() []byte  { return st.blk.mem }
func (st *storage) Release() error { return st.blk.free() }

// InitTensor gives t its extra (ggml's init_tensor); a view shares its
// source's.
func (st *storage) InitTensor(t *graph.Tensor, at uint64) error {
	x := &extra{blk: st.blk, at: at}
	if t.ViewSrc != nil {
		if o, ok := t.ViewSrc.Extra.(*extra); ok {
			x.owner = o.root()
		}
	}
	t.Extra = x
	st.mu.Lock()
	st.extras[t] = x
	st.mu.Unlock()
	return nil
}

// Reset forgets the tensors' extras.
func (st *storage) Reset() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for t, x := range st.extras {
		if t.Extra == x {
			t.Extra = nil
		}
	}
	clear(st.extras)
	return nil
}

// SetTensor writes data at offset of t (at is t's place in the buffer).
// In a WEIGHTS buffer a tensor of a tiled type is repacked as it is set:
// at once when the whole tensor arrives, else through a shadow copy once
// all its bytes have. A write into a tensor tiled by a run-time repack
// first unpacks it.
func (st *storage) SetTensor(t *graph.Tensor, u buffer.Usage, at, offset uint64, data []byte) error {
	x, err := extraOf(t)
	if err != nil || st.host {
		copy(st.blk.mem[at+offset:], data)
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if u == buffer.UsageWeights {
		x.flags |= htp.TensorWeight
		if x.owner == nil && isTiledWeight(t) {
			x.flags |= htp.TensorTiled
		}
	} else if x.flags&htp.TensorTiled != 0 && x.owner == nil {
		if err := st.untile(t, x, at); err != nil {
			return err
		}
	}
	if x.owner != nil || x.flags&htp.TensorTiled == 0 {
		copy(st.blk.mem[at+offset:], data)
		return nil
	}
	n := t.NBytes()
	dst := st.blk.mem[at : at+tiledSize(t)]
	if offset == 0 && uint64(len(data)) == n && x.shadow == nil {
		return repack(t, dst, data)
	}
	if x.shadow == nil {
		x.shadow = make([]byte, n)
	}
	copy(x.shadow[offset:], data)
	x.shadowLen += uint64(len(data))
	if x.shadowLen < n {
		return nil
	}
	err = repack(t, dst, x.shadow)
	x.shadow, x.shadowLen = nil, 0
	return err
}

// untile turns a run-time-repacked tensor back into ggml's layout.
func (st *storage) untile(t *graph.Tensor, x *extra, at uint64) error {
	plain := make([]byte, t.NBytes())
	if err := unpackRows(t, plain, st.blk.mem[at:at+tiledSize(t)], 0, int(t.NRows())); err != nil {
		return err
	}
	copy(st.blk.mem[at:], plain)
	x.flags &^= htp.TensorTiled
	return nil
}

// GetTensor reads t from offset into data, unpacking tiled rows (from
// the shadow copy while a tiled weight is incomplete).
func (st *storage) GetTensor(t *graph.Tensor, _ buffer.Usage, at, offset uint64, data []byte) error {
	x, err := extraOf(t)
	if err != nil || st.host {
		copy(data, st.blk.mem[at+offset:])
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.owner != nil || x.flags&htp.TensorTiled == 0:
		copy(data, st.blk.mem[at+offset:])
		return nil
	case x.shadow != nil:
		copy(data, x.shadow[offset:])
		return nil
	}
	rb := t.Nb[1]
	r0, r1 := int(offset/rb), int((offset+uint64(len(data))+rb-1)/rb)
	tmp := make([]byte, uint64(r1-r0)*rb)
	if err := unpackRows(t, tmp, st.blk.mem[at:at+tiledSize(t)], r0, r1); err != nil {
		return err
	}
	copy(data, tmp[offset-uint64(r0)*rb:])
	return nil
}

// runtimeRepack tiles t in place for a MUL_MAT on the DSP
// (GGML_HEXAGON_RT_REPACK), when it was set untiled.
func runtimeRepack(t *graph.Tensor, x *extra) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.flags&htp.TensorTiled != 0 {
		return nil
	}
	mem := x.blk.mem[x.at : x.at+tiledSize(t)]
	plain := append([]byte(nil), mem[:t.NBytes()]...)
	if err := repack(t, mem, plain); err != nil {
		return err
	}
	x.flags |= htp.TensorTiled
	return nil
}
