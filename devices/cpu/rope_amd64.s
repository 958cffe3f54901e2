//go:build !purego

#include "textflag.h"

// AVX2 kernels of rope (rope.go): the portable sincos (vec.go) four angles
// at a time for its cache, and the rotation of a row's pairs. Both compute
// exactly what the scalar Go code computes: the same float64 (for sincos)
// or float32 operations in the same order, none fused (as the Go code's
// conversions rule out).

// sincos's constants (vec.go), each four times.
DATA sincosc<>+0(SB)/8, $0x3ff45f306dc9c883 // 4/Pi
DATA sincosc<>+8(SB)/8, $0x3ff45f306dc9c883
DATA sincosc<>+16(SB)/8, $0x3ff45f306dc9c883
DATA sincosc<>+24(SB)/8, $0x3ff45f306dc9c883
DATA sincosc<>+32(SB)/8, $0x3fe921fb40000000 // Pi/4 in three parts: A
DATA sincosc<>+40(SB)/8, $0x3fe921fb40000000
DATA sincosc<>+48(SB)/8, $0x3fe921fb40000000
DATA sincosc<>+56(SB)/8, $0x3fe921fb40000000
DATA sincosc<>+64(SB)/8, $0x3e64442d00000000 // B
DATA sincosc<>+72(SB)/8, $0x3e64442d00000000
DATA sincosc<>+80(SB)/8, $0x3e64442d00000000
DATA sincosc<>+88(SB)/8, $0x3e64442d00000000
DATA sincosc<>+96(SB)/8, $0x3ce8469898cc5170 // C
DATA sincosc<>+104(SB)/8, $0x3ce8469898cc5170
DATA sincosc<>+112(SB)/8, $0x3ce8469898cc5170
DATA sincosc<>+120(SB)/8, $0x3ce8469898cc5170
DATA sincosc<>+128(SB)/8, $0x3fe0000000000000 // 0.5
DATA sincosc<>+136(SB)/8, $0x3fe0000000000000
DATA sincosc<>+144(SB)/8, $0x3fe0000000000000
DATA sincosc<>+152(SB)/8, $0x3fe0000000000000
DATA sincosc<>+160(SB)/8, $0x3ff0000000000000 // 1
DATA sincosc<>+168(SB)/8, $0x3ff0000000000000
DATA sincosc<>+176(SB)/8, $0x3ff0000000000000
DATA sincosc<>+184(SB)/8, $0x3ff0000000000000
DATA sincosc<>+192(SB)/8, $0x3de5d8fd1fd19ccd // sin's coefficients
DATA sincosc<>+200(SB)/8, $0x3de5d8fd1fd19ccd
DATA sincosc<>+208(SB)/8, $0x3de5d8fd1fd19ccd
DATA sincosc<>+216(SB)/8, $0x3de5d8fd1fd19ccd
DATA sincosc<>+224(SB)/8, $0xbe5ae5e5a9291f5d
DATA sincosc<>+232(SB)/8, $0xbe5ae5e5a9291f5d
DATA sincosc<>+240(SB)/8, $0xbe5ae5e5a9291f5d
DATA sincosc<>+248(SB)/8, $0xbe5ae5e5a9291f5d
DATA sincosc<>+256(SB)/8, $0x3ec71de3567d48a1
DATA sincosc<>+264(SB)/8, $0x3ec71de3567d48a1
DATA sincosc<>+272(SB)/8, $0x3ec71de3567d48a1
DATA sincosc<>+280(SB)/8, $0x3ec71de3567d48a1
DATA sincosc<>+288(SB)/8, $0xbf2a01a019bfdf03
DATA sincosc<>+296(SB)/8, $0xbf2a01a019bfdf03
DATA sincosc<>+304(SB)/8, $0xbf2a01a019bfdf03
DATA sincosc<>+312(SB)/8, $0xbf2a01a019bfdf03
DATA sincosc<>+320(SB)/8, $0x3f8111111110f7d0
DATA sincosc<>+328(SB)/8, $0x3f8111111110f7d0
DATA sincosc<>+336(SB)/8, $0x3f8111111110f7d0
DATA sincosc<>+344(SB)/8, $0x3f8111111110f7d0
DATA sincosc<>+352(SB)/8, $0xbfc5555555555548
DATA sincosc<>+360(SB)/8, $0xbfc5555555555548
DATA sincosc<>+368(SB)/8, $0xbfc5555555555548
DATA sincosc<>+376(SB)/8, $0xbfc5555555555548
DATA sincosc<>+384(SB)/8, $0xbda8fa49a0861a9b // cos's coefficients
DATA sincosc<>+392(SB)/8, $0xbda8fa49a0861a9b
DATA sincosc<>+400(SB)/8, $0xbda8fa49a0861a9b
DATA sincosc<>+408(SB)/8, $0xbda8fa49a0861a9b
DATA sincosc<>+416(SB)/8, $0x3e21ee9d7b4e3f05
DATA sincosc<>+424(SB)/8, $0x3e21ee9d7b4e3f05
DATA sincosc<>+432(SB)/8, $0x3e21ee9d7b4e3f05
DATA sincosc<>+440(SB)/8, $0x3e21ee9d7b4e3f05
DATA sincosc<>+448(SB)/8, $0xbe927e4f7eac4bc6
DATA sincosc<>+456(SB)/8, $0xbe927e4f7eac4bc6
DATA sincosc<>+464(SB)/8, $0xbe927e4f7eac4bc6
DATA sincosc<>+472(SB)/8, $0xbe927e4f7eac4bc6
DATA sincosc<>+480(SB)/8, $0x3efa01a019c844f5
DATA sincosc<>+488(SB)/8, $0x3efa01a019c844f5
DATA sincosc<>+496(SB)/8, $0x3efa01a019c844f5
DATA sincosc<>+504(SB)/8, $0x3efa01a019c844f5
DATA sincosc<>+512(SB)/8, $0xbf56c16c16c14f91
DATA sincosc<>+520(SB)/8, $0xbf56c16c16c14f91
DATA sincosc<>+528(SB)/8, $0xbf56c16c16c14f91
DATA sincosc<>+536(SB)/8, $0xbf56c16c16c14f91
DATA sincosc<>+544(SB)/8, $0x3fa555555555554b
DATA sincosc<>+552(SB)/8, $0x3fa555555555554b
DATA sincosc<>+560(SB)/8, $0x3fa555555555554b
DATA sincosc<>+568(SB)/8, $0x3fa555555555554b
DATA sincosc<>+576(SB)/8, $0x7fffffffffffffff // |x|
DATA sincosc<>+584(SB)/8, $0x7fffffffffffffff
DATA sincosc<>+592(SB)/8, $0x7fffffffffffffff
DATA sincosc<>+600(SB)/8, $0x7fffffffffffffff
DATA sincosc<>+608(SB)/8, $0x8000000000000000 // the sign bit
DATA sincosc<>+616(SB)/8, $0x8000000000000000
DATA sincosc<>+624(SB)/8, $0x8000000000000000
DATA sincosc<>+632(SB)/8, $0x8000000000000000
DATA sincosc<>+640(SB)/8, $0x41c0000000000000 // 2^29, sincosLimit
DATA sincosc<>+648(SB)/8, $0x41c0000000000000
DATA sincosc<>+656(SB)/8, $0x41c0000000000000
DATA sincosc<>+664(SB)/8, $0x41c0000000000000
GLOBL sincosc<>(SB), RODATA|NOPTR, $672

// func sincosAVX2(s, c, x *float64, n int) (other int)
// s[i], c[i] = sincos(x[i]) for n a multiple of 4, for every x with
// 0 < |x| < 2^29 (the range sincos reduces with pi/4 in three parts): its
// octant, its reduction, both polynomials, then the swap and signs the
// octant picks. Other lanes get garbage the caller replaces;
// other is nonzero when there are some.
TEXT ·sincosAVX2(SB), NOSPLIT, $0-40
	MOVQ s+0(FP), DI
	MOVQ c+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	MOVL $1, AX
	VMOVD AX, X15
	VPBROADCASTD X15, X15
	XORQ R8, R8

scloop:
	CMPQ CX, $4
	JL   scdone
	VMOVUPD (SI), Y0
	VANDPD sincosc<>+576(SB), Y0, Y1
	VANDPD sincosc<>+608(SB), Y0, Y2
	// The lanes out of range: not 0 < |x| < 2^29 (NaN included).
	VCMPPD $0x11, sincosc<>+640(SB), Y1, Y3
	VXORPD Y4, Y4, Y4
	VCMPPD $0x1e, Y4, Y1, Y4
	VANDPD Y4, Y3, Y3
	VMOVMSKPD Y3, AX
	XORL $15, AX
	ORQ AX, R8
	// j = int(|x| * 4/Pi), made even (j++ when odd), and y = float64(j)
	VMULPD sincosc<>+0(SB), Y1, Y3
	VCVTTPD2DQY Y3, X3
	VPAND X15, X3, X4
	VPADDD X4, X3, X3
	VCVTDQ2PD X3, Y4
	// z = ((|x| - y*PI4A) - y*PI4B) - y*PI4C, zz = z*z
	VMULPD sincosc<>+32(SB), Y4, Y5
	VSUBPD Y5, Y1, Y6
	VMULPD sincosc<>+64(SB), Y4, Y5
	VSUBPD Y5, Y6, Y6
	VMULPD sincosc<>+96(SB), Y4, Y5
	VSUBPD Y5, Y6, Y6
	VMULPD Y6, Y6, Y7
	// cos = (1 - 0.5*zz) + zz*zz*P(zz)
	VMULPD sincosc<>+384(SB), Y7, Y8
	VADDPD sincosc<>+416(SB), Y8, Y8
	VMULPD Y7, Y8, Y8
	VADDPD sincosc<>+448(SB), Y8, Y8
	VMULPD Y7, Y8, Y8
	VADDPD sincosc<>+480(SB), Y8, Y8
	VMULPD Y7, Y8, Y8
	VADDPD sincosc<>+512(SB), Y8, Y8
	VMULPD Y7, Y8, Y8
	VADDPD sincosc<>+544(SB), Y8, Y8
	VMULPD Y7, Y7, Y9
	VMULPD Y8, Y9, Y9
	VMULPD sincosc<>+128(SB), Y7, Y10
	VMOVUPD sincosc<>+160(SB), Y11
	VSUBPD Y10, Y11, Y10
	VADDPD Y9, Y10, Y10
	// sin = z + z*zz*Q(zz)
	VMULPD sincosc<>+192(SB), Y7, Y8
	VADDPD sincosc<>+224(SB), Y8, Y8
	VMULPD Y7, Y8, Y8
	VADDPD sincosc<>+256(SB), Y8, Y8
	VMULPD Y7, Y8, Y8
	VADDPD sincosc<>+288(SB), Y8, Y8
	VMULPD Y7, Y8, Y8
	VADDPD sincosc<>+320(SB), Y8, Y8
	VMULPD Y7, Y8, Y8
	VADDPD sincosc<>+352(SB), Y8, Y8
	VMULPD Y7, Y6, Y9
	VMULPD Y8, Y9, Y9
	VADDPD Y9, Y6, Y9
	// j's bit 1 swaps sin and cos and flips cos, bit 2 flips both.
	VPMOVZXDQ X3, Y12
	VPSLLQ $62, Y12, Y13
	VPSLLQ $61, Y12, Y14
	VANDPD sincosc<>+608(SB), Y14, Y14
	VBLENDVPD Y13, Y10, Y9, Y11
	VBLENDVPD Y13, Y9, Y10, Y10
	VXORPD Y13, Y14, Y13
	VXORPD Y13, Y10, Y10
	VXORPD Y2, Y14, Y14
	VXORPD Y14, Y11, Y11
	VMOVUPD Y11, (DI)
	VMOVUPD Y10, (DX)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	SUBQ $4, CX
	JMP  scloop

scdone:
	MOVQ R8, other+32(FP)
	VZEROUPPER
	RET

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
