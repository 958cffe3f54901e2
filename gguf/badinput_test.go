package gguf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// raw builds a file field by field, so each test breaks exactly one thing.
type raw struct{ b []byte }

func (r *raw) u32(v uint32) *raw   { r.b = le.AppendUint32(r.b, v); return r }
func (r *raw) u64(v uint64) *raw   { r.b = le.AppendUint64(r.b, v); return r }
func (r *raw) str(s string) *raw   { r.b = appendString(r.b, s); return r }
func (r *raw) bytes(b []byte) *raw { r.b = append(r.b, b...); return r }
func (r *raw) header(version uint32, nTensors, nKV uint64) *raw {
	return r.bytes([]byte(Magic)).u32(version).u64(nTensors).u64(nKV)
}
func (r *raw) kvU32(key string, v uint32) *raw { return r.str(key).u32(uint32(TypeUint32)).u32(v) }
func (r *raw) tensor(name string, typ quant.Type, offset uint64, shape ...int64) *raw {
	r.str(name).u32(uint32(len(shape)))
	for _, d := range shape {
		r.u64(uint64(d))
	}
	return r.u32(uint32(typ)).u64(offset)
}

// pad appends zeros up to a multiple of a.
func (r *raw) pad(a int) *raw {
	for len(r.b)%a != 0 {
		r.b = append(r.b, 0)
	}
	return r
}

// twoTensors is a valid file: one key, two F32 tensors of 4 and 3 floats.
func twoTensors() []byte {
	r := (&raw{}).header(3, 2, 1).kvU32("a", 1).
		tensor("x", quant.F32, 0, 4).tensor("y", quant.F32, 32, 3).pad(32)
	return r.bytes(make([]byte, 32+12)).pad(32).b
}

// parseErr parses b, requires an ErrFormat error containing msg, and
// checks the parse allocated little: no allocation sized by a claim.
func parseErr(t *testing.T, b []byte, msg string) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Parse(b)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrFormat)
	require.ErrorContains(t, err, msg)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "allocated for a claim")
}

func TestValidBase(t *testing.T) {
	f, err := Parse(twoTensors())
	require.NoError(t, err)
	require.Equal(t, 2, f.NumTensors())
	y, err := f.TensorData("y")
	require.NoError(t, err)
	require.Len(t, y, 12)
}

func TestTruncatedEverywhere(t *testing.T) {
	b := twoTensors()
	// The last tensor's padding is not needed (llama.cpp does not need it
	// either); every shorter prefix is refused.
	need := len(b) - 20
	for n := range need {
		_, err := Parse(b[:n])
		require.ErrorIs(t, err, ErrTruncated, "prefix of %d bytes", n)
	}
	_, err := Parse(b[:need])
	require.NoError(t, err)
}

func TestBadHeader(t *testing.T) {
	parseErr(t, (&raw{}).bytes([]byte("GGUG")).u32(3).u64(0).u64(0).b, `magic "GGUG"`)
	parseErr(t, (&raw{}).header(0, 0, 0).b, "version 0")
	parseErr(t, (&raw{}).header(1, 0, 0).b, "version 1 is no longer supported")
	parseErr(t, (&raw{}).header(4, 0, 0).b, "version 4 is newer")
	parseErr(t, (&raw{}).header(0x03000000, 0, 0).b, "big-endian")
	parseErr(t, (&raw{}).header(3, 1<<63, 0).b, "negative count")
	parseErr(t, (&raw{}).header(3, 0, 1<<63+5).b, "negative count")
	parseErr(t, (&raw{}).header(3, 0, 1<<40).kvU32("a", 1).b, "1099511627776 keys claimed")
	parseErr(t, (&raw{}).header(3, 1<<40, 0).tensor("x", quant.F32, 0, 1).b, "1099511627776 tensors claimed")

	// Version 2 has the same layout and is read.
	f, err := Parse((&raw{}).header(2, 0, 1).kvU32("a", 1).b)
	require.NoError(t, err)
	require.EqualValues(t, 2, f.Version)
}

func TestBadKV(t *testing.T) {
	kv := func(build func(r *raw)) []byte {
		r := (&raw{}).header(3, 0, 1)
		build(r)
		return r.b
	}
	parseErr(t, kv(func(r *raw) { r.u64(math.MaxUint64).bytes([]byte("abcdefgh")) }), "key is 18446744073709551615 bytes long")
	parseErr(t, kv(func(r *raw) { r.u64(1000).bytes([]byte("abcdefgh")) }), "key needs 1000 bytes")
	parseErr(t, kv(func(r *raw) { r.str("").u32(uint32(TypeUint8)).bytes([]byte{1, 2, 3}) }), "empty key")
	parseErr(t, kv(func(r *raw) { r.str("k").u32(13).u32(0) }), "invalid value type 13")
	parseErr(t, kv(func(r *raw) { r.str("k").u32(math.MaxUint32).u32(0) }), "invalid value type -1")
	parseErr(t, kv(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(0) }), "invalid value type 9")
	parseErr(t, kv(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(MaxArrayLen + 1) }), "array of 1073741825 elements")
	parseErr(t, kv(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint64)).u64(MaxArrayLen).u64(1) }), "1073741824 u64 values needs 8589934592 bytes")
	parseErr(t, kv(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(MaxArrayLen).str("a") }), "1073741824 strings claimed")
	parseErr(t, kv(func(r *raw) {
		r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(2).str("a").u64(MaxStringLen + 1)
	}), "string 1 is 1073741825 bytes long")
	parseErr(t, kv(func(r *raw) { r.str("k").u32(uint32(TypeString)).u64(1 << 20).bytes([]byte("x")) }), "value needs 1048576 bytes")
	parseErr(t, kv(func(r *raw) { r.str("k").u32(uint32(TypeFloat64)).u32(0) }), "1 f64 values needs 8 bytes")

	parseErr(t, (&raw{}).header(3, 0, 2).kvU32("a", 1).kvU32("a", 2).b, `duplicate key "a"`)
	parseErr(t, (&raw{}).header(3, 0, 1).str(KeyAlignment).u32(uint32(TypeUint64)).u64(32).b, "general.alignment is u64, must be u32")
	parseErr(t, (&raw{}).header(3, 0, 1).str(KeyAlignment).u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(1).u32(32).b,
		"general.alignment is an array of u32, must be u32")
	parseErr(t, (&raw{}).header(3, 0, 1).kvU32(KeyAlignment, 0).b, "alignment 0 is not a power of 2")
	// ggml finds keys with strcmp: "general.alignment\x00x" is general.alignment.
	parseErr(t, (&raw{}).header(3, 0, 1).kvU32(KeyAlignment+"\x00x", 24).b, "alignment 24 is not a power of 2")
	parseErr(t, (&raw{}).header(3, 0, 1).kvU32(KeyAlignment, 24).b, "alignment 24 is not a power of 2")
}

func TestBadTensorInfo(t *testing.T) {
	one := func(build func(r *raw)) []byte {
		r := (&raw{}).header(3, 1, 0)
		build(r)
		return r.pad(32).bytes(make([]byte, 64)).b
	}
	parseErr(t, one(func(r *raw) { r.tensor(string(bytes.Repeat([]byte("n"), 64)), quant.F32, 0, 1) }), "name of 64 bytes")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.F32, 0, 1, 1, 1, 1, 1) }), "5 dimensions")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.F32, 0, 4, -2) }), "dimension 1 has -2 elements")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.F32, 0, 1<<32, 1<<31) }), "2^63 elements or more")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.F64, 0, 1<<31, 1<<31) }), "2^63 bytes or more")
	// An empty dimension makes the tensor empty, as in ggml, even when the
	// other dimensions' product overflows (found by the random comparison
	// with ggml).
	big, err := Parse(one(func(r *raw) { r.tensor("x", quant.Q5_1, 0, 0, 4, 3674937295934324740, 5) }))
	require.NoError(t, err)
	require.Zero(t, big.Tensors()[0].Size())
	// The same when one row's bytes overflow (i64, ne0 near 2^62: seen in
	// the random comparison with ggml 0.25.1, which accepts it).
	wide, err := Parse(one(func(r *raw) { r.tensor("x", quant.I64, 0, 3963167672086036481, 0, 5) }))
	require.NoError(t, err)
	require.Zero(t, wide.Tensors()[0].Size())
	parseErr(t, one(func(r *raw) { r.tensor("x", 4, 0, 32) }), "type 4 is not a ggml type")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.TypeCount, 0, 32) }), "type 43 is not a ggml type")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.Q4_K, 0, 32) }), "32 elements per row is not a multiple of q4_K's block size 256")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.F32, 16, 4) }), "offset 16 is not aligned to 32")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.F32, 32, 4) }), "leaves a gap")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.F32, 0, 17) }), "ends past the end of the file")
	parseErr(t, one(func(r *raw) { r.tensor("x", quant.F32, 0, 1<<40) }), "ends past the end of the file")

	two := (&raw{}).header(3, 2, 0).tensor("x", quant.F32, 0, 16).tensor("y", quant.F32, 32, 4).pad(32).bytes(make([]byte, 96)).b
	parseErr(t, two, `"y" at offset 32 overlaps the previous tensor, which ends at 64`)
	dup := (&raw{}).header(3, 2, 0).tensor("x", quant.F32, 0, 4).tensor("x", quant.F32, 32, 4).pad(32).bytes(make([]byte, 64)).b
	parseErr(t, dup, `duplicate tensor name "x"`)
	nul := (&raw{}).header(3, 2, 0).tensor("x\x00a", quant.F32, 0, 4).tensor("x\x00b", quant.F32, 32, 4).pad(32).bytes(make([]byte, 64)).b
	parseErr(t, nul, `duplicate tensor name "x"`)
	// The header ends beyond the last aligned position the file reaches.
	short := (&raw{}).header(3, 1, 0).tensor("x", quant.F32, 0, 0).b
	parseErr(t, short, "the data section would start at 64")

	// A zero-element tensor with no data, and n_dims 0 (a scalar), are valid.
	f, err := Parse((&raw{}).header(3, 2, 0).tensor("x", quant.F32, 0, 0).tensor("s", quant.F32, 0).pad(32).bytes(make([]byte, 4)).b)
	require.NoError(t, err)
	s, _ := f.Tensor("s")
	require.Empty(t, s.Shape)
	require.EqualValues(t, 1, s.Elements())
	require.EqualValues(t, 4, s.Size())
}

// TestMutations flips random bytes of valid files: every result parses or
// fails with ErrFormat, and a file that parses gives in-bounds data.
func TestMutations(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 3))
	for range 2000 {
		kvs := randomKVs(r, 4, false)
		tensors, data := randomTensors(r, 3, false)
		b := writeFile(t, r, kvs, tensors, data)
		for range 1 + r.IntN(4) {
			i := r.IntN(len(b))
			b[i] = byte(r.Uint32())
		}
		checkParse(t, b)
	}
}

// checkParse is what the fuzzer asserts about any input.
func checkParse(t testing.TB, b []byte) {
	f, err := Parse(b)
	if err != nil {
		require.ErrorIs(t, err, ErrFormat)
		return
	}
	for _, ti := range f.Tensors() {
		d, err := f.TensorData(ti.Name)
		require.NoError(t, err)
		require.EqualValues(t, ti.Size(), len(d))
	}
	for _, kv := range f.KVs() {
		require.NotEmpty(t, kv.Key)
		_ = kv.Value.String()
	}
	// What parses writes back and parses again to the same content.
	var buf bytes.Buffer
	w, err := NewWriter(&buf, f.KVs(), f.Tensors())
	require.NoError(t, err)
	data := make([][]byte, f.NumTensors())
	for i, ti := range f.Tensors() {
		data[i], _ = f.TensorData(ti.Name)
		require.NoError(t, w.WriteTensor(ti.Name, data[i]))
	}
	require.NoError(t, w.Close())
	g, err := Parse(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, f.Alignment, g.Alignment)
	requireSame(t, g, f.KVs(), f.Tensors(), data)
}

func FuzzReader(f *testing.F) {
	r := rand.New(rand.NewPCG(4, 5))
	f.Add(twoTensors())
	for range 8 {
		kvs := randomKVs(r, 5, false)
		tensors, data := randomTensors(r, 3, false)
		f.Add(writeFile(f, r, kvs, tensors, data))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkParse(t, b) })
}
