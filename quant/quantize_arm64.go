//go:build !purego

package quant

import "unsafe"

// Q4_0 and Q8_0 quantize with NEON, the K-quants' scale searches run
// their trials in NEON lanes, and the activation conversions
// (FromFloatKernel) are NEON's: ARMv8's Advanced SIMD and its fp16
// conversions are part of every arm64 processor Go runs on.
func init() {
	useQuantAsm(quantizeQ4_0NEON, quantizeQ8_0NEON, quantizeQ8_1NEON, quantizeQ8_KNEON)
}

// hasQuantAsm reports whether the assembly quantizers run here: always.
func hasQuantAsm() bool { return true }

//go:noescape
func quantizeQ4_0NEON(dst *byte, src *float32, nb int) int

// quantizeQ8_0NEON, quantizeQ8_1NEON and quantizeQ8_KNEON write nb blocks
// of x's floats at y as the Go reference quantizers do
// (fromfloat_arm64.s); nonzero means they stopped at input Go must take
// (NaN, infinity, or a scale too small to invert).
//
//go:noescape
func quantizeQ8_0NEON(nb int, x, y unsafe.Pointer) int

//go:noescape
func quantizeQ8_1NEON(nb int, x, y unsafe.Pointer) int

//go:noescape
func quantizeQ8_KNEON(nb int, x, y unsafe.Pointer) int

// qxTrials computes makeQXQuants's trial sums in NEON lanes (see
// haveQXTrials), over the shortest of x, w and wx.
//
//go:noescape
func qxTrials(x, w, wx []float32, scales *[24]float32, maxv float32, nmax int32, sumx, sum2 *[24]float32)

// qkxSums and qkxErr compute makeQKXQuants's trial sums and errors for
// eight inverse scales in NEON lanes (see haveQKXTrials), over the
// shortest of x, w and xm.
//
//go:noescape
func qkxSums(x, w, xm []float32, iscales *[8]float32, nmax int32, sumL, sumL2, sumXL *[8]float32)

//go:noescape
func qkxErr(x, w, xm []float32, iscales *[8]float32, nmax int32, scales, mins *[8]float32, mad int, errs *[8]float32)
