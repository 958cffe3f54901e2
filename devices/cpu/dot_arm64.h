// Instruction encodings and macros shared by the *_arm64.s kernels.

#include "textflag.h"

// The Go assembler lacks most of the NEON arithmetic these kernels need, so
// they are written as WORDs. Each macro takes register numbers (V0-V31 as
// 0-31), sources first and the destination last, as the Go assembler
// orders operands: FADD4S(m, n, d) is d = n + m, lane by lane. The
// suffixes name the arrangement: 4S four floats or int32s, 8H eight
// halves or int16s, 16B sixteen bytes; ...2 forms read the upper half.
#define ENC3(op, m, n, d) WORD $((op) | ((m)<<16) | ((n)<<5) | (d))
#define ENC2(op, n, d) WORD $((op) | ((n)<<5) | (d))

// Float arithmetic (4 x float32).
#define FADD4S(m, n, d) ENC3(0x4E20D400, m, n, d)
#define FSUB4S(m, n, d) ENC3(0x4EA0D400, m, n, d)
#define FMUL4S(m, n, d) ENC3(0x6E20DC00, m, n, d)
#define FDIV4S(m, n, d) ENC3(0x6E20FC00, m, n, d)
#define FMAX4S(m, n, d) ENC3(0x4E20F400, m, n, d)
#define FADDP4S(m, n, d) ENC3(0x6E20D400, m, n, d)
// FMLA4S: d += n * m, lane by lane.
#define FMLA4S(m, n, d) ENC3(0x4E20CC00, m, n, d)
// FMLS4S: d -= n * m, lane by lane, fused as FMSUBS is.
#define FMLS4S(m, n, d) ENC3(0x4EA0CC00, m, n, d)
#define FABS4S(n, d) ENC2(0x4EA0F800, n, d)
// FADDP2S: scalar d = n.s[0] + n.s[1].
#define FADDP2S(n, d) ENC2(0x7E30D800, n, d)
// FMAXV4S: scalar d = the largest of n's four lanes.
#define FMAXV4S(n, d) ENC2(0x6E30F800, n, d)
// By element: d (+)= n * m.s[i].
#define FMULE(m, i, n, d) WORD $(0x4F809000 | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d))
#define FMLAE(m, i, n, d) WORD $(0x4F801000 | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d))

// Conversions. FCVTL: 4 halves (lower) to 4 floats; FCVTN: 4 floats to
// halves in the lower half, rounding to nearest even.
#define FCVTL4S(n, d) ENC2(0x0E217800, n, d)
#define FCVTL24S(n, d) ENC2(0x4E217800, n, d)
#define FCVTN4H(n, d) ENC2(0x0E216800, n, d)
#define FCVTN28H(n, d) ENC2(0x4E216800, n, d)
#define SCVTF4S(n, d) ENC2(0x4E21D800, n, d)
// FCVTAS4S: to int32, nearest with ties away from zero (C's roundf);
// FCVTNS4S: nearest with ties to even.
#define FCVTAS4S(n, d) ENC2(0x4E21C800, n, d)
#define FCVTNS4S(n, d) ENC2(0x4E21A800, n, d)

// Integer arithmetic.
#define MUL4S(m, n, d) ENC3(0x4EA09C00, m, n, d)
#define MLA4S(m, n, d) ENC3(0x4EA09400, m, n, d)
// ADDP4S: d = the sums of n's adjacent lanes, then m's.
#define ADDP4S(m, n, d) ENC3(0x4EA0BC00, m, n, d)
#define SMIN4S(m, n, d) ENC3(0x4EA06C00, m, n, d)
#define MLAE4S(m, i, n, d) WORD $(0x6F800000 | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d))
#define ADDV4S(n, d) ENC2(0x4EB1B800, n, d)
#define ADDP8H(m, n, d) ENC3(0x4E60BC00, m, n, d)
#define SMULL4S(m, n, d) ENC3(0x0E60C000, m, n, d)
#define SMULL24S(m, n, d) ENC3(0x4E60C000, m, n, d)
#define SMLAL24S(m, n, d) ENC3(0x4E608000, m, n, d)
// SCVTFS: the scalar int32 in S(n) to a float in S(n); DUPS1: S(d) = V(n).s[1].
#define SCVTFS(n, d) ENC2(0x5E21D800, n, d)
#define DUPS1(n, d) ENC2(0x5E0C0400, n, d)
#define SMULL8H(m, n, d) ENC3(0x0E20C000, m, n, d)
#define SMULL28H(m, n, d) ENC3(0x4E20C000, m, n, d)
#define SMLAL8H(m, n, d) ENC3(0x0E208000, m, n, d)
#define SMLAL28H(m, n, d) ENC3(0x4E208000, m, n, d)
#define SADDLP4S(n, d) ENC2(0x4E602800, n, d)
#define SADALP4S(n, d) ENC2(0x4E606800, n, d)
#define SXTL8H(n, d) ENC2(0x0F08A400, n, d)
#define SXTL28H(n, d) ENC2(0x4F08A400, n, d)
#define SXTL4S(n, d) ENC2(0x0F10A400, n, d)
#define SXTL24S(n, d) ENC2(0x4F10A400, n, d)
#define SQXTN4H(n, d) ENC2(0x0E614800, n, d)
#define SQXTN28H(n, d) ENC2(0x4E614800, n, d)
#define SQXTN8B(n, d) ENC2(0x0E214800, n, d)
#define SQXTN216B(n, d) ENC2(0x4E214800, n, d)
// SDOT16B (dotprod): each int32 lane of d gains the four products of the
// corresponding signed bytes of n and m.
#define SDOT16B(m, n, d) ENC3(0x4E809400, m, n, d)

// The integer dot product of the 16 signed bytes of a and b, added to the
// int32 lanes of acc (IDOT) or put there (IDOTZ). The lanes get different
// partial sums with and without dotprod; their total is the same.
// The NEON forms use V14 and V15.
#define IDOTSDOT(a, b, acc) SDOT16B(b, a, acc)
#define IDOTZSDOT(a, b, acc) \
	ENC3(0x6E201C00, acc, acc, acc); \
	SDOT16B(b, a, acc)
#define IDOTNEON(a, b, acc) \
	SMULL8H(b, a, 14);  \
	SMULL28H(b, a, 15); \
	SADALP4S(14, acc);  \
	SADALP4S(15, acc)
#define IDOTZNEON(a, b, acc) \
	SMULL8H(b, a, 14);  \
	SMULL28H(b, a, 15); \
	SADDLP4S(14, acc);  \
	SADALP4S(15, acc)

// HSUM4S leaves in the scalar F(d) the sum of the four lanes of V(n) (which
// it overwrites).
#define HSUM4S(n, d) \
	FADDP4S(n, n, n); \
	FADDP2S(n, d)

// H2S converts the fp16 value at mem to a float in F(reg), using R(tmp).
#define H2S(mem, tmp, freg) \
	MOVHU mem, tmp;    \
	FMOVS tmp, freg;   \
	FCVTHS freg, freg

// X4ARGS loads the four-column kernels' arguments (n int, x unsafe.Pointer,
// y *[4]unsafe.Pointer, out *[4]float32): n in R0, x in R1, the four y in
// R10-R13; and clears V0-V3.
#define X4ARGS \
	MOVD n+0(FP), R0;            \
	MOVD x+8(FP), R1;            \
	MOVD y+16(FP), R9;           \
	MOVD 0(R9), R10;             \
	MOVD 8(R9), R11;             \
	MOVD 16(R9), R12;            \
	MOVD 24(R9), R13;            \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V1.B16, V1.B16, V1.B16; \
	VEOR V2.B16, V2.B16, V2.B16; \
	VEOR V3.B16, V3.B16, V3.B16

// Q4_K (fp16 d, fp16 dmin, scales[12], qs[128]): the eight 6-bit scales
// and minimums are unpacked from three words as ggml's kmask trick does:
// scales 0-3 and minimums 0-3 are the low six bits of words 0 and 1; for
// 4-7, the low (scales) or high (minimums) nibbles of word 2 with the top
// two bits of words 0 and 1 above them. Scales go to V25 (0-3) and V26
// (4-7) as int32s, the minimums as int16s to V27.
#define Q4KSCALES \
	MOVWU  4(R1), R3;              \
	MOVWU  8(R1), R4;              \
	MOVWU  12(R1), R5;             \
	MOVW   $0x3f3f3f3f, R6;        \
	MOVW   $0x0f0f0f0f, R9;        \
	MOVW   $0x03030303, R12;       \
	ANDW   R6, R3, R7;             \
	ANDW   R6, R4, R8;             \
	ANDW   R9, R5, R10;            \
	LSRW   $6, R3, R11;            \
	ANDW   R12, R11, R11;          \
	ORRW   R11<<4, R10, R10;       \
	LSRW   $4, R5, R13;            \
	ANDW   R9, R13, R13;           \
	LSRW   $6, R4, R11;            \
	ANDW   R12, R11, R11;          \
	ORRW   R11<<4, R13, R13;       \
	VMOV   R7, V24.S[0];           \
	VMOV   R10, V24.S[1];          \
	VUXTL  V24.B8, V24.H8;         \
	VUXTL  V24.H4, V25.S4;         \
	VUXTL2 V24.H8, V26.S4;         \
	VMOV   R8, V27.S[0];           \
	VMOV   R13, V27.S[1];          \
	VUXTL  V27.B8, V27.H8

// Q6KDEC makes 16 Q6_K levels (minus 32) in D from the quant bytes QL
// (nibble taken by QLOP) and the high bits QH (moved to bits 4-5 by
// QHOP), using V2; V30 holds 15, V29 48 and V28 32 (dot_k_arm64.s says
// where each element's bits are).
#define Q6KDEC(QLOP, QL, QHOP, QH, D) \
	QLOP, QL.B16, D.B16;          \
	QHOP, QH.B16, V2.B16;         \
	VAND V29.B16, V2.B16, V2.B16; \
	VORR V2.B16, D.B16, D.B16;    \
	VSUB V28.B16, D.B16, D.B16
