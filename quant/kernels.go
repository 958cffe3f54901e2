package quant

import (
	"encoding/binary"
	"math"
)

// kernels is indexed by Type. Each family of formats adds its entries in its
// own section, so the families stay independent of one another.
var kernels = [TypeCount]kernel{
	// Plain floats.
	F32:  {quantize: quantizeF32, dequantize: dequantizeF32},
	F16:  {quantize: quantizeF16, dequantize: dequantizeF16},
	BF16: {quantize: quantizeBF16, dequantize: dequantizeBF16},

	// Legacy 32-blocks and the small newer formats.

	// Activation formats and the IQ4/ternary formats.
	Q8_K:   {quantize: quantizeQ8K, dequantize: dequantizeQ8K},
	IQ4_NL: {quantize: quantizeIQ4NL, dequantize: dequantizeIQ4NL},
	IQ4_XS: {quantize: quantizeIQ4XS, dequantize: dequantizeIQ4XS},
	TQ1_0:  {quantize: quantizeTQ1_0, dequantize: dequantizeTQ1_0},
	TQ2_0:  {quantize: quantizeTQ2_0, dequantize: dequantizeTQ2_0},

	// K-quants.

	// Lattice (grid) formats.
}

func quantizeF32(dst []byte, src []float32, _, _ int, _ []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func dequantizeF32(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func quantizeF16(dst []byte, src []float32, _, _ int, _ []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToFP16(v))
	}
}

func dequantizeF16(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = FP16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func quantizeBF16(dst []byte, src []float32, _, _ int, _ []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToBF16(v))
	}
}

func dequantizeBF16(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = BF16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}
