package quant

// fromFloatAsm are the activation types' assembly conversions
// (FromFloatKernel), set where the architecture has them and the
// processor runs them (quantize_asm.go).
var fromFloatAsm [TypeCount]func(dst []byte, src []float32) bool

// fromFloatAVXAsm are FromFloatKernelAVX's conversions (quantize_amd64.go).
var fromFloatAVXAsm [TypeCount]func(dst []byte, src []float32) bool

// FromFloatKernel returns the assembly conversion of an activation type
// (Q8_0, Q8_1 and Q8_K: the types the CPU converts matrix products'
// activations to) that this processor runs, or nil: for other types, off
// amd64 and arm64, in purego builds, and on an amd64 processor without
// AVX2 and F16C. k(dst, src) writes the bytes FromFloat writes and reports
// true, in one pass over src; it reports false, leaving dst unspecified,
// for a row FromFloat must convert instead: one holding NaN or infinity
// (FromFloat's error), on arm64 one with a block too small for its scale
// to be inverted, and one that is not whole blocks or does not fit in dst.
// It allocates nothing; it is here for the CPU device, which converts
// every activation row of a product.
func FromFloatKernel(t Type) func(dst []byte, src []float32) bool {
	if !t.Valid() {
		return nil
	}
	return fromFloatAsm[t]
}

// FromFloatKernelAVX returns the conversion of Q8_0 or Q8_1 as ggml's AVX
// builds (its CPU variants from haswell on) make activations, or nil: for
// other types, off amd64, in purego builds and without AVX2 and F16C. Its
// scale d is FromFloat's, max|x|/127, but its levels are x·(127/max|x|)
// rounded to nearest even where FromFloat's (the reference quantizer's,
// which ggml's scalar builds use) are x·(1/d) rounded half away from zero:
// the two differ by one level in a few percent of blocks, enough to move a
// product by a relative 1e-3. It keeps FromFloatKernel's contract
// otherwise.
func FromFloatKernelAVX(t Type) func(dst []byte, src []float32) bool {
	if !t.Valid() {
		return nil
	}
	return fromFloatAVXAsm[t]
}
