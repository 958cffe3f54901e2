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

// H1 converts the half at mem to a float in the low lane of X.
#define H1(mem, X) \
	MOVWLZX   mem, AX; \
	VMOVD     AX, X;   \
	VCVTPH2PS X, X

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
