//go:build !purego

#include "dot_amd64.h"

// Repacked Q4_0 (eight rows interleaved, repack_layouts.go) against Q8_0
// activations with their aux rows (float32 dy, int32 8*sum per block).
// The eight rows sit in the eight lanes: a chunk's low or high nibbles
// (unsigned, 0..15) meet four activation bytes broadcast to every lane in
// one VPMADDUBSW, the block's eight products add up in 16 bits (each at
// most 2*15*128, eight of them below 32768), one VPMADDWD makes them 32-bit
// sums per row, and subtracting 8*sum(y) removes Q4_0's offset of 8
// exactly. Then acc += float(isum) * (d[r] * dy), one FMA for eight rows.

// Q4X8DECODE loads block 0(SI): the rows' scales as floats into Y8, the
// nibbles of chunk j into Y(j) (low) and Y(4+j) (high).
#define Q4X8CHUNK(off, LO, HI) \
	VMOVDQU off(SI), HI;         \
	VPAND   nib<>(SB), HI, LO;   \
	VPSRLW  $4, HI, HI;          \
	VPAND   nib<>(SB), HI, HI

#define Q4X8DECODE \
	VCVTPH2PS 0(SI), Y8;        \
	Q4X8CHUNK(16, Y0, Y4);      \
	Q4X8CHUNK(48, Y1, Y5);      \
	Q4X8CHUNK(80, Y2, Y6);      \
	Q4X8CHUNK(112, Y3, Y7)

#define Q4X8QUAD(off, Q, YP) \
	VPBROADCASTD off(YP), Y15;  \
	VPMADDUBSW   Y15, Q, Y14;   \
	VPADDW       Y14, Y13, Y13

// Q4X8COL adds the block of the column whose Q8_0 block is at 0(YP) and
// aux entry at 0(AP) to ACC.
#define Q4X8COL(YP, AP, ACC) \
	VPBROADCASTD 2(YP), Y15;            \
	VPMADDUBSW   Y15, Y0, Y13;          \
	Q4X8QUAD(6, Y1, YP);                    \
	Q4X8QUAD(10, Y2, YP);                   \
	Q4X8QUAD(14, Y3, YP);                   \
	Q4X8QUAD(18, Y4, YP);                   \
	Q4X8QUAD(22, Y5, YP);                   \
	Q4X8QUAD(26, Y6, YP);                   \
	Q4X8QUAD(30, Y7, YP);                   \
	VPMADDWD     ones16<>(SB), Y13, Y13; \
	VPBROADCASTD 4(AP), Y14;            \
	VPSUBD       Y14, Y13, Y13;         \
	VCVTDQ2PS    Y13, Y13;              \
	VBROADCASTSS 0(AP), Y15;            \
	VMULPS       Y8, Y15, Y15;          \
	VFMADD231PS  Y15, Y13, ACC

// F32 weights against F32 activations in register tiles: three rows by
// four columns per step of eight elements (seven loads for twelve FMAs),
// each row-column pair in an accumulator of its own. The 3x1 and 1x1
// kernels for the tiles' edges run, for each pair, the same sequence (one
// FMA per eight elements, in order, then HSUM), so a pair's bits do not
// depend on the tile it fell in. AX walks the byte offset, CX is its end.

#define FROWS \
	MOVQ steps+0(FP), CX;      \
	SHLQ $5, CX;            \
	MOVQ x+8(FP), SI;       \
	MOVQ stride+16(FP), BX; \
	LEAQ (SI)(BX*1), DI;    \
	LEAQ (DI)(BX*1), R12;   \
	XORQ AX, AX

#define FCOL3(YP, A0, A1, A2) \
	VMOVUPS     (YP)(AX*1), Y15; \
	VFMADD231PS Y15, Y12, A0;    \
	VFMADD231PS Y15, Y13, A1;    \
	VFMADD231PS Y15, Y14, A2

#define FLOAD3 \
	VMOVUPS (SI)(AX*1), Y12; \
	VMOVUPS (DI)(AX*1), Y13; \
	VMOVUPS (R12)(AX*1), Y14

// FSTORE3 writes the sums of A0..A2 at 0, 4 and 8 of OUT.
#define FSTORE3(OUT, A0, X0, A1, X1, A2, X2) \
	HSUM(A0, X0, X15);   \
	VMOVSS X0, 0(OUT);   \
	HSUM(A1, X1, X15);   \
	VMOVSS X1, 4(OUT);   \
	HSUM(A2, X2, X15);   \
	VMOVSS X2, 8(OUT)


// Repacked Q8_0 (repack_layouts.go): signed quants against signed ones,
// through the sign trick per chunk: |x| is decoded once per block into
// Y0..Y7, the broadcast activations take x's signs (VPSIGNB with the chunk
// in memory), and each chunk's products go to 32 bits at once (two of them
// could reach 2*127*127 and overflow 16 bits together). Then, as for
// Q4_0, acc += float(isum) * (d[r] * dy) for the eight rows at once.
#define Q8X8DECODE \
	VCVTPH2PS 0(SI), Y8;      \
	VPABSB    16(SI), Y0;     \
	VPABSB    48(SI), Y1;     \
	VPABSB    80(SI), Y2;     \
	VPABSB    112(SI), Y3;    \
	VPABSB    144(SI), Y4;    \
	VPABSB    176(SI), Y5;    \
	VPABSB    208(SI), Y6;    \
	VPABSB    240(SI), Y7

// SIGNQUAD adds to Y13 the products of the quad of |x| in A with the
// four activation bytes at yoff(YP), given x's signs at smem; ONES holds
// (or is) ones16.
#define SIGNQUAD(yoff, smem, A, YP, ONES) \
	VPBROADCASTD yoff(YP), Y15;  \
	VPSIGNB      smem, Y15, Y15; \
	VPMADDUBSW   Y15, A, Y14;    \
	VPMADDWD     ONES, Y14, Y14; \
	VPADDD       Y14, Y13, Y13

// SIGNCOL adds a column's block to ACC, |x| of the eight quads (elements
// 4j.., then 16+4j..) in Y0..Y7 and their signed values at S0..S7, the
// eight rows' scales as floats in (or at) D.
#define SIGNCOL(YP, AP, ACC, ONES, D, S0, S1, S2, S3, S4, S5, S6, S7) \
	VPBROADCASTD 2(YP), Y15;             \
	VPSIGNB      S0, Y15, Y15;           \
	VPMADDUBSW   Y15, Y0, Y13;           \
	VPMADDWD     ONES, Y13, Y13;         \
	SIGNQUAD(6, S1, Y1, YP, ONES);       \
	SIGNQUAD(10, S2, Y2, YP, ONES);      \
	SIGNQUAD(14, S3, Y3, YP, ONES);      \
	SIGNQUAD(18, S4, Y4, YP, ONES);      \
	SIGNQUAD(22, S5, Y5, YP, ONES);      \
	SIGNQUAD(26, S6, Y6, YP, ONES);      \
	SIGNQUAD(30, S7, Y7, YP, ONES);      \
	SIGNFIN(AP, D, ACC)

// SIGNFIN folds the integer sums in Y13 into ACC: acc += float(isum) *
// (dy * d[r]), dy at 0(AP).
#define SIGNFIN(AP, D, ACC) \
	VCVTDQ2PS    Y13, Y13;      \
	VBROADCASTSS 0(AP), Y15;    \
	VMULPS       D, Y15, Y15;   \
	VFMADD231PS  Y15, Y13, ACC

#define Q8X8COL(YP, AP, ACC) \
	SIGNCOL(YP, AP, ACC, ones16<>(SB), Y8, 16(SI), 48(SI), 80(SI), 112(SI), 144(SI), 176(SI), 208(SI), 240(SI))

// Repacked IQ4_NL (Q4_0's layout): the nibbles index the non-linear
// levels (iq4nl, VPSHUFB), whose signed values go to the frame (0..255)
// for the sign trick and whose magnitudes stay in Y0..Y7; then as Q8_0,
// with the rows' scales in the frame (256..287) so that ones16 stays in
// Y8 instead of being loaded for every quad.
#define IQ4X8CHUNK(off, so, A, B) \
	VMOVDQU off(SI), Y14;          \
	VPAND   nib<>(SB), Y14, Y13;   \
	VPSHUFB Y13, Y15, Y13;         \
	VMOVDQU Y13, so(SP);           \
	VPABSB  Y13, A;                \
	VPSRLW  $4, Y14, Y14;          \
	VPAND   nib<>(SB), Y14, Y14;   \
	VPSHUFB Y14, Y15, Y14;         \
	VMOVDQU Y14, so+128(SP);       \
	VPABSB  Y14, B

#define IQ4X8DECODE \
	VCVTPH2PS 0(SI), Y13;              \
	VMOVUPS   Y13, 256(SP);            \
	VMOVDQU   iq4nl<>(SB), Y15;        \
	IQ4X8CHUNK(16, 0, Y0, Y4);         \
	IQ4X8CHUNK(48, 32, Y1, Y5);        \
	IQ4X8CHUNK(80, 64, Y2, Y6);        \
	IQ4X8CHUNK(112, 96, Y3, Y7)

#define IQ4X8COL(YP, AP, ACC) \
	SIGNCOL(YP, AP, ACC, Y8, 256(SP), 0(SP), 32(SP), 64(SP), 96(SP), 128(SP), 160(SP), 192(SP), 224(SP))

// With one column nothing is shared between columns: IQ4X8ONE decodes
// each chunk of the block at 0(XP) as it goes and keeps everything in
// registers (the levels in Y0, the nibble mask in Y1, ones16 in Y2), with
// IQ4X8COL's integers (summed in ISUM) and float sequence.
#define IQ4X8QUAD(Q, yoff, YP, T, ISUM) \
	VPBROADCASTD yoff(YP), T; \
	VPSIGNB      Q, T, T;     \
	VPABSB       Q, Q;        \
	VPMADDUBSW   T, Q, Q;     \
	VPMADDWD     Y2, Q, Q;    \
	VPADDD       Q, ISUM, ISUM

#define IQ4X8ONECHUNK(XP, off, ylo, yhi, YP, ISUM) \
	VMOVDQU off(XP), Y3;                \
	VPAND   Y1, Y3, Y4;                 \
	VPSRLW  $4, Y3, Y3;                 \
	VPAND   Y1, Y3, Y3;                 \
	VPSHUFB Y4, Y0, Y4;                 \
	VPSHUFB Y3, Y0, Y3;                 \
	IQ4X8QUAD(Y4, ylo, YP, Y5, ISUM);   \
	IQ4X8QUAD(Y3, yhi, YP, Y6, ISUM)

#define IQ4X8ONE(XP, YP, AP, ACC, ISUM) \
	VPXOR        ISUM, ISUM, ISUM;              \
	IQ4X8ONECHUNK(XP, 16, 2, 18, YP, ISUM);     \
	IQ4X8ONECHUNK(XP, 48, 6, 22, YP, ISUM);     \
	IQ4X8ONECHUNK(XP, 80, 10, 26, YP, ISUM);    \
	IQ4X8ONECHUNK(XP, 112, 14, 30, YP, ISUM);   \
	VCVTDQ2PS    ISUM, ISUM;                    \
	VCVTPH2PS    0(XP), Y7;                     \
	VBROADCASTSS 0(AP), Y15;                    \
	VMULPS       Y7, Y15, Y15;                  \
	VFMADD231PS  Y15, ISUM, ACC

// The tile kernels compute one to four columns (their activation rows
// at y0..y3, aux rows at a0..a3) against ngroups consecutive groups of x,
// the groups nb blocks of XB bytes each and so contiguous; column c's
// outputs for group g go to o0..o3 plus 32g. One call covers a thread's tile
// of groups, so a product of short rows (nb of 8 in a 256-wide layer) is
// not made of calls with a few blocks each. Each column runs COL over the
// blocks in order whatever the column count, so a column's bits do not
// depend on the columns beside it or on the groups in the call. The
// group count lives at CNT (a frame slot): no general register is left.
//
// TARGS loads a group's pointers: nb in CX, the activation rows in
// R8..R11 and the aux rows in R12, R13, R14, DI (a call with fewer
// columns repeats column 0's in the other slots). TNEXT steps them by
// one block (XB, YB and AB bytes).
#define TARGS \
	MOVQ nb+0(FP), CX;  \
	MOVQ y0+24(FP), R8;  \
	MOVQ y1+32(FP), R9;  \
	MOVQ y2+40(FP), R10; \
	MOVQ y3+48(FP), R11; \
	MOVQ a0+56(FP), R12; \
	MOVQ a1+64(FP), R13; \
	MOVQ a2+72(FP), R14; \
	MOVQ a3+80(FP), DI

#define TNEXT(XB, YB, AB) \
	ADDQ $XB, SI;  \
	ADDQ $YB, R8;  \
	ADDQ $YB, R9;  \
	ADDQ $YB, R10; \
	ADDQ $YB, R11; \
	ADDQ $AB, R12; \
	ADDQ $AB, R13; \
	ADDQ $AB, R14; \
	ADDQ $AB, DI;  \
	DECQ CX

// TSTORE writes accumulator A at output O, AX bytes into it.
#define TSTORE(O, A) \
	MOVQ    O, BX; \
	VMOVUPS A, (BX)(AX*1)

// The column sets: COLSn adds the block of columns 0..n-1, STOREn writes
// their sums.
#define COLS1(COL) COL(R8, R12, Y9)
#define COLS2(COL) COLS1(COL); COL(R9, R13, Y10)
#define COLS3(COL) COLS2(COL); COL(R10, R14, Y11)
#define COLS4(COL) COLS3(COL); COL(R11, DI, Y12)
#define STORE1 TSTORE(o0+88(FP), Y9)
#define STORE2 STORE1; TSTORE(o1+96(FP), Y10)
#define STORE3 STORE2; TSTORE(o2+104(FP), Y11)
#define STORE4 STORE3; TSTORE(o3+112(FP), Y12)

#define TILE(DECODE, COL, XB, COLS, STORE, CNT) \
	MOVQ x+16(FP), SI;       \
	XORQ AX, AX;             \
	MOVQ ngroups+8(FP), BX;  \
	MOVQ BX, CNT;            \
	TESTQ BX, BX;            \
	JZ   tdone;              \
tgroup:                      \
	TARGS;                   \
	VXORPS Y9, Y9, Y9;       \
	VXORPS Y10, Y10, Y10;    \
	VXORPS Y11, Y11, Y11;    \
	VXORPS Y12, Y12, Y12;    \
tblock:                      \
	TESTQ CX, CX;            \
	JZ    tstore;            \
	DECODE;                  \
	COLS(COL);               \
	TNEXT(XB, 34, 8);        \
	JMP   tblock;            \
tstore:                      \
	STORE;                   \
	ADDQ $32, AX;            \
	DECQ CNT;                \
	JNZ  tgroup;             \
tdone:                       \
	VZEROUPPER;              \
	RET

// func gemmQ4_0x8x2AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)
TEXT ·gemmQ4_0x8x2AVX2(SB), NOSPLIT, $8-120
	TILE(Q4X8DECODE, Q4X8COL, 144, COLS2, STORE2, 0(SP))

TEXT ·gemmQ4_0x8x3AVX2(SB), NOSPLIT, $8-120
	TILE(Q4X8DECODE, Q4X8COL, 144, COLS3, STORE3, 0(SP))

TEXT ·gemmQ4_0x8x4AVX2(SB), NOSPLIT, $8-120
	TILE(Q4X8DECODE, Q4X8COL, 144, COLS4, STORE4, 0(SP))

TEXT ·gemmQ8_0x8x2AVX2(SB), NOSPLIT, $8-120
	TILE(Q8X8DECODE, Q8X8COL, 272, COLS2, STORE2, 0(SP))

TEXT ·gemmQ8_0x8x3AVX2(SB), NOSPLIT, $8-120
	TILE(Q8X8DECODE, Q8X8COL, 272, COLS3, STORE3, 0(SP))

TEXT ·gemmQ8_0x8x4AVX2(SB), NOSPLIT, $8-120
	TILE(Q8X8DECODE, Q8X8COL, 272, COLS4, STORE4, 0(SP))

// The IQ4_NL kernels keep their signed levels at 0..255(SP) and the
// rows' scales at 256..287 (IQ4X8DECODE); the one-column kernel needs
// neither.

// The one-column tile kernels run their groups two at a time, group g
// beside group g+ngroups/2 (the last one of an odd count alone): two
// sequential streams of weights, which the core fetches faster than one
// (the four-row kernels take four, dot_rows_amd64.s); each group runs the
// same sequence as alone, so its bits are the tile's. ONE(ACC) adds the
// block at SI against the column's (R8, aux R12) to ACC; a type's PAIR
// does so for the blocks at SI and DI into Y9 and Y10, its SINGLE for SI
// into Y9, each moving its weights on by a block.
//
// ONEBLOCKS runs BODY over the nb blocks and the column; L and E are its
// labels.
#define ONEBLOCKS(BODY, L, E) \
	MOVQ nb+0(FP), CX;   \
	MOVQ y0+24(FP), R8;  \
	MOVQ a0+56(FP), R12; \
L:                       \
	TESTQ CX, CX;        \
	JZ    E;             \
	BODY;                \
	ADDQ  $34, R8;       \
	ADDQ  $8, R12;       \
	DECQ  CX;            \
	JMP   L;             \
E:

// PAIRS1 is such a kernel over blocks of XB bytes: SI and DI walk the two
// groups, AX is the distance between them, DX counts the pairs, R11 is
// group g's output and BX the distance to its partner's. When the odd
// group comes, SI has walked the first half: that group is one half on,
// and so is its output.
#define PAIRS1(PAIR, SINGLE, XB) \
	MOVQ  x+16(FP), SI;                 \
	MOVQ  o0+88(FP), R11;               \
	MOVQ  ngroups+8(FP), DX;            \
	SHRQ  $1, DX;                       \
	MOVQ  DX, BX;                       \
	SHLQ  $5, BX;                       \
	MOVQ  nb+0(FP), AX;                 \
	IMULQ $XB, AX;                      \
	IMULQ DX, AX;                       \
pair:                                   \
	TESTQ  DX, DX;                      \
	JZ     odd;                         \
	LEAQ   (SI)(AX*1), DI;              \
	VXORPS Y9, Y9, Y9;                  \
	VXORPS Y10, Y10, Y10;               \
	ONEBLOCKS(PAIR, pblock, pstore);    \
	VMOVUPS Y9, 0(R11);                 \
	VMOVUPS Y10, (R11)(BX*1);           \
	ADDQ    $32, R11;                   \
	DECQ    DX;                         \
	JMP     pair;                       \
odd:                                    \
	MOVQ  ngroups+8(FP), CX;            \
	TESTQ $1, CX;                       \
	JZ    done;                         \
	ADDQ   AX, SI;                      \
	ADDQ   BX, R11;                     \
	VXORPS Y9, Y9, Y9;                  \
	ONEBLOCKS(SINGLE, oblock, ostore);  \
	VMOVUPS Y9, 0(R11);                 \
done:                                   \
	VZEROUPPER;                         \
	RET

#define Q40ONE(ACC) Q4X8DECODE; Q4X8COL(R8, R12, ACC)
#define Q40PAIR Q40ONE(Y9); XCHGQ SI, DI; Q40ONE(Y10); XCHGQ SI, DI; ADDQ $144, SI; ADDQ $144, DI
#define Q40SINGLE Q40ONE(Y9); ADDQ $144, SI

#define Q80ONE(ACC) Q8X8DECODE; Q8X8COL(R8, R12, ACC)
#define Q80PAIR Q80ONE(Y9); XCHGQ SI, DI; Q80ONE(Y10); XCHGQ SI, DI; ADDQ $272, SI; ADDQ $272, DI
#define Q80SINGLE Q80ONE(Y9); ADDQ $272, SI

#define IQ4PAIR IQ4X8ONE(SI, R8, R12, Y9, Y13); IQ4X8ONE(DI, R8, R12, Y10, Y14); ADDQ $144, SI; ADDQ $144, DI
#define IQ4SINGLE IQ4X8ONE(SI, R8, R12, Y9, Y13); ADDQ $144, SI

// func gemmQ4_0x8x1AVX2(nb, ngroups int, x, y0, y1, y2, y3, a0, a1, a2, a3, o0, o1, o2, o3 unsafe.Pointer)
TEXT ·gemmQ4_0x8x1AVX2(SB), NOSPLIT, $0-120
	PAIRS1(Q40PAIR, Q40SINGLE, 144)

TEXT ·gemmQ8_0x8x1AVX2(SB), NOSPLIT, $0-120
	PAIRS1(Q80PAIR, Q80SINGLE, 272)

TEXT ·gemmIQ4_NLx8x1AVX2(SB), NOSPLIT, $0-120
	VMOVDQU iq4nl<>(SB), Y0
	VMOVDQU nib<>(SB), Y1
	VMOVDQU ones16<>(SB), Y2
	PAIRS1(IQ4PAIR, IQ4SINGLE, 144)

TEXT ·gemmIQ4_NLx8x2AVX2(SB), NOSPLIT, $296-120
	VMOVDQU ones16<>(SB), Y8
	TILE(IQ4X8DECODE, IQ4X8COL, 144, COLS2, STORE2, 288(SP))

TEXT ·gemmIQ4_NLx8x3AVX2(SB), NOSPLIT, $296-120
	VMOVDQU ones16<>(SB), Y8
	TILE(IQ4X8DECODE, IQ4X8COL, 144, COLS3, STORE3, 288(SP))

TEXT ·gemmIQ4_NLx8x4AVX2(SB), NOSPLIT, $296-120
	VMOVDQU ones16<>(SB), Y8
	TILE(IQ4X8DECODE, IQ4X8COL, 144, COLS4, STORE4, 288(SP))

// func gemmF32x3x4AVX2(steps int, x unsafe.Pointer, stride uintptr, y, out *[4]unsafe.Pointer)
TEXT ·gemmF32x3x4AVX2(SB), NOSPLIT, $0-40
	FROWS
	MOVQ   y+24(FP), DX
	YCOLS4
	CLEAR4
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	TESTQ  CX, CX
	JZ     f34done

f34loop:
	FLOAD3
	FCOL3(R8, Y0, Y1, Y2)
	FCOL3(R9, Y3, Y4, Y5)
	FCOL3(R10, Y6, Y7, Y8)
	FCOL3(R11, Y9, Y10, Y11)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT  f34loop

f34done:
	MOVQ out+32(FP), DX
	MOVQ 0(DX), BX
	FSTORE3(BX, Y0, X0, Y1, X1, Y2, X2)
	MOVQ 8(DX), BX
	FSTORE3(BX, Y3, X3, Y4, X4, Y5, X5)
	MOVQ 16(DX), BX
	FSTORE3(BX, Y6, X6, Y7, X7, Y8, X8)
	MOVQ 24(DX), BX
	FSTORE3(BX, Y9, X9, Y10, X10, Y11, X11)
	VZEROUPPER
	RET

// func gemmF32x3x1AVX2(steps int, x unsafe.Pointer, stride uintptr, y, out unsafe.Pointer)
TEXT ·gemmF32x3x1AVX2(SB), NOSPLIT, $0-40
	FROWS
	MOVQ   y+24(FP), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	TESTQ  CX, CX
	JZ     f31done

f31loop:
	FLOAD3
	FCOL3(R8, Y0, Y1, Y2)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT  f31loop

f31done:
	MOVQ out+32(FP), BX
	FSTORE3(BX, Y0, X0, Y1, X1, Y2, X2)
	VZEROUPPER
	RET

// func gemmF32x1x1AVX2(steps int, x, y, out unsafe.Pointer)
TEXT ·gemmF32x1x1AVX2(SB), NOSPLIT, $0-32
	MOVQ   steps+0(FP), CX
	SHLQ   $5, CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), R8
	XORQ   AX, AX
	VXORPS Y0, Y0, Y0
	TESTQ  CX, CX
	JZ     f11done

f11loop:
	VMOVUPS     (SI)(AX*1), Y12
	VMOVUPS     (R8)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y0
	ADDQ        $32, AX
	CMPQ        AX, CX
	JLT         f11loop

f11done:
	MOVQ   out+24(FP), BX
	HSUM(Y0, X0, X15)
	VMOVSS X0, 0(BX)
	VZEROUPPER
	RET


// func xposeX8AVX2(dst, src unsafe.Pointer, rs uintptr, nb, sblk, dblk, sq, dq, nx, hdr int)
//
// The interleave of the layouts (repack_layouts.go) for nb
// blocks of eight rows rs bytes apart: in each block (sblk bytes in a
// row, dblk in the group), nx runs of four quant words from sq become
// four 32-byte chunks from dq, word w of row r at 32w+4r (an 8x4 word
// transpose: rows r and r+4 share a register, then unpack and shuffle);
// with hdr set the rows' first two bytes (fp16 d) go to 2r.
TEXT ·xposeX8AVX2(SB), NOSPLIT, $0-80
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rs+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R10

xblock:
	TESTQ CX, CX
	JZ    xdone
	MOVQ  hdr+72(FP), R12
	TESTQ R12, R12
	JZ    xquads
	LEAQ  (SI)(R8*4), R11
	MOVW  (SI), R12
	MOVW  R12, 0(DI)
	MOVW  (SI)(R8*1), R12
	MOVW  R12, 2(DI)
	MOVW  (SI)(R8*2), R12
	MOVW  R12, 4(DI)
	MOVW  (SI)(R10*1), R12
	MOVW  R12, 6(DI)
	MOVW  (R11), R12
	MOVW  R12, 8(DI)
	MOVW  (R11)(R8*1), R12
	MOVW  R12, 10(DI)
	MOVW  (R11)(R8*2), R12
	MOVW  R12, 12(DI)
	MOVW  (R11)(R10*1), R12
	MOVW  R12, 14(DI)

xquads:
	MOVQ sq+48(FP), AX
	ADDQ SI, AX
	MOVQ dq+56(FP), DX
	ADDQ DI, DX
	MOVQ nx+64(FP), R13

xrun:
	TESTQ       R13, R13
	JZ          xnext
	LEAQ        (AX)(R8*4), BX
	VMOVDQU     (AX), X0
	VINSERTI128 $1, (BX), Y0, Y0
	VMOVDQU     (AX)(R8*1), X1
	VINSERTI128 $1, (BX)(R8*1), Y1, Y1
	VMOVDQU     (AX)(R8*2), X2
	VINSERTI128 $1, (BX)(R8*2), Y2, Y2
	VMOVDQU     (AX)(R10*1), X3
	VINSERTI128 $1, (BX)(R10*1), Y3, Y3
	VUNPCKLPS   Y1, Y0, Y4
	VUNPCKHPS   Y1, Y0, Y5
	VUNPCKLPS   Y3, Y2, Y6
	VUNPCKHPS   Y3, Y2, Y7
	VSHUFPS     $0x44, Y6, Y4, Y0
	VSHUFPS     $0xee, Y6, Y4, Y1
	VSHUFPS     $0x44, Y7, Y5, Y2
	VSHUFPS     $0xee, Y7, Y5, Y3
	VMOVDQU     Y0, 0(DX)
	VMOVDQU     Y1, 32(DX)
	VMOVDQU     Y2, 64(DX)
	VMOVDQU     Y3, 96(DX)
	ADDQ        $16, AX
	ADDQ        $128, DX
	DECQ        R13
	JMP         xrun

xnext:
	ADDQ sblk+32(FP), SI
	ADDQ dblk+40(FP), DI
	DECQ CX
	JMP  xblock

xdone:
	VZEROUPPER
	RET

// func fillAuxAVX2(aux, y unsafe.Pointer, nb int)
//
// fillAux's aux row: each block's fp16 scale as a float, and eight times
// the sum of its quants, found exactly as VPSADBW's sums of the quants
// biased by 128 (x^0x80), less 32*128.
TEXT ·fillAuxAVX2(SB), NOSPLIT, $0-24
	MOVQ    aux+0(FP), DI
	MOVQ    y+8(FP), SI
	MOVQ    nb+16(FP), CX
	VPCMPEQB Y3, Y3, Y3
	VPABSB  Y3, Y3
	VPSLLW  $7, Y3, Y3
	VPXOR   Y4, Y4, Y4

auxblock:
	TESTQ        CX, CX
	JZ           auxdone
	MOVWLZX      0(SI), AX
	VMOVD        AX, X0
	VCVTPH2PS    X0, X0
	VMOVSS       X0, 0(DI)
	VMOVDQU      2(SI), Y1
	VPXOR        Y3, Y1, Y1
	VPSADBW      Y4, Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPADDQ       X2, X1, X1
	VPSHUFD      $0x4e, X1, X2
	VPADDQ       X2, X1, X1
	VMOVD        X1, AX
	SUBL         $4096, AX
	SHLL         $3, AX
	MOVL         AX, 4(DI)
	ADDQ         $34, SI
	ADDQ         $8, DI
	DECQ         CX
	JMP          auxblock

auxdone:
	VZEROUPPER
	RET
