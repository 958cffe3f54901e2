// Constants and macros shared by the dot_*_amd64.s kernels.

#include "textflag.h"

// AVX2 + FMA + F16C dot products (traits_amd64.go declares them and says
// what each computes). Every *x4 kernel runs, for each of its four columns,
// exactly the instruction sequence of its single-column twin, so a column's
// result is bit for bit the same whichever kernel computed it.

DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

DATA nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nib<>(SB), RODATA|NOPTR, $32

DATA eight<>+0(SB)/8, $0x0808080808080808
DATA eight<>+8(SB)/8, $0x0808080808080808
DATA eight<>+16(SB)/8, $0x0808080808080808
DATA eight<>+24(SB)/8, $0x0808080808080808
GLOBL eight<>(SB), RODATA|NOPTR, $32

DATA hi2<>+0(SB)/8, $0x3030303030303030
DATA hi2<>+8(SB)/8, $0x3030303030303030
DATA hi2<>+16(SB)/8, $0x3030303030303030
DATA hi2<>+24(SB)/8, $0x3030303030303030
GLOBL hi2<>(SB), RODATA|NOPTR, $32

// bitshuf, bitsel and allset expand 32 bits into 32 bytes (FIFTHBITS);
// hif0 is 0xf0 in every byte.
DATA bitshuf<>+0(SB)/8, $0x0000000000000000
DATA bitshuf<>+8(SB)/8, $0x0101010101010101
DATA bitshuf<>+16(SB)/8, $0x0202020202020202
DATA bitshuf<>+24(SB)/8, $0x0303030303030303
GLOBL bitshuf<>(SB), RODATA|NOPTR, $32

DATA bitsel<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitsel<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitsel<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitsel<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL bitsel<>(SB), RODATA|NOPTR, $32

DATA allset<>+0(SB)/8, $0xffffffffffffffff
DATA allset<>+8(SB)/8, $0xffffffffffffffff
DATA allset<>+16(SB)/8, $0xffffffffffffffff
DATA allset<>+24(SB)/8, $0xffffffffffffffff
GLOBL allset<>(SB), RODATA|NOPTR, $32

DATA hif0<>+0(SB)/8, $0xf0f0f0f0f0f0f0f0
DATA hif0<>+8(SB)/8, $0xf0f0f0f0f0f0f0f0
DATA hif0<>+16(SB)/8, $0xf0f0f0f0f0f0f0f0
DATA hif0<>+24(SB)/8, $0xf0f0f0f0f0f0f0f0
GLOBL hif0<>(SB), RODATA|NOPTR, $32

DATA hi10<>+0(SB)/8, $0x1010101010101010
DATA hi10<>+8(SB)/8, $0x1010101010101010
DATA hi10<>+16(SB)/8, $0x1010101010101010
DATA hi10<>+24(SB)/8, $0x1010101010101010
GLOBL hi10<>(SB), RODATA|NOPTR, $32

DATA three<>+0(SB)/8, $0x0303030303030303
DATA three<>+8(SB)/8, $0x0303030303030303
DATA three<>+16(SB)/8, $0x0303030303030303
DATA three<>+24(SB)/8, $0x0303030303030303
GLOBL three<>(SB), RODATA|NOPTR, $32

DATA four<>+0(SB)/8, $0x0404040404040404
DATA four<>+8(SB)/8, $0x0404040404040404
DATA four<>+16(SB)/8, $0x0404040404040404
DATA four<>+24(SB)/8, $0x0404040404040404
GLOBL four<>(SB), RODATA|NOPTR, $32

DATA thirty2<>+0(SB)/8, $0x2020202020202020
DATA thirty2<>+8(SB)/8, $0x2020202020202020
GLOBL thirty2<>(SB), RODATA|NOPTR, $16

DATA q4kshufa<>+0(SB)/8, $0x0b0a090803020100
DATA q4kshufa<>+8(SB)/8, $0x0b0a090807060504
GLOBL q4kshufa<>(SB), RODATA|NOPTR, $16

DATA q4kshufb<>+0(SB)/8, $0x0302010080808080
DATA q4kshufb<>+8(SB)/8, $0x0706050480808080
GLOBL q4kshufb<>(SB), RODATA|NOPTR, $16

DATA q4kmask1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4kmask1<>+8(SB)/8, $0x000000003f3f3f3f
GLOBL q4kmask1<>(SB), RODATA|NOPTR, $16

DATA q4kmask2<>+0(SB)/8, $0x0000000000000000
DATA q4kmask2<>+8(SB)/8, $0x0f0f0f0f00000000
GLOBL q4kmask2<>(SB), RODATA|NOPTR, $16

DATA q4kmask3<>+0(SB)/8, $0x3030303000000000
DATA q4kmask3<>+8(SB)/8, $0x3030303000000000
GLOBL q4kmask3<>(SB), RODATA|NOPTR, $16

// iq4nl and fp4 are the IQ4_NL and MXFP4 levels (quant's kvaluesIQ4NL and
// kvaluesFP4) in both lanes, for VPSHUFB.
DATA iq4nl<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iq4nl<>+8(SB)/8, $0x7159453526190d01
DATA iq4nl<>+16(SB)/8, $0xf6eaddcfbfad9881
DATA iq4nl<>+24(SB)/8, $0x7159453526190d01
GLOBL iq4nl<>(SB), RODATA|NOPTR, $32

DATA fp4<>+0(SB)/8, $0x0c08060403020100
DATA fp4<>+8(SB)/8, $0xf4f8fafcfdfeff00
DATA fp4<>+16(SB)/8, $0x0c08060403020100
DATA fp4<>+24(SB)/8, $0xf4f8fafcfdfeff00
GLOBL fp4<>(SB), RODATA|NOPTR, $32

// k4shuf+32j(SB) broadcasts word j of each 128-bit lane (VPSHUFB).
DATA k4shuf<>+0(SB)/8, $0x0100010001000100
DATA k4shuf<>+8(SB)/8, $0x0100010001000100
DATA k4shuf<>+16(SB)/8, $0x0100010001000100
DATA k4shuf<>+24(SB)/8, $0x0100010001000100
DATA k4shuf<>+32(SB)/8, $0x0302030203020302
DATA k4shuf<>+40(SB)/8, $0x0302030203020302
DATA k4shuf<>+48(SB)/8, $0x0302030203020302
DATA k4shuf<>+56(SB)/8, $0x0302030203020302
DATA k4shuf<>+64(SB)/8, $0x0504050405040504
DATA k4shuf<>+72(SB)/8, $0x0504050405040504
DATA k4shuf<>+80(SB)/8, $0x0504050405040504
DATA k4shuf<>+88(SB)/8, $0x0504050405040504
DATA k4shuf<>+96(SB)/8, $0x0706070607060706
DATA k4shuf<>+104(SB)/8, $0x0706070607060706
DATA k4shuf<>+112(SB)/8, $0x0706070607060706
DATA k4shuf<>+120(SB)/8, $0x0706070607060706
DATA k4shuf<>+128(SB)/8, $0x0908090809080908
DATA k4shuf<>+136(SB)/8, $0x0908090809080908
DATA k4shuf<>+144(SB)/8, $0x0908090809080908
DATA k4shuf<>+152(SB)/8, $0x0908090809080908
DATA k4shuf<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k4shuf<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k4shuf<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k4shuf<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k4shuf<>(SB), RODATA|NOPTR, $256

// q4kpairs and q4kmins (VPSHUFB) make, from four scales then four
// minimums (bytes) in each lane, the words scale 0, 0, 1, 1, 2, 2, 3, 3
// and minimum 0, 0, 1, 1, 2, 2, 3, 3 (Q4KRSCALES).
DATA q4kpairs<>+0(SB)/8, $0x8001800180008000
DATA q4kpairs<>+8(SB)/8, $0x8003800380028002
DATA q4kpairs<>+16(SB)/8, $0x8001800180008000
DATA q4kpairs<>+24(SB)/8, $0x8003800380028002
GLOBL q4kpairs<>(SB), RODATA|NOPTR, $32

DATA q4kmins<>+0(SB)/8, $0x8005800580048004
DATA q4kmins<>+8(SB)/8, $0x8007800780068006
DATA q4kmins<>+16(SB)/8, $0x8005800580048004
DATA q4kmins<>+24(SB)/8, $0x8007800780068006
GLOBL q4kmins<>(SB), RODATA|NOPTR, $32

// q6shuf+16i(SB) makes, from 16 bytes, byte 2i eight times then byte 2i+1
// eight times (VPSHUFB).
DATA q6shuf<>+0(SB)/8, $0x0000000000000000
DATA q6shuf<>+8(SB)/8, $0x0101010101010101
DATA q6shuf<>+16(SB)/8, $0x0202020202020202
DATA q6shuf<>+24(SB)/8, $0x0303030303030303
DATA q6shuf<>+32(SB)/8, $0x0404040404040404
DATA q6shuf<>+40(SB)/8, $0x0505050505050505
DATA q6shuf<>+48(SB)/8, $0x0606060606060606
DATA q6shuf<>+56(SB)/8, $0x0707070707070707
DATA q6shuf<>+64(SB)/8, $0x0808080808080808
DATA q6shuf<>+72(SB)/8, $0x0909090909090909
DATA q6shuf<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA q6shuf<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA q6shuf<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA q6shuf<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA q6shuf<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA q6shuf<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q6shuf<>(SB), RODATA|NOPTR, $128

// q6wshuf+32i(SB) makes, from eight words in each lane, word 2i eight
// times in the low lane and word 2i+1 eight times in the high one
// (VPSHUFB): one step's scale pair from the scales as words.
DATA q6wshuf<>+0(SB)/8, $0x0100010001000100
DATA q6wshuf<>+8(SB)/8, $0x0100010001000100
DATA q6wshuf<>+16(SB)/8, $0x0302030203020302
DATA q6wshuf<>+24(SB)/8, $0x0302030203020302
DATA q6wshuf<>+32(SB)/8, $0x0504050405040504
DATA q6wshuf<>+40(SB)/8, $0x0504050405040504
DATA q6wshuf<>+48(SB)/8, $0x0706070607060706
DATA q6wshuf<>+56(SB)/8, $0x0706070607060706
DATA q6wshuf<>+64(SB)/8, $0x0908090809080908
DATA q6wshuf<>+72(SB)/8, $0x0908090809080908
DATA q6wshuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6wshuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6wshuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6wshuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6wshuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q6wshuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q6wshuf<>(SB), RODATA|NOPTR, $128

// YCOLS4 points R8..R11 at the four columns whose pointers are at 0(DX);
// CLEAR4 clears their accumulators Y0..Y3; Q8KNEXT4 moves the four Q8_K
// columns on by a block.
#define YCOLS4 \
	MOVQ 0(DX), R8;   \
	MOVQ 8(DX), R9;   \
	MOVQ 16(DX), R10; \
	MOVQ 24(DX), R11

#define CLEAR4 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

#define Q8KNEXT4 \
	ADDQ $292, R8;  \
	ADDQ $292, R9;  \
	ADDQ $292, R10; \
	ADDQ $292, R11

// HSUM leaves in the low lane of X the sum of Y's eight lanes, in a fixed
// order, using T.
#define HSUM(Y, X, T) \
	VEXTRACTF128 $1, Y, T; \
	VADDPS       T, X, X;  \
	VMOVHLPS     X, T, T;  \
	VADDPS       T, X, X;  \
	VMOVSHDUP    X, T;     \
	VADDSS       T, X, X

// ---------------------------------------------------------------------------
// Q8_0 and Q4_0 weights against Q8_0 activations (34-byte blocks: fp16 d,
// int8 qs[32]). Each block's integer dot comes from maddubs(|x|, y*sign(x))
// summed pairwise; each block goes into the accumulator as acc += p*s, in
// order, as in ggml's AVX2 build (blocks are decoded two at a time).

// SCALE puts fp16(xd) * fp16(yd) in every lane of SY (SX is its low lane),
// using AX, BX and T.
#define SCALE(xd, yd, T, SX, SY) \
	MOVWLZX      xd, AX;     \
	MOVWLZX      yd, BX;     \
	SHLL         $16, BX;    \
	ORL          BX, AX;     \
	VMOVD        AX, SX;     \
	VCVTPH2PS    SX, SX;     \
	VMOVSHDUP    SX, T;      \
	VMULSS       T, SX, SX;  \
	VBROADCASTSS SX, SY

// Q8DOT: P = the eight int32 pair sums of x·y as floats, for x's block in
// XS (signed) and XA (|x|), y's 32 quants at ymem; T is a temporary.
#define Q8DOT(XS, XA, ymem, T, P) \
	VMOVDQU    ymem, T;              \
	VPSIGNB    XS, T, T;             \
	VPMADDUBSW T, XA, P;             \
	VPMADDWD   ones16<>(SB), P, P;   \
	VCVTDQ2PS  P, P

// IDOTW and IDOTV set P to the eight int32 sums of four products of the
// unsigned bytes in XU with the signed bytes at ymem: maddubs and a
// pairwise sum (AVX2; no pair of any kernel here reaches the int16 limit),
// or one VPDPBUSD (AVX512-VNNI with VL, the avx512vnni level): the same
// integers, so a kernel gives the same bits with either.
#define IDOTW(ymem, XU, P) \
	VPMADDUBSW ymem, XU, P;            \
	VPMADDWD   ones16<>(SB), P, P

#define IDOTV(ymem, XU, P) \
	VPXOR    P, P, P;     \
	VPDPBUSD ymem, XU, P

// Q8DOTI is Q8DOT with the integer step IDOT.
#define Q8DOTI(XS, XA, ymem, T, P, IDOT) \
	VMOVDQU    ymem, T;   \
	VPSIGNB    XS, T, T;  \
	IDOT(T, XA, P);       \
	VCVTDQ2PS  P, P

// The LOAD* macros decode the x block at off(SI) into its 32 signed
// values XS and their magnitudes XA (for the sign trick); they may use
// X13, X14 (Y13, Y14) and read a lookup table from Y15.
#define LOADQ8_0(off, XS, XA) \
	VMOVDQU off+2(SI), XS; \
	VPSIGNB XS, XS, XA

// NIBBLES puts the 32 nibbles of the 16 bytes at mem in XS: the low ones
// (elements 0-15) in the low lane, the high ones in the high lane.
#define NIBBLES(mem, XS) \
	VMOVDQU     mem, X13;          \
	VPSRLW      $4, X13, X14;      \
	VINSERTI128 $1, X14, Y13, XS;  \
	VPAND       nib<>(SB), XS, XS

#define LOADQ4_0(off, XS, XA) \
	NIBBLES(off+2(SI), XS);          \
	VPSUBB      eight<>(SB), XS, XS; \
	VPSIGNB     XS, XS, XA

// FIFTHBITS puts in Y14 0xff for each of the 32 elements whose bit is set
// in the 32-bit mask at mem (bit j for element j).
#define FIFTHBITS(mem) \
	VPBROADCASTD mem, Y14;              \
	VPSHUFB      bitshuf<>(SB), Y14, Y14; \
	VPOR         bitsel<>(SB), Y14, Y14;  \
	VPCMPEQB     allset<>(SB), Y14, Y14

// Q5_0 (fp16 d, qh[4], qs[16]): nibble + 16*bit - 16, that is the nibble
// with 0xf0 or'ed in where the bit is clear.
#define LOADQ5_0(off, XS, XA) \
	NIBBLES(off+6(SI), XS);         \
	FIFTHBITS(off+2(SI));           \
	VPANDN  hif0<>(SB), Y14, Y14;   \
	VPOR    Y14, XS, XS;            \
	VPSIGNB XS, XS, XA

// A kernel's SETUP step: nothing, or a lookup table into Y15.
#define NOSETUP

#define TABLE(t) VMOVDQU t<>(SB), Y15

// IQ4_NL (fp16 d, qs[16]): the nibbles index the table in Y15.
#define LOADIQ4NL(off, XS, XA) \
	NIBBLES(off+2(SI), XS); \
	VPSHUFB XS, Y15, XS;    \
	VPSIGNB XS, XS, XA

// SCALE2 puts fp16(d) * fp16(d) of the x block at xo0(SI) and the y block
// at 0(DI) in every lane of Y11, and of xo1(SI) and 34(DI) in Y12 (the
// same products SCALE makes), using AX and X13.
#define SCALE2(xo0, xo1) \
	MOVWLZX      xo0(SI), AX;           \
	VMOVD        AX, X12;               \
	VPINSRW      $1, 0(DI), X12, X12;   \
	VPINSRW      $2, xo1(SI), X12, X12; \
	VPINSRW      $3, 34(DI), X12, X12;  \
	VCVTPH2PS    X12, X12;              \
	VMOVSHDUP    X12, X13;              \
	VMULPS       X13, X12, X12;         \
	VBROADCASTSS X12, Y11;              \
	VMOVHLPS     X12, X13, X13;         \
	VBROADCASTSS X13, Y12

// PAIR adds to ACC the dots of the two x blocks decoded in Y4..Y7 with
// the y blocks at 0(YP) and 34(YP), scaled by Y11 and Y12, one fused
// multiply-add after the other, as ggml's AVX2 vec_dot adds every block
// (its haswell build's bits: grouping the pair first, one add per pair on
// the dependency chain, moved the sums by a rounding).
#define PAIR(YP, ACC) \
	Q8DOT(Y4, Y5, 2(YP), Y8, Y9);  \
	VFMADD231PS Y11, Y9, ACC;      \
	Q8DOT(Y6, Y7, 36(YP), Y8, Y9); \
	VFMADD231PS Y12, Y9, ACC

// PAIR4 is PAIR for column c of a four-column kernel, its scales at
// 4c(SP) and 16+4c(SP) (c4 = 4c).
#define PAIR4(c4, YP, ACC) \
	VBROADCASTSS c4(SP), Y11;    \
	VBROADCASTSS 16+c4(SP), Y12; \
	PAIR(YP, ACC)

// ONE adds to ACC the scaled dot of the x block at 0(SI) (in Y4, Y5) with
// the y block at 0(YP).
#define ONE(YP, ACC) \
	SCALE(0(SI), 0(YP), X12, X11, Y11); \
	Q8DOT(Y4, Y5, 2(YP), Y8, Y9);         \
	VFMADD231PS Y11, Y9, ACC

// FX4STORE finishes the four columns of dotF32x4AVX2 and dotF16x4AVX2:
// accumulators Y0+Y1, Y2+Y3, Y6+Y7, Y8+Y9, scalar parts X10..X13, out in DX.
#define FX4STORE \
	VADDPS Y1, Y0, Y0; \
	HSUM(Y0, X0, X4); \
	VADDSS X10, X0, X0; \
	VMOVSS X0, 0(DX); \
	VADDPS Y3, Y2, Y2; \
	HSUM(Y2, X2, X4); \
	VADDSS X11, X2, X2; \
	VMOVSS X2, 4(DX); \
	VADDPS Y7, Y6, Y6; \
	HSUM(Y6, X6, X4); \
	VADDSS X12, X6, X6; \
	VMOVSS X6, 8(DX); \
	VADDPS Y9, Y8, Y8; \
	HSUM(Y8, X8, X4); \
	VADDSS X13, X8, X8; \
	VMOVSS X8, 12(DX); \
	VZEROUPPER; \
	RET

// H1 converts the half at mem to a float in the low lane of X.
#define H1(mem, X) \
	MOVWLZX   mem, AX; \
	VMOVD     AX, X;   \
	VCVTPH2PS X, X

// FP16MUL puts fp16(xd) * float32(ymem) in every lane of Y (X its low lane).
#define FP16MUL(xd, ymem, X, Y) \
	MOVWLZX      xd, AX;     \
	VMOVD        AX, X;      \
	VCVTPH2PS    X, X;       \
	VMULSS       ymem, X, X; \
	VBROADCASTSS X, Y

// Q4KSCALEBYTES gathers the eight scales and eight minimums of the Q4_K
// block at SI as bytes in X4 (scales 0-7, then minimums 0-7), as
// described below. It uses X6, X7.
#define Q4KSCALEBYTES \
	VMOVDQU    4(SI), X6;               \
	VPSHUFB    q4kshufa<>(SB), X6, X7;  \
	VPSHUFB    q4kshufb<>(SB), X6, X6;  \
	VPAND      q4kmask1<>(SB), X7, X4;  \
	VPSRLW     $4, X7, X7;              \
	VPAND      q4kmask2<>(SB), X7, X7;  \
	VPOR       X7, X4, X4;              \
	VPSRLW     $2, X6, X6;              \
	VPAND      q4kmask3<>(SB), X6, X6;  \
	VPOR       X6, X4, X4

// Q4_K block: fp16 d, fp16 dmin, scales[12], qs[128]. The 12 scale bytes
// hold eight 6-bit scales and eight 6-bit minimums: scale j < 4 in the low
// six bits of byte j, minimum j < 4 in those of byte j+4; for j >= 4 the
// low four bits are the low or high nibble of byte j+4 and the top two
// come from the spare top bits of bytes j-4 and j. DECODEQ4K gathers them
// with two shuffles (q4kshufa: the bytes holding the low bits, q4kshufb:
// those holding the top ones) and masks, then leaves the scales as words
// in both lanes of Y15 and the minimums, each repeated for the two bsums
// of its 32 elements, as words in Y14. It uses Y4..Y7.
#define DECODEQ4K \
	Q4KSCALEBYTES;                      \
	VPMOVZXBW  X4, Y4;                  \
	VPERMQ     $0x44, Y4, Y15;          \
	VPERMQ     $0xfa, Y4, Y14;          \
	VPUNPCKLWD Y14, Y14, Y14

// Q4KLOAD splits the 32 quant bytes at off(SI) into low nibbles (Y4) and
// high nibbles (Y5), sub-blocks 2k and 2k+1, and broadcasts their scales
// into Y12 and Y13 (m0 = 64k, m1 = 64k+32: offsets in k4shuf).
#define Q4KLOAD(off, m0, m1) \
	VMOVDQU off(SI), Y4;              \
	VPSRLW  $4, Y4, Y5;               \
	VPAND   nib<>(SB), Y4, Y4;        \
	VPAND   nib<>(SB), Y5, Y5;        \
	VPSHUFB k4shuf<>+m0(SB), Y15, Y12; \
	VPSHUFB k4shuf<>+m1(SB), Y15, Y13

// Q4KCOL adds to ISUM the scaled dots of Y4 and Y5 with the y quants at
// ylo(YP) and yhi(YP).
#define Q4KCOL(ylo, yhi, YP, ISUM) \
	VPMADDUBSW ylo(YP), Y4, Y6; \
	VPMADDWD   Y12, Y6, Y6;     \
	VPADDD     Y6, ISUM, ISUM;  \
	VPMADDUBSW yhi(YP), Y5, Y6; \
	VPMADDWD   Y13, Y6, Y6;     \
	VPADDD     Y6, ISUM, ISUM

// Q4KFIN folds a column's super-block into ACC and the minimums'
// accumulator at M (K4MINS): d*dy and dmin*dy come from one conversion of
// the two fp16 scales.
#define Q4KFIN(YP, ISUM, ACC, M) \
	VMOVD        0(SI), X6;          \
	VCVTPH2PS    X6, X6;             \
	VBROADCASTSS 0(YP), X7;          \
	VMULPS       X7, X6, X6;         \
	VMOVSHDUP    X6, X7;             \
	VBROADCASTSS X6, Y6;             \
	VBROADCASTSS X7, X7;             \
	VCVTDQ2PS    ISUM, ISUM;         \
	VFMADD231PS  Y6, ISUM, ACC;      \
	VMOVDQU      260(YP), Y6;        \
	VPMADDWD     Y14, Y6, Y6;        \
	K4MINS(Y6, X6, X7, X5, M)

// The minimums of Q4_K and Q5_K super-blocks go, as in ggml's AVX2
// Q4_K vec_dot (upstream ggml backend, arch/x86/quants.c, 2025), into a
// four-lane accumulator of their own: lane i gets the integer m[2i]*s[2i]
// + m[2i+1]*s[2i+1] (m the sub-blocks' minimums, s the activations' sums
// over each sub-block) times dmin*dy, subtracted with one rounding; the
// result is the eight lanes' horizontal sum plus, after it, that
// accumulator's ((lane 0 + lane 2) + (lane 1 + lane 3)).
//
// K4MINS folds MS (Y, eight lanes m[j]*s[j]; MSX its low half) times the
// four lanes of F (dmin*dy) into the accumulator at memory M, using T.
#define K4MINS(MS, MSX, F, T, M) \
	VPHADDD      MS, MS, MS;    \
	VPERMQ       $0x08, MS, MS; \
	VCVTDQ2PS    MSX, MSX;      \
	VMOVUPS      M, T;          \
	VFNMADD231PS F, MSX, T;     \
	VMOVUPS      T, M

// K4MSUM adds the minimums' accumulator at M to the low lane of X (the
// eight lanes' sum) and clears M, using T and U.
#define K4MSUM(M, T, U, X) \
	VMOVUPS   M, T;    \
	VMOVHLPS  T, U, U; \
	VADDPS    U, T, T; \
	VMOVSHDUP T, U;    \
	VADDSS    U, T, T; \
	VADDSS    T, X, X; \
	VXORPS    T, T, T; \
	VMOVUPS   T, M

// K4MSUM4 is HSUM4 with each accumulator's minimums at M..M+48 added
// (K4MSUM), using X4..X6.
#define K4MSUM4(M) \
	HSUM(Y0, X0, X4);           \
	K4MSUM(M(SP), X5, X6, X0);   \
	HSUM(Y1, X1, X4);           \
	K4MSUM(M+16(SP), X5, X6, X1); \
	HSUM(Y2, X2, X4);           \
	K4MSUM(M+32(SP), X5, X6, X2); \
	HSUM(Y3, X3, X4);           \
	K4MSUM(M+48(SP), X5, X6, X3)

// K4MCLEAR clears the four minimums' accumulators at M..M+48, using X4.
#define K4MCLEAR(M) \
	VXORPS  X4, X4, X4; \
	VMOVUPS X4, M(SP);    \
	VMOVUPS X4, M+16(SP); \
	VMOVUPS X4, M+32(SP); \
	VMOVUPS X4, M+48(SP)

// Q6_K block: ql[128], qh[64], int8 scales[16], fp16 d. Q6KSCALES loads
// the sixteen scales as bytes into X15 and as words into Y14. Q6KPAIR
// makes in Y the vector of words that scales one 32-element step: sc[2i]
// in its low half, sc[2i+1] in its high half (m = 16i, an offset in
// q6shuf); Q6KPAIRS writes the eight at 32i(SP).
#define Q6KSCALES \
	VMOVDQU   192(SI), X15; \
	VPMOVSXBW X15, Y14

#define Q6KPAIR(m, X, Y) \
	VPSHUFB   q6shuf<>+m(SB), X15, X; \
	VPMOVSXBW X, Y

#define Q6KPAIRS \
	Q6KPAIR(0, X6, Y6);   \
	VMOVDQU Y6, 0(SP);    \
	Q6KPAIR(16, X6, Y6);  \
	VMOVDQU Y6, 32(SP);   \
	Q6KPAIR(32, X6, Y6);  \
	VMOVDQU Y6, 64(SP);   \
	Q6KPAIR(48, X6, Y6);  \
	VMOVDQU Y6, 96(SP);   \
	Q6KPAIR(64, X6, Y6);  \
	VMOVDQU Y6, 128(SP);  \
	Q6KPAIR(80, X6, Y6);  \
	VMOVDQU Y6, 160(SP);  \
	Q6KPAIR(96, X6, Y6);  \
	VMOVDQU Y6, 192(SP);  \
	Q6KPAIR(112, X6, Y6); \
	VMOVDQU Y6, 224(SP)

// DECODEQ6KHALF makes the 6-bit quants of one 128-element half, from ql at
// ql(SI), ql+32(SI) and qh at qh(SI): elements 0-31 in Y8, 32-63 in Y9,
// 64-95 in Y4, 96-127 in Y5, with the masks nib and hi2 from NIB and HI2
// (registers, or the tables). It uses Y6, Y7.
#define DECODEQ6KHALF(ql, qh, NIB, HI2) \
	VMOVDQU ql(SI), Y4;        \
	VMOVDQU ql+32(SI), Y5;     \
	VMOVDQU qh(SI), Y6;        \
	VPAND   NIB, Y4, Y8;       \
	VPSLLW  $4, Y6, Y7;        \
	VPAND   HI2, Y7, Y7;       \
	VPOR    Y7, Y8, Y8;        \
	VPAND   NIB, Y5, Y9;       \
	VPSLLW  $2, Y6, Y7;        \
	VPAND   HI2, Y7, Y7;       \
	VPOR    Y7, Y9, Y9;        \
	VPSRLW  $4, Y4, Y4;        \
	VPAND   NIB, Y4, Y4;       \
	VPAND   HI2, Y6, Y7;       \
	VPOR    Y7, Y4, Y4;        \
	VPSRLW  $4, Y5, Y5;        \
	VPAND   NIB, Y5, Y5;       \
	VPSRLW  $2, Y6, Y6;        \
	VPAND   HI2, Y6, Y6;       \
	VPOR    Y6, Y5, Y5

// Q6KCOL adds to ISUM the scaled dots of one half's quants with the y
// quants at y(YP), y+32(YP), ... and the scale pairs at s(SP), s+32(SP), ...
#define Q6KCOL(y, s, YP, ISUM) \
	VPMADDUBSW y(YP), Y8, Y6;    \
	VPMADDWD   s(SP), Y6, Y6;    \
	VPADDD     Y6, ISUM, ISUM;   \
	VPMADDUBSW y+32(YP), Y9, Y6; \
	VPMADDWD   s+32(SP), Y6, Y6; \
	VPADDD     Y6, ISUM, ISUM;   \
	VPMADDUBSW y+64(YP), Y4, Y6; \
	VPMADDWD   s+64(SP), Y6, Y6; \
	VPADDD     Y6, ISUM, ISUM;   \
	VPMADDUBSW y+96(YP), Y5, Y6; \
	VPMADDWD   s+96(SP), Y6, Y6; \
	VPADDD     Y6, ISUM, ISUM

// Q6KSTEP1 is one 32-element step of the single-column kernel: the scale
// pair shuffled from S (Y12: scales 0-7 as words in both lanes, Y13: 8-15;
// m = 32 times the pair's index among S's four), quants in Q, y at y(DI).
#define Q6KSTEP1(y, m, S, Q) \
	VPSHUFB q6wshuf<>+m(SB), S, Y7; \
	VPMADDUBSW y(DI), Q, Y6; \
	VPMADDWD   Y7, Y6, Y6;   \
	VPADDD     Y6, Y10, Y10

// Q6KFIN removes the offset of 32 (32 * sum of sc[j] * bsums[j]) and folds
// a column's super-block into ACC.
#define Q6KFIN(YP, ISUM, ACC) \
	VMOVDQU     260(YP), Y6;         \
	VPMADDWD    Y14, Y6, Y6;         \
	VPSLLD      $5, Y6, Y6;          \
	VPSUBD      Y6, ISUM, ISUM;      \
	VCVTDQ2PS   ISUM, ISUM;          \
	FP16MUL(208(SI), 0(YP), X6, Y6); \
	VFMADD231PS Y6, ISUM, ACC

// Q6KFOLD is the end of a Q6_K super-block once its scale-bsum products
// are in M: ISUM less 32*M, as a float, times the broadcast float at F
// (d*dy, through T) into ACC.
#define Q6KFOLD(M, T, F, ISUM, ACC) \
	VPSLLD       $5, M, M;      \
	VPSUBD       M, ISUM, ISUM; \
	VCVTDQ2PS    ISUM, ISUM;    \
	VBROADCASTSS F, T;          \
	VFMADD231PS  T, ISUM, ACC

// X4BEGIN and X4END open and close a four-column kernel over one row:
// n in CX, x in SI, the four y in R8..R11, accumulators Y0..Y3 cleared;
// then the accumulators reduced into out[0..3].
#define X4BEGIN \
	MOVQ   n+0(FP), CX;  \
	MOVQ   x+8(FP), SI;  \
	MOVQ   y+16(FP), DX; \
	YCOLS4;              \
	CLEAR4

#define X4END \
	MOVQ   out+24(FP), DX; \
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

// The four-row kernels (dot_rows_amd64.s says what they compute) keep the
// group's rows in R8..R11, the offset of the current blocks in them in
// R13, the stride in DX and the output pointer at 0(SP).

// HSUM4 reduces Y0..Y3 into the low lanes of X0..X3, using X4.
#define HSUM4 \
	HSUM(Y0, X0, X4); \
	HSUM(Y1, X1, X4); \
	HSUM(Y2, X2, X4); \
	HSUM(Y3, X3, X4)

// HSUM4MS is HSUM4 adding to each X c the scalar sum kept in lane 2c+1 of
// Y5 (the Q8_1 kernels' m*s sums) after the vector sum, using X6 and X9.
#define HSUM4MS \
	VEXTRACTF128 $1, Y5, X6;  \
	HSUM(Y0, X0, X4);         \
	VMOVSHDUP    X5, X9;      \
	VADDSS       X9, X0, X0;  \
	HSUM(Y1, X1, X4);         \
	VPERMILPS    $3, X5, X9;  \
	VADDSS       X9, X1, X1;  \
	HSUM(Y2, X2, X4);         \
	VMOVSHDUP    X6, X9;      \
	VADDSS       X9, X2, X2;  \
	HSUM(Y3, X3, X4);         \
	VPERMILPS    $3, X6, X9;  \
	VADDSS       X9, X3, X3

// X4ROWS opens the row loop of the four-column kernels over nrows rows of
// x (DI the row, BX the rows left, R13 the output): each row starts with
// SI at it, CX the block count, R12 at dy, R8..R11 at the columns (from
// the array in DX) and Y0..Y3 cleared.
#define X4ROWS \
rows:                             \
	MOVQ    x+8(FP), DI;          \
	MOVQ    nrows+24(FP), BX;     \
	MOVQ    out+48(FP), R13;      \
row:                              \
	TESTQ   BX, BX;               \
	JZ      done;                 \
	MOVQ    DI, SI;               \
	MOVQ    n+0(FP), CX;          \
	MOVQ    dy+40(FP), R12;       \
	YCOLS4;                       \
	CLEAR4

// X4ROWEND stores X0..X3 as the row's four outputs, moves to the next row
// and closes the loop X4ROWS opened.
#define X4ROWEND \
	VMOVSS  X0, 0(R13);           \
	VMOVSS  X1, 4(R13);           \
	VMOVSS  X2, 8(R13);           \
	VMOVSS  X3, 12(R13);          \
	ADDQ    $16, R13;             \
	ADDQ    stride+16(FP), DI;    \
	DECQ    BX;                   \
	JMP     row;                  \
done:                             \
	VZEROUPPER;                   \
	RET

// RSTORE4 reduces Y0..Y3 into the group's four outputs and moves the
// output on, using AX, CX and SI; RSTORE4R reduces them with RED.
#define RSTORE4 RSTORE4R(HSUM4)

#define RSTORE4R(RED) \
	MOVQ   0(SP), AX;          \
	MOVQ   ogap+64(FP), CX;    \
	RED;                       \
	VMOVSS X0, 0(AX);          \
	VMOVSS X1, (AX)(CX*1);     \
	LEAQ   (AX)(CX*2), SI;     \
	VMOVSS X2, 0(SI);          \
	VMOVSS X3, (SI)(CX*1);     \
	ADDQ   $4, AX;             \
	MOVQ   AX, 0(SP)

// RGROUP points R9..R11 at the group's rows after R8 (gap bytes apart)
// and clears the accumulators.
#define RGROUP \
	MOVQ   gap+24(FP), AX;   \
	LEAQ   (R8)(AX*1), R9;  \
	LEAQ   (R9)(AX*1), R10; \
	LEAQ   (R10)(AX*1), R11; \
	XORQ   R13, R13;        \
	CLEAR4

// RGROUPSTART and RGROUPEND open and close a four-row kernel's loop over
// its groups: BX counts them, R8 steps by the stride; between them the
// column pointer DI and the block count CX start afresh.
#define RGROUPSTART \
group:                  \
	TESTQ BX, BX;        \
	JZ    done;          \
	RGROUP;              \
	MOVQ  n+0(FP), CX;   \
	MOVQ  y+40(FP), DI

#define RGROUPEND RGROUPENDR(HSUM4)

// RGROUPENDR is RGROUPEND reducing the accumulators with RED.
#define RGROUPENDR(RED) \
groupend:               \
	RSTORE4R(RED);       \
	ADDQ  DX, R8;        \
	DECQ  BX;            \
	JMP   group;         \
done:                   \
	VZEROUPPER;          \
	RET
