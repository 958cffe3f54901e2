//go:build !purego

#include "textflag.h"
#include "quantize_arm64.h"

// The activation quantizers (FromFloatKernel; Q8_0 also for Quantize),
// byte for byte the Go reference ones (and ggml's scalar builds): Q8_0 and Q8_1 with d = max|x|/127, levels
// roundf(x * (1/d)) (FCVTAS rounds halfway cases away from zero, as
// roundf), d stored as fp16 rounded to nearest even; Q8_K as below. Each
// returns nonzero, leaving the output unspecified, when a block holds NaN
// or infinity or when 1/d overflows (d tiny but not zero): the generic
// quantizer then redoes the row, reporting the one and giving the other the
// C conversion's bytes.

// QCONSTS: F30 = +Inf, F29 = 127, F28 = 1, F27 = -127, F31 = 0, V26 = 127 in
// each int32 lane.
#define QCONSTS \
	MOVW  $0x7f800000, R9; \
	FMOVS R9, F30;         \
	MOVW  $0x42fe0000, R9; \
	FMOVS R9, F29;         \
	MOVW  $0x3f800000, R9; \
	FMOVS R9, F28;         \
	MOVW  $0xc2fe0000, R9; \
	FMOVS R9, F27;         \
	FMOVS ZR, F31;         \
	MOVW  $127, R9;        \
	VDUP  R9, V26.S4

// AMAX32 loads 32 floats at R1 (advanced) into V0-V7 and leaves max|x| in
// F16 (NaN when one is NaN: FMAX propagates it), using V16-V23.
#define AMAX32 \
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]; \
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]; \
	FABS4S(0, 16);      \
	FABS4S(1, 17);      \
	FABS4S(2, 18);      \
	FABS4S(3, 19);      \
	FABS4S(4, 20);      \
	FABS4S(5, 21);      \
	FABS4S(6, 22);      \
	FABS4S(7, 23);      \
	FMAX4S(17, 16, 16); \
	FMAX4S(19, 18, 18); \
	FMAX4S(21, 20, 20); \
	FMAX4S(23, 22, 22); \
	FMAX4S(18, 16, 16); \
	FMAX4S(22, 20, 20); \
	FMAX4S(20, 16, 16); \
	FMAXV4S(16, 16)

// FINITE jumps to bail unless F(f) is below +Inf (NaN is unordered, and
// then N is clear too).
#define FINITE(f) \
	FCMPS F30, f; \
	BPL   bail

// NARROW32 narrows the int32s in V0-V7 to bytes in V12, V13 (saturating;
// the levels are within [-127, 127]), using V8-V11.
#define NARROW32 \
	SQXTN4H(0, 8);     \
	SQXTN28H(1, 8);    \
	SQXTN4H(2, 9);     \
	SQXTN28H(3, 9);    \
	SQXTN4H(4, 10);    \
	SQXTN28H(5, 10);   \
	SQXTN4H(6, 11);    \
	SQXTN28H(7, 11);   \
	SQXTN8B(8, 12);    \
	SQXTN216B(9, 12);  \
	SQXTN8B(10, 13);   \
	SQXTN216B(11, 13)

// Q8BLOCK quantizes one block of 32 floats at R1 into the block at R2: d
// as fp16 at 0, the levels at QS; SUM (Q8_1) may use the levels in V0-V7
// and d in F17.
#define Q8BLOCK(QS, SUM) \
	AMAX32;                    \
	FINITE(F16);               \
	FDIVS  F29, F16, F17;      \
	FCVTSH F17, F18;           \
	FMOVS  F18, R4;            \
	MOVH   R4, (R2);           \
	FDIVS  F17, F28, F19;      \
	FCMPS  F31, F17;           \
	FCSELS EQ, F31, F19, F19;  \
	FCMPS  F30, F19;           \
	BEQ    bail;               \
	VDUP   V19.S[0], V19.S4;   \
	FMUL4S(19, 0, 0);          \
	FMUL4S(19, 1, 1);          \
	FMUL4S(19, 2, 2);          \
	FMUL4S(19, 3, 3);          \
	FMUL4S(19, 4, 4);          \
	FMUL4S(19, 5, 5);          \
	FMUL4S(19, 6, 6);          \
	FMUL4S(19, 7, 7);          \
	FCVTAS4S(0, 0);            \
	FCVTAS4S(1, 1);            \
	FCVTAS4S(2, 2);            \
	FCVTAS4S(3, 3);            \
	FCVTAS4S(4, 4);            \
	FCVTAS4S(5, 5);            \
	FCVTAS4S(6, 6);            \
	FCVTAS4S(7, 7);            \
	SUM;                       \
	NARROW32;                  \
	ADD    $QS, R2, R5;        \
	VST1   [V12.B16, V13.B16], (R5)

#define NOSUM

// Q81SUM stores fp16(float(sum of the levels) * d) at 2(R2).
#define Q81SUM \
	VADD   V1.S4, V0.S4, V24.S4;   \
	VADD   V3.S4, V2.S4, V25.S4;   \
	VADD   V25.S4, V24.S4, V24.S4; \
	VADD   V5.S4, V4.S4, V25.S4;   \
	VADD   V25.S4, V24.S4, V24.S4; \
	VADD   V7.S4, V6.S4, V25.S4;   \
	VADD   V25.S4, V24.S4, V24.S4; \
	ADDV4S(24, 24);                \
	SCVTFS(24, 24);                \
	FMULS  F17, F24, F24;          \
	FCVTSH F24, F24;               \
	FMOVS  F24, R4;                \
	MOVH   R4, 2(R2)

#define QLOOP(QS, SUM, BB) \
	MOVD nb+0(FP), R0; \
	MOVD x+8(FP), R1;  \
	MOVD y+16(FP), R2; \
	QCONSTS;           \
loop:                  \
	CBZ  R0, done;     \
	Q8BLOCK(QS, SUM);  \
	ADD  $BB, R2;      \
	SUB  $1, R0;       \
	B    loop;         \
done:                  \
	MOVD ZR, ret+24(FP); \
	RET;               \
bail:                  \
	MOVD $1, R4;       \
	MOVD R4, ret+24(FP); \
	RET

// func quantizeQ8_0NEON(nb int, x, y unsafe.Pointer) int
TEXT ·quantizeQ8_0NEON(SB), NOSPLIT, $0-32
	QLOOP(2, NOSUM, 34)

// func quantizeQ8_1NEON(nb int, x, y unsafe.Pointer) int
TEXT ·quantizeQ8_1NEON(SB), NOSPLIT, $0-32
	QLOOP(4, Q81SUM, 36)

// Q8_K (float32 d, int8 qs[256], int16 bsums[16]), as quant's quantizer
// and ggml's CPU from_float: maxv is the first value of largest magnitude,
// iscale = -127/maxv, levels min(127, nearest-even(iscale*x)), d =
// 1/iscale; an all-zero block is all zero. A block whose iscale overflows
// (maxv subnormal) goes back to Go, whose rounding trick makes other bytes
// of the infinite products than FCVTNS.

// func quantizeQ8_KNEON(nb int, x, y unsafe.Pointer) int
TEXT ·quantizeQ8_KNEON(SB), NOSPLIT, $0-32
	MOVD nb+0(FP), R0
	MOVD x+8(FP), R1
	MOVD y+16(FP), R2
	QCONSTS

kloop:
	CBZ  R0, kdone

	// max|x| over the block, 16 values at a time (R5 walks).
	MOVD R1, R5
	MOVD $16, R6
	VEOR V16.B16, V16.B16, V16.B16

kmax:
	VLD1.P 64(R5), [V0.S4, V1.S4, V2.S4, V3.S4]
	FABS4S(0, 0)
	FABS4S(1, 1)
	FABS4S(2, 2)
	FABS4S(3, 3)
	FMAX4S(1, 0, 0)
	FMAX4S(3, 2, 2)
	FMAX4S(2, 0, 0)
	FMAX4S(0, 16, 16)
	SUB  $1, R6
	CBNZ R6, kmax
	FMAXV4S(16, 16)
	FINITE(F16)
	FCMPS F31, F16
	BNE   kfind

	// An all-zero block.
	VEOR V0.B16, V0.B16, V0.B16
	MOVD R2, R5
	MOVD $18, R6

kzero:
	VST1.P [V0.B16], 16(R5)
	SUB    $1, R6
	CBNZ   R6, kzero
	MOVW   ZR, (R5)
	ADD    $1024, R1
	B      knext

kfind:
	MOVD R1, R5

kscan:
	FMOVS.P 4(R5), F0
	FABSS   F0, F1
	FCMPS   F16, F1
	BNE     kscan
	FDIVS   F0, F27, F18
	FABSS   F18, F1
	FINITE(F1)
	FDIVS   F18, F28, F19
	FMOVS   F19, (R2)
	VDUP    V18.S[0], V18.S4
	ADD     $4, R2, R7
	ADD     $260, R2, R8
	MOVD    $16, R6

klevels:
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
	FMUL4S(18, 0, 0)
	FMUL4S(18, 1, 1)
	FMUL4S(18, 2, 2)
	FMUL4S(18, 3, 3)
	FCVTNS4S(0, 0)
	FCVTNS4S(1, 1)
	FCVTNS4S(2, 2)
	FCVTNS4S(3, 3)
	SMIN4S(26, 0, 0)
	SMIN4S(26, 1, 1)
	SMIN4S(26, 2, 2)
	SMIN4S(26, 3, 3)
	VADD   V1.S4, V0.S4, V24.S4
	VADD   V3.S4, V2.S4, V25.S4
	VADD   V25.S4, V24.S4, V24.S4
	ADDV4S(24, 24)
	FMOVS  F24, R4
	MOVH.P R4, 2(R8)
	SQXTN4H(0, 8)
	SQXTN28H(1, 8)
	SQXTN4H(2, 9)
	SQXTN28H(3, 9)
	SQXTN8B(8, 12)
	SQXTN216B(9, 12)
	VST1.P [V12.B16], 16(R7)
	SUB    $1, R6
	CBNZ   R6, klevels

knext:
	ADD $292, R2
	SUB $1, R0
	B   kloop

kdone:
	MOVD ZR, ret+24(FP)
	RET

bail:
	MOVD $1, R4
	MOVD R4, ret+24(FP)
	RET
