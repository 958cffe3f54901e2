package gguf

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// randomString makes strings of every kind a file can hold: empty, ASCII,
// multi-byte UTF-8, embedded NULs and invalid UTF-8 (GGUF does not check).
func randomString(r *rand.Rand, noNUL bool) string {
	n := r.IntN(5)
	if r.IntN(4) == 0 {
		n = r.IntN(200)
	}
	b := make([]byte, 0, n)
	for range n {
		switch r.IntN(6) {
		case 0:
			b = append(b, []byte([]string{"é", "漢", "🙂"}[r.IntN(3)])...)
		case 1:
			b = append(b, byte(r.IntN(256)))
		default:
			b = append(b, byte('a'+r.IntN(26)))
		}
	}
	if noNUL {
		b = bytes.ReplaceAll(b, []byte{0}, []byte{'0'})
	}
	return string(b)
}

// randomValue returns a value of type t, a scalar or an array.
func randomValue(r *rand.Rand, t ValueType, array, noNUL bool) Value {
	n := 1
	if array {
		n = r.IntN(8)
		if r.IntN(5) == 0 {
			n = r.IntN(300)
		}
	}
	var elems any
	switch t {
	case TypeUint8:
		elems = randomElems(n, func() uint8 { return uint8(r.Uint32()) })
	case TypeInt8:
		elems = randomElems(n, func() int8 { return int8(r.Uint32()) })
	case TypeUint16:
		elems = randomElems(n, func() uint16 { return uint16(r.Uint32()) })
	case TypeInt16:
		elems = randomElems(n, func() int16 { return int16(r.Uint32()) })
	case TypeUint32:
		elems = randomElems(n, r.Uint32)
	case TypeInt32:
		elems = randomElems(n, r.Int32)
	case TypeFloat32:
		// Bit patterns, NaNs and infinities included: values must survive
		// bit for bit. NaNs are quiet ones: purego hands a float32
		// argument (gguf_set_val_f32's) to C through reflect's float64,
		// which quiets a signaling NaN on the way into ggml.
		elems = randomElems(n, func() float32 {
			b := r.Uint32()
			if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
				b |= 0x400000
			}
			return math.Float32frombits(b)
		})
	case TypeBool:
		elems = randomElems(n, func() bool { return r.IntN(2) == 1 })
	case TypeString:
		elems = randomElems(n, func() string { return randomString(r, noNUL) })
	case TypeUint64:
		elems = randomElems(n, r.Uint64)
	case TypeInt64:
		elems = randomElems(n, r.Int64)
	case TypeFloat64:
		elems = randomElems(n, func() float64 { return math.Float64frombits(r.Uint64()) })
	}
	return Value{elems: elems, array: array}
}

func randomElems[T Scalar](n int, gen func() T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = gen()
	}
	return out
}

// scalarTypes are the value types an element can have.
var scalarTypes = []ValueType{TypeUint8, TypeInt8, TypeUint16, TypeInt16, TypeUint32, TypeInt32, TypeFloat32,
	TypeBool, TypeString, TypeUint64, TypeInt64, TypeFloat64}

// randomKVs makes up to n pairs of every type with unique keys, sometimes
// with general.alignment.
func randomKVs(r *rand.Rand, n int, noNUL bool) []KV {
	var kvs []KV
	for i := range r.IntN(n + 1) {
		t := scalarTypes[r.IntN(len(scalarTypes))]
		kvs = append(kvs, KV{Key: fmt.Sprintf("k%d.%s", i, randomString(r, true)), Value: randomValue(r, t, r.IntN(2) == 0, noNUL)})
	}
	if r.IntN(2) == 0 {
		kv := KV{Key: KeyAlignment, Value: ScalarValue(uint32(1) << r.IntN(8))}
		kvs = append(kvs, kv)
		i := r.IntN(len(kvs))
		kvs[i], kvs[len(kvs)-1] = kvs[len(kvs)-1], kvs[i]
	}
	return kvs
}

// randomTensors makes up to n tensors of random valid types and shapes
// (zero-sized ones included), with data, and shapes without trailing ones
// as ggml writes them. ggmlWrites keeps zeros to the first dimension:
// ggml's writer counts dimensions up to the last one above 1, so it would
// write [512 0] as [512].
func randomTensors(r *rand.Rand, n int, ggmlWrites bool) ([]TensorInfo, [][]byte) {
	types := quant.Types()
	var ts []TensorInfo
	var data [][]byte
	for i := range r.IntN(n + 1) {
		t := types[r.IntN(len(types))]
		nd := 1 + r.IntN(MaxDims)
		shape := make([]int64, nd)
		for j := range shape {
			shape[j] = int64(1 + r.IntN(5))
			if r.IntN(20) == 0 && (j == 0 || !ggmlWrites) {
				shape[j] = 0
			}
		}
		shape[0] *= int64(t.BlockSize())
		for len(shape) > 1 && shape[len(shape)-1] == 1 {
			shape = shape[:len(shape)-1]
		}
		ti := TensorInfo{Name: fmt.Sprintf("t%d.%s", i, randomString(r, true)), Type: t, Shape: shape}
		if len(ti.Name) > MaxNameLen {
			ti.Name = ti.Name[:MaxNameLen]
		}
		d := make([]byte, ti.Size())
		for k := range d {
			d[k] = byte(r.Uint32())
		}
		ts = append(ts, ti)
		data = append(data, d)
	}
	return ts, data
}

// writeFile writes kvs and tensors through a Writer, feeding the data in
// random chunks that cross tensor boundaries.
func writeFile(t testing.TB, r *rand.Rand, kvs []KV, tensors []TensorInfo, data [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, kvs, tensors)
	require.NoError(t, err)
	all := bytes.Join(data, nil)
	for len(all) > 0 {
		n := min(len(all), 1+r.IntN(100))
		k, err := w.Write(all[:n])
		require.NoError(t, err)
		require.Equal(t, n, k)
		all = all[n:]
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// requireSame checks that f holds exactly kvs and tensors with data.
func requireSame(t testing.TB, f *File, kvs []KV, tensors []TensorInfo, data [][]byte) {
	t.Helper()
	require.Equal(t, len(kvs), f.NumKV())
	for i, kv := range f.KVs() {
		require.Equal(t, kvs[i].Key, kv.Key)
		requireSameValue(t, kvs[i].Value, kv.Value)
	}
	require.Equal(t, len(tensors), f.NumTensors())
	for i, ti := range f.Tensors() {
		require.Equal(t, tensors[i].Name, ti.Name)
		require.Equal(t, tensors[i].Type, ti.Type)
		require.Equal(t, tensors[i].Shape, ti.Shape)
		require.Zero(t, ti.Offset%f.Alignment)
		d, err := f.TensorData(ti.Name)
		require.NoError(t, err)
		require.Equal(t, data[i], d, "tensor %q", ti.Name)
	}
}

// requireSameValue compares bit patterns, so NaNs compare equal to
// themselves.
func requireSameValue(t testing.TB, want, got Value) {
	t.Helper()
	require.Equal(t, want.Type(), got.Type())
	require.Equal(t, want.ElemType(), got.ElemType())
	require.Equal(t, want.Len(), got.Len())
	c := codecs[want.ElemType()]
	require.Equal(t, c.encode(nil, want.elems), c.encode(nil, got.elems))
}

func TestRoundTrip(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for range 200 {
		kvs := randomKVs(r, 20, false)
		tensors, data := randomTensors(r, 8, false)
		b := writeFile(t, r, kvs, tensors, data)
		f, err := Parse(b)
		require.NoError(t, err)
		require.EqualValues(t, Version, f.Version)
		requireSame(t, f, kvs, tensors, data)

		// Writing what was read gives the same bytes.
		var again bytes.Buffer
		w, err := NewWriter(&again, f.KVs(), f.Tensors())
		require.NoError(t, err)
		for _, ti := range f.Tensors() {
			d, _ := f.TensorData(ti.Name)
			require.NoError(t, w.WriteTensor(ti.Name, d))
		}
		require.NoError(t, w.Close())
		require.Equal(t, b, again.Bytes())
	}
}

func TestOpenMapsWithoutCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tensors := []TensorInfo{
		{Name: "a", Type: quant.F32, Shape: []int64{7, 3}},
		{Name: "b", Type: quant.Q4_0, Shape: []int64{64, 2}},
		{Name: "empty", Type: quant.F16, Shape: []int64{0}},
		{Name: "c", Type: quant.Q6_K, Shape: []int64{256}},
	}
	data := [][]byte{make([]byte, 84), make([]byte, 72), {}, make([]byte, 210)}
	for _, d := range data {
		for i := range d {
			d[i] = byte(r.Uint32())
		}
	}
	kvs := []KV{{Key: KeyAlignment, Value: ScalarValue(uint32(64))}, {Key: "general.name", Value: ScalarValue("x")}}
	p := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, os.WriteFile(p, writeFile(t, r, kvs, tensors, data), 0o644))
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	require.EqualValues(t, 64, f.Alignment)
	require.Zero(t, f.DataOffset%64)
	requireSame(t, f, kvs, tensors, data)
	// Tensor data lies inside the mapping.
	file := f.Bytes()
	lo, hi := uintptr(unsafe.Pointer(&file[0])), uintptr(unsafe.Pointer(&file[0]))+uintptr(len(file))
	for _, name := range []string{"a", "b", "c"} {
		d, err := f.TensorData(name)
		require.NoError(t, err)
		ptr := uintptr(unsafe.Pointer(&d[0]))
		require.True(t, ptr >= lo && ptr+uintptr(len(d)) <= hi, "%s is a copy", name)
		ti, _ := f.Tensor(name)
		require.Equal(t, f.DataOffset+ti.Offset, uint64(ptr-lo))
	}
	// Layout: each tensor at the previous one's padded end.
	ts := f.Tensors()
	require.Equal(t, []uint64{0, 128, 256, 256}, []uint64{ts[0].Offset, ts[1].Offset, ts[2].Offset, ts[3].Offset})
	require.EqualValues(t, 512, f.DataSize)
	require.NoError(t, f.Close())

	_, err = Open(filepath.Join(t.TempDir(), "missing.gguf"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestTypedAccess(t *testing.T) {
	kvs := []KV{
		{Key: "u32", Value: ScalarValue(uint32(7))},
		{Key: "f32", Value: ScalarValue(float32(1.5))},
		{Key: "s", Value: ScalarValue("hi")},
		{Key: "toks", Value: ArrayValue([]string{"a", "b"})},
		{Key: "scores", Value: ArrayValue([]float32{1, 2, 3})},
		{Key: "none", Value: ArrayValue[int32](nil)},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, kvs, nil)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	f, err := Parse(buf.Bytes())
	require.NoError(t, err)

	u, err := Get[uint32](f, "u32")
	require.NoError(t, err)
	require.EqualValues(t, 7, u)
	s, err := Get[string](f, "s")
	require.NoError(t, err)
	require.Equal(t, "hi", s)
	toks, err := GetArray[string](f, "toks")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, toks)
	sc, err := GetArray[float32](f, "scores")
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3}, sc)
	none, err := GetArray[int32](f, "none")
	require.NoError(t, err)
	require.Empty(t, none)

	_, err = Get[uint64](f, "u32")
	require.ErrorIs(t, err, ErrType, "strict types, as llama.cpp")
	require.ErrorContains(t, err, "is u32, want u64")
	_, err = Get[string](f, "toks")
	require.ErrorIs(t, err, ErrType)
	require.ErrorContains(t, err, "an array of str")
	_, err = GetArray[float32](f, "f32")
	require.ErrorIs(t, err, ErrType)
	_, err = Get[uint32](f, "missing")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = GetArray[uint32](f, "missing")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = f.TensorData("missing")
	require.ErrorIs(t, err, ErrNotFound)
	_, ok := f.Tensor("missing")
	require.False(t, ok)

	v, ok := f.Lookup("scores")
	require.True(t, ok)
	require.Equal(t, "[1, 2, 3]", v.String())
	require.Equal(t, []float32{1, 2, 3}, v.Interface())
	v, _ = f.Lookup("u32")
	require.Equal(t, uint32(7), v.Interface())
	require.Equal(t, `"hi"`, ScalarValue("hi").String())
	require.Equal(t, `[1, 2, ...]`, ArrayValue([]int8{1, 2, 3}).Format(2))
	require.Equal(t, "u32", TypeUint32.String())
	require.Equal(t, "ValueType(13)", ValueType(13).String())
}

func TestWriterErrors(t *testing.T) {
	ok := []TensorInfo{{Name: "a", Type: quant.F32, Shape: []int64{4}}, {Name: "b", Type: quant.F32, Shape: []int64{2}}}
	for name, c := range map[string]struct {
		kvs     []KV
		tensors []TensorInfo
	}{
		"empty key":         {kvs: []KV{{Key: "", Value: ScalarValue(int32(1))}}},
		"duplicate key":     {kvs: []KV{{Key: "a", Value: ScalarValue(int32(1))}, {Key: "a", Value: ScalarValue(int32(2))}}},
		"zero value":        {kvs: []KV{{Key: "a"}}},
		"alignment u64":     {kvs: []KV{{Key: KeyAlignment, Value: ScalarValue(uint64(32))}}},
		"alignment 48":      {kvs: []KV{{Key: KeyAlignment, Value: ScalarValue(uint32(48))}}},
		"alignment 0":       {kvs: []KV{{Key: KeyAlignment, Value: ScalarValue(uint32(0))}}},
		"duplicate tensor":  {tensors: []TensorInfo{ok[0], ok[0]}},
		"long name":         {tensors: []TensorInfo{{Name: string(make([]byte, 64)), Type: quant.F32, Shape: []int64{1}}}},
		"five dims":         {tensors: []TensorInfo{{Name: "x", Type: quant.F32, Shape: []int64{1, 1, 1, 1, 1}}}},
		"negative dim":      {tensors: []TensorInfo{{Name: "x", Type: quant.F32, Shape: []int64{-1}}}},
		"removed type":      {tensors: []TensorInfo{{Name: "x", Type: 4, Shape: []int64{32}}}},
		"block size":        {tensors: []TensorInfo{{Name: "x", Type: quant.Q4_0, Shape: []int64{16}}}},
		"elements overflow": {tensors: []TensorInfo{{Name: "x", Type: quant.F32, Shape: []int64{1 << 32, 1 << 31}}}},
		"bytes overflow":    {tensors: []TensorInfo{{Name: "x", Type: quant.F64, Shape: []int64{1 << 31, 1 << 31}}}},
	} {
		_, err := NewWriter(&bytes.Buffer{}, c.kvs, c.tensors)
		require.ErrorIs(t, err, ErrArgument, name)
	}

	w, err := NewWriter(&bytes.Buffer{}, nil, ok)
	require.NoError(t, err)
	require.ErrorIs(t, w.WriteTensor("b", make([]byte, 8)), ErrArgument, "out of order")
	require.ErrorIs(t, w.WriteTensor("a", make([]byte, 15)), ErrArgument, "wrong size")
	require.ErrorIs(t, w.Close(), ErrArgument, "nothing written")
	_, err = w.Write(make([]byte, 3))
	require.NoError(t, err)
	require.ErrorIs(t, w.WriteTensor("a", make([]byte, 16)), ErrArgument, "a is half written")
	n, err := w.Write(make([]byte, 13+8+1))
	require.ErrorIs(t, err, ErrArgument, "one byte too many")
	require.Equal(t, 21, n)
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.WriteTensor("c", nil), ErrArgument)

	_, err = NewWriter(failWriter{}, nil, ok)
	require.ErrorContains(t, err, "disk full")
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }
