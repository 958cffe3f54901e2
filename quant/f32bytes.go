package quant

// F32Bytes returns x as the bytes of an F32 tensor: little-endian IEEE
// single precision, as ggml stores F32 rows.
func F32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	quantizeF32(b, x, 0, 0, nil)
	return b
}

// BytesF32 reads the bytes of an F32 tensor back as floats; a trailing
// partial value is ignored.
func BytesF32(b []byte) []float32 {
	x := make([]float32, len(b)/4)
	dequantizeF32(x, b)
	return x
}
