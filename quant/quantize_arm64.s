//go:build !purego

#include "textflag.h"
#include "quantize_arm64.h"

// A NEON version of ggml's reference quantizer quantize_row_q4_0_ref,
// producing the same bytes as quantizeBlockQ4_0: the same float
// operations in the same order (a multiply, then an add; no fused
// multiply-adds), the same conversion (truncation), the scale stored by
// FCVT, which rounds to nearest even as FP32ToFP16 does. Q8_0, Q8_1 and
// Q8_K are fromfloat_arm64.s's.
//
// It stops before a block whose inverse scale 1/d overflows (d tiny but
// not zero) and returns the number of blocks written; Go quantizes that
// block, whose products are infinite, with the C conversion's rules. The
// input is finite (QuantizeInto rejects NaN and infinity).
//
// Registers: R0 dst, R1 src, R2 nb, R3 blocks done; the block in V0-V7;
// F24 = +Inf, F25 = 1, F26 = the divisor of d, F27 = 0.

// QCONSTS clears R3 and sets F24, F25, F27 and F26 to the float with
// bits DIV.
#define QCONSTS(DIV) \
	MOVD  ZR, R3;          \
	MOVW  $0x7f800000, R4; \
	FMOVS R4, F24;         \
	MOVW  $0x3f800000, R4; \
	FMOVS R4, F25;         \
	MOVW  $DIV, R4;        \
	FMOVS R4, F26;         \
	FMOVS ZR, F27

// LOADABS32 loads the 32 floats at R1 into V0-V7, their magnitudes into
// V16-V23 and the largest magnitude into F8.
#define LOADABS32 \
	VLD1  (R1), [V0.S4, V1.S4, V2.S4, V3.S4]; \
	ADD   $64, R1, R4;                        \
	VLD1  (R4), [V4.S4, V5.S4, V6.S4, V7.S4]; \
	FABS4S(0, 16);                            \
	FABS4S(1, 17);                            \
	FABS4S(2, 18);                            \
	FABS4S(3, 19);                            \
	FABS4S(4, 20);                            \
	FABS4S(5, 21);                            \
	FABS4S(6, 22);                            \
	FABS4S(7, 23);                            \
	FMAX4S(17, 16, 8);                        \
	FMAX4S(19, 18, 9);                        \
	FMAX4S(21, 20, 10);                       \
	FMAX4S(23, 22, 11);                       \
	FMAX4S(9, 8, 8);                          \
	FMAX4S(11, 10, 10);                       \
	FMAX4S(10, 8, 8);                         \
	FMAXV4S(8, 8)

// INVERSE takes d in F10: it jumps to stop (which returns the blocks
// done) when 1/d overflows, else stores d as fp16 at (R0) and leaves
// d ? 1/d : 0 in every lane of V11.
#define INVERSE \
	FDIVS  F10, F25, F11;      \
	FCMPS  F27, F10;           \
	FCSELS EQ, F27, F11, F11;  \
	FABSS  F11, F12;           \
	FCMPS  F24, F12;           \
	BEQ    stop;               \
	FCVTSH F10, F12;           \
	FMOVS  F12, R4;            \
	MOVH   R4, (R0);           \
	VDUP   V11.S[0], V11.S4

// SCALE8 applies the lane operation op(m, n, d), m = V(k), to V0-V7 in
// place.
#define SCALE8(op, k) \
	op(k, 0, 0); \
	op(k, 1, 1); \
	op(k, 2, 2); \
	op(k, 3, 3); \
	op(k, 4, 4); \
	op(k, 5, 5); \
	op(k, 6, 6); \
	op(k, 7, 7)

// CONV8 applies the conversion op(n, d) to V0-V7 in place.
#define CONV8(op) \
	op(0, 0); \
	op(1, 1); \
	op(2, 2); \
	op(3, 3); \
	op(4, 4); \
	op(5, 5); \
	op(6, 6); \
	op(7, 7)

// NARROW16 keeps the low byte of the int32 lanes of V(a)-V(a+3), in
// order, in the 16 bytes of V(d), using V8 and V9.
#define NARROW16(a, d) \
	XTN4H(a, 8);     \
	XTN24H(a+1, 8);  \
	XTN4H(a+2, 9);   \
	XTN24H(a+3, 9);  \
	XTN8B(8, d);     \
	XTN28B(9, d)

// The positions 0-31 of a block's values, as bytes.
DATA q4_index<>+0(SB)/8, $0x0706050403020100
DATA q4_index<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA q4_index<>+16(SB)/8, $0x1716151413121110
DATA q4_index<>+24(SB)/8, $0x1f1e1d1c1b1a1918
GLOBL q4_index<>(SB), RODATA|NOPTR, $32

// func quantizeQ4_0NEON(dst *byte, src *float32, nb int) int
TEXT ·quantizeQ4_0NEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD nb+16(FP), R2
	QCONSTS(0xc1000000) // -8
	MOVW  $0x41080000, R4 // 8.5
	VDUP  R4, V28.S4
	MOVW  $15, R4
	VDUP  R4, V29.S4
	MOVD  $q4_index<>(SB), R4
	VLD1  (R4), [V30.B16, V31.B16]

q4loop:
	CMP R2, R3
	BGE stop
	LOADABS32

	// m, the value of largest magnitude, the first on ties: +0 when all
	// are zero, as ggml's scan starts from max = 0. The first lane equal
	// to the maximum is the smallest of (position | ^mask) over the
	// block's bytes.
	FMOVS F27, F9
	FCMPS F27, F8
	BEQ   q4scale
	VDUP  V8.S[0], V8.S4
	FCMEQ4S(8, 16, 16)
	FCMEQ4S(8, 17, 17)
	FCMEQ4S(8, 18, 18)
	FCMEQ4S(8, 19, 19)
	FCMEQ4S(8, 20, 20)
	FCMEQ4S(8, 21, 21)
	FCMEQ4S(8, 22, 22)
	FCMEQ4S(8, 23, 23)
	NARROW16(16, 12)
	NARROW16(20, 13)
	ORN16B(12, 30, 12)
	ORN16B(13, 31, 13)
	UMIN16B(13, 12, 12)
	UMINV16B(12, 12)
	VMOV  V12.B[0], R4
	ADD   R4<<2, R1, R4
	FMOVS (R4), F9

q4scale:
	// d = m / -8; levels min(15, (int)(x*id + 8.5)), in range for the
	// truncating conversion since |x*id| <= 8 (up to rounding).
	FDIVS F26, F9, F10
	INVERSE
	SCALE8(FMUL4S, 11)
	SCALE8(FADD4S, 28)
	CONV8(FCVTZS4S)
	SCALE8(SMIN4S, 29)

	// byte j = level j | level j+16 << 4
	VSHL $4, V4.S4, V4.S4
	VSHL $4, V5.S4, V5.S4
	VSHL $4, V6.S4, V6.S4
	VSHL $4, V7.S4, V7.S4
	VORR V4.B16, V0.B16, V0.B16
	VORR V5.B16, V1.B16, V1.B16
	VORR V6.B16, V2.B16, V2.B16
	VORR V7.B16, V3.B16, V3.B16
	NARROW16(0, 12)
	ADD  $2, R0, R4
	VST1 [V12.B16], (R4)
	ADD  $128, R1
	ADD  $18, R0
	ADD  $1, R3
	B    q4loop

stop:
	MOVD R3, ret+24(FP)
	RET

// The scale searches' trial passes (see haveQXTrials and haveQKXTrials in
// scalesearch.go): each lane is one trial and does exactly the scalar
// loop's operations, in its order. The slices' lengths are not trusted
// beyond the shortest of them.

// MIN3 sets R3 to the smallest of R3, R4 and R5 (the three slices'
// lengths).
#define MIN3 \
	CMP  R4, R3;         \
	CSEL GT, R4, R3, R3; \
	CMP  R5, R3;         \
	CSEL GT, R5, R3, R3

// QXLANE adds, for the four trial scales in V(s), wx*l to V(sx) and
// (w*l)*l to V(s2), l = clamp(nearest_int(scale*v), -nmax, nmax-1), with
// v, wx and w in every lane of V15, V16 and V17, -nmax in V18 and nmax-1
// in V19. FCVTNS rounds to nearest even as nearest_int does below 2^22 in
// magnitude; the caller passes finite x only, so |scale*v| is at most
// about nmax+1.
#define QXLANE(s, sx, s2) \
	FMUL4S(15, s, 20);  \
	FCVTNS4S(20, 20);   \
	SMIN4S(19, 20, 20); \
	SMAX4S(18, 20, 20); \
	SCVTF4S(20, 20);    \
	FMUL4S(20, 16, 21); \
	FADD4S(21, sx, sx); \
	FMUL4S(20, 17, 21); \
	FMUL4S(20, 21, 21); \
	FADD4S(21, s2, s2)

// The 19 trial scales (and one of padding) arrive as numerators, divided
// here by maxv (the division each scalar trial makes) and stored back.
//
// func qxTrials(x, w, wx []float32, scales *[24]float32, maxv float32, nmax int32, sumx, sum2 *[24]float32)
TEXT ·qxTrials(SB), NOSPLIT, $0-104
	MOVD x_base+0(FP), R0
	MOVD w_base+24(FP), R1
	MOVD wx_base+48(FP), R2
	MOVD x_len+8(FP), R3
	MOVD w_len+32(FP), R4
	MOVD wx_len+56(FP), R5
	MIN3
	MOVD  scales+72(FP), R5
	FMOVS maxv+80(FP), F31
	VDUP  V31.S[0], V31.S4
	MOVW  nmax+84(FP), R6
	NEG   R6, R7
	VDUP  R7, V18.S4
	SUB   $1, R6
	VDUP  R6, V19.S4
	VLD1  (R5), [V0.S4, V1.S4, V2.S4, V3.S4]
	FMOVQ 64(R5), F4
	FDIV4S(31, 0, 0)
	FDIV4S(31, 1, 1)
	FDIV4S(31, 2, 2)
	FDIV4S(31, 3, 3)
	FDIV4S(31, 4, 4)
	VST1  [V0.S4, V1.S4, V2.S4, V3.S4], (R5)
	FMOVQ F4, 64(R5)
	VEOR  V5.B16, V5.B16, V5.B16
	VEOR  V6.B16, V6.B16, V6.B16
	VEOR  V7.B16, V7.B16, V7.B16
	VEOR  V8.B16, V8.B16, V8.B16
	VEOR  V9.B16, V9.B16, V9.B16
	VEOR  V10.B16, V10.B16, V10.B16
	VEOR  V11.B16, V11.B16, V11.B16
	VEOR  V12.B16, V12.B16, V12.B16
	VEOR  V13.B16, V13.B16, V13.B16
	VEOR  V14.B16, V14.B16, V14.B16

qxloop:
	CBZ    R3, qxdone
	VLD1R.P 4(R0), [V15.S4]
	VLD1R.P 4(R2), [V16.S4]
	VLD1R.P 4(R1), [V17.S4]
	QXLANE(0, 5, 10)
	QXLANE(1, 6, 11)
	QXLANE(2, 7, 12)
	QXLANE(3, 8, 13)
	QXLANE(4, 9, 14)
	SUB    $1, R3
	B      qxloop

qxdone:
	MOVD  sumx+88(FP), R5
	VST1  [V5.S4, V6.S4, V7.S4, V8.S4], (R5)
	FMOVQ F9, 64(R5)
	MOVD  sum2+96(FP), R5
	VST1  [V10.S4, V11.S4, V12.S4, V13.S4], (R5)
	FMOVQ F14, 64(R5)
	RET

// QKXCONSTS loads the eight trial inverse scales at R5 into V0 and V1 and
// the constants of QKXLEVEL: V24-V26 nearest_int's magic number, mantissa
// mask and bias, V27 zero and V28 nmax (from R6).
#define QKXCONSTS \
	VLD1  (R5), [V0.S4, V1.S4]; \
	MOVW  $0x4b400000, R5;     \
	VDUP  R5, V24.S4;          \
	MOVW  $0x007fffff, R5;     \
	VDUP  R5, V25.S4;          \
	MOVW  $0x00400000, R5;     \
	VDUP  R5, V26.S4;          \
	VEOR  V27.B16, V27.B16, V27.B16; \
	VDUP  R6, V28.S4

// QKXLEVEL puts in V(l) the float level clamp(nearest_int(is*xm), 0, nmax)
// for the inverse scales in V(is) and xm in every lane of V16, with Go's
// and ggml's rounding trick (exact for every input, as nearestInt is).
#define QKXLEVEL(is, l) \
	FMUL4S(16, is, l);  \
	FADD4S(24, l, l);   \
	AND16B(25, l, l);   \
	SUB4S(26, l, l);    \
	SMAX4S(27, l, l);   \
	SMIN4S(28, l, l);   \
	SCVTF4S(l, l)

// QKXSUMS adds, for the levels in V(l), w*l to V(sl), (w*l)*l to V(sl2)
// and (w*l)*x to V(sxl), with w in V17 and x in V18; uses V22 and V23.
#define QKXSUMS(l, sl, sl2, sxl) \
	FMUL4S(l, 17, 22);   \
	FADD4S(22, sl, sl);  \
	FMUL4S(l, 22, 23);   \
	FADD4S(23, sl2, sl2); \
	FMUL4S(18, 22, 23);  \
	FADD4S(23, sxl, sxl)

// QKXLOAD loads xm[i], w[i] and x[i] into every lane of V16-V18.
#define QKXLOAD \
	VLD1R.P 4(R2), [V16.S4]; \
	VLD1R.P 4(R1), [V17.S4]; \
	VLD1R.P 4(R0), [V18.S4]

// func qkxSums(x, w, xm []float32, iscales *[8]float32, nmax int32, sumL, sumL2, sumXL *[8]float32)
TEXT ·qkxSums(SB), NOSPLIT, $0-112

// QKXARGS loads the arguments qkxSums and qkxErr share (x, w, xm,
// iscales, nmax: the same offsets in both) and QKXCONSTS. It is defined
// inside qkxSums so that go vet checks those offsets against a frame.
#define QKXARGS \
	MOVD x_base+0(FP), R0; \
	MOVD w_base+24(FP), R1; \
	MOVD xm_base+48(FP), R2; \
	MOVD x_len+8(FP), R3; \
	MOVD w_len+32(FP), R4; \
	MOVD xm_len+56(FP), R5; \
	MIN3; \
	MOVD iscales+72(FP), R5; \
	MOVW nmax+80(FP), R6; \
	QKXCONSTS

	QKXARGS
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16

qkxsloop:
	CBZ R3, qkxsdone
	QKXLOAD
	QKXLEVEL(0, 20)
	QKXLEVEL(1, 21)
	QKXSUMS(20, 2, 4, 6)
	QKXSUMS(21, 3, 5, 7)
	SUB $1, R3
	B   qkxsloop

qkxsdone:
	MOVD sumL+88(FP), R5
	VST1 [V2.S4, V3.S4], (R5)
	MOVD sumL2+96(FP), R5
	VST1 [V4.S4, V5.S4], (R5)
	MOVD sumXL+104(FP), R5
	VST1 [V6.S4, V7.S4], (R5)
	RET

// QKXDIFF leaves in V(l), the levels on entry, (scale*l + min) - x with
// the scales in V(sc), the minimums in V(mn) and x in V18.
#define QKXDIFF(l, sc, mn) \
	FMUL4S(sc, l, l); \
	FADD4S(mn, l, l); \
	FSUB4S(18, l, l)

// QKXERR adds w*f(V(l)) to V(e), w in V17; f (SQUARE or FABS4S) works in
// place.
#define QKXERR(l, e, f) \
	f(l, l);           \
	FMUL4S(17, l, l);  \
	FADD4S(l, e, e)

#define SQUARE(n, d) FMUL4S(n, n, d)

#define QKXERRLOOP(f, loop, done) \
loop:                              \
	CBZ R3, done;                  \
	QKXLOAD;                       \
	QKXLEVEL(0, 20);               \
	QKXLEVEL(1, 21);               \
	QKXDIFF(20, 8, 10);            \
	QKXDIFF(21, 9, 11);            \
	QKXERR(20, 2, f);              \
	QKXERR(21, 3, f);              \
	SUB $1, R3;                    \
	B   loop

// func qkxErr(x, w, xm []float32, iscales *[8]float32, nmax int32, scales, mins *[8]float32, mad int, errs *[8]float32)
TEXT ·qkxErr(SB), NOSPLIT, $0-120
	QKXARGS
	MOVD scales+88(FP), R5
	VLD1 (R5), [V8.S4, V9.S4]
	MOVD mins+96(FP), R5
	VLD1 (R5), [V10.S4, V11.S4]
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	MOVD mad+104(FP), R5
	CBNZ R5, qkxemad
	QKXERRLOOP(SQUARE, qkxesq, qkxedone)

qkxemad:
	QKXERRLOOP(FABS4S, qkxeabs, qkxedone)

qkxedone:
	MOVD errs+112(FP), R5
	VST1 [V2.S4, V3.S4], (R5)
	RET
