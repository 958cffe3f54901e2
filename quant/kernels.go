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

	// K-quants.
	Q2_K: {quantize: quantizeK(Q2_K, quantizeQ2KBlock), dequantize: dequantizeK(Q2_K, dequantizeQ2KBlock)},
	Q3_K: {quantize: quantizeK(Q3_K, quantizeQ3KBlock), dequantize: dequantizeK(Q3_K, dequantizeQ3KBlock)},
	Q4_K: {quantize: quantizeK(Q4_K, quantizeQ4KBlock), dequantize: dequantizeK(Q4_K, dequantizeQ4KBlock)},
	Q5_K: {quantize: quantizeK(Q5_K, quantizeQ5KBlock), dequantize: dequantizeK(Q5_K, dequantizeQ5KBlock)},
	Q6_K: {quantize: quantizeK(Q6_K, quantizeQ6KBlock), dequantize: dequantizeK(Q6_K, dequantizeQ6KBlock)},

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
