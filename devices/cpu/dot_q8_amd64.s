//go:build !purego

#include "dot_amd64.h"

// Weights in 32-element blocks against Q8_0 activations (34-byte blocks:
// fp16 d, int8 qs[32]). Each block's integer dot comes from
// maddubs(|x|, y*sign(x)) summed pairwise; blocks go two by two into the
// accumulator, as acc += p1*s1 + p0*s0, which keeps one add per pair on
// the dependency chain. Q80DOT1 and Q80DOT4 are the bodies of the single
// and four-column kernels for x blocks of XB bytes with an fp16 scale
// first, decoded by LOAD; SETUP loads what LOAD needs (a table in Y15).

#define NOSETUP

#define TABLE(t) VMOVDQU t<>(SB), Y15

#define Q80DOT1(SETUP, LOAD, XB) \
	MOVQ   n+0(FP), CX;  \
	MOVQ   x+8(FP), SI;   \
	MOVQ   y+16(FP), DI;  \
	VXORPS Y0, Y0, Y0;    \
	SETUP;                \
pair:                     \
	CMPQ CX, $2;          \
	JLT  one;             \
	LOAD(0, Y4, Y5);      \
	LOAD(XB, Y6, Y7);     \
	SCALE2(0, XB);        \
	PAIR(DI, Y0);         \
	ADDQ $(2*XB), SI;     \
	ADDQ $68, DI;         \
	SUBQ $2, CX;          \
	JMP  pair;            \
one:                      \
	CMPQ CX, $1;          \
	JLT  done;            \
	LOAD(0, Y4, Y5);      \
	ONE(DI, Y0);          \
done:                     \
	HSUM(Y0, X0, X1);     \
	VMOVSS X0, ret+24(FP); \
	VZEROUPPER;           \
	RET

#define Q80DOT4(SETUP, LOAD, XB) \
	MOVQ   n+0(FP), CX;   \
	MOVQ   x+8(FP), SI;    \
	MOVQ   y+16(FP), DX;   \
	MOVQ   0(DX), R8;      \
	MOVQ   8(DX), R9;      \
	MOVQ   16(DX), R10;    \
	MOVQ   24(DX), R11;    \
	VXORPS Y0, Y0, Y0;     \
	VXORPS Y1, Y1, Y1;     \
	VXORPS Y2, Y2, Y2;     \
	VXORPS Y3, Y3, Y3;     \
	SETUP;                 \
pair:                      \
	CMPQ CX, $2;           \
	JLT  one;              \
	LOAD(0, Y4, Y5);       \
	LOAD(XB, Y6, Y7);      \
	SCALES4(0, 0, 0);      \
	SCALES4(XB, 34, 16);   \
	PAIR4(0, R8, Y0);      \
	PAIR4(4, R9, Y1);      \
	PAIR4(8, R10, Y2);     \
	PAIR4(12, R11, Y3);    \
	ADDQ $(2*XB), SI;      \
	ADDQ $68, R8;          \
	ADDQ $68, R9;          \
	ADDQ $68, R10;         \
	ADDQ $68, R11;         \
	SUBQ $2, CX;           \
	JMP  pair;             \
one:                       \
	CMPQ CX, $1;           \
	JLT  done;             \
	LOAD(0, Y4, Y5);       \
	ONE(R8, Y0);           \
	ONE(R9, Y1);           \
	ONE(R10, Y2);          \
	ONE(R11, Y3);          \
done:                      \
	MOVQ out+24(FP), DX;   \
	HSUM(Y0, X0, X4);      \
	HSUM(Y1, X1, X4);      \
	HSUM(Y2, X2, X4);      \
	HSUM(Y3, X3, X4);      \
	VMOVSS X0, 0(DX);      \
	VMOVSS X1, 4(DX);      \
	VMOVSS X2, 8(DX);      \
	VMOVSS X3, 12(DX);     \
	VZEROUPPER;            \
	RET

// func dotQ8_0AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-28
	Q80DOT1(NOSETUP, LOADQ8_0, 34)

// func dotQ8_0x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ8_0x4AVX2(SB), NOSPLIT, $32-32
	Q80DOT4(NOSETUP, LOADQ8_0, 34)

// func dotQ4_0AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-28
	Q80DOT1(NOSETUP, LOADQ4_0, 18)

// func dotQ4_0x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_0x4AVX2(SB), NOSPLIT, $32-32
	Q80DOT4(NOSETUP, LOADQ4_0, 18)

// func dotQ5_0AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_0AVX2(SB), NOSPLIT, $0-28
	Q80DOT1(NOSETUP, LOADQ5_0, 22)

// func dotQ5_0x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ5_0x4AVX2(SB), NOSPLIT, $32-32
	Q80DOT4(NOSETUP, LOADQ5_0, 22)

// func dotIQ4_NLAVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotIQ4_NLAVX2(SB), NOSPLIT, $0-28
	Q80DOT1(TABLE(iq4nl), LOADIQ4NL, 18)

// func dotIQ4_NLx4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotIQ4_NLx4AVX2(SB), NOSPLIT, $32-32
	Q80DOT4(TABLE(iq4nl), LOADIQ4NL, 18)

// MXFP4 (E8M0 e, qs[16]) against Q8_0: the nibbles index the doubled E2M1
// levels, and the scale is 2^(e-128) (ggml_e8m0_to_fp32_half) times fp16(d)
// of y, made in AX: (e-1) << 23, or (e+1) << 21 for the subnormal e < 2.
#define E8M0HALF(mem) \
	MOVBLZX  mem, AX;    \
	LEAL     -1(AX), BX; \
	SHLL     $23, BX;    \
	LEAL     1(AX), DX;  \
	SHLL     $21, DX;    \
	CMPL     AX, $2;     \
	CMOVLCS  DX, BX;     \
	VMOVD    BX, X12

// func dotMXFP4AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotMXFP4AVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0
	TABLE(fp4)

mxloop:
	TESTQ        CX, CX
	JZ           mxdone
	NIBBLES(1(SI), Y4)
	VPSHUFB      Y4, Y15, Y4
	VPSIGNB      Y4, Y4, Y5
	E8M0HALF(0(SI))
	H1(0(DI), X13)
	VMULSS       X12, X13, X13
	VBROADCASTSS X13, Y11
	Q8DOT(Y4, Y5, 2(DI), Y8, Y9)
	VFMADD231PS  Y11, Y9, Y0
	ADDQ         $17, SI
	ADDQ         $34, DI
	DECQ         CX
	JMP          mxloop

mxdone:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET
