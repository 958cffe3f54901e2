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
	Q4_0:  {quantize: weightedQuantizer(Q4_0, quantizeBlockQ4_0, quantizeBlockQ4_0Weighted), dequantize: blockDequantizer(Q4_0, dequantizeBlockQ4_0)},
	Q4_1:  {quantize: weightedQuantizer(Q4_1, quantizeBlockQ4_1, quantizeBlockQ4_1Weighted), dequantize: blockDequantizer(Q4_1, dequantizeBlockQ4_1)},
	Q5_0:  {quantize: weightedQuantizer(Q5_0, quantizeBlockQ5_0, quantizeBlockQ5_0Weighted), dequantize: blockDequantizer(Q5_0, dequantizeBlockQ5_0)},
	Q5_1:  {quantize: weightedQuantizer(Q5_1, quantizeBlockQ5_1, quantizeBlockQ5_1Weighted), dequantize: blockDequantizer(Q5_1, dequantizeBlockQ5_1)},
	Q8_0:  {quantize: blockQuantizer(Q8_0, quantizeBlockQ8_0), dequantize: blockDequantizer(Q8_0, dequantizeBlockQ8_0)},
	Q8_1:  {quantize: blockQuantizer(Q8_1, quantizeBlockQ8_1), dequantize: blockDequantizer(Q8_1, dequantizeBlockQ8_1)},
	Q1_0:  {quantize: blockQuantizer(Q1_0, quantizeBlockQ1_0), dequantize: blockDequantizer(Q1_0, dequantizeBlockQ1_0)},
	Q2_0:  {quantize: blockQuantizer(Q2_0, quantizeBlockQ2_0), dequantize: blockDequantizer(Q2_0, dequantizeBlockQ2_0)},
	MXFP4: {quantize: blockQuantizer(MXFP4, quantizeBlockMXFP4), dequantize: blockDequantizer(MXFP4, dequantizeBlockMXFP4)},
	NVFP4: {quantize: blockQuantizer(NVFP4, quantizeBlockNVFP4), dequantize: blockDequantizer(NVFP4, dequantizeBlockNVFP4)},

	// Activation formats and the IQ4/ternary formats.
	Q8_K:   {quantize: quantizeQ8K, dequantize: dequantizeQ8K},
	IQ4_NL: {quantize: quantizeIQ4NL, dequantize: dequantizeIQ4NL},
	IQ4_XS: {quantize: quantizeIQ4XS, dequantize: dequantizeIQ4XS},
	TQ1_0:  {quantize: quantizeTQ1_0, dequantize: dequantizeTQ1_0},
	TQ2_0:  {quantize: quantizeTQ2_0, dequantize: dequantizeTQ2_0},

	// K-quants.
	Q2_K: {quantize: quantizeK(Q2_K, quantizeQ2KBlock), dequantize: blockDequantizer(Q2_K, dequantizeQ2KBlock)},
	Q3_K: {quantize: quantizeK(Q3_K, quantizeQ3KBlock), dequantize: blockDequantizer(Q3_K, dequantizeQ3KBlock)},
	Q4_K: {quantize: quantizeK(Q4_K, quantizeQ4KBlock), dequantize: blockDequantizer(Q4_K, dequantizeQ4KBlock)},
	Q5_K: {quantize: quantizeK(Q5_K, quantizeQ5KBlock), dequantize: blockDequantizer(Q5_K, dequantizeQ5KBlock)},
	Q6_K: {quantize: quantizeK(Q6_K, quantizeQ6KBlock), dequantize: blockDequantizer(Q6_K, dequantizeQ6KBlock)},

	// Lattice (grid) formats. Only dequantization is implemented; the
	// imatrix flags still follow ggml_quantize_requires_imatrix.
	IQ2_XXS: {dequantize: dequantizeIQ2XXS, requiresImatrix: true},
	IQ2_XS:  {dequantize: dequantizeIQ2XS, requiresImatrix: true},
	IQ2_S:   {dequantize: dequantizeIQ2S},
	IQ3_XXS: {dequantize: dequantizeIQ3XXS},
	IQ3_S:   {dequantize: dequantizeIQ3S},
	IQ1_S:   {dequantize: dequantizeIQ1S, requiresImatrix: true},
	IQ1_M:   {dequantize: dequantizeIQ1M},
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
