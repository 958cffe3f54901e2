//go:build !purego

#include "vec_arm64.h"

// NEON kernels of flash attention's F16 path (attn.go), and the vector e^x
// and F32->F16 conversion it uses. Each computes exactly what the code it
// replaces computes, in the same order, only without a call per key: the
// scores are dotF16NEON's sums (dot_float_arm64.s), the value
// accumulation vecScaleF16NEON's and vecMadF16NEON's roundings
// (vec_arm64.s), e^x the portable expf's operations, every product rounded
// before its sum as the Go code's explicit conversions make them.

// func attnScoresF16NEON(out, qf *float32, k *byte, stride uintptr, keys *int32, n, d, rows int, mvs *float32, newMax *bool, scale float32) (bad int, m float32)
// out[j] = the dot product of the d fp16 values at k + keys[j]*stride with
// qf (the query's fp16 values as floats), summed as dotF16NEON sums: four
// accumulators over 16 values a step, then 4-value steps into the first,
// their reduction, then the last values in a scalar sum added at the end.
// With mvs, each score then goes on as attnRunningMax takes it (s =
// dot*scale + mvs[j], newMax[j] = s > M, out[j] = M-s on a new maximum,
// else s-M), M the running maximum, returned. A key not below rows stops
// it with bad = 1 before its row is read.
TEXT ·attnScoresF16NEON(SB), NOSPLIT, $0-100
	MOVD  out+0(FP), R0
	MOVD  qf+8(FP), R1
	MOVD  k+16(FP), R2
	MOVD  stride+24(FP), R3
	MOVD  keys+32(FP), R4
	MOVD  n+40(FP), R5
	MOVD  d+48(FP), R6
	MOVD  rows+56(FP), R7
	MOVD  mvs+64(FP), R8
	MOVD  newMax+72(FP), R9
	FMOVS scale+80(FP), F30
	MOVW  $0xff800000, R10
	FMOVS R10, F29 // M = -Inf
	MOVD  ZR, R10

skey:
	CMP  R5, R10
	BEQ  sdone
	MOVW (R4)(R10<<2), R11
	CMP  R7, R11
	BHS  sbad
	MUL  R3, R11, R11
	ADD  R2, R11, R12
	MOVD R1, R13
	MOVD R6, R14
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16

sby16:
	CMP    $16, R14
	BLT    sby4
	VLD1.P 32(R12), [V20.H8, V21.H8]
	FCVTL4S(20, 4)
	FCVTL24S(20, 5)
	FCVTL4S(21, 6)
	FCVTL24S(21, 7)
	VLD1.P 64(R13), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA  V16.S4, V4.S4, V0.S4
	VFMLA  V17.S4, V5.S4, V1.S4
	VFMLA  V18.S4, V6.S4, V2.S4
	VFMLA  V19.S4, V7.S4, V3.S4
	SUB    $16, R14
	B      sby16

sby4:
	CMP     $4, R14
	BLT     sreduce
	FMOVD.P 8(R12), F20
	FCVTL4S(20, 4)
	VLD1.P  16(R13), [V16.S4]
	VFMLA   V16.S4, V4.S4, V0.S4
	SUB     $4, R14
	B       sby4

sreduce:
	FADD4S(1, 0, 0)
	FADD4S(3, 2, 2)
	FADD4S(2, 0, 0)
	HSUM4S(0, 0)
	FMOVS ZR, F1

sby1:
	CBZ     R14, sscore
	MOVHU.P 2(R12), R15
	FMOVS   R15, F4
	FCVTHS  F4, F4
	FMOVS.P 4(R13), F5
	FMADDS  F5, F1, F4, F1
	SUB     $1, R14
	B       sby1

sscore:
	FADDS F1, F0, F0
	CBZ   R8, sstore
	// s = dot*scale + mv (rounded apart); a new maximum when s > M
	// (never for a NaN).
	FMULS F30, F0, F0
	FMOVS (R8)(R10<<2), F2
	FADDS F2, F0, F0
	FCMPS F29, F0
	BGT   snew
	FSUBS F29, F0, F0
	MOVB  ZR, (R9)(R10)
	B     sstore

snew:
	FSUBS F0, F29, F3
	FMOVS F0, F29
	FMOVS F3, F0
	MOVD  $1, R15
	MOVB  R15, (R9)(R10)

sstore:
	FMOVS F0, (R0)(R10<<2)
	ADD   $1, R10
	B     skey

sbad:
	MOVD $1, R10
	MOVD R10, bad+88(FP)
	RET

sdone:
	MOVD  ZR, bad+88(FP)
	FMOVS F29, m+96(FP)
	RET

// The value kernel's registers: R0 the accumulators' piece, R1 the values
// left, R2 v, R3 stride, R4 keys, R5 ex, R6 newMax, R7 n, R8 rows, R9 the
// piece's byte offset in a value row, R10 the key; V31 holds 1.0, V29 the
// key's exponential e, V28 its value's weight vs, F24 the sum.
//
// ACCKEY checks key R10 against rows (to abad), puts its value row's
// piece at R12 and e in F29, and branches to new on a new maximum. It
// uses R11.
#define ACCKEY(new) \
	MOVW  (R4)(R10<<2), R11; \
	CMP   R8, R11;           \
	BHS   abad;              \
	MUL   R3, R11, R11;      \
	ADD   R2, R11, R11;      \
	ADD   R9, R11, R12;      \
	FMOVS (R5)(R10<<2), F29; \
	MOVBU (R6)(R10), R11;    \
	CBNZ  R11, new

// OLDKEY and NEWKEY set the weights: vs = e and S += e for a key below the
// maximum; for a new maximum V29 = e in every lane (the caller scales by
// it), vs = 1 and S = S*e + 1, each rounded as the Go code rounds.
#define OLDKEY \
	VDUP  V29.S[0], V28.S4; \
	FADDS F29, F24, F24

#define NEWKEY \
	VMOV  V31.B16, V28.B16; \
	FMULS F29, F24, F24;    \
	FADDS F31, F24, F24;    \
	VDUP  V29.S[0], V29.S4

// ACC16(a, b, c, d) adds 16 values at R12 (advancing it), times vs, to the
// accumulators V(a)-V(d), rounding each to fp16: vecMadF16NEON's step.
#define ACC16(a, b, c, d) \
	VLD1.P 32(R12), [V16.H8, V17.H8]; \
	FCVTL4S(16, 20);  \
	FCVTL24S(16, 21); \
	FCVTL4S(17, 22);  \
	FCVTL24S(17, 23); \
	FMLA4S(28, 20, a); \
	FMLA4S(28, 21, b); \
	FMLA4S(28, 22, c); \
	FMLA4S(28, 23, d); \
	ROUNDH(a, 30);    \
	ROUNDH(b, 25);    \
	ROUNDH(c, 26);    \
	ROUNDH(d, 27)

// SCALE4(a, b, c, d): V(a)-V(d) times e, rounded to fp16: vecScaleF16NEON's
// step.
#define SCALE4(a, b, c, d) \
	FMUL4S(29, a, a); \
	FMUL4S(29, b, b); \
	FMUL4S(29, c, c); \
	FMUL4S(29, d, d); \
	ROUNDH(a, 30);    \
	ROUNDH(b, 25);    \
	ROUNDH(c, 26);    \
	ROUNDH(d, 27)

// LOADH16(a, b, c, d) and STOREH16 move 16 accumulators between R13
// (advancing it) and V(a)-V(d) as floats.
#define LOADH16(a, b, c, d) \
	VLD1.P 32(R13), [V16.H8, V17.H8]; \
	FCVTL4S(16, a);  \
	FCVTL24S(16, b); \
	FCVTL4S(17, c);  \
	FCVTL24S(17, d)

#define STOREH16(a, b, c, d) \
	FCVTN4H(a, 16);  \
	FCVTN28H(b, 16); \
	FCVTN4H(c, 17);  \
	FCVTN28H(d, 17); \
	VST1.P [V16.H8, V17.H8], 32(R13)

// func attnAccF16NEON(acc *uint16, d int, v *byte, stride uintptr, keys *int32, ex *float32, newMax *bool, n, rows int) (bad int, sum float32)
// For each key j in turn, e = ex[j]: on a new maximum (newMax[j])
// acc = fp16(acc*e) and acc = fp16(acc + v_j), else acc = fp16(acc +
// v_j*e), v_j the d fp16 values at v + keys[j]*stride; sum is the
// softmax denominator over the same weights. Every element's chain over
// the keys is vecScaleF16NEON's and vecMadF16NEON's (a fused multiply-add,
// roundings to nearest even); the row is taken 64, then 4, then one
// element at a time, all keys for each piece, the piece's accumulators
// staying in registers (each piece also runs the sum's scalar chain). A
// key not below rows stops it with bad = 1 before its row is read.
TEXT ·attnAccF16NEON(SB), NOSPLIT, $0-84
	MOVD   acc+0(FP), R0
	MOVD   d+8(FP), R1
	MOVD   v+16(FP), R2
	MOVD   stride+24(FP), R3
	MOVD   keys+32(FP), R4
	MOVD   ex+40(FP), R5
	MOVD   newMax+48(FP), R6
	MOVD   n+56(FP), R7
	MOVD   rows+64(FP), R8
	FMOVS  $1.0, F31
	VDUP   V31.S[0], V31.S4
	FMOVS  ZR, F24
	MOVD   ZR, R9

a64:
	CMP  $64, R1
	BLT  a4
	MOVD R0, R13
	LOADH16(0, 1, 2, 3)
	LOADH16(4, 5, 6, 7)
	LOADH16(8, 9, 10, 11)
	LOADH16(12, 13, 14, 15)
	FMOVS ZR, F24
	MOVD  ZR, R10

a64key:
	CMP R7, R10
	BEQ a64store
	ACCKEY(a64new)
	OLDKEY

a64mad:
	ACC16(0, 1, 2, 3)
	ACC16(4, 5, 6, 7)
	ACC16(8, 9, 10, 11)
	ACC16(12, 13, 14, 15)
	ADD $1, R10
	B   a64key

a64new:
	NEWKEY
	SCALE4(0, 1, 2, 3)
	SCALE4(4, 5, 6, 7)
	SCALE4(8, 9, 10, 11)
	SCALE4(12, 13, 14, 15)
	B a64mad

a64store:
	MOVD R0, R13
	STOREH16(0, 1, 2, 3)
	STOREH16(4, 5, 6, 7)
	STOREH16(8, 9, 10, 11)
	STOREH16(12, 13, 14, 15)
	ADD  $128, R0
	ADD  $128, R9
	SUB  $64, R1
	B    a64

a4:
	CMP   $4, R1
	BLT   a1
	FMOVD (R0), F16
	FCVTL4S(16, 0)
	FMOVS ZR, F24
	MOVD  ZR, R10

a4key:
	CMP R7, R10
	BEQ a4store
	ACCKEY(a4new)
	OLDKEY

a4mad:
	FMOVD (R12), F16
	FCVTL4S(16, 20)
	FMLA4S(28, 20, 0)
	ROUNDH(0, 30)
	ADD $1, R10
	B   a4key

a4new:
	NEWKEY
	FMUL4S(29, 0, 0)
	ROUNDH(0, 30)
	B a4mad

a4store:
	FCVTN4H(0, 16)
	FMOVD.P F16, 8(R0)
	ADD     $8, R9
	SUB     $4, R1
	B       a4

a1:
	CBZ    R1, adone
	MOVHU  (R0), R11
	FMOVS  R11, F0
	FCVTHS F0, F0
	FMOVS  ZR, F24
	MOVD   ZR, R10

a1key:
	CMP R7, R10
	BEQ a1store
	ACCKEY(a1new)
	OLDKEY

a1mad:
	MOVHU  (R12), R11
	FMOVS  R11, F20
	FCVTHS F20, F20
	FMADDS F28, F0, F20, F0
	FCVTSH F0, F0
	FCVTHS F0, F0
	ADD    $1, R10
	B      a1key

a1new:
	NEWKEY
	FMULS  F29, F0, F0
	FCVTSH F0, F0
	FCVTHS F0, F0
	B      a1mad

a1store:
	FCVTSH F0, F0
	FMOVS  F0, R11
	MOVH   R11, (R0)
	ADD    $2, R0
	ADD    $2, R9
	SUB    $1, R1
	B      a1

abad:
	MOVD $1, R10
	MOVD R10, bad+72(FP)
	RET

adone:
	MOVD  ZR, bad+72(FP)
	FMOVS F24, sum+80(FP)
	RET

// The constants of expf (elementwise.go) as float64, each twice (a whole
// register), then its range as float32 (four times): above hi e^x
// overflows, below lo it rounds to zero.
DATA expfc<>+0(SB)/8, $0x3ff71547652b82fe // log2(e)
DATA expfc<>+8(SB)/8, $0x3ff71547652b82fe
DATA expfc<>+16(SB)/8, $0x3fe0000000000000 // 1/2
DATA expfc<>+24(SB)/8, $0x3fe0000000000000
DATA expfc<>+32(SB)/8, $0x3fe62e42fee00000 // ln2 hi
DATA expfc<>+40(SB)/8, $0x3fe62e42fee00000
DATA expfc<>+48(SB)/8, $0x3dea39ef35793c76 // ln2 lo
DATA expfc<>+56(SB)/8, $0x3dea39ef35793c76
DATA expfc<>+64(SB)/8, $0x3efa01a01a01a01a // 1/40320
DATA expfc<>+72(SB)/8, $0x3efa01a01a01a01a
DATA expfc<>+80(SB)/8, $0x3f2a01a01a01a01a // 1/5040
DATA expfc<>+88(SB)/8, $0x3f2a01a01a01a01a
DATA expfc<>+96(SB)/8, $0x3f56c16c16c16c17 // 1/720
DATA expfc<>+104(SB)/8, $0x3f56c16c16c16c17
DATA expfc<>+112(SB)/8, $0x3f81111111111111 // 1/120
DATA expfc<>+120(SB)/8, $0x3f81111111111111
DATA expfc<>+128(SB)/8, $0x3fa5555555555555 // 1/24
DATA expfc<>+136(SB)/8, $0x3fa5555555555555
DATA expfc<>+144(SB)/8, $0x3fc5555555555555 // 1/6
DATA expfc<>+152(SB)/8, $0x3fc5555555555555
DATA expfc<>+160(SB)/8, $0x3ff0000000000000 // 1
DATA expfc<>+168(SB)/8, $0x3ff0000000000000
DATA expfc<>+176(SB)/8, $1023 // the exponent bias
DATA expfc<>+184(SB)/8, $1023
DATA expfc<>+192(SB)/4, $0x42b17218 // hi: float32(88.72284)
DATA expfc<>+196(SB)/4, $0x42b17218
DATA expfc<>+200(SB)/4, $0x42b17218
DATA expfc<>+204(SB)/4, $0x42b17218
DATA expfc<>+208(SB)/4, $0xc2cff1b4 // lo: float32(-103.97208)
DATA expfc<>+212(SB)/4, $0xc2cff1b4
DATA expfc<>+216(SB)/4, $0xc2cff1b4
DATA expfc<>+220(SB)/4, $0xc2cff1b4
DATA expfc<>+224(SB)/4, $0x7f800000 // +Inf
DATA expfc<>+228(SB)/4, $0x7f800000
DATA expfc<>+232(SB)/4, $0x7f800000
DATA expfc<>+236(SB)/4, $0x7f800000
GLOBL expfc<>(SB), RODATA|NOPTR, $240

// HORNER(c, p, q, r): V(q) = V(r)*V(p) + V(c), one step of expf's
// polynomial, the product rounded before the sum.
#define HORNER(c, p, q, r) \
	FMUL2D(p, r, q); \
	FADD2D(c, q, q)

// EXP2D(x, n, r, p, q): V(q) = e^V(x) for two doubles, before the special
// cases, as expf computes it: n = floor(x*log2e + 1/2), r = (x - n*ln2hi)
// - n*ln2lo, the polynomial in Horner steps, times 2^n, every product
// rounded before its sum. V16-V27 hold the constants.
#define EXP2D(x, n, r, p, q) \
	FMUL2D(16, x, n);               \
	FADD2D(17, n, n);               \
	FRINTM2D(n, n);                 \
	FMUL2D(18, n, p);               \
	FSUB2D(p, x, r);                \
	FMUL2D(19, n, p);               \
	FSUB2D(p, r, r);                \
	HORNER(21, 20, p, r);           \
	HORNER(22, p, q, r);            \
	HORNER(23, q, p, r);            \
	HORNER(24, p, q, r);            \
	HORNER(25, q, p, r);            \
	HORNER(17, p, q, r);            \
	HORNER(26, q, p, r);            \
	HORNER(26, p, q, r);            \
	FCVTZS2D(n, n);                 \
	ADD2D(27, n, n);                \
	SHL2D(52, n, n);                \
	FMUL2D(n, q, q)

// EXPFCONST loads expf's constants into V16-V30 (from the table, through
// R3) and zeros V31.
#define EXPFCONST \
	MOVD   $expfc<>(SB), R3; \
	VLD1.P 64(R3), [V16.D2, V17.D2, V18.D2, V19.D2]; \
	VLD1.P 64(R3), [V20.D2, V21.D2, V22.D2, V23.D2]; \
	VLD1.P 64(R3), [V24.D2, V25.D2, V26.D2, V27.D2]; \
	VLD1   (R3), [V28.S4, V29.S4, V30.S4];           \
	VEOR   V31.B16, V31.B16, V31.B16

// EXPF4: V11 = expf(V0) for four floats, bit for bit: expf's float64
// arithmetic two lanes at a time, rounded where the Go code rounds
// (TestVecExpfBits holds the two together), its special cases (NaN stays
// x, above hi +Inf, below lo 0) blended in at the end. It uses V1-V12.
#define EXPF4 \
	FCVTL2D(0, 1);                 \
	FCVTL22D(0, 2);                \
	EXP2D(1, 3, 4, 5, 6);          \
	EXP2D(2, 7, 8, 9, 10);         \
	FCVTN2S(6, 11);                \
	FCVTN24S(10, 11);              \
	FCMGT4S(28, 0, 12);            \
	VBIT V12.B16, V30.B16, V11.B16; \
	FCMGT4S(0, 29, 12);            \
	VBIT V12.B16, V31.B16, V11.B16; \
	FCMEQ4S(0, 0, 12);             \
	VBIF V12.B16, V0.B16, V11.B16

// func expfNEON(dst, src *float32, n int)
// dst[i] = expf(src[i]) bit for bit, for n a multiple of 4.
TEXT ·expfNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
	EXPFCONST

eloop:
	CMP    $4, R2
	BLT    edone
	VLD1.P 16(R1), [V0.S4]
	EXPF4
	VST1.P [V11.S4], 16(R0)
	SUB    $4, R2
	B      eloop

edone:
	RET

// func vecSwiGLUNEON(dst, x, gate *float32, n int)
// dst[i] = x[i] / (1 + expf(-x[i])) * gate[i] for n a multiple of 4: the
// portable SwiGLU's operations (none of which the compiler fuses) on
// EXPF4's e^-x, so bit for bit its result.
TEXT ·vecSwiGLUNEON(SB), NOSPLIT, $0-32
	MOVD  dst+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  gate+16(FP), R2
	MOVD  n+24(FP), R4
	EXPFCONST
	FMOVS $1.0, F15
	VDUP  V15.S[0], V15.S4

gloop:
	CMP    $4, R4
	BLT    gdone
	VLD1.P 16(R1), [V13.S4]
	VLD1.P 16(R2), [V14.S4]
	FNEG4S(13, 0)
	EXPF4
	FADD4S(11, 15, 11)
	FDIV4S(11, 13, 11)
	FMUL4S(14, 11, 11)
	VST1.P [V11.S4], 16(R0)
	SUB    $4, R4
	B      gloop

gdone:
	RET

// func vecF32ToF16NEON(dst *uint16, src *float32, n int)
// dst[i] = quant.FP32ToFP16(src[i]) for n a multiple of 4: FCVTN's
// rounding to nearest even, which is the scalar code's for every number;
// a NaN lane is replaced first by the quiet NaN of its sign with no
// payload, which converts to the scalar code's sign|0x7e00.
TEXT ·vecF32ToF16NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
	MOVW $0x80000000, R3
	VDUP R3, V30.S4
	MOVW $0x7fc00000, R3
	VDUP R3, V31.S4

hby8:
	CMP    $8, R2
	BLT    hby4
	VLD1.P 32(R1), [V0.S4, V1.S4]
	FCMEQ4S(0, 0, 2)
	FCMEQ4S(1, 1, 3)
	VAND   V30.B16, V0.B16, V4.B16
	VAND   V30.B16, V1.B16, V5.B16
	VORR   V31.B16, V4.B16, V4.B16
	VORR   V31.B16, V5.B16, V5.B16
	VBIF   V2.B16, V4.B16, V0.B16
	VBIF   V3.B16, V5.B16, V1.B16
	FCVTN4H(0, 6)
	FCVTN28H(1, 6)
	VST1.P [V6.H8], 16(R0)
	SUB    $8, R2
	B      hby8

hby4:
	CMP     $4, R2
	BLT     hdone
	VLD1.P  16(R1), [V0.S4]
	FCMEQ4S(0, 0, 2)
	VAND    V30.B16, V0.B16, V4.B16
	VORR    V31.B16, V4.B16, V4.B16
	VBIF    V2.B16, V4.B16, V0.B16
	FCVTN4H(0, 6)
	FMOVD.P F6, 8(R0)
	SUB     $4, R2
	B       hby4

hdone:
	RET
