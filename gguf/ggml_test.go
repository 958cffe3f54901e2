package gguf

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant"
)

// These tests check package gguf against the real ggml's gguf.cpp, both
// ways, on random metadata (every type, arrays, arrays of strings, NaN bit
// patterns) and random tensors of every type.

func toRef(kvs []KV, tensors []TensorInfo, data [][]byte) ([]ggmlref.GGUFKV, []ggmlref.GGUFTensor) {
	var rk []ggmlref.GGUFKV
	for _, kv := range kvs {
		v := ggmlref.GGUFValue{Type: uint32(kv.Value.ElemType()), Array: kv.Value.IsArray()}
		if s, ok := kv.Value.elems.([]string); ok {
			v.Strings = s
		} else {
			v.Raw = codecs[kv.Value.ElemType()].encode([]byte{}, kv.Value.elems)
		}
		rk = append(rk, ggmlref.GGUFKV{Key: kv.Key, Value: v})
	}
	var rt []ggmlref.GGUFTensor
	for i, t := range tensors {
		rt = append(rt, ggmlref.GGUFTensor{Name: t.Name, Type: uint32(t.Type), Ne: t.Ne(), Offset: t.Offset, Size: t.Size(), Data: data[i]})
	}
	return rk, rt
}

// requireRefSame checks that what ggml read equals what package gguf read.
func requireRefSame(t *testing.T, f *File, g *ggmlref.GGUFFile) {
	t.Helper()
	require.Equal(t, f.Version, g.Version)
	require.Equal(t, f.Alignment, g.Alignment)
	require.Equal(t, f.DataOffset, g.DataOffset)
	kvs, tensors := f.KVs(), f.Tensors()
	data := make([][]byte, len(tensors))
	for i, ti := range tensors {
		data[i], _ = f.TensorData(ti.Name)
	}
	rk, rt := toRef(kvs, tensors, data)
	// ggml's C accessors return keys and strings up to their first NUL.
	for i := range rk {
		rk[i].Key = cString(rk[i].Key)
		if s := rk[i].Value.Strings; s != nil {
			rk[i].Value.Strings = make([]string, len(s))
			for j := range s {
				rk[i].Value.Strings[j] = cString(s[j])
			}
		}
	}
	require.Equal(t, len(rk), len(g.KVs))
	for i := range rk {
		require.Equal(t, rk[i], g.KVs[i], "key %d", i)
	}
	for i := range rt {
		if i < len(g.Tensors) && g.Tensors[i].Data == nil {
			rt[i].Data = nil // ReadGGUFMeta reads no data
		}
	}
	require.Equal(t, rt, g.Tensors)
}

func TestGGMLReadsOurFiles(t *testing.T) {
	l := reftest.Lib(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 6))
	dir := t.TempDir()
	for i := range 60 {
		kvs := randomKVs(r, 20, true)
		tensors, data := randomTensors(r, 8, false)
		p := filepath.Join(dir, "ours.gguf")
		require.NoError(t, os.WriteFile(p, writeFile(t, r, kvs, tensors, data), 0o644))
		g, err := l.ReadGGUF(p)
		require.NoError(t, err, "file %d", i)
		f, err := Open(p)
		require.NoError(t, err)
		requireSame(t, f, kvs, tensors, data)
		requireRefSame(t, f, g)
		require.NoError(t, f.Close())
	}
}

func TestWeReadGGMLFiles(t *testing.T) {
	l := reftest.Lib(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	dir := t.TempDir()
	for i := range 60 {
		// ggml's gguf_set_val_u32 stores general.alignment but its writer
		// keeps padding to the context's alignment (32 for
		// gguf_init_empty), making files ggml itself refuses: alignment
		// (ggml cannot even rewrite a file it read: its tensor infos'
		// buffer field is left uninitialized, and the write crashes).
		// Other alignments are covered by TestGGMLReadsOurFiles.
		kvs := slices.DeleteFunc(randomKVs(r, 20, true), func(kv KV) bool { return kv.Key == KeyAlignment })
		tensors, data := randomTensors(r, 8, true)
		rk, rt := toRef(kvs, tensors, data)
		p := filepath.Join(dir, "ggml.gguf")
		require.NoError(t, l.WriteGGUF(p, rk, rt), "file %d", i)
		f, err := Open(p)
		require.NoError(t, err, "file %d", i)
		requireSame(t, f, kvs, tensors, data)
		g, err := l.ReadGGUF(p)
		require.NoError(t, err)
		requireRefSame(t, f, g)
		// Our writer makes the same bytes from the same content.
		want, err := os.ReadFile(p)
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, writeFile(t, r, kvs, tensors, data)), "file %d differs from ggml's", i)
		require.NoError(t, f.Close())
	}
}

// TestRefusesWhatGGMLRefuses mutates valid files at random and requires
// both readers to agree on every one: accepted by both with the same
// content, or refused by both. The one leniency is documented: the last
// tensor's padding may be missing (ggml reads the padded data section;
// llama.cpp, mapping the file, does not need it).
func TestRefusesWhatGGMLRefuses(t *testing.T) {
	l := reftest.Lib(t)
	restore, err := l.QuietGGUF()
	require.NoError(t, err)
	defer restore()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 8))
	p := filepath.Join(t.TempDir(), "m.gguf")
	var accepted, refused, ggmlBug int
	for i := range 1500 {
		kvs := randomKVs(r, 4, true)
		tensors, data := randomTensors(r, 3, false)
		b := writeFile(t, r, kvs, tensors, data)
		for range 1 + r.IntN(3) {
			b[r.IntN(len(b))] = byte(r.Uint32())
		}
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b)+1)]
		}
		require.NoError(t, os.WriteFile(p, b, 0o644))
		f, ourErr := Parse(b)
		// Metadata only: with a context ggml would first allocate the
		// whole data section a mutated header claims. The data section's
		// presence, the one check that skips, is ggml's last step:
		// gguf_init_from_file reads DataSize bytes at DataOffset.
		g, refErr := l.ReadGGUFMeta(p)
		dataMissing := false
		if refErr == nil && len(g.Tensors) > 0 {
			last := g.Tensors[len(g.Tensors)-1]
			end := g.DataOffset + last.Offset + alignUp(last.Size, g.Alignment)
			dataMissing = uint64(len(b)) < end
		}
		switch {
		case ourErr == nil && refErr == nil:
			accepted++
			requireRefSame(t, f, g)
		case ourErr != nil && refErr != nil:
			refused++
			require.ErrorIs(t, ourErr, ErrFormat)
		case ourErr == nil:
			t.Fatalf("file %d: ggml refuses what we accept: %v", i, refErr)
		case overflowingShape(g.Tensors):
			// ggml 0.25.1 bug: its element-count check does not stop a
			// shape whose elements or bytes pass 2^63 (seen with ne =
			// [2^32, 2^32]: accepted with a wrapped size). We refuse it.
			ggmlBug++
			require.ErrorContains(t, ourErr, "2^63", "file %d", i)
		default:
			require.True(t, dataMissing, "file %d: ggml accepts what we refuse: %v", i, ourErr)
			refused++
		}
		if ourErr == nil && dataMissing {
			require.Less(t, uint64(len(b)), f.DataOffset+f.DataSize, "only the last padding may be missing")
		}
	}
	t.Logf("%d accepted by both, %d refused by both, %d overflowing shapes ggml accepts and we refuse", accepted, refused, ggmlBug)
	require.Positive(t, accepted)
	require.Positive(t, refused)
}

// overflowingShape reports whether a tensor ggml accepted has 2^63
// elements or bytes or more.
func overflowingShape(ts []ggmlref.GGUFTensor) bool {
	limit := new(big.Int).Lsh(big.NewInt(1), 63)
	for _, tt := range ts {
		n := big.NewInt(1)
		for _, d := range tt.Ne {
			n.Mul(n, big.NewInt(d))
		}
		typ := quant.Type(tt.Type)
		bytes := new(big.Int).Mul(n, big.NewInt(int64(typ.TypeSize())))
		bytes.Quo(bytes, big.NewInt(int64(max(typ.BlockSize(), 1))))
		if n.Cmp(limit) >= 0 || bytes.Cmp(limit) >= 0 {
			return true
		}
	}
	return false
}

// TestGGMLTensorTypes checks the block layouts both readers size tensors by.
func TestGGMLTensorTypes(t *testing.T) {
	l := reftest.Lib(t)
	for _, typ := range quant.Types() {
		tr, err := l.Traits(uint32(typ))
		require.NoError(t, err)
		require.EqualValues(t, tr.BlockSize, typ.BlockSize(), "%s", typ)
		require.EqualValues(t, tr.TypeSize, typ.TypeSize(), "%s", typ)
	}
}
