//go:build !purego

#include "textflag.h"

// AVX2 + FMA + F16C dot products (traits_amd64.go declares them and says
// what each computes). Every *x4 kernel runs, for each of its four columns,
// exactly the instruction sequence of its single-column twin, so a column's
// result is bit for bit the same whichever kernel computed it.

DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

DATA nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nib<>(SB), RODATA|NOPTR, $32

DATA eight<>+0(SB)/8, $0x0808080808080808
DATA eight<>+8(SB)/8, $0x0808080808080808
DATA eight<>+16(SB)/8, $0x0808080808080808
DATA eight<>+24(SB)/8, $0x0808080808080808
GLOBL eight<>(SB), RODATA|NOPTR, $32

DATA hi2<>+0(SB)/8, $0x3030303030303030
DATA hi2<>+8(SB)/8, $0x3030303030303030
DATA hi2<>+16(SB)/8, $0x3030303030303030
DATA hi2<>+24(SB)/8, $0x3030303030303030
GLOBL hi2<>(SB), RODATA|NOPTR, $32

// HSUM leaves in the low lane of X the sum of Y's eight lanes, in a fixed
// order, using T.
#define HSUM(Y, X, T) \
	VEXTRACTF128 $1, Y, T; \
	VADDPS       T, X, X;  \
	VMOVHLPS     X, T, T;  \
	VADDPS       T, X, X;  \
	VMOVSHDUP    X, T;     \
	VADDSS       T, X, X

// ---------------------------------------------------------------------------
// Q8_0 and Q4_0 weights against Q8_0 activations (34-byte blocks: fp16 d,
// int8 qs[32]). Each block's integer dot comes from maddubs(|x|, y*sign(x))
// summed pairwise; blocks go two by two into the accumulator, as
// acc += p1*s1 + p0*s0, which keeps one add per pair on the dependency chain.

// SCALE puts fp16(xd) * fp16(yd) in every lane of SY (SX is its low lane),
// using AX, BX and T.
#define SCALE(xd, yd, T, SX, SY) \
	MOVWLZX      xd, AX;     \
	MOVWLZX      yd, BX;     \
	SHLL         $16, BX;    \
	ORL          BX, AX;     \
	VMOVD        AX, SX;     \
	VCVTPH2PS    SX, SX;     \
	VMOVSHDUP    SX, T;      \
	VMULSS       T, SX, SX;  \
	VBROADCASTSS SX, SY

// Q8DOT: P = the eight int32 pair sums of x·y as floats, for x's block in
// XS (signed) and XA (|x|), y's 32 quants at ymem; T is a temporary.
#define Q8DOT(XS, XA, ymem, T, P) \
	VMOVDQU    ymem, T;              \
	VPSIGNB    XS, T, T;             \
	VPMADDUBSW T, XA, P;             \
	VPMADDWD   ones16<>(SB), P, P;   \
	VCVTDQ2PS  P, P

// LOADQ8_0 and LOADQ4_0 decode the block at off(SI) into XS and XA.
#define LOADQ8_0(off, XS, XA) \
	VMOVDQU off+2(SI), XS; \
	VPSIGNB XS, XS, XA

#define LOADQ4_0(off, XL, YL, XH, XS, XA) \
	VMOVDQU     off+2(SI), XL;     \
	VPSRLW      $4, XL, XH;        \
	VINSERTI128 $1, XH, YL, XS;    \
	VPAND       nib<>(SB), XS, XS; \
	VPSUBB      eight<>(SB), XS, XS; \
	VPSIGNB     XS, XS, XA

// PAIR adds to ACC the scaled dots of the x blocks at xo0(SI), xo1(SI)
// (decoded in Y4..Y7) with the y blocks at 0(YP), 34(YP).
#define PAIR(xo0, xo1, YP, ACC) \
	SCALE(xo0(SI), 0(YP), X12, X11, Y11); \
	Q8DOT(Y4, Y5, 2(YP), Y8, Y9);           \
	VMULPS      Y11, Y9, Y10;               \
	SCALE(xo1(SI), 34(YP), X12, X11, Y11);  \
	Q8DOT(Y6, Y7, 36(YP), Y8, Y9);          \
	VFMADD231PS Y11, Y9, Y10;               \
	VADDPS      Y10, ACC, ACC

// ONE adds to ACC the scaled dot of the x block at 0(SI) (in Y4, Y5) with
// the y block at 0(YP).
#define ONE(YP, ACC) \
	SCALE(0(SI), 0(YP), X12, X11, Y11); \
	Q8DOT(Y4, Y5, 2(YP), Y8, Y9);         \
	VFMADD231PS Y11, Y9, ACC

// FX4STORE finishes the four columns of dotF32x4AVX2 and dotF16x4AVX2:
// accumulators Y0+Y1, Y2+Y3, Y6+Y7, Y8+Y9, scalar parts X10..X13, out in DX.
#define FX4STORE \
	VADDPS Y1, Y0, Y0; \
	HSUM(Y0, X0, X4); \
	VADDSS X10, X0, X0; \
	VMOVSS X0, 0(DX); \
	VADDPS Y3, Y2, Y2; \
	HSUM(Y2, X2, X4); \
	VADDSS X11, X2, X2; \
	VMOVSS X2, 4(DX); \
	VADDPS Y7, Y6, Y6; \
	HSUM(Y6, X6, X4); \
	VADDSS X12, X6, X6; \
	VMOVSS X6, 8(DX); \
	VADDPS Y9, Y8, Y8; \
	HSUM(Y8, X8, X4); \
	VADDSS X13, X8, X8; \
	VMOVSS X8, 12(DX); \
	VZEROUPPER; \
	RET

// H1 converts the half at mem to a float in the low lane of X.
#define H1(mem, X) \
	MOVWLZX   mem, AX; \
	VMOVD     AX, X;   \
	VCVTPH2PS X, X

// FP16MUL puts fp16(xd) * float32(ymem) in every lane of Y (X its low lane).
#define FP16MUL(xd, ymem, X, Y) \
	MOVWLZX      xd, AX;     \
	VMOVD        AX, X;      \
	VCVTPH2PS    X, X;       \
	VMULSS       ymem, X, X; \
	VBROADCASTSS X, Y

// Q4_K block: fp16 d, fp16 dmin, scales[12], qs[128]. DECODEQ4K writes the
// eight 6-bit scales as words at 0(SP) and broadcast to whole vectors at
// 16+32j(SP), and leaves the minimums, each repeated for the two bsums of
// its 32 elements, as words in Y14. It uses AX, BX, DX, R12, R13, Y6, Y7.
#define DECODEQ4K \
	MOVL         4(SI), AX;          \
	MOVL         8(SI), BX;          \
	MOVL         12(SI), DX;         \
	MOVL         AX, R12;            \
	ANDL         $0x3f3f3f3f, R12;   \
	VMOVD        R12, X6;            \
	MOVL         DX, R12;            \
	ANDL         $0x0f0f0f0f, R12;   \
	MOVL         AX, R13;            \
	SHRL         $6, R13;            \
	ANDL         $0x03030303, R13;   \
	SHLL         $4, R13;            \
	ORL          R13, R12;           \
	VPINSRD      $1, R12, X6, X6;    \
	VPMOVZXBW    X6, X6;             \
	VMOVDQU      X6, 0(SP);          \
	MOVL         BX, R12;            \
	ANDL         $0x3f3f3f3f, R12;   \
	VMOVD        R12, X7;            \
	SHRL         $4, DX;             \
	ANDL         $0x0f0f0f0f, DX;    \
	SHRL         $6, BX;             \
	ANDL         $0x03030303, BX;    \
	SHLL         $4, BX;             \
	ORL          BX, DX;             \
	VPINSRD      $1, DX, X7, X7;     \
	VPMOVZXBW    X7, X7;             \
	VPUNPCKHWD   X7, X7, X6;         \
	VPUNPCKLWD   X7, X7, X7;         \
	VINSERTI128  $1, X6, Y7, Y14;    \
	VPBROADCASTW 0(SP), Y6;          \
	VMOVDQU      Y6, 16(SP);         \
	VPBROADCASTW 2(SP), Y6;          \
	VMOVDQU      Y6, 48(SP);         \
	VPBROADCASTW 4(SP), Y6;          \
	VMOVDQU      Y6, 80(SP);         \
	VPBROADCASTW 6(SP), Y6;          \
	VMOVDQU      Y6, 112(SP);        \
	VPBROADCASTW 8(SP), Y6;          \
	VMOVDQU      Y6, 144(SP);        \
	VPBROADCASTW 10(SP), Y6;         \
	VMOVDQU      Y6, 176(SP);        \
	VPBROADCASTW 12(SP), Y6;         \
	VMOVDQU      Y6, 208(SP);        \
	VPBROADCASTW 14(SP), Y6;         \
	VMOVDQU      Y6, 240(SP)

// Q4KLOAD splits the 32 quant bytes at off(SI) into low nibbles (Y4) and
// high nibbles (Y5): sub-blocks 2k and 2k+1.
#define Q4KLOAD(off) \
	VMOVDQU off(SI), Y4;       \
	VPSRLW  $4, Y4, Y5;        \
	VPAND   nib<>(SB), Y4, Y4; \
	VPAND   nib<>(SB), Y5, Y5

// Q4KCOL adds to ISUM the scaled dots of Y4 and Y5 with the y quants at
// ylo(YP) and yhi(YP), with the scale vectors at slo(SP) and shi(SP).
#define Q4KCOL(ylo, yhi, slo, shi, YP, ISUM) \
	VPMADDUBSW ylo(YP), Y4, Y6; \
	VPMADDWD   slo(SP), Y6, Y6; \
	VPADDD     Y6, ISUM, ISUM;  \
	VPMADDUBSW yhi(YP), Y5, Y6; \
	VPMADDWD   shi(SP), Y6, Y6; \
	VPADDD     Y6, ISUM, ISUM

// Q4KFIN folds a column's super-block into ACC.
#define Q4KFIN(YP, ISUM, ACC) \
	FP16MUL(0(SI), 0(YP), X6, Y6);   \
	VCVTDQ2PS    ISUM, ISUM;         \
	VFMADD231PS  Y6, ISUM, ACC;      \
	VMOVDQU      260(YP), Y7;        \
	VPMADDWD     Y14, Y7, Y7;        \
	VCVTDQ2PS    Y7, Y7;             \
	FP16MUL(2(SI), 0(YP), X6, Y6);   \
	VFNMADD231PS Y6, Y7, ACC

// Q6_K block: ql[128], qh[64], int8 scales[16], fp16 d. DECODEQ6KSCALES
// writes the sixteen scales as words at 0(SP) and, for each pair of
// 16-element sub-blocks (2i, 2i+1), a vector of sc[2i] in its low half and
// sc[2i+1] in its high half at 32+32i(SP). It uses Y6, Y7.
#define Q6KPAIR(lo, hi, dst) \
	VPBROADCASTW lo(SP), X6;     \
	VPBROADCASTW hi(SP), X7;     \
	VINSERTI128  $1, X7, Y6, Y6; \
	VMOVDQU      Y6, dst(SP)

#define DECODEQ6KSCALES \
	VPMOVSXBW 192(SI), Y6; \
	VMOVDQU   Y6, 0(SP);   \
	Q6KPAIR(0, 2, 32);     \
	Q6KPAIR(4, 6, 64);     \
	Q6KPAIR(8, 10, 96);    \
	Q6KPAIR(12, 14, 128);  \
	Q6KPAIR(16, 18, 160);  \
	Q6KPAIR(20, 22, 192);  \
	Q6KPAIR(24, 26, 224);  \
	Q6KPAIR(28, 30, 256)

// DECODEQ6KHALF makes the 6-bit quants of one 128-element half, from ql at
// ql(SI), ql+32(SI) and qh at qh(SI): elements 0-31 in Y8, 32-63 in Y9,
// 64-95 in Y4, 96-127 in Y5. It uses Y6, Y7.
#define DECODEQ6KHALF(ql, qh) \
	VMOVDQU ql(SI), Y4;        \
	VMOVDQU ql+32(SI), Y5;     \
	VMOVDQU qh(SI), Y6;        \
	VPAND   nib<>(SB), Y4, Y8; \
	VPSLLW  $4, Y6, Y7;        \
	VPAND   hi2<>(SB), Y7, Y7; \
	VPOR    Y7, Y8, Y8;        \
	VPAND   nib<>(SB), Y5, Y9; \
	VPSLLW  $2, Y6, Y7;        \
	VPAND   hi2<>(SB), Y7, Y7; \
	VPOR    Y7, Y9, Y9;        \
	VPSRLW  $4, Y4, Y4;        \
	VPAND   nib<>(SB), Y4, Y4; \
	VPAND   hi2<>(SB), Y6, Y7; \
	VPOR    Y7, Y4, Y4;        \
	VPSRLW  $4, Y5, Y5;        \
	VPAND   nib<>(SB), Y5, Y5; \
	VPSRLW  $2, Y6, Y6;        \
	VPAND   hi2<>(SB), Y6, Y6; \
	VPOR    Y6, Y5, Y5

// Q6KCOL adds to ISUM the scaled dots of one half's quants with the y
// quants at y(YP), y+32(YP), ... and the scale pairs at s(SP), s+32(SP), ...
#define Q6KCOL(y, s, YP, ISUM) \
	VPMADDUBSW y(YP), Y8, Y6;     \
	VPMADDWD   s(SP), Y6, Y6;     \
	VPADDD     Y6, ISUM, ISUM;    \
	VPMADDUBSW y+32(YP), Y9, Y6;  \
	VPMADDWD   s+32(SP), Y6, Y6;  \
	VPADDD     Y6, ISUM, ISUM;    \
	VPMADDUBSW y+64(YP), Y4, Y6;  \
	VPMADDWD   s+64(SP), Y6, Y6;  \
	VPADDD     Y6, ISUM, ISUM;    \
	VPMADDUBSW y+96(YP), Y5, Y6;  \
	VPMADDWD   s+96(SP), Y6, Y6;  \
	VPADDD     Y6, ISUM, ISUM

// Q6KFIN removes the offset of 32 (32 * sum of sc[j] * bsums[j]) and folds
// a column's super-block into ACC.
#define Q6KFIN(YP, ISUM, ACC) \
	VMOVDQU     260(YP), Y6;          \
	VPMADDWD    0(SP), Y6, Y6;        \
	VPSLLD      $5, Y6, Y6;           \
	VPSUBD      Y6, ISUM, ISUM;       \
	VCVTDQ2PS   ISUM, ISUM;           \
	FP16MUL(208(SI), 0(YP), X6, Y6);  \
	VFMADD231PS Y6, ISUM, ACC

// func dotQ8_0AVX2(nb int, x, y unsafe.Pointer) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0

q8pair:
	CMPQ CX, $2
	JLT  q8one
	LOADQ8_0(0, Y4, Y5)
	LOADQ8_0(34, Y6, Y7)
	PAIR(0, 34, DI, Y0)
	ADDQ $68, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP  q8pair

q8one:
	CMPQ CX, $1
	JLT  q8done
	LOADQ8_0(0, Y4, Y5)
	ONE(DI, Y0)

q8done:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotQ8_0x4AVX2(nb int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ8_0x4AVX2(SB), NOSPLIT, $0-32
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   0(DX), R8
	MOVQ   8(DX), R9
	MOVQ   16(DX), R10
	MOVQ   24(DX), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q8x4pair:
	CMPQ CX, $2
	JLT  q8x4one
	LOADQ8_0(0, Y4, Y5)
	LOADQ8_0(34, Y6, Y7)
	PAIR(0, 34, R8, Y0)
	PAIR(0, 34, R9, Y1)
	PAIR(0, 34, R10, Y2)
	PAIR(0, 34, R11, Y3)
	ADDQ $68, SI
	ADDQ $68, R8
	ADDQ $68, R9
	ADDQ $68, R10
	ADDQ $68, R11
	SUBQ $2, CX
	JMP  q8x4pair

q8x4one:
	CMPQ CX, $1
	JLT  q8x4done
	LOADQ8_0(0, Y4, Y5)
	ONE(R8, Y0)
	ONE(R9, Y1)
	ONE(R10, Y2)
	ONE(R11, Y3)

q8x4done:
	MOVQ out+24(FP), DX
	HSUM(Y0, X0, X4)
	HSUM(Y1, X1, X4)
	HSUM(Y2, X2, X4)
	HSUM(Y3, X3, X4)
	VMOVSS X0, 0(DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	VZEROUPPER
	RET

// func dotQ4_0AVX2(nb int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-28
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0

q4pair:
	CMPQ CX, $2
	JLT  q4one
	LOADQ4_0(0, X13, Y13, X14, Y4, Y5)
	LOADQ4_0(18, X13, Y13, X14, Y6, Y7)
	PAIR(0, 18, DI, Y0)
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP  q4pair

q4one:
	CMPQ CX, $1
	JLT  q4done
	LOADQ4_0(0, X13, Y13, X14, Y4, Y5)
	ONE(DI, Y0)

q4done:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotQ4_0x4AVX2(nb int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_0x4AVX2(SB), NOSPLIT, $0-32
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   0(DX), R8
	MOVQ   8(DX), R9
	MOVQ   16(DX), R10
	MOVQ   24(DX), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q4x4pair:
	CMPQ CX, $2
	JLT  q4x4one
	LOADQ4_0(0, X13, Y13, X14, Y4, Y5)
	LOADQ4_0(18, X13, Y13, X14, Y6, Y7)
	PAIR(0, 18, R8, Y0)
	PAIR(0, 18, R9, Y1)
	PAIR(0, 18, R10, Y2)
	PAIR(0, 18, R11, Y3)
	ADDQ $36, SI
	ADDQ $68, R8
	ADDQ $68, R9
	ADDQ $68, R10
	ADDQ $68, R11
	SUBQ $2, CX
	JMP  q4x4pair

q4x4one:
	CMPQ CX, $1
	JLT  q4x4done
	LOADQ4_0(0, X13, Y13, X14, Y4, Y5)
	ONE(R8, Y0)
	ONE(R9, Y1)
	ONE(R10, Y2)
	ONE(R11, Y3)

q4x4done:
	MOVQ out+24(FP), DX
	HSUM(Y0, X0, X4)
	HSUM(Y1, X1, X4)
	HSUM(Y2, X2, X4)
	HSUM(Y3, X3, X4)
	VMOVSS X0, 0(DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	VZEROUPPER
	RET

// ---------------------------------------------------------------------------
// F32 and F16 (against F16 activations): two accumulators over 16 elements
// per step, then one 8-element step, then single elements in a scalar
// accumulator; the sum is (acc0+acc1) reduced, plus the scalar part.

// func dotF32AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS X2, X2, X2

f32by16:
	CMPQ        CX, $16
	JLT         f32by8
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         f32by16

f32by8:
	CMPQ        CX, $8
	JLT         f32by1
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX

f32by1:
	TESTQ       CX, CX
	JZ          f32done
	VMOVSS      (SI), X4
	VFMADD231SS (DI), X4, X2
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         f32by1

f32done:
	VADDPS Y1, Y0, Y0
	HSUM(Y0, X0, X1)
	VADDSS X2, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotF32x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotF32x4AVX2(SB), NOSPLIT, $0-32
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   0(DX), R8
	MOVQ   8(DX), R9
	MOVQ   16(DX), R10
	MOVQ   24(DX), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS X10, X10, X10
	VXORPS X11, X11, X11
	VXORPS X12, X12, X12
	VXORPS X13, X13, X13

f32x4by16:
	CMPQ        CX, $16
	JLT         f32x4by8
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VFMADD231PS (R8), Y4, Y0
	VFMADD231PS 32(R8), Y5, Y1
	VFMADD231PS (R9), Y4, Y2
	VFMADD231PS 32(R9), Y5, Y3
	VFMADD231PS (R10), Y4, Y6
	VFMADD231PS 32(R10), Y5, Y7
	VFMADD231PS (R11), Y4, Y8
	VFMADD231PS 32(R11), Y5, Y9
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX
	JMP         f32x4by16

f32x4by8:
	CMPQ        CX, $8
	JLT         f32x4by1
	VMOVUPS     (SI), Y4
	VFMADD231PS (R8), Y4, Y0
	VFMADD231PS (R9), Y4, Y2
	VFMADD231PS (R10), Y4, Y6
	VFMADD231PS (R11), Y4, Y8
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $8, CX

f32x4by1:
	TESTQ       CX, CX
	JZ          f32x4done
	VMOVSS      (SI), X4
	VFMADD231SS (R8), X4, X10
	VFMADD231SS (R9), X4, X11
	VFMADD231SS (R10), X4, X12
	VFMADD231SS (R11), X4, X13
	ADDQ        $4, SI
	ADDQ        $4, R8
	ADDQ        $4, R9
	ADDQ        $4, R10
	ADDQ        $4, R11
	DECQ        CX
	JMP         f32x4by1

f32x4done:
	MOVQ out+24(FP), DX
	FX4STORE

// func dotF16AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS X2, X2, X2

f16by16:
	CMPQ        CX, $16
	JLT         f16by8
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   (DI), Y6
	VCVTPH2PS   16(DI), Y7
	VFMADD231PS Y6, Y4, Y0
	VFMADD231PS Y7, Y5, Y1
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $16, CX
	JMP         f16by16

f16by8:
	CMPQ        CX, $8
	JLT         f16by1
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   (DI), Y6
	VFMADD231PS Y6, Y4, Y0
	ADDQ        $16, SI
	ADDQ        $16, DI
	SUBQ        $8, CX

f16by1:
	TESTQ CX, CX
	JZ    f16done
	H1((SI), X4)
	H1((DI), X6)
	VFMADD231SS X6, X4, X2
	ADDQ        $2, SI
	ADDQ        $2, DI
	DECQ        CX
	JMP         f16by1

f16done:
	VADDPS Y1, Y0, Y0
	HSUM(Y0, X0, X1)
	VADDSS X2, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotF16x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotF16x4AVX2(SB), NOSPLIT, $0-32
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   0(DX), R8
	MOVQ   8(DX), R9
	MOVQ   16(DX), R10
	MOVQ   24(DX), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS X10, X10, X10
	VXORPS X11, X11, X11
	VXORPS X12, X12, X12
	VXORPS X13, X13, X13

f16x4by16:
	CMPQ        CX, $16
	JLT         f16x4by8
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   (R8), Y14
	VCVTPH2PS   16(R8), Y15
	VFMADD231PS Y14, Y4, Y0
	VFMADD231PS Y15, Y5, Y1
	VCVTPH2PS   (R9), Y14
	VCVTPH2PS   16(R9), Y15
	VFMADD231PS Y14, Y4, Y2
	VFMADD231PS Y15, Y5, Y3
	VCVTPH2PS   (R10), Y14
	VCVTPH2PS   16(R10), Y15
	VFMADD231PS Y14, Y4, Y6
	VFMADD231PS Y15, Y5, Y7
	VCVTPH2PS   (R11), Y14
	VCVTPH2PS   16(R11), Y15
	VFMADD231PS Y14, Y4, Y8
	VFMADD231PS Y15, Y5, Y9
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $16, CX
	JMP         f16x4by16

f16x4by8:
	CMPQ        CX, $8
	JLT         f16x4by1
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   (R8), Y14
	VFMADD231PS Y14, Y4, Y0
	VCVTPH2PS   (R9), Y14
	VFMADD231PS Y14, Y4, Y2
	VCVTPH2PS   (R10), Y14
	VFMADD231PS Y14, Y4, Y6
	VCVTPH2PS   (R11), Y14
	VFMADD231PS Y14, Y4, Y8
	ADDQ        $16, SI
	ADDQ        $16, R8
	ADDQ        $16, R9
	ADDQ        $16, R10
	ADDQ        $16, R11
	SUBQ        $8, CX

f16x4by1:
	TESTQ CX, CX
	JZ    f16x4done
	H1((SI), X4)
	H1((R8), X14)
	VFMADD231SS X14, X4, X10
	H1((R9), X14)
	VFMADD231SS X14, X4, X11
	H1((R10), X14)
	VFMADD231SS X14, X4, X12
	H1((R11), X14)
	VFMADD231SS X14, X4, X13
	ADDQ        $2, SI
	ADDQ        $2, R8
	ADDQ        $2, R9
	ADDQ        $2, R10
	ADDQ        $2, R11
	DECQ        CX
	JMP         f16x4by1

f16x4done:
	MOVQ out+24(FP), DX
	FX4STORE

// ---------------------------------------------------------------------------
// Q4_K and Q6_K weights against Q8_K activations (292-byte blocks: float32
// d, int8 qs[256], int16 bsums[16]). Each super-block's integer sums are
// exact; the float part is acc += float(isum) * (d * dy), then, for Q4_K,
// acc -= float(msum) * (dmin * dy). The scales are unpacked once per
// super-block into the frame, and the quants of each 64 (Q4_K) or 128
// (Q6_K) elements once for all columns.

// func dotQ4_KAVX2(nb int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_KAVX2(SB), $272-28
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0

q4kloop:
	TESTQ CX, CX
	JZ    q4kdone
	DECODEQ4K
	VPXOR Y8, Y8, Y8
	Q4KLOAD(16)
	Q4KCOL(4, 36, 16, 48, DI, Y8)
	Q4KLOAD(48)
	Q4KCOL(68, 100, 80, 112, DI, Y8)
	Q4KLOAD(80)
	Q4KCOL(132, 164, 144, 176, DI, Y8)
	Q4KLOAD(112)
	Q4KCOL(196, 228, 208, 240, DI, Y8)
	Q4KFIN(DI, Y8, Y0)
	ADDQ  $144, SI
	ADDQ  $292, DI
	DECQ  CX
	JMP   q4kloop

q4kdone:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotQ4_Kx4AVX2(nb int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_Kx4AVX2(SB), $272-32
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   0(DX), R8
	MOVQ   8(DX), R9
	MOVQ   16(DX), R10
	MOVQ   24(DX), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q4kx4loop:
	TESTQ CX, CX
	JZ    q4kx4done
	DECODEQ4K
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	Q4KLOAD(16)
	Q4KCOL(4, 36, 16, 48, R8, Y8)
	Q4KCOL(4, 36, 16, 48, R9, Y9)
	Q4KCOL(4, 36, 16, 48, R10, Y10)
	Q4KCOL(4, 36, 16, 48, R11, Y11)
	Q4KLOAD(48)
	Q4KCOL(68, 100, 80, 112, R8, Y8)
	Q4KCOL(68, 100, 80, 112, R9, Y9)
	Q4KCOL(68, 100, 80, 112, R10, Y10)
	Q4KCOL(68, 100, 80, 112, R11, Y11)
	Q4KLOAD(80)
	Q4KCOL(132, 164, 144, 176, R8, Y8)
	Q4KCOL(132, 164, 144, 176, R9, Y9)
	Q4KCOL(132, 164, 144, 176, R10, Y10)
	Q4KCOL(132, 164, 144, 176, R11, Y11)
	Q4KLOAD(112)
	Q4KCOL(196, 228, 208, 240, R8, Y8)
	Q4KCOL(196, 228, 208, 240, R9, Y9)
	Q4KCOL(196, 228, 208, 240, R10, Y10)
	Q4KCOL(196, 228, 208, 240, R11, Y11)
	Q4KFIN(R8, Y8, Y0)
	Q4KFIN(R9, Y9, Y1)
	Q4KFIN(R10, Y10, Y2)
	Q4KFIN(R11, Y11, Y3)
	ADDQ  $144, SI
	ADDQ  $292, R8
	ADDQ  $292, R9
	ADDQ  $292, R10
	ADDQ  $292, R11
	DECQ  CX
	JMP   q4kx4loop

q4kx4done:
	MOVQ out+24(FP), DX
	HSUM(Y0, X0, X4)
	HSUM(Y1, X1, X4)
	HSUM(Y2, X2, X4)
	HSUM(Y3, X3, X4)
	VMOVSS X0, 0(DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	VZEROUPPER
	RET

// func dotQ6_KAVX2(nb int, x, y unsafe.Pointer) float32
TEXT ·dotQ6_KAVX2(SB), $288-28
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0

q6kloop:
	TESTQ CX, CX
	JZ    q6kdone
	DECODEQ6KSCALES
	VPXOR Y10, Y10, Y10
	DECODEQ6KHALF(0, 128)
	Q6KCOL(4, 32, DI, Y10)
	DECODEQ6KHALF(64, 160)
	Q6KCOL(132, 160, DI, Y10)
	Q6KFIN(DI, Y10, Y0)
	ADDQ  $210, SI
	ADDQ  $292, DI
	DECQ  CX
	JMP   q6kloop

q6kdone:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotQ6_Kx4AVX2(nb int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ6_Kx4AVX2(SB), $288-32
	MOVQ   nb+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   0(DX), R8
	MOVQ   8(DX), R9
	MOVQ   16(DX), R10
	MOVQ   24(DX), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q6kx4loop:
	TESTQ CX, CX
	JZ    q6kx4done
	DECODEQ6KSCALES
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	DECODEQ6KHALF(0, 128)
	Q6KCOL(4, 32, R8, Y10)
	Q6KCOL(4, 32, R9, Y11)
	Q6KCOL(4, 32, R10, Y12)
	Q6KCOL(4, 32, R11, Y13)
	DECODEQ6KHALF(64, 160)
	Q6KCOL(132, 160, R8, Y10)
	Q6KCOL(132, 160, R9, Y11)
	Q6KCOL(132, 160, R10, Y12)
	Q6KCOL(132, 160, R11, Y13)
	Q6KFIN(R8, Y10, Y0)
	Q6KFIN(R9, Y11, Y1)
	Q6KFIN(R10, Y12, Y2)
	Q6KFIN(R11, Y13, Y3)
	ADDQ  $210, SI
	ADDQ  $292, R8
	ADDQ  $292, R9
	ADDQ  $292, R10
	ADDQ  $292, R11
	DECQ  CX
	JMP   q6kx4loop

q6kx4done:
	MOVQ out+24(FP), DX
	HSUM(Y0, X0, X4)
	HSUM(Y1, X1, X4)
	HSUM(Y2, X2, X4)
	HSUM(Y3, X3, X4)
	VMOVSS X0, 0(DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	VZEROUPPER
	RET
