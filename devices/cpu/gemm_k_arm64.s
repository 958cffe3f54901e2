//go:build !purego

#include "dot_arm64.h"

// Register tiles of Q4_K, Q5_K and Q6_K weights against Q8_K columns, both
// packed for the tile first (plainGemm's pack): two rows by four columns
// at a time, every output bit for bit what the vec_dot kernels
// (dot_k_arm64.s) give it.
//
// The vec_dot kernels spend, per 32 elements and column, a cleared
// register, two dot products and a multiply by the sub-block's scale. The
// packed layouts instead give each of a vector's four int32 lanes its own
// 32-element sub-block: packed vector 8h+g (h < 2, g < 8) holds, in lane
// j, elements 4g..4g+3 of sub-block 4h+j. One SDOT per 16 bytes then keeps
// each sub-block's sum apart with nothing to clear or scale per
// sub-block, and a segment of vectors ends with one multiply by its
// scales, lane by lane. The integer sums are exact in any order; the
// float part per super-block is the vec_dot's: float(isum) times the same
// product d*dy (and, for Q4_K and Q5_K, minus float(msum) times dmin*dy),
// fused into the same accumulator in the same order, with the four
// columns in the lanes of one register.
//
// Why two rows by four columns: with dotprod, an output needs its segment
// lanes and its super-block sums (two registers), so the eight outputs
// take V0-V15, two steps of two rows (V16-V19) and of four columns
// (V20-V27) are loaded by one instruction per row or column, and the rows'
// float sums take V28, V29. Without dotprod an output also needs a second
// register of int16 products (the tiles below say why), so the eight
// outputs take V0-V23 and single steps of the rows and columns V24-V29,
// with the float sums in V30, V31: all 32. Three rows would need 24
// registers (36 without dotprod) for the sums alone; one row would load
// each column's bytes for every row. The columns are four because the
// plumbing hands the tile four.
//
// A packed Q4_K or Q5_K super-block (336 bytes): the scales of sub-blocks
// 0-3 and 4-7 as int32s at 0 and 16, the eight minimums as int16s at 32, d
// and dmin as floats at 64, the 256 levels (0..31) as bytes at 80. A packed
// Q6_K super-block (336 bytes): the scales of its four segments as int32s
// at 0, 16, 32, 48 (segment 2h+p is vectors 8h+4p..8h+4p+3: lane j meets
// 16-element sub-block 8h+2j+p), d as a float at 64, the levels minus 32
// as bytes at 80. A packed Q8_K column block (292 bytes): the quants at 0,
// the eight sums of 32 (bsums pairs) as int16s at 256, d at 272.

// TLANES transposes, by ST4, the four 32-element sub-blocks of one half
// (the first sixteen bytes of each in A, B, C, D, the others in E, F, G,
// H) to the packed vectors at R4 (advanced).
#define TLANES(A, B, C, D, E, F, G, H) \
	VST4.P [A.S4, B.S4, C.S4, D.S4], 64(R4); \
	VST4.P [E.S4, F.S4, G.S4, H.S4], 64(R4)

// Q4_K levels of one half (quant bytes at R3, advanced): chunk 2h's low
// nibbles are sub-block 4h, its high ones 4h+1, chunk 2h+1's 4h+2, 4h+3.
// FIFTH(LO, HI, OP) adds Q5_K's fifth bits (OP moves bit s of qh, in V12
// and V13, to bit 4), or nothing.
#define PK4HALF(FIFTH, OP0, OP1, OP2, OP3) \
	VLD1.P 64(R3), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	VAND   V30.B16, V0.B16, V4.B16;  \
	VUSHR  $4, V0.B16, V5.B16;       \
	VAND   V30.B16, V2.B16, V6.B16;  \
	VUSHR  $4, V2.B16, V7.B16;       \
	VAND   V30.B16, V1.B16, V8.B16;  \
	VUSHR  $4, V1.B16, V9.B16;       \
	VAND   V30.B16, V3.B16, V10.B16; \
	VUSHR  $4, V3.B16, V11.B16;      \
	FIFTH(V4, V8, OP0);              \
	FIFTH(V5, V9, OP1);              \
	FIFTH(V6, V10, OP2);             \
	FIFTH(V7, V11, OP3);             \
	TLANES(V4, V5, V6, V7, V8, V9, V10, V11)

#define NOFIFTH4(LO, HI, OP)

#define FIFTH4(LO, HI, OP) \
	OP, V12.B16, V31.B16;           \
	VAND V29.B16, V31.B16, V31.B16; \
	VORR V31.B16, LO.B16, LO.B16;   \
	OP, V13.B16, V31.B16;           \
	VAND V29.B16, V31.B16, V31.B16; \
	VORR V31.B16, HI.B16, HI.B16

// PACKROWS is the body of a row packer: nrows rows of super-blocks of XB
// bytes (stride bytes apart) from src to dst, one after the other; BLOCK
// packs the super-block at R1 to R2 (both left where they were).
#define PACKROWS(SETUP, BLOCK, XB) \
	MOVD dst+0(FP), R2;      \
	MOVD src+8(FP), R14;     \
	MOVD stride+16(FP), R15; \
	MOVD nrows+24(FP), R19;  \
	SETUP;                   \
prow:                        \
	CBZ  R19, pdone;         \
	MOVD R14, R1;            \
	MOVD steps+32(FP), R0;   \
pblock:                      \
	CBZ  R0, pnext;          \
	BLOCK;                   \
	ADD  $XB, R1;            \
	ADD  $336, R2;           \
	SUB  $1, R0;             \
	B    pblock;             \
pnext:                       \
	ADD  R15, R14;           \
	SUB  $1, R19;            \
	B    prow;               \
pdone:                       \
	RET

#define SETUPPK4 \
	VMOVI $15, V30.B16; \
	VMOVI $16, V29.B16

// PK4HEAD stores the scales, minimums, d and dmin of the Q4_K or Q5_K
// super-block at R1 and points R4 at the packed levels.
#define PK4HEAD \
	Q4KSCALES;                   \
	FMOVQ F25, 0(R2);            \
	FMOVQ F26, 16(R2);           \
	FMOVQ F27, 32(R2);           \
	VEOR  V0.B16, V0.B16, V0.B16; \
	FMOVQ F0, 48(R2);            \
	FMOVS 0(R1), F20;            \
	FCVTL4S(20, 20);             \
	FMOVD F20, 64(R2);           \
	MOVD  ZR, 72(R2);            \
	ADD   $80, R2, R4

#define PK4BLOCK \
	PK4HEAD;         \
	ADD $16, R1, R3; \
	PK4HALF(NOFIFTH4, X, X, X, X); \
	PK4HALF(NOFIFTH4, X, X, X, X)

// Q5_K: bit s of qh[l] (qh at 16) is the fifth bit of element 32s+l.
#define PK5BLOCK \
	PK4HEAD;                          \
	ADD    $16, R1, R3;               \
	VLD1.P 32(R3), [V12.B16, V13.B16]; \
	PK4HALF(FIFTH4, VSHL $4, VSHL $3, VSHL $2, VSHL $1); \
	PK4HALF(FIFTH4, VAND V29.B16, VUSHR $1, VUSHR $2, VUSHR $3)

// Q6_K levels of one half (ql at R3, qh at R5, both advanced), in the
// 32-element sub-blocks dot_k_arm64.s's Q6KHALF makes them.
#define PK6HALF \
	VLD1.P 64(R3), [V4.B16, V5.B16, V6.B16, V7.B16]; \
	VLD1.P 32(R5), [V8.B16, V9.B16];                 \
	Q6KDEC(VAND V30.B16, V4, VSHL $4, V8, V10);      \
	Q6KDEC(VAND V30.B16, V5, VSHL $4, V9, V14);      \
	Q6KDEC(VAND V30.B16, V6, VSHL $2, V8, V11);      \
	Q6KDEC(VAND V30.B16, V7, VSHL $2, V9, V15);      \
	Q6KDEC(VUSHR $4, V4, VAND V29.B16, V8, V12);     \
	Q6KDEC(VUSHR $4, V5, VAND V29.B16, V9, V16);     \
	Q6KDEC(VUSHR $4, V6, VUSHR $2, V8, V13);         \
	Q6KDEC(VUSHR $4, V7, VUSHR $2, V9, V17);         \
	TLANES(V10, V11, V12, V13, V14, V15, V16, V17)

#define SETUPPK6 \
	VMOVI $15, V30.B16; \
	VMOVI $48, V29.B16; \
	VMOVI $32, V28.B16

// PK6BLOCK: the even scales (LD2's first register) are segments 0 and 2's
// (the first sixteen elements of each 32), the odd ones 1 and 3's.
#define PK6BLOCK \
	ADD   $192, R1, R3;            \
	VLD2  (R3), [V20.B8, V21.B8];  \
	SXTL8H(20, 20);                \
	SXTL8H(21, 21);                \
	SXTL4S(20, 22);                \
	SXTL4S(21, 23);                \
	SXTL24S(20, 24);               \
	SXTL24S(21, 25);               \
	FMOVQ F22, 0(R2);              \
	FMOVQ F23, 16(R2);             \
	FMOVQ F24, 32(R2);             \
	FMOVQ F25, 48(R2);             \
	H2S(208(R1), R3, F20);         \
	FMOVS F20, 64(R2);             \
	MOVW  ZR, 68(R2);              \
	MOVD  ZR, 72(R2);              \
	MOVD  R1, R3;                  \
	ADD   $128, R1, R5;            \
	ADD   $80, R2, R4;             \
	PK6HALF;                       \
	PK6HALF

// PK8HALF packs the 128 quants of one half (at R3, advanced), each
// sub-block's first sixteen to V0-V3 and the others to V4-V7 (ST4 wants
// its registers in a row).
#define PK8HALF \
	VLD1.P 16(R3), [V0.B16]; \
	VLD1.P 16(R3), [V4.B16]; \
	VLD1.P 16(R3), [V1.B16]; \
	VLD1.P 16(R3), [V5.B16]; \
	VLD1.P 16(R3), [V2.B16]; \
	VLD1.P 16(R3), [V6.B16]; \
	VLD1.P 16(R3), [V3.B16]; \
	VLD1.P 16(R3), [V7.B16]; \
	TLANES(V0, V1, V2, V3, V4, V5, V6, V7)

// The tiles. R1, R2: the row pair's packed super-blocks; R3, R4: their
// levels; R5-R8: the four packed columns; R0: super-blocks left. A
// segment's lanes fold into the super-block's integer sums, row r and
// column c's in V(T+4r+c); the rows' float sums (lane c column c's) are
// V(ACC0) and V(ACC1).
//
// With dotprod: V(4r+c) holds the segment's lanes, T = 8, V16-V19 two
// steps of the rows, V20-V27 of the columns, ACC0, ACC1 = 28, 29.
#define KSTEP2 \
	VLD1.P 32(R3), [V16.B16, V17.B16]; \
	VLD1.P 32(R4), [V18.B16, V19.B16]; \
	VLD1.P 32(R5), [V20.B16, V21.B16]; \
	VLD1.P 32(R6), [V22.B16, V23.B16]; \
	VLD1.P 32(R7), [V24.B16, V25.B16]; \
	VLD1.P 32(R8), [V26.B16, V27.B16]; \
	SDOT16B(20, 16, 0); SDOT16B(22, 16, 1); SDOT16B(24, 16, 2); SDOT16B(26, 16, 3); \
	SDOT16B(20, 18, 4); SDOT16B(22, 18, 5); SDOT16B(24, 18, 6); SDOT16B(26, 18, 7); \
	SDOT16B(21, 17, 0); SDOT16B(23, 17, 1); SDOT16B(25, 17, 2); SDOT16B(27, 17, 3); \
	SDOT16B(21, 19, 4); SDOT16B(23, 19, 5); SDOT16B(25, 19, 6); SDOT16B(27, 19, 7)

#define ZERO8 \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V1.B16, V1.B16, V1.B16; \
	VEOR V2.B16, V2.B16, V2.B16; \
	VEOR V3.B16, V3.B16, V3.B16; \
	VEOR V4.B16, V4.B16, V4.B16; \
	VEOR V5.B16, V5.B16, V5.B16; \
	VEOR V6.B16, V6.B16, V6.B16; \
	VEOR V7.B16, V7.B16, V7.B16

// SSCALE folds a finished segment into the super-block's sums with the
// rows' scales at off (OP: MUL4S for the first segment, MLA4S after it).
#define SSCALE(off, OP) \
	FMOVQ off(R1), F16; \
	FMOVQ off(R2), F17; \
	OP(16, 0, 8); OP(16, 1, 9); OP(16, 2, 10); OP(16, 3, 11); \
	OP(17, 4, 12); OP(17, 5, 13); OP(17, 6, 14); OP(17, 7, 15)

// SSEG8 and SSEG4: segments of eight (Q4_K, Q5_K) and four (Q6_K)
// vectors.
#define SSEG8(off, OP) \
	ZERO8; KSTEP2; KSTEP2; KSTEP2; KSTEP2; SSCALE(off, OP)

#define SSEG4(off, OP) \
	ZERO8; KSTEP2; KSTEP2; SSCALE(off, OP)

// Without dotprod: the products of a step go to int16 lanes, bytes 0-7 of
// row r and column c in V(4r+c), bytes 8-15 in V(8+4r+c), and a segment
// adds up there (at most eight products of 31*128, or four of 32*128 for
// Q6_K, so no lane overflows) before pairwise adds widen it to the
// sub-blocks' int32 lanes: two multiplies per 16 bytes where widening
// each step's products would take four. T = 16, V24, V25 a step of the
// rows, V26-V29 of the columns, ACC0, ACC1 = 30, 31.
#define NSTEP(MUL, MUL2) \
	VLD1.P 16(R3), [V24.B16]; \
	VLD1.P 16(R4), [V25.B16]; \
	VLD1.P 16(R5), [V26.B16]; \
	VLD1.P 16(R6), [V27.B16]; \
	VLD1.P 16(R7), [V28.B16]; \
	VLD1.P 16(R8), [V29.B16]; \
	MUL(26, 24, 0); MUL2(26, 24, 8); MUL(27, 24, 1); MUL2(27, 24, 9);     \
	MUL(28, 24, 2); MUL2(28, 24, 10); MUL(29, 24, 3); MUL2(29, 24, 11);   \
	MUL(26, 25, 4); MUL2(26, 25, 12); MUL(27, 25, 5); MUL2(27, 25, 13);   \
	MUL(28, 25, 6); MUL2(28, 25, 14); MUL(29, 25, 7); MUL2(29, 25, 15)

#define NFIRST NSTEP(SMULL8H, SMULL28H)
#define NNEXT NSTEP(SMLAL8H, SMLAL28H)

// NFOLD widens output o's int16 lanes to its sub-blocks' sums (lane j:
// bytes 4j..4j+3, as SDOT leaves them) and folds them in with the scales
// in V(S).
#define NFOLD(o, S, OP) \
	SADDLP4S(o, o);       \
	SADDLP4S(8+o, 8+o);   \
	ADDP4S(8+o, o, o);    \
	OP(S, o, 16+o)

#define NSCALE(off, OP) \
	FMOVQ off(R1), F24; \
	FMOVQ off(R2), F25; \
	NFOLD(0, 24, OP); NFOLD(1, 24, OP); NFOLD(2, 24, OP); NFOLD(3, 24, OP); \
	NFOLD(4, 25, OP); NFOLD(5, 25, OP); NFOLD(6, 25, OP); NFOLD(7, 25, OP)

#define NSEG8(off, OP) \
	NFIRST; NNEXT; NNEXT; NNEXT; NNEXT; NNEXT; NNEXT; NNEXT; NSCALE(off, OP)

#define NSEG4(off, OP) \
	NFIRST; NNEXT; NNEXT; NNEXT; NSCALE(off, OP)

// KISUM leaves the rows' super-block sums as floats in V0 and V1, lane c
// column c's (pairwise adds: the integers are exact, so the same as
// ADDV's).
#define KISUM(T) \
	ADDP4S(T+1, T, 0);   \
	ADDP4S(T+3, T+2, 1); \
	ADDP4S(1, 0, 0);     \
	ADDP4S(T+5, T+4, 1); \
	ADDP4S(T+7, T+6, 2); \
	ADDP4S(2, 1, 1);     \
	SCVTF4S(0, 0);       \
	SCVTF4S(1, 1)

// KDY gathers the four columns' d into V24 and steps the columns to their
// next block.
#define KDY \
	VLD1.P 4(R5), V24.S[0]; \
	VLD1.P 4(R6), V24.S[1]; \
	VLD1.P 4(R7), V24.S[2]; \
	VLD1.P 4(R8), V24.S[3]; \
	ADD    $16, R5;         \
	ADD    $16, R6;         \
	ADD    $16, R7;         \
	ADD    $16, R8

// KMSUM puts in V(o) the minimums V(m) times the four columns' bsums
// pairs (V20-V23), column c in lane c, using V(a)..V(d).
#define KMSUM(m, a, b, c, d, o) \
	SMULL4S(20, m, a);  \
	SMLAL24S(20, m, a); \
	SMULL4S(21, m, b);  \
	SMLAL24S(21, m, b); \
	SMULL4S(22, m, c);  \
	SMLAL24S(22, m, c); \
	SMULL4S(23, m, d);  \
	SMLAL24S(23, m, d); \
	ADDP4S(b, a, a);    \
	ADDP4S(d, c, c);    \
	ADDP4S(c, a, o)

// Q4_K and Q5_K: two segments of eight vectors (SEG: SSEG8 or NSEG8);
// then per row, as KFINMINP: acc += float(isum) * (d*dy), acc -=
// float(msum) * (dmin*dy). The products are dy*d rather than d*dy: the
// same bits, dy being finite. Everything from V2 to V26 but the sums is
// free by then in both forms.
#define KBLOCKQ4K(SEG, T, ACC0, ACC1) \
	SEG(0, MUL4S);                  \
	SEG(16, MLA4S);                 \
	KISUM(T);                       \
	VLD1.P 16(R5), [V20.H8];        \
	VLD1.P 16(R6), [V21.H8];        \
	VLD1.P 16(R7), [V22.H8];        \
	VLD1.P 16(R8), [V23.H8];        \
	KDY;                            \
	FMOVQ  32(R1), F16;             \
	FMOVQ  32(R2), F17;             \
	KMSUM(16, 2, 3, 4, 5, 2);       \
	KMSUM(17, 6, 7, 8, 9, 3);       \
	SCVTF4S(2, 2);                  \
	SCVTF4S(3, 3);                  \
	FMOVD  64(R1), F18;             \
	FMOVD  64(R2), F19;             \
	FMULE(18, 0, 24, 25);           \
	FMULE(18, 1, 24, 26);           \
	FMLA4S(25, 0, ACC0);            \
	FMLS4S(26, 2, ACC0);            \
	FMULE(19, 0, 24, 25);           \
	FMULE(19, 1, 24, 26);           \
	FMLA4S(25, 1, ACC1);            \
	FMLS4S(26, 3, ACC1)

// Q6_K: four segments of four vectors (SEG: SSEG4 or NSEG4); then per
// row, as KFINP: acc += float(isum) * (d*dy).
#define KBLOCKQ6K(SEG, T, ACC0, ACC1) \
	SEG(0, MUL4S);          \
	SEG(16, MLA4S);         \
	SEG(32, MLA4S);         \
	SEG(48, MLA4S);         \
	KISUM(T);               \
	ADD   $16, R5;          \
	ADD   $16, R6;          \
	ADD   $16, R7;          \
	ADD   $16, R8;          \
	KDY;                    \
	FMOVS 64(R1), F18;      \
	FMOVS 64(R2), F19;      \
	FMULE(18, 0, 24, 25);   \
	FMLA4S(25, 0, ACC0);    \
	FMULE(19, 0, 24, 25);   \
	FMLA4S(25, 1, ACC1)

#define SBLOCKQ4K KBLOCKQ4K(SSEG8, 8, 28, 29)
#define NBLOCKQ4K KBLOCKQ4K(NSEG8, 16, 30, 31)
#define SBLOCKQ6K KBLOCKQ6K(SSEG4, 8, 28, 29)
#define NBLOCKQ6K KBLOCKQ6K(NSEG4, 16, 30, 31)

// KTILE is the body of a tile over nrows (even) packed rows, stride bytes
// apart: R13 the row pair, R11 the rows left, R12 the stride, R14, R15,
// R19, R20 the four columns' outputs (row r's at 4r, two rows a pair); Z0
// and Z1 are free at the end of a pair.
#define KTILE(BLOCK, ACC0, ACC1, Z0, Z1) \
	MOVD x+8(FP), R13;            \
	MOVD stride+16(FP), R12;      \
	MOVD nrows+24(FP), R11;       \
	MOVD y+32(FP), R9;            \
	MOVD out+40(FP), R10;         \
	MOVD 0(R10), R14;             \
	MOVD 8(R10), R15;             \
	MOVD 16(R10), R19;            \
	MOVD 24(R10), R20;            \
pairs:                            \
	CMP  $2, R11;                 \
	BLT  tiledone;                \
	MOVD R13, R1;                 \
	ADD  R12, R13, R2;            \
	MOVD 0(R9), R5;               \
	MOVD 8(R9), R6;               \
	MOVD 16(R9), R7;              \
	MOVD 24(R9), R8;              \
	MOVD steps+0(FP), R0;         \
	VEOR ACC0.B16, ACC0.B16, ACC0.B16; \
	VEOR ACC1.B16, ACC1.B16, ACC1.B16; \
blocks:                           \
	CBZ  R0, pairdone;            \
	ADD  $80, R1, R3;             \
	ADD  $80, R2, R4;             \
	BLOCK;                        \
	ADD  $336, R1;                \
	ADD  $336, R2;                \
	SUB  $1, R0;                  \
	B    blocks;                  \
pairdone:                         \
	VZIP1 ACC1.S4, ACC0.S4, Z0.S4; \
	VZIP2 ACC1.S4, ACC0.S4, Z1.S4; \
	VST1.P Z0.D[0], 8(R14);       \
	VST1.P Z0.D[1], 8(R15);       \
	VST1.P Z1.D[0], 8(R19);       \
	VST1.P Z1.D[1], 8(R20);       \
	ADD  R12<<1, R13, R13;        \
	SUB  $2, R11;                 \
	B    pairs;                   \
tiledone:                         \
	RET

// func packQ4_KNEON(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)
TEXT ·packQ4_KNEON(SB), NOSPLIT, $0-40
	PACKROWS(SETUPPK4, PK4BLOCK, 144)

// func packQ5_KNEON(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)
TEXT ·packQ5_KNEON(SB), NOSPLIT, $0-40
	PACKROWS(SETUPPK4, PK5BLOCK, 176)

// func packQ6_KNEON(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)
TEXT ·packQ6_KNEON(SB), NOSPLIT, $0-40
	PACKROWS(SETUPPK6, PK6BLOCK, 210)

// func gemmQ4_KPx4NEON(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)
TEXT ·gemmQ4_KPx4NEON(SB), NOSPLIT, $0-48
	KTILE(NBLOCKQ4K, V30, V31, V28, V29)

// func gemmQ4_KPx4SDOT(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)
TEXT ·gemmQ4_KPx4SDOT(SB), NOSPLIT, $0-48
	KTILE(SBLOCKQ4K, V28, V29, V30, V31)

// func gemmQ6_KPx4NEON(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)
TEXT ·gemmQ6_KPx4NEON(SB), NOSPLIT, $0-48
	KTILE(NBLOCKQ6K, V30, V31, V28, V29)

// func gemmQ6_KPx4SDOT(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)
TEXT ·gemmQ6_KPx4SDOT(SB), NOSPLIT, $0-48
	KTILE(SBLOCKQ6K, V28, V29, V30, V31)

// func packQ8_KNEON(dst, src unsafe.Pointer, steps int)
TEXT ·packQ8_KNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R4
	MOVD src+8(FP), R1
	MOVD steps+16(FP), R0

p8block:
	CBZ    R0, p8done
	ADD    $4, R1, R3
	PK8HALF
	PK8HALF
	VLD1   (R3), [V16.H8, V17.H8]
	ADDP8H(17, 16, 16)
	VST1.P [V16.H8], 16(R4)
	MOVWU  0(R1), R5
	MOVW   R5, 0(R4)
	MOVW   ZR, 4(R4)
	MOVD   ZR, 8(R4)
	MOVD   ZR, 12(R4)
	ADD    $20, R4
	ADD    $292, R1
	SUB    $1, R0
	B      p8block

p8done:
	RET
