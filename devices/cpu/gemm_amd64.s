//go:build !purego

#include "dot_amd64.h"

// Repacked Q4_0 (eight rows interleaved, repack_q4_0.go) against Q8_0
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

// func gemmQ4_0x8x1AVX2(nb int, x, y, aux, out unsafe.Pointer)
TEXT ·gemmQ4_0x8x1AVX2(SB), NOSPLIT, $0-40
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), R8
	MOVQ   aux+24(FP), R12
	VXORPS Y9, Y9, Y9

one:
	TESTQ CX, CX
	JZ    onedone
	Q4X8DECODE
	Q4X8COL(R8, R12, Y9)
	ADDQ  $144, SI
	ADDQ  $34, R8
	ADDQ  $8, R12
	DECQ  CX
	JMP   one

onedone:
	MOVQ    out+32(FP), DX
	VMOVUPS Y9, 0(DX)
	VZEROUPPER
	RET

// func gemmQ4_0x8x4AVX2(nb int, x unsafe.Pointer, y, aux, out *[4]unsafe.Pointer)
TEXT ·gemmQ4_0x8x4AVX2(SB), NOSPLIT, $0-40
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   0(DX), R8
	MOVQ   8(DX), R9
	MOVQ   16(DX), R10
	MOVQ   24(DX), R11
	MOVQ   aux+24(FP), DX
	MOVQ   0(DX), R12
	MOVQ   8(DX), R13
	MOVQ   16(DX), R14
	MOVQ   24(DX), DI
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12

four:
	TESTQ CX, CX
	JZ    fourdone
	Q4X8DECODE
	Q4X8COL(R8, R12, Y9)
	Q4X8COL(R9, R13, Y10)
	Q4X8COL(R10, R14, Y11)
	Q4X8COL(R11, DI, Y12)
	ADDQ  $144, SI
	ADDQ  $34, R8
	ADDQ  $34, R9
	ADDQ  $34, R10
	ADDQ  $34, R11
	ADDQ  $8, R12
	ADDQ  $8, R13
	ADDQ  $8, R14
	ADDQ  $8, DI
	DECQ  CX
	JMP   four

fourdone:
	MOVQ    out+32(FP), DX
	MOVQ    0(DX), BX
	VMOVUPS Y9, 0(BX)
	MOVQ    8(DX), BX
	VMOVUPS Y10, 0(BX)
	MOVQ    16(DX), BX
	VMOVUPS Y11, 0(BX)
	MOVQ    24(DX), BX
	VMOVUPS Y12, 0(BX)
	VZEROUPPER
	RET
