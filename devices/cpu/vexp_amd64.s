//go:build !purego

#include "textflag.h"

// ggml's vector e^x as its haswell (AVX2+FMA) build computes it
// (ggml_v_expf, ggml_v_silu and ggml_vec_soft_max_f32 of the upstream
// ggml backend's vec.h/vec.cpp, 2025; vexp.go describes the algorithm),
// eight lanes at a time with the same fused multiply-adds in the same
// order, so every lane has that build's bits. The loops take whole groups
// of eight; the callers give the leftovers to libcExpf as ggml's scalar
// loops give them to the C library.

// The constants, each repeated over a 256-bit vector so that it can be a
// memory operand.

DATA vexpc<>+0(SB)/4, $0x4b400000 // 1.5*2^23: adding and subtracting it rounds to an integer
DATA vexpc<>+4(SB)/4, $0x4b400000
DATA vexpc<>+8(SB)/4, $0x4b400000
DATA vexpc<>+12(SB)/4, $0x4b400000
DATA vexpc<>+16(SB)/4, $0x4b400000
DATA vexpc<>+20(SB)/4, $0x4b400000
DATA vexpc<>+24(SB)/4, $0x4b400000
DATA vexpc<>+28(SB)/4, $0x4b400000
DATA vexpc<>+32(SB)/4, $0x3fb8aa3b // 0x1.715476p+0
DATA vexpc<>+36(SB)/4, $0x3fb8aa3b
DATA vexpc<>+40(SB)/4, $0x3fb8aa3b
DATA vexpc<>+44(SB)/4, $0x3fb8aa3b
DATA vexpc<>+48(SB)/4, $0x3fb8aa3b
DATA vexpc<>+52(SB)/4, $0x3fb8aa3b
DATA vexpc<>+56(SB)/4, $0x3fb8aa3b
DATA vexpc<>+60(SB)/4, $0x3fb8aa3b
DATA vexpc<>+64(SB)/4, $0x3f317200 // ln 2, high part (0x1.62e4p-1)
DATA vexpc<>+68(SB)/4, $0x3f317200
DATA vexpc<>+72(SB)/4, $0x3f317200
DATA vexpc<>+76(SB)/4, $0x3f317200
DATA vexpc<>+80(SB)/4, $0x3f317200
DATA vexpc<>+84(SB)/4, $0x3f317200
DATA vexpc<>+88(SB)/4, $0x3f317200
DATA vexpc<>+92(SB)/4, $0x3f317200
DATA vexpc<>+96(SB)/4, $0x35bfbe8e // ln 2, low part (0x1.7f7d1cp-20)
DATA vexpc<>+100(SB)/4, $0x35bfbe8e
DATA vexpc<>+104(SB)/4, $0x35bfbe8e
DATA vexpc<>+108(SB)/4, $0x35bfbe8e
DATA vexpc<>+112(SB)/4, $0x35bfbe8e
DATA vexpc<>+116(SB)/4, $0x35bfbe8e
DATA vexpc<>+120(SB)/4, $0x35bfbe8e
DATA vexpc<>+124(SB)/4, $0x35bfbe8e
DATA vexpc<>+128(SB)/4, $0x3c072010 // 0x1.0e4020p-7
DATA vexpc<>+132(SB)/4, $0x3c072010
DATA vexpc<>+136(SB)/4, $0x3c072010
DATA vexpc<>+140(SB)/4, $0x3c072010
DATA vexpc<>+144(SB)/4, $0x3c072010
DATA vexpc<>+148(SB)/4, $0x3c072010
DATA vexpc<>+152(SB)/4, $0x3c072010
DATA vexpc<>+156(SB)/4, $0x3c072010
DATA vexpc<>+160(SB)/4, $0x3d2b9f17 // 0x1.573e2ep-5
DATA vexpc<>+164(SB)/4, $0x3d2b9f17
DATA vexpc<>+168(SB)/4, $0x3d2b9f17
DATA vexpc<>+172(SB)/4, $0x3d2b9f17
DATA vexpc<>+176(SB)/4, $0x3d2b9f17
DATA vexpc<>+180(SB)/4, $0x3d2b9f17
DATA vexpc<>+184(SB)/4, $0x3d2b9f17
DATA vexpc<>+188(SB)/4, $0x3d2b9f17
DATA vexpc<>+192(SB)/4, $0x3e2aaf33 // 0x1.555e66p-3
DATA vexpc<>+196(SB)/4, $0x3e2aaf33
DATA vexpc<>+200(SB)/4, $0x3e2aaf33
DATA vexpc<>+204(SB)/4, $0x3e2aaf33
DATA vexpc<>+208(SB)/4, $0x3e2aaf33
DATA vexpc<>+212(SB)/4, $0x3e2aaf33
DATA vexpc<>+216(SB)/4, $0x3e2aaf33
DATA vexpc<>+220(SB)/4, $0x3e2aaf33
DATA vexpc<>+224(SB)/4, $0x3efffedb // 0x1.fffdb6p-2
DATA vexpc<>+228(SB)/4, $0x3efffedb
DATA vexpc<>+232(SB)/4, $0x3efffedb
DATA vexpc<>+236(SB)/4, $0x3efffedb
DATA vexpc<>+240(SB)/4, $0x3efffedb
DATA vexpc<>+244(SB)/4, $0x3efffedb
DATA vexpc<>+248(SB)/4, $0x3efffedb
DATA vexpc<>+252(SB)/4, $0x3efffedb
DATA vexpc<>+256(SB)/4, $0x3f7ffff6 // 0x1.ffffecp-1
DATA vexpc<>+260(SB)/4, $0x3f7ffff6
DATA vexpc<>+264(SB)/4, $0x3f7ffff6
DATA vexpc<>+268(SB)/4, $0x3f7ffff6
DATA vexpc<>+272(SB)/4, $0x3f7ffff6
DATA vexpc<>+276(SB)/4, $0x3f7ffff6
DATA vexpc<>+280(SB)/4, $0x3f7ffff6
DATA vexpc<>+284(SB)/4, $0x3f7ffff6
DATA vexpc<>+288(SB)/4, $0x7fffffff // clears the sign
DATA vexpc<>+292(SB)/4, $0x7fffffff
DATA vexpc<>+296(SB)/4, $0x7fffffff
DATA vexpc<>+300(SB)/4, $0x7fffffff
DATA vexpc<>+304(SB)/4, $0x7fffffff
DATA vexpc<>+308(SB)/4, $0x7fffffff
DATA vexpc<>+312(SB)/4, $0x7fffffff
DATA vexpc<>+316(SB)/4, $0x7fffffff
DATA vexpc<>+320(SB)/4, $0x42fc0000 // 126: beyond, 2^n is scaled in two steps
DATA vexpc<>+324(SB)/4, $0x42fc0000
DATA vexpc<>+328(SB)/4, $0x42fc0000
DATA vexpc<>+332(SB)/4, $0x42fc0000
DATA vexpc<>+336(SB)/4, $0x42fc0000
DATA vexpc<>+340(SB)/4, $0x42fc0000
DATA vexpc<>+344(SB)/4, $0x42fc0000
DATA vexpc<>+348(SB)/4, $0x42fc0000
DATA vexpc<>+352(SB)/4, $0x43400000 // 192: beyond, the result is 0 or +Inf
DATA vexpc<>+356(SB)/4, $0x43400000
DATA vexpc<>+360(SB)/4, $0x43400000
DATA vexpc<>+364(SB)/4, $0x43400000
DATA vexpc<>+368(SB)/4, $0x43400000
DATA vexpc<>+372(SB)/4, $0x43400000
DATA vexpc<>+376(SB)/4, $0x43400000
DATA vexpc<>+380(SB)/4, $0x43400000
DATA vexpc<>+384(SB)/4, $0x3f800000 // 1.0 (also the exponent bias as bits)
DATA vexpc<>+388(SB)/4, $0x3f800000
DATA vexpc<>+392(SB)/4, $0x3f800000
DATA vexpc<>+396(SB)/4, $0x3f800000
DATA vexpc<>+400(SB)/4, $0x3f800000
DATA vexpc<>+404(SB)/4, $0x3f800000
DATA vexpc<>+408(SB)/4, $0x3f800000
DATA vexpc<>+412(SB)/4, $0x3f800000
DATA vexpc<>+416(SB)/4, $0x82000000 // moves the two-step scaling down for n <= 0
DATA vexpc<>+420(SB)/4, $0x82000000
DATA vexpc<>+424(SB)/4, $0x82000000
DATA vexpc<>+428(SB)/4, $0x82000000
DATA vexpc<>+432(SB)/4, $0x82000000
DATA vexpc<>+436(SB)/4, $0x82000000
DATA vexpc<>+440(SB)/4, $0x82000000
DATA vexpc<>+444(SB)/4, $0x82000000
DATA vexpc<>+448(SB)/4, $0x7f000000 // 2^127 as bits
DATA vexpc<>+452(SB)/4, $0x7f000000
DATA vexpc<>+456(SB)/4, $0x7f000000
DATA vexpc<>+460(SB)/4, $0x7f000000
DATA vexpc<>+464(SB)/4, $0x7f000000
DATA vexpc<>+468(SB)/4, $0x7f000000
DATA vexpc<>+472(SB)/4, $0x7f000000
DATA vexpc<>+476(SB)/4, $0x7f000000
GLOBL vexpc<>(SB), RODATA|NOPTR, $480

#define VX_SHIFT vexpc<>+0(SB)
#define VX_LOG2E vexpc<>+32(SB)
#define VX_LN2HI vexpc<>+64(SB)
#define VX_LN2LO vexpc<>+96(SB)
#define VX_P0 vexpc<>+128(SB)
#define VX_P1 vexpc<>+160(SB)
#define VX_P2 vexpc<>+192(SB)
#define VX_P3 vexpc<>+224(SB)
#define VX_P4 vexpc<>+256(SB)
#define VX_ABS vexpc<>+288(SB)
#define VX_C126 vexpc<>+320(SB)
#define VX_C192 vexpc<>+352(SB)
#define VX_ONE vexpc<>+384(SB)
#define VX_NEGADJ vexpc<>+416(SB)
#define VX_SCALEHI vexpc<>+448(SB)

// VGEXP_CORE starts e^Y0, lane by lane: Y2 = n (x log2e rounded to an
// integer), Y4 = n's bits shifted into the exponent field, Y5 = 2^n (for
// |n| <= 126), Y6 = the lanes with |n| > 126, Y8 = j, the polynomial
// (e^b - 1 for x = n ln2 + b). Y0 stays x. It uses Y1..Y9.
#define VGEXP_CORE \
	VMOVUPS      VX_LOG2E, Y1;    \
	VFMADD213PS  VX_SHIFT, Y0, Y1; \
	VSUBPS       VX_SHIFT, Y1, Y2; \
	VMOVAPS      Y0, Y3;          \
	VFNMADD231PS VX_LN2HI, Y2, Y3; \
	VFNMADD231PS VX_LN2LO, Y2, Y3; \
	VPSLLD       $23, Y1, Y4;     \
	VPADDD       VX_ONE, Y4, Y5;  \
	VANDPS       VX_ABS, Y2, Y6;  \
	VCMPPS       $0x1e, VX_C126, Y6, Y6; \
	VMULPS       Y3, Y3, Y7;      \
	VMOVUPS      VX_P0, Y8;       \
	VFMADD213PS  VX_P1, Y3, Y8;   \
	VMOVUPS      VX_P2, Y9;       \
	VFMADD213PS  VX_P3, Y3, Y9;   \
	VFMADD213PS  Y9, Y7, Y8;      \
	VMULPS       VX_P4, Y3, Y9;   \
	VFMADD213PS  Y9, Y7, Y8

// VGEXP_NARROW ends e^x when no lane has |n| > 126: Y0 = 2^n j + 2^n.
#define VGEXP_NARROW \
	VFMADD213PS Y5, Y5, Y8; \
	VMOVAPS     Y8, Y0

// VGEXP_WIDE ends e^x for any lanes: where |n| > 192, s1*s1 (0 or +Inf);
// where |n| > 126, (s2 j + s2) s1, 2^n split into s1 = 2^127 or 2^-125
// (by n's sign) and s2 = 2^n / s1; elsewhere VGEXP_NARROW's value.
#define VGEXP_WIDE \
	VXORPS      Y3, Y3, Y3;       \
	VCMPPS      $0x12, Y3, Y2, Y3; \
	VANDPS      VX_NEGADJ, Y3, Y3; \
	VPADDD      VX_SCALEHI, Y3, Y7; \
	VPSUBD      Y3, Y4, Y3;       \
	VANDPS      VX_ABS, Y2, Y2;   \
	VCMPPS      $0x1e, VX_C192, Y2, Y2; \
	VMULPS      Y7, Y7, Y4;       \
	VMOVAPS     Y8, Y9;           \
	VFMADD213PS Y3, Y3, Y9;       \
	VMULPS      Y7, Y9, Y9;       \
	VFMADD213PS Y5, Y5, Y8;       \
	VBLENDVPS   Y6, Y9, Y8, Y8;   \
	VBLENDVPS   Y2, Y4, Y8, Y0

// VGEXP sets Y0 to e^Y0 (uses AX, Y1..Y9); wide and done name the two
// labels it jumps between, unique in the function.
#define VGEXP(wide, done) \
	VGEXP_CORE;           \
	VMOVMSKPS Y6, AX;     \
	TESTL     AX, AX;     \
	JNZ       wide;       \
	VGEXP_NARROW;         \
	JMP       done;       \
wide:                     \
	VGEXP_WIDE;           \
done:

// func vsoftmaxAVX2(dst, src *float32, n int, max float32) float64
// dst[i] = e^(src[i]-max) for n a multiple of 8; returns the sum of each
// group's float32 sum (its halves added, then the pairs, then the two
// left) in float64, group after group.
TEXT ·vsoftmaxAVX2(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS max+24(FP), Y14
	VXORPD       X13, X13, X13

sm8:
	CMPQ    CX, $8
	JL      smdone
	VMOVUPS (SI), Y0
	VSUBPS  Y14, Y0, Y0
	VGEXP(smwide, smexp)
	VMOVUPS      Y0, (DI)
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X0, X1, X1
	VMOVHLPS     X1, X1, X2
	VADDPS       X2, X1, X1
	VMOVSHDUP    X1, X2
	VADDSS       X2, X1, X1
	VCVTSS2SD    X1, X1, X1
	VADDSD       X1, X13, X13
	ADDQ         $32, SI
	ADDQ         $32, DI
	SUBQ         $8, CX
	JMP          sm8

smdone:
	VMOVSD X13, ret+32(FP)
	VZEROUPPER
	RET

// func vswigluAVX2(dst, x, gate *float32, n int)
// dst[i] = x[i] / (1 + e^(0-x[i])) * gate[i] for n a multiple of 8.
TEXT ·vswigluAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gate+16(FP), DX
	MOVQ n+24(FP), CX

sw8:
	CMPQ    CX, $8
	JL      swdone
	VMOVUPS (SI), Y10
	VXORPS  Y0, Y0, Y0
	VSUBPS  Y10, Y0, Y0
	VGEXP(swwide, swexp)
	VADDPS  VX_ONE, Y0, Y0
	VDIVPS  Y0, Y10, Y10
	VMULPS  (DX), Y10, Y10
	VMOVUPS Y10, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     sw8

swdone:
	VZEROUPPER
	RET

// func vsiluAVX2(dst, x *float32, n int)
// dst[i] = x[i] / (1 + e^(0-x[i])) for n a multiple of 8.
TEXT ·vsiluAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX

si8:
	CMPQ    CX, $8
	JL      sidone
	VMOVUPS (SI), Y10
	VXORPS  Y0, Y0, Y0
	VSUBPS  Y10, Y0, Y0
	VGEXP(siwide, siexp)
	VADDPS  VX_ONE, Y0, Y0
	VDIVPS  Y0, Y10, Y10
	VMOVUPS Y10, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     si8

sidone:
	VZEROUPPER
	RET
