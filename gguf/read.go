// Package gguf reads and writes GGUF v3 files, the format of ggml's gguf.h
// and llama.cpp's models: a header, typed key-value metadata, tensor
// descriptions and an aligned data section.
//
// It accepts exactly the files ggml 0.25.1's gguf_init_from_file accepts
// (versions 2 and 3, little-endian) and writes byte for byte what
// gguf_write_to_file writes for the same content; the tests check both
// ways against the real library. Open maps the file, so tensor data is
// used in place, never copied. Malformed input is an error wrapping
// ErrFormat, never a panic, and no allocation is sized by a count the file
// claims before the file is known to hold that much.
//
// Where ggml's C view shows through, this package follows it: a tensor
// name ends at its first NUL, and a key with a NUL answers lookups for
// its part before the NUL. The one leniency: the last tensor's padding may
// be missing from the end of the file (ggml reads the padded data
// section; llama.cpp, which maps the file, does not need it).
package gguf

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ggml-go/ggml/internal/mmap"
	"github.com/ggml-go/ggml/quant"
)

// Format constants, as gguf.h defines them.
const (
	// Magic is the file's first four bytes.
	Magic = "GGUF"
	// Version is the version this package writes; it reads 2 and 3.
	Version = 3
	// DefaultAlignment is the data alignment when general.alignment is absent.
	DefaultAlignment = 32
	// KeyAlignment names the metadata key holding the data alignment (a u32,
	// a power of two).
	KeyAlignment = "general.alignment"
	// MaxDims is the most dimensions a tensor has (GGML_MAX_DIMS).
	MaxDims = 4
	// MaxNameLen is the longest tensor name in bytes (GGML_MAX_NAME - 1).
	MaxNameLen = 63
	// MaxStringLen is the longest string ggml reads (GGUF_MAX_STRING_LENGTH).
	MaxStringLen = 1 << 30
	// MaxArrayLen is the most elements an array has (GGUF_MAX_ARRAY_ELEMENTS).
	MaxArrayLen = 1 << 30
)

// Errors returned by this package; test with errors.Is.
var (
	// ErrFormat reports a file that is not valid GGUF.
	ErrFormat = errors.New("gguf: invalid file")
	// ErrTruncated reports a file that ends before what it describes; it
	// is also ErrFormat.
	ErrTruncated = fmt.Errorf("%w: truncated", ErrFormat)
	// ErrNotFound reports a key or tensor the file does not have.
	ErrNotFound = errors.New("gguf: not found")
	// ErrType reports a value of another type than the one asked for.
	ErrType = errors.New("gguf: wrong value type")
	// ErrArgument reports a bad argument to the writer.
	ErrArgument = errors.New("gguf: bad argument")
)

// KV is one metadata pair.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor: its name, element type, shape (ne,
// innermost first, as many dimensions as the file gives, at most 4) and
// the offset of its data from the start of the data section.
type TensorInfo struct {
	Name   string
	Type   quant.Type
	Shape  []int64
	Offset uint64
}

// Ne is the shape padded with ones to four dimensions, as ggml's ne.
func (t TensorInfo) Ne() [MaxDims]int64 {
	ne := [MaxDims]int64{1, 1, 1, 1}
	copy(ne[:], t.Shape)
	return ne
}

// Elements is the number of elements (ggml_nelements).
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Size is the size of the tensor's data in bytes (ggml_nbytes). It is only
// meaningful for a valid TensorInfo (one from a File, or accepted by
// NewWriter).
func (t TensorInfo) Size() uint64 {
	n, _ := t.check()
	return n
}

// check validates the shape and type as gguf_init_from_file does and
// returns the data size.
func (t TensorInfo) check() (uint64, error) {
	if len(t.Name) > MaxNameLen {
		return 0, fmt.Errorf("name is %d bytes, at most %d allowed", len(t.Name), MaxNameLen)
	}
	if len(t.Shape) > MaxDims {
		return 0, fmt.Errorf("%d dimensions, at most %d allowed", len(t.Shape), MaxDims)
	}
	ne := t.Ne()
	for i, d := range ne {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d has %d elements", i, d)
		}
	}
	// ggml refuses a product that reaches INT64_MAX, tested this way so
	// that nothing overflows on the way.
	if ne[0] != 0 && ne[1] != 0 && ne[2] != 0 && ne[3] != 0 &&
		(math.MaxInt64/ne[1] <= ne[0] || math.MaxInt64/ne[2] <= ne[0]*ne[1] || math.MaxInt64/ne[3] <= ne[0]*ne[1]*ne[2]) {
		return 0, fmt.Errorf("shape %v has 2^63 elements or more", t.Shape)
	}
	if !t.Type.Valid() {
		return 0, fmt.Errorf("type %d is not a ggml type", uint32(t.Type))
	}
	if bs := int64(t.Type.BlockSize()); ne[0]%bs != 0 {
		return 0, fmt.Errorf("%d elements per row is not a multiple of %s's block size %d", ne[0], t.Type, bs)
	}
	if slices.Contains(ne[:], 0) {
		// ggml_nbytes is 0 for a tensor with an empty dimension, however
		// large the others (their product, or one row's bytes, may not
		// even fit in int64): ggml accepts such a tensor, so do we.
		return 0, nil
	}
	row := t.Type.RowSize(ne[0])
	if row < 0 {
		return 0, fmt.Errorf("shape %v of %s is 2^63 bytes or more", t.Shape, t.Type)
	}
	rows := ne[1] * ne[2] * ne[3]
	if row > math.MaxInt64/rows {
		return 0, fmt.Errorf("shape %v of %s is 2^63 bytes or more", t.Shape, t.Type)
	}
	return uint64(row * rows), nil
}

// File is a parsed GGUF file. Tensor data slices point into the file's
// bytes (the mapping for Open), valid until Close.
type File struct {
	// Version is the file's format version (2 or 3).
	Version uint32
	// Alignment is the data alignment: general.alignment or 32.
	Alignment uint64
	// DataOffset is where the data section starts in the file.
	DataOffset uint64
	// DataSize is the data section's size with every tensor padded to the
	// alignment, as ggml computes it.
	DataSize uint64

	kvs     []KV
	keys    map[string]int
	tensors []TensorInfo
	names   map[string]int
	sizes   []uint64
	data    []byte
	mapped  *mmap.File
}

// Open maps the file at path copy-on-write (internal/mmap) and parses it:
// the file itself is never written.
func Open(path string) (*File, error) {
	m, err := mmap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := Parse(m.Bytes())
	if err != nil {
		_ = m.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.mapped = m
	return f, nil
}

// Close releases Open's mapping; slices from TensorData must not be used
// afterwards. It does nothing for a File from Parse.
func (f *File) Close() error {
	if f.mapped == nil {
		return nil
	}
	return f.mapped.Close()
}

// Evict drops the resident pages of data, a TensorData slice whose
// contents were copied elsewhere (a device buffer), from memory; they are
// read from the file again if used. It does nothing for a File from Parse.
func (f *File) Evict(data []byte) {
	if f.mapped != nil {
		f.mapped.Evict(data)
	}
}

// Bytes is the whole file.
func (f *File) Bytes() []byte { return f.data }

// KVs returns the metadata pairs in file order.
func (f *File) KVs() []KV { return append([]KV(nil), f.kvs...) }

// NumKV is the number of metadata pairs.
func (f *File) NumKV() int { return len(f.kvs) }

// Lookup returns the value stored under key, found as ggml finds keys
// (strcmp): a stored key with a NUL answers to its part before the NUL.
func (f *File) Lookup(key string) (Value, bool) {
	i, ok := f.keys[key]
	if !ok {
		return Value{}, false
	}
	return f.kvs[i].Value, true
}

// Get returns the scalar of type T stored under key: ErrNotFound when
// there is none, ErrType when it has another type or is an array.
func Get[T Scalar](f *File, key string) (T, error) {
	var zero T
	v, ok := f.Lookup(key)
	if !ok {
		return zero, fmt.Errorf("%w: key %q", ErrNotFound, key)
	}
	t, ok := ValueAs[T](v)
	if !ok {
		return zero, fmt.Errorf("%w: key %q is %s, want %s", ErrType, key, typeLabel(v), ScalarValue(zero).ElemType())
	}
	return t, nil
}

// GetArray returns the array of T stored under key (shared, not copied):
// ErrNotFound when there is none, ErrType when it is a scalar or has
// another element type.
func GetArray[T Scalar](f *File, key string) ([]T, error) {
	v, ok := f.Lookup(key)
	if !ok {
		return nil, fmt.Errorf("%w: key %q", ErrNotFound, key)
	}
	t, ok := ArrayAs[T](v)
	if !ok {
		var zero T
		return nil, fmt.Errorf("%w: key %q is %s, want an array of %s", ErrType, key, typeLabel(v), ScalarValue(zero).ElemType())
	}
	return t, nil
}

// typeLabel names v's type for errors: "u32" or "an array of u32".
func typeLabel(v Value) string {
	if v.IsArray() {
		return "an array of " + v.ElemType().String()
	}
	return v.ElemType().String()
}

// Tensors returns the tensor descriptions in file order.
func (f *File) Tensors() []TensorInfo { return append([]TensorInfo(nil), f.tensors...) }

// NumTensors is the number of tensors.
func (f *File) NumTensors() int { return len(f.tensors) }

// Tensor returns the description of the tensor named name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.names[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.tensors[i], true
}

// TensorData returns the named tensor's bytes, in place in the file.
func (f *File) TensorData(name string) ([]byte, error) {
	i, ok := f.names[name]
	if !ok {
		return nil, fmt.Errorf("%w: tensor %q", ErrNotFound, name)
	}
	start := f.DataOffset + f.tensors[i].Offset
	return f.data[start : start+f.sizes[i] : start+f.sizes[i]], nil
}

// Parse parses a GGUF file held in data. The File keeps data: tensor data
// slices alias it.
func Parse(data []byte) (*File, error) {
	p := &parser{b: data}
	f, err := p.file()
	if err != nil {
		return nil, err
	}
	f.data = data
	return f, nil
}

// parser reads little-endian fields from b, never past its end.
type parser struct {
	b   []byte
	pos uint64
}

func (p *parser) left() uint64 { return uint64(len(p.b)) - p.pos }

// take returns the next n bytes.
func (p *parser) take(n uint64, what string) ([]byte, error) {
	if n > p.left() {
		return nil, fmt.Errorf("%w: %s needs %d bytes at offset %d, the file has %d left", ErrTruncated, what, n, p.pos, p.left())
	}
	s := p.b[p.pos : p.pos+n]
	p.pos += n
	return s, nil
}

func (p *parser) u32(what string) (uint32, error) {
	b, err := p.take(4, what)
	if err != nil {
		return 0, err
	}
	return le.Uint32(b), nil
}

func (p *parser) u64(what string) (uint64, error) {
	b, err := p.take(8, what)
	if err != nil {
		return 0, err
	}
	return le.Uint64(b), nil
}

func (p *parser) str(what string) (string, error) {
	n, err := p.u64(what + " length")
	if err != nil {
		return "", err
	}
	if n > MaxStringLen {
		return "", fmt.Errorf("%w: %s is %d bytes long, at most %d allowed", ErrFormat, what, n, MaxStringLen)
	}
	b, err := p.take(n, what)
	return string(b), err
}

// minKVSize and minTensorInfoSize are the fewest bytes one key-value pair
// (8-byte length, a 1-byte key, a 4-byte type, a 1-byte value) and one
// tensor description (8-byte length, empty name, 4-byte n_dims, 4-byte
// type, 8-byte offset) take: counts beyond what the rest of the file can
// hold are refused before anything is allocated for them.
const (
	minKVSize         = 8 + 1 + 4 + 1
	minTensorInfoSize = 8 + 4 + 4 + 8
)

func (p *parser) file() (*File, error) {
	magic, err := p.take(4, "magic")
	if err != nil {
		return nil, err
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("%w: magic %q, want %q", ErrFormat, magic, Magic)
	}
	f := &File{}
	if f.Version, err = p.u32("version"); err != nil {
		return nil, err
	}
	switch v := f.Version; {
	case v == 0:
		return nil, fmt.Errorf("%w: version 0", ErrFormat)
	case v&0xffff == 0:
		return nil, fmt.Errorf("%w: version %#x: a big-endian file (only little-endian files are read)", ErrFormat, v)
	case v == 1:
		return nil, fmt.Errorf("%w: version 1 is no longer supported (ggml reads 2 and 3)", ErrFormat)
	case v > Version:
		return nil, fmt.Errorf("%w: version %d is newer than %d", ErrFormat, v, Version)
	}
	nTensors, err := p.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := p.u64("key-value count")
	if err != nil {
		return nil, err
	}
	if int64(nTensors) < 0 || int64(nKV) < 0 {
		return nil, fmt.Errorf("%w: negative count (%d tensors, %d keys)", ErrFormat, int64(nTensors), int64(nKV))
	}
	if nKV > p.left()/minKVSize {
		return nil, fmt.Errorf("%w: %d keys claimed, the %d bytes left hold at most %d", ErrTruncated, nKV, p.left(), p.left()/minKVSize)
	}
	f.kvs = make([]KV, 0, nKV)
	f.keys = make(map[string]int, nKV)
	seen := make(map[string]bool, nKV)
	for i := uint64(0); i < nKV; i++ {
		kv, err := p.kv()
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		if seen[kv.Key] {
			return nil, fmt.Errorf("%w: key %d: duplicate key %q", ErrFormat, i, kv.Key)
		}
		seen[kv.Key] = true
		// ggml compares whole keys for duplicates but finds them with
		// strcmp: a key with a NUL answers to its part before the NUL,
		// the first such key winning. Lookups here do the same.
		if _, ok := f.keys[cString(kv.Key)]; !ok {
			f.keys[cString(kv.Key)] = len(f.kvs)
		}
		f.kvs = append(f.kvs, kv)
	}
	if f.Alignment, err = alignmentOf(f.Lookup(KeyAlignment)); err != nil {
		return nil, err
	}
	if err := p.tensorInfos(f, nTensors); err != nil {
		return nil, err
	}
	if err := p.dataSection(f); err != nil {
		return nil, err
	}
	return f, nil
}

// alignmentOf checks general.alignment as gguf_init_from_file does.
func alignmentOf(v Value, ok bool) (uint64, error) {
	if !ok {
		return DefaultAlignment, nil
	}
	a, isU32 := ValueAs[uint32](v)
	if !isU32 {
		return 0, fmt.Errorf("%w: %s is %s, must be u32", ErrFormat, KeyAlignment, typeLabel(v))
	}
	if a == 0 || a&(a-1) != 0 {
		return 0, fmt.Errorf("%w: %s %d is not a power of 2", ErrFormat, KeyAlignment, a)
	}
	return uint64(a), nil
}

func (p *parser) kv() (KV, error) {
	key, err := p.str("key")
	if err != nil {
		return KV{}, err
	}
	if key == "" {
		return KV{}, fmt.Errorf("%w: empty key", ErrFormat)
	}
	t, err := p.u32("value type")
	if err != nil {
		return KV{}, fmt.Errorf("%q: %w", key, err)
	}
	array, n := false, uint64(1)
	if ValueType(t) == TypeArray {
		array = true
		if t, err = p.u32("array element type"); err != nil {
			return KV{}, fmt.Errorf("%q: %w", key, err)
		}
		if n, err = p.u64("array length"); err != nil {
			return KV{}, fmt.Errorf("%q: %w", key, err)
		}
		if n > MaxArrayLen {
			return KV{}, fmt.Errorf("%w: %q: array of %d elements, at most %d allowed", ErrFormat, key, n, MaxArrayLen)
		}
	}
	if ValueType(t) >= typeCount || ValueType(t) == TypeArray {
		return KV{}, fmt.Errorf("%w: %q: invalid value type %d", ErrFormat, key, int32(t))
	}
	elems, err := p.elems(ValueType(t), n, array)
	if err != nil {
		return KV{}, fmt.Errorf("%q: %w", key, err)
	}
	return KV{Key: key, Value: Value{elems: elems, array: array}}, nil
}

// elems reads n elements of type t (n is at most MaxArrayLen).
func (p *parser) elems(t ValueType, n uint64, array bool) (any, error) {
	if t != TypeString {
		size := uint64(codecs[t].size)
		b, err := p.take(n*size, fmt.Sprintf("%d %s values", n, t))
		if err != nil {
			return nil, err
		}
		return codecs[t].decode(b, int(n)), nil
	}
	// Each string has at least its 8-byte length.
	if n > p.left()/8 {
		return nil, fmt.Errorf("%w: %d strings claimed, the %d bytes left hold at most %d", ErrTruncated, n, p.left(), p.left()/8)
	}
	out := make([]string, n)
	for i := range out {
		what := "value"
		if array {
			what = fmt.Sprintf("string %d", i)
		}
		s, err := p.str(what)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (p *parser) tensorInfos(f *File, n uint64) error {
	if n > p.left()/minTensorInfoSize {
		return fmt.Errorf("%w: %d tensors claimed, the %d bytes left hold at most %d", ErrTruncated, n, p.left(), p.left()/minTensorInfoSize)
	}
	f.tensors = make([]TensorInfo, 0, n)
	f.sizes = make([]uint64, 0, n)
	f.names = make(map[string]int, n)
	for i := uint64(0); i < n; i++ {
		ti, err := p.tensorInfo()
		if err != nil {
			return fmt.Errorf("tensor %d: %w", i, err)
		}
		if _, dup := f.names[ti.Name]; dup {
			return fmt.Errorf("%w: tensor %d: duplicate tensor name %q", ErrFormat, i, ti.Name)
		}
		size, err := ti.check()
		if err != nil {
			return fmt.Errorf("%w: tensor %d (%q): %w", ErrFormat, i, ti.Name, err)
		}
		f.names[ti.Name] = len(f.tensors)
		f.tensors = append(f.tensors, ti)
		f.sizes = append(f.sizes, size)
	}
	return nil
}

func (p *parser) tensorInfo() (TensorInfo, error) {
	var ti TensorInfo
	var err error
	if ti.Name, err = p.str("tensor name"); err != nil {
		return ti, err
	}
	if len(ti.Name) > MaxNameLen {
		return ti, fmt.Errorf("%w: name of %d bytes, at most %d allowed", ErrFormat, len(ti.Name), MaxNameLen)
	}
	// ggml keeps tensor names as C strings: a NUL ends the name (and two
	// names equal up to their NUL are duplicates).
	ti.Name = cString(ti.Name)
	nDims, err := p.u32("dimension count")
	if err != nil {
		return ti, err
	}
	if nDims > MaxDims {
		return ti, fmt.Errorf("%w: %q has %d dimensions, at most %d allowed", ErrFormat, ti.Name, nDims, MaxDims)
	}
	ti.Shape = make([]int64, nDims)
	for j := range ti.Shape {
		d, err := p.u64("dimension")
		if err != nil {
			return ti, err
		}
		ti.Shape[j] = int64(d)
	}
	t, err := p.u32("tensor type")
	if err != nil {
		return ti, err
	}
	ti.Type = quant.Type(t)
	if ti.Offset, err = p.u64("tensor offset"); err != nil {
		return ti, err
	}
	return ti, nil
}

// dataSection places the data section after the aligned end of the
// header and checks that the tensors lie in it one after the other, each
// at the previous one's padded end, as ggml requires, and inside the file.
func (p *parser) dataSection(f *File) error {
	f.DataOffset = p.pos
	if len(f.tensors) > 0 {
		f.DataOffset = alignUp(p.pos, f.Alignment)
		if f.DataOffset > uint64(len(p.b)) {
			return fmt.Errorf("%w: the data section would start at %d, past the end of the file (%d bytes)", ErrTruncated, f.DataOffset, len(p.b))
		}
	}
	room := uint64(len(p.b)) - f.DataOffset
	var next uint64
	for i, ti := range f.tensors {
		switch {
		case ti.Offset%f.Alignment != 0:
			return fmt.Errorf("%w: tensor %q at offset %d is not aligned to %d", ErrFormat, ti.Name, ti.Offset, f.Alignment)
		case ti.Offset < next:
			return fmt.Errorf("%w: tensor %q at offset %d overlaps the previous tensor, which ends at %d", ErrFormat, ti.Name, ti.Offset, next)
		case ti.Offset > next:
			return fmt.Errorf("%w: tensor %q at offset %d leaves a gap after the previous tensor (expected %d)", ErrFormat, ti.Name, ti.Offset, next)
		}
		size := f.sizes[i]
		if size > room || ti.Offset > room-size {
			return fmt.Errorf("%w: tensor %q (%d bytes at data offset %d) ends past the end of the file (%d bytes of data)",
				ErrTruncated, ti.Name, size, ti.Offset, room)
		}
		padded := alignUp(size, f.Alignment)
		if padded < size || next+padded < next {
			return fmt.Errorf("%w: tensor %q: data section size overflows", ErrFormat, ti.Name)
		}
		next += padded
	}
	f.DataSize = next
	return nil
}

// cString is s up to its first NUL, what C code sees of it.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// alignUp rounds n up to a multiple of a, a power of two; it wraps to a
// value below n on overflow, which callers check.
func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }
