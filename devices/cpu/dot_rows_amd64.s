//go:build !purego

#include "dot_amd64.h"

// Four-row kernels: one activation column against weight rows, for
// products with a single column. They read four rows at once, and rows
// far apart: row g of each quarter of the range, so that the core fetches
// four long sequential streams from memory, which it does markedly faster
// than one (1.6x for F32 rows of 4096 on AMD EPYC, 2x for Q8_0), and the
// column's block scales are converted once per call instead of once per
// row. Each row runs exactly the float sequence of its type's single
// kernel (integer parts are exact whatever instructions make them), so
// each result is that kernel's bit for bit.
//
// dotTRowsAVX2(n, x, stride, gap, ngroups, y, dy, out, ogap) computes, for
// g < ngroups and r < 4, dotTAVX2(n, x + g*stride + r*gap, y) into the
// float at out + 4g + r*ogap; dy is scratch (rowsScratch floats).
//
// Registers of the Q8_0-activation kernels: R8..R11 the group's rows, R13
// the byte offset of the current blocks in them, SI the current row's
// blocks, DI the column's, R12 what PREP made of the column's blocks (each
// block's scale as a float, four times over, first), CX the blocks left,
// BX the groups left, DX the stride; 0(SP) the output, 8(SP) on the
// current blocks' products xd*dy, row r's at 8+4r (first block) and 24+4r
// (second).

// RGATHER2 makes the products xd*dy of the current two blocks of the
// group's four rows (blocks XB bytes apart) at 8(SP): the eight x scales
// in one conversion, one multiplication by the column's scales at 0(R12).
// Each is the product SCALE2 makes for its row.
#define RGATHER2(XB) \
	RSCALES2(XB); \
	VMOVUPS Y12, 8(SP)

// RSCALES2 is RGATHER2's products left in Y12.
#define RSCALES2(XB) \
	MOVWLZX   (R8)(R13*1), AX;              \
	VMOVD     AX, X12;                      \
	VPINSRW   $1, (R9)(R13*1), X12, X12;    \
	VPINSRW   $2, (R10)(R13*1), X12, X12;   \
	VPINSRW   $3, (R11)(R13*1), X12, X12;   \
	VPINSRW   $4, XB(R8)(R13*1), X12, X12;  \
	VPINSRW   $5, XB(R9)(R13*1), X12, X12;  \
	VPINSRW   $6, XB(R10)(R13*1), X12, X12; \
	VPINSRW   $7, XB(R11)(R13*1), X12, X12; \
	VCVTPH2PS X12, Y12;                     \
	VMULPS    0(R12), Y12, Y12

// RGATHER1 is RGATHER2 for one block.
#define RGATHER1 \
	MOVWLZX   (R8)(R13*1), AX;            \
	VMOVD     AX, X12;                    \
	VPINSRW   $1, (R9)(R13*1), X12, X12;  \
	VPINSRW   $2, (R10)(R13*1), X12, X12; \
	VPINSRW   $3, (R11)(R13*1), X12, X12; \
	VCVTPH2PS X12, X12;                   \
	VMULPS    0(R12), X12, X12;           \
	VMOVUPS   X12, 8(SP)

// Q80ROWS is the body of the Q8_0-activation four-row kernels. PREP
// converts what the rows need of the column into 0(R12) on, SLOT bytes
// per pair of blocks with the pair's two scales (floats, four copies of
// each) first; SETUP loads constants; PAIR(ROW, ACC, LOAD, XB, r4) and
// ONE(ROW, ACC, LOAD, r4) add two blocks and one block of row ROW (r4 =
// 4r) to ACC as PAIR and ONE do for the single kernel, their products
// xd*dy from 8(SP); x blocks are XB bytes.
#define Q80ROWS(PREP, SETUP, PAIR, ONE, LOAD, XB, SLOT) \
	MOVQ      out+56(FP), AX;        \
	MOVQ      AX, 0(SP);             \
	MOVQ      n+0(FP), CX;           \
	MOVQ      y+40(FP), DI;          \
	MOVQ      dy+48(FP), R12;        \
	PREP;                            \
	MOVQ      x+8(FP), R8;           \
	MOVQ      stride+16(FP), DX;     \
	MOVQ      ngroups+32(FP), BX;    \
	SETUP;                           \
	RGROUPSTART;                     \
	MOVQ      dy+48(FP), R12;        \
pair:                                \
	CMPQ      CX, $2;                \
	JLT       one;                   \
	RPREFETCH;                       \
	RGATHER2(XB);                    \
	PAIR(R8, Y0, LOAD, XB, 0);       \
	PAIR(R9, Y1, LOAD, XB, 4);       \
	PAIR(R10, Y2, LOAD, XB, 8);      \
	PAIR(R11, Y3, LOAD, XB, 12);     \
	ADDQ      $(2*XB), R13;          \
	ADDQ      $68, DI;               \
	ADDQ      $SLOT, R12;            \
	SUBQ      $2, CX;                \
	JMP       pair;                  \
one:                                 \
	CMPQ      CX, $1;                \
	JLT       groupend;              \
	RGATHER1;                        \
	ONE(R8, Y0, LOAD, 0);            \
	ONE(R9, Y1, LOAD, 4);            \
	ONE(R10, Y2, LOAD, 8);           \
	ONE(R11, Y3, LOAD, 12);          \
	RGROUPEND

// RPREFETCH asks for the group's four rows RPD bytes ahead of the current
// blocks (in each quarter the next rows follow on): the hardware's
// streamers alone left the core waiting on memory. Gemma 3's 640x262144
// Q8_0 output matrix, 178 MB, one thread on the machine of bench/README.md,
// timed in turns in one process: 17.2 ms a product without, 15.0 with
// (prefetching 512 to 3072 bytes ahead all gained, 1536 the most on the
// L3-sized 576x49152); 5% slower on rows already in L2.
#define RPD 1536
#define RPREFETCH \
	PREFETCHT0 RPD(R8)(R13*1);  \
	PREFETCHT0 RPD(R9)(R13*1);  \
	PREFETCHT0 RPD(R10)(R13*1); \
	PREFETCHT0 RPD(R11)(R13*1)

// SCALE4 writes at o(R12) four copies of the scale of the column block at
// b(DI), as a float, using AX and X12.
#define SCALE4(b, o) \
	H1(b(DI), X12);            \
	VBROADCASTSS X12, X12;     \
	VMOVUPS      X12, o(R12)

// The sign-trick types (Q8_0, Q5_0, IQ4_NL): each row's blocks decoded by
// LOAD, the column's scales converted to floats, 16 bytes a block.
#define SCALESPREP \
conv:                      \
	TESTQ  CX, CX;         \
	JZ     convdone;       \
	SCALE4(0, 0);          \
	ADDQ   $34, DI;        \
	ADDQ   $16, R12;       \
	DECQ   CX;             \
	JMP    conv;           \
convdone:

// RSCALES puts the products xd*dy of row r4/4's current two blocks in
// every lane of Y11 and Y12.
#define RSCALES(r4) \
	VBROADCASTSS 8+r4(SP), Y11; \
	VBROADCASTSS 24+r4(SP), Y12

#define RPAIR(ROW, ACC, LOAD, XB, r4) \
	LEAQ (ROW)(R13*1), SI; \
	LOAD(0, Y4, Y5);       \
	LOAD(XB, Y6, Y7);      \
	RSCALES(r4);           \
	PAIR(DI, ACC)

// RPAIRV and RONEV are RPAIR and RONE with VPDPBUSD.
#define RPAIRV(ROW, ACC, LOAD, XB, r4) \
	LEAQ (ROW)(R13*1), SI;                     \
	LOAD(0, Y4, Y5);                           \
	LOAD(XB, Y6, Y7);                          \
	RSCALES(r4);                               \
	Q8DOTI(Y4, Y5, 2(DI), Y8, Y9, IDOTV);      \
	VFMADD231PS Y11, Y9, ACC;                  \
	Q8DOTI(Y6, Y7, 36(DI), Y8, Y9, IDOTV);     \
	VFMADD231PS Y12, Y9, ACC

#define RONEV(ROW, ACC, LOAD, r4) \
	LEAQ         (ROW)(R13*1), SI;            \
	LOAD(0, Y4, Y5);                          \
	VBROADCASTSS 8+r4(SP), Y11;               \
	Q8DOTI(Y4, Y5, 2(DI), Y8, Y9, IDOTV);     \
	VFMADD231PS  Y11, Y9, ACC

#define RONE(ROW, ACC, LOAD, r4) \
	LEAQ         (ROW)(R13*1), SI; \
	LOAD(0, Y4, Y5);               \
	VBROADCASTSS 8+r4(SP), Y11;    \
	Q8DOT(Y4, Y5, 2(DI), Y8, Y9);  \
	VFMADD231PS  Y11, Y9, ACC

// Q4_0's rows meet the activations unsigned: maddubs(nibble, y), with the
// offset of 8 taken off each lane as 8 * (the sum of its four y), made
// once per call. Those are the integers of dotQ4_0AVX2's sign trick, with
// fewer instructions per row. Q40PREP writes, per pair of column blocks,
// 96 bytes at R12: the two scales (four copies each), the two blocks' lane
// offsets (eight int32 each). Y13 holds the shift counts that put a
// block's high nibbles in the high lane (q40shift), Y14 the nibble mask,
// Y15 ones16.
DATA q40shift<>+0(SB)/8, $0
DATA q40shift<>+8(SB)/8, $0
DATA q40shift<>+16(SB)/8, $0x0000000400000004
DATA q40shift<>+24(SB)/8, $0x0000000400000004
GLOBL q40shift<>(SB), RODATA|NOPTR, $32

// Q40OFF writes at o(R12) the lane offsets of the column block at b(DI),
// with the offset bytes in Y14 and ones16 in Y15.
#define Q40OFF(b, o) \
	VPMADDUBSW b+2(DI), Y14, Y12; \
	VPMADDWD   Y15, Y12, Y12;     \
	VMOVDQU    Y12, o(R12)

// Q40OFFN is Q40OFF writing the offsets negated, for Q40UDOTN, using Y11.
#define Q40OFFN(b, o) \
	VPMADDUBSW b+2(DI), Y14, Y12; \
	VPMADDWD   Y15, Y12, Y12;     \
	VPXOR      Y11, Y11, Y11;     \
	VPSUBD     Y12, Y11, Y12;     \
	VMOVDQU    Y12, o(R12)

#define Q40PREP QUPREP(eight, Q40OFF)

// QUPREP is Q40PREP for the unsigned levels of a type whose offset is the
// byte in every lane of the constant off (eight for Q4_0, hi10 (16) for
// Q5_0), the offsets written by OFF (Q40OFF, or Q40OFFN for Q40UDOTN).
#define QUPREP(off, OFF) \
	VMOVDQU off<>(SB), Y14;    \
	VMOVDQU ones16<>(SB), Y15; \
conv:                          \
	CMPQ   CX, $2;             \
	JLT    conv1;              \
	SCALE4(0, 0);              \
	SCALE4(34, 16);            \
	OFF(0, 32);                \
	OFF(34, 64);               \
	ADDQ   $68, DI;            \
	ADDQ   $96, R12;           \
	SUBQ   $2, CX;             \
	JMP    conv;               \
conv1:                         \
	TESTQ  CX, CX;             \
	JZ     convdone;           \
	SCALE4(0, 0);              \
	OFF(0, 32);                \
convdone:

#define Q40SETUP \
	VMOVDQU q40shift<>(SB), Y13; \
	VMOVDQU nib<>(SB), Y14

// Q40U puts in XU block off(SI)'s 32 nibbles (as NIBBLES does).
#define Q40U(off, XU) \
	VBROADCASTI128 off+2(SI), XU; \
	VPSRLVD        Y13, XU, XU;   \
	VPAND          Y14, XU, XU

// Q40UDOT: P = the eight lane sums of the block in XU with the column
// block at y(DI), the offsets at o(R12) taken off, as floats.
#define Q40UDOT(XU, y, o, P) \
	VPMADDUBSW y(DI), XU, P; \
	VPMADDWD   Y15, P, P;    \
	VPSUBD     o(R12), P, P; \
	VCVTDQ2PS  P, P

// Q40UDOTN is Q40UDOT in one VPDPBUSD onto the negated offsets.
#define Q40UDOTN(XU, y, o, P) \
	VMOVDQU   o(R12), P;     \
	VPDPBUSD  y(DI), XU, P;  \
	VCVTDQ2PS P, P

// UPAIR and UONE are PAIR and ONE for the unsigned-level types: UD(b, y,
// o, XU, P) unpacks the block at b(SI) into XU and sets P to its lane sums
// with the column block at y(DI), the offsets at o(R12) taken off, as
// floats.
#define UPAIR(ROW, ACC, UD, XB, r4) \
	LEAQ        (ROW)(R13*1), SI; \
	RSCALES(r4);                  \
	UD(0, 2, 32, Y4, Y9);         \
	VFMADD231PS Y11, Y9, ACC;     \
	UD(XB, 36, 64, Y6, Y9);       \
	VFMADD231PS Y12, Y9, ACC

#define UONE(ROW, ACC, UD, r4) \
	LEAQ         (ROW)(R13*1), SI; \
	VBROADCASTSS 8+r4(SP), Y11;    \
	UD(0, 2, 32, Y4, Y9);          \
	VFMADD231PS  Y11, Y9, ACC

// The UD steps: Q4_0 and Q5_0 with maddubs, or VPDPBUSD onto the negated
// offsets (N), Q5_0's fifth bits also as an AVX512BW mask (K).
#define Q40UD(b, y, o, XU, P) Q40U(b, XU); Q40UDOT(XU, y, o, P)
#define Q40UDN(b, y, o, XU, P) Q40U(b, XU); Q40UDOTN(XU, y, o, P)
#define Q50UD(b, y, o, XU, P) Q50U(b, XU); Q40UDOT(XU, y, o, P)
#define Q50UDK(b, y, o, XU, P) Q50UK(b, XU); Q40UDOTN(XU, y, o, P)

// Q4_1 and Q5_1 against Q8_1 (dot_q8_amd64.s, Q81DOT1): the column's
// block d and s are converted once per call, as floats, and written four
// times over, 32 bytes per block at R12 (Q81PREP); each block then takes,
// for the group's four rows at once, one conversion of their d and m and
// one multiplication for the eight products (lane 2r: row r's d*dy, lane
// 2r+1 its m*s), which add into Y5's odd lanes as Q81SCALE adds m*s into
// its scalar sum; each row's d*dy is broadcast from 8+8r(SP). Y13 holds the
// nibble shifts (q40shift), Y14 the nibble mask (Q4_1; Q5_1's fifth bits
// take Y14), Y15 ones16.
#define Q81PREP \
conv:                               \
	TESTQ        CX, CX;            \
	JZ           convdone;          \
	VMOVD        0(DI), X12;        \
	VCVTPH2PS    X12, X12;          \
	VPBROADCASTQ X12, Y12;          \
	VMOVUPS      Y12, 0(R12);       \
	ADDQ         $36, DI;           \
	ADDQ         $32, R12;          \
	DECQ         CX;                \
	JMP          conv;              \
convdone:

#define Q81SETUP \
	VMOVDQU q40shift<>(SB), Y13; \
	VMOVDQU nib<>(SB), Y14;      \
	VMOVDQU ones16<>(SB), Y15

// The LEVELS(ROW) steps put the 32 unsigned levels of row ROW's current
// x block (at ROW+R13) in Y4.
#define Q41LEVELS(ROW) \
	VBROADCASTI128 4(ROW)(R13*1), Y4; \
	VPSRLVD        Y13, Y4, Y4;       \
	VPAND          Y14, Y4, Y4

// Q51LEVELSK is Q51LEVELS with the fifth bits as an AVX512BW mask.
#define Q51LEVELSK(ROW) \
	LEAQ           (ROW)(R13*1), SI;   \
	VBROADCASTI128 8(SI), Y4;          \
	VPSRLVD        Y13, Y4, Y4;        \
	VPAND          nib<>(SB), Y4, Y4;  \
	KMOVD          4(SI), K1;          \
	VPADDB         hi10<>(SB), Y4, K1, Y4

#define Q51LEVELS(ROW) \
	LEAQ           (ROW)(R13*1), SI;     \
	VBROADCASTI128 8(SI), Y4;            \
	VPSRLVD        Y13, Y4, Y4;          \
	VPAND          nib<>(SB), Y4, Y4;    \
	FIFTHBITS(4(SI));                    \
	VPAND          hi10<>(SB), Y14, Y14; \
	VPOR           Y14, Y4, Y4

// IDOTW15 is IDOTW with ones16 in Y15.
#define IDOTW15(ymem, XU, P) \
	VPMADDUBSW ymem, XU, P; \
	VPMADDWD   Y15, P, P

// Q81RBLOCK adds the current block of row ROW to ACC: Q81COL's fused
// multiply-add, its d*dy at so(SP), the integers from IDOT.
#define Q81RBLOCK(ROW, ACC, so, LEVELS, IDOT) \
	LEVELS(ROW);                   \
	VBROADCASTSS so(SP), Y11;      \
	IDOT(4(DI), Y4, Y9);           \
	VCVTDQ2PS    Y9, Y9;           \
	VFMADD231PS  Y11, Y9, ACC

// Q81ROWS is the body of the Q8_1-activation four-row kernels, x blocks
// of XB bytes. Each row ends as Q81DOT1 ends: the vector sum reduced, then
// the scalar one added.
#define Q81ROWS(LEVELS, XB, IDOT) \
	MOVQ      out+56(FP), AX;    \
	MOVQ      AX, 0(SP);         \
	MOVQ      n+0(FP), CX;       \
	MOVQ      y+40(FP), DI;      \
	MOVQ      dy+48(FP), R12;    \
	Q81PREP;                     \
	MOVQ      x+8(FP), R8;       \
	MOVQ      stride+16(FP), DX; \
	MOVQ      ngroups+32(FP), BX; \
	Q81SETUP;                    \
	RGROUPSTART;                 \
	MOVQ      dy+48(FP), R12;    \
	VXORPS    Y5, Y5, Y5;        \
block:                           \
	TESTQ     CX, CX;            \
	JZ        groupend;          \
	VMOVD     (R8)(R13*1), X12;  \
	VPINSRD   $1, (R9)(R13*1), X12, X12;  \
	VPINSRD   $2, (R10)(R13*1), X12, X12; \
	VPINSRD   $3, (R11)(R13*1), X12, X12; \
	VCVTPH2PS X12, Y12;          \
	VMULPS    0(R12), Y12, Y12;  \
	VADDPS    Y12, Y5, Y5;       \
	VMOVUPS   Y12, 8(SP);        \
	RPREFETCH;                   \
	Q81RBLOCK(R8, Y0, 8, LEVELS, IDOT);   \
	Q81RBLOCK(R9, Y1, 16, LEVELS, IDOT);  \
	Q81RBLOCK(R10, Y2, 24, LEVELS, IDOT); \
	Q81RBLOCK(R11, Y3, 32, LEVELS, IDOT); \
	ADDQ      $XB, R13;          \
	ADDQ      $36, DI;           \
	ADDQ      $32, R12;          \
	DECQ      CX;                \
	JMP       block;             \
	RGROUPENDR(HSUM4MS)

// Q5_0's rows meet the activations unsigned as Q4_0's do: the level is
// the nibble with the fifth bit as 16 (0..31), the offset 16 * (the sum of
// each lane's four y), the integers of dotQ5_0AVX2's sign trick again.
// Y13 holds q40shift, Y15 ones16; the fifth bits take Y14.
#define Q50SETUP \
	VMOVDQU q40shift<>(SB), Y13

// Q50U puts in XU the 32 levels of the Q5_0 block at off(SI).
#define Q50U(off, XU) \
	VBROADCASTI128 off+6(SI), XU;        \
	VPSRLVD        Y13, XU, XU;          \
	VPAND          nib<>(SB), XU, XU;    \
	FIFTHBITS(off+2(SI));                \
	VPAND          hi10<>(SB), Y14, Y14; \
	VPOR           Y14, XU, XU

// Q50UK is Q50U with AVX512BW: the fifth bits loaded as the mask K1, 16
// added to the bytes they select.
#define Q50UK(off, XU) \
	VBROADCASTI128 off+6(SI), XU;         \
	VPSRLVD        Y13, XU, XU;           \
	VPAND          nib<>(SB), XU, XU;     \
	KMOVD          off+2(SI), K1;         \
	VPADDB         hi10<>(SB), XU, K1, XU

// func dotQ8_0RowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ8_0RowsAVX2(SB), NOSPLIT, $40-72
	Q80ROWS(SCALESPREP, NOSETUP, RPAIR, RONE, LOADQ8_0, 34, 32)

// func dotQ4_0RowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ4_0RowsAVX2(SB), NOSPLIT, $40-72
	Q80ROWS(Q40PREP, Q40SETUP, UPAIR, UONE, Q40UD, 18, 96)

// func dotQ5_0RowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ5_0RowsAVX2(SB), NOSPLIT, $40-72
	Q80ROWS(QUPREP(hi10, Q40OFF), Q50SETUP, UPAIR, UONE, Q50UD, 22, 96)

// func dotIQ4_NLRowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotIQ4_NLRowsAVX2(SB), NOSPLIT, $40-72
	Q80ROWS(SCALESPREP, TABLE(iq4nl), RPAIR, RONE, LOADIQ4NL, 18, 32)

// func dotQ4_1RowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ4_1RowsAVX2(SB), NOSPLIT, $40-72
	Q81ROWS(Q41LEVELS, 20, IDOTW15)

// func dotQ5_1RowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ5_1RowsAVX2(SB), NOSPLIT, $40-72
	Q81ROWS(Q51LEVELS, 24, IDOTW15)

// The avx512vnni level's four-row kernels: the AVX2 ones with VPDPBUSD.

// Q8_0's rows meet the activations unsigned as well: each quant plus 128
// (its top bit flipped), the offset 128 * (the sum of each lane's four y)
// taken off through the accumulator VPDPBUSD starts from. With the
// activations in [-127, 127] the lane sums are the sign trick's integers,
// from one VPDPBUSD on the row's bytes as they are loaded instead of two
// sign operations and a copy of the column's bytes per block. QUPREP
// leaves b80 in Y14.
DATA b80<>+0(SB)/8, $0x8080808080808080
DATA b80<>+8(SB)/8, $0x8080808080808080
DATA b80<>+16(SB)/8, $0x8080808080808080
DATA b80<>+24(SB)/8, $0x8080808080808080
GLOBL b80<>(SB), RODATA|NOPTR, $32

// Q80U puts in XU the 32 quants of the Q8_0 block at off(SI) plus 128.
#define Q80U(off, XU) VPXOR off+2(SI), Y14, XU
#define Q80UDN(b, y, o, XU, P) Q80U(b, XU); Q40UDOTN(XU, y, o, P)

// Q80ROWSZ is Q80ROWS for the unsigned-level types of the avx512vnni
// level with two rows per 512-bit register, as Q4_1's kernel: each pair of
// blocks of rows 0 and 1 goes into Z0 (row 0 in the low half), of rows 2
// and 3 into Z1, each half the 256-bit kernel's lanes and operations; the
// rows' products xd*dy are permuted out of Y12 (Z16..Z19, q80perm). A
// last odd block takes the 256-bit path (UONE) once the accumulators are
// split into Y0..Y3. PREP as for Q80ROWS; SETUP loads LEVZ's constants;
// LEVZ(RA, RB, off, YU, ZU) puts in ZU the unsigned levels of the blocks
// at off of rows RA (low half) and RB; UD is the 256-bit UONE's step; x
// blocks are XB bytes.
DATA q80perm<>+0(SB)/8, $0
DATA q80perm<>+8(SB)/8, $0
DATA q80perm<>+16(SB)/8, $0
DATA q80perm<>+24(SB)/8, $0
DATA q80perm<>+32(SB)/8, $0x0000000100000001
DATA q80perm<>+40(SB)/8, $0x0000000100000001
DATA q80perm<>+48(SB)/8, $0x0000000100000001
DATA q80perm<>+56(SB)/8, $0x0000000100000001
DATA q80perm<>+64(SB)/8, $0x0000000400000004
DATA q80perm<>+72(SB)/8, $0x0000000400000004
DATA q80perm<>+80(SB)/8, $0x0000000400000004
DATA q80perm<>+88(SB)/8, $0x0000000400000004
DATA q80perm<>+96(SB)/8, $0x0000000500000005
DATA q80perm<>+104(SB)/8, $0x0000000500000005
DATA q80perm<>+112(SB)/8, $0x0000000500000005
DATA q80perm<>+120(SB)/8, $0x0000000500000005
DATA q80perm<>+128(SB)/8, $0x0000000200000002
DATA q80perm<>+136(SB)/8, $0x0000000200000002
DATA q80perm<>+144(SB)/8, $0x0000000200000002
DATA q80perm<>+152(SB)/8, $0x0000000200000002
DATA q80perm<>+160(SB)/8, $0x0000000300000003
DATA q80perm<>+168(SB)/8, $0x0000000300000003
DATA q80perm<>+176(SB)/8, $0x0000000300000003
DATA q80perm<>+184(SB)/8, $0x0000000300000003
DATA q80perm<>+192(SB)/8, $0x0000000600000006
DATA q80perm<>+200(SB)/8, $0x0000000600000006
DATA q80perm<>+208(SB)/8, $0x0000000600000006
DATA q80perm<>+216(SB)/8, $0x0000000600000006
DATA q80perm<>+224(SB)/8, $0x0000000700000007
DATA q80perm<>+232(SB)/8, $0x0000000700000007
DATA q80perm<>+240(SB)/8, $0x0000000700000007
DATA q80perm<>+248(SB)/8, $0x0000000700000007
GLOBL q80perm<>(SB), RODATA|NOPTR, $256

// UPAIRZ adds the current two blocks of rows RA and RB to ACC, the
// column's blocks in Z8 and Z22, the rows' products permuted by P0 (first
// block) and P1.
#define UPAIRZ(RA, RB, ACC, LEVZ, XB, P0, P1) \
	LEVZ(RA, RB, 0, Y4, Z4);          \
	VBROADCASTI64X4 32(R12), Z9;      \
	VPDPBUSD        Z8, Z4, Z9;       \
	VCVTDQ2PS       Z9, Z9;           \
	VPERMPS         Z12, P0, Z10;     \
	VFMADD231PS     Z10, Z9, ACC;     \
	LEVZ(RA, RB, XB, Y6, Z6);         \
	VBROADCASTI64X4 64(R12), Z7;      \
	VPDPBUSD        Z22, Z6, Z7;      \
	VCVTDQ2PS       Z7, Z7;           \
	VPERMPS         Z12, P1, Z10;     \
	VFMADD231PS     Z10, Z7, ACC

#define Q80ROWSZ(PREP, SETUP, LEVZ, UD, XB) \
	MOVQ      out+56(FP), AX;        \
	MOVQ      AX, 0(SP);             \
	MOVQ      n+0(FP), CX;           \
	MOVQ      y+40(FP), DI;          \
	MOVQ      dy+48(FP), R12;        \
	PREP;                            \
	MOVQ      x+8(FP), R8;           \
	MOVQ      stride+16(FP), DX;     \
	MOVQ      ngroups+32(FP), BX;    \
	SETUP;                           \
	VMOVDQU32 q80perm<>+0(SB), Z16;  \
	VMOVDQU32 q80perm<>+64(SB), Z17; \
	VMOVDQU32 q80perm<>+128(SB), Z18; \
	VMOVDQU32 q80perm<>+192(SB), Z19; \
	RGROUPSTART;                     \
	MOVQ      dy+48(FP), R12;        \
pair:                                \
	CMPQ      CX, $2;                \
	JLT       split;                 \
	RPREFETCH;                       \
	RSCALES2(XB);                    \
	VBROADCASTI64X4 2(DI), Z8;       \
	VBROADCASTI64X4 36(DI), Z22;     \
	UPAIRZ(R8, R9, Z0, LEVZ, XB, Z16, Z17);  \
	UPAIRZ(R10, R11, Z1, LEVZ, XB, Z18, Z19); \
	ADDQ      $(2*XB), R13;          \
	ADDQ      $68, DI;               \
	ADDQ      $96, R12;              \
	SUBQ      $2, CX;                \
	JMP       pair;                  \
split:                               \
	VEXTRACTF64X4 $1, Z1, Y3;        \
	VMOVAPS   Y1, Y2;                \
	VEXTRACTF64X4 $1, Z0, Y1;        \
	CMPQ      CX, $1;                \
	JLT       groupend;              \
	RGATHER1;                        \
	UONE(R8, Y0, UD, 0);             \
	UONE(R9, Y1, UD, 4);             \
	UONE(R10, Y2, UD, 8);            \
	UONE(R11, Y3, UD, 12);           \
	RGROUPEND

// Q80LEVZ is Q80U for two rows.
#define Q80LEVZ(RA, RB, off, YU, ZU) \
	VMOVDQU      off+2(RA)(R13*1), YU;         \
	VINSERTI64X4 $1, off+2(RB)(R13*1), ZU, ZU; \
	VPXORD       Z14, ZU, ZU

#define Q80SETUPZ VBROADCASTI64X4 b80<>(SB), Z14

// Q50LEVZ is Q50UK for two rows: K2 selects the high half's dwords, Z13
// holds q40shift twice, Z20 the nibble mask, Z21 hi10; the two rows'
// fifth bits are joined into one 64-bit mask in K1.
#define Q50LEVZ(RA, RB, off, YU, ZU) \
	VBROADCASTI32X4 off+6(RA)(R13*1), ZU;     \
	VBROADCASTI32X4 off+6(RB)(R13*1), K2, ZU; \
	VPSRLVD         Z13, ZU, ZU;              \
	VPANDD          Z20, ZU, ZU;              \
	KMOVD           off+2(RA)(R13*1), K1;     \
	KMOVD           off+2(RB)(R13*1), K3;     \
	KUNPCKDQ        K1, K3, K1;               \
	VPADDB          Z21, ZU, K1, ZU

#define Q50SETUPZ \
	VBROADCASTI64X4 q40shift<>(SB), Z13; \
	VBROADCASTI64X4 nib<>(SB), Z20;      \
	VBROADCASTI64X4 hi10<>(SB), Z21;     \
	MOVL            $0xff00, AX;         \
	KMOVW           AX, K2

// func dotQ8_0RowsVNNI(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ8_0RowsVNNI(SB), NOSPLIT, $40-72
	Q80ROWSZ(QUPREP(b80, Q40OFFN), Q80SETUPZ, Q80LEVZ, Q80UDN, 34)

// func dotQ4_0RowsVNNI(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ4_0RowsVNNI(SB), NOSPLIT, $40-72
	Q80ROWS(QUPREP(eight, Q40OFFN), Q40SETUP, UPAIR, UONE, Q40UDN, 18, 96)

// func dotQ5_0RowsVNNI(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ5_0RowsVNNI(SB), NOSPLIT, $40-72
	Q80ROWSZ(QUPREP(hi10, Q40OFFN), Q50SETUPZ, Q50LEVZ, Q50UDK, 22)

// func dotIQ4_NLRowsVNNI(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotIQ4_NLRowsVNNI(SB), NOSPLIT, $40-72
	Q80ROWS(SCALESPREP, TABLE(iq4nl), RPAIRV, RONEV, LOADIQ4NL, 18, 32)

// RCHUNK is how many blocks of a group's four rows Q4_1's kernel takes at
// a time: its pass over the scales reads every line of the chunk's rows,
// which the products then read again from L1 (a Q8_0 kernel built this
// way ran at half its speed on whole rows of 4096 elements, 17 KB for
// four, which went to L2). Each chunk's scales go to 8(SP)'s pointer on.
// 16(SP) keeps the group's blocks left after the chunk, 24(SP) the
// chunk's, 32(SP) and 40(SP) R13 and R12 at its start. RCHUNK is even, so
// only a group's last chunk can end in an odd block.
#define RCHUNK 32

// RCHUNKBEGIN opens a group's loop over its chunks, each starting with CX
// its block count and SI at the scales; it jumps to groupend after the
// last.
#define RCHUNKBEGIN \
	MOVQ  n+0(FP), AX;     \
	MOVQ  AX, 16(SP);      \
	MOVQ  dy+48(FP), R12;  \
chunk:                     \
	MOVQ  16(SP), CX;      \
	TESTQ CX, CX;          \
	JZ    groupend;        \
	CMPQ  CX, $RCHUNK;     \
	JLE   chunklast;       \
	MOVQ  $RCHUNK, CX;     \
chunklast:                 \
	SUBQ  CX, 16(SP);      \
	MOVQ  CX, 24(SP);      \
	MOVQ  R13, 32(SP);     \
	MOVQ  R12, 40(SP);     \
	MOVQ  8(SP), SI

// RCHUNKPRODUCTS goes back to the chunk's start for its products after
// its scales' pass.
#define RCHUNKPRODUCTS \
	MOVQ 24(SP), CX;  \
	MOVQ 32(SP), R13; \
	MOVQ 40(SP), R12; \
	MOVQ 8(SP), SI

// Q4_1's avx512vnni kernel keeps each row in a 256-bit register and takes
// each block's nibbles without shifting them: one AND with q41split keeps
// the low nibbles of the 16 bytes in the low lanes (elements 0-15) and
// the high ones, in place, in the high lanes (elements 16-31), so a high
// lane's VPDPBUSD sum is 16 times the haswell build's integer, exactly.
// Its fused multiply-add by d*dy is then 16 times the haswell build's,
// rounded alike (a power of two scales the rounding with it; every
// partial sum is a multiple of 2^-48, far from float32's subnormals and
// overflow), so the high lanes accumulate 16 times the haswell build's
// lanes, bit for bit, and one exact multiplication by q41unsplit at the
// group's end gives them back. That is four 256-bit operations a row's
// block (AND, VPDPBUSD, conversion, multiply-add with d*dy broadcast from
// memory), where the two-rows-per-512-bit kernel took 512-bit ones worth
// seven (shift, merged load, permutation of the scales): Zen 4 splits
// 512-bit operations in two. The d*dy come from a pass of their own over
// each chunk (RCHUNK): per two blocks the four rows' d and m in Z12, one
// conversion, one multiplication, the m*s added into Y5's odd lanes in
// block order as before, the eight products stored at SI; broadcasting
// them straight after the store instead cost the core more than the
// shift and permutation it saves (28 us against 23 for SmolLM2's 576x1536
// at 1 thread, zen4 EPYC). A last odd block goes alone.
DATA q41split<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q41split<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q41split<>+16(SB)/8, $0xf0f0f0f0f0f0f0f0
DATA q41split<>+24(SB)/8, $0xf0f0f0f0f0f0f0f0
GLOBL q41split<>(SB), RODATA|NOPTR, $32

DATA q41unsplit<>+0(SB)/8, $0x3f8000003f800000
DATA q41unsplit<>+8(SB)/8, $0x3f8000003f800000
DATA q41unsplit<>+16(SB)/8, $0x3d8000003d800000
DATA q41unsplit<>+24(SB)/8, $0x3d8000003d800000
GLOBL q41unsplit<>(SB), RODATA|NOPTR, $32

// Q41BLKY adds the block XO bytes on of row ROW to ACC, the column's
// quants at YO(DI), d*dy at so(SP).
#define Q41BLKY(ROW, ACC, XO, YO, so) \
	VBROADCASTI128   XO+4(ROW)(R13*1), Y4; \
	VPAND            Y14, Y4, Y4;          \
	VPXOR            Y9, Y9, Y9;           \
	VPDPBUSD         YO+4(DI), Y4, Y9;     \
	VCVTDQ2PS        Y9, Y9;               \
	VFMADD231PS.BCST so(SI), Y9, ACC

// func dotQ4_1RowsVNNI(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ4_1RowsVNNI(SB), NOSPLIT, $48-72
	MOVQ            out+56(FP), AX
	MOVQ            AX, 0(SP)
	MOVQ            n+0(FP), CX
	MOVQ            y+40(FP), DI
	MOVQ            dy+48(FP), R12
	Q81PREP
	MOVQ            R12, 8(SP)
	MOVQ            x+8(FP), R8
	MOVQ            stride+16(FP), DX
	MOVQ            ngroups+32(FP), BX
	VMOVDQU         q41split<>(SB), Y14
	VMOVUPS         q41unsplit<>(SB), Y13
	RGROUPSTART
	VXORPS          Y5, Y5, Y5
	RCHUNKBEGIN

scales:
	CMPQ            CX, $2
	JLT             scale
	VMOVD           (R8)(R13*1), X12
	VPINSRD         $1, (R9)(R13*1), X12, X12
	VPINSRD         $2, (R10)(R13*1), X12, X12
	VPINSRD         $3, (R11)(R13*1), X12, X12
	VMOVD           20(R8)(R13*1), X15
	VPINSRD         $1, 20(R9)(R13*1), X15, X15
	VPINSRD         $2, 20(R10)(R13*1), X15, X15
	VPINSRD         $3, 20(R11)(R13*1), X15, X15
	VINSERTI128     $1, X15, Y12, Y12
	VCVTPH2PS       Y12, Z12
	VMULPS          0(R12), Z12, Z12
	VMOVUPS         Z12, 0(SI)
	VADDPS          Y12, Y5, Y5
	VEXTRACTF64X4   $1, Z12, Y15
	VADDPS          Y15, Y5, Y5
	ADDQ            $40, R13
	ADDQ            $64, R12
	ADDQ            $64, SI
	SUBQ            $2, CX
	JMP             scales

scale:
	TESTQ           CX, CX
	JZ              scaled
	VMOVD           (R8)(R13*1), X12
	VPINSRD         $1, (R9)(R13*1), X12, X12
	VPINSRD         $2, (R10)(R13*1), X12, X12
	VPINSRD         $3, (R11)(R13*1), X12, X12
	VCVTPH2PS       X12, Y12
	VMULPS          0(R12), Y12, Y12
	VMOVUPS         Y12, 0(SI)
	VADDPS          Y12, Y5, Y5

scaled:
	RCHUNKPRODUCTS

pair:
	CMPQ            CX, $2
	JLT             block
	RPREFETCH
	Q41BLKY(R8, Y0, 0, 0, 0)
	Q41BLKY(R9, Y1, 0, 0, 8)
	Q41BLKY(R10, Y2, 0, 0, 16)
	Q41BLKY(R11, Y3, 0, 0, 24)
	Q41BLKY(R8, Y0, 20, 36, 32)
	Q41BLKY(R9, Y1, 20, 36, 40)
	Q41BLKY(R10, Y2, 20, 36, 48)
	Q41BLKY(R11, Y3, 20, 36, 56)
	ADDQ            $40, R13
	ADDQ            $72, DI
	ADDQ            $64, R12
	ADDQ            $64, SI
	SUBQ            $2, CX
	JMP             pair

block:
	TESTQ           CX, CX
	JZ              chunk
	Q41BLKY(R8, Y0, 0, 0, 0)
	Q41BLKY(R9, Y1, 0, 0, 8)
	Q41BLKY(R10, Y2, 0, 0, 16)
	Q41BLKY(R11, Y3, 0, 0, 24)
	JMP             chunk

groupend:
	VMULPS          Y13, Y0, Y0
	VMULPS          Y13, Y1, Y1
	VMULPS          Y13, Y2, Y2
	VMULPS          Y13, Y3, Y3
	RSTORE4R(HSUM4MS)
	ADDQ            DX, R8
	DECQ            BX
	JMP             group

done:
	VZEROUPPER
	RET

// func dotQ5_1RowsVNNI(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ5_1RowsVNNI(SB), NOSPLIT, $40-72
	Q81ROWS(Q51LEVELSK, 24, IDOTV)
