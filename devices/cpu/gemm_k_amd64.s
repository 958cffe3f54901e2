//go:build !purego

#include "dot_amd64.h"

// Register tiles of Q4_K weights against Q8_K columns, both rewritten for
// the tile first (plainGemm's pack): one row by four columns per call,
// every output bit for bit what dotQ4_KAVX2 (dot_k_amd64.s) gives it.
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
// the same FMA and FNMADD into the same eight lanes, the same HSUM.
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

// PACKCHUNK packs chunk k of the super-block at SI (32 bytes at off) to
// dst(DI) and dst+32(DI).
#define PACKCHUNK(off, dst) \
	VMOVDQU off(SI), Y1;      \
	VPSRLW  $4, Y1, Y2;       \
	VPAND   Y0, Y1, Y1;       \
	VPAND   Y0, Y2, Y2;       \
	QPAIRS(Y1, Y2, Y3, Y4, Y5); \
	VMOVDQU Y4, dst(DI);      \
	VMOVDQU Y5, dst+32(DI)

// func packQ4_KAVX2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)
TEXT ·packQ4_KAVX2(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), R8
	MOVQ    stride+16(FP), DX
	MOVQ    nrows+24(FP), BX
	VMOVDQU nib<>(SB), Y0

pkrow:
	TESTQ BX, BX
	JZ    pkdone
	MOVQ  R8, SI
	MOVQ  steps+32(FP), CX

pkblock:
	TESTQ      CX, CX
	JZ         pknext
	VMOVDQU    4(SI), X6
	VPSHUFB    q4kshufa<>(SB), X6, X7
	VPSHUFB    q4kshufb<>(SB), X6, X6
	VPAND      q4kmask1<>(SB), X7, X4
	VPSRLW     $4, X7, X7
	VPAND      q4kmask2<>(SB), X7, X7
	VPOR       X7, X4, X4
	VPSRLW     $2, X6, X6
	VPAND      q4kmask3<>(SB), X6, X6
	VPOR       X6, X4, X4
	VPMOVZXBW  X4, Y4
	VMOVDQU    X4, 256(DI)
	VPERMQ     $0xfa, Y4, Y4
	VPUNPCKLWD Y4, Y4, Y4
	VMOVDQU    Y4, 272(DI)
	VMOVD      0(SI), X6
	VCVTPH2PS  X6, X6
	VMOVSD     X6, 304(DI)
	MOVQ       $0, 312(DI)
	PACKCHUNK(16, 0)
	PACKCHUNK(48, 64)
	PACKCHUNK(80, 128)
	PACKCHUNK(112, 192)
	ADDQ       $144, SI
	ADDQ       $320, DI
	DECQ       CX
	JMP        pkblock

pknext:
	ADDQ DX, R8
	DECQ BX
	JMP  pkrow

pkdone:
	VZEROUPPER
	RET

// PERMCHUNK rewrites the chunk of 64 quants at off(SI) to off(DI).
#define PERMCHUNK(off) \
	VMOVDQU off(SI), Y1;        \
	VMOVDQU off+32(SI), Y2;     \
	QPAIRS(Y1, Y2, Y3, Y4, Y5); \
	VMOVDQU Y4, off(DI);        \
	VMOVDQU Y5, off+32(DI)

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

// Registers of the tile: SI the packed row's super-block, R8..R11 the
// packed columns', CX the super-blocks left; Y0..Y3 the columns' float
// lanes, Y4..Y7 their integer sums, Y12, Y13 a chunk's A and B, Y14 its
// scale pair, Y8, Y15 products. Stack: 0(SP) the products d*dy_c, 16(SP)
// the products dmin*dy_c.

// PCOL adds chunk k (A and B at yo and yo+32 of column YP) to ISUM.
#define PCOL(yo, YP, ISUM) \
	VPMADDUBSW yo(YP), Y12, Y15;    \
	VPMADDUBSW yo+32(YP), Y13, Y8;  \
	VPADDW     Y8, Y15, Y15;        \
	VPMADDWD   Y14, Y15, Y15;       \
	VPADDD     Y15, ISUM, ISUM

#define PCHUNK(k64, k4) \
	VMOVDQU      k64(SI), Y12;    \
	VMOVDQU      k64+32(SI), Y13; \
	VPBROADCASTD 256+k4(SI), Y14; \
	PCOL(4+k64, R8, Y4);          \
	PCOL(4+k64, R9, Y5);          \
	PCOL(4+k64, R10, Y6);         \
	PCOL(4+k64, R11, Y7)

// PFIN folds column YP's super-block into ACC as Q4KFIN does (c4 = 4c).
#define PFIN(YP, ISUM, ACC, c4) \
	VCVTDQ2PS    ISUM, ISUM;          \
	VBROADCASTSS c4(SP), Y15;         \
	VFMADD231PS  Y15, ISUM, ACC;      \
	VMOVDQU      260(YP), ISUM;       \
	VPMADDWD     272(SI), ISUM, ISUM; \
	VCVTDQ2PS    ISUM, ISUM;          \
	VBROADCASTSS 16+c4(SP), Y15;      \
	VFNMADD231PS Y15, ISUM, ACC

// POUT reduces ACC into the float at 0(P).
#define POUT(ACC, X, P) \
	HSUM(ACC, X, X15); \
	VMOVSS X, 0(P)

// func gemmQ4_KPx1x4AVX2(steps int, x unsafe.Pointer, stride uintptr, y, out *[gemmMaxCols]unsafe.Pointer)
TEXT ·gemmQ4_KPx1x4AVX2(SB), NOSPLIT, $32-40
	MOVQ   steps+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+24(FP), DX
	MOVQ   0(DX), R8
	MOVQ   8(DX), R9
	MOVQ   16(DX), R10
	MOVQ   24(DX), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

ploop:
	TESTQ        CX, CX
	JZ           pdone
	VMOVSS       0(R8), X9
	VINSERTPS    $0x10, 0(R9), X9, X9
	VINSERTPS    $0x20, 0(R10), X9, X9
	VINSERTPS    $0x30, 0(R11), X9, X9
	VMOVSD       304(SI), X10
	VBROADCASTSS X10, X11
	VMULPS       X9, X11, X11
	VMOVUPS      X11, 0(SP)
	VMOVSHDUP    X10, X11
	VBROADCASTSS X11, X11
	VMULPS       X9, X11, X11
	VMOVUPS      X11, 16(SP)
	VPXOR        Y4, Y4, Y4
	VPXOR        Y5, Y5, Y5
	VPXOR        Y6, Y6, Y6
	VPXOR        Y7, Y7, Y7
	PCHUNK(0, 0)
	PCHUNK(64, 4)
	PCHUNK(128, 8)
	PCHUNK(192, 12)
	PFIN(R8, Y4, Y0, 0)
	PFIN(R9, Y5, Y1, 4)
	PFIN(R10, Y6, Y2, 8)
	PFIN(R11, Y7, Y3, 12)
	ADDQ         $320, SI
	ADDQ         $292, R8
	ADDQ         $292, R9
	ADDQ         $292, R10
	ADDQ         $292, R11
	DECQ         CX
	JMP          ploop

pdone:
	MOVQ out+32(FP), DX
	MOVQ 0(DX), AX
	POUT(Y0, X0, AX)
	MOVQ 8(DX), AX
	POUT(Y1, X1, AX)
	MOVQ 16(DX), AX
	POUT(Y2, X2, AX)
	MOVQ 24(DX), AX
	POUT(Y3, X3, AX)
	VZEROUPPER
	RET
