package ggmlref

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CPU device's extra buffer types (CPU_REPACK, and AMX where the
// processor has it): ggml finds them through the registry's proc address
// "ggml_backend_dev_get_extra_bufts", which returns a NULL-terminated
// array. A weight placed in one is repacked by ggml as it is set, and the
// CPU backend's matrix products then read the repacked layout.

// ErrNotPlaceable reports a tensor an extra buffer type does not take for
// the operations using it. errors.Is also matches errors.ErrUnsupported.
var ErrNotPlaceable = fmt.Errorf("ggmlref: tensor not supported in the extra buffer type: %w", errors.ErrUnsupported)

type extraAPI struct {
	devReg       func(dev uintptr) uintptr
	procAddress  func(reg uintptr, name *byte) uintptr
	buftName     func(buft uintptr) uintptr
	buftAlloc    func(buft uintptr, size uintptr) uintptr
	buftSize     func(buft uintptr, t *Tensor) uintptr
	bufferFree   func(buf uintptr)
	bufferBase   func(buf uintptr) uintptr
	tensorAlloc  func(buf uintptr, t *Tensor, addr uintptr) int32
	tensorSet    func(t *Tensor, data unsafe.Pointer, offset, size uintptr)
	getExtraBuft uintptr
}

// extraAPIs are the entry points per loaded library.
var extraAPIs sync.Map // *Lib -> *extraAPI

func (b *Backend) extraAPI() (*extraAPI, error) {
	if a, ok := extraAPIs.Load(b.l); ok {
		return a.(*extraAPI), nil
	}
	a, err := b.loadExtraAPI()
	if err != nil {
		return nil, err
	}
	extraAPIs.Store(b.l, a)
	return a, nil
}

func (b *Backend) loadExtraAPI() (*extraAPI, error) {
	l := b.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.libs) == 0 {
		return nil, fmt.Errorf("%w: library closed", ErrNotAvailable)
	}
	base := l.libs[0]
	a := &extraAPI{}
	for _, f := range []struct {
		name string
		fn   any
	}{
		{"ggml_backend_dev_backend_reg", &a.devReg},
		{"ggml_backend_reg_get_proc_address", &a.procAddress},
		{"ggml_backend_buft_name", &a.buftName},
		{"ggml_backend_buft_alloc_buffer", &a.buftAlloc},
		{"ggml_backend_buft_get_alloc_size", &a.buftSize},
		{"ggml_backend_buffer_free", &a.bufferFree},
		{"ggml_backend_buffer_get_base", &a.bufferBase},
		{"ggml_backend_tensor_alloc", &a.tensorAlloc},
		{"ggml_backend_tensor_set", &a.tensorSet},
	} {
		sym, err := l.dlsym(base, f.name)
		if err != nil {
			return nil, err
		}
		purego.RegisterFunc(f.fn, sym)
	}
	name := []byte("ggml_backend_dev_get_extra_bufts\x00")
	a.getExtraBuft = a.procAddress(a.devReg(b.dev), &name[0])
	if a.getExtraBuft == 0 {
		return nil, fmt.Errorf("%w: the CPU registry has no ggml_backend_dev_get_extra_bufts", ErrNotAvailable)
	}
	return a, nil
}

// BufferType is one of ggml's buffer types.
type BufferType struct {
	ptr  uintptr
	Name string
}

// ExtraBufferTypes lists the extra buffer types of b's device, in ggml's
// order (CPU_REPACK first on x86 without AMX).
func (b *Backend) ExtraBufferTypes() ([]BufferType, error) {
	a, err := b.extraAPI()
	if err != nil {
		return nil, err
	}
	r, _, _ := purego.SyscallN(a.getExtraBuft, b.dev)
	var out []BufferType
	for p := r; p != 0; p += unsafe.Sizeof(uintptr(0)) {
		buft := *(*uintptr)(cPtr(p))
		if buft == 0 {
			break
		}
		out = append(out, BufferType{ptr: buft, Name: cString(a.buftName(buft), 256)})
	}
	return out, nil
}

// ExtraBuffer is a buffer of an extra buffer type holding one tensor.
type ExtraBuffer struct {
	a   *extraAPI
	ptr uintptr
}

// Free releases the buffer; the tensor in it must not be used after.
func (e *ExtraBuffer) Free() {
	if e.ptr != 0 {
		e.a.bufferFree(e.ptr)
		e.ptr = 0
	}
}

// Place puts t, which has no memory yet, in a new buffer of bt and sets
// its contents to data (which bt repacks), provided that b then still
// supports every node of users (the operations reading t): ggml's
// init_tensor accepts any tensor, but setting one it has no layout for
// would crash, so the check comes first, as llama.cpp checks before
// placing weights.
func (b *Backend) Place(bt BufferType, t *Tensor, data []byte, users []*Tensor) (*ExtraBuffer, error) {
	a, err := b.extraAPI()
	if err != nil {
		return nil, err
	}
	n := b.l.NBytes(t)
	if uint64(len(data)) != n || t.Data != nil || t.Buffer != 0 || t.ViewSrc != nil {
		return nil, fmt.Errorf("ggmlref: Place: %d bytes for a tensor of %d, or the tensor has memory", len(data), n)
	}
	buf := a.buftAlloc(bt.ptr, a.buftSize(bt.ptr, t))
	if buf == 0 {
		return nil, fmt.Errorf("ggmlref: %s: allocation failed", bt.Name)
	}
	e := &ExtraBuffer{a: a, ptr: buf}
	if st := a.tensorAlloc(buf, t, a.bufferBase(buf)); st != 0 {
		e.Free()
		return nil, fmt.Errorf("ggmlref: %s: ggml_backend_tensor_alloc status %d", bt.Name, st)
	}
	for _, u := range users {
		if !b.SupportsOp(u) {
			t.Data, t.Buffer, t.Extra = nil, 0, 0
			e.Free()
			return nil, fmt.Errorf("%w: %s for %s", ErrNotPlaceable, bt.Name, u.GetName())
		}
	}
	if n > 0 {
		a.tensorSet(t, unsafe.Pointer(&data[0]), 0, uintptr(n))
	}
	runtime.KeepAlive(data)
	return e, nil
}
