//go:build !purego

#include "dot_arm64.h"

// NEON versions of the vector primitives (vec.go). Every loop handles 16
// values per step in four registers, then 4, then one at a time, so any
// length works and no element is read or written outside the slices.
// (The dot products are the F32 and F16 matrix kernels.)

// BINARY defines func NAME(dst, x, y *float32, n int): dst[i] = x[i] OP y[i]
// (OP4S the vector form, by register numbers; OPS the scalar one).
#define BINARY(NAME, OP4S, OPS) \
TEXT NAME(SB), NOSPLIT, $0-32; \
	MOVD dst+0(FP), R0;  \
	MOVD x+8(FP), R1;    \
	MOVD y+16(FP), R2;   \
	MOVD n+24(FP), R3;   \
by16:                    \
	CMP  $16, R3;        \
	BLT  by4;            \
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]; \
	VLD1.P 64(R2), [V4.S4, V5.S4, V6.S4, V7.S4]; \
	OP4S(4, 0, 0);       \
	OP4S(5, 1, 1);       \
	OP4S(6, 2, 2);       \
	OP4S(7, 3, 3);       \
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0); \
	SUB  $16, R3;        \
	B    by16;           \
by4:                     \
	CMP  $4, R3;         \
	BLT  by1;            \
	VLD1.P 16(R1), [V0.S4]; \
	VLD1.P 16(R2), [V4.S4]; \
	OP4S(4, 0, 0);       \
	VST1.P [V0.S4], 16(R0); \
	SUB  $4, R3;         \
	B    by4;            \
by1:                     \
	CBZ  R3, done;       \
	FMOVS.P 4(R1), F0;   \
	FMOVS.P 4(R2), F4;   \
	OPS  F4, F0, F0;     \
	FMOVS.P F0, 4(R0);   \
	SUB  $1, R3;         \
	B    by1;            \
done:                    \
	RET

BINARY(·vecAddNEON, FADD4S, FADDS)
BINARY(·vecSubNEON, FSUB4S, FSUBS)
BINARY(·vecMulNEON, FMUL4S, FMULS)
BINARY(·vecDivNEON, FDIV4S, FDIVS)

// HALF1 and HALFST1 move one fp16 value between mem and F(f) as a float,
// using R(tmp).
#define HALF1(mem, tmp, f) \
	MOVHU  mem, tmp; \
	FMOVS  tmp, f;   \
	FCVTHS f, f

#define HALFST1(f, tmp, mem) \
	FCVTSH f, f;   \
	FMOVS  f, tmp; \
	MOVH   tmp, mem

// HMAP defines func NAME(y *uint16, n int, s float32) or
// func NAME(y, x *uint16, n int, s float32): y[i] = fp16(OP(y[i], x[i], s)),
// computed in float32: ARGS loads y into R0, x into R1, n into R3 and s
// into F31; LOADX* load x's values as floats (V20-V23 or F4); OP4(a, b)
// updates V(a) from V(b) (x's), OP1(a, b) the same for F registers.
#define HMAP(NAME, FRAME, ARGS, LOADX8, LOADX4, LOADX1, OP4, OP1) \
TEXT NAME(SB), NOSPLIT, FRAME; \
	ARGS;                   \
	VDUP  V31.S[0], V31.S4; \
by16:                       \
	CMP   $16, R3;          \
	BLT   by4;              \
	VLD1  (R0), [V0.H8, V1.H8]; \
	FCVTL4S(0, 16);         \
	FCVTL24S(0, 17);        \
	FCVTL4S(1, 18);         \
	FCVTL24S(1, 19);        \
	LOADX8;                 \
	OP4(16, 20);            \
	OP4(17, 21);            \
	OP4(18, 22);            \
	OP4(19, 23);            \
	FCVTN4H(16, 0);         \
	FCVTN28H(17, 0);        \
	FCVTN4H(18, 1);         \
	FCVTN28H(19, 1);        \
	VST1.P [V0.H8, V1.H8], 32(R0); \
	SUB   $16, R3;          \
	B     by16;             \
by4:                        \
	CMP   $4, R3;           \
	BLT   by1;              \
	FMOVD (R0), F0;         \
	FCVTL4S(0, 16);         \
	LOADX4;                 \
	OP4(16, 20);            \
	FCVTN4H(16, 0);         \
	FMOVD.P F0, 8(R0);      \
	SUB   $4, R3;           \
	B     by4;              \
by1:                        \
	CBZ   R3, done;         \
	HALF1((R0), R4, F0);    \
	LOADX1;                 \
	OP1(F0, F4);            \
	HALFST1(F0, R4, (R0));  \
	ADD   $2, R0;           \
	SUB   $1, R3;           \
	B     by1;              \
done:                       \
	RET

#define XLOAD8 \
	VLD1.P 32(R1), [V4.H8, V5.H8]; \
	FCVTL4S(4, 20);  \
	FCVTL24S(4, 21); \
	FCVTL4S(5, 22);  \
	FCVTL24S(5, 23)
#define XLOAD4 \
	FMOVD.P 8(R1), F4; \
	FCVTL4S(4, 20)
#define XLOAD1 \
	HALF1((R1), R5, F4); \
	ADD $2, R1

#define NOLOAD

#define MAD4(a, b) FMLA4S(31, b, a)
#define MAD1(a, b) FMADDS F31, a, b, a
#define SCALE4(a, b) FMUL4S(31, a, a)
#define SCALE1(a, b) FMULS F31, a, a

// FMAP is HMAP for float32 values: y[i] = OP(y[i], x[i], s).
#define FMAP(NAME, FRAME, ARGS, LOADX16, LOADX4, LOADX1, OP4, OP1) \
TEXT NAME(SB), NOSPLIT, FRAME; \
	ARGS;                   \
	VDUP  V31.S[0], V31.S4; \
by16:                       \
	CMP   $16, R3;          \
	BLT   by4;              \
	VLD1  (R0), [V0.S4, V1.S4, V2.S4, V3.S4]; \
	LOADX16;                \
	OP4(0, 4);              \
	OP4(1, 5);              \
	OP4(2, 6);              \
	OP4(3, 7);              \
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0); \
	SUB   $16, R3;          \
	B     by16;             \
by4:                        \
	CMP   $4, R3;           \
	BLT   by1;              \
	VLD1  (R0), [V0.S4];    \
	LOADX4;                 \
	OP4(0, 4);              \
	VST1.P [V0.S4], 16(R0); \
	SUB   $4, R3;           \
	B     by4;              \
by1:                        \
	CBZ   R3, done;         \
	FMOVS (R0), F0;         \
	LOADX1;                 \
	OP1(F0, F4);            \
	FMOVS.P F0, 4(R0);      \
	SUB   $1, R3;           \
	B     by1;              \
done:                       \
	RET

#define XLOADF16 VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
#define XLOADF4 VLD1.P 16(R1), [V4.S4]
#define XLOADF1 FMOVS.P 4(R1), F4

#define MADARGS \
	MOVD  y+0(FP), R0;  \
	MOVD  x+8(FP), R1;  \
	MOVD  n+16(FP), R3; \
	FMOVS s+24(FP), F31

#define SCALEARGS \
	MOVD  y+0(FP), R0; \
	MOVD  n+8(FP), R3; \
	FMOVS s+16(FP), F31

// func vecScaleNEON(y *float32, n int, s float32)
FMAP(·vecScaleNEON, $0-20, SCALEARGS, NOLOAD, NOLOAD, NOLOAD, SCALE4, SCALE1)

// func vecMadNEON(y, x *float32, n int, s float32)
FMAP(·vecMadNEON, $0-28, MADARGS, XLOADF16, XLOADF4, XLOADF1, MAD4, MAD1)

// func vecMadF16NEON(y, x *uint16, n int, s float32)
HMAP(·vecMadF16NEON, $0-28, MADARGS, XLOAD8, XLOAD4, XLOAD1, MAD4, MAD1)

// func vecScaleF16NEON(y *uint16, n int, s float32)
HMAP(·vecScaleF16NEON, $0-20, SCALEARGS, NOLOAD, NOLOAD, NOLOAD, SCALE4, SCALE1)

// func vecF16ToF32NEON(dst *float32, src *uint16, n int)
TEXT ·vecF16ToF32NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R3

cby8:
	CMP    $8, R3
	BLT    cby1
	VLD1.P 16(R1), [V0.H8]
	FCVTL4S(0, 1)
	FCVTL24S(0, 2)
	VST1.P [V1.S4, V2.S4], 32(R0)
	SUB    $8, R3
	B      cby8

cby1:
	CBZ     R3, cdone
	HALF1((R1), R4, F0)
	ADD     $2, R1
	FMOVS.P F0, 4(R0)
	SUB     $1, R3
	B       cby1

cdone:
	RET
