//go:build !purego

package cpu

import (
	"golang.org/x/sys/cpu"
	"slices"

	"github.com/ggml-go/ggml/quant"
)

// levelNEONDotProd is levelNEON with the integer kernels on the
// dot-product instructions (ASIMDDP: SDOT): the same results up to float
// rounding, and the same bits for the tiled and repacked products, whose
// integer sums are exact either way.
var levelNEONDotProd = register(&level{
	name:      "neon-dotprod",
	priority:  20,
	supported: func() bool { return cpu.ARM64.HasASIMD && cpu.ARM64.HasASIMDDP },

	dots: slices.Concat(neonFloatDots, []asmDot{
		{quant.Q8_0, dotQ8_0SDOT, wrap4(32, dotQ8_0x4SDOT)},
		{quant.Q4_0, dotQ4_0SDOT, wrap4(32, dotQ4_0x4SDOT)},
		{quant.Q5_0, dotQ5_0SDOT, wrap4(32, dotQ5_0x4SDOT)},
		{quant.IQ4_NL, dotIQ4_NLSDOT, wrap4(32, dotIQ4_NLx4SDOT)},
		{quant.MXFP4, dotMXFP4SDOT, wrap4(32, dotMXFP4x4SDOT)},
		{quant.Q4_1, dotQ4_1SDOT, wrap4(32, dotQ4_1x4SDOT)},
		{quant.Q5_1, dotQ5_1SDOT, wrap4(32, dotQ5_1x4SDOT)},
		{quant.Q4_K, dotQ4_KSDOT, wrap4(256, dotQ4_Kx4SDOT)},
		{quant.Q6_K, dotQ6_KSDOT, wrap4(256, dotQ6_Kx4SDOT)},
		{quant.Q5_K, dotQ5_KSDOT, wrap4(256, dotQ5_Kx4SDOT)},
		{quant.Q2_K, dotQ2_KSDOT, nil},
		{quant.Q3_K, dotQ3_KSDOT, nil},
	}),
	quantizers: neonQuantizers,

	gemm: kGemms([3]kTile{gemmQ4_KPx4SDOT, gemmQ4_KPx4SDOT, gemmQ6_KPx4SDOT}),
	repack: map[quant.Type]*repackKernel{
		quant.Q4_0:   {one: repack1(gemmQ4_0x8x1SDOT), four: repack4(gemmQ4_0x8x4SDOT)},
		quant.Q8_0:   {one: repack1(gemmQ8_0x8x1SDOT), four: repack4(gemmQ8_0x8x4SDOT)},
		quant.IQ4_NL: {one: repack1(gemmIQ4_NLx8x1SDOT), four: repack4(gemmIQ4_NLx8x4SDOT)},
	},
	pack: neonPack,

	vec: neonVecFuncs,
})
