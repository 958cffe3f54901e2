//go:build !purego

#include "textflag.h"

// An AVX2 version of ggml's reference quantizer quantize_row_q4_0_ref,
// producing the same bytes: the same float operations in the same order
// (a multiply, then an add; no fused multiply-adds), the same tie rules,
// the scale stored by F16C (which rounds finite values exactly as ggml's
// scalar conversion does). Q8_0, Q8_1 and Q8_K are fromfloat_amd64.s's.
//
// It stops before a block whose inverse scale 1/d overflows (d tiny but
// not zero) and returns the number of blocks written; Go quantizes that
// block, whose products are infinite, with the C conversion's rules.

DATA q_abs<>+0(SB)/4, $0x7fffffff
DATA q_one<>+0(SB)/4, $0x3f800000
DATA q_eighthalf<>+0(SB)/4, $0x41080000
DATA q_minus8<>+0(SB)/4, $0xc1000000
DATA q_maxf<>+0(SB)/4, $0x7f7fffff
DATA q_15<>+0(SB)/4, $15
GLOBL q_abs<>(SB), RODATA|NOPTR, $4
GLOBL q_one<>(SB), RODATA|NOPTR, $4
GLOBL q_eighthalf<>(SB), RODATA|NOPTR, $4
GLOBL q_minus8<>(SB), RODATA|NOPTR, $4
GLOBL q_maxf<>(SB), RODATA|NOPTR, $4
GLOBL q_15<>(SB), RODATA|NOPTR, $4

// ABSMAX leaves |x| of the block's four registers Y0-Y3 in Y4-Y7 and
// their largest value in every lane of Y8.
#define ABSMAX \
	VANDPS Y15, Y0, Y4 \
	VANDPS Y15, Y1, Y5 \
	VANDPS Y15, Y2, Y6 \
	VANDPS Y15, Y3, Y7 \
	VMAXPS Y5, Y4, Y8 \
	VMAXPS Y7, Y6, Y9 \
	VMAXPS Y9, Y8, Y8 \
	VPERM2F128 $1, Y8, Y8, Y9 \
	VMAXPS Y9, Y8, Y8 \
	VPERMILPS $0x4e, Y8, Y9 \
	VMAXPS Y9, Y8, Y8 \
	VPERMILPS $0xb1, Y8, Y9 \
	VMAXPS Y9, Y8, Y8

// INVERSE sets X13 = d ? 1/d : 0 for the scale in X12, jumping to bail
// when 1/d overflows; it clobbers X9 and X10.
#define INVERSE(bail) \
	VXORPS X13, X13, X13 \
	VUCOMISS X13, X12 \
	JEQ 6(PC) \
	VBROADCASTSS q_one<>(SB), X9 \
	VDIVSS X12, X9, X13 \
	VANDPS X15, X13, X10 \
	VUCOMISS q_maxf<>(SB), X10 \
	JHI bail

// STOREHALF stores the scale in X12 as fp16 at (DI); clobbers X10, BX.
#define STOREHALF \
	VCVTPS2PH $0, X12, X10 \
	VMOVD X10, BX \
	MOVW BX, (DI)

// func quantizeQ4_0AVX2(dst *byte, src *float32, nb int) int
TEXT ·quantizeQ4_0AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX
	XORQ R8, R8
	VBROADCASTSS q_abs<>(SB), Y15
	VBROADCASTSS q_eighthalf<>(SB), Y14
	VPBROADCASTD q_15<>(SB), Y11
q4loop:
	CMPQ R8, CX
	JGE q4done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	ABSMAX
	// The value of largest magnitude, the first on ties; +0 when all
	// are zero, as ggml's scan starts from max = 0.
	VXORPS X12, X12, X12
	VUCOMISS X12, X8
	JEQ q4scale
	VCMPPS $0, Y8, Y4, Y9
	VMOVMSKPS Y9, AX
	VCMPPS $0, Y8, Y5, Y9
	VMOVMSKPS Y9, BX
	SHLL $8, BX
	ORL BX, AX
	VCMPPS $0, Y8, Y6, Y9
	VMOVMSKPS Y9, BX
	SHLL $16, BX
	ORL BX, AX
	VCMPPS $0, Y8, Y7, Y9
	VMOVMSKPS Y9, BX
	SHLL $24, BX
	ORL BX, AX
	BSFL AX, AX
	VMOVSS (SI)(AX*4), X12
q4scale:
	// d = max / -8
	VMOVSS q_minus8<>(SB), X9
	VDIVSS X9, X12, X12
	INVERSE(q4done)
	STOREHALF
	VBROADCASTSS X13, Y13
	// levels min(15, (int)(x*id + 8.5))
	VMULPS Y13, Y0, Y0
	VMULPS Y13, Y1, Y1
	VMULPS Y13, Y2, Y2
	VMULPS Y13, Y3, Y3
	VADDPS Y14, Y0, Y0
	VADDPS Y14, Y1, Y1
	VADDPS Y14, Y2, Y2
	VADDPS Y14, Y3, Y3
	VCVTTPS2DQ Y0, Y0
	VCVTTPS2DQ Y1, Y1
	VCVTTPS2DQ Y2, Y2
	VCVTTPS2DQ Y3, Y3
	VPMINSD Y11, Y0, Y0
	VPMINSD Y11, Y1, Y1
	VPMINSD Y11, Y2, Y2
	VPMINSD Y11, Y3, Y3
	// byte j = level j | level j+16 << 4
	VPSLLD $4, Y2, Y2
	VPSLLD $4, Y3, Y3
	VPOR Y2, Y0, Y0
	VPOR Y3, Y1, Y1
	VPACKUSDW Y1, Y0, Y0
	VPERMQ $0xd8, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKUSWB X1, X0, X0
	VMOVDQU X0, 2(DI)
	ADDQ $128, SI
	ADDQ $18, DI
	INCQ R8
	JMP q4loop
q4done:
	VZEROUPPER
	MOVQ R8, ret+24(FP)
	RET

DATA qx_magic<>+0(SB)/4, $0x4b400000
DATA qx_magic<>+4(SB)/4, $0x4b400000
DATA qx_magic<>+8(SB)/4, $0x4b400000
DATA qx_magic<>+12(SB)/4, $0x4b400000
DATA qx_magic<>+16(SB)/4, $0x4b400000
DATA qx_magic<>+20(SB)/4, $0x4b400000
DATA qx_magic<>+24(SB)/4, $0x4b400000
DATA qx_magic<>+28(SB)/4, $0x4b400000
GLOBL qx_magic<>(SB), RODATA|NOPTR, $32
DATA qx_mant<>+0(SB)/4, $0x007fffff
DATA qx_mant<>+4(SB)/4, $0x007fffff
DATA qx_mant<>+8(SB)/4, $0x007fffff
DATA qx_mant<>+12(SB)/4, $0x007fffff
DATA qx_mant<>+16(SB)/4, $0x007fffff
DATA qx_mant<>+20(SB)/4, $0x007fffff
DATA qx_mant<>+24(SB)/4, $0x007fffff
DATA qx_mant<>+28(SB)/4, $0x007fffff
GLOBL qx_mant<>(SB), RODATA|NOPTR, $32
DATA qx_bias<>+0(SB)/4, $0x00400000
DATA qx_bias<>+4(SB)/4, $0x00400000
DATA qx_bias<>+8(SB)/4, $0x00400000
DATA qx_bias<>+12(SB)/4, $0x00400000
DATA qx_bias<>+16(SB)/4, $0x00400000
DATA qx_bias<>+20(SB)/4, $0x00400000
DATA qx_bias<>+24(SB)/4, $0x00400000
DATA qx_bias<>+28(SB)/4, $0x00400000
GLOBL qx_bias<>(SB), RODATA|NOPTR, $32

// QXGROUP accumulates, for the 8 trial scales in S, the sums
// wx*l into SX and (w*l)*l into S2, l = clamp(nearest_int(scale*v)),
// with v, wx and w broadcast in Y11, Y12 and Y13; the bounds are in Y9
// (-nmax) and Y10 (nmax-1). Each lane does exactly the scalar sequence.
//
// nearest_int's magic-number rounding is VCVTPS2DQ's (round to nearest
// even, Go's MXCSR setting) below 2^22 in magnitude; the caller passes
// finite values only, so |scale*v| <= (nmax+1)*|v|/amax stays far below.
#define QXGROUP(S, SX, S2) \
	VMULPS Y11, S, Y14 \
	VCVTPS2DQ Y14, Y14 \
	VPMINSD Y10, Y14, Y14 \
	VPMAXSD Y9, Y14, Y14 \
	VCVTDQ2PS Y14, Y14 \
	VMULPS Y14, Y12, Y15 \
	VADDPS Y15, SX, SX \
	VMULPS Y14, Y13, Y15 \
	VMULPS Y14, Y15, Y15 \
	VADDPS Y15, S2, S2

// The trial scales arrive as numerators, divided here by maxv (the
// division each scalar trial makes) and stored back for the caller.
//
// func qxTrialsAVX2(x, w, wx *float32, n int, scales *[24]float32, nmax int, sumx, sum2 *[24]float32, maxv float32)
TEXT ·qxTrialsAVX2(SB), NOSPLIT, $0-68
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DX
	MOVQ wx+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ scales+32(FP), AX
	MOVQ nmax+40(FP), BX
	VBROADCASTSS maxv+64(FP), Y3
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS 64(AX), Y2
	VDIVPS Y3, Y0, Y0
	VDIVPS Y3, Y1, Y1
	VDIVPS Y3, Y2, Y2
	VMOVUPS Y0, (AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	MOVQ BX, R10
	NEGQ R10
	VMOVQ R10, X9
	VPBROADCASTD X9, Y9
	DECQ BX
	VMOVQ BX, X10
	VPBROADCASTD X10, Y10
qxloop:
	TESTQ CX, CX
	JE qxdone
	VBROADCASTSS (SI), Y11
	VBROADCASTSS (R9), Y12
	VBROADCASTSS (DX), Y13
	QXGROUP(Y0, Y3, Y6)
	QXGROUP(Y1, Y4, Y7)
	QXGROUP(Y2, Y5, Y8)
	ADDQ $4, SI
	ADDQ $4, DX
	ADDQ $4, R9
	DECQ CX
	JMP qxloop
qxdone:
	MOVQ sumx+48(FP), AX
	MOVQ sum2+56(FP), BX
	VMOVUPS Y3, (AX)
	VMOVUPS Y4, 32(AX)
	VMOVUPS Y5, 64(AX)
	VMOVUPS Y6, (BX)
	VMOVUPS Y7, 32(BX)
	VMOVUPS Y8, 64(BX)
	VZEROUPPER
	RET

// The trial passes of makeQKXQuants, eight trial scales to a vector, each
// lane doing exactly the scalar sequence for its trial: QKXLEVEL turns the
// broadcast xm[i] in Y3 into the float level clamp(nearest_int(iscale*xm),
// 0, nmax) with the iscales in Y10, 0 in Y11 and nmax in Y15.
#define QKXLEVEL \
	VMULPS    Y3, Y10, Y3 \
	VADDPS    qx_magic<>(SB), Y3, Y3 \
	VPAND     qx_mant<>(SB), Y3, Y3 \
	VPSUBD    qx_bias<>(SB), Y3, Y3 \
	VPMAXSD   Y11, Y3, Y3 \
	VPMINSD   Y15, Y3, Y3 \
	VCVTDQ2PS Y3, Y3

// func qkxSumsAVX2(x, w, xm *float32, n int, iscale *float32, ngroups, nmax int, sumL, sumL2, sumXL *float32)
TEXT ·qkxSumsAVX2(SB), NOSPLIT, $0-80
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DX
	MOVQ xm+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ iscale+32(FP), R8
	MOVQ ngroups+40(FP), R9
	MOVQ nmax+48(FP), AX
	MOVQ sumL+56(FP), R10
	MOVQ sumL2+64(FP), R11
	MOVQ sumXL+72(FP), R12
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15
	VPXOR Y11, Y11, Y11
qkxsgroup:
	TESTQ R9, R9
	JE qkxsdone
	VMOVUPS (R8), Y10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	XORQ DI, DI
qkxsloop:
	CMPQ DI, CX
	JGE qkxsstore
	VBROADCASTSS (BX)(DI*4), Y3
	QKXLEVEL
	VBROADCASTSS (DX)(DI*4), Y4
	VMULPS Y3, Y4, Y4
	VADDPS Y4, Y0, Y0
	VMULPS Y3, Y4, Y5
	VADDPS Y5, Y1, Y1
	VBROADCASTSS (SI)(DI*4), Y5
	VMULPS Y5, Y4, Y5
	VADDPS Y5, Y2, Y2
	INCQ DI
	JMP qkxsloop
qkxsstore:
	VMOVUPS Y0, (R10)
	VMOVUPS Y1, (R11)
	VMOVUPS Y2, (R12)
	ADDQ $32, R8
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, R12
	DECQ R9
	JMP qkxsgroup
qkxsdone:
	VZEROUPPER
	RET

// QKXDIFF leaves (scale*l + min) - x[i] in Y3, the level in Y3 on entry,
// scale in Y9, min in Y8.
#define QKXDIFF \
	VMULPS       Y3, Y9, Y3 \
	VADDPS       Y8, Y3, Y3 \
	VBROADCASTSS (SI)(DI*4), Y4 \
	VSUBPS       Y4, Y3, Y3

// func qkxErrAVX2(x, w, xm *float32, n int, iscale *float32, ngroups, nmax int, scale, minv *float32, mad int, e *float32)
TEXT ·qkxErrAVX2(SB), NOSPLIT, $0-88
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DX
	MOVQ xm+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ iscale+32(FP), R8
	MOVQ ngroups+40(FP), R9
	MOVQ nmax+48(FP), AX
	MOVQ scale+56(FP), R10
	MOVQ minv+64(FP), R11
	MOVQ mad+72(FP), R13
	MOVQ e+80(FP), R12
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15
	VPXOR Y11, Y11, Y11
	VPCMPEQD Y7, Y7, Y7
	VPSRLD $1, Y7, Y7
qkxegroup:
	TESTQ R9, R9
	JE qkxedone
	VMOVUPS (R8), Y10
	VMOVUPS (R10), Y9
	VMOVUPS (R11), Y8
	VXORPS Y0, Y0, Y0
	XORQ DI, DI
	TESTQ R13, R13
	JNE qkxemad
qkxesq:
	CMPQ DI, CX
	JGE qkxestore
	VBROADCASTSS (BX)(DI*4), Y3
	QKXLEVEL
	QKXDIFF
	VMULPS Y3, Y3, Y3
	VBROADCASTSS (DX)(DI*4), Y4
	VMULPS Y3, Y4, Y3
	VADDPS Y3, Y0, Y0
	INCQ DI
	JMP qkxesq
qkxemad:
	CMPQ DI, CX
	JGE qkxestore
	VBROADCASTSS (BX)(DI*4), Y3
	QKXLEVEL
	QKXDIFF
	VANDPS Y7, Y3, Y3
	VBROADCASTSS (DX)(DI*4), Y4
	VMULPS Y3, Y4, Y3
	VADDPS Y3, Y0, Y0
	INCQ DI
	JMP qkxemad
qkxestore:
	VMOVUPS Y0, (R12)
	ADDQ $32, R8
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, R12
	DECQ R9
	JMP qkxegroup
qkxedone:
	VZEROUPPER
	RET
