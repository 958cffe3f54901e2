//go:build !purego

#include "textflag.h"

// One-column products of the amx level (level_amx_linux_amd64.go's
// amxGemv says what they compute): AVX512-VNNI, no tiles. Each of 16
// weight rows is one lane: for every block, the rows' quant bytes are
// transposed 4 bytes at a time into registers whose lane m holds row m's
// dword, so that one VPDPBUSD by a broadcast activation dword sums 4
// elements of all 16 rows; the block's int32 sums then take
// float(sum)*(dx*dy) in one FMA into the lane's accumulator, as ggml's
// AMX VNNI kernel does on its packed weights.
//
// Registers: DI the blocks, SI the group's first row, DX the row stride,
// BX 3*stride, CX the groups left, R8 the aux records (40 bytes a block:
// d_y, the correction or s_y, the 32 activation bytes), R9 the current
// record, R10 out, R12-R15 the current block of rows 0, 4, 8, 12, AX the
// blocks left. Z31 the rows' offsets for the scale gathers, Z30 the
// nibble mask, Z29 the accumulators, Z28 the sign bit of each byte.

// LOAD4 puts the 16 bytes at off of the current block of rows r, r+4,
// r+8, r+12 in the 128-bit lanes of Z; LOAD4I does so for rows r+i (i
// being ix/stride, ix the register DX, DX*2 or BX).
#define LOAD4(off, Z, X) \
	VMOVDQU      off(R12), X;       \
	VINSERTI32X4 $1, off(R13), Z, Z; \
	VINSERTI32X4 $2, off(R14), Z, Z; \
	VINSERTI32X4 $3, off(R15), Z, Z

#define LOAD4I(off, ix, sc, Z, X) \
	VMOVDQU      off(R12)(ix*sc), X;       \
	VINSERTI32X4 $1, off(R13)(ix*sc), Z, Z; \
	VINSERTI32X4 $2, off(R14)(ix*sc), Z, Z; \
	VINSERTI32X4 $3, off(R15)(ix*sc), Z, Z

// TRANSPOSE16 leaves dword j of the 16 bytes at off of the current
// block of row m in lane m of Zj (Z12-Z15 scratch).
#define TRANSPOSE16(off, Z0, Z1, Z2, Z3, X0, X1, X2, X3) \
	LOAD4(off, Z0, X0);             \
	LOAD4I(off, DX, 1, Z1, X1);     \
	LOAD4I(off, DX, 2, Z2, X2);     \
	LOAD4I(off, BX, 1, Z3, X3);     \
	VPUNPCKLDQ  Z1, Z0, Z12;     \
	VPUNPCKHDQ  Z1, Z0, Z13;     \
	VPUNPCKLDQ  Z3, Z2, Z14;     \
	VPUNPCKHDQ  Z3, Z2, Z15;     \
	VPUNPCKLQDQ Z14, Z12, Z0;    \
	VPUNPCKHQDQ Z14, Z12, Z1;    \
	VPUNPCKLQDQ Z15, Z13, Z2;    \
	VPUNPCKHQDQ Z15, Z13, Z3

// NIBBLES adds to Z8 (dword k) and Z11 (dword k+4) the products of the
// low and high nibbles of Z by the activation dwords k and k+4.
#define NIBBLES(Z, k) \
	VPANDD          Z, Z30, Z9;       \
	VPDPBUSD.BCST   8+4*k(R9), Z9, Z8; \
	VPSRLD          $4, Z, Z9;        \
	VPANDD          Z9, Z30, Z9;      \
	VPDPBUSD.BCST   24+4*k(R9), Z9, Z11

// SCALES gathers the dwords at the current block of the 16 rows into Z10
// and leaves their low halves (the row scales d_x) as floats in Z10.
#define SCALES \
	KXNORW     K0, K0, K1;            \
	VPGATHERDD (R12)(Z31*1), K1, Z10; \
	VPMOVDW    Z10, Y9;               \
	VCVTPH2PS  Y9, Z9

// SETUP loads the arguments and the constants common to the kernels.
#define SETUP \
	MOVQ         nb+0(FP), DI;      \
	MOVQ         x+8(FP), SI;       \
	MOVQ         stride+16(FP), DX; \
	MOVQ         ngroups+24(FP), CX; \
	MOVQ         aux+32(FP), R8;    \
	MOVQ         out+40(FP), R10;   \
	MOVQ         idx+48(FP), AX;    \
	VMOVDQU32    (AX), Z31;         \
	LEAQ         (DX)(DX*2), BX;    \
	MOVL         $0x0f0f0f0f, AX;   \
	VPBROADCASTD AX, Z30;           \
	MOVL         $0x80808080, AX;   \
	VPBROADCASTD AX, Z28

// GROUP starts a group of 16 rows at SI.
#define GROUP \
	MOVQ   SI, R12;              \
	LEAQ   (SI)(DX*4), R13;      \
	LEAQ   (R13)(DX*4), R14;     \
	LEAQ   (R14)(DX*4), R15;     \
	MOVQ   R8, R9;               \
	MOVQ   DI, AX;               \
	VXORPS Z29, Z29, Z29

// NEXTGROUP stores the group's sums and moves to the next group.
#define NEXTGROUP(bs, loop) \
	VMOVUPS Z29, (R10);     \
	ADDQ    $64, R10;       \
	LEAQ    (R15)(DX*4), SI; \
	MOVQ    DI, AX;         \
	IMULQ   $bs, AX;        \
	SUBQ    AX, SI;         \
	DECQ    CX;             \
	JNZ     loop;           \
	VZEROUPPER;             \
	RET

#define NEXTBLOCK(bs) \
	ADDQ $bs, R12; \
	ADDQ $bs, R13; \
	ADDQ $bs, R14; \
	ADDQ $bs, R15; \
	ADDQ $40, R9

// func amxGemvQ4_0(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32)
TEXT ·amxGemvQ4_0(SB), NOSPLIT, $0-56
	SETUP

q40group:
	GROUP

q40block:
	TRANSPOSE16(2, Z0, Z1, Z2, Z3, X0, X1, X2, X3)
	VPBROADCASTD 4(R9), Z8 // minus 8 times the activations' sum
	VPXORD       Z11, Z11, Z11
	NIBBLES(Z0, 0)
	NIBBLES(Z1, 1)
	NIBBLES(Z2, 2)
	NIBBLES(Z3, 3)
	SCALES
	VPADDD       Z11, Z8, Z8
	VMULPS.BCST  (R9), Z9, Z9
	VCVTDQ2PS    Z8, Z8
	VFMADD231PS  Z9, Z8, Z29
	NEXTBLOCK(18)
	DECQ         AX
	JNZ          q40block
	NEXTGROUP(18, q40group)

// func amxGemvQ4_1(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32)
TEXT ·amxGemvQ4_1(SB), NOSPLIT, $0-56
	SETUP

q41group:
	GROUP

q41block:
	TRANSPOSE16(4, Z0, Z1, Z2, Z3, X0, X1, X2, X3)
	VPXORD           Z8, Z8, Z8
	VPXORD           Z11, Z11, Z11
	NIBBLES(Z0, 0)
	NIBBLES(Z1, 1)
	NIBBLES(Z2, 2)
	NIBBLES(Z3, 3)
	SCALES
	VPSRLD           $16, Z10, Z10
	VPMOVDW          Z10, Y10
	VCVTPH2PS        Y10, Z10        // the rows' minimums m_x
	VPADDD           Z11, Z8, Z8
	VMULPS.BCST      (R9), Z9, Z9
	VCVTDQ2PS        Z8, Z8
	VFMADD231PS      Z9, Z8, Z29
	VFMADD231PS.BCST 4(R9), Z10, Z29 // + m_x*s_y
	NEXTBLOCK(20)
	DECQ             AX
	JNZ              q41block
	NEXTGROUP(20, q41group)

// BYTES adds to Z8 or Z11 the products of Z (signed bytes, made unsigned
// by their sign bit flipped: the correction in the record takes the 128
// times the activations' sum back) by activation dword k.
#define BYTES(Z, k, acc) \
	VPXORD        Z, Z28, Z9; \
	VPDPBUSD.BCST 8+4*k(R9), Z9, acc

// func amxGemvQ8_0(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32)
TEXT ·amxGemvQ8_0(SB), NOSPLIT, $0-56
	SETUP

q80group:
	GROUP

q80block:
	TRANSPOSE16(2, Z0, Z1, Z2, Z3, X0, X1, X2, X3)
	TRANSPOSE16(18, Z4, Z5, Z6, Z7, X4, X5, X6, X7)
	VPBROADCASTD 4(R9), Z8 // minus 128 times the activations' sum
	VPXORD       Z11, Z11, Z11
	BYTES(Z0, 0, Z8)
	BYTES(Z1, 1, Z11)
	BYTES(Z2, 2, Z8)
	BYTES(Z3, 3, Z11)
	BYTES(Z4, 4, Z8)
	BYTES(Z5, 5, Z11)
	BYTES(Z6, 6, Z8)
	BYTES(Z7, 7, Z11)
	SCALES
	VPADDD       Z11, Z8, Z8
	VMULPS.BCST  (R9), Z9, Z9
	VCVTDQ2PS    Z8, Z8
	VFMADD231PS  Z9, Z8, Z29
	NEXTBLOCK(34)
	DECQ         AX
	JNZ          q80block
	NEXTGROUP(34, q80group)
