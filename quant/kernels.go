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
