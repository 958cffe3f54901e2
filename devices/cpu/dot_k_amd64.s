//go:build !purego

#include "dot_amd64.h"

// ---------------------------------------------------------------------------
// Q4_K and Q6_K weights against Q8_K activations (292-byte blocks: float32
// d, int8 qs[256], int16 bsums[16]). Each super-block's integer sums are
// exact; the float part is acc += float(isum) * (d * dy), then, for Q4_K,
// acc -= float(msum) * (dmin * dy). The scales are unpacked once per
// super-block into the frame, and the quants of each 64 (Q4_K) or 128
// (Q6_K) elements once for all columns.

// func dotQ4_KAVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ4_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0

q4kloop:
	TESTQ CX, CX
	JZ    q4kdone
	DECODEQ4K
	VPXOR Y8, Y8, Y8
	Q4KLOAD(16, 0, 32)
	Q4KCOL(4, 36, DI, Y8)
	Q4KLOAD(48, 64, 96)
	Q4KCOL(68, 100, DI, Y8)
	Q4KLOAD(80, 128, 160)
	Q4KCOL(132, 164, DI, Y8)
	Q4KLOAD(112, 192, 224)
	Q4KCOL(196, 228, DI, Y8)
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

// func dotQ4_Kx4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ4_Kx4AVX2(SB), NOSPLIT, $0-32
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

q4kx4loop:
	TESTQ CX, CX
	JZ    q4kx4done
	DECODEQ4K
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	Q4KLOAD(16, 0, 32)
	Q4KCOL(4, 36, R8, Y8)
	Q4KCOL(4, 36, R9, Y9)
	Q4KCOL(4, 36, R10, Y10)
	Q4KCOL(4, 36, R11, Y11)
	Q4KLOAD(48, 64, 96)
	Q4KCOL(68, 100, R8, Y8)
	Q4KCOL(68, 100, R9, Y9)
	Q4KCOL(68, 100, R10, Y10)
	Q4KCOL(68, 100, R11, Y11)
	Q4KLOAD(80, 128, 160)
	Q4KCOL(132, 164, R8, Y8)
	Q4KCOL(132, 164, R9, Y9)
	Q4KCOL(132, 164, R10, Y10)
	Q4KCOL(132, 164, R11, Y11)
	Q4KLOAD(112, 192, 224)
	Q4KCOL(196, 228, R8, Y8)
	Q4KCOL(196, 228, R9, Y9)
	Q4KCOL(196, 228, R10, Y10)
	Q4KCOL(196, 228, R11, Y11)
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

// func dotQ6_KAVX2(n int, x, y unsafe.Pointer) float32
TEXT ·dotQ6_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0

q6kloop:
	TESTQ CX, CX
	JZ    q6kdone
	Q6KSCALES
	VPXOR Y10, Y10, Y10
	DECODEQ6KHALF(0, 128)
	Q6KSTEP1(4, 0, Y8)
	Q6KSTEP1(36, 16, Y9)
	Q6KSTEP1(68, 32, Y4)
	Q6KSTEP1(100, 48, Y5)
	DECODEQ6KHALF(64, 160)
	Q6KSTEP1(132, 64, Y8)
	Q6KSTEP1(164, 80, Y9)
	Q6KSTEP1(196, 96, Y4)
	Q6KSTEP1(228, 112, Y5)
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

// func dotQ6_Kx4AVX2(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
TEXT ·dotQ6_Kx4AVX2(SB), NOSPLIT, $256-32
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

q6kx4loop:
	TESTQ CX, CX
	JZ    q6kx4done
	Q6KSCALES
	Q6KPAIRS
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	DECODEQ6KHALF(0, 128)
	Q6KCOL(4, 0, R8, Y10)
	Q6KCOL(4, 0, R9, Y11)
	Q6KCOL(4, 0, R10, Y12)
	Q6KCOL(4, 0, R11, Y13)
	DECODEQ6KHALF(64, 160)
	Q6KCOL(132, 128, R8, Y10)
	Q6KCOL(132, 128, R9, Y11)
	Q6KCOL(132, 128, R10, Y12)
	Q6KCOL(132, 128, R11, Y13)
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
