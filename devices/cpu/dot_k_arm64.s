//go:build !purego

#include "dot_arm64.h"

// K-quant weights against Q8_K activations (292-byte blocks: float32 d,
// int8 qs[256], int16 bsums[16]). A super-block's integer sums are exact:
// each sub-block's dot (IDOT) is multiplied by its scale into the int32
// lanes of V1 (MLA by element), the minimums meet the bsums (V31); then
// acc += float(isum) * (d*dy) - float(msum) * (dmin*dy), in F0.

// Q4KX decodes the 64 elements of quant bytes 32c..32c+31 (R3, advanced):
// low nibbles (sub-block 2c) into V6, V7, high ones (2c+1) into V8, V9.
// FIFTH(OPLO, OPHI) may add bits to the levels (Q5_K).
#define Q4KX(FIFTH, OPLO, OPHI) \
	VLD1.P 32(R3), [V4.B16, V5.B16]; \
	VAND   V30.B16, V4.B16, V6.B16;  \
	VAND   V30.B16, V5.B16, V7.B16;  \
	VUSHR  $4, V4.B16, V8.B16;       \
	VUSHR  $4, V5.B16, V9.B16;       \
	FIFTH(OPLO, OPHI)

// Q4KY adds the chunk's dots with one column's 64 quants at YP (advanced)
// to the lanes of V(ACC), scaled by V(S0).s[L0] and V(S1).s[L1].
#define Q4KY(YP, ACC, IDOTZ, IDOT, S0, L0, S1, L1) \
	VLD1.P 64(YP), [V16.B16, V17.B16, V18.B16, V19.B16]; \
	IDOTZ(6, 16, 10);      \
	IDOT(7, 17, 10);       \
	MLAE4S(S0, L0, 10, ACC); \
	IDOTZ(8, 18, 11);      \
	IDOT(9, 19, 11);       \
	MLAE4S(S1, L1, 11, ACC)

// COLS1 and COLS4 are the columns a chunk meets: the single kernel's (y
// quants at R4, sums in V1) or the four-column kernel's (at R14, R15,
// R24, R25; sums in V1, V0, V23 and A3).
#define COLS1(Y, IDOTZ, IDOT, S0, L0, S1, L1) Y(R4, 1, IDOTZ, IDOT, S0, L0, S1, L1)
#define COLS4(Y, IDOTZ, IDOT, S0, L0, S1, L1) \
	Y(R14, 1, IDOTZ, IDOT, S0, L0, S1, L1);  \
	Y(R15, 0, IDOTZ, IDOT, S0, L0, S1, L1);  \
	Y(R24, 23, IDOTZ, IDOT, S0, L0, S1, L1); \
	Y(R25, A3, IDOTZ, IDOT, S0, L0, S1, L1)

#define NOFIFTH(OPLO, OPHI)

// Q4KQS and Q5KQS point R3 at the quant bytes; Q5_K (fp16 d, fp16 dmin,
// scales[12], qh[32], qs[128]) loads qh into V12, V13 on the way.
#define Q4KQS ADD $16, R1, R3

#define Q5KQS \
	ADD    $16, R1, R3;              \
	VLD1.P 32(R3), [V12.B16, V13.B16]

// FIFTHK: bit 2c of qh[l] is the fifth bit of element 64c+l, bit 2c+1
// that of 64c+32+l; OPLO and OPHI move them to bit 4 (V29 holds 0x10).
#define FIFTHK(OPLO, OPHI) \
	OPLO, V12.B16, V2.B16;         \
	OPLO, V13.B16, V3.B16;         \
	VAND V29.B16, V2.B16, V2.B16; \
	VAND V29.B16, V3.B16, V3.B16; \
	VORR V2.B16, V6.B16, V6.B16;   \
	VORR V3.B16, V7.B16, V7.B16;   \
	OPHI, V12.B16, V2.B16;         \
	OPHI, V13.B16, V3.B16;         \
	VAND V29.B16, V2.B16, V2.B16; \
	VAND V29.B16, V3.B16, V3.B16; \
	VORR V2.B16, V8.B16, V8.B16;   \
	VORR V3.B16, V9.B16, V9.B16

#define Q4KCHUNKS(COLS, IDOTZ, IDOT) \
	Q4KX(NOFIFTH, X, X); COLS(Q4KY, IDOTZ, IDOT, 25, 0, 25, 1); \
	Q4KX(NOFIFTH, X, X); COLS(Q4KY, IDOTZ, IDOT, 25, 2, 25, 3); \
	Q4KX(NOFIFTH, X, X); COLS(Q4KY, IDOTZ, IDOT, 26, 0, 26, 1); \
	Q4KX(NOFIFTH, X, X); COLS(Q4KY, IDOTZ, IDOT, 26, 2, 26, 3)

#define Q5KCHUNKS(COLS, IDOTZ, IDOT) \
	Q4KX(FIFTHK, VSHL $4, VSHL $3); COLS(Q4KY, IDOTZ, IDOT, 25, 0, 25, 1); \
	Q4KX(FIFTHK, VSHL $2, VSHL $1); COLS(Q4KY, IDOTZ, IDOT, 25, 2, 25, 3); \
	Q4KX(FIFTHK, VAND V29.B16, VUSHR $1); COLS(Q4KY, IDOTZ, IDOT, 26, 0, 26, 1); \
	Q4KX(FIFTHK, VUSHR $2, VUSHR $3); COLS(Q4KY, IDOTZ, IDOT, 26, 2, 26, 3)

// KLOOP is the body of every K-quant kernel, for x blocks of XB bytes:
// BLOCK(IDOTZ, IDOT) leaves a super-block's integer sum in the lanes of V1
// (cleared for it) and, with minimums, their sum as a float in F31; FIN
// folds them into F0 (KFIN, KFINMIN).
#define KLOOP(SETUP, BLOCK, IDOTZ, IDOT, FIN, XB) \
	MOVD  n+0(FP), R0;            \
	MOVD  x+8(FP), R1;            \
	MOVD  y+16(FP), R2;           \
	FMOVS ZR, F0;                 \
	SETUP;                        \
loop:                             \
	CBZ   R0, done;               \
	VEOR  V1.B16, V1.B16, V1.B16; \
	BLOCK(IDOTZ, IDOT);           \
	ADDV4S(1, 1);                 \
	SCVTFS(1, 1);                 \
	FIN;                          \
	ADD   $XB, R1;                \
	ADD   $292, R2;               \
	SUB   $1, R0;                 \
	B     loop;                   \
done:                             \
	FMOVS F0, ret+24(FP);         \
	RET

// K4LOOP is the four-column kernel body: the y blocks at R19-R22, their
// quants walked by R14, R15, R24, R25; the results accumulate in out (at
// R23), where CFIN(YP, FI, o) folds column YP's sum (FI) in at offset o
// with the single kernel's float operations, so each column's result is
// the single kernel's bit for bit.
#define ZERO4S(a) ENC3(0x6E201C00, a, a, a)

#define K4LOOP(SETUP, BLOCK4, CFIN, XB, IDOTZ, IDOT) \
	MOVD  n+0(FP), R0;            \
	MOVD  x+8(FP), R1;            \
	MOVD  y+16(FP), R9;           \
	MOVD  0(R9), R19;             \
	MOVD  8(R9), R20;             \
	MOVD  16(R9), R21;            \
	MOVD  24(R9), R22;            \
	MOVD  out+24(FP), R23;        \
	VEOR  V4.B16, V4.B16, V4.B16; \
	VST1  [V4.S4], (R23);         \
	SETUP;                        \
loop:                             \
	CBZ   R0, done;               \
	ZERO4S(1);                    \
	ZERO4S(0);                    \
	ZERO4S(23);                   \
	ZERO4S(A3);                   \
	ADD   $4, R19, R14;           \
	ADD   $4, R20, R15;           \
	ADD   $4, R21, R24;           \
	ADD   $4, R22, R25;           \
	BLOCK4(IDOTZ, IDOT);          \
	ADDV4S(1, 1);                 \
	SCVTFS(1, 1);                 \
	ADDV4S(0, 0);                 \
	SCVTFS(0, 0);                 \
	ADDV4S(23, 23);               \
	SCVTFS(23, 23);               \
	ADDV4S(A3, A3);               \
	SCVTFS(A3, A3);               \
	CFIN(R19, F1, 0);             \
	CFIN(R20, F0, 4);             \
	CFIN(R21, F23, 8);            \
	CFIN(R22, FA3, 12);           \
	ADD   $XB, R1;                \
	ADD   $292, R19;              \
	ADD   $292, R20;              \
	ADD   $292, R21;              \
	ADD   $292, R22;              \
	SUB   $1, R0;                 \
	B     loop;                   \
done:                             \
	RET

// KFINP: ACC += FI * fp16(d at off(R1)) * dy (dy at YP); KFIN for the
// single kernel.
#define KFINP(off, YP, FI, ACC) \
	H2S(off(R1), R6, F20);  \
	FMOVS  (YP), F21;       \
	FMULS  F21, F20, F20;   \
	FMADDS F20, ACC, FI, ACC

#define KFIN(off) KFINP(off, R2, F1, F0)

// KFINMINP: ACC += FI * d*dy - F31 * dmin*dy, for the fp16 pair d, dmin
// at off(R1) (one conversion and one multiply make both scales).
#define KFINMINP(off, YP, FI, ACC) \
	FMOVS  off(R1), F20;    \
	FCVTL4S(20, 20);        \
	FMOVS  (YP), F21;       \
	FMULE(21, 0, 20, 20);   \
	DUPS1(20, 22);          \
	FMADDS F20, ACC, FI, ACC; \
	FMSUBS F22, ACC, F31, ACC

#define KFINMIN(off) KFINMINP(off, R2, F1, F0)

// MINSUM4K puts in F31 the sum of the eight minimums (int16s in V(m))
// times the pairs of bsums of y at YP (Q4_K's sub-blocks are 32
// elements), using R3, V16, V17, V19.
#define MINSUM4K(m, YP) \
	ADD   $260, YP, R3;           \
	VLD1  (R3), [V16.H8, V17.H8]; \
	ADDP8H(17, 16, 16);           \
	SMULL4S(m, 16, 31);           \
	SMULL24S(m, 16, 19);          \
	VADD  V19.S4, V31.S4, V31.S4; \
	ADDV4S(31, 31);               \
	SCVTFS(31, 31)

#define SETUPQ4K \
	VMOVI $15, V30.B16; \
	VMOVI $16, V29.B16

#define Q4KBLOCK(IDOTZ, IDOT) \
	Q4KSCALES;           \
	MINSUM4K(27, R2);    \
	Q4KQS;               \
	ADD $4, R2, R4;      \
	Q4KCHUNKS(COLS1, IDOTZ, IDOT)

#define Q5KBLOCK(IDOTZ, IDOT) \
	Q4KSCALES;           \
	MINSUM4K(27, R2);    \
	Q5KQS;               \
	ADD $4, R2, R4;      \
	Q5KCHUNKS(COLS1, IDOTZ, IDOT)

// The four-column blocks: the sums in V1, V0, V23, V28 (A3); the
// minimums meet each column's bsums when the column is finished (CFIN).
#define Q4KBLOCK4(IDOTZ, IDOT) \
	Q4KSCALES; \
	Q4KQS;     \
	Q4KCHUNKS(COLS4, IDOTZ, IDOT)

#define Q5KBLOCK4(IDOTZ, IDOT) \
	Q4KSCALES; \
	Q5KQS;     \
	Q5KCHUNKS(COLS4, IDOTZ, IDOT)

#define Q4KCFIN(YP, FI, o) \
	MINSUM4K(27, YP);           \
	FMOVS o(R23), F4;           \
	KFINMINP(0, YP, FI, F4);    \
	FMOVS F4, o(R23)

// Q6_K (ql[128], qh[64], int8 scales[16], fp16 d): in each 128-element
// half h, element 32s+l (s < 4, l < 32) is the low (s < 2) or high nibble
// of ql[64h + 32(s&1) + l] with bits 2s, 2s+1 of qh[32h+l] above it, minus
// 32; its 16-element sub-blocks run in y's order, scale 8h+k for y's k-th
// 16 bytes. Q6KDEC (dot_arm64.h) makes a sub-block of levels.

// Q6KY adds the four sub-blocks in V10-V13 against one column's 64 quants
// at YP (advanced) to V(ACC), scaled by V(S).s[0..3], using V3.
#define Q6KY(YP, ACC, IDOTZ, IDOT, S, L0, S1, L1) \
	VLD1.P 64(YP), [V16.B16, V17.B16, V18.B16, V19.B16]; \
	IDOTZ(10, 16, 3);       \
	MLAE4S(S, 0, 3, ACC);   \
	IDOTZ(11, 17, 3);       \
	MLAE4S(S, 1, 3, ACC);   \
	IDOTZ(12, 18, 3);       \
	MLAE4S(S, 2, 3, ACC);   \
	IDOTZ(13, 19, 3);       \
	MLAE4S(S, 3, 3, ACC)

// Q6KHALF is one half: ql at R3, qh at R5 (both advanced), sub-blocks
// decoded four at a time for every column.
#define Q6KHALF(COLS, IDOTZ, IDOT, S0, S1) \
	VLD1.P 64(R3), [V4.B16, V5.B16, V6.B16, V7.B16]; \
	VLD1.P 32(R5), [V8.B16, V9.B16];                 \
	Q6KDEC(VAND V30.B16, V4, VSHL $4, V8, V10);      \
	Q6KDEC(VAND V30.B16, V5, VSHL $4, V9, V11);      \
	Q6KDEC(VAND V30.B16, V6, VSHL $2, V8, V12);      \
	Q6KDEC(VAND V30.B16, V7, VSHL $2, V9, V13);      \
	COLS(Q6KY, IDOTZ, IDOT, S0, X, X, X);            \
	Q6KDEC(VUSHR $4, V4, VAND V29.B16, V8, V10);     \
	Q6KDEC(VUSHR $4, V5, VAND V29.B16, V9, V11);     \
	Q6KDEC(VUSHR $4, V6, VUSHR $2, V8, V12);         \
	Q6KDEC(VUSHR $4, V7, VUSHR $2, V9, V13);         \
	COLS(Q6KY, IDOTZ, IDOT, S1, X, X, X)

#define SETUPQ6K \
	VMOVI $15, V30.B16; \
	VMOVI $48, V29.B16; \
	VMOVI $32, V28.B16

// SXTL16 widens the 16 signed scale bytes in V20 to int32s in V24-V27,
// using V21 and V22.
#define SXTL16 \
	SXTL8H(20, 21);  \
	SXTL28H(20, 22); \
	SXTL4S(21, 24);  \
	SXTL24S(21, 25); \
	SXTL4S(22, 26);  \
	SXTL24S(22, 27)

#define Q6KSETUPX \
	ADD   $192, R1, R3;    \
	VLD1  (R3), [V20.B16]; \
	SXTL16;                \
	MOVD  R1, R3;          \
	ADD   $128, R1, R5

#define Q6KBLOCK(IDOTZ, IDOT) \
	Q6KSETUPX;                          \
	ADD   $4, R2, R4;                   \
	Q6KHALF(COLS1, IDOTZ, IDOT, 24, 25); \
	Q6KHALF(COLS1, IDOTZ, IDOT, 26, 27)

// The four-column block: sums in V1, V0, V23, V31 (A3).
#define Q6KBLOCK4(IDOTZ, IDOT) \
	Q6KSETUPX;                          \
	Q6KHALF(COLS4, IDOTZ, IDOT, 24, 25); \
	Q6KHALF(COLS4, IDOTZ, IDOT, 26, 27)

#define Q6KCFIN(YP, FI, o) \
	FMOVS o(R23), F4;         \
	KFINP(208, YP, FI, F4);   \
	FMOVS F4, o(R23)

// func dotQ4_KNEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_KNEON(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ4K, Q4KBLOCK, IDOTZNEON, IDOTNEON, KFINMIN(0), 144)

// func dotQ4_KSDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_KSDOT(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ4K, Q4KBLOCK, IDOTZSDOT, IDOTSDOT, KFINMIN(0), 144)

// func dotQ5_KNEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_KNEON(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ4K, Q5KBLOCK, IDOTZNEON, IDOTNEON, KFINMIN(0), 176)

// func dotQ5_KSDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_KSDOT(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ4K, Q5KBLOCK, IDOTZSDOT, IDOTSDOT, KFINMIN(0), 176)

// func dotQ6_KNEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ6_KNEON(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ6K, Q6KBLOCK, IDOTZNEON, IDOTNEON, KFIN(208), 210)

// func dotQ6_KSDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ6_KSDOT(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ6K, Q6KBLOCK, IDOTZSDOT, IDOTSDOT, KFIN(208), 210)

// Q2_K (scales[16]: scale in the low nibble, minimum in the high one;
// qs[64]; fp16 d; fp16 dmin) and Q3_K (hmask[32], qs[64], scales[12],
// fp16 d): element 128h+32s+l holds bits 2s, 2s+1 of qs[32h+l], in
// 16-element sub-blocks 8h+2s+l/16, which run in y's order. Q3_K adds 4
// where bit 4h+s of hmask[l] is set and subtracts 4, so its levels are
// signed and need no bsums; Q2_K's minimums go through them.
//
// Q23STEP makes one sub-block from Q (bits moved down by QOP, V30 holds 3),
// lets HIGH(HOP, HQ) finish the level, meets y's V(Y) and adds it scaled
// by V(S).s[L] into V1.
#define Q23STEP(IDOTZ, QOP, Q, Y, S, L, HIGH, HOP, HQ) \
	QOP, Q.B16, V10.B16;            \
	VAND V30.B16, V10.B16, V10.B16; \
	HIGH(HOP, HQ);                  \
	IDOTZ(10, Y, 11);               \
	MLAE4S(S, L, 11, 1)

#define NOHIGH(HOP, HQ)

// Q3HIGH: HOP moves bit 4h+s of the hmask bytes in HQ to bit 2 (V28
// holds 4).
#define Q3HIGH(HOP, HQ) \
	HOP, HQ.B16, V2.B16;           \
	VAND V28.B16, V2.B16, V2.B16; \
	VORR V2.B16, V10.B16, V10.B16; \
	VSUB V28.B16, V10.B16, V10.B16

// Q23HALF is one 128-element half: quant bytes at R3 (advanced), y at R4
// (advanced), scales 8h..8h+3 in V(S0), 8h+4..8h+7 in V(S1); H0-H3 are the
// hmask shifts of s = 0..3.
#define Q23HALF(IDOTZ, HIGH, S0, S1, H0, H1, H2, H3) \
	VLD1.P 32(R3), [V4.B16, V5.B16];                     \
	VLD1.P 64(R4), [V16.B16, V17.B16, V18.B16, V19.B16]; \
	VLD1.P 64(R4), [V20.B16, V21.B16, V22.B16, V23.B16]; \
	Q23STEP(IDOTZ, VAND V30.B16, V4, 16, S0, 0, HIGH, H0, V12); \
	Q23STEP(IDOTZ, VAND V30.B16, V5, 17, S0, 1, HIGH, H0, V13); \
	Q23STEP(IDOTZ, VUSHR $2, V4, 18, S0, 2, HIGH, H1, V12);     \
	Q23STEP(IDOTZ, VUSHR $2, V5, 19, S0, 3, HIGH, H1, V13);     \
	Q23STEP(IDOTZ, VUSHR $4, V4, 20, S1, 0, HIGH, H2, V12);     \
	Q23STEP(IDOTZ, VUSHR $4, V5, 21, S1, 1, HIGH, H2, V13);     \
	Q23STEP(IDOTZ, VUSHR $6, V4, 22, S1, 2, HIGH, H3, V12);     \
	Q23STEP(IDOTZ, VUSHR $6, V5, 23, S1, 3, HIGH, H3, V13)

// WIDEN16 widens the 16 scale bytes in V21 to int32s in V24-V27, using
// V9 and V10.
#define WIDEN16 \
	VUXTL  V21.B8, V9.H8;   \
	VUXTL2 V21.B16, V10.H8; \
	VUXTL  V9.H4, V24.S4;    \
	VUXTL2 V9.H8, V25.S4;    \
	VUXTL  V10.H4, V26.S4;   \
	VUXTL2 V10.H8, V27.S4

#define SETUPQ2K \
	VMOVI $3, V30.B16; \
	VMOVI $15, V29.B16

#define Q2KBLOCK(IDOTZ, IDOT) \
	VLD1  (R1), [V20.B16];           \
	VAND  V29.B16, V20.B16, V21.B16; \
	VUSHR $4, V20.B16, V22.B16;      \
	VUXTL  V22.B8, V9.H8;            \
	VUXTL2 V22.B16, V10.H8;          \
	ADD   $260, R2, R3;              \
	VLD1  (R3), [V16.H8, V17.H8];    \
	SMULL4S(9, 16, 31);              \
	SMULL24S(9, 16, 19);             \
	VADD  V19.S4, V31.S4, V31.S4;    \
	SMULL4S(10, 17, 19);             \
	VADD  V19.S4, V31.S4, V31.S4;    \
	SMULL24S(10, 17, 19);            \
	VADD  V19.S4, V31.S4, V31.S4;    \
	ADDV4S(31, 31);                  \
	SCVTFS(31, 31);                  \
	WIDEN16;                         \
	ADD   $16, R1, R3;               \
	ADD   $4, R2, R4;                \
	Q23HALF(IDOTZ, NOHIGH, 24, 25, X, X, X, X); \
	Q23HALF(IDOTZ, NOHIGH, 26, 27, X, X, X, X)

// Q3KSCALES unpacks the sixteen 6-bit scales (low nibbles in bytes 0-7,
// top bit pairs in bytes 8-11), removes their offset of 32 and leaves them
// as int32s in V24-V27.
#define Q3KSCALES \
	MOVWU  96(R1), R3;             \
	MOVWU  100(R1), R4;            \
	MOVWU  104(R1), R5;            \
	MOVW   $0x0f0f0f0f, R9;        \
	MOVW   $0x03030303, R12;       \
	ANDW   R9, R3, R6;             \
	ANDW   R12, R5, R7;            \
	ORRW   R7<<4, R6, R6;          \
	VMOV   R6, V20.S[0];           \
	ANDW   R9, R4, R6;             \
	LSRW   $2, R5, R7;             \
	ANDW   R12, R7, R7;            \
	ORRW   R7<<4, R6, R6;          \
	VMOV   R6, V20.S[1];           \
	LSRW   $4, R3, R6;             \
	ANDW   R9, R6, R6;             \
	LSRW   $4, R5, R7;             \
	ANDW   R12, R7, R7;            \
	ORRW   R7<<4, R6, R6;          \
	VMOV   R6, V20.S[2];           \
	LSRW   $4, R4, R6;             \
	ANDW   R9, R6, R6;             \
	LSRW   $6, R5, R7;             \
	ANDW   R12, R7, R7;            \
	ORRW   R7<<4, R6, R6;          \
	VMOV   R6, V20.S[3];           \
	VSUB   V29.B16, V20.B16, V20.B16; \
	SXTL16

#define SETUPQ3K \
	VMOVI $3, V30.B16;  \
	VMOVI $32, V29.B16; \
	VMOVI $4, V28.B16

#define Q3KBLOCK(IDOTZ, IDOT) \
	Q3KSCALES;                      \
	VLD1  (R1), [V12.B16, V13.B16]; \
	ADD   $32, R1, R3;              \
	ADD   $4, R2, R4;               \
	Q23HALF(IDOTZ, Q3HIGH, 24, 25, VSHL $2, VSHL $1, VAND V28.B16, VUSHR $1); \
	Q23HALF(IDOTZ, Q3HIGH, 26, 27, VUSHR $2, VUSHR $3, VUSHR $4, VUSHR $5)

// func dotQ2_KNEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ2_KNEON(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ2K, Q2KBLOCK, IDOTZNEON, IDOTNEON, KFINMIN(80), 84)

// func dotQ2_KSDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ2_KSDOT(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ2K, Q2KBLOCK, IDOTZSDOT, IDOTSDOT, KFINMIN(80), 84)

// func dotQ3_KNEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ3_KNEON(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ3K, Q3KBLOCK, IDOTZNEON, IDOTNEON, KFIN(108), 110)

// func dotQ3_KSDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ3_KSDOT(SB), NOSPLIT, $0-28
	KLOOP(SETUPQ3K, Q3KBLOCK, IDOTZSDOT, IDOTSDOT, KFIN(108), 110)

#define A3 28
#define FA3 F28

// func dotQ4_Kx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_Kx4NEON(SB), NOSPLIT, $0-32
	K4LOOP(SETUPQ4K, Q4KBLOCK4, Q4KCFIN, 144, IDOTZNEON, IDOTNEON)

#undef A3
#undef FA3

#define A3 28
#define FA3 F28

// func dotQ4_Kx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_Kx4SDOT(SB), NOSPLIT, $0-32
	K4LOOP(SETUPQ4K, Q4KBLOCK4, Q4KCFIN, 144, IDOTZSDOT, IDOTSDOT)

#undef A3
#undef FA3

#define A3 28
#define FA3 F28

// func dotQ5_Kx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ5_Kx4NEON(SB), NOSPLIT, $0-32
	K4LOOP(SETUPQ4K, Q5KBLOCK4, Q4KCFIN, 176, IDOTZNEON, IDOTNEON)

#undef A3
#undef FA3

#define A3 28
#define FA3 F28

// func dotQ5_Kx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ5_Kx4SDOT(SB), NOSPLIT, $0-32
	K4LOOP(SETUPQ4K, Q5KBLOCK4, Q4KCFIN, 176, IDOTZSDOT, IDOTSDOT)

#undef A3
#undef FA3

#define A3 31
#define FA3 F31

// func dotQ6_Kx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ6_Kx4NEON(SB), NOSPLIT, $0-32
	K4LOOP(SETUPQ6K, Q6KBLOCK4, Q6KCFIN, 210, IDOTZNEON, IDOTNEON)

#undef A3
#undef FA3

#define A3 31
#define FA3 F31

// func dotQ6_Kx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ6_Kx4SDOT(SB), NOSPLIT, $0-32
	K4LOOP(SETUPQ6K, Q6KBLOCK4, Q6KCFIN, 210, IDOTZSDOT, IDOTSDOT)

#undef A3
#undef FA3
