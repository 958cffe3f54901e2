//go:build !purego

package quant

import (
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/internal/cpuid"
)

// Q4_0 and Q8_0 without an importance matrix quantize with AVX2 where the
// processor has it (and F16C, for the scales); the bytes are the reference
// quantizer's (TestQuantizeAsmMatchesGo checks every run).
func init() {
	if !hasQuantAsm() {
		return
	}
	q4 := kernels[Q4_0].quantize
	kernels[Q4_0].quantize = func(dst []byte, src []float32, nrows, nPerRow int, imatrix []float32) {
		if imatrix != nil {
			q4(dst, src, nrows, nPerRow, imatrix)
			return
		}
		quantizeFlatAsm(dst, src, Q4_0.TypeSize(), quantizeQ4_0AVX2, quantizeBlockQ4_0)
	}
	haveQXTrials = true
	haveQKXTrials = true
	kernels[Q8_0].quantize = func(dst []byte, src []float32, _, _ int, _ []float32) {
		quantizeFlatAsm(dst, src, Q8_0.TypeSize(), quantizeQ8_0AVX2, quantizeBlockQ8_0)
	}
}

func hasQuantAsm() bool { return cpu.X86.HasAVX2 && cpuid.HasF16C() }

//go:noescape
func quantizeQ4_0AVX2(dst *byte, src *float32, nb int) int

//go:noescape
func quantizeQ8_0AVX2(dst *byte, src *float32, nb int) int

// qxTrials is qxTrialsAVX2 on slices (see haveQXTrials).
func qxTrials(x, w, wx []float32, scales *[24]float32, maxv float32, nmax int32, sumx, sum2 *[24]float32) {
	n := len(x)
	w, wx = w[:n], wx[:n]
	qxTrialsAVX2(unsafe.SliceData(x), unsafe.SliceData(w), unsafe.SliceData(wx), n, scales, int(nmax), sumx, sum2, maxv)
}

//go:noescape
func qxTrialsAVX2(x, w, wx *float32, n int, scales *[24]float32, nmax int, sumx, sum2 *[24]float32, maxv float32)

// quantizeFlatAsm runs an assembly quantizer over src's blocks of 32,
// quantizing in Go each block it stops at.
func quantizeFlatAsm(dst []byte, src []float32, ts int, asm func(dst *byte, src *float32, nb int) int, block func(b []byte, x []float32)) {
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

// qkxSums and qkxErr are qkxSumsAVX2 and qkxErrAVX2 on the search's
// arrays (see haveQKXTrials).
func qkxSums(x, w, xm []float32, iscales *[8]float32, nmax int32, sumL, sumL2, sumXL *[8]float32) {
	n := len(x)
	w, xm = w[:n], xm[:n]
	qkxSumsAVX2(unsafe.SliceData(x), unsafe.SliceData(w), unsafe.SliceData(xm), n, &iscales[0], 1, int(nmax), &sumL[0], &sumL2[0], &sumXL[0])
}

func qkxErr(x, w, xm []float32, iscales *[8]float32, nmax int32, scales, mins *[8]float32, mad int, errs *[8]float32) {
	n := len(x)
	w, xm = w[:n], xm[:n]
	qkxErrAVX2(unsafe.SliceData(x), unsafe.SliceData(w), unsafe.SliceData(xm), n, &iscales[0], 1, int(nmax), &scales[0], &mins[0], mad, &errs[0])
}

//go:noescape
func qkxSumsAVX2(x, w, xm *float32, n int, iscale *float32, ngroups, nmax int, sumL, sumL2, sumXL *float32)

//go:noescape
func qkxErrAVX2(x, w, xm *float32, n int, iscale *float32, ngroups, nmax int, scale, minv *float32, mad int, e *float32)
