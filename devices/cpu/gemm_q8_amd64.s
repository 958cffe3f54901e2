//go:build !purego

#include "textflag.h"

// The avx512vnni level's exact register tile of Q8_0 weights against Q8_0
// columns (plainGemm's pack): eight rows by four columns per step, every output bit for bit what
// dotQ8_0AVX2 gives it, which is ggml's haswell build's (its vec_dot and
// llamafile_sgemm's tinyBLAS_Q0_AVX alike): per block the eight int32 sums
// of four products each (lane j the bytes 4j..4j+3), as floats, times the
// float product of the two scales, added into eight lanes by one FMA, block
// after block from zero; then HSUM's ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)).
//
// The integers are exact however they are computed, so the tile takes
// them from VPDPBUSD with the weights biased to unsigned (x+128, stored so
// by the row packer) and a correction of -128 times each lane's four
// activations (stored by the column packer) as the sum's start (ggml's
// |x| times y*sign(x) is the same integer wherever y is not -128, which no
// Q8_0 quantizer writes). A 512-bit
// register holds two outputs' eight lanes: rows 2p and 2p+1 of one column,
// whose packed blocks lie side by side, against the column's block in both
// halves. Only the float steps are laid out for the bits: the scale product
// per output (one VMULPS of the rows' scales by the column's), the FMA, and
// the final sums, whose additions group the lanes exactly as HSUM does
// (IEEE addition is commutative, so only the grouping matters).
//
// A packed pair of rows is, per block (128 bytes): row 2p's 32 quants xor
// 0x80, row 2p+1's, then row 2p's scale as a float eight times and row
// 2p+1's. A packed column is its scales as floats (4 bytes a block, padded
// to 64), then per block (64 bytes) its 32 quants and the eight int32
// corrections.

DATA q8b80<>+0(SB)/8, $0x8080808080808080
DATA q8b80<>+8(SB)/8, $0x8080808080808080
DATA q8b80<>+16(SB)/8, $0x8080808080808080
DATA q8b80<>+24(SB)/8, $0x8080808080808080
GLOBL q8b80<>(SB), RODATA|NOPTR, $32

DATA q8neg1<>+0(SB)/8, $0xffffffffffffffff
DATA q8neg1<>+8(SB)/8, $0xffffffffffffffff
DATA q8neg1<>+16(SB)/8, $0xffffffffffffffff
DATA q8neg1<>+24(SB)/8, $0xffffffffffffffff
GLOBL q8neg1<>(SB), RODATA|NOPTR, $32

// q8perm orders the sixteen sums of two columns (QSUM2's element 4k+j:
// j = 0 row k of the first, 1 row k+4, 2 and 3 the same of the second)
// as the first column's rows 0..7, then the second's.
DATA q8perm<>+0(SB)/8, $0x0000000400000000
DATA q8perm<>+8(SB)/8, $0x0000000c00000008
DATA q8perm<>+16(SB)/8, $0x0000000500000001
DATA q8perm<>+24(SB)/8, $0x0000000d00000009
DATA q8perm<>+32(SB)/8, $0x0000000600000002
DATA q8perm<>+40(SB)/8, $0x0000000e0000000a
DATA q8perm<>+48(SB)/8, $0x0000000700000003
DATA q8perm<>+56(SB)/8, $0x0000000f0000000b
GLOBL q8perm<>(SB), RODATA|NOPTR, $64

// func packQ8_0P2AVX2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)
TEXT ·packQ8_0P2AVX2(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    stride+16(FP), DX
	MOVQ    nrows+24(FP), BX
	MOVQ    steps+32(FP), R9
	TESTQ   R9, R9
	JZ      pdone
	VMOVDQU q8b80<>(SB), Y15

ppair:
	CMPQ BX, $2
	JLT  pdone
	MOVQ SI, R8
	LEAQ (SI)(DX*1), R10
	MOVQ R9, CX

pblock:
	VPXOR        2(R8), Y15, Y0
	VPXOR        2(R10), Y15, Y1
	VMOVDQU      Y0, 0(DI)
	VMOVDQU      Y1, 32(DI)
	MOVWLZX      0(R8), AX
	VMOVD        AX, X2
	VCVTPH2PS    X2, X2
	VBROADCASTSS X2, Y2
	MOVWLZX      0(R10), AX
	VMOVD        AX, X3
	VCVTPH2PS    X3, X3
	VBROADCASTSS X3, Y3
	VMOVUPS      Y2, 64(DI)
	VMOVUPS      Y3, 96(DI)
	ADDQ         $34, R8
	ADDQ         $34, R10
	ADDQ         $128, DI
	DECQ         CX
	JNZ          pblock
	LEAQ         (SI)(DX*2), SI
	SUBQ         $2, BX
	JMP          ppair

pdone:
	VZEROUPPER
	RET

// func packQ8_0ColAVX2(dst, src unsafe.Pointer, steps int)
TEXT ·packQ8_0ColAVX2(SB), NOSPLIT, $0-24
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    steps+16(FP), CX
	TESTQ   CX, CX
	JZ      cdone
	VMOVDQU q8b80<>(SB), Y15
	VMOVDQU q8neg1<>(SB), Y14
	MOVQ    DI, R8                // the scales
	MOVQ    CX, AX
	SHLQ    $2, AX
	ADDQ    $63, AX
	ANDQ    $-64, AX
	ADDQ    AX, DI                // the blocks

cblock:
	VMOVDQU    2(SI), Y0
	VMOVDQU    Y0, 0(DI)
	VPMADDUBSW Y0, Y15, Y1       // 128(y0+y1): at most 32512, at least -32768
	VPMADDWD   Y14, Y1, Y1       // -128 times the four
	VMOVDQU    Y1, 32(DI)
	MOVWLZX    0(SI), AX
	VMOVD      AX, X2
	VCVTPH2PS  X2, X2
	VMOVSS     X2, 0(R8)
	ADDQ       $34, SI
	ADDQ       $64, DI
	ADDQ       $4, R8
	DECQ       CX
	JNZ        cblock

cdone:
	VZEROUPPER
	RET

// Q8PAIR adds one block of a column (its blocks at CB, its quants in Z24,
// its scale at SC) into the accumulator A of a pair of rows (biased quants
// XP, scales XD): the integers start from the column's correction and gain
// XP times Z24 (VPDPBUSD), become floats, and are added times XD times the
// column's scale (VMULPS, then the FMA).
#define Q8PAIR(CB, SC, XP, XD, A) \
	VBROADCASTI64X4 32(CB)(R12*1), Z25; \
	VPDPBUSD        Z24, XP, Z25;       \
	VCVTDQ2PS       Z25, Z25;           \
	VMULPS.BCST     SC, XD, Z26;        \
	VFMADD231PS     Z26, Z25, A

// Q8COL adds one block of a column into the four pairs' accumulators
// A0..A3, the pairs' blocks in Z16..Z19 and Z20..Z23.
#define Q8COL(CB, SC, A0, A1, A2, A3) \
	VBROADCASTI64X4 (CB)(R12*1), Z24;  \
	Q8PAIR(CB, SC, Z16, Z20, A0);      \
	Q8PAIR(CB, SC, Z17, Z21, A1);      \
	Q8PAIR(CB, SC, Z18, Z22, A2);      \
	Q8PAIR(CB, SC, Z19, Z23, A3)

// QSUM1 sets W to one column's rows 0..3 (from the pairs' accumulators
// A0, A1) or 4..7 in its four 128-bit lanes, each lane i the sum of the
// row's lanes i and i+4 (HSUM's first step), using T.
#define QSUM1(A0, A1, T, W) \
	VSHUFF32X4 $0x88, A1, A0, T; \
	VSHUFF32X4 $0xdd, A1, A0, W; \
	VADDPS     W, T, W

// QSUMCOL sets X to a column's eight rows from its pairs' accumulators:
// 128-bit lane k holds rows k and k+4, each as the sums of its lanes
// (0, 2) and (1, 3) of QSUM1 (HSUM's second step), using T, U, V.
#define QSUMCOL(A0, A1, A2, A3, T, U, V, X) \
	QSUM1(A0, A1, T, U);      \
	QSUM1(A2, A3, T, V);      \
	VSHUFPS $0x44, V, U, T;   \
	VSHUFPS $0xee, V, U, X;   \
	VADDPS  X, T, X

// QSUM2 finishes two columns' rows (QSUMCOL's C and D, HSUM's last step)
// and stores them to the outputs at OC and OD (plus R13), using T and U.
#define QSUM2(C, D, T, U, YT, YU, OC, OD) \
	VSHUFPS       $0x88, D, C, T;  \
	VSHUFPS       $0xdd, D, C, U;  \
	VADDPS        U, T, T;         \
	VPERMPS       T, Z31, T;       \
	MOVQ          OC, R14;         \
	VMOVUPS       YT, (R14)(R13*1); \
	VEXTRACTF64X4 $1, T, YU;       \
	MOVQ          OD, R14;         \
	VMOVUPS       YU, (R14)(R13*1)

// func gemmQ8_0P8x4VNNI(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)
TEXT ·gemmQ8_0P8x4VNNI(SB), NOSPLIT, $16-48
	MOVQ      steps+0(FP), CX
	MOVQ      nrows+24(FP), BX
	SHRQ      $3, BX
	TESTQ     CX, CX
	JZ        tdone
	TESTQ     BX, BX
	JZ        tdone
	VMOVDQU64 q8perm<>(SB), Z31
	MOVQ      CX, AX
	SHLQ      $2, AX
	ADDQ      $63, AX
	ANDQ      $-64, AX            // the bytes of a column's scales
	MOVQ      AX, R13
	NEGQ      R13
	MOVQ      R13, 8(SP)          // the scales from a column's blocks
	MOVQ      y+32(FP), DI
	MOVQ      0(DI), R8
	MOVQ      8(DI), R9
	MOVQ      16(DI), R10
	MOVQ      24(DI), R11
	ADDQ      AX, R8
	ADDQ      AX, R9
	ADDQ      AX, R10
	ADDQ      AX, R11
	MOVQ      $0, 0(SP)           // the group's output offset
	MOVQ      stride+16(FP), DX
	SHLQ      $1, DX              // a pair of rows
	MOVQ      x+8(FP), SI

tgroup:
	LEAQ   (SI)(DX*1), R14
	LEAQ   (SI)(DX*2), AX
	LEAQ   (R14)(DX*2), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	XORQ   R12, R12
	MOVQ   8(SP), R13
	MOVQ   steps+0(FP), CX

tblock:
	VMOVDQU64 (SI)(R12*2), Z16
	VMOVUPS   64(SI)(R12*2), Z20
	VMOVDQU64 (R14)(R12*2), Z17
	VMOVUPS   64(R14)(R12*2), Z21
	VMOVDQU64 (AX)(R12*2), Z18
	VMOVUPS   64(AX)(R12*2), Z22
	VMOVDQU64 (DI)(R12*2), Z19
	VMOVUPS   64(DI)(R12*2), Z23
	Q8COL(R8, (R8)(R13*1), Z0, Z4, Z8, Z12)
	Q8COL(R9, (R9)(R13*1), Z1, Z5, Z9, Z13)
	Q8COL(R10, (R10)(R13*1), Z2, Z6, Z10, Z14)
	Q8COL(R11, (R11)(R13*1), Z3, Z7, Z11, Z15)
	ADDQ      $64, R12
	ADDQ      $4, R13
	DECQ      CX
	JNZ       tblock

	QSUMCOL(Z0, Z4, Z8, Z12, Z16, Z17, Z18, Z24)
	QSUMCOL(Z1, Z5, Z9, Z13, Z16, Z17, Z18, Z25)
	QSUMCOL(Z2, Z6, Z10, Z14, Z16, Z17, Z18, Z26)
	QSUMCOL(Z3, Z7, Z11, Z15, Z16, Z17, Z18, Z27)
	MOVQ      out+40(FP), DI
	MOVQ      0(SP), R13
	QSUM2(Z24, Z25, Z16, Z17, Y16, Y17, 0(DI), 8(DI))
	QSUM2(Z26, Z27, Z16, Z17, Y16, Y17, 16(DI), 24(DI))
	ADDQ      $32, 0(SP)
	LEAQ      (SI)(DX*4), SI
	DECQ      BX
	JNZ       tgroup

tdone:
	VZEROUPPER
	RET
