//go:build !purego

#include "dot_amd64.h"

// K-quant weights against Q8_K activations (292-byte blocks: float32 d,
// int8 qs[256], int16 bsums[16]). Each super-block's integer sums are
// exact (maddubs of the unsigned levels with the activations, madd with
// the sub-block scales; minimums and offsets through the bsums); the float
// part is acc += float(isum) * (d * dy), then, with minimums (Q4_K, Q5_K),
// macc -= float(msum) * (dmin * dy) in an accumulator of their own
// (K4MINS, dot_amd64.h: ggml's AVX2 Q4_K order). The scales are unpacked once per
// super-block, the quants of each 64 (Q4_K, Q5_K) or 128 (Q6_K) elements
// once for all columns.

// Q4_K and Q5_K share their bodies, K4DOT1 and K4DOT4, over blocks of XB
// bytes whose four 64-element chunks C0..C3 decode into Y4 and Y5 (with
// their scales in Y12, Y13).
#define Q4KC0 Q4KLOAD(16, 0, 32)
#define Q4KC1 Q4KLOAD(48, 64, 96)
#define Q4KC2 Q4KLOAD(80, 128, 160)
#define Q4KC3 Q4KLOAD(112, 192, 224)

// Q5_K (fp16 d, fp16 dmin, scales[12], qh[32], qs[128]): bit c of qh[l] is
// the fifth bit of element 32c+l. FIFTH5K moves bit 2k of each qh byte to
// bit 4 of the low chunk's levels with SHLO, bit 2k+1 to the high chunk's
// with SHHI.
#define FIFTH5K(SHLO, SHHI) \
	VMOVDQU 16(SI), Y6;          \
	SHLO, Y6, Y7;                \
	VPAND   hi10<>(SB), Y7, Y7;  \
	VPOR    Y7, Y4, Y4;          \
	SHHI, Y6, Y6;                \
	VPAND   hi10<>(SB), Y6, Y6;  \
	VPOR    Y6, Y5, Y5

#define Q5KC0 Q4KLOAD(48, 0, 32); FIFTH5K(VPSLLW $4, VPSLLW $3)
#define Q5KC1 Q4KLOAD(80, 64, 96); FIFTH5K(VPSLLW $2, VPSLLW $1)
#define Q5KC2 Q4KLOAD(112, 128, 160); FIFTH5K(VPSLLW $0, VPSRLW $1)
#define Q5KC3 Q4KLOAD(144, 192, 224); FIFTH5K(VPSRLW $2, VPSRLW $3)

// K4SUPER adds the super-block at SI against the column's at DI to ACC
// and its minimums to the accumulator at M.
#define K4SUPER(C0, C1, C2, C3, ACC, M) \
	DECODEQ4K;                \
	VPXOR Y8, Y8, Y8;         \
	C0;                       \
	Q4KCOL(4, 36, DI, Y8);    \
	C1;                       \
	Q4KCOL(68, 100, DI, Y8);  \
	C2;                       \
	Q4KCOL(132, 164, DI, Y8); \
	C3;                       \
	Q4KCOL(196, 228, DI, Y8); \
	Q4KFIN(DI, Y8, ACC, M)

// K4DOT1 keeps the minimums' accumulator at 0(SP).
#define K4DOT1(C0, C1, C2, C3, XB) \
	MOVQ   n+0(FP), CX;          \
	MOVQ   x+8(FP), SI;          \
	MOVQ   y+16(FP), DI;         \
	VXORPS Y0, Y0, Y0;           \
	VXORPS X1, X1, X1;           \
	VMOVUPS X1, 0(SP);           \
loop:                            \
	TESTQ CX, CX;                \
	JZ    done;                  \
	K4SUPER(C0, C1, C2, C3, Y0, 0(SP)); \
	ADDQ  $XB, SI;               \
	ADDQ  $292, DI;              \
	DECQ  CX;                    \
	JMP   loop;                  \
done:                            \
	HSUM(Y0, X0, X1);            \
	K4MSUM(0(SP), X5, X6, X0);   \
	VMOVSS X0, ret+24(FP);       \
	VZEROUPPER;                  \
	RET

#define K4COLS(ylo, yhi) \
	Q4KCOL(ylo, yhi, R8, Y8);   \
	Q4KCOL(ylo, yhi, R9, Y9);   \
	Q4KCOL(ylo, yhi, R10, Y10); \
	Q4KCOL(ylo, yhi, R11, Y11)

// K4DOT4 keeps the columns' minimums' accumulators at 0(SP)..48(SP).
#define K4DOT4(C0, C1, C2, C3, XB) \
	X4BEGIN;                      \
	K4MCLEAR(0);                  \
loop:                            \
	TESTQ CX, CX;                \
	JZ    done;                  \
	DECODEQ4K;                   \
	VPXOR Y8, Y8, Y8;            \
	VPXOR Y9, Y9, Y9;            \
	VPXOR Y10, Y10, Y10;         \
	VPXOR Y11, Y11, Y11;         \
	C0;                          \
	K4COLS(4, 36);               \
	C1;                          \
	K4COLS(68, 100);             \
	C2;                          \
	K4COLS(132, 164);            \
	C3;                          \
	K4COLS(196, 228);            \
	Q4KFIN(R8, Y8, Y0, 0(SP));   \
	Q4KFIN(R9, Y9, Y1, 16(SP));  \
	Q4KFIN(R10, Y10, Y2, 32(SP)); \
	Q4KFIN(R11, Y11, Y3, 48(SP)); \
	ADDQ  $XB, SI;               \
	Q8KNEXT4;                    \
	DECQ  CX;                    \
	JMP   loop;                  \
done:                            \
	MOVQ   out+24(FP), DX;       \
	K4MSUM4(0);                  \
	VMOVSS X0, 0(DX);            \
	VMOVSS X1, 4(DX);            \
	VMOVSS X2, 8(DX);            \
	VMOVSS X3, 12(DX);           \
	VZEROUPPER;                  \
	RET

// Q2_K (scales[16]: scale in the low nibble, minimum in the high one;
// qs[64]; fp16 d; fp16 dmin): element 128n+32s+l is bits 2s of
// qs[32n+l], in 16-element sub-blocks 8n+2s+(l/16). Q2KSTEP takes the
// levels of one 32-element step from Y4 (shifted into its low two bits)
// with the scale pair made from X15 (m as in Q6KPAIR).
#define Q2KSTEP(y, m) \
	VPAND      three<>(SB), Y4, Y5;     \
	VPSHUFB    q6shuf<>+m(SB), X15, X7; \
	VPMOVZXBW  X7, Y7;                  \
	VPMADDUBSW y(DI), Y5, Y6;           \
	VPMADDWD   Y7, Y6, Y6;              \
	VPADDD     Y6, Y10, Y10

#define Q2KHALF(q, y, m) \
	VMOVDQU q(SI), Y4;         \
	Q2KSTEP(y, m);             \
	VPSRLW  $2, Y4, Y4;        \
	Q2KSTEP(y+32, m+16);       \
	VPSRLW  $2, Y4, Y4;        \
	Q2KSTEP(y+64, m+32);       \
	VPSRLW  $2, Y4, Y4;        \
	Q2KSTEP(y+96, m+48)

// Q3_K (hmask[32], qs[64], scales[12], fp16 d): element 128c+32s+l is
// bits 2s of qs[32c+l] plus 4 where bit 4c+s of hmask[l] is set, minus 4;
// 16-element sub-blocks with 6-bit scales offset by 32 (low nibbles in
// bytes 0-7, high bit pairs in bytes 8-11). Q3KSTEP adds one 32-element
// step: the unsigned level (two bits from Y4, the hmask bit from Y12 moved
// to bit 2 by HSH) meets y, and the offset of 4 goes through the bsums at
// the end.
#define Q3KSTEP(y, m, HSH) \
	VPAND      three<>(SB), Y4, Y5;     \
	HSH, Y12, Y7;                       \
	VPAND      four<>(SB), Y7, Y7;      \
	VPOR       Y7, Y5, Y5;              \
	VPSHUFB    q6shuf<>+m(SB), X15, X8; \
	VPMOVSXBW  X8, Y8;                  \
	VPMADDUBSW y(DI), Y5, Y6;           \
	VPMADDWD   Y8, Y6, Y6;              \
	VPADDD     Y6, Y10, Y10

#define Q3KHALF(q, y, m, H0, H1, H2, H3) \
	VMOVDQU q(SI), Y4;           \
	Q3KSTEP(y, m, H0);           \
	VPSRLW  $2, Y4, Y4;          \
	Q3KSTEP(y+32, m+16, H1);     \
	VPSRLW  $2, Y4, Y4;          \
	Q3KSTEP(y+64, m+32, H2);     \
	VPSRLW  $2, Y4, Y4;          \
	Q3KSTEP(y+96, m+48, H3)

// Q3KSCALES unpacks the sixteen scales into X15 (bytes, offset removed)
// and Y14 (words), using AX, BX, DX, R12, R13.
#define Q3KSCALES \
	MOVL      96(SI), AX;             \
	MOVL      100(SI), BX;            \
	MOVL      104(SI), DX;            \
	MOVL      AX, R12;                \
	ANDL      $0x0f0f0f0f, R12;       \
	MOVL      DX, R13;                \
	ANDL      $0x03030303, R13;       \
	SHLL      $4, R13;                \
	ORL       R13, R12;               \
	VMOVD     R12, X15;               \
	MOVL      BX, R12;                \
	ANDL      $0x0f0f0f0f, R12;       \
	MOVL      DX, R13;                \
	SHRL      $2, R13;                \
	ANDL      $0x03030303, R13;       \
	SHLL      $4, R13;                \
	ORL       R13, R12;               \
	VPINSRD   $1, R12, X15, X15;      \
	SHRL      $4, AX;                 \
	ANDL      $0x0f0f0f0f, AX;        \
	MOVL      DX, R13;                \
	SHRL      $4, R13;                \
	ANDL      $0x03030303, R13;       \
	SHLL      $4, R13;                \
	ORL       R13, AX;                \
	VPINSRD   $2, AX, X15, X15;       \
	SHRL      $4, BX;                 \
	ANDL      $0x0f0f0f0f, BX;        \
	SHRL      $6, DX;                 \
	ANDL      $0x03030303, DX;        \
	SHLL      $4, DX;                 \
	ORL       DX, BX;                 \
	VPINSRD   $3, BX, X15, X15;       \
	VPSUBB    thirty2<>(SB), X15, X15; \
	VPMOVSXBW X15, Y14

// KROWS is the body of a four-row kernel for K-quant blocks of XB bytes:
// BLOCK adds the super-blocks at offset R13 of rows R8..R11 (against the
// column's at DI) to Y0..Y3, as the single kernel's loop body does.
// KROWSR reduces each group's accumulators with RED.
// KPREFETCH asks for the 256 bytes of row ROW KPD bytes ahead of its
// current super-block, KPREFETCH4 for the group's four rows: the
// hardware's streamers alone left the four-row kernels waiting on memory
// (Gemma 3's Q4_K and Q6_K rows, at 1 thread on the machine of
// bench/README.md, read 13.7 and 17.9 GB/s from L2 but 9.0 and 8.3 from
// memory). Timed in turns in one process (thread CPU time, load 7), 1024
// bytes ahead: 640 rows of 2048 Q6_K, 32 matrices' worth, 4.44 -> 3.13 ms;
// Q4_K's 1024-wide 3.14 -> 2.75 ms (2048 and 4096 ahead gained less).
#define KPD 1024
#define KPREFETCH(ROW) \
	PREFETCHT0 KPD(ROW)(R13*1);     \
	PREFETCHT0 KPD+64(ROW)(R13*1);  \
	PREFETCHT0 KPD+128(ROW)(R13*1); \
	PREFETCHT0 KPD+192(ROW)(R13*1)

#define KPREFETCH4 \
	KPREFETCH(R8);  \
	KPREFETCH(R9);  \
	KPREFETCH(R10); \
	KPREFETCH(R11)

#define KROWS(BLOCK, XB) KROWSR(BLOCK, XB, HSUM4)

#define KROWSR(BLOCK, XB, RED) \
	MOVQ  out+56(FP), AX;     \
	MOVQ  AX, 0(SP);          \
	MOVQ  x+8(FP), R8;        \
	MOVQ  stride+16(FP), DX;  \
	MOVQ  ngroups+32(FP), BX; \
	RGROUPSTART;              \
block:                        \
	TESTQ CX, CX;             \
	JZ    groupend;           \
	KPREFETCH4;               \
	BLOCK;                    \
	ADDQ  $XB, R13;           \
	ADDQ  $292, DI;           \
	DECQ  CX;                 \
	JMP   block;              \
	RGROUPENDR(RED)

// K4BODY is K4DOT1's loop body for row ROW into ACC and the minimums'
// accumulator at M.
#define K4BODY(C0, C1, C2, C3, ROW, ACC, M) \
	LEAQ (ROW)(R13*1), SI; \
	K4SUPER(C0, C1, C2, C3, ACC, M)

#define Q5KBODY(ROW, ACC, M) K4BODY(Q5KC0, Q5KC1, Q5KC2, Q5KC3, ROW, ACC, M)

// ROWS4 is a KROWS block made of BODY(ROW, ACC, M) for each row, the
// minimums' accumulators at 8(SP)..56(SP).
#define ROWS4(BODY) \
	BODY(R8, Y0, 8(SP));   \
	BODY(R9, Y1, 24(SP));  \
	BODY(R10, Y2, 40(SP)); \
	BODY(R11, Y3, 56(SP))

// The Q4_K four-row kernel computes each row's integers and float
// sequence as K4SUPER does, with fewer vector instructions: the four rows'
// d and dmin are converted at once (Q4KRDS: the products d*dy and
// dmin*dy, Q4KFIN's, at 16(SP) on, a pair per row); the scale bytes are
// decoded in the integer unit (Q4KRBYTES); each 32-element step's scale
// words come from one VPSHUFD (no table load); the nibble mask stays in
// Y15; and the rows go two by two, their steps interleaved, so that one
// row's decoding overlaps the other's arithmetic.
#define Q4KRDS \
	VMOVD        0(R8)(R13*1), X4;  \
	VMOVD        0(R9)(R13*1), X5;  \
	VMOVD        0(R10)(R13*1), X6; \
	VMOVD        0(R11)(R13*1), X7; \
	VPUNPCKLDQ   X5, X4, X4;        \
	VPUNPCKLDQ   X7, X6, X6;        \
	VPUNPCKLQDQ  X6, X4, X4;        \
	VCVTPH2PS    X4, Y4;            \
	VBROADCASTSS 0(DI), Y5;         \
	VMULPS       Y5, Y4, Y4;        \
	VMOVUPS      Y4, 16(SP)

// Q4KRBYTES decodes the scale bytes of the Q4_K block at offset R13 of
// row ROW in the integer unit, which the vector kernel leaves idle:
// SLOT(SP) gets scales 0-3 and minimums 0-3, SLOT+8(SP) scales 4-7 and
// minimums 4-7 (the layout of Q4KSCALEBYTES's comment: the low six bits
// of bytes 0-7; then the nibbles of bytes 8-11 with the spare top bits of
// bytes 0-7 above them). It uses AX, SI and R12.
#define Q4KRBYTES(ROW, SLOT) \
	MOVQ 4(ROW)(R13*1), AX;        \
	MOVL 12(ROW)(R13*1), SI;       \
	MOVQ $0x3f3f3f3f3f3f3f3f, R12; \
	ANDQ AX, R12;                  \
	MOVQ R12, SLOT(SP);            \
	MOVL SI, R12;                  \
	SHRL $4, R12;                  \
	SHLQ $32, R12;                 \
	ORQ  SI, R12;                  \
	MOVQ $0x0f0f0f0f0f0f0f0f, SI;  \
	ANDQ SI, R12;                  \
	SHRQ $2, AX;                   \
	MOVQ $0x3030303030303030, SI;  \
	ANDQ SI, AX;                   \
	ORQ  R12, AX;                  \
	MOVQ AX, SLOT+8(SP)

// Q4KRSCALES leaves, from Q4KRBYTES's SLOT, scales 0-3 as word pairs
// (dword j: scale j twice) in both lanes of LO, scales 4-7 likewise in
// HI, and in MS the minimums against the column's bsums (DECODEQ4K's
// minimum words times them).
#define Q4KRSCALES(SLOT, LO, HI, MS) \
	VPBROADCASTQ SLOT(SP), Y4;             \
	VPBROADCASTQ SLOT+8(SP), Y5;           \
	VPSHUFB      q4kpairs<>(SB), Y4, LO;   \
	VPSHUFB      q4kpairs<>(SB), Y5, HI;   \
	VPBLENDD     $0xf0, Y5, Y4, Y4;        \
	VPSHUFB      q4kmins<>(SB), Y4, MS;    \
	VPMADDWD     260(DI), MS, MS

// Q4KRSTEP adds to ISUM the 64 elements at off(B) against the column's at
// y(DI): the low nibbles with the scale in dword J0 of S, the high ones
// with J1's. Q4KRHALF does one half: the levels P against y(DI), scaled
// by dword J of S.
#define Q4KRHALF(y, S, J, P, ISUM) \
	VPMADDUBSW y(DI), P, P; \
	VPSHUFD    J, S, Y6;    \
	VPMADDWD   Y6, P, P;    \
	VPADDD     P, ISUM, ISUM

#define Q4KRSTEP(B, off, y, S, J0, J1, ISUM) \
	VMOVDQU off(B), Y4;              \
	VPSRLW  $4, Y4, Y5;              \
	VPAND   Y15, Y4, Y4;             \
	VPAND   Y15, Y5, Y5;             \
	Q4KRHALF(y, S, J0, Y4, ISUM);    \
	Q4KRHALF(y+32, S, J1, Y5, ISUM)

// Q4KRSTEP2 is one 64-element step of two rows, at SI and R12.
#define Q4KRSTEP2(off, y, SA, SB, J0, J1) \
	Q4KRSTEP(SI, off, y, SA, J0, J1, Y8); \
	Q4KRSTEP(R12, off, y, SB, J0, J1, Y7)

// Q4KRFIN is Q4KFIN for ISUM and MS (MSX its low half), d*dy and
// dmin*dy at F(SP), the minimums' accumulator at M(SP).
#define Q4KRFIN(ISUM, MS, MSX, F, ACC, M) \
	VCVTDQ2PS    ISUM, ISUM;    \
	VBROADCASTSS F(SP), Y6;     \
	VFMADD231PS  Y6, ISUM, ACC; \
	VBROADCASTSS F+4(SP), X6;   \
	K4MINS(MS, MSX, X6, X5, M(SP))

// Q4KR2BODY adds the super-blocks at offset R13 of rows RA and RB to
// ACCA and ACCB (their minimums to MA(SP) and MB(SP)), both rows' scales
// decoded first, then their steps interleaved.
#define Q4KR2BODY(RA, RB, ACCA, ACCB, FA, FB, MA, MB) \
	Q4KRBYTES(RA, 48);                      \
	Q4KRBYTES(RB, 64);                      \
	Q4KRSCALES(48, Y14, Y12, Y13);          \
	Q4KRSCALES(64, Y11, Y10, Y9);           \
	LEAQ (RA)(R13*1), SI;                   \
	LEAQ (RB)(R13*1), R12;                  \
	VPXOR    Y8, Y8, Y8;                    \
	VPXOR    Y7, Y7, Y7;                    \
	Q4KRSTEP2(16, 4, Y14, Y11, $0x00, $0x55);    \
	Q4KRSTEP2(48, 68, Y14, Y11, $0xaa, $0xff);   \
	Q4KRSTEP2(80, 132, Y12, Y10, $0x00, $0x55);  \
	Q4KRSTEP2(112, 196, Y12, Y10, $0xaa, $0xff); \
	Q4KRFIN(Y8, Y13, X13, FA, ACCA, MA);    \
	Q4KRFIN(Y7, Y9, X9, FB, ACCB, MB)

// Q4KRBLOCK keeps the rows' minimums' accumulators at 80(SP)..128(SP).
#define Q4KRBLOCK \
	Q4KRDS;                                      \
	Q4KR2BODY(R8, R9, Y0, Y1, 16, 24, 80, 96);   \
	Q4KR2BODY(R10, R11, Y2, Y3, 32, 40, 112, 128)

// The Q6_K four-row kernel runs Q6KSUPER's integers and float sequence
// per row with the masks nib and hi2 kept in Y11 and Y15 instead of
// loaded for every use, and the four rows' d*dy made at once (Q6KRDS, at
// 16(SP) on: the scales gathered in the integer unit, one conversion and
// one product).
#define Q6KRDS \
	MOVWLZX      208(R8)(R13*1), AX;  \
	MOVWLZX      208(R9)(R13*1), SI;  \
	SHLQ         $16, SI;             \
	ORQ          SI, AX;              \
	MOVWLZX      208(R10)(R13*1), SI; \
	SHLQ         $32, SI;             \
	ORQ          SI, AX;              \
	MOVWLZX      208(R11)(R13*1), SI; \
	SHLQ         $48, SI;             \
	ORQ          SI, AX;              \
	VMOVQ        AX, X6;              \
	VCVTPH2PS    X6, X6;              \
	VBROADCASTSS 0(DI), X7;           \
	VMULPS       X7, X6, X6;          \
	VMOVUPS      X6, 16(SP)

#define Q6KRBODY(ROW, ACC, F) \
	LEAQ         (ROW)(R13*1), SI;                \
	VMOVDQU      192(SI), X6;                     \
	VPMOVSXBW    X6, Y14;                         \
	VPERMQ       $0x44, Y14, Y12;                 \
	VPERMQ       $0xee, Y14, Y13;                 \
	VPXOR        Y10, Y10, Y10;                   \
	DECODEQ6KHALF(0, 128, Y11, Y15);              \
	Q6KSTEP1(4, 0, Y12, Y8);                      \
	Q6KSTEP1(36, 32, Y12, Y9);                    \
	Q6KSTEP1(68, 64, Y12, Y4);                    \
	Q6KSTEP1(100, 96, Y12, Y5);                   \
	DECODEQ6KHALF(64, 160, Y11, Y15);             \
	Q6KSTEP1(132, 0, Y13, Y8);                    \
	Q6KSTEP1(164, 32, Y13, Y9);                   \
	Q6KSTEP1(196, 64, Y13, Y4);                   \
	Q6KSTEP1(228, 96, Y13, Y5);                   \
	VPMADDWD     260(DI), Y14, Y6;                \
	Q6KFOLD(Y6, Y6, F(SP), Y10, ACC)

#define Q6KRBLOCK \
	Q6KRDS;                      \
	Q6KRBODY(R8, Y0, 16);        \
	Q6KRBODY(R9, Y1, 20);        \
	Q6KRBODY(R10, Y2, 24);       \
	Q6KRBODY(R11, Y3, 28)

// Q6KSUPER adds the super-block at SI against the column's at DI to ACC.
#define Q6KSUPER(ACC) \
	Q6KSCALES;                   \
	VPERMQ $0x44, Y14, Y12;      \
	VPERMQ $0xee, Y14, Y13;      \
	VPXOR  Y10, Y10, Y10;        \
	DECODEQ6KHALF(0, 128, nib<>(SB), hi2<>(SB));       \
	Q6KSTEP1(4, 0, Y12, Y8);     \
	Q6KSTEP1(36, 32, Y12, Y9);   \
	Q6KSTEP1(68, 64, Y12, Y4);   \
	Q6KSTEP1(100, 96, Y12, Y5);  \
	DECODEQ6KHALF(64, 160, nib<>(SB), hi2<>(SB));      \
	Q6KSTEP1(132, 0, Y13, Y8);   \
	Q6KSTEP1(164, 32, Y13, Y9);  \
	Q6KSTEP1(196, 64, Y13, Y4);  \
	Q6KSTEP1(228, 96, Y13, Y5);  \
	Q6KFIN(DI, Y10, ACC)

// func dotQ4_KRowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ4_KRowsAVX2(SB), NOSPLIT, $144-72
	K4MCLEAR(80)
	VMOVDQU nib<>(SB), Y15
	KROWSR(Q4KRBLOCK, 144, K4MSUM4(80))

// func dotQ5_KRowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ5_KRowsAVX2(SB), NOSPLIT, $72-72
	K4MCLEAR(8)
	KROWSR(ROWS4(Q5KBODY), 176, K4MSUM4(8))

// func dotQ6_KRowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ6_KRowsAVX2(SB), NOSPLIT, $32-72
	VMOVDQU nib<>(SB), Y11
	VMOVDQU hi2<>(SB), Y15
	KROWS(Q6KRBLOCK, 210)

// func dotQ4_KAVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_KAVX2(SB), NOSPLIT, $16-28
	K4DOT1(Q4KC0, Q4KC1, Q4KC2, Q4KC3, 144)

// func dotQ4_Kx4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_Kx4AVX2(SB), NOSPLIT, $64-32
	K4DOT4(Q4KC0, Q4KC1, Q4KC2, Q4KC3, 144)

// func dotQ5_KAVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_KAVX2(SB), NOSPLIT, $16-28
	K4DOT1(Q5KC0, Q5KC1, Q5KC2, Q5KC3, 176)

// func dotQ5_Kx4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ5_Kx4AVX2(SB), NOSPLIT, $64-32
	K4DOT4(Q5KC0, Q5KC1, Q5KC2, Q5KC3, 176)

// func dotQ2_KAVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ2_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0

q2kloop:
	TESTQ        CX, CX
	JZ           q2kdone
	VMOVDQU      0(SI), X15
	VPSRLW       $4, X15, X14
	VPAND        nib<>(SB), X14, X14
	VPAND        nib<>(SB), X15, X15
	VPMOVZXBW    X14, Y14
	VPMADDWD     260(DI), Y14, Y14
	VPXOR        Y10, Y10, Y10
	Q2KHALF(16, 4, 0)
	Q2KHALF(48, 132, 64)
	VCVTDQ2PS    Y10, Y10
	FP16MUL(80(SI), 0(DI), X6, Y6)
	VFMADD231PS  Y6, Y10, Y0
	VCVTDQ2PS    Y14, Y14
	FP16MUL(82(SI), 0(DI), X6, Y6)
	VFNMADD231PS Y6, Y14, Y0
	ADDQ         $84, SI
	ADDQ         $292, DI
	DECQ         CX
	JMP          q2kloop

q2kdone:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET


// func dotQ6_KAVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ6_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0

q6kloop:
	TESTQ CX, CX
	JZ    q6kdone
	Q6KSUPER(Y0)
	ADDQ  $210, SI
	ADDQ  $292, DI
	DECQ  CX
	JMP   q6kloop

q6kdone:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotQ6_Kx4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ6_Kx4AVX2(SB), NOSPLIT, $256-32
	X4BEGIN

q6kx4loop:
	TESTQ CX, CX
	JZ    q6kx4done
	Q6KSCALES
	Q6KPAIRS
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	DECODEQ6KHALF(0, 128, nib<>(SB), hi2<>(SB))
	Q6KCOL(4, 0, R8, Y10)
	Q6KCOL(4, 0, R9, Y11)
	Q6KCOL(4, 0, R10, Y12)
	Q6KCOL(4, 0, R11, Y13)
	DECODEQ6KHALF(64, 160, nib<>(SB), hi2<>(SB))
	Q6KCOL(132, 128, R8, Y10)
	Q6KCOL(132, 128, R9, Y11)
	Q6KCOL(132, 128, R10, Y12)
	Q6KCOL(132, 128, R11, Y13)
	Q6KFIN(R8, Y10, Y0)
	Q6KFIN(R9, Y11, Y1)
	Q6KFIN(R10, Y12, Y2)
	Q6KFIN(R11, Y13, Y3)
	ADDQ  $210, SI
	Q8KNEXT4
	DECQ  CX
	JMP   q6kx4loop

q6kx4done:
	X4END

// func dotQ3_KAVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ3_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0

q3kloop:
	TESTQ       CX, CX
	JZ          q3kdone
	Q3KSCALES
	VMOVDQU     260(DI), Y13
	VPMADDWD    Y14, Y13, Y13
	VPXOR       Y10, Y10, Y10
	VMOVDQU     0(SI), Y12
	Q3KHALF(32, 4, 0, VPSLLW $2, VPSLLW $1, VPSLLW $0, VPSRLW $1)
	Q3KHALF(64, 132, 64, VPSRLW $2, VPSRLW $3, VPSRLW $4, VPSRLW $5)
	VPSLLD      $2, Y13, Y13
	VPSUBD      Y13, Y10, Y10
	VCVTDQ2PS   Y10, Y10
	FP16MUL(108(SI), 0(DI), X6, Y6)
	VFMADD231PS Y6, Y10, Y0
	ADDQ        $110, SI
	ADDQ        $292, DI
	DECQ        CX
	JMP         q3kloop

q3kdone:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET
