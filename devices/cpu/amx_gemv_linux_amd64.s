//go:build !purego

#include "textflag.h"

#define PFD 256

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

// PREFETCH asks for the bytes off ahead of the current block of the 16
// rows.
#define PREFETCH(off) \
	PREFETCHT0 off(R12);        \
	PREFETCHT0 off(R12)(DX*1);  \
	PREFETCHT0 off(R12)(DX*2);  \
	PREFETCHT0 off(R12)(BX*1);  \
	PREFETCHT0 off(R13);        \
	PREFETCHT0 off(R13)(DX*1);  \
	PREFETCHT0 off(R13)(DX*2);  \
	PREFETCHT0 off(R13)(BX*1);  \
	PREFETCHT0 off(R14);        \
	PREFETCHT0 off(R14)(DX*1);  \
	PREFETCHT0 off(R14)(DX*2);  \
	PREFETCHT0 off(R14)(BX*1);  \
	PREFETCHT0 off(R15);        \
	PREFETCHT0 off(R15)(DX*1);  \
	PREFETCHT0 off(R15)(DX*2);  \
	PREFETCHT0 off(R15)(BX*1)

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
	PREFETCH(PFD)
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
	PREFETCH(PFD)
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

// Q8_0's 32 bytes a row's block are summed across instead (a transpose
// of eight dwords a row costs twice the shuffles of these sums): rows r
// and r+8 in the halves of Zr, made unsigned (their sign bits flipped:
// the record's correction takes the 128 times the activations' sum
// back), times the block's activations in both halves, leave eight
// partial sums a row, which three levels of unpacks and adds reduce to
// one: lane i of the result is row i for i in 0-3 and 12-15, row i+4
// for i in 4-7, row i-4 for i in 8-11 (idx has the gathers follow it;
// the accumulators are put back in row order at the end).
#define ROWPAIR(ix, sc, ACC) \
	VMOVDQU      2(R12)(ix*sc), Y0;          \
	VINSERTI64X4 $1, 2(R14)(ix*sc), Z0, Z0; \
	VPXORD       Z0, Z28, Z0;               \
	VPXORD       ACC, ACC, ACC;             \
	VPDPBUSD     Z27, Z0, ACC

#define ROWPAIR0(ACC) \
	VMOVDQU      2(R12), Y0;          \
	VINSERTI64X4 $1, 2(R14), Z0, Z0; \
	VPXORD       Z0, Z28, Z0;        \
	VPXORD       ACC, ACC, ACC;      \
	VPDPBUSD     Z27, Z0, ACC

// func amxGemvQ8_0(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32)
TEXT ·amxGemvQ8_0(SB), NOSPLIT, $0-56
	SETUP

q80group:
	GROUP

q80block:
	PREFETCH(PFD)
	VBROADCASTI64X4 8(R9), Z27
	ROWPAIR0(Z12)
	ROWPAIR(DX, 1, Z13)
	ROWPAIR(DX, 2, Z14)
	ROWPAIR(BX, 1, Z15)
	// rows 4-7 and 12-15: R13 and R15 as R12 and R14
	XCHGQ           R12, R13
	XCHGQ           R14, R15
	ROWPAIR0(Z16)
	ROWPAIR(DX, 1, Z17)
	ROWPAIR(DX, 2, Z18)
	ROWPAIR(BX, 1, Z19)
	XCHGQ           R12, R13
	XCHGQ           R14, R15
	VPUNPCKLDQ      Z13, Z12, Z8
	VPUNPCKHDQ      Z13, Z12, Z9
	VPADDD          Z9, Z8, Z0
	VPUNPCKLDQ      Z15, Z14, Z8
	VPUNPCKHDQ      Z15, Z14, Z9
	VPADDD          Z9, Z8, Z2
	VPUNPCKLDQ      Z17, Z16, Z8
	VPUNPCKHDQ      Z17, Z16, Z9
	VPADDD          Z9, Z8, Z4
	VPUNPCKLDQ      Z19, Z18, Z8
	VPUNPCKHDQ      Z19, Z18, Z9
	VPADDD          Z9, Z8, Z6
	VPUNPCKLQDQ     Z2, Z0, Z8
	VPUNPCKHQDQ     Z2, Z0, Z9
	VPADDD          Z9, Z8, Z0        // quarters: rows 0-3's halves of rows 0-3, then of rows 8-11
	VPUNPCKLQDQ     Z6, Z4, Z8
	VPUNPCKHQDQ     Z6, Z4, Z9
	VPADDD          Z9, Z8, Z4        // the same of rows 4-7 and 12-15
	VSHUFI32X4      $0x88, Z4, Z0, Z8 // quarters 0 and 2 of Z0, then of Z4
	VSHUFI32X4      $0xdd, Z4, Z0, Z9 // quarters 1 and 3
	VPADDD          Z9, Z8, Z8
	VPADDD.BCST     4(R9), Z8, Z8     // minus 128 times the activations' sum
	SCALES
	VMULPS.BCST     (R9), Z9, Z9
	VCVTDQ2PS       Z8, Z8
	VFMADD231PS     Z9, Z8, Z29
	NEXTBLOCK(34)
	DECQ            AX
	JNZ             q80block
	VSHUFF32X4      $0xd8, Z29, Z29, Z29 // back in row order
	NEXTGROUP(34, q80group)
