//go:build !purego

#include "dot_amd64.h"

// Weights in 32-element blocks against Q8_0 activations (34-byte blocks:
// fp16 d, int8 qs[32]). Each block's integer dot comes from
// maddubs(|x|, y*sign(x)) summed pairwise; each block goes into the
// accumulator as acc += p*s, in order (PAIR), as in ggml's AVX2 build.
// Q80DOT1 and Q80DOT4 are the bodies of the single
// and four-column kernels for x blocks of XB bytes with an fp16 scale
// first, decoded by LOAD; SETUP loads what LOAD needs (a table in Y15).

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

// SCALESP writes at sb(SP) the four products of the fp16 d of the x block
// at xo(SI) with the four column scales (floats) at dyo(R12), using AX,
// X12, X13.
#define SCALESP(xo, dyo, sb) \
	MOVWLZX      xo(SI), AX;        \
	VMOVD        AX, X13;           \
	VCVTPH2PS    X13, X13;          \
	VBROADCASTSS X13, X13;          \
	VMULPS       dyo(R12), X13, X12; \
	VMOVUPS      X12, sb(SP)

// ONEP is ONE for column c of the four-column kernel, its scale at c4(SP).
#define ONEP(c4, YP, ACC) \
	VBROADCASTSS c4(SP), Y11;     \
	Q8DOT(Y4, Y5, 2(YP), Y8, Y9); \
	VFMADD231PS  Y11, Y9, ACC

// Q80DOT4 is the body of the four-column kernel over rows rows of x: it
// first converts the four columns' block scales to floats in dy (four per
// block), then runs each row as the single-column kernel runs one column.
// Registers: DX the y array, DI the row, BX the rows left, R12 the scales,
// R13 the output.
// X4CONV writes 16 bytes at dy for each block of the four columns (YB
// bytes a block), made by GATHER from the blocks at R8..R11; the kernel
// goes on at rows.
#define X4CONV(GATHER, YB) \
	MOVQ    y+32(FP), DX;   \
	YCOLS4;                 \
	MOVQ    n+0(FP), CX;    \
	MOVQ    dy+40(FP), R12; \
conv:                       \
	TESTQ   CX, CX;         \
	JZ      rows;           \
	GATHER;                 \
	ADDQ    $YB, R8;        \
	ADDQ    $YB, R9;        \
	ADDQ    $YB, R10;       \
	ADDQ    $YB, R11;       \
	ADDQ    $16, R12;       \
	DECQ    CX;             \
	JMP     conv

// Q80GATHER converts the four columns' block scales to floats.
#define Q80GATHER \
	MOVWLZX   0(R8), AX;            \
	VMOVD     AX, X12;              \
	VPINSRW   $1, 0(R9), X12, X12;  \
	VPINSRW   $2, 0(R10), X12, X12; \
	VPINSRW   $3, 0(R11), X12, X12; \
	VCVTPH2PS X12, X12;             \
	VMOVUPS   X12, 0(R12)

// Q81GATHER copies the four columns' block d and s (halves).
#define Q81GATHER \
	VMOVD   0(R8), X12;           \
	VPINSRD $1, 0(R9), X12, X12;  \
	VPINSRD $2, 0(R10), X12, X12; \
	VPINSRD $3, 0(R11), X12, X12; \
	VMOVDQU X12, 0(R12)

#define Q80DOT4(SETUP, LOAD, XB) \
	X4CONV(Q80GATHER, 34);        \
	X4ROWS;                       \
	SETUP;                        \
pair:                             \
	CMPQ    CX, $2;               \
	JLT     one;                  \
	LOAD(0, Y4, Y5);              \
	LOAD(XB, Y6, Y7);             \
	SCALESP(0, 0, 0);             \
	SCALESP(XB, 16, 16);          \
	PAIR4(0, R8, Y0);             \
	PAIR4(4, R9, Y1);             \
	PAIR4(8, R10, Y2);            \
	PAIR4(12, R11, Y3);           \
	ADDQ    $(2*XB), SI;          \
	ADDQ    $68, R8;              \
	ADDQ    $68, R9;              \
	ADDQ    $68, R10;             \
	ADDQ    $68, R11;             \
	ADDQ    $32, R12;             \
	SUBQ    $2, CX;               \
	JMP     pair;                 \
one:                              \
	CMPQ    CX, $1;               \
	JLT     rowend;               \
	LOAD(0, Y4, Y5);              \
	SCALESP(0, 0, 0);             \
	ONEP(0, R8, Y0);              \
	ONEP(4, R9, Y1);              \
	ONEP(8, R10, Y2);             \
	ONEP(12, R11, Y3);            \
rowend:                           \
	HSUM4;                        \
	X4ROWEND

// Q4_1 and Q5_1 (fp16 d, fp16 m, [qh[4]], qs[16]) against Q8_1 (fp16 d,
// fp16 s = d * sum of the quants, qs[32]): the unsigned levels meet the
// quants in maddubs directly, scaled by d*dy into the vector accumulator,
// and m*s goes into a scalar one, block by block. Q81DOT1 and Q81DOT4 are
// the kernel bodies for x blocks of XB bytes decoded by LOAD(off, XS).

#define LOADQ4_1(off, XS) NIBBLES(off+4(SI), XS)

// LOADQ5_1K is LOADQ5_1 with the fifth bits as an AVX512BW mask.
#define LOADQ5_1K(off, XS) \
	NIBBLES(off+8(SI), XS);   \
	KMOVD  off+4(SI), K1;     \
	VPADDB hi10<>(SB), XS, K1, XS

#define LOADQ5_1(off, XS) \
	NIBBLES(off+8(SI), XS);       \
	FIFTHBITS(off+4(SI));         \
	VPAND hi10<>(SB), Y14, Y14;   \
	VPOR  Y14, XS, XS

// Q81SCALE puts d*dy in every lane of Y11 and adds m*s to the low lane of
// MS, for the x block at 0(SI) and the y block at 0(YP), using X12, X13.
#define Q81SCALE(YP, MS) \
	VMOVD        0(SI), X12;          \
	VPINSRD      $1, 0(YP), X12, X12; \
	VCVTPH2PS    X12, X12;            \
	VMOVHLPS     X12, X13, X13;       \
	VMULPS       X13, X12, X12;       \
	VBROADCASTSS X12, Y11;            \
	VMOVSHDUP    X12, X13;            \
	VADDSS       X13, MS, MS

// Q81COL adds column YP's block to ACC and MS, x's levels in Y4.
#define Q81COL(YP, ACC, MS) \
	Q81SCALE(YP, MS);                \
	VPMADDUBSW  4(YP), Y4, Y9;       \
	VPMADDWD    ones16<>(SB), Y9, Y9; \
	VCVTDQ2PS   Y9, Y9;              \
	VFMADD231PS Y11, Y9, ACC

#define Q81DOT1(LOAD, XB) \
	MOVQ   n+0(FP), CX;   \
	MOVQ   x+8(FP), SI;   \
	MOVQ   y+16(FP), DI;  \
	VXORPS Y0, Y0, Y0;    \
	VXORPS X10, X10, X10; \
loop:                     \
	TESTQ CX, CX;         \
	JZ    done;           \
	LOAD(0, Y4);          \
	Q81COL(DI, Y0, X10);  \
	ADDQ  $XB, SI;        \
	ADDQ  $36, DI;        \
	DECQ  CX;             \
	JMP   loop;           \
done:                     \
	HSUM(Y0, X0, X1);     \
	VADDSS X10, X0, X0;   \
	VMOVSS X0, ret+24(FP); \
	VZEROUPPER;           \
	RET

// Q81DOT4 is the body of the four-column kernels over nrows rows of x,
// stride bytes apart (out[4r+c] row r's dot with column c). It first
// gathers the four columns' block d and s (halves) into dy, 16 bytes per
// block; then each block of a row takes one conversion of those, one of
// its own d and m (broadcast as pairs), and one multiplication for all
// eight products: lane 2c is d*dy of column c, lane 2c+1 m*s, which adds
// into lane 2c+1 of Y5 as Q81SCALE adds it into its scalar sum. Every
// column runs Q81DOT1's float sequence. Registers: DX the y array, R8..R11
// the columns, R12 the gathered scales, DI the row, BX the rows left, R13
// the output; 0(SP) the block's eight products.
#define Q81DOT4(LOAD, XB, IDOT) \
	X4CONV(Q81GATHER, 36);        \
	X4ROWS;                       \
	VXORPS  Y5, Y5, Y5;           \
loop:                             \
	TESTQ   CX, CX;               \
	JZ      rowend;               \
	LOAD(0, Y4);                  \
	VMOVD        0(SI), X12;      \
	VCVTPH2PS    X12, X12;        \
	VPBROADCASTQ X12, Y12;        \
	VCVTPH2PS    0(R12), Y10;     \
	VMULPS       Y10, Y12, Y12;   \
	VADDPS       Y12, Y5, Y5;     \
	VMOVUPS      Y12, 0(SP);      \
	Q81C4(0, R8, Y0, IDOT);       \
	Q81C4(8, R9, Y1, IDOT);       \
	Q81C4(16, R10, Y2, IDOT);     \
	Q81C4(24, R11, Y3, IDOT);     \
	ADDQ    $XB, SI;              \
	ADDQ    $36, R8;              \
	ADDQ    $36, R9;              \
	ADDQ    $36, R10;             \
	ADDQ    $36, R11;             \
	ADDQ    $16, R12;             \
	DECQ    CX;                   \
	JMP     loop;                 \
rowend:                           \
	HSUM4MS;                      \
	X4ROWEND

// Q81C4 adds column YP's block to ACC (Q81COL's fused multiply-add), its
// d*dy at so(SP), x's levels in Y4, the integers from IDOT.
#define Q81C4(so, YP, ACC, IDOT) \
	VBROADCASTSS so(SP), Y11; \
	IDOT(4(YP), Y4, Y9);      \
	VCVTDQ2PS    Y9, Y9;      \
	VFMADD231PS  Y11, Y9, ACC

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

// func dotQ8_0AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-28
	Q80DOT1(NOSETUP, LOADQ8_0, 34)

// func dotQ8_0x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)
TEXT ·dotQ8_0x4AVX2(SB), NOSPLIT, $32-56
	Q80DOT4(NOSETUP, LOADQ8_0, 34)

// func dotQ4_0AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-28
	Q80DOT1(NOSETUP, LOADQ4_0, 18)

// func dotQ4_0x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)
TEXT ·dotQ4_0x4AVX2(SB), NOSPLIT, $32-56
	Q80DOT4(NOSETUP, LOADQ4_0, 18)

// func dotQ5_0AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_0AVX2(SB), NOSPLIT, $0-28
	Q80DOT1(NOSETUP, LOADQ5_0, 22)

// func dotQ5_0x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)
TEXT ·dotQ5_0x4AVX2(SB), NOSPLIT, $32-56
	Q80DOT4(NOSETUP, LOADQ5_0, 22)

// func dotIQ4_NLAVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotIQ4_NLAVX2(SB), NOSPLIT, $0-28
	Q80DOT1(TABLE(iq4nl), LOADIQ4NL, 18)

// func dotIQ4_NLx4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)
TEXT ·dotIQ4_NLx4AVX2(SB), NOSPLIT, $32-56
	Q80DOT4(TABLE(iq4nl), LOADIQ4NL, 18)

// func dotQ4_1AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_1AVX2(SB), NOSPLIT, $0-28
	Q81DOT1(LOADQ4_1, 20)

// func dotQ4_1x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)
TEXT ·dotQ4_1x4AVX2(SB), NOSPLIT, $32-56
	Q81DOT4(LOADQ4_1, 20, IDOTW)

// func dotQ5_1AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_1AVX2(SB), NOSPLIT, $0-28
	Q81DOT1(LOADQ5_1, 24)

// func dotQ5_1x4AVX2(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)
TEXT ·dotQ5_1x4AVX2(SB), NOSPLIT, $32-56
	Q81DOT4(LOADQ5_1, 24, IDOTW)

// The avx512vnni level's four-column kernels: the AVX2 ones with VPDPBUSD.

// func dotQ4_1x4VNNI(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)
TEXT ·dotQ4_1x4VNNI(SB), NOSPLIT, $32-56
	Q81DOT4(LOADQ4_1, 20, IDOTV)

// func dotQ5_1x4VNNI(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)
TEXT ·dotQ5_1x4VNNI(SB), NOSPLIT, $32-56
	Q81DOT4(LOADQ5_1K, 24, IDOTV)

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
