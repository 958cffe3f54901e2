package quant

import "encoding/binary"

// Helpers that run per-block functions over whole rows and read or write a
// block's fp16 fields. Any family of formats can build its kernels on them.

// blockQuantizer makes a quantize kernel that applies block to every block of
// t in turn, ignoring rows and the importance matrix: it fits the types whose
// ggml quantizer treats the input as one flat run of blocks.
func blockQuantizer(t Type, block func(dst []byte, x []float32)) func(dst []byte, src []float32, nrows, nPerRow int, imatrix []float32) {
	bs, ts := t.BlockSize(), t.TypeSize()
	return func(dst []byte, src []float32, _, _ int, _ []float32) {
		for i := range len(src) / bs {
			block(dst[i*ts:(i+1)*ts], src[i*bs:(i+1)*bs])
		}
	}
}

// blockDequantizer makes a dequantize kernel that applies block to every
// block of t in turn.
func blockDequantizer(t Type, block func(y []float32, b []byte)) func(dst []float32, src []byte) {
	bs, ts := t.BlockSize(), t.TypeSize()
	return func(dst []float32, src []byte) {
		for i := range len(dst) / bs {
			block(dst[i*bs:(i+1)*bs], src[i*ts:(i+1)*ts])
		}
	}
}

// putFP16 stores f as a little-endian half, as GGML_FP32_TO_FP16 does, and
// returns the value the stored half stands for, which is what quantizers
// requantize against.
func putFP16(b []byte, f float32) float32 {
	h := FP32ToFP16(f)
	binary.LittleEndian.PutUint16(b, h)
	return FP16ToFP32(h)
}

// fp16At reads the little-endian half at the start of b as a float32.
func fp16At(b []byte) float32 { return fp16Table[binary.LittleEndian.Uint16(b)] }

// fp16Table is FP16ToFP32 of every half, as ggml's generic builds keep it
// (ggml_table_f32_f16).
var fp16Table = func() *[1 << 16]float32 {
	t := new([1 << 16]float32)
	for h := range t {
		t[h] = fp16ToFP32(uint16(h))
	}
	return t
}()

// invOrZero is ggml's "d ? 1.0f/d : 0.0f", the inverse scale of a block.
func invOrZero(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}
