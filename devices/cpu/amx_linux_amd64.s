//go:build !purego

#include "textflag.h"

// AMX int8 tile products (level_amx_linux_amd64.go says what they compute
// and how their operands are laid out). The Go assembler has no AMX
// mnemonics: each is encoded with BYTE directives from the Intel SDM's
// encodings (VEX.128.0F38.W0, map 0F38 in C4's second byte), its mnemonic
// in the comment. Only AX, BX, CX, DX, SI and DI appear in their ModRM and
// SIB bytes, so no REX/VEX extension bits are needed.
//
// Each call loads the tile configuration, computes and releases the tiles
// (TILERELEASE) before it returns: a goroutine may run on another thread
// at its next call, and an idle thread with tiles in use makes the kernel
// save and restore 8 KiB of tile state at every switch.
//
// Registers: SI the activation tile of the next step to multiply (A:
// ncols rows of step bytes, DX apart), DI the packed weights of the step
// being scaled (16 row scales, 16 row minimums, then B: step/4 rows of 64
// bytes, BX = 64 apart), CX two 1 KiB result buffers, R13 the columns'
// scales of the step being scaled (16 d_y floats, then 16 s_y), R8 the
// steps left to scale, R9 the next multiplied step's place within its
// activation block, R10 the steps a block, R11 an activation block's
// bytes, R12 the next multiplied step's block, R14 astep, AX scratch.
// Z0-Z15 are the 16 columns' accumulators (lane m: weight row m), Z16 the
// row scales, Z17 the row minimums.
//
// The tile unit runs two steps ahead of the vector unit: even steps in
// TMM0 (from TMM1 and TMM2) stored to the first buffer, odd ones in TMM3
// (from TMM4 and TMM5) to the second. While the vector unit scales step s
// from its buffer, step s+1's sums are being stored and step s+2
// multiplied, so the tile store's latency and the vector work overlap
// (storing a step's sums and loading them back at once measured about
// three times slower).

// The AMX instructions the kernels use, with the operands they take.
#define LDTILECFG_AX BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x00 // LDTILECFG (AX)
#define TILERELEASE BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0 // TILERELEASE
#define TILEZERO_TMM0 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xC0 // TILEZERO TMM0
#define TILEZERO_TMM3 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xD8 // TILEZERO TMM3
#define TILELOADD_TMM1_SI BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x0C; BYTE $0x16 // TILELOADD TMM1, (SI)(DX*1)
#define TILELOADD_TMM2_AX BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x14; BYTE $0x18 // TILELOADD TMM2, (AX)(BX*1)
#define TILELOADD_TMM4_SI BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x24; BYTE $0x16 // TILELOADD TMM4, (SI)(DX*1)
#define TILELOADD_TMM5_AX BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x2C; BYTE $0x18 // TILELOADD TMM5, (AX)(BX*1)
#define TILESTORED_CX_TMM0 BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x04; BYTE $0x19 // TILESTORED (CX)(BX*1), TMM0
#define TILESTORED_AX_TMM3 BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x1C; BYTE $0x18 // TILESTORED (AX)(BX*1), TMM3
#define TDPBSUD_TMM0 BYTE $0xC4; BYTE $0xE2; BYTE $0x6A; BYTE $0x5E; BYTE $0xC1 // TDPBSUD TMM0, TMM1, TMM2
#define TDPBSUD_TMM3 BYTE $0xC4; BYTE $0xE2; BYTE $0x52; BYTE $0x5E; BYTE $0xDC // TDPBSUD TMM3, TMM4, TMM5
#define TDPBSSD_TMM0 BYTE $0xC4; BYTE $0xE2; BYTE $0x6B; BYTE $0x5E; BYTE $0xC1 // TDPBSSD TMM0, TMM1, TMM2
#define TDPBSSD_TMM3 BYTE $0xC4; BYTE $0xE2; BYTE $0x53; BYTE $0x5E; BYTE $0xDC // TDPBSSD TMM3, TMM4, TMM5

// AADVANCE moves SI to the next step's activation tile: astep on within
// an activation block, the next block's start after inner steps.
#define AADVANCE(skip) \
	ADDQ R14, SI;   \
	INCQ R9;        \
	CMPQ R9, R10;   \
	JLT  skip;      \
	XORQ R9, R9;    \
	ADDQ R11, R12;  \
	MOVQ R12, SI;   \
skip:

// TMUL0 multiplies into TMM0 the activation tile at SI by the packed
// step's B at woff(DI) with TDP; TMUL3 does so into TMM3 (TMM4, TMM5).
#define TMUL0(woff, TDP, skip) \
	LEAQ woff(DI), AX;   \
	TILEZERO_TMM0;       \
	TILELOADD_TMM1_SI;   \
	TILELOADD_TMM2_AX;   \
	TDP;                 \
	AADVANCE(skip)

#define TMUL3(woff, TDP, skip) \
	LEAQ woff(DI), AX;   \
	TILEZERO_TMM3;       \
	TILELOADD_TMM4_SI;   \
	TILELOADD_TMM5_AX;   \
	TDP;                 \
	AADVANCE(skip)

// SCOL adds column c's sums at off(CX), converted to floats (T), times
// the row scales (Z16) times the column's d_y at boff(R13) to its
// accumulator Z in ggml's AMX order: the two scales' product first (U;
// exact, both being halves), then one fused multiply-add; MIN then adds
// its minimums' part (MINCOL: the row minimums, Z17, times the column's
// s_y at 64+boff(R13), fused) or nothing (NOMIN).
#define SCOL(off, boff, T, U, Z, MIN) \
	VCVTDQ2PS        off(CX), T;        \
	VMULPS.BCST      boff(R13), Z16, U; \
	VFMADD231PS      U, T, Z;           \
	MIN(boff, Z)

#define MINCOL(boff, Z) VFMADD231PS.BCST 64+boff(R13), Z17, Z

#define NOMIN(boff, Z)

// SCALE16 scales the step's sums in the buffer at buf(CX) into the 16
// columns' accumulators.
#define SCALE16(buf, MIN) \
	SCOL(buf+0, 0, Z18, Z26, Z0, MIN); \
	SCOL(buf+64, 4, Z19, Z27, Z1, MIN); \
	SCOL(buf+128, 8, Z20, Z28, Z2, MIN); \
	SCOL(buf+192, 12, Z21, Z29, Z3, MIN); \
	SCOL(buf+256, 16, Z22, Z30, Z4, MIN); \
	SCOL(buf+320, 20, Z23, Z31, Z5, MIN); \
	SCOL(buf+384, 24, Z24, Z26, Z6, MIN); \
	SCOL(buf+448, 28, Z25, Z27, Z7, MIN); \
	SCOL(buf+512, 32, Z18, Z28, Z8, MIN); \
	SCOL(buf+576, 36, Z19, Z29, Z9, MIN); \
	SCOL(buf+640, 40, Z20, Z30, Z10, MIN); \
	SCOL(buf+704, 44, Z21, Z31, Z11, MIN); \
	SCOL(buf+768, 48, Z22, Z26, Z12, MIN); \
	SCOL(buf+832, 52, Z23, Z27, Z13, MIN); \
	SCOL(buf+896, 56, Z24, Z28, Z14, MIN); \
	SCOL(buf+960, 60, Z25, Z29, Z15, MIN)

// STORECOL stores accumulator Z at AX and steps AX by the stride, unless
// it was the last column.
#define STORECOL(Z) \
	VMOVUPS Z, (AX); \
	DECQ    CX;      \
	JZ      done;    \
	ADDQ    BX, AX

// AMXDOT is the body of the three kernels: TDP0 and TDP3 the instruction
// multiplying into TMM0 and TMM3, wstep the bytes of a packed step (its
// B at 128 on), MINL and MIN the minimums' load and column part.
#define AMXDOT(TDP0, TDP3, wstep, STEP, FINISH) \
	MOVQ cfg+0(FP), AX;       \
	LDTILECFG_AX;             \
	MOVQ steps+8(FP), R8;     \
	MOVQ inner+16(FP), R10;   \
	MOVQ outer+24(FP), R11;   \
	MOVQ astep+32(FP), R14;   \
	MOVQ a+40(FP), R12;       \
	MOVQ astride+48(FP), DX;  \
	MOVQ w+56(FP), DI;        \
	MOVQ aux+64(FP), R13;     \
	MOVQ c+72(FP), CX;        \
	MOVQ $64, BX;             \
	MOVQ R12, SI;             \
	XORQ R9, R9;              \
	XORQ R15, R15;            \
	VPXORD Z0, Z0, Z0;        \
	VPXORD Z1, Z1, Z1;        \
	VPXORD Z2, Z2, Z2;        \
	VPXORD Z3, Z3, Z3;        \
	VPXORD Z4, Z4, Z4;        \
	VPXORD Z5, Z5, Z5;        \
	VPXORD Z6, Z6, Z6;        \
	VPXORD Z7, Z7, Z7;        \
	VPXORD Z8, Z8, Z8;        \
	VPXORD Z9, Z9, Z9;        \
	VPXORD Z10, Z10, Z10;     \
	VPXORD Z11, Z11, Z11;     \
	VPXORD Z12, Z12, Z12;     \
	VPXORD Z13, Z13, Z13;     \
	VPXORD Z14, Z14, Z14;     \
	VPXORD Z15, Z15, Z15;     \
	TMUL0(128, TDP0, a1);     \
	CMPQ R8, $2;              \
	JLT  first;               \
	TMUL3(wstep+128, TDP3, a2); \
first:                        \
	TILESTORED_CX_TMM0;       \
even:                         \
	CMPQ R8, $2;              \
	JLT  post0;               \
	LEAQ 1024(CX), AX;        \
	TILESTORED_AX_TMM3;       \
	CMPQ R8, $3;              \
	JLT  post0;               \
	TMUL0(2*wstep+128, TDP0, a3); \
post0:                        \
	STEP(0, sk0);             \
	ADDQ $wstep, DI;          \
	ADDQ $128, R13;           \
	DECQ R8;                  \
	JZ   store;               \
odd:                          \
	CMPQ R8, $2;              \
	JLT  post1;               \
	TILESTORED_CX_TMM0;       \
	CMPQ R8, $3;              \
	JLT  post1;               \
	TMUL3(2*wstep+128, TDP3, a4); \
post1:                        \
	STEP(1024, sk1);          \
	ADDQ $wstep, DI;          \
	ADDQ $128, R13;           \
	DECQ R8;                  \
	JZ   store;               \
	JMP  even;                \
store:                        \
	TILERELEASE;              \
	FINISH

// STORE16 stores the 16 columns' accumulators to out, ostride apart, up
// to ncols of them.
#define STORE16 \
	MOVQ out+80(FP), AX;      \
	MOVQ ostride+88(FP), BX;  \
	MOVQ ncols+96(FP), CX;    \
	STORECOL(Z0);             \
	STORECOL(Z1);             \
	STORECOL(Z2);             \
	STORECOL(Z3);             \
	STORECOL(Z4);             \
	STORECOL(Z5);             \
	STORECOL(Z6);             \
	STORECOL(Z7);             \
	STORECOL(Z8);             \
	STORECOL(Z9);             \
	STORECOL(Z10);            \
	STORECOL(Z11);            \
	STORECOL(Z12);            \
	STORECOL(Z13);            \
	STORECOL(Z14);            \
	VMOVUPS Z15, (AX);        \
done:                         \
	VZEROUPPER;               \
	RET

// KDONE ends a K-quant kernel, whose block ends wrote out.
#define KDONE \
	VZEROUPPER; \
	RET

// LSTEP and LSTEPMIN scale a legacy type's step (its buffer at buf(CX)):
// the row scales into Z16 (and the minimums into Z17), then SCALE16.
#define LSTEP(buf, skip) \
	VMOVUPS (DI), Z16; \
	SCALE16(buf, NOMIN)

#define LSTEPMIN(buf, skip) \
	VMOVUPS (DI), Z16;  \
	VMOVUPS 64(DI), Z17; \
	SCALE16(buf, MINCOL)

// A K-quant's steps are its sub-blocks. As ggml's AMX code, the kernel
// adds each sub-block's int32 sums times the rows' integer scales into
// int32 accumulators (Z0-Z15, exact) and, at the end of each super-block,
// fuses that sum times d*d_y into the column's float accumulator in out
// (a 16x16 scratch the caller zeroes), then, for Q4_K, subtracts the
// minimums' part: sum_j bsum_j*m_j (float products of integers below
// 2^24, so exact in any order: ggml's integer sum) times dmin*d_y, fused.
// The step header holds the rows' scales as int32 and (Q4_K) minimums as
// floats; the super-block's d and dmin (16 floats each) are at bd; a
// column's aux of a step has d_y, then the sub-block's bsum as a float.
// R15 counts the super-block's steps scaled.

// KSCOL adds column c's sums at off(CX) times the row scales (Z16) to Z.
#define KSCOL(off, T, Z) \
	VPMULLD off(CX), Z16, T; \
	VPADDD  T, Z, Z

#define KSCALE16(buf) \
	KSCOL(buf+0, Z18, Z0); \
	KSCOL(buf+64, Z19, Z1); \
	KSCOL(buf+128, Z20, Z2); \
	KSCOL(buf+192, Z21, Z3); \
	KSCOL(buf+256, Z22, Z4); \
	KSCOL(buf+320, Z23, Z5); \
	KSCOL(buf+384, Z24, Z6); \
	KSCOL(buf+448, Z25, Z7); \
	KSCOL(buf+512, Z18, Z8); \
	KSCOL(buf+576, Z19, Z9); \
	KSCOL(buf+640, Z20, Z10); \
	KSCOL(buf+704, Z21, Z11); \
	KSCOL(buf+768, Z22, Z12); \
	KSCOL(buf+832, Z23, Z13); \
	KSCOL(buf+896, Z24, Z14); \
	KSCOL(buf+960, Z25, Z15)

// KBLKSTART loads the super-block's d (Z16) and dmin (Z17) and steps bd.
#define KBLKSTART \
	MOVQ bd+104(FP), AX;  \
	VMOVUPS (AX), Z16;    \
	VMOVUPS 64(AX), Z17;  \
	ADDQ $128, AX;        \
	MOVQ AX, bd+104(FP);  \
	MOVQ out+80(FP), AX

// KEND6 adds column c's integer sum Z (c: its offsets, 4c and 64c) to
// its accumulator in out: fused with d (Z16) times the column's d_y.
#define KEND6(c4, c64, Z) \
	VCVTDQ2PS   Z, Z26;             \
	VMULPS.BCST c4(R13), Z16, Z27;  \
	VMOVUPS     c64(AX), Z28;       \
	VFMADD231PS Z27, Z26, Z28;      \
	VMOVUPS     Z28, c64(AX);       \
	VPXORD      Z, Z, Z

// KEND4 is KEND6 and then the minimums' part: the eight sub-blocks'
// minimums of the rows are Z18-Z25, the column's bsums in the aux of the
// super-block's steps (R13 at the last).
#define KEND4(c4, c64, Z) \
	VCVTDQ2PS        Z, Z26;                   \
	VMULPS.BCST      c4(R13), Z16, Z27;        \
	VMOVUPS          c64(AX), Z28;             \
	VFMADD231PS      Z27, Z26, Z28;            \
	VMULPS.BCST      c4+64-896(R13), Z18, Z29; \
	VFMADD231PS.BCST c4+64-768(R13), Z19, Z29; \
	VFMADD231PS.BCST c4+64-640(R13), Z20, Z29; \
	VFMADD231PS.BCST c4+64-512(R13), Z21, Z29; \
	VFMADD231PS.BCST c4+64-384(R13), Z22, Z29; \
	VFMADD231PS.BCST c4+64-256(R13), Z23, Z29; \
	VFMADD231PS.BCST c4+64-128(R13), Z24, Z29; \
	VFMADD231PS.BCST c4+64(R13), Z25, Z29;     \
	VMULPS.BCST      c4(R13), Z17, Z30;        \
	VFNMADD231PS     Z30, Z29, Z28;            \
	VMOVUPS          Z28, c64(AX);             \
	VPXORD           Z, Z, Z

#define KEND16(END) \
	END(0, 0, Z0); \
	END(4, 64, Z1); \
	END(8, 128, Z2); \
	END(12, 192, Z3); \
	END(16, 256, Z4); \
	END(20, 320, Z5); \
	END(24, 384, Z6); \
	END(28, 448, Z7); \
	END(32, 512, Z8); \
	END(36, 576, Z9); \
	END(40, 640, Z10); \
	END(44, 704, Z11); \
	END(48, 768, Z12); \
	END(52, 832, Z13); \
	END(56, 896, Z14); \
	END(60, 960, Z15)

// KSTEPQ4K scales a Q4_K step (8 a super-block, 640 bytes packed) and
// ends the super-block after its eighth.
#define KSTEPQ4K(buf, skip) \
	VMOVDQU32 (DI), Z16;        \
	KSCALE16(buf);              \
	INCQ R15;                   \
	CMPQ R15, $8;               \
	JLT  skip;                  \
	XORQ R15, R15;              \
	VMOVUPS 64-4480(DI), Z18;   \
	VMOVUPS 64-3840(DI), Z19;   \
	VMOVUPS 64-3200(DI), Z20;   \
	VMOVUPS 64-2560(DI), Z21;   \
	VMOVUPS 64-1920(DI), Z22;   \
	VMOVUPS 64-1280(DI), Z23;   \
	VMOVUPS 64-640(DI), Z24;    \
	VMOVUPS 64(DI), Z25;        \
	KBLKSTART;                  \
	KEND16(KEND4);              \
skip:

// KSTEPQ6K scales a Q6_K step (16 a super-block) and ends the
// super-block after its sixteenth.
#define KSTEPQ6K(buf, skip) \
	VMOVDQU32 (DI), Z16; \
	KSCALE16(buf);       \
	INCQ R15;            \
	CMPQ R15, $16;       \
	JLT  skip;           \
	XORQ R15, R15;       \
	KBLKSTART;           \
	KEND16(KEND6);       \
skip:

// PACKSTART loads the packers' arguments (DI dst, SI src, CX nb, Z31 the
// rows' offsets) and constants: Z30 the nibble mask, Z29 8s (Q4_0's
// levels' offset), Z25 zero.
#define PACKSTART \
	MOVQ dst+0(FP), DI;      \
	MOVQ src+8(FP), SI;      \
	MOVQ idx+16(FP), AX;     \
	MOVQ nb+24(FP), CX;      \
	VMOVDQU32 (AX), Z31;     \
	MOVL $0x0f0f0f0f, AX;    \
	VPBROADCASTD AX, Z30;    \
	MOVL $0x08080808, AX;    \
	VPBROADCASTD AX, Z29;    \
	VPXORD Z25, Z25, Z25

// PACKNEXT steps to the next block of xb bytes and packed step, and loops
// to block while any is left.
#define PACKNEXT(xb, block) \
	ADDQ $xb, SI;   \
	ADDQ $640, DI;  \
	DECQ CX;        \
	JNZ  block;     \
	VZEROUPPER;     \
	RET

// GATHER loads into Z the 32-bit word at off of each of the 16 rows' block.
#define GATHER(off, Z) \
	KXNORW     K0, K0, K1; \
	VPGATHERDD off(SI)(Z31*1), K1, Z

// PACKD writes the 16 rows' fp16 d (the block's first half word) as
// floats; Z16 keeps the gathered words.
#define PACKD \
	GATHER(0, Z16);        \
	VPMOVDW   Z16, Y17;    \
	VCVTPH2PS Y17, Z17;    \
	VMOVUPS   Z17, (DI)

// NIBBLES splits the gathered nibble words at off into low (Z1) and high
// (Z2) levels.
#define NIBBLES(off) \
	GATHER(off, Z0);       \
	VPANDD Z30, Z0, Z1;    \
	VPSRLD $4, Z0, Z2;     \
	VPANDD Z30, Z2, Z2

// NIBU stores them as they are (B rows at lo and hi), NIBS minus 8.
#define NIBU(off, lo, hi) \
	NIBBLES(off);             \
	VMOVDQU32 Z1, lo(DI);     \
	VMOVDQU32 Z2, hi(DI)

#define NIBS(off, lo, hi) \
	NIBBLES(off);             \
	VPSUBB    Z29, Z1, Z1;    \
	VMOVDQU32 Z1, lo(DI);     \
	VPSUBB    Z29, Z2, Z2;    \
	VMOVDQU32 Z2, hi(DI)

// COPYW stores the gathered words at off as B row dst.
#define COPYW(off, dst) \
	GATHER(off, Z0);        \
	VMOVDQU32 Z0, dst(DI)

// amxDotSU32: signed activations by unsigned weight levels (TDPBSUD), steps
// of 32, each step's row scales and minimums applied (Q4_1).
// func amxDotSU32(cfg unsafe.Pointer, steps, inner int, outer, astep uintptr, a unsafe.Pointer, astride uintptr, w, aux, c, out unsafe.Pointer, ostride uintptr, ncols int, bd unsafe.Pointer)
TEXT ·amxDotSU32(SB), NOSPLIT, $0-112
	AMXDOT(TDPBSUD_TMM0, TDPBSUD_TMM3, 640, LSTEPMIN, STORE16)

// amxDotSS32: signed activations by signed weight levels (TDPBSSD), steps
// of 32, each step's row scales applied (Q4_0, Q8_0).
// func amxDotSS32(cfg unsafe.Pointer, steps, inner int, outer, astep uintptr, a unsafe.Pointer, astride uintptr, w, aux, c, out unsafe.Pointer, ostride uintptr, ncols int, bd unsafe.Pointer)
TEXT ·amxDotSS32(SB), NOSPLIT, $0-112
	AMXDOT(TDPBSSD_TMM0, TDPBSSD_TMM3, 640, LSTEP, STORE16)

// amxDotQ4K: Q4_K, unsigned levels (TDPBSUD), 8 steps of 32 a super-block.
// func amxDotQ4K(cfg unsafe.Pointer, steps, inner int, outer, astep uintptr, a unsafe.Pointer, astride uintptr, w, aux, c, out unsafe.Pointer, ostride uintptr, ncols int, bd unsafe.Pointer)
TEXT ·amxDotQ4K(SB), NOSPLIT, $0-112
	AMXDOT(TDPBSUD_TMM0, TDPBSUD_TMM3, 640, KSTEPQ4K, KDONE)

// amxDotQ6K: Q6_K, signed levels (TDPBSSD), 16 steps of 16 a super-block.
// func amxDotQ6K(cfg unsafe.Pointer, steps, inner int, outer, astep uintptr, a unsafe.Pointer, astride uintptr, w, aux, c, out unsafe.Pointer, ostride uintptr, ncols int, bd unsafe.Pointer)
TEXT ·amxDotQ6K(SB), NOSPLIT, $0-112
	AMXDOT(TDPBSSD_TMM0, TDPBSSD_TMM3, 384, KSTEPQ6K, KDONE)

// The packers of 16 weight rows of the legacy types for the kernels above
// (level_amx_linux_amd64.go's amxType.pack writes the same bytes): for
// each of nb blocks one packed step, its 16 row scales (and Q4_1's
// minimums; zero for the others) then B, whose row k holds level 4k+i of
// weight row m at byte 4m+i. Row m of the tile is at src + idx[m]; each
// B row is a gather of one 32-bit word of the block from the 16 rows (the
// four nibble words give rows k and k+4: low and high nibbles). Q4_0's
// levels are offset to signed bytes (minus 8), Q8_0's copied. (Q5_0 has
// none: ggml's AMX code does not take it, and its products stay the
// vector kernels', ggml's plain ones.)

// amxPackQ4_1 packs Q4_1 rows: unsigned levels, d and m.
// func amxPackQ4_1(dst, src unsafe.Pointer, idx *[16]int32, nb int)
TEXT ·amxPackQ4_1(SB), NOSPLIT, $0-32
	PACKSTART

block:
	PACKD
	VPSRLD    $16, Z16, Z18
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z18, 64(DI)
	NIBU(4, 128, 384)
	NIBU(8, 192, 448)
	NIBU(12, 256, 512)
	NIBU(16, 320, 576)
	PACKNEXT(20, block)

// amxPackQ4_0 packs Q4_0 rows: levels minus 8, d.
// func amxPackQ4_0(dst, src unsafe.Pointer, idx *[16]int32, nb int)
TEXT ·amxPackQ4_0(SB), NOSPLIT, $0-32
	PACKSTART

block:
	PACKD
	VMOVUPS Z25, 64(DI)
	NIBS(2, 128, 384)
	NIBS(6, 192, 448)
	NIBS(10, 256, 512)
	NIBS(14, 320, 576)
	PACKNEXT(18, block)

// amxPackQ8_0 packs Q8_0 rows: levels, d.
// func amxPackQ8_0(dst, src unsafe.Pointer, idx *[16]int32, nb int)
TEXT ·amxPackQ8_0(SB), NOSPLIT, $0-32
	PACKSTART

block:
	PACKD
	VMOVUPS Z25, 64(DI)
	COPYW(2, 128)
	COPYW(6, 192)
	COPYW(10, 256)
	COPYW(14, 320)
	COPYW(18, 384)
	COPYW(22, 448)
	COPYW(26, 512)
	COPYW(30, 576)
	PACKNEXT(34, block)

// amxPackQ4_K writes the B rows of nb Q4_K super-blocks of 16 rows (eight
// steps each, 640 bytes apart, B at 128 of a step; the scales are Go's,
// amxType.packRows): step 2p+h's row k is the word at 16+32p+4k of each
// row, its nibble h.
// func amxPackQ4_K(dst, src unsafe.Pointer, idx *[16]int32, nb int)
TEXT ·amxPackQ4_K(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ idx+16(FP), AX
	MOVQ nb+24(FP), CX
	VMOVDQU32 (AX), Z31
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z30
amxPackQ4_K_block:
	KXNORW K0, K0, K1
	VPGATHERDD 16(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 128(DI)
	VMOVDQU32 Z2, 768(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 20(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 192(DI)
	VMOVDQU32 Z2, 832(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 24(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 256(DI)
	VMOVDQU32 Z2, 896(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 28(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 320(DI)
	VMOVDQU32 Z2, 960(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 32(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 384(DI)
	VMOVDQU32 Z2, 1024(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 36(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 448(DI)
	VMOVDQU32 Z2, 1088(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 40(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 512(DI)
	VMOVDQU32 Z2, 1152(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 44(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 576(DI)
	VMOVDQU32 Z2, 1216(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 48(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 1408(DI)
	VMOVDQU32 Z2, 2048(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 52(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 1472(DI)
	VMOVDQU32 Z2, 2112(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 56(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 1536(DI)
	VMOVDQU32 Z2, 2176(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 60(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 1600(DI)
	VMOVDQU32 Z2, 2240(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 64(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 1664(DI)
	VMOVDQU32 Z2, 2304(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 68(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 1728(DI)
	VMOVDQU32 Z2, 2368(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 72(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 1792(DI)
	VMOVDQU32 Z2, 2432(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 76(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 1856(DI)
	VMOVDQU32 Z2, 2496(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 80(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 2688(DI)
	VMOVDQU32 Z2, 3328(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 84(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 2752(DI)
	VMOVDQU32 Z2, 3392(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 88(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 2816(DI)
	VMOVDQU32 Z2, 3456(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 92(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 2880(DI)
	VMOVDQU32 Z2, 3520(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 96(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 2944(DI)
	VMOVDQU32 Z2, 3584(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 100(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 3008(DI)
	VMOVDQU32 Z2, 3648(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 104(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 3072(DI)
	VMOVDQU32 Z2, 3712(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 108(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 3136(DI)
	VMOVDQU32 Z2, 3776(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 112(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 3968(DI)
	VMOVDQU32 Z2, 4608(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 116(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 4032(DI)
	VMOVDQU32 Z2, 4672(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 120(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 4096(DI)
	VMOVDQU32 Z2, 4736(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 124(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 4160(DI)
	VMOVDQU32 Z2, 4800(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 128(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 4224(DI)
	VMOVDQU32 Z2, 4864(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 132(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 4288(DI)
	VMOVDQU32 Z2, 4928(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 136(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 4352(DI)
	VMOVDQU32 Z2, 4992(DI)
	KXNORW K0, K0, K1
	VPGATHERDD 140(SI)(Z31*1), K1, Z0
	VPANDD Z30, Z0, Z1
	VPSRLD $4, Z0, Z2
	VPANDD Z30, Z2, Z2
	VMOVDQU32 Z1, 4416(DI)
	VMOVDQU32 Z2, 5056(DI)
	ADDQ $144, SI
	ADDQ $5120, DI
	DECQ CX
	JNZ amxPackQ4_K_block
	VZEROUPPER
	RET
