//go:build !purego

package cpu

import (
	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/internal/cpuid"
	"github.com/ggml-go/ggml/quant"
)

// levelAVX2 is every amd64 kernel. It needs AVX2, FMA and F16C (Haswell
// and later, every Zen): ggml's own baseline for its fast x86 builds.
// F16C comes from internal/cpuid: golang.org/x/sys/cpu reports it only
// from v0.48, which needs Go 1.26, and go.mod stays on the oldest Go the
// library supports. The kernels' declarations and adapters are in
// traits_amd64.go (vec_dot, quantizers), gemm_amd64.go (tiled and
// repacked products), vec_amd64.go and attn_amd64.go (vector primitives).
var levelAVX2 = register(&level{
	name:     "avx2",
	priority: 20,
	supported: func() bool {
		return cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpuid.HasF16C()
	},

	dots: []asmDot{
		{quant.F32, dotF32AVX2, wrap4(1, dotF32x4AVX2)},
		{quant.F16, dotF16AVX2, wrap4(1, dotF16x4AVX2)},
		{quant.BF16, dotBF16AVX2, wrap4(1, dotBF16x4AVX2)},
		{quant.Q8_0, dotQ8_0AVX2, wrapRows(quant.Q8_0, dotQ8_0x4AVX2)},
		{quant.Q4_0, dotQ4_0AVX2, wrapRows(quant.Q4_0, dotQ4_0x4AVX2)},
		{quant.Q5_0, dotQ5_0AVX2, wrapRows(quant.Q5_0, dotQ5_0x4AVX2)},
		{quant.IQ4_NL, dotIQ4_NLAVX2, wrapRows(quant.IQ4_NL, dotIQ4_NLx4AVX2)},
		{quant.MXFP4, dotMXFP4AVX2, nil},
		{quant.Q4_1, dotQ4_1AVX2, wrapRows(quant.Q4_1, dotQ4_1x4AVX2)},
		{quant.Q5_1, dotQ5_1AVX2, wrapRows(quant.Q5_1, dotQ5_1x4AVX2)},
		{quant.Q2_K, dotQ2_KAVX2, nil},
		{quant.Q3_K, dotQ3_KAVX2, nil},
		{quant.Q4_K, dotQ4_KAVX2, wrap4(256, dotQ4_Kx4AVX2)},
		{quant.Q5_K, dotQ5_KAVX2, wrap4(256, dotQ5_Kx4AVX2)},
		{quant.Q6_K, dotQ6_KAVX2, wrap4(256, dotQ6_Kx4AVX2)},
	},
	rows: []asmRows{
		{quant.F32, rows4(quant.F32, dotF32RowsAVX2, dotF32AVX2)},
		{quant.F16, rowsSwapped(quant.F16, dotF16x4AVX2, dotF16AVX2)},
		{quant.BF16, rowsSwapped(quant.BF16, dotBF16x4AVX2, dotBF16AVX2)},
		{quant.Q8_0, rows4(quant.Q8_0, dotQ8_0RowsAVX2, dotQ8_0AVX2)},
		{quant.Q4_0, rows4(quant.Q4_0, dotQ4_0RowsAVX2, dotQ4_0AVX2)},
		{quant.Q5_0, rows4(quant.Q5_0, dotQ5_0RowsAVX2, dotQ5_0AVX2)},
		{quant.IQ4_NL, rows4(quant.IQ4_NL, dotIQ4_NLRowsAVX2, dotIQ4_NLAVX2)},
		{quant.Q4_1, rows4(quant.Q4_1, dotQ4_1RowsAVX2, dotQ4_1AVX2)},
		{quant.Q5_1, rows4(quant.Q5_1, dotQ5_1RowsAVX2, dotQ5_1AVX2)},
		{quant.Q4_K, rows4(quant.Q4_K, dotQ4_KRowsAVX2, dotQ4_KAVX2)},
		{quant.Q5_K, rows4(quant.Q5_K, dotQ5_KRowsAVX2, dotQ5_KAVX2)},
		{quant.Q6_K, rows4(quant.Q6_K, dotQ6_KRowsAVX2, dotQ6_KAVX2)},
	},
	quantizers:     []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K},
	avxActivations: true,

	// The K-quant tiles take one row at a time; their edges are the
	// level's vec_dot.
	gemm: map[quant.Type]*plainGemm{
		quant.F32:  {step: 8, rows: 3, sgemmCols: 2, tile: gemmF32x3x4AVX2, tileCol: gemmF32x3x1AVX2, one: gemmF32x1x1AVX2},
		quant.Q4_K: {step: 256, rows: 1, exact: true, pack: q4_KPack},
		quant.Q5_K: {step: 256, rows: 1, exact: true, pack: q5_KPack},
		quant.Q6_K: {step: 256, rows: 1, exact: true, pack: q6_KPack},
	},
	repack: map[quant.Type]*repackKernel{
		quant.Q4_0:   asmRepack(144, [4]tileAsm{gemmQ4_0x8x1AVX2, gemmQ4_0x8x2AVX2, gemmQ4_0x8x3AVX2, gemmQ4_0x8x4AVX2}),
		quant.Q8_0:   asmRepack(272, [4]tileAsm{gemmQ8_0x8x1AVX2, gemmQ8_0x8x2AVX2, gemmQ8_0x8x3AVX2, gemmQ8_0x8x4AVX2}),
		quant.IQ4_NL: asmRepack(144, [4]tileAsm{gemmIQ4_NLx8x1AVX2, gemmIQ4_NLx8x2AVX2, gemmIQ4_NLx8x3AVX2, gemmIQ4_NLx8x4AVX2}),
	},
	// Plain Q8_0 weights are not interleaved on the fly: their products
	// keep the vec_dot kernels' order, ggml haswell's (its tinyBLAS_Q0_AVX
	// sums so too), at about its speed (an exact register tile of ggml's
	// own steps measured no faster; bench/README.md). Stored in CPU_REPACK
	// they take the interleaved kernels.
	pack: map[quant.Type]func(dst, src []byte, rs int){
		quant.Q4_0:   packX8(18, x8AVX2),
		quant.IQ4_NL: packX8(18, x8AVX2),
	},
	aux: map[quant.Type]func(aux, y []byte, nb int){quant.Q8_0: fillQ8_0AuxAVX2},

	vec: asmVecFuncs{
		add:      vecAddAVX2,
		sub:      vecSubAVX2,
		mul:      vecMulAVX2,
		div:      vecDivAVX2,
		scale:    vecScaleAVX2,
		mad:      vecMadAVX2,
		dot:      vecDotAVX2,
		dotF16:   vecDotF16AVX2,
		madF16:   vecMadF16AVX2,
		scaleF16: vecScaleF16AVX2,
		f16ToF32: vecF16ToF32AVX2,

		swiglu:     by(8, vswigluAVX2),
		silu:       by(8, vsiluAVX2),
		softmax:    by(8, vsoftmaxAVX2),
		expf:       by(4, expfAVX2),
		f32ToF16:   by(8, vecF32ToF16AVX2),
		ropeNeox:   by(1, ropeNeoxAVX2),
		ropeNormal: by(2, ropeNormalAVX2),
		attnScores: attnScoresF16AVX2,
		attnAcc:    attnAccF16AVX2,
	},
})
