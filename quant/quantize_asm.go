//go:build (amd64 || arm64) && !purego

package quant

import "unsafe"

// blockAsm is an assembly quantizer of nb blocks of 32 values at src into
// dst, all finite. It returns how many blocks it wrote: fewer than nb
// when it meets a block it leaves to Go, one whose inverse scale 1/d
// overflows.
type blockAsm func(dst *byte, src *float32, nb int) int

// useQuantAsm makes Q4_0 without an importance matrix, and Q8_0, quantize
// with the architecture's assembly, and the K-quants' scale searches run
// their trials in its qxTrials, qkxSums and qkxErr; the bytes are the
// reference quantizer's (TestQuantizeAsmMatchesGo, TestQXSearchMatchesGo
// and TestQKXSearchMatchesGo check every run).
func useQuantAsm(q4, q8 blockAsm) {
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
	kernels[Q8_0].quantize = func(dst []byte, src []float32, _, _ int, _ []float32) {
		quantizeFlatAsm(dst, src, Q8_0.TypeSize(), q8, quantizeBlockQ8_0)
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
