//go:build !purego

#include "dot_arm64.h"

// F32 weights against F32 activations in register tiles (gemm.go): three
// rows by four columns per step of four elements (seven loads for twelve
// FMAs), each row-column pair in an accumulator of its own (V0-V11, column
// c's rows in V(3c)..V(3c+2)). The 3x1 and 1x1 kernels for the tiles'
// edges run, for each pair, the same sequence (one FMA per four elements,
// in order, then HSUM4S), so a pair's bits do not depend on the tile it
// fell in. R0 counts the steps; x's rows are walked by R1-R3, the columns
// by R10-R13.

#define FROWS \
	MOVD steps+0(FP), R0;     \
	MOVD x+8(FP), R1;         \
	MOVD stride+16(FP), R4;   \
	ADD  R4, R1, R2;          \
	ADD  R4, R2, R3

#define FLOAD3 \
	VLD1.P 16(R1), [V28.S4]; \
	VLD1.P 16(R2), [V29.S4]; \
	VLD1.P 16(R3), [V30.S4]

// FCOL3 adds the step of the column at YP (loaded into Y) to the three
// rows' accumulators A0-A2.
#define FCOL3(YP, Y, A0, A1, A2) \
	VLD1.P 16(YP), [Y.S4];   \
	VFMLA  Y.S4, V28.S4, A0.S4; \
	VFMLA  Y.S4, V29.S4, A1.S4; \
	VFMLA  Y.S4, V30.S4, A2.S4

// FSTORE3 writes the sums of the accumulators a, b, c (numbers; FA-FC
// their scalar names) at 0, 4 and 8 of OUT.
#define FSTORE3(OUT, a, FA, b, FB, c, FC) \
	HSUM4S(a, a);     \
	FMOVS FA, 0(OUT); \
	HSUM4S(b, b);     \
	FMOVS FB, 4(OUT); \
	HSUM4S(c, c);     \
	FMOVS FC, 8(OUT)

#define VZERO(V) VEOR V.B16, V.B16, V.B16

// Repacked Q8_0, Q4_0 and IQ4_NL (eight rows interleaved,
// repack_layouts.go) against Q8_0 activations with their aux rows
// (float32 dy first). A block is decoded once into sixteen registers of
// signed bytes, V(2k) and V(2k+1) holding elements 4k..4k+3 of rows 0-3
// and of rows 4-7 (4 bytes a row, a row per int32 lane), so that they
// meet the activation bytes 4k..4k+3, lane k%4 of V26 (bytes 0-15) or V27
// (16-31), and each row's exact integer sum builds up in its own lane:
// Q8_0's chunks are that already; a Q4_0 or IQ4_NL chunk j holds elements
// 4j.. in its low nibbles and 16+4j.. in its high ones, which go to V(2j),
// V(2j+1) and V(8+2j), V(8+2j+1). The rows' scales are floats in V16 (rows
// 0-3) and V17 (4-7). Per column, acc += float(isum) * (d[r] * dy), four
// rows per FMA, in the same instructions whichever kernel (one or four
// columns, with or without dotprod: the integer sums are exact) computes
// it. Column c's accumulators are V(18+2c) and V(19+2c); V26-V31 are the
// column's scratch (and the decode's constants, set again for each block).

// SDOTE (dotprod, by element): each int32 lane of d gains the four
// products of its signed bytes of n with the four bytes of lane i of m.
#define SDOTE(m, i, n, d) WORD $(0x4F80E000 | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d))
// DUPE4S: every lane of d = lane i of n.
#define DUPE4S(n, i, d) WORD $(0x4E040400 | ((i)<<19) | ((n)<<5) | (d))

// The DECODE macros read the block at R1 (scales at 0, chunks from 16)
// into V0-V17 (R4 scratch).
#define XSCALES \
	VLD1 (R1), [V16.B16];   \
	FCVTL24S(16, 17);       \
	FCVTL4S(16, 16);        \
	ADD  $16, R1, R4

#define DECODEQ80 \
	XSCALES;                                          \
	VLD1.P 64(R4), [V0.B16, V1.B16, V2.B16, V3.B16];  \
	VLD1.P 64(R4), [V4.B16, V5.B16, V6.B16, V7.B16];  \
	VLD1.P 64(R4), [V8.B16, V9.B16, V10.B16, V11.B16]; \
	VLD1   (R4), [V12.B16, V13.B16, V14.B16, V15.B16]

// NIB splits the raw chunk half in V(lo) into its low nibbles (kept) and
// high ones (into V(hi)), both mapped by MAP.
#define NIB(LO, HI, MAP) \
	VUSHR $4, LO.B16, HI.B16;      \
	VAND  V30.B16, LO.B16, LO.B16; \
	MAP(LO);                       \
	MAP(HI)

// Q4_0's levels are the nibble minus 8 (V31); IQ4_NL's are its table
// (in V31).
#define MAPQ40(V) VSUB V31.B16, V.B16, V.B16
#define MAPIQ4(V) VTBL V.B16, [V31.B16], V.B16

#define DECODE4(SETUP, MAP) \
	XSCALES;                                         \
	VLD1.P 64(R4), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	VLD1   (R4), [V4.B16, V5.B16, V6.B16, V7.B16];   \
	VMOVI  $15, V30.B16;                             \
	SETUP;                                           \
	NIB(V0, V8, MAP);                                \
	NIB(V1, V9, MAP);                                \
	NIB(V2, V10, MAP);                               \
	NIB(V3, V11, MAP);                               \
	NIB(V4, V12, MAP);                               \
	NIB(V5, V13, MAP);                               \
	NIB(V6, V14, MAP);                               \
	NIB(V7, V15, MAP)

#define SETUPQ40 VMOVI $8, V31.B16
#define SETUPIQ4 \
	MOVD $·iq4nlNEON(SB), R5; \
	VLD1 (R5), [V31.B16]

#define DECODEQ40 DECODE4(SETUPQ40, MAPQ40)
#define DECODEIQ4 DECODE4(SETUPIQ4, MAPIQ4)

// YLOAD loads the column's block at YP (advanced) into V26, V27.
#define YLOAD(YP) \
	ADD  $2, YP, R4;                \
	VLD1 (R4), [V26.B16, V27.B16];  \
	ADD  $34, YP

// FACC adds the integer sums of rows in V(s) to V(acc), scaled by the
// rows' scales V(sc) times dy at AP (into V(t), named FT; t2 scratch).
#define FACC(AP, s, sc, acc, t, FT, t2) \
	SCVTF4S(s, s);        \
	FMOVS (AP), FT;       \
	FMULE(t, 0, sc, t2);  \
	FMLA4S(t2, s, acc)

// With dotprod: rows 0-3 into V28, rows 4-7 into V29.
#define SDOTCOL(YP, AP, A0, A1) \
	YLOAD(YP);                         \
	VZERO(V28);                        \
	VZERO(V29);                        \
	SDOTE(26, 0, 0, 28);               \
	SDOTE(26, 0, 1, 29);               \
	SDOTE(26, 1, 2, 28);               \
	SDOTE(26, 1, 3, 29);               \
	SDOTE(26, 2, 4, 28);               \
	SDOTE(26, 2, 5, 29);               \
	SDOTE(26, 3, 6, 28);               \
	SDOTE(26, 3, 7, 29);               \
	SDOTE(27, 0, 8, 28);               \
	SDOTE(27, 0, 9, 29);               \
	SDOTE(27, 1, 10, 28);              \
	SDOTE(27, 1, 11, 29);              \
	SDOTE(27, 2, 12, 28);              \
	SDOTE(27, 2, 13, 29);              \
	SDOTE(27, 3, 14, 28);              \
	SDOTE(27, 3, 15, 29);              \
	FACC(AP, 28, 16, A0, 26, F26, 27);      \
	FACC(AP, 29, 17, A1, 26, F26, 27);      \
	ADD   $8, AP

// Without dotprod, one half (h: 0 or 1) of the rows at a time: the four
// activation bytes broadcast (V28), multiplied by the chunk half in 16
// bits (SMULL2 into V29 first, rows 2-3 of the half, then SMULL over V28
// itself, rows 0-1; each product fits: |int8*int8| <= 2^14), added in
// pairs into int32 lanes (V30: rows 0-1, V31: rows 2-3), and the pairs
// of each row added last (ADDP).
#define NMUL(y, i, w) \
	DUPE4S(y, i, 28);      \
	SMULL28H(w, 28, 29);   \
	SMULL8H(w, 28, 28)

#define NCHUNK0(y, i, w) \
	NMUL(y, i, w);   \
	SADDLP4S(28, 30); \
	SADDLP4S(29, 31)

#define NCHUNK(y, i, w) \
	NMUL(y, i, w);    \
	SADALP4S(28, 30); \
	SADALP4S(29, 31)

#define NHALF(AP, h, sc, acc) \
	NCHUNK0(26, 0, 0+h);  \
	NCHUNK(26, 1, 2+h);   \
	NCHUNK(26, 2, 4+h);   \
	NCHUNK(26, 3, 6+h);   \
	NCHUNK(27, 0, 8+h);   \
	NCHUNK(27, 1, 10+h);  \
	NCHUNK(27, 2, 12+h);  \
	NCHUNK(27, 3, 14+h);  \
	ADDP4S(31, 30, 30);   \
	FACC(AP, 30, sc, acc, 28, F28, 29)

#define NEONCOL(YP, AP, A0, A1) \
	YLOAD(YP);               \
	NHALF(AP, 0, 16, A0);    \
	NHALF(AP, 1, 17, A1);    \
	ADD $8, AP

// X8ONE and X8FOUR are the bodies of the one- and four-column kernels
// (n int, x, y, aux, out: pointers, or for four columns pointers to four
// of them; X4ARGS, dot_arm64.h, loads the first three) over n x blocks of
// XB bytes decoded by DECODE, each column's block added by COL.
#define X8ONE(DECODE, COL, XB) \
	MOVD n+0(FP), R0;     \
	MOVD x+8(FP), R1;     \
	MOVD y+16(FP), R10;   \
	MOVD aux+24(FP), R14; \
	VZERO(V18);           \
	VZERO(V19);           \
one:                      \
	CBZ  R0, onedone;     \
	DECODE;               \
	COL(R10, R14, 18, 19); \
	ADD  $XB, R1;         \
	SUB  $1, R0;          \
	B    one;             \
onedone:                  \
	MOVD out+32(FP), R4;  \
	VST1 [V18.S4, V19.S4], (R4); \
	RET

#define X8FOUR(DECODE, COL, XB) \
	X4ARGS;                \
	MOVD aux+24(FP), R9;   \
	MOVD 0(R9), R14;       \
	MOVD 8(R9), R15;       \
	MOVD 16(R9), R19;      \
	MOVD 24(R9), R20;      \
	VZERO(V18);            \
	VZERO(V19);            \
	VZERO(V20);            \
	VZERO(V21);            \
	VZERO(V22);            \
	VZERO(V23);            \
	VZERO(V24);            \
	VZERO(V25);            \
four:                      \
	CBZ  R0, fourdone;     \
	DECODE;                \
	COL(R10, R14, 18, 19); \
	COL(R11, R15, 20, 21); \
	COL(R12, R19, 22, 23); \
	COL(R13, R20, 24, 25); \
	ADD  $XB, R1;          \
	SUB  $1, R0;           \
	B    four;             \
fourdone:                  \
	MOVD out+32(FP), R9;   \
	MOVD 0(R9), R4;        \
	VST1 [V18.S4, V19.S4], (R4); \
	MOVD 8(R9), R4;        \
	VST1 [V20.S4, V21.S4], (R4); \
	MOVD 16(R9), R4;       \
	VST1 [V22.S4, V23.S4], (R4); \
	MOVD 24(R9), R4;       \
	VST1 [V24.S4, V25.S4], (R4); \
	RET

// func gemmQ8_0x8x1NEON(n int, x, y, aux, out unsafe.Pointer)
TEXT ·gemmQ8_0x8x1NEON(SB), NOSPLIT, $0-40
	X8ONE(DECODEQ80, NEONCOL, 272)

// func gemmQ8_0x8x4NEON(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)
TEXT ·gemmQ8_0x8x4NEON(SB), NOSPLIT, $0-40
	X8FOUR(DECODEQ80, NEONCOL, 272)

// func gemmQ8_0x8x1SDOT(n int, x, y, aux, out unsafe.Pointer)
TEXT ·gemmQ8_0x8x1SDOT(SB), NOSPLIT, $0-40
	X8ONE(DECODEQ80, SDOTCOL, 272)

// func gemmQ8_0x8x4SDOT(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)
TEXT ·gemmQ8_0x8x4SDOT(SB), NOSPLIT, $0-40
	X8FOUR(DECODEQ80, SDOTCOL, 272)

// func gemmQ4_0x8x1NEON(n int, x, y, aux, out unsafe.Pointer)
TEXT ·gemmQ4_0x8x1NEON(SB), NOSPLIT, $0-40
	X8ONE(DECODEQ40, NEONCOL, 144)

// func gemmQ4_0x8x4NEON(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)
TEXT ·gemmQ4_0x8x4NEON(SB), NOSPLIT, $0-40
	X8FOUR(DECODEQ40, NEONCOL, 144)

// func gemmQ4_0x8x1SDOT(n int, x, y, aux, out unsafe.Pointer)
TEXT ·gemmQ4_0x8x1SDOT(SB), NOSPLIT, $0-40
	X8ONE(DECODEQ40, SDOTCOL, 144)

// func gemmQ4_0x8x4SDOT(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)
TEXT ·gemmQ4_0x8x4SDOT(SB), NOSPLIT, $0-40
	X8FOUR(DECODEQ40, SDOTCOL, 144)

// func gemmIQ4_NLx8x1NEON(n int, x, y, aux, out unsafe.Pointer)
TEXT ·gemmIQ4_NLx8x1NEON(SB), NOSPLIT, $0-40
	X8ONE(DECODEIQ4, NEONCOL, 144)

// func gemmIQ4_NLx8x4NEON(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)
TEXT ·gemmIQ4_NLx8x4NEON(SB), NOSPLIT, $0-40
	X8FOUR(DECODEIQ4, NEONCOL, 144)

// func gemmIQ4_NLx8x1SDOT(n int, x, y, aux, out unsafe.Pointer)
TEXT ·gemmIQ4_NLx8x1SDOT(SB), NOSPLIT, $0-40
	X8ONE(DECODEIQ4, SDOTCOL, 144)

// func gemmIQ4_NLx8x4SDOT(n int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)
TEXT ·gemmIQ4_NLx8x4SDOT(SB), NOSPLIT, $0-40
	X8FOUR(DECODEIQ4, SDOTCOL, 144)

// func gemmF32x3x4NEON(steps int, x unsafe.Pointer, stride uintptr, y, out *[4]unsafe.Pointer)
TEXT ·gemmF32x3x4NEON(SB), NOSPLIT, $0-40
	FROWS
	MOVD y+24(FP), R9
	MOVD 0(R9), R10
	MOVD 8(R9), R11
	MOVD 16(R9), R12
	MOVD 24(R9), R13
	VZERO(V0)
	VZERO(V1)
	VZERO(V2)
	VZERO(V3)
	VZERO(V4)
	VZERO(V5)
	VZERO(V6)
	VZERO(V7)
	VZERO(V8)
	VZERO(V9)
	VZERO(V10)
	VZERO(V11)

f34loop:
	CBZ R0, f34done
	FLOAD3
	FCOL3(R10, V24, V0, V1, V2)
	FCOL3(R11, V25, V3, V4, V5)
	FCOL3(R12, V26, V6, V7, V8)
	FCOL3(R13, V27, V9, V10, V11)
	SUB $1, R0
	B   f34loop

f34done:
	MOVD out+32(FP), R9
	MOVD 0(R9), R4
	FSTORE3(R4, 0, F0, 1, F1, 2, F2)
	MOVD 8(R9), R4
	FSTORE3(R4, 3, F3, 4, F4, 5, F5)
	MOVD 16(R9), R4
	FSTORE3(R4, 6, F6, 7, F7, 8, F8)
	MOVD 24(R9), R4
	FSTORE3(R4, 9, F9, 10, F10, 11, F11)
	RET

// func gemmF32x3x1NEON(steps int, x unsafe.Pointer, stride uintptr, y, out unsafe.Pointer)
TEXT ·gemmF32x3x1NEON(SB), NOSPLIT, $0-40
	FROWS
	MOVD y+24(FP), R10
	VZERO(V0)
	VZERO(V1)
	VZERO(V2)

f31loop:
	CBZ R0, f31done
	FLOAD3
	FCOL3(R10, V24, V0, V1, V2)
	SUB $1, R0
	B   f31loop

f31done:
	MOVD out+32(FP), R4
	FSTORE3(R4, 0, F0, 1, F1, 2, F2)
	RET

// func gemmF32x1x1NEON(steps int, x, y, out unsafe.Pointer)
TEXT ·gemmF32x1x1NEON(SB), NOSPLIT, $0-32
	MOVD steps+0(FP), R0
	MOVD x+8(FP), R1
	MOVD y+16(FP), R10
	VZERO(V0)

f11loop:
	CBZ    R0, f11done
	VLD1.P 16(R1), [V28.S4]
	VLD1.P 16(R10), [V24.S4]
	VFMLA  V24.S4, V28.S4, V0.S4
	SUB    $1, R0
	B      f11loop

f11done:
	MOVD  out+24(FP), R4
	HSUM4S(0, 0)
	FMOVS F0, 0(R4)
	RET

// The interleave of x8Layout (repack_layouts.go) for the products'
// on-the-fly packing: in each block, the eight rows' fp16 scales go to
// 2r, and each run of four quant words (16 bytes from byte 2 of a row)
// becomes four 32-byte chunks, word w of row r at 32w+4r: two 4x4 word
// transposes (rows 0-3 and 4-7; TRN1/TRN2 on words, then on doublewords).
#define TRN14S(m, n, d) ENC3(0x4E802800, m, n, d)
#define TRN24S(m, n, d) ENC3(0x4E806800, m, n, d)
#define TRN12D(m, n, d) ENC3(0x4EC02800, m, n, d)
#define TRN22D(m, n, d) ENC3(0x4EC06800, m, n, d)

// XP4 transposes the words of V(a)..V(a+3) into V(o), V(o+2), V(o+4),
// V(o+6), using V(t)..V(t+3).
#define XP4(a, t, o) \
	TRN14S(a+1, a, t);         \
	TRN24S(a+1, a, t+1);       \
	TRN14S(a+3, a+2, t+2);     \
	TRN24S(a+3, a+2, t+3);     \
	TRN12D(t+2, t, o);         \
	TRN12D(t+3, t+1, o+2);     \
	TRN22D(t+2, t, o+4);       \
	TRN22D(t+3, t+1, o+6)

// XHDR copies row ROW's scale to off(R0).
#define XHDR(ROW, off) \
	MOVHU (ROW), R6; \
	MOVH  R6, off(R0)

// XROW loads row ROW's run at R9 into V.
#define XROW(ROW, V) \
	ADD  R9, ROW, R6; \
	VLD1 (R6), [V.B16]

// func xposeX8NEON(dst, src unsafe.Pointer, rs uintptr, nb, blockBytes int)
TEXT ·xposeX8NEON(SB), NOSPLIT, $0-40
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD rs+16(FP), R2
	MOVD nb+24(FP), R3
	MOVD blockBytes+32(FP), R4
	ADD  R2, R1, R10
	ADD  R2, R10, R11
	ADD  R2, R11, R12
	ADD  R2, R12, R13
	ADD  R2, R13, R14
	ADD  R2, R14, R15
	ADD  R2, R15, R19
	SUB  $2, R4, R5
	LSR  $4, R5, R5
	LSL  $3, R4, R20

xblock:
	CBZ R3, xdone
	XHDR(R1, 0)
	XHDR(R10, 2)
	XHDR(R11, 4)
	XHDR(R12, 6)
	XHDR(R13, 8)
	XHDR(R14, 10)
	XHDR(R15, 12)
	XHDR(R19, 14)
	ADD  $16, R0, R7
	MOVD R5, R8
	MOVD $2, R9

xrun:
	CBZ R8, xnext
	XROW(R1, V0)
	XROW(R10, V1)
	XROW(R11, V2)
	XROW(R12, V3)
	XROW(R13, V4)
	XROW(R14, V5)
	XROW(R15, V6)
	XROW(R19, V7)
	XP4(0, 8, 16)
	XP4(4, 12, 17)
	VST1.P [V16.B16, V17.B16, V18.B16, V19.B16], 64(R7)
	VST1.P [V20.B16, V21.B16, V22.B16, V23.B16], 64(R7)
	ADD    $16, R9
	SUB    $1, R8
	B      xrun

xnext:
	ADD R4, R1
	ADD R4, R10
	ADD R4, R11
	ADD R4, R12
	ADD R4, R13
	ADD R4, R14
	ADD R4, R15
	ADD R4, R19
	ADD R20, R0
	SUB $1, R3
	B   xblock

xdone:
	RET
