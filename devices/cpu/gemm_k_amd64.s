//go:build !purego

#include "dot_amd64.h"

// Register tiles of Q4_K weights (Q5_K's, packed to the same layout, and
// Q6_K's, below) against Q8_K columns, both rewritten for the tile first
// (plainGemm's pack): a run of rows by four columns per call, a row at a
// time, every output bit for bit what dotQ4_KAVX2 (dot_k_amd64.s) gives
// it.
//
// dotQ4_KAVX2 adds to lane j of a super-block's integer sums, for each
// 64-element chunk k, sc[2k] times the four products of its low nibbles
// 4j..4j+3 with the activations 64k+4j.. and sc[2k+1] times those of the
// high nibbles with 64k+32+4j..: two VPMADDUBSW, two VPMADDWD and two
// VPADDD per chunk and column. The packed layouts put, in 32 bytes A, the
// pairs 4j, 4j+1 of the low and of the high half side by side in dword j,
// and the pairs 4j+2, 4j+3 in B: one VPMADDUBSW of each, a VPADDW (four
// products of at most 15*128 each: no int16 overflow) and one VPMADDWD by
// the word pair (sc[2k], sc[2k+1]) give lane j the same integer, with a
// quarter fewer multiplies and nothing to unpack per column. The float
// part per super-block is Q4KFIN's: the same products d*dy and dmin*dy,
// the same FMA into the same eight lanes, the same minimums' accumulator
// (K4MINS), the same sums at the end.
//
// A packed Q4_K super-block (320 bytes): the four chunks' A and B at 64k
// and 64k+32 (levels as bytes), the eight scales as words at 256, the
// minimums as words, each twice (DECODEQ4K's Y14), at 272, d and dmin as
// floats at 304. A packed Q8_K block is a Q8_K block with each chunk's 64
// quants in the same A, B order.

// QPAIRS makes A and B of the 32 low-half bytes L and the high-half H of
// one chunk, using T.
#define QPAIRS(L, H, T, A, B) \
	VPSLLD   $16, H, T;   \
	VPBLENDW $0xaa, T, L, A; \
	VPSRLD   $16, L, T;   \
	VPBLENDW $0xaa, H, T, B

// PACKCHUNK packs chunk k of the super-block at SI (32 bytes of nibbles at
// off) to dst(DI) and dst+32(DI); FIFTH adds Q5_K's fifth bits to the low
// (Y1) and high (Y2) levels, or nothing.
#define PACKCHUNK(off, dst, FIFTH) \
	VMOVDQU off(SI), Y1;        \
	VPSRLW  $4, Y1, Y2;         \
	VPAND   Y0, Y1, Y1;         \
	VPAND   Y0, Y2, Y2;         \
	FIFTH;                      \
	QPAIRS(Y1, Y2, Y3, Y4, Y5); \
	VMOVDQU Y4, dst(DI);        \
	VMOVDQU Y5, dst+32(DI)

#define NOFIFTH

// FIFTH5 is FIFTH5K (dot_k_amd64.s) on Y1 and Y2.
#define FIFTH5(SHLO, SHHI) \
	VMOVDQU 16(SI), Y6;         \
	SHLO, Y6, Y7;               \
	VPAND   hi10<>(SB), Y7, Y7; \
	VPOR    Y7, Y1, Y1;         \
	SHHI, Y6, Y6;               \
	VPAND   hi10<>(SB), Y6, Y6; \
	VPOR    Y6, Y2, Y2

#define Q4PC0 PACKCHUNK(16, 0, NOFIFTH)
#define Q4PC1 PACKCHUNK(48, 64, NOFIFTH)
#define Q4PC2 PACKCHUNK(80, 128, NOFIFTH)
#define Q4PC3 PACKCHUNK(112, 192, NOFIFTH)
#define Q5F0 FIFTH5(VPSLLW $4, VPSLLW $3)
#define Q5F1 FIFTH5(VPSLLW $2, VPSLLW $1)
#define Q5F2 FIFTH5(VPSLLW $0, VPSRLW $1)
#define Q5F3 FIFTH5(VPSRLW $2, VPSRLW $3)
#define Q5PC0 PACKCHUNK(48, 0, Q5F0)
#define Q5PC1 PACKCHUNK(80, 64, Q5F1)
#define Q5PC2 PACKCHUNK(112, 128, Q5F2)
#define Q5PC3 PACKCHUNK(144, 192, Q5F3)

// PACKK4 is the body of packQ4_KAVX2 and packQ5_KAVX2: rows of
// super-blocks of XB bytes whose chunks C0..C3 pack.
#define PACKK4(C0, C1, C2, C3, XB) \
	MOVQ    dst+0(FP), DI;                 \
	MOVQ    src+8(FP), R8;                 \
	MOVQ    stride+16(FP), DX;             \
	MOVQ    nrows+24(FP), BX;              \
	VMOVDQU nib<>(SB), Y0;                 \
row:                                       \
	TESTQ BX, BX;                          \
	JZ    done;                            \
	MOVQ  R8, SI;                          \
	MOVQ  steps+32(FP), CX;                \
block:                                     \
	TESTQ      CX, CX;                     \
	JZ         next;                       \
	Q4KSCALEBYTES;                         \
	VPMOVZXBW  X4, Y4;                     \
	VMOVDQU    X4, 256(DI);                \
	VPERMQ     $0xfa, Y4, Y4;              \
	VPUNPCKLWD Y4, Y4, Y4;                 \
	VMOVDQU    Y4, 272(DI);                \
	VMOVD      0(SI), X6;                  \
	VCVTPH2PS  X6, X6;                     \
	VMOVSD     X6, 304(DI);                \
	MOVQ       $0, 312(DI);                \
	C0;                                    \
	C1;                                    \
	C2;                                    \
	C3;                                    \
	ADDQ       $XB, SI;                    \
	ADDQ       $320, DI;                   \
	DECQ       CX;                         \
	JMP        block;                      \
next:                                      \
	ADDQ DX, R8;                           \
	DECQ BX;                               \
	JMP  row;                              \
done:                                      \
	VZEROUPPER;                            \
	RET

// PERMCHUNK rewrites the chunk of 64 quants at off(SI) to off(DI).
#define PERMCHUNK(off) \
	VMOVDQU off(SI), Y1;        \
	VMOVDQU off+32(SI), Y2;     \
	QPAIRS(Y1, Y2, Y3, Y4, Y5); \
	VMOVDQU Y4, off(DI);        \
	VMOVDQU Y5, off+32(DI)

// Registers of the tiles: SI the packed row's super-block, R8..R11 the
// packed columns', CX the super-blocks left; Y0..Y3 the columns' float
// lanes, Y4..Y7 their integer sums, Y12, Y13 a chunk's A and B, Y14 its
// scale pairs, Y8, Y15 products. Stack: 0(SP) the products d*dy_c, 16(SP)
// (Q4_K) the products dmin*dy_c, 32(SP)..80(SP) (Q4_K) the columns'
// minimums' accumulators.

// PCOL adds chunk k (A and B at yo and yo+32 of column YP) to ISUM;
// PCOL0 sets ISUM to chunk 0's (the super-block's first).
#define PCOL0(yo, YP, ISUM) \
	VPMADDUBSW yo(YP), Y12, Y15;   \
	VPMADDUBSW yo+32(YP), Y13, Y8; \
	VPADDW     Y8, Y15, Y15;       \
	VPMADDWD   Y14, Y15, ISUM

#define PCOL(yo, YP, ISUM) \
	PCOL0(yo, YP, Y15); \
	VPADDD Y15, ISUM, ISUM

// PCHUNK adds chunk k (k64 = 64k) of the packed row to the four columns'
// sums with COL (PCOL, or PCOL0 for the first), its scale pairs loaded
// into Y14 by SLOAD (an instruction and its source).
#define PCHUNK(k64, SLOAD, COL) \
	VMOVDQU k64(SI), Y12;    \
	VMOVDQU k64+32(SI), Y13; \
	SLOAD, Y14;              \
	COL(4+k64, R8, Y4);      \
	COL(4+k64, R9, Y5);      \
	COL(4+k64, R10, Y6);     \
	COL(4+k64, R11, Y7)

// PSCALE stores at st(SP) the products of the float d at src with the
// four column scales in X9 (the products the vec_dot kernels make).
#define PSCALE(src, st) \
	VBROADCASTSS src, X11;  \
	VMULPS       X9, X11, X11; \
	VMOVUPS      X11, st(SP)

// Q4_K: d and dmin at 304, the scale pairs at 256+4k, the minimums at
// 272; PFINQ4K is Q4KFIN for column YP (c4 = 4c, ISUMX the low half of
// ISUM, its minimums at M(SP)).
#define PSETQ4K \
	PSCALE(304(SI), 0); \
	PSCALE(308(SI), 16)

#define PCHUNKSQ4K \
	PCHUNK(0, VPBROADCASTD 256(SI), PCOL0);  \
	PCHUNK(64, VPBROADCASTD 260(SI), PCOL);  \
	PCHUNK(128, VPBROADCASTD 264(SI), PCOL); \
	PCHUNK(192, VPBROADCASTD 268(SI), PCOL)

#define PFINQ4K(YP, ISUM, ISUMX, ACC, c4, M) \
	VCVTDQ2PS    ISUM, ISUM;          \
	VBROADCASTSS c4(SP), Y15;         \
	VFMADD231PS  Y15, ISUM, ACC;      \
	VMOVDQU      260(YP), ISUM;       \
	VPMADDWD     272(SI), ISUM, ISUM; \
	VBROADCASTSS 16+c4(SP), X15;      \
	K4MINS(ISUM, ISUMX, X15, X8, M(SP))

// Q6_K: d at 416, the scale pairs of chunk k at 256+32k, the sixteen
// scales as words at 384; PFINQ6K is Q6KFIN for column YP.
#define PSETQ6K PSCALE(416(SI), 0)

#define PCHUNKSQ6K \
	PCHUNK(0, VMOVDQU 256(SI), PCOL0);  \
	PCHUNK(64, VMOVDQU 288(SI), PCOL);  \
	PCHUNK(128, VMOVDQU 320(SI), PCOL); \
	PCHUNK(192, VMOVDQU 352(SI), PCOL)

#define PFINQ6K(YP, ISUM, ISUMX, ACC, c4, M) \
	VMOVDQU  260(YP), Y8;     \
	VPMADDWD 384(SI), Y8, Y8; \
	Q6KFOLD(Y8, Y15, c4(SP), ISUM, ACC)

// POUT stores X into the float at 0(P)(R13*1).
#define POUT(X, P) VMOVSS X, (P)(R13*1)

// PTILE is the body of a packed tile over nrows rows of super-blocks of XB
// bytes (stride bytes apart): DI the row, R12 the rows left, R13 four
// times the row index (the outputs' offset), DX the column pointers; RED
// reduces each row's accumulators into X0..X3.
#define PTILE(SETUP, CHUNKS, FIN, XB, RED) \
	MOVQ   x+8(FP), DI;                 \
	MOVQ   nrows+24(FP), R12;           \
	XORQ   R13, R13;                    \
	MOVQ   y+32(FP), DX;                \
rows:                                   \
	TESTQ  R12, R12;                    \
	JZ     rowsdone;                    \
	MOVQ   steps+0(FP), CX;             \
	MOVQ   DI, SI;                      \
	YCOLS4;                             \
	CLEAR4;                             \
loop:                                   \
	TESTQ     CX, CX;                   \
	JZ        done;                     \
	VMOVSS    0(R8), X9;                \
	VINSERTPS $0x10, 0(R9), X9, X9;     \
	VINSERTPS $0x20, 0(R10), X9, X9;    \
	VINSERTPS $0x30, 0(R11), X9, X9;    \
	SETUP;                              \
	CHUNKS;                             \
	FIN(R8, Y4, X4, Y0, 0, 32);         \
	FIN(R9, Y5, X5, Y1, 4, 48);         \
	FIN(R10, Y6, X6, Y2, 8, 64);        \
	FIN(R11, Y7, X7, Y3, 12, 80);       \
	ADDQ      $XB, SI;                  \
	Q8KNEXT4;                           \
	DECQ      CX;                       \
	JMP       loop;                     \
done:                                   \
	RED;                                \
	MOVQ out+40(FP), BX;                \
	MOVQ 0(BX), AX;                     \
	POUT(X0, AX);                       \
	MOVQ 8(BX), AX;                     \
	POUT(X1, AX);                       \
	MOVQ 16(BX), AX;                    \
	POUT(X2, AX);                       \
	MOVQ 24(BX), AX;                    \
	POUT(X3, AX);                       \
	ADDQ stride+16(FP), DI;             \
	ADDQ $4, R13;                       \
	DECQ R12;                           \
	JMP  rows;                          \
rowsdone:                               \
	VZEROUPPER;                         \
	RET

// q6pair+16p(SB) picks, from the sixteen Q6_K scales, the bytes of chunk
// p's scale pairs before their sign extension to words: sc[4p] and
// sc[4p+2] four times (dwords 0..3, elements 4j.. of the first sixteen of
// each step), then sc[4p+1] and sc[4p+3] four times (the second sixteen).
DATA q6pair<>+0(SB)/8, $0x0200020002000200
DATA q6pair<>+8(SB)/8, $0x0301030103010301
DATA q6pair<>+16(SB)/8, $0x0604060406040604
DATA q6pair<>+24(SB)/8, $0x0705070507050705
DATA q6pair<>+32(SB)/8, $0x0a080a080a080a08
DATA q6pair<>+40(SB)/8, $0x0b090b090b090b09
DATA q6pair<>+48(SB)/8, $0x0e0c0e0c0e0c0e0c
DATA q6pair<>+56(SB)/8, $0x0f0d0f0d0f0d0f0d
GLOBL q6pair<>(SB), RODATA|NOPTR, $64

// Q6PAIRS stores chunk p's scale pairs (m = 16p) at dst(DI), from the
// scales in X15, using X6 and Y6.
#define Q6PAIRS(m, dst) \
	VPSHUFB   q6pair<>+m(SB), X15, X6; \
	VPMOVSXBW X6, Y6;                  \
	VMOVDQU   Y6, dst(DI)

// PACK6 stores the A and B of the chunk of levels L (low half) and H.
#define PACK6(L, H, dst) \
	QPAIRS(L, H, Y6, Y10, Y11); \
	VMOVDQU Y10, dst(DI);       \
	VMOVDQU Y11, dst+32(DI)

// A packed Q6_K super-block (448 bytes): the four chunks' A and B at 64k
// and 64k+32 (levels 0..63 as bytes: the offset of 32 goes through the
// bsums, as in dotQ6_KAVX2; four products of at most 63*128 sum to 32256
// at most, still an int16), the scale pairs of chunk k as words at
// 256+32k, the sixteen scales as words at 384, d as a float at 416. A
// chunk is two of dotQ6_KAVX2's 32-element steps, each with its own scale
// for its first and second sixteen elements, which q6pair pairs up.

// func packQ4_KAVX2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)
TEXT ·packQ4_KAVX2(SB), NOSPLIT, $0-40
	PACKK4(Q4PC0, Q4PC1, Q4PC2, Q4PC3, 144)

// func packQ5_KAVX2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)
TEXT ·packQ5_KAVX2(SB), NOSPLIT, $0-40
	PACKK4(Q5PC0, Q5PC1, Q5PC2, Q5PC3, 176)

// func packQ8_KAVX2(dst, src unsafe.Pointer, steps int)
TEXT ·packQ8_KAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ steps+16(FP), CX

p8block:
	TESTQ   CX, CX
	JZ      p8done
	MOVL    0(SI), AX
	MOVL    AX, 0(DI)
	PERMCHUNK(4)
	PERMCHUNK(68)
	PERMCHUNK(132)
	PERMCHUNK(196)
	VMOVDQU 260(SI), Y1
	VMOVDQU Y1, 260(DI)
	ADDQ    $292, SI
	ADDQ    $292, DI
	DECQ    CX
	JMP     p8block

p8done:
	VZEROUPPER
	RET

// func gemmQ4_KPx4AVX2(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)
TEXT ·gemmQ4_KPx4AVX2(SB), NOSPLIT, $96-48
	K4MCLEAR(32)
	PTILE(PSETQ4K, PCHUNKSQ4K, PFINQ4K, 320, K4MSUM4(32))

// func gemmQ6_KPx4AVX2(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)
TEXT ·gemmQ6_KPx4AVX2(SB), NOSPLIT, $16-48
	PTILE(PSETQ6K, PCHUNKSQ6K, PFINQ6K, 448, HSUM4)

// func packQ6_KAVX2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)
TEXT ·packQ6_KAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), R8
	MOVQ stride+16(FP), DX
	MOVQ nrows+24(FP), BX

p6row:
	TESTQ BX, BX
	JZ    p6done
	MOVQ  R8, SI
	MOVQ  steps+32(FP), CX

p6block:
	TESTQ     CX, CX
	JZ        p6next
	Q6KSCALES
	VMOVDQU   Y14, 384(DI)
	Q6PAIRS(0, 256)
	Q6PAIRS(16, 288)
	Q6PAIRS(32, 320)
	Q6PAIRS(48, 352)
	MOVWLZX   208(SI), AX
	VMOVD     AX, X6
	VCVTPH2PS X6, X6
	VMOVSS    X6, 416(DI)
	MOVL      $0, 420(DI)
	MOVQ      $0, 424(DI)
	MOVQ      $0, 432(DI)
	MOVQ      $0, 440(DI)
	DECODEQ6KHALF(0, 128, nib<>(SB), hi2<>(SB))
	PACK6(Y8, Y9, 0)
	PACK6(Y4, Y5, 64)
	DECODEQ6KHALF(64, 160, nib<>(SB), hi2<>(SB))
	PACK6(Y8, Y9, 128)
	PACK6(Y4, Y5, 192)
	ADDQ      $210, SI
	ADDQ      $448, DI
	DECQ      CX
	JMP       p6block

p6next:
	ADDQ DX, R8
	DECQ BX
	JMP  p6row

p6done:
	VZEROUPPER
	RET
