//go:build !purego

#include "textflag.h"
#include "avx512_amd64.h"

// ggml's vector e^x as its sapphirerapids (AVX-512F/DQ) build computes it
// (ggml_v_expf, ggml_v_silu and ggml_vec_soft_max_f32 of the upstream ggml
// backend's vec.h/vec.cpp, 2025, as GCC 11 compiled them there: read in
// the build's disassembly), 16 lanes at a time: the same reduction by
// ln 2 as the AVX2 variant (vexp.go), but the polynomial is
// 1 + P4 b + u (P2 b + P3) + u^2 (P0 b + P1) with the 1 fused into P4 b,
// and 2^n is applied by VSCALEFPS (rounded once, so without AVX2's
// two-step scaling), 0 or +Inf past |n| > 192. The loops take whole
// groups of 16; the callers give the leftovers to libcExpf as ggml's
// scalar loops give them to the C library.

DATA vx512c<>+0(SB)/4, $0x3fb8aa3b  // log2 e (0x1.715476p+0)
DATA vx512c<>+4(SB)/4, $0x4b400000  // 1.5*2^23: adding and subtracting it rounds to an integer
DATA vx512c<>+8(SB)/4, $0xcb400000  // -1.5*2^23
DATA vx512c<>+12(SB)/4, $0x3f317200 // ln 2, high part (0x1.62e4p-1)
DATA vx512c<>+16(SB)/4, $0x35bfbe8e // ln 2, low part (0x1.7f7d1cp-20)
DATA vx512c<>+20(SB)/4, $0x7fffffff // clears the sign
DATA vx512c<>+24(SB)/4, $0x43400000 // 192: beyond, the result is 0 or +Inf
DATA vx512c<>+28(SB)/4, $0x3f7ffff6 // P4 (0x1.ffffecp-1)
DATA vx512c<>+32(SB)/4, $0x3f800000 // 1
DATA vx512c<>+36(SB)/4, $0x3e2aaf33 // P2 (0x1.555e66p-3)
DATA vx512c<>+40(SB)/4, $0x3efffedb // P3 (0x1.fffdb6p-2)
DATA vx512c<>+44(SB)/4, $0x3c072010 // P0 (0x1.0e4020p-7)
DATA vx512c<>+48(SB)/4, $0x3d2b9f17 // P1 (0x1.573e2ep-5)
DATA vx512c<>+52(SB)/4, $0x7f800000 // +Inf
GLOBL vx512c<>(SB), RODATA|NOPTR, $56

// VX512CONSTS broadcasts the constants into Z18..Z31, in the order above.
#define VX512CONSTS \
	VBROADCASTSS vx512c<>+0(SB), Z18;  \
	VBROADCASTSS vx512c<>+4(SB), Z19;  \
	VBROADCASTSS vx512c<>+8(SB), Z20;  \
	VBROADCASTSS vx512c<>+12(SB), Z21; \
	VBROADCASTSS vx512c<>+16(SB), Z22; \
	VBROADCASTSS vx512c<>+20(SB), Z23; \
	VBROADCASTSS vx512c<>+24(SB), Z24; \
	VBROADCASTSS vx512c<>+28(SB), Z25; \
	VBROADCASTSS vx512c<>+32(SB), Z26; \
	VBROADCASTSS vx512c<>+36(SB), Z27; \
	VBROADCASTSS vx512c<>+40(SB), Z28; \
	VBROADCASTSS vx512c<>+44(SB), Z29; \
	VBROADCASTSS vx512c<>+48(SB), Z30; \
	VBROADCASTSS vx512c<>+52(SB), Z31

// VEXP16 sets Z0 to e^Z0 (VX512CONSTS loaded; uses Z1..Z6, K1, K2); done
// names a label unique in the function.
#define VEXP16(done) \
	VMOVAPS      Z0, Z1;             \
	VFMADD132PS  Z18, Z19, Z1;       \
	VADDPS       Z20, Z1, Z1;        \
	VFNMADD231PS Z21, Z1, Z0;        \
	VANDPS       Z23, Z1, Z2;        \
	VCMPPS       $0x1e, Z24, Z2, K1; \
	VFNMADD231PS Z22, Z1, Z0;        \
	VMULPS       Z0, Z0, Z3;         \
	VMOVAPS      Z25, Z4;            \
	VFMADD132PS  Z0, Z26, Z4;        \
	VMOVAPS      Z27, Z5;            \
	VFMADD132PS  Z0, Z28, Z5;        \
	VFMADD132PS  Z29, Z30, Z0;       \
	VFMADD132PS  Z3, Z5, Z0;         \
	VFMADD132PS  Z3, Z4, Z0;         \
	VSCALEFPS    Z1, Z0, Z0;         \
	KORTESTW     K1, K1;             \
	JEQ          done;               \
	VXORPS       Z6, Z6, Z6;         \
	VCMPPS       $0x12, Z6, Z1, K2;  \
	VBLENDMPS    Z6, Z31, K2, Z1;    \
	VMOVAPS      Z1, K1, Z0;         \
done:

// VSILU16 sets Z10 to silu of the 16 floats at SI, x / (1 + e^(0-x))
// (Z17 zero; uses Z0..Z6, K1, K2); done as for VEXP16.
#define VSILU16(done) \
	VMOVUPS (SI), Z10;  \
	VSUBPS  Z10, Z17, Z0; \
	VEXP16(done);       \
	VADDPS  Z26, Z0, Z0; \
	VDIVPS  Z0, Z10, Z10

// func vsoftmaxAVX512(dst, src *float32, n int, max float32) float64
// dst[i] = e^(src[i]-max) for n a multiple of 16; returns the sum of each
// group's float32 sum (R16) in float64, group after group.
TEXT ·vsoftmaxAVX512(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS max+24(FP), Z17
	VX512CONSTS
	VXORPD       X13, X13, X13

sm16:
	CMPQ    CX, $16
	JL      smdone
	VMOVUPS (SI), Z0
	VSUBPS  Z17, Z0, Z0
	VEXP16(smexp)
	VMOVUPS      Z0, (DI)
	R16(Z0, Y0, X0, Y1, X1)
	VCVTSS2SD    X0, X0, X0
	VADDSD       X0, X13, X13
	ADDQ         $64, SI
	ADDQ         $64, DI
	SUBQ         $16, CX
	JMP          sm16

smdone:
	VMOVSD X13, ret+32(FP)
	VZEROUPPER
	RET

// func vswigluAVX512(dst, x, gate *float32, n int)
// dst[i] = x[i] / (1 + e^(0-x[i])) * gate[i] for n a multiple of 16.
TEXT ·vswigluAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gate+16(FP), DX
	MOVQ n+24(FP), CX
	VX512CONSTS
	VXORPS Z17, Z17, Z17

sw16:
	CMPQ    CX, $16
	JL      swdone
	VSILU16(swexp)
	VMULPS  (DX), Z10, Z10
	VMOVUPS Z10, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     sw16

swdone:
	VZEROUPPER
	RET

// func vsiluAVX512(dst, x *float32, n int)
// dst[i] = x[i] / (1 + e^(0-x[i])) for n a multiple of 16.
TEXT ·vsiluAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VX512CONSTS
	VXORPS Z17, Z17, Z17

si16:
	CMPQ    CX, $16
	JL      sidone
	VSILU16(siexp)
	VMOVUPS Z10, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     si16

sidone:
	VZEROUPPER
	RET
