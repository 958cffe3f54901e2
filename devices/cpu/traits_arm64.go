//go:build !purego

package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/quant"
)

// The arm64 kernels need only NEON (every ARMv8 core). Where the core has
// the dot-product instructions (ASIMDDP: SDOT), the integer kernels use
// them; elsewhere the same kernels widen and add pairs (SMULL, SADALP). The
// two sets give the same results up to float rounding, and both run in CI
// under qemu-user: -cpu max has dotprod, -cpu cortex-a53 does not.
func init() { archKernels = arm64Kernels }

func arm64Kernels() *kernelSet {
	if !cpu.ARM64.HasASIMD {
		return nil
	}
	if cpu.ARM64.HasASIMDDP {
		return deriveAsm("neon-dotprod", append(neonFloatDots, sdotDots...), neonQuantizers)
	}
	return deriveAsm("neon", append(neonFloatDots, neonDots...), neonQuantizers)
}

// neonFloatDots are the float kernels, the same with and without dotprod.
var neonFloatDots = []asmDot{
	{quant.F32, wrap1(1, dotF32NEON), wrap4(1, dotF32x4NEON)},
	{quant.F16, wrap1(1, dotF16NEON), wrap4(1, dotF16x4NEON)},
	{quant.BF16, wrap1(1, dotBF16NEON), wrap4(1, dotBF16x4NEON)},
}

// neonDots and sdotDots are the integer kernels without and with dotprod.
var neonDots = []asmDot{
	{quant.Q8_0, wrap1(32, dotQ8_0NEON), wrap4(32, dotQ8_0x4NEON)},
	{quant.Q4_0, wrap1(32, dotQ4_0NEON), wrap4(32, dotQ4_0x4NEON)},
	{quant.Q5_0, wrap1(32, dotQ5_0NEON), wrap4(32, dotQ5_0x4NEON)},
	{quant.IQ4_NL, wrap1(32, dotIQ4_NLNEON), wrap4(32, dotIQ4_NLx4NEON)},
	{quant.MXFP4, wrap1(32, dotMXFP4NEON), wrap4(32, dotMXFP4x4NEON)},
	{quant.Q4_1, wrap1(32, dotQ4_1NEON), wrap4(32, dotQ4_1x4NEON)},
	{quant.Q5_1, wrap1(32, dotQ5_1NEON), wrap4(32, dotQ5_1x4NEON)},
	{quant.Q4_K, wrap1(256, dotQ4_KNEON), wrap4(256, dotQ4_Kx4NEON)},
	{quant.Q6_K, wrap1(256, dotQ6_KNEON), wrap4(256, dotQ6_Kx4NEON)},
	{quant.Q5_K, wrap1(256, dotQ5_KNEON), wrap4(256, dotQ5_Kx4NEON)},
	{quant.Q2_K, wrap1(256, dotQ2_KNEON), nil},
	{quant.Q3_K, wrap1(256, dotQ3_KNEON), nil},
}

var sdotDots = []asmDot{
	{quant.Q8_0, wrap1(32, dotQ8_0SDOT), wrap4(32, dotQ8_0x4SDOT)},
	{quant.Q4_0, wrap1(32, dotQ4_0SDOT), wrap4(32, dotQ4_0x4SDOT)},
	{quant.Q5_0, wrap1(32, dotQ5_0SDOT), wrap4(32, dotQ5_0x4SDOT)},
	{quant.IQ4_NL, wrap1(32, dotIQ4_NLSDOT), wrap4(32, dotIQ4_NLx4SDOT)},
	{quant.MXFP4, wrap1(32, dotMXFP4SDOT), wrap4(32, dotMXFP4x4SDOT)},
	{quant.Q4_1, wrap1(32, dotQ4_1SDOT), wrap4(32, dotQ4_1x4SDOT)},
	{quant.Q5_1, wrap1(32, dotQ5_1SDOT), wrap4(32, dotQ5_1x4SDOT)},
	{quant.Q4_K, wrap1(256, dotQ4_KSDOT), wrap4(256, dotQ4_Kx4SDOT)},
	{quant.Q6_K, wrap1(256, dotQ6_KSDOT), wrap4(256, dotQ6_Kx4SDOT)},
	{quant.Q5_K, wrap1(256, dotQ5_KSDOT), wrap4(256, dotQ5_Kx4SDOT)},
	{quant.Q2_K, wrap1(256, dotQ2_KSDOT), nil},
	{quant.Q3_K, wrap1(256, dotQ3_KSDOT), nil},
}

var neonQuantizers = []asmQuantizer{
	{quant.Q8_0, 32, quantizeQ8_0NEON},
	{quant.Q8_1, 32, quantizeQ8_1NEON},
	{quant.Q8_K, 256, quantizeQ8_KNEON},
}

// The assembly kernels. dotTNEON(n, x, y) is the dot product of n units
// (blocks; elements for F32, F16 and BF16) of type T at x with n units of
// its vec_dot type at y; dotTSDOT is the same with dotprod.

//go:noescape
func dotF32NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotF16NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotBF16NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ8_0NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ8_0SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_0NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_0SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_0NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_0SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotIQ4_NLNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotIQ4_NLSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotMXFP4NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotMXFP4SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_1NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_1SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_1NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_1SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ6_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_KSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ6_KSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ2_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ3_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_KSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ2_KSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ3_KSDOT(n int, x, y unsafe.Pointer) float32

// quantizeQ8_0NEON, quantizeQ8_1NEON and quantizeQ8_KNEON write nb blocks
// of x's floats at y as quant's reference quantizers do; nonzero means they
// stopped at input the generic quantizer must take (NaN, infinity, or a
// scale too small to invert).
//
//go:noescape
func quantizeQ8_0NEON(nb int, x, y unsafe.Pointer) int

//go:noescape
func quantizeQ8_1NEON(nb int, x, y unsafe.Pointer) int

//go:noescape
func quantizeQ8_KNEON(nb int, x, y unsafe.Pointer) int

//go:noescape
func dotQ8_0x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ8_0x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_0x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_0x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_0x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_0x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotIQ4_NLx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotIQ4_NLx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotMXFP4x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotMXFP4x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_1x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_1x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_1x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_1x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotF32x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotF16x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotBF16x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_Kx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_Kx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_Kx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_Kx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ6_Kx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ6_Kx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
