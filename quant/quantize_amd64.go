//go:build !purego

package quant

import (
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/internal/cpuid"
)

// Q4_0 and Q8_0 quantize with AVX2 where the processor has it (and F16C,
// for the scales); so do the K-quants' scale searches and the activation
// conversions (FromFloatKernel). No FMA: the quantizers round each product
// apart from its sum, as the Go reference does.
func init() {
	if !hasQuantAsm() {
		return
	}
	useQuantAsm(quantizeQ4_0AVX2, quantizeQ8_0AVX2, quantizeQ8_1AVX2, quantizeQ8_KAVX2)
	fromFloatAVXAsm[Q8_0] = rowsAsm(Q8_0, quantizeQ8_0AVXBuild)
	fromFloatAVXAsm[Q8_1] = rowsAsm(Q8_1, quantizeQ8_1AVXBuild)
}

func hasQuantAsm() bool { return cpu.X86.HasAVX2 && cpuid.HasF16C() }

//go:noescape
func quantizeQ4_0AVX2(dst *byte, src *float32, nb int) int

// quantizeQ8_0AVX2, quantizeQ8_1AVX2 and quantizeQ8_KAVX2 write nb blocks
// of x's floats at y as the Go reference quantizers do (fromfloat_amd64.s);
// nonzero means x held NaN or infinity.
//
//go:noescape
func quantizeQ8_0AVX2(nb int, x, y unsafe.Pointer) int

//go:noescape
func quantizeQ8_1AVX2(nb int, x, y unsafe.Pointer) int

//go:noescape
func quantizeQ8_KAVX2(nb int, x, y unsafe.Pointer) int

// quantizeQ8_0AVXBuild and quantizeQ8_1AVXBuild write nb blocks as ggml's
// AVX builds do (FromFloatKernelAVX); nonzero means x held NaN or
// infinity.
//
//go:noescape
func quantizeQ8_0AVXBuild(nb int, x, y unsafe.Pointer) int

//go:noescape
func quantizeQ8_1AVXBuild(nb int, x, y unsafe.Pointer) int

// qxTrials is qxTrialsAVX2 on slices (see haveQXTrials).
func qxTrials(x, w, wx []float32, scales *[24]float32, maxv float32, nmax int32, sumx, sum2 *[24]float32) {
	n := len(x)
	w, wx = w[:n], wx[:n]
	qxTrialsAVX2(unsafe.SliceData(x), unsafe.SliceData(w), unsafe.SliceData(wx), n, scales, int(nmax), sumx, sum2, maxv)
}

//go:noescape
func qxTrialsAVX2(x, w, wx *float32, n int, scales *[24]float32, nmax int, sumx, sum2 *[24]float32, maxv float32)

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
