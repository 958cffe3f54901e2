//go:build !purego

#include "vec_arm64.h"

// NEON kernels of rope (rope.go): the portable sincos (vec.go) two angles
// at a time for its cache, and the rotation of a row's pairs. Both compute
// exactly what the portable Go code computes: the same float64 (for
// sincos) or float32 operations in the same order, every product rounded
// before the sum that takes it (FMUL, then FADD or FSUB; never FMLA or
// FMLS, which the portable code's conversions rule out).

// sincos's constants (vec.go), each twice; then the sign bit, the limit
// 2^29 and the integer 1.
DATA sincosc<>+0(SB)/8, $0x3ff45f306dc9c883 // 4/Pi
DATA sincosc<>+8(SB)/8, $0x3ff45f306dc9c883
DATA sincosc<>+16(SB)/8, $0x3fe921fb40000000 // Pi/4 in three parts: A
DATA sincosc<>+24(SB)/8, $0x3fe921fb40000000
DATA sincosc<>+32(SB)/8, $0x3e64442d00000000 // B
DATA sincosc<>+40(SB)/8, $0x3e64442d00000000
DATA sincosc<>+48(SB)/8, $0x3ce8469898cc5170 // C
DATA sincosc<>+56(SB)/8, $0x3ce8469898cc5170
DATA sincosc<>+64(SB)/8, $0x3fe0000000000000 // 0.5
DATA sincosc<>+72(SB)/8, $0x3fe0000000000000
DATA sincosc<>+80(SB)/8, $0x3ff0000000000000 // 1
DATA sincosc<>+88(SB)/8, $0x3ff0000000000000
DATA sincosc<>+96(SB)/8, $0x8000000000000000 // the sign bit
DATA sincosc<>+104(SB)/8, $0x8000000000000000
DATA sincosc<>+112(SB)/8, $0x41c0000000000000 // 2^29
DATA sincosc<>+120(SB)/8, $0x41c0000000000000
DATA sincosc<>+128(SB)/8, $1
DATA sincosc<>+136(SB)/8, $1
DATA sincosc<>+144(SB)/8, $0x3de5d8fd1fd19ccd // sin's coefficients
DATA sincosc<>+152(SB)/8, $0x3de5d8fd1fd19ccd
DATA sincosc<>+160(SB)/8, $0xbe5ae5e5a9291f5d
DATA sincosc<>+168(SB)/8, $0xbe5ae5e5a9291f5d
DATA sincosc<>+176(SB)/8, $0x3ec71de3567d48a1
DATA sincosc<>+184(SB)/8, $0x3ec71de3567d48a1
DATA sincosc<>+192(SB)/8, $0xbf2a01a019bfdf03
DATA sincosc<>+200(SB)/8, $0xbf2a01a019bfdf03
DATA sincosc<>+208(SB)/8, $0x3f8111111110f7d0
DATA sincosc<>+216(SB)/8, $0x3f8111111110f7d0
DATA sincosc<>+224(SB)/8, $0xbfc5555555555548
DATA sincosc<>+232(SB)/8, $0xbfc5555555555548
DATA sincosc<>+240(SB)/8, $0xbda8fa49a0861a9b // cos's coefficients
DATA sincosc<>+248(SB)/8, $0xbda8fa49a0861a9b
DATA sincosc<>+256(SB)/8, $0x3e21ee9d7b4e3f05
DATA sincosc<>+264(SB)/8, $0x3e21ee9d7b4e3f05
DATA sincosc<>+272(SB)/8, $0xbe927e4f7eac4bc6
DATA sincosc<>+280(SB)/8, $0xbe927e4f7eac4bc6
DATA sincosc<>+288(SB)/8, $0x3efa01a019c844f5
DATA sincosc<>+296(SB)/8, $0x3efa01a019c844f5
DATA sincosc<>+304(SB)/8, $0xbf56c16c16c14f91
DATA sincosc<>+312(SB)/8, $0xbf56c16c16c14f91
DATA sincosc<>+320(SB)/8, $0x3fa555555555554b
DATA sincosc<>+328(SB)/8, $0x3fa555555555554b
GLOBL sincosc<>(SB), RODATA|NOPTR, $336

// POLYSTEP(off): V10 = V10*zz + the coefficient at off(R4), the product
// rounded before the sum (zz in V7). It uses V11.
#define POLYSTEP(off) \
	FMUL2D(7, 10, 10);   \
	FMOVQ off(R4), F11;  \
	FADD2D(11, 10, 10)

// POLY(off) leaves in V10 sincosPoly of zz (V7) with the six coefficients
// at off(R4): c0*zz + c1, then times zz plus each next one. It uses V11.
#define POLY(off) \
	FMOVQ off(R4), F10; \
	POLYSTEP(off+16);   \
	POLYSTEP(off+32);   \
	POLYSTEP(off+48);   \
	POLYSTEP(off+64);   \
	POLYSTEP(off+80)

// func sincosNEON(s, c, x *float64, n int) (other int)
// s[i], c[i] = sincos(x[i]) for n a multiple of 2, for every x with
// 0 < |x| < 2^29 (the range sincos reduces with pi/4 in three parts): its
// octant, its reduction, both polynomials, then the swap and signs the
// octant picks. Other lanes get garbage the caller replaces; other is
// nonzero when there are some.
TEXT ·sincosNEON(SB), NOSPLIT, $0-40
	MOVD   s+0(FP), R0
	MOVD   c+8(FP), R1
	MOVD   x+16(FP), R2
	MOVD   n+24(FP), R3
	MOVD   $sincosc<>(SB), R4
	MOVD   R4, R5
	VLD1.P 64(R5), [V16.D2, V17.D2, V18.D2, V19.D2]
	VLD1.P 64(R5), [V20.D2, V21.D2, V22.D2, V23.D2]
	VLD1   (R5), [V24.D2]
	VEOR   V15.B16, V15.B16, V15.B16 // the lanes left out so far

scloop:
	CMP    $2, R3
	BLT    scdone
	VLD1.P 16(R2), [V0.D2]
	FABS2D(0, 1)
	VAND   V22.B16, V0.B16, V2.B16
	// The lanes out of range: not 0 < |x| < 2^29 (NaN included).
	FCMGTZ2D(1, 3)
	FCMGT2D(1, 23, 4)
	VAND   V4.B16, V3.B16, V3.B16
	ORN16B(3, 15, 15)
	// j = uint64(|x| * 4/Pi), made even (j++ when odd), and y = float64(j)
	FMUL2D(16, 1, 4)
	FCVTZU2D(4, 4)
	VAND   V24.B16, V4.B16, V5.B16
	ADD2D(5, 4, 4)
	UCVTF2D(4, 5)
	// z = ((|x| - y*PI4A) - y*PI4B) - y*PI4C; zz = z*z
	FMUL2D(17, 5, 7)
	FSUB2D(7, 1, 6)
	FMUL2D(18, 5, 7)
	FSUB2D(7, 6, 6)
	FMUL2D(19, 5, 7)
	FSUB2D(7, 6, 6)
	FMUL2D(6, 6, 7)
	// cos = (1 - zz*0.5) + (zz*zz)*P(zz)
	FMUL2D(20, 7, 8)
	FSUB2D(8, 21, 8)
	FMUL2D(7, 7, 9)
	POLY(240)
	FMUL2D(10, 9, 9)
	FADD2D(9, 8, 8)
	// sin = z + (z*zz)*Q(zz)
	FMUL2D(7, 6, 9)
	POLY(144)
	FMUL2D(10, 9, 9)
	FADD2D(9, 6, 6)
	// j's bit 1 swaps sin and cos and flips cos, bit 2 flips both, x's
	// sign flips sin.
	SHL2D(62, 4, 11)
	SHL2D(61, 4, 12)
	VAND   V22.B16, V12.B16, V12.B16
	SSHR2D(63, 11, 13)
	VMOV16B(6, 14)
	VBIT   V13.B16, V8.B16, V14.B16
	VBIT   V13.B16, V6.B16, V8.B16
	VEOR   V12.B16, V11.B16, V11.B16
	VEOR   V11.B16, V8.B16, V8.B16
	VEOR   V2.B16, V12.B16, V12.B16
	VEOR   V12.B16, V14.B16, V14.B16
	VST1.P [V14.D2], 16(R0)
	VST1.P [V8.D2], 16(R1)
	SUB    $2, R3
	B      scloop

scdone:
	VMOV V15.D[0], R5
	VMOV V15.D[1], R6
	ORR  R6, R5, R5
	MOVD R5, other+32(FP)
	RET

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
