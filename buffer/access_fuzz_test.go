package buffer_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// FuzzTensorAccess: SetTensor, GetTensor, their 2-D forms and
// MemsetTensor, at random offsets, sizes and strides, on a tensor or a
// view of it in host memory and in device memory, either do exactly what a
// model of the tensor's bytes predicts or fail with ErrOutOfBounds; they
// never panic, and the bytes around the tensor never change.
func FuzzTensorAccess(f *testing.F) {
	f.Add(uint8(0), uint16(40), uint16(3), uint64(0), uint64(4), uint64(2), uint64(8), uint64(5), false)
	f.Add(uint8(1), uint16(7), uint16(2), uint64(3), uint64(9), uint64(3), uint64(4), uint64(4), true)
	f.Add(uint8(2), uint16(64), uint16(1), uint64(1<<63), uint64(1<<63), uint64(1<<40), uint64(1<<62), uint64(0), false)
	f.Add(uint8(3), uint16(1), uint16(5), uint64(60), uint64(1), uint64(0), uint64(0), uint64(1), true)
	f.Fuzz(func(t *testing.T, op uint8, ne0, ne1 uint16, offset, size, n, strideT, strideD uint64, view bool) {
		c := graph.NewContext(graph.ContextOptions{})
		x := c.NewTensor(quant.I8, int64(ne0%97), int64(ne1%9))
		require.NoError(t, c.Err())
		const guard = 64
		for _, typ := range []buffer.Type{buffer.CPU(), &devType{name: "DEV", maxSize: 1 << 20}} {
			total := guard + typ.AllocSize(x) + guard
			b, err := typ.Alloc(total)
			require.NoError(t, err)
			defer b.Free()
			require.NoError(t, b.Clear(0xee))
			require.NoError(t, b.AllocTensor(x, guard))
			tgt := x
			if view && x.Ne[0] > 1 {
				// Rows without their first byte: a view at an offset.
				tgt = c.View2D(x, x.Ne[0]-1, x.Ne[1], x.Nb[1], 1)
				require.NoError(t, c.Err())
				require.NoError(t, b.InitView(tgt))
			}
			nb := tgt.NBytes()
			model := bytes.Repeat([]byte{0xee}, int(nb))
			data := make([]byte, min(size, 4096))
			for i := range data {
				data[i] = byte(i*7 + 1)
			}
			var got error
			var want bool // whether the call must succeed
			switch op % 5 {
			case 0:
				got = b.SetTensor(tgt, data, offset)
				if want = fits(offset, uint64(len(data)), nb); want {
					copy(model[offset:], data)
				}
			case 1:
				out := make([]byte, len(data))
				got = b.GetTensor(tgt, out, offset)
				if want = fits(offset, uint64(len(out)), nb); want && got == nil {
					require.Equal(t, model[offset:offset+uint64(len(out))], out)
				}
			case 2:
				got = b.MemsetTensor(tgt, 0x5a, offset, size%8192)
				if want = fits(offset, size%8192, nb); want {
					copy(model[offset:], bytes.Repeat([]byte{0x5a}, int(size%8192)))
				}
			case 3, 4:
				bs, nn := size%64, n%64
				want = fits2D(offset, bs, nn, strideT, nb) && fits2D(0, bs, nn, strideD, uint64(len(data)))
				if op%5 == 3 {
					got = b.SetTensor2D(tgt, data, offset, bs, nn, strideT, strideD)
					if want && bs > 0 {
						for i := range nn {
							copy(model[offset+i*strideT:], data[i*strideD:i*strideD+bs])
						}
					}
				} else {
					out := make([]byte, len(data))
					got = b.GetTensor2D(tgt, out, offset, bs, nn, strideT, strideD)
				}
			}
			if want {
				require.NoError(t, got, "%s op %d", typ.Name(), op%5)
			} else {
				require.True(t, errors.Is(got, buffer.ErrOutOfBounds), "%s op %d: want ErrOutOfBounds, got %v", typ.Name(), op%5, got)
			}
			// The tensor holds what the model says, its surroundings the
			// guard bytes.
			raw := readAll(t, b, total)
			start := guard + tgt.ViewOffs
			require.Equal(t, model, raw[start:start+nb], "%s: the tensor's bytes", typ.Name())
			for i, v := range raw[:guard] {
				require.Equal(t, byte(0xee), v, "%s: guard byte %d before the tensor", typ.Name(), i)
			}
			for i, v := range raw[guard+x.NBytes():] {
				require.Equal(t, byte(0xee), v, "%s: guard byte %d after the tensor", typ.Name(), i)
			}
		}
	})
}

// fits reports whether [off, off+size) lies within n bytes, without
// overflow.
func fits(off, size, n uint64) bool { return off <= n && size <= n-off }

// fits2D reports whether n blocks of size bytes, stride apart from off,
// lie within limit bytes; no blocks, or empty ones, always fit.
func fits2D(off, size, n, stride, limit uint64) bool {
	if n == 0 || size == 0 {
		return true
	}
	if n > 1 && stride > (1<<62)/(n-1) {
		return false
	}
	return fits(off, (n-1)*stride+size, limit)
}

// readAll returns the first total bytes of b, read through a tensor placed
// over them once the buffer forgot its tensors (Reset): the buffer API has
// no raw read.
func readAll(t *testing.T, b buffer.Buffer, total uint64) []byte {
	t.Helper()
	c := graph.NewContext(graph.ContextOptions{})
	whole := c.NewTensor(quant.I8, int64(total))
	require.NoError(t, c.Err())
	require.NoError(t, b.Reset())
	require.NoError(t, b.AllocTensor(whole, 0))
	out := make([]byte, total)
	require.NoError(t, b.GetTensor(whole, out, 0))
	return out
}
