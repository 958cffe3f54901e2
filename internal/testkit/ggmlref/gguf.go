package ggmlref

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// This file binds ggml's gguf.h: reading a file into Go values and writing
// one from them, so package gguf can be checked both ways against the real
// implementation. Values travel as raw little-endian element bytes, so
// nothing here depends on package gguf.

// GGUF value types (enum gguf_type).
const (
	GGUFTypeBool   = 7
	GGUFTypeString = 8
	GGUFTypeArray  = 9
	ggufTypeCount  = 13
)

// ggufTypeSize is gguf_type_size for the fixed-size types.
var ggufTypeSize = [ggufTypeCount]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// GGUFValue is one metadata value: Type is the element type (never
// GGUFTypeArray), Raw the elements' little-endian bytes for fixed-size
// types, Strings the strings for GGUFTypeString. A scalar has one element.
type GGUFValue struct {
	Type    uint32
	Array   bool
	Raw     []byte
	Strings []string
}

// GGUFKV is one key-value pair.
type GGUFKV struct {
	Key   string
	Value GGUFValue
}

// GGUFTensor is one tensor description, with its data.
type GGUFTensor struct {
	Name   string
	Type   uint32
	Ne     [MaxDims]int64
	Offset uint64
	Size   uint64
	Data   []byte
}

// GGUFFile is what ggml read from a file.
type GGUFFile struct {
	Version    uint32
	Alignment  uint64
	DataOffset uint64
	KVs        []GGUFKV
	Tensors    []GGUFTensor
}

// ErrGGUF reports a file ggml's gguf_init_from_file refused, or a write
// gguf_write_to_file reported as failed.
var ErrGGUF = errors.New("ggmlref: ggml refused the gguf file")

type ggufAPI struct {
	initFromFile, initEmpty, free, getVersion, getAlignment, getDataOffset uintptr
	getNKV, getKey, getKVType, getArrType, getValData, getValStr           uintptr
	getArrN, getArrData, getArrStr, getNTensors, getTensorName             uintptr
	getTensorNe, getTensorType, getTensorOffset, getTensorSize             uintptr
	setValInt                                                              [ggufTypeCount]uintptr
	setValStr, setArrData, setArrStr, addTensor, write                     uintptr
	getTensor, ctxFree, logSet                                             uintptr
	setF32                                                                 func(ctx uintptr, key *byte, v float32)
	setF64                                                                 func(ctx uintptr, key *byte, v float64)
}

var (
	ggufOnce sync.Once
	ggufErr  error
	gguf     *ggufAPI
)

func (l *Lib) ggufAPI() (*ggufAPI, error) {
	ggufOnce.Do(func() {
		base := l.libs[0]
		a := &ggufAPI{}
		syms := map[string]*uintptr{
			"gguf_init_from_file": &a.initFromFile, "gguf_init_empty": &a.initEmpty, "gguf_free": &a.free,
			"gguf_get_version": &a.getVersion, "gguf_get_alignment": &a.getAlignment, "gguf_get_data_offset": &a.getDataOffset,
			"gguf_get_n_kv": &a.getNKV, "gguf_get_key": &a.getKey, "gguf_get_kv_type": &a.getKVType,
			"gguf_get_arr_type": &a.getArrType, "gguf_get_val_data": &a.getValData, "gguf_get_val_str": &a.getValStr,
			"gguf_get_arr_n": &a.getArrN, "gguf_get_arr_data": &a.getArrData, "gguf_get_arr_str": &a.getArrStr,
			"gguf_get_n_tensors": &a.getNTensors, "gguf_get_tensor_name": &a.getTensorName,
			"gguf_get_tensor_ne": &a.getTensorNe, "gguf_get_tensor_type": &a.getTensorType,
			"gguf_get_tensor_offset": &a.getTensorOffset, "gguf_get_tensor_size": &a.getTensorSize,
			"gguf_set_val_u8": &a.setValInt[0], "gguf_set_val_i8": &a.setValInt[1], "gguf_set_val_u16": &a.setValInt[2],
			"gguf_set_val_i16": &a.setValInt[3], "gguf_set_val_u32": &a.setValInt[4], "gguf_set_val_i32": &a.setValInt[5],
			"gguf_set_val_bool": &a.setValInt[7], "gguf_set_val_u64": &a.setValInt[10], "gguf_set_val_i64": &a.setValInt[11],
			"gguf_set_val_str": &a.setValStr, "gguf_set_arr_data": &a.setArrData, "gguf_set_arr_str": &a.setArrStr,
			"gguf_add_tensor": &a.addTensor, "gguf_write_to_file": &a.write,
			"ggml_get_tensor": &a.getTensor, "ggml_free": &a.ctxFree, "ggml_log_set": &a.logSet,
		}
		for name, dst := range syms {
			p, err := l.dlsym(base, name)
			if err != nil {
				ggufErr = err
				return
			}
			*dst = p
		}
		// Float arguments travel in SSE registers: only RegisterFunc
		// places them.
		for name, fn := range map[string]any{"gguf_set_val_f32": &a.setF32, "gguf_set_val_f64": &a.setF64} {
			p, err := l.dlsym(base, name)
			if err != nil {
				ggufErr = err
				return
			}
			purego.RegisterFunc(fn, p)
		}
		gguf = a
	})
	return gguf, ggufErr
}

// cStr is s as a NUL-terminated C string in Go memory, valid while the
// returned slice is kept alive.
func cStr(s string) []byte { return append([]byte(s), 0) }

func ptr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

// cBytes copies n bytes of C memory at p.
func cBytes(p uintptr, n uint64) []byte {
	if n == 0 {
		return []byte{}
	}
	return append([]byte(nil), unsafe.Slice((*byte)(cPtr(p)), n)...)
}

// cStringAll reads a C string of any length (keys and values may be long).
func cStringAll(p uintptr) string {
	n := uintptr(0)
	for *(*byte)(cPtr(p + n)) != 0 {
		n++
	}
	return string(cBytes(p, uint64(n)))
}

// ReadGGUF reads the file at path with gguf_init_from_file (no_alloc off,
// so ggml reads the data too) and returns everything it holds, tensor data
// taken from the ggml context it made. Strings end at their first NUL, as
// ggml's C accessors return them. A file whose data section ggml cannot
// allocate is an error (ggml itself would abort).
func (l *Lib) ReadGGUF(path string) (*GGUFFile, error) { return l.readGGUF(path, true) }

// ReadGGUFMeta is ReadGGUF without a ggml context: ggml checks and reads
// the metadata only, the tensors come without Data.
func (l *Lib) ReadGGUFMeta(path string) (*GGUFFile, error) { return l.readGGUF(path, false) }

func (l *Lib) readGGUF(path string, withData bool) (*GGUFFile, error) {
	a, err := l.ggufAPI()
	if err != nil {
		return nil, err
	}
	cpath := cStr(path)
	var gctx uintptr
	ctxArg := uintptr(0)
	if withData {
		ctxArg = uintptr(unsafe.Pointer(&gctx))
	}
	// struct gguf_init_params {bool no_alloc; struct ggml_context **ctx;}
	// is 16 bytes of INTEGER class: it travels in two registers.
	var ctx uintptr
	if err := Catch(func() { ctx, _, _ = purego.SyscallN(a.initFromFile, ptr(cpath), 0, ctxArg) }); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrGGUF, path, err)
	}
	runtime.KeepAlive(cpath)
	if ctx == 0 {
		return nil, fmt.Errorf("%w: %s", ErrGGUF, path)
	}
	defer purego.SyscallN(a.free, ctx)
	if gctx != 0 {
		defer purego.SyscallN(a.ctxFree, gctx)
	}
	call := func(fn uintptr, args ...uintptr) uintptr {
		r, _, _ := purego.SyscallN(fn, append([]uintptr{ctx}, args...)...)
		return r
	}

	f := &GGUFFile{
		Version:    uint32(call(a.getVersion)),
		Alignment:  uint64(call(a.getAlignment)),
		DataOffset: uint64(call(a.getDataOffset)),
	}
	for i := uintptr(0); i < call(a.getNKV); i++ {
		kv := GGUFKV{Key: cStringAll(call(a.getKey, i))}
		t := uint32(call(a.getKVType, i))
		if t == GGUFTypeArray {
			kv.Value.Array = true
			t = uint32(call(a.getArrType, i))
		}
		if t >= ggufTypeCount || t == GGUFTypeArray {
			return nil, fmt.Errorf("ggmlref: key %q has type %d", kv.Key, t)
		}
		kv.Value.Type = t
		switch {
		case t == GGUFTypeString && kv.Value.Array:
			n := call(a.getArrN, i)
			kv.Value.Strings = make([]string, n)
			for j := range kv.Value.Strings {
				kv.Value.Strings[j] = cStringAll(call(a.getArrStr, i, uintptr(j)))
			}
		case t == GGUFTypeString:
			kv.Value.Strings = []string{cStringAll(call(a.getValStr, i))}
		case kv.Value.Array:
			kv.Value.Raw = cBytes(call(a.getArrData, i), uint64(call(a.getArrN, i))*uint64(ggufTypeSize[t]))
		default:
			kv.Value.Raw = cBytes(call(a.getValData, i), uint64(ggufTypeSize[t]))
		}
		f.KVs = append(f.KVs, kv)
	}
	for i := uintptr(0); i < call(a.getNTensors); i++ {
		name := call(a.getTensorName, i)
		ti := GGUFTensor{
			Name:   cStringAll(name),
			Type:   uint32(call(a.getTensorType, i)),
			Offset: uint64(call(a.getTensorOffset, i)),
			Size:   uint64(call(a.getTensorSize, i)),
		}
		ti.Ne = *(*[MaxDims]int64)(cPtr(call(a.getTensorNe, i)))
		if withData {
			r, _, _ := purego.SyscallN(a.getTensor, gctx, name)
			if r == 0 {
				return nil, fmt.Errorf("ggmlref: ggml_get_tensor(%q) found nothing", ti.Name)
			}
			ti.Data = cBytes(uintptr((*Tensor)(cPtr(r)).Data), ti.Size)
		}
		f.Tensors = append(f.Tensors, ti)
	}
	return f, nil
}

// writeFile is gguf_write_to_file(ctx, path, only_meta = false).
func (a *ggufAPI) writeFile(ctx uintptr, path string) error {
	cpath := cStr(path)
	var ok uintptr
	if err := Catch(func() { ok, _, _ = purego.SyscallN(a.write, ctx, ptr(cpath), 0) }); err != nil {
		return err
	}
	runtime.KeepAlive(cpath)
	if ok&0xff == 0 {
		return fmt.Errorf("%w: gguf_write_to_file(%s) failed", ErrGGUF, path)
	}
	return nil
}

// WriteGGUF makes a gguf context with gguf_init_empty, sets every pair
// with gguf_set_val_* / gguf_set_arr_* in order, adds every tensor (type,
// ne, name and data; Offset and Size are ggml's to compute) and writes it
// to path with gguf_write_to_file. Keys and strings must not hold NULs,
// names must be unique and fit GGML_MAX_NAME: ggml aborts otherwise.
func (l *Lib) WriteGGUF(path string, kvs []GGUFKV, tensors []GGUFTensor) error {
	a, err := l.ggufAPI()
	if err != nil {
		return err
	}
	ctx, _, _ := purego.SyscallN(a.initEmpty)
	defer purego.SyscallN(a.free, ctx)
	var pin runtime.Pinner
	defer pin.Unpin()
	for _, kv := range kvs {
		if err := a.set(ctx, kv, &pin); err != nil {
			return err
		}
	}
	var size uint64
	for _, t := range tensors {
		size += uint64(len(t.Data)) + uint64(TensorSize) + 2*objectSize + memAlign
	}
	tctx, err := l.NewContext(size+1024, false)
	if err != nil {
		return err
	}
	defer tctx.Free()
	for _, t := range tensors {
		ct, err := tctx.NewTensor(t.Type, t.Ne)
		if err != nil {
			return err
		}
		if n := l.NBytes(ct); n != uint64(len(t.Data)) {
			return fmt.Errorf("ggmlref: tensor %q has %d bytes, %d given", t.Name, n, len(t.Data))
		}
		if len(t.Name) >= MaxName {
			return fmt.Errorf("ggmlref: tensor name %q too long", t.Name)
		}
		ct.SetName(t.Name)
		if ct.Data == nil {
			// ggml gives an empty tensor no data, and then refuses to
			// write it: any address does for 0 bytes.
			ct.Data = unsafe.Pointer(ct)
		}
		copy(unsafe.Slice((*byte)(ct.Data), len(t.Data)), t.Data)
		purego.SyscallN(a.addTensor, ctx, uintptr(unsafe.Pointer(ct)))
	}
	return a.writeFile(ctx, path)
}

// set stores one pair in ctx.
func (a *ggufAPI) set(ctx uintptr, kv GGUFKV, pin *runtime.Pinner) error {
	key := cStr(kv.Key)
	defer runtime.KeepAlive(key)
	v := kv.Value
	if v.Type >= ggufTypeCount || v.Type == GGUFTypeArray {
		return fmt.Errorf("ggmlref: key %q: type %d", kv.Key, v.Type)
	}
	if v.Type == GGUFTypeString {
		cs := make([][]byte, len(v.Strings))
		ptrs := make([]uintptr, len(v.Strings)+1)
		for i, s := range v.Strings {
			cs[i] = cStr(s)
			pin.Pin(&cs[i][0])
			ptrs[i] = ptr(cs[i])
		}
		if v.Array {
			purego.SyscallN(a.setArrStr, ctx, ptr(key), uintptr(unsafe.Pointer(&ptrs[0])), uintptr(len(v.Strings)))
		} else {
			if len(v.Strings) != 1 {
				return fmt.Errorf("ggmlref: key %q: scalar string with %d elements", kv.Key, len(v.Strings))
			}
			purego.SyscallN(a.setValStr, ctx, ptr(key), ptrs[0])
		}
		runtime.KeepAlive(cs)
		runtime.KeepAlive(ptrs)
		return nil
	}
	size := ggufTypeSize[v.Type]
	if len(v.Raw)%size != 0 || (!v.Array && len(v.Raw) != size) {
		return fmt.Errorf("ggmlref: key %q: %d bytes for type %d", kv.Key, len(v.Raw), v.Type)
	}
	if v.Array {
		purego.SyscallN(a.setArrData, ctx, ptr(key), uintptr(v.Type), ptr(v.Raw), uintptr(len(v.Raw)/size))
		runtime.KeepAlive(v.Raw)
		return nil
	}
	var bits uint64
	for i := size - 1; i >= 0; i-- {
		bits = bits<<8 | uint64(v.Raw[i])
	}
	switch v.Type {
	case 6:
		a.setF32(ctx, &key[0], math.Float32frombits(uint32(bits)))
	case 12:
		a.setF64(ctx, &key[0], math.Float64frombits(bits))
	case 1, 3, 5: // signed: extend as C's promotion would
		shift := 64 - 8*size
		purego.SyscallN(a.setValInt[v.Type], ctx, ptr(key), uintptr(int64(bits<<shift)>>shift))
	default:
		purego.SyscallN(a.setValInt[v.Type], ctx, ptr(key), uintptr(bits))
	}
	return nil
}

// quietLog is a ggml log callback that drops every message.
var quietLog = sync.OnceValue(func() uintptr {
	return purego.NewCallback(func(level, text, user uintptr) {})
})

// QuietGGUF silences ggml's log (gguf_init_from_file explains every file
// it refuses on stderr) until the returned function restores the default.
func (l *Lib) QuietGGUF() (restore func(), err error) {
	a, err := l.ggufAPI()
	if err != nil {
		return nil, err
	}
	purego.SyscallN(a.logSet, quietLog(), 0)
	return func() { purego.SyscallN(a.logSet, 0, 0) }, nil
}
