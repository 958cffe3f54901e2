package quant

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
)

// FuzzDequantize feeds arbitrary bytes, types and counts: never a panic,
// and on success exactly n values.
func FuzzDequantize(f *testing.F) {
	f.Add([]byte{0x00, 0x3c, 1, 2, 3, 4}, uint32(Q4_0), 32)
	f.Add(make([]byte, 300), uint32(Q8_K), 256)
	f.Add(make([]byte, 64), uint32(IQ2_XXS), 256)
	f.Add([]byte{1, 2}, uint32(1000), -5)
	f.Fuzz(func(t *testing.T, data []byte, typ uint32, n int) {
		if n > 1<<20 {
			n %= 1 << 20
		}
		out, err := Dequantize(Type(typ), data, n)
		if err != nil {
			if !errors.Is(err, ErrInvalidType) && !errors.Is(err, ErrBadLength) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if len(out) != n {
			t.Fatalf("got %d values, want %d", len(out), n)
		}
	})
}

// FuzzQuantize feeds arbitrary floats, shapes and importance matrices: never
// a panic; a success round-trips through Dequantize and, when the reference
// library is loaded, gives ggml's bytes.
func FuzzQuantize(f *testing.F) {
	f.Add(make([]byte, 128), uint32(Q4_0), 1, 32, false)
	f.Add(bytes.Repeat([]byte{0, 0, 0x80, 0x3f}, 256), uint32(Q6_K), 1, 256, true)
	f.Add(bytes.Repeat([]byte{0xff, 0xff, 0x7f, 0x7f}, 64), uint32(Q8_0), 2, 32, false)
	f.Add(bytes.Repeat([]byte{1, 0, 0, 0}, 32), uint32(IQ4_NL), 1, 32, true)
	lib, _ := ggmlref.Default()
	f.Fuzz(func(t *testing.T, data []byte, typ uint32, nrows, nPerRow int, withImatrix bool) {
		src := make([]float32, len(data)/4)
		for i := range src {
			src[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		var im []float32
		if withImatrix && nPerRow > 0 && nPerRow <= len(src) {
			im = make([]float32, nPerRow)
			for i := range im {
				im[i] = float32(math.Abs(float64(src[i%len(src)])))
				if math.IsInf(float64(im[i]), 0) || math.IsNaN(float64(im[i])) {
					im[i] = 1
				}
			}
		}
		q, err := Quantize(Type(typ), src, nrows, nPerRow, im)
		if err != nil {
			return
		}
		n := nrows * nPerRow
		if _, err := Dequantize(Type(typ), q, n); err != nil && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("dequantize after quantize: %v", err)
		}
		if lib == nil || n == 0 || Type(typ) == F32 {
			return
		}
		want, err := refQuantize(lib, Type(typ), src, nrows, nPerRow, im)
		if err != nil {
			t.Fatalf("reference quantize: %v", err)
		}
		if !bytes.Equal(want, q) {
			t.Fatalf("%s: bytes differ from ggml", Type(typ))
		}
	})
}

func FuzzParseType(f *testing.F) {
	for _, typ := range Types() {
		f.Add(typ.String())
	}
	f.Add("Q4_k")
	f.Fuzz(func(t *testing.T, name string) {
		typ, err := ParseType(name)
		if err != nil {
			return
		}
		if !typ.Valid() {
			t.Fatalf("ParseType(%q) returned invalid %d", name, typ)
		}
	})
}
