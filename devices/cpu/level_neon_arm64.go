//go:build !purego

package cpu

import (
	"slices"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/quant"
)

// levelNEON is the arm64 kernels without the dot-product instructions:
// NEON only (every ARMv8 core), the integer kernels widening and adding
// pairs (SMULL, SADALP). levelNEONDotProd (level_neondotprod_arm64.go)
// shares its float kernels, quantizers, weight interleave and vector
// primitives. Both run in CI under qemu-user: -cpu max has dotprod, -cpu
// cortex-a53 does not. The declarations and adapters are in
// traits_arm64.go, gemm_arm64.go, vec_arm64.go and attn_arm64.go.
var levelNEON = register(&level{
	name:      "neon",
	priority:  10,
	supported: func() bool { return cpu.ARM64.HasASIMD },

	dots: slices.Concat(neonFloatDots, []asmDot{
		{quant.Q8_0, dotQ8_0NEON, wrap4(32, dotQ8_0x4NEON)},
		{quant.Q4_0, dotQ4_0NEON, wrap4(32, dotQ4_0x4NEON)},
		{quant.Q5_0, dotQ5_0NEON, wrap4(32, dotQ5_0x4NEON)},
		{quant.IQ4_NL, dotIQ4_NLNEON, wrap4(32, dotIQ4_NLx4NEON)},
		{quant.MXFP4, dotMXFP4NEON, wrap4(32, dotMXFP4x4NEON)},
		{quant.Q4_1, dotQ4_1NEON, wrap4(32, dotQ4_1x4NEON)},
		{quant.Q5_1, dotQ5_1NEON, wrap4(32, dotQ5_1x4NEON)},
		{quant.Q4_K, dotQ4_KNEON, wrap4(256, dotQ4_Kx4NEON)},
		{quant.Q6_K, dotQ6_KNEON, wrap4(256, dotQ6_Kx4NEON)},
		{quant.Q5_K, dotQ5_KNEON, wrap4(256, dotQ5_Kx4NEON)},
		{quant.Q2_K, dotQ2_KNEON, nil},
		{quant.Q3_K, dotQ3_KNEON, nil},
	}),
	quantizers: neonQuantizers,

	gemm: kGemms([3]kTile{gemmQ4_KPx4NEON, gemmQ4_KPx4NEON, gemmQ6_KPx4NEON}),
	repack: map[quant.Type]*repackKernel{
		quant.Q4_0:   {one: repack1(gemmQ4_0x8x1NEON), four: repack4(gemmQ4_0x8x4NEON)},
		quant.Q8_0:   {one: repack1(gemmQ8_0x8x1NEON), four: repack4(gemmQ8_0x8x4NEON)},
		quant.IQ4_NL: {one: repack1(gemmIQ4_NLx8x1NEON), four: repack4(gemmIQ4_NLx8x4NEON)},
	},
	pack: neonPack,

	vec: neonVecFuncs,
})

// neonFloatDots are the float kernels, the same with and without dotprod.
var neonFloatDots = []asmDot{
	{quant.F32, dotF32NEON, wrap4(1, dotF32x4NEON)},
	{quant.F16, dotF16NEON, wrap4(1, dotF16x4NEON)},
	{quant.BF16, dotBF16NEON, wrap4(1, dotBF16x4NEON)},
}

// neonQuantizers are quant's NEON activation conversions.
var neonQuantizers = []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K}

var neonPack = map[quant.Type]func(dst, src []byte, rs int){
	quant.Q4_0:   packX8(18, xposeX8NEON),
	quant.Q8_0:   packX8(34, xposeX8NEON),
	quant.IQ4_NL: packX8(18, xposeX8NEON),
}

// neonVecFuncs: e^x, SwiGLU, the F32->F16 conversion and rope's rotations
// take groups of four (values; pairs for NeoX rotations, eight values for
// adjacent pairs), and flash attention's F16 steps one call per query
// row.
var neonVecFuncs = asmVecFuncs{
	add:   vecAddNEON,
	sub:   vecSubNEON,
	mul:   vecMulNEON,
	div:   vecDivNEON,
	scale: vecScaleNEON,
	mad:   vecMadNEON,
	dot: func(x, y *float32, n int) float32 {
		return dotF32NEON(n, unsafe.Pointer(x), unsafe.Pointer(y))
	},
	dotF16: func(x, y *uint16, n int) float32 {
		return dotF16NEON(n, unsafe.Pointer(x), unsafe.Pointer(y))
	},
	madF16:   vecMadF16NEON,
	scaleF16: vecScaleF16NEON,
	f16ToF32: vecF16ToF32NEON,

	swiglu:     by(4, vecSwiGLUNEON),
	expf:       by(4, expfNEON),
	f32ToF16:   by(4, vecF32ToF16NEON),
	ropeNeox:   by(4, ropeNeoxNEON),
	ropeNormal: by(8, ropeNormalNEON),
	attnScores: attnScoresF16NEON,
	attnAcc:    attnAccF16NEON,
}
