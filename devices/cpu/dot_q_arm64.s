//go:build !purego

#include "dot_arm64.h"

// Weights in 32-element blocks against Q8_0 activations (34-byte blocks:
// fp16 d, int8 qs[32]) or Q8_1 ones (fp16 d, fp16 s = d * sum of the
// quants, qs[32]). Each block's two 16-byte halves meet the activations in
// IDOT (dotprod or not, as the kernel's name says); the block's int32
// lanes become floats and join the accumulator scaled by d*dy, so no
// horizontal sum is taken before the end.

// The lookup tables: the IQ4_NL levels (quant's kvaluesIQ4NL), the doubled
// E2M1 levels of MXFP4 (kvaluesFP4), and for the fifth bits of Q5_0 and
// Q5_1 a byte index (bytes 0 and 1 of qh, then 2 and 3, each eight times)
// and the bit each byte tests.
// The IQ4_NL table is package-wide: the repacked kernels (gemm_arm64.s)
// read it too.
DATA ·iq4nlNEON+0(SB)/8, $0xf6eaddcfbfad9881
DATA ·iq4nlNEON+8(SB)/8, $0x7159453526190d01
GLOBL ·iq4nlNEON(SB), RODATA|NOPTR, $16

DATA fp4<>+0(SB)/8, $0x0c08060403020100
DATA fp4<>+8(SB)/8, $0xf4f8fafcfdfeff00
GLOBL fp4<>(SB), RODATA|NOPTR, $16

DATA qhidx<>+0(SB)/8, $0x0000000000000000
DATA qhidx<>+8(SB)/8, $0x0101010101010101
DATA qhidx<>+16(SB)/8, $0x0202020202020202
DATA qhidx<>+24(SB)/8, $0x0303030303030303
GLOBL qhidx<>(SB), RODATA|NOPTR, $32

DATA qhbit<>+0(SB)/8, $0x8040201008040201
DATA qhbit<>+8(SB)/8, $0x8040201008040201
GLOBL qhbit<>(SB), RODATA|NOPTR, $16

// NIBBLES splits the 16 bytes at mem(R1) into low nibbles (elements 0-15,
// V4) and high ones (16-31, V5); V30 holds 0x0f in every byte.
#define NIBBLES(mem) \
	ADD    $mem, R1, R3;          \
	VLD1   (R3), [V4.B16];        \
	VUSHR  $4, V4.B16, V5.B16;    \
	VAND   V30.B16, V4.B16, V4.B16

// FIFTH ors 0x10 into the bytes of V4 and V5 whose bit is set in the
// 32-bit mask at mem(R1) (bit j for element j), using V9-V11; the tables
// are in V24-V26 and V23 holds 0x10 in every byte.
#define FIFTH(mem) \
	FMOVS  mem(R1), F9;                 \
	VTBL   V25.B16, [V9.B16], V10.B16;  \
	VTBL   V26.B16, [V9.B16], V11.B16;  \
	VCMTST V24.B16, V10.B16, V10.B16;   \
	VCMTST V24.B16, V11.B16, V11.B16;   \
	VAND   V23.B16, V10.B16, V10.B16;   \
	VAND   V23.B16, V11.B16, V11.B16;   \
	VORR   V10.B16, V4.B16, V4.B16;     \
	VORR   V11.B16, V5.B16, V5.B16

#define NOSETUP

#define SETUPNIB VMOVI $15, V30.B16

#define SETUPQ40 \
	SETUPNIB; \
	VMOVI $8, V29.B16

#define SETUPFIFTH \
	SETUPNIB;                         \
	VMOVI $16, V23.B16;               \
	MOVD  $qhbit<>(SB), R3;           \
	VLD1  (R3), [V24.B16];            \
	MOVD  $qhidx<>(SB), R3;           \
	VLD1  (R3), [V25.B16, V26.B16]

#define SETUPTABLE(t) \
	SETUPNIB;           \
	MOVD $t(SB), R3;    \
	VLD1 (R3), [V28.B16]

// The LOAD* macros put the x block at R1 as signed bytes in V4 and V5.
#define LOADQ80 \
	ADD  $2, R1, R3; \
	VLD1 (R3), [V4.B16, V5.B16]

#define LOADQ40 \
	NIBBLES(2);                 \
	VSUB V29.B16, V4.B16, V4.B16; \
	VSUB V29.B16, V5.B16, V5.B16

// Q5_0 (fp16 d, qh[4], qs[16]): nibble + 16*bit - 16.
#define LOADQ50 \
	NIBBLES(6);                   \
	FIFTH(2);                     \
	VSUB V23.B16, V4.B16, V4.B16; \
	VSUB V23.B16, V5.B16, V5.B16

// IQ4_NL (fp16 d, qs[16]) and MXFP4 (e8m0 e, qs[16]): the nibbles index
// the table in V28.
#define LOOKUP \
	VTBL V4.B16, [V28.B16], V4.B16; \
	VTBL V5.B16, [V28.B16], V5.B16

#define LOADIQ4NL NIBBLES(2); LOOKUP
#define LOADMXFP4 NIBBLES(1); LOOKUP

// XFP16 and XE8M0 put x's block scale (at R1) in F22: fp16(d), or
// 2^(e-128) (ggml_e8m0_to_fp32_half of MXFP4's e), whose bits are
// (e-1) << 23, or (e+1) << 21 for the subnormal e < 2.
#define XFP16 H2S((R1), R5, F22)

#define XE8M0 \
	MOVBU (R1), R3;       \
	SUBW  $1, R3, R4;     \
	LSLW  $23, R4, R4;    \
	ADDW  $1, R3, R5;     \
	LSLW  $21, R5, R5;    \
	CMPW  $2, R3;         \
	CSELW LO, R5, R4, R4; \
	FMOVS R4, F22

// Q80COL adds the dot of x's block (V4, V5; scale F22) with the y block at
// YP (advanced) to the lanes of V(ACC), scaled by x's scale times fp16(d)
// of y.
#define Q80COL(YP, ACC, IDOTZ, IDOT) \
	ADD   $2, YP, R4;             \
	VLD1  (R4), [V6.B16, V7.B16]; \
	IDOTZ(4, 6, 8);               \
	IDOT(5, 7, 8);                \
	SCVTF4S(8, 8);                \
	H2S((YP), R6, F21);           \
	FMULS F21, F22, F20;          \
	FMLAE(20, 0, 8, ACC);         \
	ADD   $34, YP

// X4OUT stores F0-F3 to out (X4ARGS: dot_arm64.h).
#define X4OUT \
	MOVD  out+24(FP), R9; \
	FMOVS F0, 0(R9);      \
	FMOVS F1, 4(R9);      \
	FMOVS F2, 8(R9);      \
	FMOVS F3, 12(R9)

// Q80DOT and Q80DOT4 are the single and four-column kernel bodies for x
// blocks of XB bytes: each column gets the single kernel's instructions,
// so its result is the same bit for bit.
#define Q80DOT(SETUP, LOAD, XSCALE, XB, IDOTZ, IDOT) \
	MOVD n+0(FP), R0;            \
	MOVD x+8(FP), R1;            \
	MOVD y+16(FP), R2;           \
	VEOR V0.B16, V0.B16, V0.B16; \
	SETUP;                       \
loop:                            \
	CBZ  R0, done;               \
	LOAD;                        \
	XSCALE;                      \
	Q80COL(R2, 0, IDOTZ, IDOT);  \
	ADD  $XB, R1;                \
	SUB  $1, R0;                 \
	B    loop;                   \
done:                            \
	HSUM4S(0, 0);                \
	FMOVS F0, ret+24(FP);        \
	RET

#define Q80DOT4(SETUP, LOAD, XSCALE, XB, IDOTZ, IDOT) \
	X4ARGS;                      \
	SETUP;                       \
loop:                            \
	CBZ  R0, done;               \
	LOAD;                        \
	XSCALE;                      \
	Q80COL(R10, 0, IDOTZ, IDOT); \
	Q80COL(R11, 1, IDOTZ, IDOT); \
	Q80COL(R12, 2, IDOTZ, IDOT); \
	Q80COL(R13, 3, IDOTZ, IDOT); \
	ADD  $XB, R1;                \
	SUB  $1, R0;                 \
	B    loop;                   \
done:                            \
	HSUM4S(0, 0);                \
	HSUM4S(1, 1);                \
	HSUM4S(2, 2);                \
	HSUM4S(3, 3);                \
	X4OUT;                       \
	RET

// Q4_1 and Q5_1 (fp16 d, fp16 m, [qh[4]], qs[16]) against Q8_1: the
// unsigned levels meet the quants directly, scaled by d*dy; m*s goes into
// lane 1 of a second accumulator (one conversion and multiply gives both
// products: x's d and m are converted once into F22, lanes 0 and 1).
#define LOADQ41 NIBBLES(4)
#define LOADQ51 NIBBLES(8); FIFTH(4)

#define XDM \
	FMOVS (R1), F22; \
	FCVTL4S(22, 22)

// Q81COL is Q80COL for Q8_1 blocks, m*s going to V(MS).
#define Q81COL(YP, ACC, MS, IDOTZ, IDOT) \
	ADD   $4, YP, R4;             \
	VLD1  (R4), [V6.B16, V7.B16]; \
	IDOTZ(4, 6, 8);               \
	IDOT(5, 7, 8);                \
	SCVTF4S(8, 8);                \
	FMOVS (YP), F21;              \
	FCVTL4S(21, 21);              \
	FMUL4S(21, 22, 20);           \
	FMLAE(20, 0, 8, ACC);         \
	FADD4S(20, MS, MS);           \
	ADD   $36, YP

// Q81FIN leaves in F(ACC)'s register FACC the column's result.
#define Q81FIN(ACC, MS, FACC) \
	HSUM4S(ACC, ACC); \
	DUPS1(MS, 21);    \
	FADDS F21, FACC, FACC

#define Q81DOT(SETUP, LOAD, XB, IDOTZ, IDOT) \
	MOVD n+0(FP), R0;              \
	MOVD x+8(FP), R1;              \
	MOVD y+16(FP), R2;             \
	VEOR V0.B16, V0.B16, V0.B16;   \
	VEOR V16.B16, V16.B16, V16.B16; \
	SETUP;                         \
loop:                              \
	CBZ  R0, done;                 \
	LOAD;                          \
	XDM;                           \
	Q81COL(R2, 0, 16, IDOTZ, IDOT); \
	ADD  $XB, R1;                  \
	SUB  $1, R0;                   \
	B    loop;                     \
done:                              \
	Q81FIN(0, 16, F0);             \
	FMOVS F0, ret+24(FP);          \
	RET

#define Q81DOT4(SETUP, LOAD, XB, IDOTZ, IDOT) \
	X4ARGS;                          \
	VEOR V16.B16, V16.B16, V16.B16;  \
	VEOR V17.B16, V17.B16, V17.B16;  \
	VEOR V18.B16, V18.B16, V18.B16;  \
	VEOR V19.B16, V19.B16, V19.B16;  \
	SETUP;                           \
loop:                                \
	CBZ  R0, done;                   \
	LOAD;                            \
	XDM;                             \
	Q81COL(R10, 0, 16, IDOTZ, IDOT); \
	Q81COL(R11, 1, 17, IDOTZ, IDOT); \
	Q81COL(R12, 2, 18, IDOTZ, IDOT); \
	Q81COL(R13, 3, 19, IDOTZ, IDOT); \
	ADD  $XB, R1;                    \
	SUB  $1, R0;                     \
	B    loop;                       \
done:                                \
	Q81FIN(0, 16, F0);               \
	Q81FIN(1, 17, F1);               \
	Q81FIN(2, 18, F2);               \
	Q81FIN(3, 19, F3);               \
	X4OUT;                           \
	RET

// Each kernel twice: without dotprod (NEON) and with it (SDOT); each with
// a four-column variant (x4).

// func dotQ8_0NEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ8_0NEON(SB), NOSPLIT, $0-28
	Q80DOT(NOSETUP, LOADQ80, XFP16, 34, IDOTZNEON, IDOTNEON)

// func dotQ8_0x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ8_0x4NEON(SB), NOSPLIT, $0-32
	Q80DOT4(NOSETUP, LOADQ80, XFP16, 34, IDOTZNEON, IDOTNEON)

// func dotQ8_0SDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ8_0SDOT(SB), NOSPLIT, $0-28
	Q80DOT(NOSETUP, LOADQ80, XFP16, 34, IDOTZSDOT, IDOTSDOT)

// func dotQ8_0x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ8_0x4SDOT(SB), NOSPLIT, $0-32
	Q80DOT4(NOSETUP, LOADQ80, XFP16, 34, IDOTZSDOT, IDOTSDOT)

// func dotQ4_0NEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_0NEON(SB), NOSPLIT, $0-28
	Q80DOT(SETUPQ40, LOADQ40, XFP16, 18, IDOTZNEON, IDOTNEON)

// func dotQ4_0x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_0x4NEON(SB), NOSPLIT, $0-32
	Q80DOT4(SETUPQ40, LOADQ40, XFP16, 18, IDOTZNEON, IDOTNEON)

// func dotQ4_0SDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_0SDOT(SB), NOSPLIT, $0-28
	Q80DOT(SETUPQ40, LOADQ40, XFP16, 18, IDOTZSDOT, IDOTSDOT)

// func dotQ4_0x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_0x4SDOT(SB), NOSPLIT, $0-32
	Q80DOT4(SETUPQ40, LOADQ40, XFP16, 18, IDOTZSDOT, IDOTSDOT)

// func dotQ5_0NEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_0NEON(SB), NOSPLIT, $0-28
	Q80DOT(SETUPFIFTH, LOADQ50, XFP16, 22, IDOTZNEON, IDOTNEON)

// func dotQ5_0x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ5_0x4NEON(SB), NOSPLIT, $0-32
	Q80DOT4(SETUPFIFTH, LOADQ50, XFP16, 22, IDOTZNEON, IDOTNEON)

// func dotQ5_0SDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_0SDOT(SB), NOSPLIT, $0-28
	Q80DOT(SETUPFIFTH, LOADQ50, XFP16, 22, IDOTZSDOT, IDOTSDOT)

// func dotQ5_0x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ5_0x4SDOT(SB), NOSPLIT, $0-32
	Q80DOT4(SETUPFIFTH, LOADQ50, XFP16, 22, IDOTZSDOT, IDOTSDOT)

// func dotIQ4_NLNEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotIQ4_NLNEON(SB), NOSPLIT, $0-28
	Q80DOT(SETUPTABLE(·iq4nlNEON), LOADIQ4NL, XFP16, 18, IDOTZNEON, IDOTNEON)

// func dotIQ4_NLx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotIQ4_NLx4NEON(SB), NOSPLIT, $0-32
	Q80DOT4(SETUPTABLE(·iq4nlNEON), LOADIQ4NL, XFP16, 18, IDOTZNEON, IDOTNEON)

// func dotIQ4_NLSDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotIQ4_NLSDOT(SB), NOSPLIT, $0-28
	Q80DOT(SETUPTABLE(·iq4nlNEON), LOADIQ4NL, XFP16, 18, IDOTZSDOT, IDOTSDOT)

// func dotIQ4_NLx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotIQ4_NLx4SDOT(SB), NOSPLIT, $0-32
	Q80DOT4(SETUPTABLE(·iq4nlNEON), LOADIQ4NL, XFP16, 18, IDOTZSDOT, IDOTSDOT)

// func dotMXFP4NEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotMXFP4NEON(SB), NOSPLIT, $0-28
	Q80DOT(SETUPTABLE(fp4<>), LOADMXFP4, XE8M0, 17, IDOTZNEON, IDOTNEON)

// func dotMXFP4x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotMXFP4x4NEON(SB), NOSPLIT, $0-32
	Q80DOT4(SETUPTABLE(fp4<>), LOADMXFP4, XE8M0, 17, IDOTZNEON, IDOTNEON)

// func dotMXFP4SDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotMXFP4SDOT(SB), NOSPLIT, $0-28
	Q80DOT(SETUPTABLE(fp4<>), LOADMXFP4, XE8M0, 17, IDOTZSDOT, IDOTSDOT)

// func dotMXFP4x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotMXFP4x4SDOT(SB), NOSPLIT, $0-32
	Q80DOT4(SETUPTABLE(fp4<>), LOADMXFP4, XE8M0, 17, IDOTZSDOT, IDOTSDOT)

// func dotQ4_1NEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_1NEON(SB), NOSPLIT, $0-28
	Q81DOT(SETUPNIB, LOADQ41, 20, IDOTZNEON, IDOTNEON)

// func dotQ4_1x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_1x4NEON(SB), NOSPLIT, $0-32
	Q81DOT4(SETUPNIB, LOADQ41, 20, IDOTZNEON, IDOTNEON)

// func dotQ4_1SDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_1SDOT(SB), NOSPLIT, $0-28
	Q81DOT(SETUPNIB, LOADQ41, 20, IDOTZSDOT, IDOTSDOT)

// func dotQ4_1x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_1x4SDOT(SB), NOSPLIT, $0-32
	Q81DOT4(SETUPNIB, LOADQ41, 20, IDOTZSDOT, IDOTSDOT)

// func dotQ5_1NEON(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_1NEON(SB), NOSPLIT, $0-28
	Q81DOT(SETUPFIFTH, LOADQ51, 24, IDOTZNEON, IDOTNEON)

// func dotQ5_1x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ5_1x4NEON(SB), NOSPLIT, $0-32
	Q81DOT4(SETUPFIFTH, LOADQ51, 24, IDOTZNEON, IDOTNEON)

// func dotQ5_1SDOT(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ5_1SDOT(SB), NOSPLIT, $0-28
	Q81DOT(SETUPFIFTH, LOADQ51, 24, IDOTZSDOT, IDOTSDOT)

// func dotQ5_1x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ5_1x4SDOT(SB), NOSPLIT, $0-32
	Q81DOT4(SETUPFIFTH, LOADQ51, 24, IDOTZSDOT, IDOTSDOT)
