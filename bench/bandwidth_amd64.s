//go:build !purego

#include "textflag.h"

// func sumStreamsAVX2(p *uint64, q int) uint64
//
// The wrapping sum of the 8*q words at p, read as eight streams of q words
// (q a multiple of 8, at least 8), 64 bytes of each per step, in 256-bit
// loads: what a decode step's vector kernels issue, where a scalar loop
// issues four times as many loads for the same bytes.
TEXT ·sumStreamsAVX2(SB), NOSPLIT, $0-24
	MOVQ  p+0(FP), SI
	MOVQ  q+8(FP), CX
	SHLQ  $3, CX
	LEAQ  (SI)(CX*1), DI
	LEAQ  (DI)(CX*1), R8
	LEAQ  (R8)(CX*1), R9
	LEAQ  (R9)(CX*1), R10
	LEAQ  (R10)(CX*1), R11
	LEAQ  (R11)(CX*1), R12
	LEAQ  (R12)(CX*1), R13
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	XORQ  AX, AX

loop:
	VPADDQ (SI)(AX*1), Y0, Y0
	VPADDQ 32(SI)(AX*1), Y1, Y1
	VPADDQ (DI)(AX*1), Y2, Y2
	VPADDQ 32(DI)(AX*1), Y3, Y3
	VPADDQ (R8)(AX*1), Y0, Y0
	VPADDQ 32(R8)(AX*1), Y1, Y1
	VPADDQ (R9)(AX*1), Y2, Y2
	VPADDQ 32(R9)(AX*1), Y3, Y3
	VPADDQ (R10)(AX*1), Y0, Y0
	VPADDQ 32(R10)(AX*1), Y1, Y1
	VPADDQ (R11)(AX*1), Y2, Y2
	VPADDQ 32(R11)(AX*1), Y3, Y3
	VPADDQ (R12)(AX*1), Y0, Y0
	VPADDQ 32(R12)(AX*1), Y1, Y1
	VPADDQ (R13)(AX*1), Y2, Y2
	VPADDQ 32(R13)(AX*1), Y3, Y3
	ADDQ   $64, AX
	CMPQ   AX, CX
	JB     loop

	VPADDQ       Y1, Y0, Y0
	VPADDQ       Y3, Y2, Y2
	VPADDQ       Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDQ       X1, X0, X0
	VMOVQ        X0, AX
	VZEROUPPER
	MOVQ         AX, ret+16(FP)
	RET
