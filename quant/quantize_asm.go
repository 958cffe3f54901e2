//go:build (amd64 || arm64) && !purego

package quant

import "unsafe"

// blockAsm is an assembly quantizer of nb blocks of 32 values at src into
// dst, all finite. It returns how many blocks it wrote: fewer than nb
// when it meets a block it leaves to Go, one whose inverse scale 1/d
// overflows.
type blockAsm func(dst *byte, src *float32, nb int) int

// rowAsm is an assembly conversion of nb blocks at src into dst
// (FromFloatKernel's); nonzero hands the row back to Go.
type rowAsm func(nb int, src, dst unsafe.Pointer) int

// useQuantAsm makes Q4_0 without an importance matrix, and Q8_0, quantize
// with the architecture's assembly, sets the activation types' assembly
// conversions (FromFloatKernel), and makes the K-quants' scale searches
// run their trials in its qxTrials, qkxSums and qkxErr; the bytes are the
// reference quantizer's (TestQuantizeAsmMatchesGo, TestFromFloatKernel,
// TestQXSearchMatchesGo and TestQKXSearchMatchesGo check every run).
func useQuantAsm(q4 blockAsm, q8_0, q8_1, q8_K rowAsm) {
	haveQXTrials = true
	haveQKXTrials = true
	plainQ4 := kernels[Q4_0].quantize
	kernels[Q4_0].quantize = func(dst []byte, src []float32, nrows, nPerRow int, imatrix []float32) {
		if imatrix != nil {
			plainQ4(dst, src, nrows, nPerRow, imatrix)
			return
		}
		quantizeFlatAsm(dst, src, Q4_0.TypeSize(), q4, quantizeBlockQ4_0)
	}
	fromFloatAsm[Q8_0] = rowsAsm(Q8_0, q8_0)
	fromFloatAsm[Q8_1] = rowsAsm(Q8_1, q8_1)
	fromFloatAsm[Q8_K] = rowsAsm(Q8_K, q8_K)
	// Quantize's input is finite: the assembly hands a row back only for
	// a block whose scale it cannot invert (arm64), which Go then takes.
	plainQ8, q8 := kernels[Q8_0].quantize, fromFloatAsm[Q8_0]
	kernels[Q8_0].quantize = func(dst []byte, src []float32, nrows, nPerRow int, imatrix []float32) {
		if !q8(dst, src) {
			plainQ8(dst, src, nrows, nPerRow, imatrix)
		}
	}
}

// rowsAsm makes FromFloatKernel's conversion of t from k, checking what
// the assembly trusts: whole blocks, and room for them in dst.
func rowsAsm(t Type, k rowAsm) func(dst []byte, src []float32) bool {
	bs := t.BlockSize()
	return func(dst []byte, src []float32) bool {
		if len(src)%bs != 0 || int64(len(dst)) < t.RowSize(int64(len(src))) {
			return false
		}
		nb := len(src) / bs
		return nb == 0 || k(nb, unsafe.Pointer(unsafe.SliceData(src)), unsafe.Pointer(unsafe.SliceData(dst))) == 0
	}
}

// quantizeFlatAsm runs an assembly quantizer over src's blocks of 32,
// quantizing in Go each block it stops at.
func quantizeFlatAsm(dst []byte, src []float32, ts int, asm blockAsm, block func(b []byte, x []float32)) {
	nb := len(src) / legacyBlock
	dst = dst[:nb*ts]
	for i := 0; i < nb; {
		i += asm(unsafe.SliceData(dst[i*ts:]), unsafe.SliceData(src[i*legacyBlock:]), nb-i)
		if i < nb {
			block(dst[i*ts:(i+1)*ts], src[i*legacyBlock:(i+1)*legacyBlock])
			i++
		}
	}
}
