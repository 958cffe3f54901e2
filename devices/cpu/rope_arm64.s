//go:build !purego

#include "vec_arm64.h"

// NEON kernels of rope (rope.go): the rotation of a row's pairs, as the
// portable Go code computes it: every product rounded before the sum
// that takes it (FMUL, then FADD or FSUB; never FMLA or FMLS, which the
// portable code's conversions rule out).

// ROTATE: V4 = x_a*cos - x_b*sin and V5 = x_a*sin + x_b*cos from x_a in
// V0, x_b in V1, cos in V2 and sin in V3, every product rounded before the
// subtraction or addition, as ropeRotate computes them. It uses V6.
#define ROTATE \
	FMUL4S(2, 0, 4); \
	FMUL4S(3, 1, 6); \
	FSUB4S(6, 4, 4); \
	FMUL4S(3, 0, 5); \
	FMUL4S(2, 1, 6); \
	FADD4S(6, 5, 5)

// func ropeNeoxNEON(y, x, cs *float32, half int)
// Rotates the pairs (x[i], x[half+i]) by cos cs[2i], sin cs[2i+1] into y
// (which may be x), for the pairs up to the last multiple of 4 below half.
TEXT ·ropeNeoxNEON(SB), NOSPLIT, $0-32
	MOVD y+0(FP), R0
	MOVD x+8(FP), R1
	MOVD cs+16(FP), R2
	MOVD half+24(FP), R3
	ADD  R3<<2, R1, R5 // the second halves
	ADD  R3<<2, R0, R6

rnloop:
	CMP    $4, R3
	BLT    rndone
	VLD1.P 16(R1), [V0.S4]
	VLD1.P 16(R5), [V1.S4]
	VLD2.P 32(R2), [V2.S4, V3.S4]
	ROTATE
	VST1.P [V4.S4], 16(R0)
	VST1.P [V5.S4], 16(R6)
	SUB    $4, R3
	B      rnloop

rndone:
	RET

// func ropeNormalNEON(y, x, cs *float32, n int)
// Rotates the adjacent pairs (x[2i], x[2i+1]) by cos cs[2i], sin cs[2i+1]
// into y (which may be x), for n (values, twice the pairs) a multiple of
// 8: y[2i] = x[2i]*cos - x[2i+1]*sin, y[2i+1] = x[2i]*sin + x[2i+1]*cos.
TEXT ·ropeNormalNEON(SB), NOSPLIT, $0-32
	MOVD y+0(FP), R0
	MOVD x+8(FP), R1
	MOVD cs+16(FP), R2
	MOVD n+24(FP), R3

rrloop:
	CMP    $8, R3
	BLT    rrdone
	VLD2.P 32(R1), [V0.S4, V1.S4]
	VLD2.P 32(R2), [V2.S4, V3.S4]
	ROTATE
	VST2.P [V4.S4, V5.S4], 32(R0)
	SUB    $8, R3
	B      rrloop

rrdone:
	RET
