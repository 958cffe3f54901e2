//go:build !purego

#include "dot_amd64.h"

// ---------------------------------------------------------------------------
// F32 and F16 (against F16 activations): two accumulators over 16 elements
// per step, then one 8-element step, then single elements in a scalar
// accumulator; the sum is (acc0+acc1) reduced, plus the scalar part.

// F16 and BF16 (each against its own type) share two body macros: CVT
// converts eight halves at a memory operand to floats in a Y register,
// CVT1 one half into the low lane of an X register (using AX).

#define CVTF16(mem, Y) VCVTPH2PS mem, Y

#define CVTBF16(mem, Y) \
	VPMOVZXWD mem, Y; \
	VPSLLD    $16, Y, Y

#define CVT1BF16(mem, X) \
	MOVWLZX mem, AX; \
	SHLL    $16, AX; \
	VMOVD   AX, X

#define HDOT1(CVT, CVT1) \
	MOVQ   n+0(FP), CX; \
	MOVQ   x+8(FP), SI; \
	MOVQ   y+16(FP), DI; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS X2, X2, X2; \
by16: \
	CMPQ        CX, $16; \
	JLT         by8; \
	CVT((SI), Y4); \
	CVT(16(SI), Y5); \
	CVT((DI), Y6); \
	CVT(16(DI), Y7); \
	VFMADD231PS Y6, Y4, Y0; \
	VFMADD231PS Y7, Y5, Y1; \
	ADDQ        $32, SI; \
	ADDQ        $32, DI; \
	SUBQ        $16, CX; \
	JMP         by16; \
by8: \
	CMPQ        CX, $8; \
	JLT         by1; \
	CVT((SI), Y4); \
	CVT((DI), Y6); \
	VFMADD231PS Y6, Y4, Y0; \
	ADDQ        $16, SI; \
	ADDQ        $16, DI; \
	SUBQ        $8, CX; \
by1: \
	TESTQ CX, CX; \
	JZ    done; \
	CVT1((SI), X4); \
	CVT1((DI), X6); \
	VFMADD231SS X6, X4, X2; \
	ADDQ        $2, SI; \
	ADDQ        $2, DI; \
	DECQ        CX; \
	JMP         by1; \
done: \
	VADDPS Y1, Y0, Y0; \
	HSUM(Y0, X0, X1); \
	VADDSS X2, X0, X0; \
	VMOVSS X0, ret+24(FP); \
	VZEROUPPER; \
	RET

#define HDOT4(CVT, CVT1) \
	X4BEGIN;                      \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS X10, X10, X10; \
	VXORPS X11, X11, X11; \
	VXORPS X12, X12, X12; \
	VXORPS X13, X13, X13; \
by16: \
	CMPQ        CX, $16; \
	JLT         by8; \
	CVT((SI), Y4); \
	CVT(16(SI), Y5); \
	CVT((R8), Y14); \
	CVT(16(R8), Y15); \
	VFMADD231PS Y14, Y4, Y0; \
	VFMADD231PS Y15, Y5, Y1; \
	CVT((R9), Y14); \
	CVT(16(R9), Y15); \
	VFMADD231PS Y14, Y4, Y2; \
	VFMADD231PS Y15, Y5, Y3; \
	CVT((R10), Y14); \
	CVT(16(R10), Y15); \
	VFMADD231PS Y14, Y4, Y6; \
	VFMADD231PS Y15, Y5, Y7; \
	CVT((R11), Y14); \
	CVT(16(R11), Y15); \
	VFMADD231PS Y14, Y4, Y8; \
	VFMADD231PS Y15, Y5, Y9; \
	ADDQ        $32, SI; \
	ADDQ        $32, R8; \
	ADDQ        $32, R9; \
	ADDQ        $32, R10; \
	ADDQ        $32, R11; \
	SUBQ        $16, CX; \
	JMP         by16; \
by8: \
	CMPQ        CX, $8; \
	JLT         by1; \
	CVT((SI), Y4); \
	CVT((R8), Y14); \
	VFMADD231PS Y14, Y4, Y0; \
	CVT((R9), Y14); \
	VFMADD231PS Y14, Y4, Y2; \
	CVT((R10), Y14); \
	VFMADD231PS Y14, Y4, Y6; \
	CVT((R11), Y14); \
	VFMADD231PS Y14, Y4, Y8; \
	ADDQ        $16, SI; \
	ADDQ        $16, R8; \
	ADDQ        $16, R9; \
	ADDQ        $16, R10; \
	ADDQ        $16, R11; \
	SUBQ        $8, CX; \
by1: \
	TESTQ CX, CX; \
	JZ    done; \
	CVT1((SI), X4); \
	CVT1((R8), X14); \
	VFMADD231SS X14, X4, X10; \
	CVT1((R9), X14); \
	VFMADD231SS X14, X4, X11; \
	CVT1((R10), X14); \
	VFMADD231SS X14, X4, X12; \
	CVT1((R11), X14); \
	VFMADD231SS X14, X4, X13; \
	ADDQ        $2, SI; \
	ADDQ        $2, R8; \
	ADDQ        $2, R9; \
	ADDQ        $2, R10; \
	ADDQ        $2, R11; \
	DECQ        CX; \
	JMP         by1; \
done: \
	MOVQ out+24(FP), DX; \
	FX4STORE

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
	X4BEGIN
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
	HDOT1(CVTF16, H1)

// func dotF16x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotF16x4AVX2(SB), NOSPLIT, $0-32
	HDOT4(CVTF16, H1)

// func dotBF16AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-28
	HDOT1(CVTBF16, CVT1BF16)

// func dotBF16x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotBF16x4AVX2(SB), NOSPLIT, $0-32
	HDOT4(CVTBF16, CVT1BF16)
