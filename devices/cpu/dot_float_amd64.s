//go:build !purego

#include "dot_amd64.h"

// ---------------------------------------------------------------------------
// F16 (against F16 activations) and BF16: two accumulators over 16
// elements per step, then one 8-element step, then single elements in a
// scalar accumulator; the sum is (acc0+acc1) reduced, plus the scalar part.

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

// F32 against F32 in ggml_vec_dot_f32's order on AVX (upstream ggml
// backend, vec.cpp and simd-mappings.h, 2025), which the haswell build
// computes every F32 product by that llamafile's sgemm does not take:
// four accumulators over steps of 32 elements, reduced (0+2)+(1+3), the
// halves added and two horizontal adds; then the elements past the last
// whole step, one by one into that sum: as GCC compiles the haswell
// build's loop (sumf += x[i]*y[i]), groups of four are multiplied in one
// vector and their rounded products added in order, and the last one to
// three products are fused into the sum (measured against the build:
// TestMulMatF32MatchesGGML). F32REDUCE does the reduction of A0..A3
// into the low lane of X0 (A0's low half), using Xt.
#define F32REDUCE(A0, A1, A2, A3, X0, Xt) \
	VADDPS       A2, A0, A0; \
	VADDPS       A3, A1, A1; \
	VADDPS       A1, A0, A0; \
	VEXTRACTF128 $1, A0, Xt; \
	VADDPS       Xt, X0, X0; \
	VHADDPS      X0, X0, X0; \
	VHADDPS      X0, X0, X0

// F32ADD4 adds to the low lane of S the four rounded products of the
// floats at x and y (offset AX), in order, using T.
#define F32ADD4(x, y, S, T) \
	VMOVSS (x)(AX*1), T;      \
	VMULSS (y)(AX*1), T, T;   \
	VADDSS T, S, S;           \
	VMOVSS 4(x)(AX*1), T;     \
	VMULSS 4(y)(AX*1), T, T;  \
	VADDSS T, S, S;           \
	VMOVSS 8(x)(AX*1), T;     \
	VMULSS 8(y)(AX*1), T, T;  \
	VADDSS T, S, S;           \
	VMOVSS 12(x)(AX*1), T;    \
	VMULSS 12(y)(AX*1), T, T; \
	VADDSS T, S, S

// func dotF32AVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	MOVQ   CX, BX
	ANDQ   $-32, BX
	SHLQ   $2, BX
	SHLQ   $2, CX
	XORQ   AX, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f32by32:
	CMPQ        AX, BX
	JGE         f32reduce
	VMOVUPS     (SI)(AX*1), Y4
	VMOVUPS     32(SI)(AX*1), Y5
	VMOVUPS     64(SI)(AX*1), Y6
	VMOVUPS     96(SI)(AX*1), Y7
	VFMADD231PS (DI)(AX*1), Y4, Y0
	VFMADD231PS 32(DI)(AX*1), Y5, Y1
	VFMADD231PS 64(DI)(AX*1), Y6, Y2
	VFMADD231PS 96(DI)(AX*1), Y7, Y3
	ADDQ        $128, AX
	JMP         f32by32

f32reduce:
	F32REDUCE(Y0, Y1, Y2, Y3, X0, X4)

f32by4:
	LEAQ   16(AX), R8
	CMPQ   R8, CX
	JGT    f32by1
	F32ADD4(SI, DI, X0, X4)
	ADDQ   $16, AX
	JMP    f32by4

f32by1:
	CMPQ        AX, CX
	JGE         f32done
	VMOVSS      (SI)(AX*1), X4
	VFMADD231SS (DI)(AX*1), X4, X0
	ADDQ        $4, AX
	JMP         f32by1

f32done:
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// F32X4 is dotF32AVX2 of the floats at SI with the rows at the four
// pointers at DX, two rows at a time (their eight accumulators and x's
// register are all sixteen can hold with the loads), into the four floats
// at DI. CX is n*4, BX (n&^31)*4; it moves DX and DI and uses AX, R8-R10,
// R12 and Y0-Y8.
#define F32X4 \
	MOVQ $2, R12; \
f32x4pair: \
	MOVQ   0(DX), R8; \
	MOVQ   8(DX), R9; \
	XORQ   AX, AX; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
f32x4by32: \
	CMPQ        AX, BX; \
	JGE         f32x4reduce; \
	VMOVUPS     (SI)(AX*1), Y8; \
	VFMADD231PS (R8)(AX*1), Y8, Y0; \
	VFMADD231PS (R9)(AX*1), Y8, Y4; \
	VMOVUPS     32(SI)(AX*1), Y8; \
	VFMADD231PS 32(R8)(AX*1), Y8, Y1; \
	VFMADD231PS 32(R9)(AX*1), Y8, Y5; \
	VMOVUPS     64(SI)(AX*1), Y8; \
	VFMADD231PS 64(R8)(AX*1), Y8, Y2; \
	VFMADD231PS 64(R9)(AX*1), Y8, Y6; \
	VMOVUPS     96(SI)(AX*1), Y8; \
	VFMADD231PS 96(R8)(AX*1), Y8, Y3; \
	VFMADD231PS 96(R9)(AX*1), Y8, Y7; \
	ADDQ        $128, AX; \
	JMP         f32x4by32; \
f32x4reduce: \
	F32REDUCE(Y0, Y1, Y2, Y3, X0, X8); \
	F32REDUCE(Y4, Y5, Y6, Y7, X4, X8); \
f32x4by4: \
	LEAQ    16(AX), R10; \
	CMPQ    R10, CX; \
	JGT     f32x4by1; \
	F32ADD4(SI, R8, X0, X8); \
	F32ADD4(SI, R9, X4, X8); \
	ADDQ    $16, AX; \
	JMP     f32x4by4; \
f32x4by1: \
	CMPQ        AX, CX; \
	JGE         f32x4store; \
	VMOVSS      (SI)(AX*1), X8; \
	VFMADD231SS (R8)(AX*1), X8, X0; \
	VFMADD231SS (R9)(AX*1), X8, X4; \
	ADDQ        $4, AX; \
	JMP         f32x4by1; \
f32x4store: \
	VMOVSS X0, 0(DI); \
	VMOVSS X4, 4(DI); \
	ADDQ   $16, DX; \
	ADDQ   $8, DI; \
	DECQ   R12; \
	JNZ    f32x4pair

// func dotF32x4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotF32x4AVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ out+24(FP), DI
	MOVQ CX, BX
	ANDQ $-32, BX
	SHLQ $2, BX
	SHLQ $2, CX
	F32X4
	VZEROUPPER
	RET

// func dotF32RowsAVX2(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
//
// The four-row walk of rows4 (traits_amd64.go) for F32: group g is rows
// g, g+q, g+2q, g+3q (x + g*stride + j*gap), each F32X4 against the
// column y, out[g + j*q] (ogap = 4q bytes); dy is not used. One call for
// all the groups: a one-token step's attention (64-float rows of the K
// cache, a call per four) spent a tenth of its time in the Go loop alone.
TEXT ·dotF32RowsAVX2(SB), NOSPLIT, $48-72
	MOVQ n+0(FP), CX
	MOVQ CX, BX
	ANDQ $-32, BX
	SHLQ $2, BX
	SHLQ $2, CX
	MOVQ y+40(FP), SI
	MOVQ x+8(FP), R11
	MOVQ out+56(FP), R14

f32rowsgroup:
	MOVQ gap+24(FP), R13
	MOVQ R11, p0-48(SP)
	LEAQ (R11)(R13*1), AX
	MOVQ AX, p1-40(SP)
	LEAQ (AX)(R13*1), AX
	MOVQ AX, p2-32(SP)
	LEAQ (AX)(R13*1), AX
	MOVQ AX, p3-24(SP)
	LEAQ p0-48(SP), DX
	LEAQ o0-16(SP), DI
	F32X4
	MOVQ ogap+64(FP), R13
	MOVL o0-16(SP), AX
	MOVL AX, (R14)
	MOVL o1-12(SP), AX
	MOVL AX, (R14)(R13*1)
	MOVL o2-8(SP), AX
	MOVL AX, (R14)(R13*2)
	LEAQ (R14)(R13*2), R8
	MOVL o3-4(SP), AX
	MOVL AX, (R8)(R13*1)
	ADDQ $4, R14
	ADDQ stride+16(FP), R11
	DECQ ngroups+32(FP)
	JNZ  f32rowsgroup
	VZEROUPPER
	RET

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
