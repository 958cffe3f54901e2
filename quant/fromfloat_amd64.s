//go:build !purego

#include "textflag.h"

// The activation quantizers (FromFloatKernel; Q8_0 also for Quantize),
// byte for byte the Go reference ones (and ggml's scalar builds): Q8_0 and Q8_1 with d = max|x|/127, levels
// roundf(x * (1/d)) (halfway cases away from zero, made exact from the
// truncation and the exact remainder), d stored as fp16 rounded to
// nearest even. Each returns nonzero when the input held NaN or infinity,
// and then the output is unspecified.

DATA absmask<>+0(SB)/4, $0x7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $4

DATA signmask<>+0(SB)/4, $0x80000000
GLOBL signmask<>(SB), RODATA|NOPTR, $4

DATA onef<>+0(SB)/4, $0x3f800000
GLOBL onef<>(SB), RODATA|NOPTR, $4

DATA halfpred<>+0(SB)/4, $0x3effffff
GLOBL halfpred<>(SB), RODATA|NOPTR, $4

DATA inf<>+0(SB)/4, $0x7f800000
GLOBL inf<>(SB), RODATA|NOPTR, $4

DATA maxfinite<>+0(SB)/4, $0x7f7fffff
GLOBL maxfinite<>(SB), RODATA|NOPTR, $4

DATA c127<>+0(SB)/4, $0x42fe0000
GLOBL c127<>(SB), RODATA|NOPTR, $4

DATA packperm<>+0(SB)/4, $0
DATA packperm<>+4(SB)/4, $4
DATA packperm<>+8(SB)/4, $1
DATA packperm<>+12(SB)/4, $5
DATA packperm<>+16(SB)/4, $2
DATA packperm<>+20(SB)/4, $6
DATA packperm<>+24(SB)/4, $3
DATA packperm<>+28(SB)/4, $7
GLOBL packperm<>(SB), RODATA|NOPTR, $32

// Registers: Y8 abs mask, Y9 sign mask, Y10 the pack permutation, Y11 0.5's predecessor, Y12 the largest
// finite float's bits, Y15
// the OR of every non-finite test.
#define QCONSTS \
	VBROADCASTSS absmask<>(SB), Y8;  \
	VBROADCASTSS signmask<>(SB), Y9; \
	VMOVDQU      packperm<>(SB), Y10; \
	VBROADCASTSS halfpred<>(SB), Y11; \
	VBROADCASTSS maxfinite<>(SB), Y12; \
	VXORPS       Y15, Y15, Y15

// AMAX32 loads the 32 floats at SI into Y0..Y3 and leaves max|x| in the
// low lane of X4 (using Y4..Y7, X13), noting a non-finite one in Y15. The
// maximum is taken on the magnitudes' bit patterns as integers: they order
// as the magnitudes do, and every NaN or infinity lies above 0x7f7fffff,
// the largest finite one, so one comparison of the maximum finds them.
#define AMAX32 \
	VMOVUPS      0(SI), Y0;     \
	VMOVUPS      32(SI), Y1;    \
	VMOVUPS      64(SI), Y2;    \
	VMOVUPS      96(SI), Y3;    \
	VANDPS       Y8, Y0, Y4;    \
	VANDPS       Y8, Y1, Y5;    \
	VANDPS       Y8, Y2, Y6;    \
	VANDPS       Y8, Y3, Y7;    \
	VPMAXSD      Y5, Y4, Y4;    \
	VPMAXSD      Y7, Y6, Y6;    \
	VPMAXSD      Y6, Y4, Y4;    \
	VEXTRACTI128 $1, Y4, X5;    \
	VPMAXSD      X5, X4, X4;    \
	VPSHUFD      $0x4e, X4, X5; \
	VPMAXSD      X5, X4, X4;    \
	VPSHUFD      $0xb1, X4, X5; \
	VPMAXSD      X5, X4, X4;    \
	VPCMPGTD     X12, X4, X13;  \
	VPOR         Y13, Y15, Y15

// ROUNDQ turns V (floats already scaled) into V + copysign(0.49999997, V)
// (0.5's predecessor, in Y11), whose truncation - the VCVTTPS2DQ that
// follows - is roundf(V) for every float: a fraction below one half never
// reaches the next integer, since the addition rounds to the nearest
// even neighbour below it, and one half or more always does. T and M are
// unused (kept for the callers' register plan).
#define ROUNDQ(V, T, M) \
	VANDPS Y9, V, T;  \
	VORPS  Y11, T, T; \
	VADDPS T, V, V

// INT8 keeps the low byte of each int32 lane, sign-extended: the C cast
// (int8_t)(int)f, whose conversion gives INT_MIN (low byte 0) for the
// infinities and NaNs an infinite 1/d makes of subnormal blocks.
#define INT8(Y) \
	VPSLLD $24, Y, Y; \
	VPSRAD $24, Y, Y

// QBLOCK quantizes the 32 floats at SI with d in X4 (as a float): the 32
// int32 levels stay in Y0..Y3 and their bytes go to qs(DI), using Y4, Y5,
// Y14. The reference multiplies by id = 1/d, or 0 when d is 0; when d is
// so small that 1/d is infinite it multiplies by infinity and C's int8
// cast of the resulting infinities and NaNs is 0, so id = 0 there too
// writes the same (all-zero) levels, and without it every level lies in
// [-127, 127], where the saturating packs are exact.
#define QBLOCK(qs) \
	VMOVSS       onef<>(SB), X14;  \
	VDIVSS       X4, X14, X14;     \
	VUCOMISS     X12, X14;         \
	JLS          2(PC);            \
	VXORPS       X14, X14, X14;    \
	VBROADCASTSS X14, Y14;         \
	QLEVELS(qs)

// QLEVELS is QBLOCK once the multiplier is in every lane of Y14.
#define QLEVELS(qs) \
	VMULPS       Y14, Y0, Y0;      \
	VMULPS       Y14, Y1, Y1;      \
	VMULPS       Y14, Y2, Y2;      \
	VMULPS       Y14, Y3, Y3;      \
	ROUNDQ(Y0, Y4, Y5);            \
	ROUNDQ(Y1, Y4, Y5);            \
	ROUNDQ(Y2, Y4, Y5);            \
	ROUNDQ(Y3, Y4, Y5);            \
	VCVTTPS2DQ   Y0, Y0;           \
	VCVTTPS2DQ   Y1, Y1;           \
	VCVTTPS2DQ   Y2, Y2;           \
	VCVTTPS2DQ   Y3, Y3;           \
	VPACKSSDW    Y1, Y0, Y4;       \
	VPACKSSDW    Y3, Y2, Y5;       \
	VPACKSSWB    Y5, Y4, Y4;       \
	VPERMD       Y4, Y10, Y4;      \
	VMOVDQU      Y4, qs(DI)

// DSCALE puts max|x|/127 in X4 and stores it as fp16 at 0(DI).
#define DSCALE \
	VDIVSS    c127<>(SB), X4, X4; \
	VCVTPS2PH $0, X4, X5;         \
	VPEXTRW   $0, X5, 0(DI)

// SCALES8 is AMAX32 and DSCALE for the eight blocks at SI, their
// divisions done once for all eight: d at 0(SP), its multiplier (QBLOCK's,
// 0 where 1/d is infinite) at 32(SP), d as fp16 at 64(SP); SI is kept
// (DX, R9, Y4..Y7, Y13, Y14 are used). One block after the other, the
// chain from a block's maximum through both divisions to its levels is
// longer than the out-of-order window reaches across blocks: the block
// loops were bound by that latency (about 37 cycles a block from cache),
// not by memory. Each block also prefetches the block sixteen ahead: a
// row streamed from memory converts about 20% faster than with the
// hardware prefetcher alone (a prefetch past the row's end is harmless).
#define SCALES8(loop) \
	MOVQ         SI, R9;                 \
	XORQ         DX, DX;                 \
loop:                                   \
	PREFETCHT0   2048(SI);               \
	PREFETCHT0   2112(SI);               \
	AMAX32;                              \
	VMOVSS       X4, 0(SP)(DX*4);        \
	ADDQ         $128, SI;               \
	INCQ         DX;                     \
	CMPQ         DX, $8;                 \
	JLT          loop;                   \
	MOVQ         R9, SI;                 \
	VMOVUPS      0(SP), Y4;              \
	VBROADCASTSS c127<>(SB), Y5;         \
	VDIVPS       Y5, Y4, Y4;             \
	VMOVUPS      Y4, 0(SP);              \
	VCVTPS2PH    $0, Y4, X5;             \
	VMOVDQU      X5, 64(SP);             \
	VBROADCASTSS onef<>(SB), Y14;        \
	VDIVPS       Y4, Y14, Y14;           \
	VCMPPS       $0x1e, Y12, Y14, Y13;   \
	VANDNPS      Y14, Y13, Y14;          \
	VMOVUPS      Y14, 32(SP)

// LEVELS8 loads block DX of a SCALES8 group from SI into Y0..Y3, its
// multiplier into Y14, and stores its fp16 d at 0(DI).
#define LEVELS8 \
	VMOVUPS      0(SI), Y0;              \
	VMOVUPS      32(SI), Y1;             \
	VMOVUPS      64(SI), Y2;             \
	VMOVUPS      96(SI), Y3;             \
	VBROADCASTSS 32(SP)(DX*4), Y14;      \
	MOVWLZX      64(SP)(DX*2), AX;       \
	MOVW         AX, 0(DI)

// func quantizeQ8_0AVX2(nb int, x unsafe.Pointer, y unsafe.Pointer) int
TEXT ·quantizeQ8_0AVX2(SB), NOSPLIT, $80-32
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	QCONSTS

q80group:
	CMPQ CX, $8
	JLT  q80loop
	SCALES8(q80amax)
	XORQ DX, DX

q80levels:
	LEVELS8
	QLEVELS(2)
	ADDQ $128, SI
	ADDQ $34, DI
	INCQ DX
	CMPQ DX, $8
	JLT  q80levels
	SUBQ $8, CX
	JMP  q80group

q80loop:
	TESTQ CX, CX
	JZ    q80done
	AMAX32
	DSCALE
	QBLOCK(2)
	ADDQ  $128, SI
	ADDQ  $34, DI
	DECQ  CX
	JMP   q80loop

q80done:
	VMOVMSKPS Y15, AX
	MOVQ      AX, ret+24(FP)
	VZEROUPPER
	RET

// Q81SUM stores s = d * (the sum of the levels in Y0..Y3) as fp16 at
// 2(DI), d's bits in R8.
#define Q81SUM \
	VPADDD       Y1, Y0, Y0;      \
	VPADDD       Y3, Y2, Y2;      \
	VPADDD       Y2, Y0, Y0;      \
	VEXTRACTI128 $1, Y0, X1;      \
	VPADDD       X1, X0, X0;      \
	VPSHUFD      $0x4e, X0, X1;   \
	VPADDD       X1, X0, X0;      \
	VPSHUFD      $0xb1, X0, X1;   \
	VPADDD       X1, X0, X0;      \
	VCVTDQ2PS    X0, X0;          \
	VMOVD        R8, X1;          \
	VMULSS       X1, X0, X0;      \
	VCVTPS2PH    $0, X0, X1;      \
	VPEXTRW      $0, X1, 2(DI)

// func quantizeQ8_1AVX2(nb int, x unsafe.Pointer, y unsafe.Pointer) int
TEXT ·quantizeQ8_1AVX2(SB), NOSPLIT, $80-32
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	QCONSTS

q81group:
	CMPQ CX, $8
	JLT  q81loop
	SCALES8(q81amax)
	XORQ DX, DX

q81levels:
	LEVELS8
	MOVL 0(SP)(DX*4), R8
	QLEVELS(4)
	Q81SUM
	ADDQ $128, SI
	ADDQ $36, DI
	INCQ DX
	CMPQ DX, $8
	JLT  q81levels
	SUBQ $8, CX
	JMP  q81group

q81loop:
	TESTQ CX, CX
	JZ    q81done
	AMAX32
	DSCALE
	VMOVD        X4, R8
	QBLOCK(4)
	Q81SUM
	ADDQ         $128, SI
	ADDQ         $36, DI
	DECQ         CX
	JMP          q81loop

q81done:
	VMOVMSKPS Y15, AX
	MOVQ      AX, ret+24(FP)
	VZEROUPPER
	RET


// Q8_K (float32 d, int8 qs[256], int16 bsums[16]), as quant's quantizer
// and ggml's CPU from_float: maxv is the first value of largest magnitude,
// iscale = -127/maxv, levels min(127, nearest-even(iscale*x)) (C's int8
// cast of them, as INT8), d = 1/iscale; an all-zero block is all zero.

DATA cm127<>+0(SB)/4, $0xc2fe0000
GLOBL cm127<>(SB), RODATA|NOPTR, $4

DATA i127<>+0(SB)/4, $127
GLOBL i127<>(SB), RODATA|NOPTR, $4

// Q8KLEVELS writes the 32 levels of the floats at off(SI) to off/4+4(DI)
// and their two 16-element sums to bs(DI), iscale in Y14, using Y0..Y7.
#define Q8KLEVELS(off, qs, bs) \
	VMULPS       off(SI), Y14, Y0;    \
	VMULPS       off+32(SI), Y14, Y1; \
	VMULPS       off+64(SI), Y14, Y2; \
	VMULPS       off+96(SI), Y14, Y3; \
	VCVTPS2DQ    Y0, Y0;              \
	VCVTPS2DQ    Y1, Y1;              \
	VCVTPS2DQ    Y2, Y2;              \
	VCVTPS2DQ    Y3, Y3;              \
	VPMINSD      Y13, Y0, Y0;         \
	VPMINSD      Y13, Y1, Y1;         \
	VPMINSD      Y13, Y2, Y2;         \
	VPMINSD      Y13, Y3, Y3;         \
	INT8(Y0);                         \
	INT8(Y1);                         \
	INT8(Y2);                         \
	INT8(Y3);                         \
	VPACKSSDW    Y1, Y0, Y4;          \
	VPACKSSDW    Y3, Y2, Y5;          \
	VPACKSSWB    Y5, Y4, Y4;          \
	VPERMD       Y4, Y11, Y4;         \
	VMOVDQU      Y4, qs(DI);          \
	VPADDD       Y1, Y0, Y0;          \
	VPADDD       Y3, Y2, Y2;          \
	VPHADDD      Y2, Y0, Y0;          \
	VPHADDD      Y0, Y0, Y0;          \
	VEXTRACTI128 $1, Y0, X1;          \
	VPADDD       X1, X0, X0;          \
	VPACKSSDW    X0, X0, X0;          \
	VMOVD        X0, bs(DI)

// func quantizeQ8_KAVX2(nb int, x unsafe.Pointer, y unsafe.Pointer) int
TEXT ·quantizeQ8_KAVX2(SB), NOSPLIT, $0-32
	MOVQ         nb+0(FP), CX
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	VBROADCASTSS absmask<>(SB), Y8
	VBROADCASTSS inf<>(SB), Y12
	VPBROADCASTD i127<>(SB), Y13
	VMOVDQU      packperm<>(SB), Y11
	VXORPS       Y15, Y15, Y15

q8kloop:
	TESTQ  CX, CX
	JZ     q8kdone
	VXORPS Y9, Y9, Y9
	XORQ   AX, AX

q8kmax:
	VANDPS  (SI)(AX*1), Y8, Y0
	VCMPPS  $0x15, Y12, Y0, Y1
	VORPS   Y1, Y15, Y15
	VMAXPS  Y0, Y9, Y9
	ADDQ    $32, AX
	CMPQ    AX, $1024
	JLT     q8kmax
	VEXTRACTF128 $1, Y9, X1
	VMAXPS  X1, X9, X9
	VMOVHLPS X9, X1, X1
	VMAXPS  X1, X9, X9
	VMOVSHDUP X9, X1
	VMAXSS  X1, X9, X9
	VXORPS  X1, X1, X1
	VUCOMISS X1, X9
	JNE     q8kfind
	JP      q8kfind

	// An all-zero block (the non-finite test above covers NaN).
	VPXOR   Y0, Y0, Y0
	XORQ    AX, AX

q8kzero:
	VMOVDQU Y0, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, $288
	JLT     q8kzero
	MOVL    $0, 288(DI)
	JMP     q8knext

q8kfind:
	VBROADCASTSS X9, Y9
	XORQ    AX, AX

q8kscan:
	VANDPS    (SI)(AX*1), Y8, Y0
	VCMPPS    $0, Y9, Y0, Y0
	VMOVMSKPS Y0, BX
	TESTL     BX, BX
	JNZ       q8kfound
	ADDQ      $32, AX
	CMPQ      AX, $1024
	JLT       q8kscan
	// Unreachable for finite input; a NaN block ends here, flagged.
	XORQ      AX, AX
	XORL      BX, BX

q8kfound:
	BSFL      BX, BX
	LEAQ      (AX)(BX*4), AX
	VMOVSS    cm127<>(SB), X14
	VDIVSS    (SI)(AX*1), X14, X14
	VMOVSS    onef<>(SB), X0
	VDIVSS    X14, X0, X0
	VMOVSS    X0, 0(DI)
	VBROADCASTSS X14, Y14
	Q8KLEVELS(0, 4, 260)
	Q8KLEVELS(128, 36, 264)
	Q8KLEVELS(256, 68, 268)
	Q8KLEVELS(384, 100, 272)
	Q8KLEVELS(512, 132, 276)
	Q8KLEVELS(640, 164, 280)
	Q8KLEVELS(768, 196, 284)
	Q8KLEVELS(896, 228, 288)

q8knext:
	ADDQ $1024, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q8kloop

q8kdone:
	VMOVMSKPS Y15, AX
	MOVQ      AX, ret+24(FP)
	VZEROUPPER
	RET

// The activation quantizers of ggml's AVX builds (FromFloatKernelAVX),
// Q8_0 and Q8_1 as the haswell and later builds make them: d = max|x|/127
// as above, but levels x * (127/max|x|) (0 for an all-zero block)
// converted by VCVTPS2DQ, rounded to nearest even, and saturated by the
// packs; Q8_1's s is d times the sum of the int32 levels. Where 127/max is
// infinite (a subnormal block) the products are infinite or NaN, whose
// conversion INT_MIN saturates to -128, as there.

// QBLOCKAVX quantizes the 32 floats in Y0..Y3 whose max|x| is in X4: d
// to 0(DI) as fp16 and its float32 bits to R8, the levels to qs(DI),
// which stay in Y0..Y3 as int32 (Y4, Y5, X13, Y14 are used).
#define QBLOCKAVX(qs) \
	VMOVSS       c127<>(SB), X14; \
	VDIVSS       X4, X14, X14;    \
	VXORPS       X13, X13, X13;   \
	VUCOMISS     X13, X4;         \
	JNE          2(PC);           \
	VXORPS       X14, X14, X14;   \
	VBROADCASTSS X14, Y14;        \
	DSCALE;                       \
	VMOVD        X4, R8;          \
	VMULPS       Y14, Y0, Y0;     \
	VMULPS       Y14, Y1, Y1;     \
	VMULPS       Y14, Y2, Y2;     \
	VMULPS       Y14, Y3, Y3;     \
	VCVTPS2DQ    Y0, Y0;          \
	VCVTPS2DQ    Y1, Y1;          \
	VCVTPS2DQ    Y2, Y2;          \
	VCVTPS2DQ    Y3, Y3;          \
	VPACKSSDW    Y1, Y0, Y4;      \
	VPACKSSDW    Y3, Y2, Y5;      \
	VPACKSSWB    Y5, Y4, Y4;      \
	VPERMD       Y4, Y10, Y4;     \
	VMOVDQU      Y4, qs(DI)

// func quantizeQ8_0AVXBuild(nb int, x unsafe.Pointer, y unsafe.Pointer) int
TEXT ·quantizeQ8_0AVXBuild(SB), NOSPLIT, $0-32
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	QCONSTS

q80aloop:
	TESTQ CX, CX
	JZ    q80adone
	AMAX32
	QBLOCKAVX(2)
	ADDQ  $128, SI
	ADDQ  $34, DI
	DECQ  CX
	JMP   q80aloop

q80adone:
	VMOVMSKPS Y15, AX
	MOVQ      AX, ret+24(FP)
	VZEROUPPER
	RET

// func quantizeQ8_1AVXBuild(nb int, x unsafe.Pointer, y unsafe.Pointer) int
TEXT ·quantizeQ8_1AVXBuild(SB), NOSPLIT, $0-32
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	QCONSTS

q81aloop:
	TESTQ CX, CX
	JZ    q81adone
	AMAX32
	QBLOCKAVX(4)
	Q81SUM
	ADDQ  $128, SI
	ADDQ  $36, DI
	DECQ  CX
	JMP   q81aloop

q81adone:
	VMOVMSKPS Y15, AX
	MOVQ      AX, ret+24(FP)
	VZEROUPPER
	RET
