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

// FDOT4 is FDOT for four columns (y pointers in R10-R13): x is loaded once
// into V16-V19, each column in turn into V24-V27, and column c's
// accumulators are V(4c)..V(4c+3), its scalar one F22, F23, F28 or F29;
// each column gets FDOT's operations in FDOT's order, so its result is the
// same bit for bit.

#define FCOL16(R, a, b, c, d, LOAD16) \
	LOAD16(R, V24, V25, V26, V27, 24, 25, 26, 27); \
	FMLA4S(24, 16, a); \
	FMLA4S(25, 17, b); \
	FMLA4S(26, 18, c); \
	FMLA4S(27, 19, d)

#define FCOL4(R, a, LOAD4) \
	LOAD4(R, V24, 24); \
	FMLA4S(24, 16, a)

#define FRED(a, b, c, d) \
	FADD4S(b, a, a); \
	FADD4S(d, c, c); \
	FADD4S(c, a, a); \
	HSUM4S(a, a)

#define FDOT4(LOAD16, LOAD4, LOAD1) \
	X4ARGS;                         \
	VEOR V4.B16, V4.B16, V4.B16;    \
	VEOR V5.B16, V5.B16, V5.B16;    \
	VEOR V6.B16, V6.B16, V6.B16;    \
	VEOR V7.B16, V7.B16, V7.B16;    \
	VEOR V8.B16, V8.B16, V8.B16;    \
	VEOR V9.B16, V9.B16, V9.B16;    \
	VEOR V10.B16, V10.B16, V10.B16; \
	VEOR V11.B16, V11.B16, V11.B16; \
	VEOR V12.B16, V12.B16, V12.B16; \
	VEOR V13.B16, V13.B16, V13.B16; \
	VEOR V14.B16, V14.B16, V14.B16; \
	VEOR V15.B16, V15.B16, V15.B16; \
	VEOR V31.B16, V31.B16, V31.B16; \
by16:                               \
	CMP  $16, R0;                   \
	BLT  by4;                       \
	LOAD16(R1, V16, V17, V18, V19, 16, 17, 18, 19); \
	FCOL16(R10, 0, 1, 2, 3, LOAD16);     \
	FCOL16(R11, 4, 5, 6, 7, LOAD16);     \
	FCOL16(R12, 8, 9, 10, 11, LOAD16);   \
	FCOL16(R13, 12, 13, 14, 15, LOAD16); \
	SUB  $16, R0;                   \
	B    by16;                      \
by4:                                \
	CMP  $4, R0;                    \
	BLT  reduce;                    \
	LOAD4(R1, V16, 16);             \
	FCOL4(R10, 0, LOAD4);           \
	FCOL4(R11, 4, LOAD4);           \
	FCOL4(R12, 8, LOAD4);           \
	FCOL4(R13, 12, LOAD4);          \
	SUB  $4, R0;                    \
	B    by4;                       \
reduce:                             \
	FRED(0, 1, 2, 3);               \
	FRED(4, 5, 6, 7);               \
	FRED(8, 9, 10, 11);             \
	FRED(12, 13, 14, 15);           \
	FMOVS ZR, F22;                  \
	FMOVS ZR, F23;                  \
	FMOVS ZR, F28;                  \
	FMOVS ZR, F29;                  \
by1:                                \
	CBZ  R0, done;                  \
	LOAD1(R1, F16);                 \
	LOAD1(R10, F24);                \
	FMADDS F24, F22, F16, F22;      \
	LOAD1(R11, F24);                \
	FMADDS F24, F23, F16, F23;      \
	LOAD1(R12, F24);                \
	FMADDS F24, F28, F16, F28;      \
	LOAD1(R13, F24);                \
	FMADDS F24, F29, F16, F29;      \
	SUB  $1, R0;                    \
	B    by1;                       \
done:                               \
	FADDS F22, F0, F0;              \
	FADDS F23, F4, F4;              \
	FADDS F28, F8, F8;              \
	FADDS F29, F12, F12;            \
	MOVD  out+24(FP), R9;           \
	FMOVS F0, 0(R9);                \
	FMOVS F4, 4(R9);                \
	FMOVS F8, 8(R9);                \
	FMOVS F12, 12(R9);              \
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

// func dotF32x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotF32x4NEON(SB), NOSPLIT, $0-32
	FDOT4(LOAD16F32, LOAD4F32, LOAD1F32)

// func dotF16x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotF16x4NEON(SB), NOSPLIT, $0-32
	FDOT4(LOAD16F16, LOAD4F16, LOAD1F16)

// func dotBF16x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotBF16x4NEON(SB), NOSPLIT, $0-32
	FDOT4(LOAD16BF16, LOAD4BF16, LOAD1BF16)
