//go:build !purego

#include "dot_arm64.h"

// F32, F16 and BF16 dot products (each type against itself): four float
// accumulators over 16 elements per step, then 4-element steps into the
// first, then single elements in a scalar accumulator added last. The
// halves are widened to floats (exactly) before the fused multiply-adds,
// as ggml's NEON build does without FP16 arithmetic: summing in half
// precision would lose what the generic kernel keeps.
//
// FDOT is the body of all three: LOAD16(R, A, B, C, D, a, b, c, d) loads
// 16 elements at R (advancing it) as floats into the registers A-D
// (numbered a-d), LOAD4(R, A, a) four into A, LOAD1(R, F) one into F; they
// may use V20, V21 and R3, and V31 holds zero.

#define ZIP18H(m, n, d) ENC3(0x4E403800, m, n, d)
#define ZIP28H(m, n, d) ENC3(0x4E407800, m, n, d)

#define FDOT(LOAD16, LOAD4, LOAD1) \
	MOVD n+0(FP), R0;          \
	MOVD x+8(FP), R1;          \
	MOVD y+16(FP), R2;         \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V1.B16, V1.B16, V1.B16; \
	VEOR V2.B16, V2.B16, V2.B16; \
	VEOR V3.B16, V3.B16, V3.B16; \
	VEOR V31.B16, V31.B16, V31.B16; \
by16:                          \
	CMP  $16, R0;              \
	BLT  by4;                  \
	LOAD16(R1, V4, V5, V6, V7, 4, 5, 6, 7);    \
	LOAD16(R2, V16, V17, V18, V19, 16, 17, 18, 19); \
	VFMLA V16.S4, V4.S4, V0.S4; \
	VFMLA V17.S4, V5.S4, V1.S4; \
	VFMLA V18.S4, V6.S4, V2.S4; \
	VFMLA V19.S4, V7.S4, V3.S4; \
	SUB  $16, R0;              \
	B    by16;                 \
by4:                           \
	CMP  $4, R0;               \
	BLT  reduce;               \
	LOAD4(R1, V4, 4);              \
	LOAD4(R2, V16, 16);             \
	VFMLA V16.S4, V4.S4, V0.S4; \
	SUB  $4, R0;               \
	B    by4;                  \
reduce:                        \
	FADD4S(1, 0, 0);           \
	FADD4S(3, 2, 2);           \
	FADD4S(2, 0, 0);           \
	HSUM4S(0, 0);              \
	FMOVS ZR, F1;              \
by1:                           \
	CBZ  R0, done;             \
	LOAD1(R1, F4);             \
	LOAD1(R2, F5);             \
	FMADDS F5, F1, F4, F1;     \
	SUB  $1, R0;               \
	B    by1;                  \
done:                          \
	FADDS F1, F0, F0;          \
	FMOVS F0, ret+24(FP);      \
	RET

#define LOAD16F32(R, A, B, C, D, a, b, c, d) VLD1.P 64(R), [A.S4, B.S4, C.S4, D.S4]
#define LOAD4F32(R, A, a) VLD1.P 16(R), [A.S4]
#define LOAD1F32(R, F) FMOVS.P 4(R), F

#define LOAD16F16(R, A, B, C, D, a, b, c, d) \
	VLD1.P 32(R), [V20.H8, V21.H8]; \
	FCVTL4S(20, a);                 \
	FCVTL24S(20, b);                \
	FCVTL4S(21, c);                 \
	FCVTL24S(21, d)
#define LOAD4F16(R, A, a) \
	FMOVD.P 8(R), F20; \
	FCVTL4S(20, a)
#define LOAD1F16(R, F) \
	MOVHU.P 2(R), R3; \
	FMOVS   R3, F;    \
	FCVTHS  F, F

// A bfloat16 is the top half of a float32: zipping zeros below the halves
// widens them.
#define LOAD16BF16(R, A, B, C, D, a, b, c, d) \
	VLD1.P 32(R), [V20.H8, V21.H8]; \
	ZIP18H(20, 31, a);              \
	ZIP28H(20, 31, b);              \
	ZIP18H(21, 31, c);              \
	ZIP28H(21, 31, d)
#define LOAD4BF16(R, A, a) \
	FMOVD.P 8(R), F20; \
	ZIP18H(20, 31, a)
#define LOAD1BF16(R, F) \
	MOVHU.P 2(R), R3;    \
	LSLW    $16, R3, R3; \
	FMOVS   R3, F

// func dotF32NEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotF32NEON(SB), NOSPLIT, $0-28
	FDOT(LOAD16F32, LOAD4F32, LOAD1F32)

// func dotF16NEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotF16NEON(SB), NOSPLIT, $0-28
	FDOT(LOAD16F16, LOAD4F16, LOAD1F16)

// func dotBF16NEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotBF16NEON(SB), NOSPLIT, $0-28
	FDOT(LOAD16BF16, LOAD4BF16, LOAD1BF16)
