//go:build !purego

#include "textflag.h"

// AVX2/FMA/F16C versions of the vector primitives (vec.go). Every loop
// handles 32 values per step in four independent registers, then 8 at a
// time, then one at a time, so any length works and no element is read
// or written outside the slices.

// BINARY defines func NAME(dst, x, y *float32, n int): dst[i] = x[i] OP y[i]
// (OPSS is the scalar form of OP).
#define BINARY(NAME, OP, OPSS) \
TEXT NAME(SB), NOSPLIT, $0-32 \
	MOVQ dst+0(FP), DI \
	MOVQ x+8(FP), SI \
	MOVQ y+16(FP), DX \
	MOVQ n+24(FP), CX \
loop32: \
	CMPQ CX, $32 \
	JL loop8 \
	VMOVUPS (SI), Y0 \
	VMOVUPS 32(SI), Y1 \
	VMOVUPS 64(SI), Y2 \
	VMOVUPS 96(SI), Y3 \
	OP (DX), Y0, Y0 \
	OP 32(DX), Y1, Y1 \
	OP 64(DX), Y2, Y2 \
	OP 96(DX), Y3, Y3 \
	VMOVUPS Y0, (DI) \
	VMOVUPS Y1, 32(DI) \
	VMOVUPS Y2, 64(DI) \
	VMOVUPS Y3, 96(DI) \
	ADDQ $128, SI \
	ADDQ $128, DX \
	ADDQ $128, DI \
	SUBQ $32, CX \
	JMP loop32 \
loop8: \
	CMPQ CX, $8 \
	JL loop1 \
	VMOVUPS (SI), Y0 \
	OP (DX), Y0, Y0 \
	VMOVUPS Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, DX \
	ADDQ $32, DI \
	SUBQ $8, CX \
	JMP loop8 \
loop1: \
	TESTQ CX, CX \
	JE done \
	VMOVSS (SI), X0 \
	VMOVSS (DX), X1 \
	OPSS X1, X0, X0 \
	VMOVSS X0, (DI) \
	ADDQ $4, SI \
	ADDQ $4, DX \
	ADDQ $4, DI \
	DECQ CX \
	JMP loop1 \
done: \
	VZEROUPPER \
	RET

BINARY(·vecAddAVX2, VADDPS, VADDSS)
BINARY(·vecSubAVX2, VSUBPS, VSUBSS)
BINARY(·vecMulAVX2, VMULPS, VMULSS)
BINARY(·vecDivAVX2, VDIVPS, VDIVSS)

// func vecScaleAVX2(x *float32, n int, s float32)
TEXT ·vecScaleAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS s+16(FP), Y15
sloop32:
	CMPQ CX, $32
	JL sloop8
	VMULPS (DI), Y15, Y0
	VMULPS 32(DI), Y15, Y1
	VMULPS 64(DI), Y15, Y2
	VMULPS 96(DI), Y15, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	SUBQ $32, CX
	JMP sloop32
sloop8:
	CMPQ CX, $8
	JL sloop1
	VMULPS (DI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	SUBQ $8, CX
	JMP sloop8
sloop1:
	TESTQ CX, CX
	JE sdone
	VMULSS (DI), X15, X0
	VMOVSS X0, (DI)
	ADDQ $4, DI
	DECQ CX
	JMP sloop1
sdone:
	VZEROUPPER
	RET

// func vecMadAVX2(y, x *float32, n int, s float32)
TEXT ·vecMadAVX2(SB), NOSPLIT, $0-28
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS s+24(FP), Y15
mloop32:
	CMPQ CX, $32
	JL mloop8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VFMADD213PS (DI), Y15, Y0
	VFMADD213PS 32(DI), Y15, Y1
	VFMADD213PS 64(DI), Y15, Y2
	VFMADD213PS 96(DI), Y15, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP mloop32
mloop8:
	CMPQ CX, $8
	JL mloop1
	VMOVUPS (SI), Y0
	VFMADD213PS (DI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP mloop8
mloop1:
	TESTQ CX, CX
	JE mdone
	VMOVSS (SI), X0
	VFMADD213SS (DI), X15, X0
	VMOVSS X0, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP mloop1
mdone:
	VZEROUPPER
	RET

// func vecDotAVX2(x, y *float32, n int) float32
TEXT ·vecDotAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DX
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
dloop32:
	CMPQ CX, $32
	JL dloop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DX), Y4, Y0
	VFMADD231PS 32(DX), Y5, Y1
	VFMADD231PS 64(DX), Y6, Y2
	VFMADD231PS 96(DX), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DX
	SUBQ $32, CX
	JMP dloop32
dloop8:
	CMPQ CX, $8
	JL dreduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DX), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DX
	SUBQ $8, CX
	JMP dloop8
dreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
dloop1:
	TESTQ CX, CX
	JE ddone
	VMOVSS (SI), X4
	VFMADD231SS (DX), X4, X0
	ADDQ $4, SI
	ADDQ $4, DX
	DECQ CX
	JMP dloop1
ddone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func vecDotF16AVX2(x, y *uint16, n int) float32
TEXT ·vecDotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DX
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
hloop32:
	CMPQ CX, $32
	JL hloop8
	VCVTPH2PS (SI), Y4
	VCVTPH2PS 16(SI), Y5
	VCVTPH2PS 32(SI), Y6
	VCVTPH2PS 48(SI), Y7
	VCVTPH2PS (DX), Y8
	VCVTPH2PS 16(DX), Y9
	VCVTPH2PS 32(DX), Y10
	VCVTPH2PS 48(DX), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $32, CX
	JMP hloop32
hloop8:
	CMPQ CX, $8
	JL hreduce
	VCVTPH2PS (SI), Y4
	VCVTPH2PS (DX), Y8
	VFMADD231PS Y8, Y4, Y0
	ADDQ $16, SI
	ADDQ $16, DX
	SUBQ $8, CX
	JMP hloop8
hreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
hloop1:
	TESTQ CX, CX
	JE hdone
	MOVWLZX (SI), AX
	MOVWLZX (DX), BX
	VMOVD AX, X4
	VMOVD BX, X5
	VCVTPH2PS X4, X4
	VCVTPH2PS X5, X5
	VFMADD231SS X5, X4, X0
	ADDQ $2, SI
	ADDQ $2, DX
	DECQ CX
	JMP hloop1
hdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func vecMadF16AVX2(y, x *uint16, n int, s float32)
TEXT ·vecMadF16AVX2(SB), NOSPLIT, $0-28
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS s+24(FP), Y15
floop32:
	CMPQ CX, $32
	JL floop8
	VCVTPH2PS (DI), Y0
	VCVTPH2PS 16(DI), Y1
	VCVTPH2PS 32(DI), Y2
	VCVTPH2PS 48(DI), Y3
	VCVTPH2PS (SI), Y4
	VCVTPH2PS 16(SI), Y5
	VCVTPH2PS 32(SI), Y6
	VCVTPH2PS 48(SI), Y7
	VFMADD231PS Y15, Y4, Y0
	VFMADD231PS Y15, Y5, Y1
	VFMADD231PS Y15, Y6, Y2
	VFMADD231PS Y15, Y7, Y3
	VCVTPS2PH $0, Y0, (DI)
	VCVTPS2PH $0, Y1, 16(DI)
	VCVTPS2PH $0, Y2, 32(DI)
	VCVTPS2PH $0, Y3, 48(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP floop32
floop8:
	CMPQ CX, $8
	JL floop1
	VCVTPH2PS (DI), Y0
	VCVTPH2PS (SI), Y4
	VFMADD231PS Y15, Y4, Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JMP floop8
floop1:
	TESTQ CX, CX
	JE fdone
	MOVWLZX (DI), AX
	MOVWLZX (SI), BX
	VMOVD AX, X0
	VMOVD BX, X4
	VCVTPH2PS X0, X0
	VCVTPH2PS X4, X4
	VFMADD231SS X15, X4, X0
	VCVTPS2PH $0, X0, X0
	VMOVD X0, AX
	MOVW AX, (DI)
	ADDQ $2, SI
	ADDQ $2, DI
	DECQ CX
	JMP floop1
fdone:
	VZEROUPPER
	RET

// func vecScaleF16AVX2(y *uint16, n int, s float32)
TEXT ·vecScaleF16AVX2(SB), NOSPLIT, $0-20
	MOVQ y+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS s+16(FP), Y15
gloop8:
	CMPQ CX, $8
	JL gloop1
	VCVTPH2PS (DI), Y0
	VMULPS Y15, Y0, Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ $16, DI
	SUBQ $8, CX
	JMP gloop8
gloop1:
	TESTQ CX, CX
	JE gdone
	MOVWLZX (DI), AX
	VMOVD AX, X0
	VCVTPH2PS X0, X0
	VMULSS X15, X0, X0
	VCVTPS2PH $0, X0, X0
	VMOVD X0, AX
	MOVW AX, (DI)
	ADDQ $2, DI
	DECQ CX
	JMP gloop1
gdone:
	VZEROUPPER
	RET

// func vecF16ToF32AVX2(dst *float32, src *uint16, n int)
TEXT ·vecF16ToF32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
cloop8:
	CMPQ CX, $8
	JL cloop1
	VCVTPH2PS (SI), Y0
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP cloop8
cloop1:
	TESTQ CX, CX
	JE cdone
	MOVWLZX (SI), AX
	VMOVD AX, X0
	VCVTPH2PS X0, X0
	VMOVSS X0, (DI)
	ADDQ $2, SI
	ADDQ $4, DI
	DECQ CX
	JMP cloop1
cdone:
	VZEROUPPER
	RET

// Constants of the vector e^x (VEXP): the clamp that keeps 2^n a normal
// float, log2(e), ln(2) in two parts, and exp's Taylor coefficients.
DATA expc<>+0(SB)/4, $0x42b0c0a5 // 88.3762626647949
DATA expc<>+4(SB)/4, $0xc2aeac50 // -87.3365447505531
DATA expc<>+8(SB)/4, $0x3fb8aa3b // log2(e)
DATA expc<>+12(SB)/4, $0x3f318000 // ln2 hi (0.693359375)
DATA expc<>+16(SB)/4, $0xb95e8083 // ln2 lo (-2.12194440e-4)
DATA expc<>+20(SB)/4, $0x39500d01 // 1/5040
DATA expc<>+24(SB)/4, $0x3ab60b61 // 1/720
DATA expc<>+28(SB)/4, $0x3c088889 // 1/120
DATA expc<>+32(SB)/4, $0x3d2aaaab // 1/24
DATA expc<>+36(SB)/4, $0x3e2aaaab // 1/6
DATA expc<>+40(SB)/4, $0x3f000000 // 1/2
DATA expc<>+44(SB)/4, $0x3f800000 // 1
DATA expc<>+48(SB)/4, $127
DATA expc<>+52(SB)/4, $0x42b17217 // 88.7228394, above which e^x overflows
DATA expc<>+56(SB)/4, $0x7f800000 // +Inf
GLOBL expc<>(SB), RODATA|NOPTR, $60

#define EXPC(i, Y) VBROADCASTSS expc<>+i(SB), Y

// VEXP sets Y0 to e^Y0, lane by lane: 2^n times exp's Taylor polynomial
// of degree 7 in r = Y0 - n ln2, |r| <= ln2/2 (within 2 ulp), the input
// clamped so that 2^n stays a normal float (beyond, the results stay
// within 3e-38 of the true value or overflow as VEXPINF makes them). It
// uses Y1..Y3.
#define VEXP \
	EXPC(0, Y1);                 \
	VMINPS      Y1, Y0, Y0;      \
	EXPC(4, Y1);                 \
	VMAXPS      Y1, Y0, Y0;      \
	EXPC(8, Y1);                 \
	VMULPS      Y1, Y0, Y1;      \
	VROUNDPS    $0, Y1, Y1;      \
	EXPC(12, Y2);                \
	VFNMADD231PS Y2, Y1, Y0;     \
	EXPC(16, Y2);                \
	VFNMADD231PS Y2, Y1, Y0;     \
	EXPC(20, Y2);                \
	EXPC(24, Y3);                \
	VFMADD213PS Y3, Y0, Y2;      \
	EXPC(28, Y3);                \
	VFMADD213PS Y3, Y0, Y2;      \
	EXPC(32, Y3);                \
	VFMADD213PS Y3, Y0, Y2;      \
	EXPC(36, Y3);                \
	VFMADD213PS Y3, Y0, Y2;      \
	EXPC(40, Y3);                \
	VFMADD213PS Y3, Y0, Y2;      \
	EXPC(44, Y3);                \
	VFMADD213PS Y3, Y0, Y2;      \
	VFMADD213PS Y3, Y0, Y2;      \
	VCVTPS2DQ   Y1, Y1;          \
	VPBROADCASTD expc<>+48(SB), Y3; \
	VPADDD      Y3, Y1, Y1;      \
	VPSLLD      $23, Y1, Y1;     \
	VMULPS      Y1, Y2, Y0

// VEXPINF puts +Inf (Y8) in the lanes of Y0 whose input, saved in Y6, is
// above the overflow threshold in Y9, using Y7.
#define VEXPINF \
	VCMPPS    $0x1e, Y9, Y6, Y7; \
	VBLENDVPS Y7, Y8, Y0, Y0

// func vecSwiGLUAVX2(dst, x, gate *float32, n int)
// dst[i] = x[i] / (1 + e^-x[i]) * gate[i] for n a multiple of 8.
TEXT ·vecSwiGLUAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gate+16(FP), DX
	MOVQ n+24(FP), CX
	EXPC(44, Y5)
	EXPC(56, Y8)
	EXPC(52, Y9)

swiglu8:
	CMPQ    CX, $8
	JL      swiglu0
	VMOVUPS (SI), Y4
	VXORPS  Y0, Y0, Y0
	VSUBPS  Y4, Y0, Y0
	VMOVAPS Y0, Y6
	VEXP
	VEXPINF
	VADDPS  Y5, Y0, Y0
	VDIVPS  Y0, Y4, Y4
	VMULPS  (DX), Y4, Y4
	VMOVUPS Y4, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     swiglu8

swiglu0:
	VZEROUPPER
	RET
