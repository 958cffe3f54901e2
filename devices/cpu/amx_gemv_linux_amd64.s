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
// A group's 16 rows are stride bytes apart (amxGemv takes them a
// sixteenth of the matrix apart), consecutive groups gstride apart; lane
// m's output is stored at out + oidx[m], the next group's 4 bytes on.
//
// Registers: DI the blocks, SI the group's first row, DX the stride, BX
// 3*stride, CX the groups left, R8 the aux records (40 bytes a block for
// the legacy types: d_y, the correction or s_y, the 32 activation bytes),
// R9 the current record, R10 out, R12-R15 the current block of rows 0,
// 4, 8, 12, AX the blocks left. Z31 the rows' offsets for the scale
// gathers, Z30 the nibble mask, Z29 the accumulators, Z28 the sign bit of
// each byte.

// LOAD4 puts the 16 bytes at off of the current block of rows r, r+4,
// r+8, r+12 in the 128-bit lanes of Z; LOAD4I does so for rows r+i (i
// being ix/stride, ix the register DX, DX*2 or BX).
#define LOAD4(off, Z, X) \
	VMOVDQU32    off(R12), X;       \
	VINSERTI32X4 $1, off(R13), Z, Z; \
	VINSERTI32X4 $2, off(R14), Z, Z; \
	VINSERTI32X4 $3, off(R15), Z, Z

#define LOAD4I(off, ix, sc, Z, X) \
	VMOVDQU32    off(R12)(ix*sc), X;       \
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

// NIBBLES adds to Z8 the products of the low nibbles of Z by activation
// dword k, and to Z11 those of its high nibbles, left in place (16 times
// their level), by dword k+4: NIBBLESUM's one shift of the sums spares a
// shift of each dword (the sums are exact integers, multiples of 16).
#define NIBBLES(Z, k) \
	VPANDD          Z, Z30, Z9;       \
	VPDPBUSD.BCST   8+4*k(R9), Z9, Z8; \
	VPANDND         Z, Z30, Z9;       \
	VPDPBUSD.BCST   24+4*k(R9), Z9, Z11

// NIBBLESUM adds the high nibbles' sums, Z11 over 16, to Z8.
#define NIBBLESUM \
	VPSRAD $4, Z11, Z11; \
	VPADDD Z11, Z8, Z8

// SCALES gathers the dwords at the current block of the 16 rows into Z10
// and leaves their low halves (the row scales d_x) as floats in Z10.
#define SCALES \
	KXNORW     K0, K0, K1;            \
	VPGATHERDD (R12)(Z31*1), K1, Z10; \
	VPMOVDW    Z10, Y9;               \
	VCVTPH2PS  Y9, Z9

// PREFETCH16 asks for the line at off bytes past the current block of
// each of the 16 rows. A lane reads on into the next group's row
// (amxGemv's lanes are each a run of consecutive rows), so this runs
// ahead of a stream that the hardware prefetchers, over the few KB a lane
// reads of the smaller matrices, hardly get up to speed on: Q4_1 products
// of 60 of SmolLM2's layers' shapes in turn (more than the last-level
// cache), 1 thread, medians of 15 runs at load 3.4-4.1: 13.8-15.3 GB/s
// without, 15.7-16.6 with the line 512 bytes on (256: 15.3-16.6; 1536
// lost); SmolLM2's generation 116 to 127 tokens per CPU-second, Gemma 3's
// 51 to 56 (load 3.1-3.3). The K-quants' blocks span several lines.
#define PREFETCH16(off) \
	PREFETCH4(off, R12); \
	PREFETCH4(off, R13); \
	PREFETCH4(off, R14); \
	PREFETCH4(off, R15)

// PREFETCH4 does so for the four rows from R.
#define PREFETCH4(off, R) \
	PREFETCHT0 off(R);       \
	PREFETCHT0 off(R)(DX*1); \
	PREFETCHT0 off(R)(DX*2); \
	PREFETCHT0 off(R)(BX*1)

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
	MOVQ        oidx+64(FP), AX;       \
	VMOVDQU32   (AX), Z9;              \
	KXNORW      K0, K0, K1;            \
	VSCATTERDPS Z29, K1, (R10)(Z9*1);  \
	ADDQ        $4, R10;               \
	ADDQ        gstride+56(FP), SI;    \
	DECQ        CX;                    \
	JNZ         loop;                  \
	VZEROUPPER;                        \
	RET

// NEXTBLOCK moves to the next block (bs bytes a row) and its record (rec
// bytes) and loops to loop while blocks are left.
#define NEXTBLOCK(bs, rec, loop) \
	ADDQ $bs, R12; \
	ADDQ $bs, R13; \
	ADDQ $bs, R14; \
	ADDQ $bs, R15; \
	ADDQ $rec, R9; \
	DECQ AX;       \
	JNZ  loop

// func gemvAuxQ8_1Asm(rec, y unsafe.Pointer, nb int)
TEXT ·gemvAuxQ8_1Asm(SB), NOSPLIT, $0-24
	MOVQ rec+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ nb+16(FP), CX

aux81:
	VMOVD     (SI), X0
	VCVTPH2PS X0, X0 // d_y, s_y
	VMOVQ     X0, (DI)
	VMOVDQU   4(SI), Y1
	VMOVDQU   Y1, 8(DI)
	ADDQ      $36, SI
	ADDQ      $40, DI
	DECQ      CX
	JNZ       aux81
	VZEROUPPER
	RET

// func amxGemvQ4_0(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)
TEXT ·amxGemvQ4_0(SB), NOSPLIT, $0-72
	SETUP

q40group:
	GROUP

q40block:
	PREFETCH16(512)
	TRANSPOSE16(2, Z0, Z1, Z2, Z3, X0, X1, X2, X3)
	VPBROADCASTD 4(R9), Z8 // minus 8 times the activations' sum
	VPXORD       Z11, Z11, Z11
	NIBBLES(Z0, 0)
	NIBBLES(Z1, 1)
	NIBBLES(Z2, 2)
	NIBBLES(Z3, 3)
	SCALES
	NIBBLESUM
	VMULPS.BCST  (R9), Z9, Z9
	VCVTDQ2PS    Z8, Z8
	VFMADD231PS  Z9, Z8, Z29
	NEXTBLOCK(18, 40, q40block)
	NEXTGROUP(18, q40group)

// gemvHalves is VPERMW's control putting the even words of a vector
// before its odd ones.
DATA gemvHalves<>+0(SB)/8, $0x0006000400020000
DATA gemvHalves<>+8(SB)/8, $0x000e000c000a0008
DATA gemvHalves<>+16(SB)/8, $0x0016001400120010
DATA gemvHalves<>+24(SB)/8, $0x001e001c001a0018
DATA gemvHalves<>+32(SB)/8, $0x0007000500030001
DATA gemvHalves<>+40(SB)/8, $0x000f000d000b0009
DATA gemvHalves<>+48(SB)/8, $0x0017001500130011
DATA gemvHalves<>+56(SB)/8, $0x001f001d001b0019
GLOBL gemvHalves<>(SB), RODATA|NOPTR, $64

// func amxGemvQ4_1(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)
TEXT ·amxGemvQ4_1(SB), NOSPLIT, $0-72
	SETUP
	VMOVDQU64 gemvHalves<>(SB), Z27

q41group:
	GROUP

q41block:
	PREFETCH16(512)
	TRANSPOSE16(4, Z0, Z1, Z2, Z3, X0, X1, X2, X3)
	VPXORD           Z8, Z8, Z8
	VPXORD           Z11, Z11, Z11
	NIBBLES(Z0, 0)
	NIBBLES(Z1, 1)
	NIBBLES(Z2, 2)
	NIBBLES(Z3, 3)
	// The rows' d_x and m_x: one VPERMW puts the gathered dwords' low
	// halves in the low 256 bits, their high halves above.
	KXNORW           K0, K0, K1
	VPGATHERDD       (R12)(Z31*1), K1, Z10
	VPERMW           Z10, Z27, Z10
	VCVTPH2PS        Y10, Z9
	VEXTRACTI64X4    $1, Z10, Y10
	VCVTPH2PS        Y10, Z10
	NIBBLESUM
	VMULPS.BCST      (R9), Z9, Z9
	VCVTDQ2PS        Z8, Z8
	VFMADD231PS      Z9, Z8, Z29
	VFMADD231PS.BCST 4(R9), Z10, Z29 // + m_x*s_y
	NEXTBLOCK(20, 40, q41block)
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
// ROWPAIR takes rows RA+ix*sc and RB+ix*sc, ROWPAIR0 rows RA and RB.
#define ROWPAIR(RA, RB, ix, sc, ACC) \
	VMOVDQU      2(RA)(ix*sc), Y0;          \
	VINSERTI64X4 $1, 2(RB)(ix*sc), Z0, Z0; \
	VPXORD       Z0, Z28, Z0;               \
	VPXORD       ACC, ACC, ACC;             \
	VPDPBUSD     Z27, Z0, ACC

#define ROWPAIR0(RA, RB, ACC) \
	VMOVDQU      2(RA), Y0;          \
	VINSERTI64X4 $1, 2(RB), Z0, Z0; \
	VPXORD       Z0, Z28, Z0;        \
	VPXORD       ACC, ACC, ACC;      \
	VPDPBUSD     Z27, Z0, ACC

// func amxGemvQ8_0(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)
TEXT ·amxGemvQ8_0(SB), NOSPLIT, $0-72
	SETUP

q80group:
	GROUP

q80block:
	PREFETCH16(512)
	VBROADCASTI64X4 8(R9), Z27
	ROWPAIR0(R12, R14, Z12)
	ROWPAIR(R12, R14, DX, 1, Z13)
	ROWPAIR(R12, R14, DX, 2, Z14)
	ROWPAIR(R12, R14, BX, 1, Z15)
	// rows 4-7 and 12-15
	ROWPAIR0(R13, R15, Z16)
	ROWPAIR(R13, R15, DX, 1, Z17)
	ROWPAIR(R13, R15, DX, 2, Z18)
	ROWPAIR(R13, R15, BX, 1, Z19)
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
	NEXTBLOCK(34, 40, q80block)
	VSHUFF32X4      $0xd8, Z29, Z29, Z29 // back in row order
	NEXTGROUP(34, q80group)

// Q4_K's mins are summed by VPDPWSSD: these VPSHUFB controls spread a
// dword's bytes 0 and 1 (or 2 and 3) into its two int16 halves.
DATA gemvShuf01<>+0(SB)/8, $0x8005800480018000
DATA gemvShuf01<>+8(SB)/8, $0x800d800c80098008
GLOBL gemvShuf01<>(SB), RODATA|NOPTR, $16
DATA gemvShuf23<>+0(SB)/8, $0x8007800680038002
DATA gemvShuf23<>+8(SB)/8, $0x800f800e800b800a
GLOBL gemvShuf23<>(SB), RODATA|NOPTR, $16

// KBYTE leaves byte b of each dword of Z in Zd as an int32.
#define KBYTE(Z, b, Zd) \
	VPSRLD $(8*b), Z, Zd; \
	VPANDD Zd, Z26, Zd

// Q4KCHUNK adds sub-blocks 2p and 2p+1 (the low and high nibbles of the
// 32 bytes of chunk p) of the 16 rows, times their scales sc and sc1, to
// Z8 (the high ones' sums shifted back first).
#define Q4KCHUNK(p, sc, sc1) \
	TRANSPOSE16(16+32*p, Z0, Z1, Z2, Z3, X0, X1, X2, X3);  \
	TRANSPOSE16(32+32*p, Z4, Z5, Z6, Z7, X4, X5, X6, X7);  \
	VPXORD        Z16, Z16, Z16;                           \
	VPXORD        Z17, Z17, Z17;                           \
	VPXORD        Z18, Z18, Z18;                           \
	VPXORD        Z19, Z19, Z19;                           \
	Q4KNIB(Z0, p, 0, Z16, Z18);                            \
	Q4KNIB(Z1, p, 1, Z17, Z19);                            \
	Q4KNIB(Z2, p, 2, Z16, Z18);                            \
	Q4KNIB(Z3, p, 3, Z17, Z19);                            \
	Q4KNIB(Z4, p, 4, Z16, Z18);                            \
	Q4KNIB(Z5, p, 5, Z17, Z19);                            \
	Q4KNIB(Z6, p, 6, Z16, Z18);                            \
	Q4KNIB(Z7, p, 7, Z17, Z19);                            \
	VPADDD        Z17, Z16, Z16;                           \
	VPADDD        Z19, Z18, Z18;                           \
	VPSRAD        $4, Z18, Z18;                            \
	VPMULLD       sc, Z16, Z16;                            \
	VPMULLD       sc1, Z18, Z18;                           \
	VPADDD        Z16, Z8, Z8;                             \
	VPADDD        Z18, Z8, Z8

// Q4KNIB adds dword k of chunk p's rows' low nibbles times activation
// dword 16p+k to lo and the high ones, in place as in NIBBLES, times
// dword 16p+8+k to hi.
#define Q4KNIB(Z, p, k, lo, hi) \
	VPANDD        Z, Z30, Z9;             \
	VPDPBUSD.BCST 32+64*p+4*k(R9), Z9, lo;  \
	VPANDND       Z, Z30, Z9;             \
	VPDPBUSD.BCST 64+64*p+4*k(R9), Z9, hi

// func amxGemvQ4K(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)
TEXT ·amxGemvQ4K(SB), NOSPLIT, $0-72
	SETUP
	MOVL            $0x3f3f3f3f, AX
	VPBROADCASTD    AX, Z28
	MOVL            $0x30303030, AX
	VPBROADCASTD    AX, Z27
	MOVL            $0xff, AX
	VPBROADCASTD    AX, Z26
	VBROADCASTI32X4 gemvShuf01<>(SB), Z25
	VBROADCASTI32X4 gemvShuf23<>(SB), Z24

q4kgroup:
	GROUP

q4kblock:
	PREFETCH16(512)
	PREFETCH16(576)
	PREFETCH16(640)
	// The 6-bit scales and minimums, four to a dword of Z20-Z23.
	TRANSPOSE16(4, Z0, Z1, Z2, Z3, X0, X1, X2, X3)
	VPANDD       Z0, Z28, Z20      // sc 0-3
	VPANDD       Z1, Z28, Z22      // m 0-3
	VPANDD       Z2, Z30, Z21
	VPSRLD       $2, Z0, Z9
	VPTERNLOGD   $0xf8, Z27, Z9, Z21 // sc 4-7: | (Z9 & 0x30)
	VPSRLD       $4, Z2, Z23
	VPANDD       Z23, Z30, Z23
	VPSRLD       $2, Z1, Z9
	VPTERNLOGD   $0xf8, Z27, Z9, Z23 // m 4-7
	// The minimums times the activations' sums of 32.
	VPXORD       Z11, Z11, Z11
	VPSHUFB      Z25, Z22, Z9
	VPDPWSSD.BCST 4(R9), Z9, Z11
	VPSHUFB      Z24, Z22, Z9
	VPDPWSSD.BCST 8(R9), Z9, Z11
	VPSHUFB      Z25, Z23, Z9
	VPDPWSSD.BCST 12(R9), Z9, Z11
	VPSHUFB      Z24, Z23, Z9
	VPDPWSSD.BCST 16(R9), Z9, Z11
	VPXORD       Z8, Z8, Z8
	KBYTE(Z20, 0, Z10)
	KBYTE(Z20, 1, Z22)
	Q4KCHUNK(0, Z10, Z22)
	KBYTE(Z20, 2, Z10)
	KBYTE(Z20, 3, Z22)
	Q4KCHUNK(1, Z10, Z22)
	KBYTE(Z21, 0, Z10)
	KBYTE(Z21, 1, Z22)
	Q4KCHUNK(2, Z10, Z22)
	KBYTE(Z21, 2, Z10)
	KBYTE(Z21, 3, Z22)
	Q4KCHUNK(3, Z10, Z22)
	SCALES                         // d in Z9
	VPSRLD       $16, Z10, Z10
	VPMOVDW      Z10, Y10
	VCVTPH2PS    Y10, Z10          // dmin
	VMULPS.BCST  (R9), Z9, Z9
	VMULPS.BCST  (R9), Z10, Z10
	VCVTDQ2PS    Z8, Z8
	VCVTDQ2PS    Z11, Z11
	VFMADD231PS  Z9, Z8, Z29
	VFNMADD231PS Z10, Z11, Z29
	NEXTBLOCK(144, 288, q4kblock)
	NEXTGROUP(144, q4kgroup)

// Q6_K's signed 8-bit scales, spread by VPSHUFB into the high bytes of
// int16 pairs (then shifted down, signed) for VPDPWSSD.
DATA gemvShufS01<>+0(SB)/8, $0x0580048001800080
DATA gemvShufS01<>+8(SB)/8, $0x0d800c8009800880
GLOBL gemvShufS01<>(SB), RODATA|NOPTR, $16
DATA gemvShufS23<>+0(SB)/8, $0x0780068003800280
DATA gemvShufS23<>+8(SB)/8, $0x0f800e800b800a80
GLOBL gemvShufS23<>(SB), RODATA|NOPTR, $16

// Q6CODE leaves in Z9 the 6-bit levels of L's nibbles (Ls, shifted so
// that they are the low ones) and Hs's bits 4-5.
#define Q6CODE(Ls, Hs) \
	VPANDD     Ls, Z30, Z9; \
	VPTERNLOGD $0xf8, Z27, Hs, Z9

// Q6HALF adds the 16-element groups of the 16 bytes of ql (ql half h of
// 32-element step c, dwords 4u to 4u+3: Z4-Z7) with the qh bits of Z0-Z3
// to Z16 (group 8c+2h+u: the low nibbles) and Z17 (8c+2h+4+u: the high
// ones); act is the record offset of the low group's activations.
#define Q6HALF(qloff, act, lo1, lo2, hi1, hi2) \
	TRANSPOSE16(qloff, Z4, Z5, Z6, Z7, X4, X5, X6, X7); \
	VPXORD        Z16, Z16, Z16;       \
	VPXORD        Z17, Z17, Z17;       \
	Q6T(Z4, Z0, act, lo1, lo2, hi1, hi2);     \
	Q6T(Z5, Z1, act+4, lo1, lo2, hi1, hi2);   \
	Q6T(Z6, Z2, act+8, lo1, lo2, hi1, hi2);   \
	Q6T(Z7, Z3, act+12, lo1, lo2, hi1, hi2)

// Q6T: one dword of a row's ql and qh; lo1/lo2 and hi1/hi2 shift qh's
// pair of bits for the low and high nibbles to bits 4-5.
#define Q6T(L, H, act, lo1, lo2, hi1, hi2) \
	lo1        lo2, H, Z11;                \
	Q6CODE(L, Z11);                        \
	VPDPBUSD.BCST act(R9), Z9, Z16;        \
	VPSRLD     $4, L, Z24;                 \
	hi1        hi2, H, Z11;                \
	Q6CODE(Z24, Z11);                      \
	VPDPBUSD.BCST 64+act(R9), Z9, Z17

// Q6SCALE adds group g's sums in Z to Z8, times its scale: byte g%4 of
// the dwords of S, sign-extended.
#define Q6SCALE(Z, S, b) \
	VPSLLD  $(24-8*b), S, Z10; \
	VPSRAD  $24, Z10, Z10;     \
	VPMULLD Z10, Z, Z;         \
	VPADDD  Z, Z8, Z8

// Q6STEP does the 4 groups of 32-element step c's half u: qh's dwords,
// then ql's halves h = 0 and 1, whose groups' scales are bytes bh0 and
// bh1 of S (low nibbles) and S2 (high ones).
#define Q6STEP(c, u, S, S2, bh0, bh1) \
	TRANSPOSE16(128+32*c+16*u, Z0, Z1, Z2, Z3, X0, X1, X2, X3); \
	Q6HALF(64*c+16*u, 64+128*c+16*u, VPSLLD, $4, VPSRLD, $0); \
	Q6SCALE(Z16, S, bh0); \
	Q6SCALE(Z17, S2, bh0); \
	Q6HALF(64*c+32+16*u, 64+128*c+32+16*u, VPSLLD, $2, VPSRLD, $2); \
	Q6SCALE(Z16, S, bh1); \
	Q6SCALE(Z17, S2, bh1)

// Q6CORR adds to Z18 the scales of the four groups in S times their
// activations' sums (int16 pairs at off and off+4 in the record).
#define Q6CORR(S, off) \
	VPSHUFB       Z25, S, Z9;        \
	VPSRAW        $8, Z9, Z9;        \
	VPDPWSSD.BCST off(R9), Z9, Z18;  \
	VPSHUFB       Z26, S, Z9;        \
	VPSRAW        $8, Z9, Z9;        \
	VPDPWSSD.BCST off+4(R9), Z9, Z18

// func amxGemvQ6K(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)
TEXT ·amxGemvQ6K(SB), NOSPLIT, $0-72
	SETUP
	MOVL            $0x30303030, AX
	VPBROADCASTD    AX, Z27
	VBROADCASTI32X4 gemvShufS01<>(SB), Z25
	VBROADCASTI32X4 gemvShufS23<>(SB), Z26

q6kgroup:
	GROUP

q6kblock:
	PREFETCH16(512)
	PREFETCH16(576)
	PREFETCH16(640)
	PREFETCH16(704)
	// The 16 scales, four to a dword of Z20-Z23.
	TRANSPOSE16(192, Z0, Z1, Z2, Z3, X0, X1, X2, X3)
	VMOVDQA64     Z0, Z20
	VMOVDQA64     Z1, Z21
	VMOVDQA64     Z2, Z22
	VMOVDQA64     Z3, Z23
	// 32 times the scales times the activations' sums of 16: the levels
	// are taken unsigned, 32 above their value.
	VPXORD        Z18, Z18, Z18
	Q6CORR(Z20, 4)
	Q6CORR(Z21, 12)
	Q6CORR(Z22, 20)
	Q6CORR(Z23, 28)
	VPSLLD        $5, Z18, Z18
	VPXORD        Z8, Z8, Z8
	VPSUBD        Z18, Z8, Z8
	// Groups 8c+2h+u (low nibbles) and 8c+2h+4+u (high): scales in
	// Z20 (groups 0-3), Z21 (4-7), Z22 (8-11), Z23 (12-15).
	Q6STEP(0, 0, Z20, Z21, 0, 2)
	Q6STEP(0, 1, Z20, Z21, 1, 3)
	Q6STEP(1, 0, Z22, Z23, 0, 2)
	Q6STEP(1, 1, Z22, Z23, 1, 3)
	// d, the high half of the dword at 206 (the block's last bytes).
	KXNORW       K0, K0, K1
	VPGATHERDD   206(R12)(Z31*1), K1, Z10
	VPSRLD       $16, Z10, Z10
	VPMOVDW      Z10, Y9
	VCVTPH2PS    Y9, Z9
	VMULPS.BCST  (R9), Z9, Z9
	VCVTDQ2PS    Z8, Z8
	VFMADD231PS  Z9, Z8, Z29
	NEXTBLOCK(210, 320, q6kblock)
	NEXTGROUP(210, q6kgroup)
