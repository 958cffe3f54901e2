//go:build !purego

#include "textflag.h"

// AVX2 kernels of rope (rope.go): the rotation of a row's pairs.

// The rotations as ggml's haswell build computes them (rotate_pairs in
// the upstream ggml backend's ops.cpp, 2025, compiled with FMA
// contraction, checked against the live library by TestVecOpsRope): in
// both modes x_a's product is fused into each sum and x_b's rounded
// first, y_a = x_a*cos - (x_b*sin), y_b = x_a*sin + (x_b*cos). Both loops
// take any number of pairs.

// func ropeNeoxAVX2(y, x, cs *float32, half int)
// Rotates the pairs (x[i], x[half+i]) by cos cs[2i], sin cs[2i+1] into y
// (which may be x).
TEXT ·ropeNeoxAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ cs+16(FP), DX
	MOVQ half+24(FP), CX
	LEAQ (CX*4), BX // the second half's offset

rnloop:
	CMPQ CX, $8
	JL   rnone
	// Eight (cos, sin) pairs into eight cosines and eight sines.
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VPERMPD $0xd8, Y2, Y2
	VSHUFPS $0xdd, Y1, Y0, Y3
	VPERMPD $0xd8, Y3, Y3
	VMOVUPS (SI), Y4
	VMOVUPS (SI)(BX*1), Y5
	VMULPS       Y3, Y5, Y7
	VFMSUB231PS  Y2, Y4, Y7
	VMULPS       Y2, Y5, Y9
	VFMADD231PS  Y3, Y4, Y9
	VMOVUPS Y7, (DI)
	VMOVUPS Y9, (DI)(BX*1)
	ADDQ $64, DX
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  rnloop

rnone:
	TESTQ CX, CX
	JE    rndone
	VMOVSS      (DX), X2
	VMOVSS      4(DX), X3
	VMOVSS      (SI), X4
	VMOVSS      (SI)(BX*1), X5
	VMULSS      X3, X5, X7
	VFMSUB231SS X2, X4, X7
	VMULSS      X2, X5, X9
	VFMADD231SS X3, X4, X9
	VMOVSS      X7, (DI)
	VMOVSS      X9, (DI)(BX*1)
	ADDQ $8, DX
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  rnone

rndone:
	VZEROUPPER
	RET

// func ropeNormalAVX2(y, x, cs *float32, n int)
// Rotates the adjacent pairs (x[2i], x[2i+1]) by cos cs[2i], sin cs[2i+1]
// into y (which may be x), for n (values, twice the pairs) even.
TEXT ·ropeNormalAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ cs+16(FP), DX
	MOVQ n+24(FP), CX

rrloop:
	CMPQ CX, $8
	JL   rrone
	VMOVUPS        (DX), Y0 // (cos, sin) pairs
	VPERMILPS      $0xb1, Y0, Y1 // (sin, cos)
	VMOVUPS        (SI), Y3
	VMOVSLDUP      Y3, Y4 // (x_a, x_a)
	VMOVSHDUP      Y3, Y5 // (x_b, x_b)
	VMULPS         Y1, Y5, Y6 // (x_b*sin, x_b*cos), rounded
	VFMADDSUB231PS Y0, Y4, Y6 // x_a*cos - that, x_a*sin + that
	VMOVUPS        Y6, (DI)
	ADDQ $32, DX
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  rrloop

rrone:
	CMPQ CX, $2
	JL   rrdone
	VMOVSS      (DX), X2
	VMOVSS      4(DX), X3
	VMOVSS      (SI), X4
	VMOVSS      4(SI), X5
	VMULSS      X3, X5, X7
	VFMSUB231SS X2, X4, X7
	VMULSS      X2, X5, X9
	VFMADD231SS X3, X4, X9
	VMOVSS      X7, (DI)
	VMOVSS      X9, 4(DI)
	ADDQ $8, DX
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $2, CX
	JMP  rrone

rrdone:
	VZEROUPPER
	RET
