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
	{quant.F32, wrap1(1, dotF32NEON), nil},
	{quant.F16, wrap1(1, dotF16NEON), nil},
	{quant.BF16, wrap1(1, dotBF16NEON), nil},
}

// neonDots and sdotDots are the integer kernels without and with dotprod.
var neonDots = []asmDot{}

var sdotDots = []asmDot{}

var neonQuantizers = []asmQuantizer{}

// The assembly kernels. dotTNEON(n, x, y) is the dot product of n units
// (blocks; elements for F32, F16 and BF16) of type T at x with n units of
// its vec_dot type at y; dotTSDOT is the same with dotprod.

//go:noescape
func dotF32NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotF16NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotBF16NEON(n int, x, y unsafe.Pointer) float32
