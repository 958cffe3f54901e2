//go:build !purego

#include "textflag.h"
#include "avx512_amd64.h"

// F32 products in the orders of ggml's sapphirerapids build (AVX-512F,
// GCC 11; upstream ggml backend, vec.cpp, simd-mappings.h and
// llamafile/sgemm.cpp, 2025, read against the build's disassembly): the
// amx level's F32 vec_dot and register tiles. Both end in the build's
// _mm512_reduce_add_ps (R16).

// ZERO16 clears Z0..Z15.
#define ZERO16 \
	VXORPS Z0, Z0, Z0; \
	VXORPS Z1, Z1, Z1; \
	VXORPS Z2, Z2, Z2; \
	VXORPS Z3, Z3, Z3; \
	VXORPS Z4, Z4, Z4; \
	VXORPS Z5, Z5, Z5; \
	VXORPS Z6, Z6, Z6; \
	VXORPS Z7, Z7, Z7; \
	VXORPS Z8, Z8, Z8; \
	VXORPS Z9, Z9, Z9; \
	VXORPS Z10, Z10, Z10; \
	VXORPS Z11, Z11, Z11; \
	VXORPS Z12, Z12, Z12; \
	VXORPS Z13, Z13, Z13; \
	VXORPS Z14, Z14, Z14; \
	VXORPS Z15, Z15, Z15

// ---------------------------------------------------------------------------
// ggml_vec_dot_f32: four accumulators of 16 lanes over steps of 64
// elements, reduced (0+2) + (1+3), then R16; then the elements past the
// last whole step into that float sum one by one, as GCC compiles the
// build's leftover loop (sumf += x[i]*y[i]): in groups of 16 and then one
// of 8 the products are rounded in a vector and added in order, and the
// last 0-7 (n mod 8) are fused into the sum.

// F32FMA64 adds the products of X0..X3 with the 64 floats at y+AX into
// A0..A3.
#define F32FMA64(y, X0, X1, X2, X3, A0, A1, A2, A3) \
	VFMADD231PS (y)(AX*1), X0, A0;    \
	VFMADD231PS 64(y)(AX*1), X1, A1;  \
	VFMADD231PS 128(y)(AX*1), X2, A2; \
	VFMADD231PS 192(y)(AX*1), X3, A3

// F32LOAD64 loads the 64 floats at x+AX into X0..X3.
#define F32LOAD64(x, X0, X1, X2, X3) \
	VMOVUPS (x)(AX*1), X0;    \
	VMOVUPS 64(x)(AX*1), X1;  \
	VMOVUPS 128(x)(AX*1), X2; \
	VMOVUPS 192(x)(AX*1), X3

// F32FOLD4 adds A2 into A0 and A3 into A1, then A1 into A0.
#define F32FOLD4(A0, A1, A2, A3) \
	VADDPS A2, A0, A0; \
	VADDPS A3, A1, A1; \
	VADDPS A1, A0, A0

// F32TAIL adds to the low lane of S the products of x and y from byte AX
// to CX as the build's leftover loop does, using T and R8 (AX ends at CX).
#define F32TAIL(x, y, S, T, rounded, fused, done) \
	MOVQ CX, R8;   \
	SUBQ AX, R8;   \
	ANDQ $-32, R8; \
	ADDQ AX, R8;   \
rounded:           \
	CMPQ   AX, R8;         \
	JGE    fused;          \
	VMOVSS (x)(AX*1), T;   \
	VMULSS (y)(AX*1), T, T; \
	VADDSS S, T, S;        \
	ADDQ   $4, AX;         \
	JMP    rounded;        \
fused:                     \
	CMPQ        AX, CX;        \
	JGE         done;          \
	VMOVSS      (x)(AX*1), T;  \
	VFMADD231SS (y)(AX*1), T, S; \
	ADDQ        $4, AX;        \
	JMP         fused;         \
done:

// The sgemm tiles' macros (the tiles follow the vec_dot kernels).

// F32ROWS4 points SI, DI, R12 and R13 at rows 0-3 of x and CX at the
// steps' bytes.
#define F32ROWS4 \
	MOVQ steps+0(FP), CX;   \
	SHLQ $6, CX;            \
	MOVQ x+8(FP), SI;       \
	MOVQ stride+16(FP), BX; \
	LEAQ (SI)(BX*1), DI;    \
	LEAQ (DI)(BX*1), R12;   \
	LEAQ (R12)(BX*1), R13;  \
	XORQ AX, AX

// F32LOAD4 loads the step of rows 0-3 into Z16..Z19.
#define F32LOAD4 \
	VMOVUPS (SI)(AX*1), Z16;  \
	VMOVUPS (DI)(AX*1), Z17;  \
	VMOVUPS (R12)(AX*1), Z18; \
	VMOVUPS (R13)(AX*1), Z19

// F32COL4 adds the step of the column at YP times rows 0-3 into A0..A3.
#define F32COL4(YP, A0, A1, A2, A3) \
	VMOVUPS     (YP)(AX*1), Z20; \
	VFMADD231PS Z20, Z16, A0;    \
	VFMADD231PS Z20, Z17, A1;    \
	VFMADD231PS Z20, Z18, A2;    \
	VFMADD231PS Z20, Z19, A3

// F32STORE4 writes the sums of four accumulators (Z, Y, X names of each)
// at 0, 4, 8 and 12 of OUT.
#define F32STORE4(OUT, Z0, Y0, X0, Z1, Y1, X1, Z2, Y2, X2, Z3, Y3, X3) \
	R16(Z0, Y0, X0, Y16, X16); \
	VMOVSS X0, 0(OUT);         \
	R16(Z1, Y1, X1, Y16, X16); \
	VMOVSS X1, 4(OUT);         \
	R16(Z2, Y2, X2, Y16, X16); \
	VMOVSS X2, 8(OUT);         \
	R16(Z3, Y3, X3, Y16, X16); \
	VMOVSS X3, 12(OUT)

// func dotF32AVX512(n int, x, y unsafe.Pointer) float32
TEXT ·dotF32AVX512(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	MOVQ   CX, BX
	ANDQ   $-64, BX
	SHLQ   $2, BX
	SHLQ   $2, CX
	XORQ   AX, AX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

d64:
	CMPQ AX, BX
	JGE  dreduce
	F32LOAD64(SI, Z4, Z5, Z6, Z7)
	F32FMA64(DI, Z4, Z5, Z6, Z7, Z0, Z1, Z2, Z3)
	ADDQ $256, AX
	JMP  d64

dreduce:
	F32FOLD4(Z0, Z1, Z2, Z3)
	R16(Z0, Y0, X0, Y4, X4)
	F32TAIL(SI, DI, X0, X4, drounded, dfused, ddone)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotF32x4AVX512(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
//
// dotF32AVX512 of x with each y, the four at once (16 accumulators).
TEXT ·dotF32x4AVX512(SB), NOSPLIT, $0-32
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   0(DX), R9
	MOVQ   8(DX), R10
	MOVQ   16(DX), R11
	MOVQ   24(DX), R12
	MOVQ   CX, BX
	ANDQ   $-64, BX
	SHLQ   $2, BX
	SHLQ   $2, CX
	XORQ   AX, AX
	ZERO16

q64:
	CMPQ AX, BX
	JGE  qreduce
	F32LOAD64(SI, Z16, Z17, Z18, Z19)
	F32FMA64(R9, Z16, Z17, Z18, Z19, Z0, Z1, Z2, Z3)
	F32FMA64(R10, Z16, Z17, Z18, Z19, Z4, Z5, Z6, Z7)
	F32FMA64(R11, Z16, Z17, Z18, Z19, Z8, Z9, Z10, Z11)
	F32FMA64(R12, Z16, Z17, Z18, Z19, Z12, Z13, Z14, Z15)
	ADDQ $256, AX
	JMP  q64

qreduce:
	F32FOLD4(Z0, Z1, Z2, Z3)
	F32FOLD4(Z4, Z5, Z6, Z7)
	F32FOLD4(Z8, Z9, Z10, Z11)
	F32FOLD4(Z12, Z13, Z14, Z15)
	R16(Z0, Y0, X0, Y16, X16)
	R16(Z4, Y4, X4, Y16, X16)
	R16(Z8, Y8, X8, Y16, X16)
	R16(Z12, Y12, X12, Y16, X16)
	MOVQ AX, DX
	F32TAIL(SI, R9, X0, X16, q0rounded, q0fused, q0done)
	MOVQ DX, AX
	F32TAIL(SI, R10, X4, X16, q1rounded, q1fused, q1done)
	MOVQ DX, AX
	F32TAIL(SI, R11, X8, X16, q2rounded, q2fused, q2done)
	MOVQ DX, AX
	F32TAIL(SI, R12, X12, X16, q3rounded, q3fused, q3done)
	MOVQ   out+24(FP), DI
	VMOVSS X0, 0(DI)
	VMOVSS X4, 4(DI)
	VMOVSS X8, 8(DI)
	VMOVSS X12, 12(DI)
	VZEROUPPER
	RET

// ---------------------------------------------------------------------------
// llamafile's sgemm (tinyBLAS<16, __m512>): each output one accumulator of
// 16 lanes, fused over the steps of 16 elements in order, then R16. The
// tile is four rows by four columns; tileCol four rows by one; one a row
// by a column, each output with the same bits.

// func gemmF32x4x4AVX512(steps int, x unsafe.Pointer, stride uintptr, y, out *[4]unsafe.Pointer)
TEXT ·gemmF32x4x4AVX512(SB), NOSPLIT, $0-40
	F32ROWS4
	MOVQ   y+24(FP), DX
	MOVQ   0(DX), R8
	MOVQ   8(DX), R9
	MOVQ   16(DX), R10
	MOVQ   24(DX), R11
	ZERO16
	TESTQ  CX, CX
	JZ     t44done

t44loop:
	F32LOAD4
	F32COL4(R8, Z0, Z1, Z2, Z3)
	F32COL4(R9, Z4, Z5, Z6, Z7)
	F32COL4(R10, Z8, Z9, Z10, Z11)
	F32COL4(R11, Z12, Z13, Z14, Z15)
	ADDQ $64, AX
	CMPQ AX, CX
	JLT  t44loop

t44done:
	MOVQ out+32(FP), DX
	MOVQ 0(DX), BX
	F32STORE4(BX, Z0, Y0, X0, Z1, Y1, X1, Z2, Y2, X2, Z3, Y3, X3)
	MOVQ 8(DX), BX
	F32STORE4(BX, Z4, Y4, X4, Z5, Y5, X5, Z6, Y6, X6, Z7, Y7, X7)
	MOVQ 16(DX), BX
	F32STORE4(BX, Z8, Y8, X8, Z9, Y9, X9, Z10, Y10, X10, Z11, Y11, X11)
	MOVQ 24(DX), BX
	F32STORE4(BX, Z12, Y12, X12, Z13, Y13, X13, Z14, Y14, X14, Z15, Y15, X15)
	VZEROUPPER
	RET

// func gemmF32x4x1AVX512(steps int, x unsafe.Pointer, stride uintptr, y, out unsafe.Pointer)
TEXT ·gemmF32x4x1AVX512(SB), NOSPLIT, $0-40
	F32ROWS4
	MOVQ   y+24(FP), R8
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	TESTQ  CX, CX
	JZ     t41done

t41loop:
	F32LOAD4
	F32COL4(R8, Z0, Z1, Z2, Z3)
	ADDQ $64, AX
	CMPQ AX, CX
	JLT  t41loop

t41done:
	MOVQ out+32(FP), BX
	F32STORE4(BX, Z0, Y0, X0, Z1, Y1, X1, Z2, Y2, X2, Z3, Y3, X3)
	VZEROUPPER
	RET

// func gemmF32x1x1AVX512(steps int, x, y, out unsafe.Pointer)
TEXT ·gemmF32x1x1AVX512(SB), NOSPLIT, $0-32
	MOVQ   steps+0(FP), CX
	SHLQ   $6, CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), R8
	XORQ   AX, AX
	VXORPS Z0, Z0, Z0
	TESTQ  CX, CX
	JZ     t11done

t11loop:
	VMOVUPS     (SI)(AX*1), Z16
	VFMADD231PS (R8)(AX*1), Z16, Z0
	ADDQ        $64, AX
	CMPQ        AX, CX
	JLT         t11loop

t11done:
	MOVQ   out+24(FP), BX
	R16(Z0, Y0, X0, Y16, X16)
	VMOVSS X0, 0(BX)
	VZEROUPPER
	RET
