//go:build !purego

#include "textflag.h"

// AVX2/FMA/F16C kernels of flash attention's F16 path (attn.go), and the
// vector e^x and F32->F16 conversion it uses. Each computes exactly what
// the primitives of vec_amd64.s it replaces compute, in the same order,
// only without a call per key: the scores are vecDotF16AVX2's sums, the
// value accumulation vecScaleF16AVX2's and vecMadF16AVX2's roundings.

// ROUND16(Y, X) rounds the eight floats of Y to fp16 and back, as storing
// an fp16 accumulator and loading it again does.
#define ROUND16(Y, X) \
	VCVTPS2PH $0, Y, X; \
	VCVTPH2PS X, Y

// func attnScoresF16AVX2(out, qf *float32, k *byte, stride uintptr, keys *int32, n, d, rows int, mvs *float32, newMax *bool, scale float32) (bad int, m float32)
// out[j] = the dot product of the d fp16 values at k + keys[j]*stride with
// qf (the query's fp16 values as floats), summed as vecDotF16AVX2 sums.
// With mvs, each score then goes on as attnRunningMax takes it (s =
// dot*scale + mvs[j], newMax[j] = s > M, out[j] = M-s on a new maximum,
// else s-M), M the running maximum, returned. A key not below rows stops
// it with bad = 1 before its row is read.
TEXT ·attnScoresF16AVX2(SB), NOSPLIT, $0-100
	MOVQ out+0(FP), DI
	MOVQ qf+8(FP), R8
	MOVQ k+16(FP), R9
	MOVQ stride+24(FP), R10
	MOVQ keys+32(FP), R11
	MOVQ n+40(FP), R12
	MOVQ d+48(FP), R13
	MOVQ mvs+64(FP), R14
	VMOVSS scale+80(FP), X13
	MOVL $0xff800000, AX
	VMOVD AX, X12 // M = -Inf
	XORQ BX, BX

skey:
	CMPQ BX, R12
	JE   sdone
	MOVLQSX (R11)(BX*4), AX
	CMPQ AX, rows+56(FP)
	JAE  sbad
	IMULQ R10, AX
	LEAQ  (R9)(AX*1), SI
	MOVQ  R8, DX
	MOVQ  R13, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

sloop32:
	CMPQ CX, $32
	JL   sloop8
	VCVTPH2PS (SI), Y4
	VCVTPH2PS 16(SI), Y5
	VCVTPH2PS 32(SI), Y6
	VCVTPH2PS 48(SI), Y7
	VFMADD231PS (DX), Y4, Y0
	VFMADD231PS 32(DX), Y5, Y1
	VFMADD231PS 64(DX), Y6, Y2
	VFMADD231PS 96(DX), Y7, Y3
	ADDQ $64, SI
	ADDQ $128, DX
	SUBQ $32, CX
	JMP  sloop32

sloop8:
	CMPQ CX, $8
	JL   sreduce
	VCVTPH2PS (SI), Y4
	VFMADD231PS (DX), Y4, Y0
	ADDQ $16, SI
	ADDQ $32, DX
	SUBQ $8, CX
	JMP  sloop8

sreduce:
	// vecDotF16AVX2's reduction, its two horizontal adds as shuffles
	// and adds in the same order: (x0+x1) + (x2+x3).
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDPS X1, X0, X0
	VMOVHLPS X0, X1, X1
	VADDSS X1, X0, X0

sloop1:
	TESTQ CX, CX
	JE    sscore
	MOVWLZX (SI), AX
	VMOVD AX, X4
	VCVTPH2PS X4, X4
	VFMADD231SS (DX), X4, X0
	ADDQ $2, SI
	ADDQ $4, DX
	DECQ CX
	JMP  sloop1

sscore:
	TESTQ R14, R14
	JE    sstore
	// s = dot*scale + mv (rounded apart); a new maximum when s > M.
	VMULSS X13, X0, X0
	VADDSS (R14)(BX*4), X0, X0
	VCMPSS $0x1e, X12, X0, X5
	VSUBSS X0, X12, X6
	VSUBSS X12, X0, X7
	VBLENDVPS X5, X6, X7, X7
	VBLENDVPS X5, X0, X12, X12
	VMOVAPS X7, X0
	VMOVD X5, AX
	ANDL $1, AX
	MOVQ newMax+72(FP), SI
	MOVB AX, (SI)(BX*1)

sstore:
	VMOVSS X0, (DI)(BX*4)
	INCQ BX
	JMP  skey

sbad:
	MOVQ $1, bad+88(FP)
	VZEROUPPER
	RET

sdone:
	MOVQ $0, bad+88(FP)
	VMOVSS X12, m+96(FP)
	VZEROUPPER
	RET

// ACCKEY checks key j against rows in R14 (to abad), loads its value row's
// address (plus the piece's offset R8) into SI and its exponential into
// Y14, and sets the flags for "a new maximum" (ZF clear). It uses AX.
#define ACCKEY \
	MOVLQSX (R11)(BX*4), AX; \
	CMPQ    AX, R14; \
	JAE     abad; \
	IMULQ   R10, AX; \
	ADDQ    R9, AX; \
	LEAQ    (AX)(R8*1), SI; \
	VBROADCASTSS (R12)(BX*4), Y14; \
	MOVBLZX (R13)(BX*1), AX; \
	TESTL   AX, AX

// ACC8(off, Y, X) is one register's step: Y = fp16(Y + v[off:off+8]*vs).
#define ACC8(off, Y, X) \
	VCVTPH2PS off(SI), Y8; \
	VFMADD231PS Y15, Y8, Y; \
	ROUND16(Y, X)

// OLDKEY and NEWKEY set the key's weights: vs = e and the sum S += e
// for a key below the maximum; for a new maximum ms = e (the caller
// scales), vs = 1 and S = S*e + 1, each rounded as the Go code rounds.
#define OLDKEY \
	VMOVAPS Y14, Y15; \
	VADDSS  X14, X11, X11

#define NEWKEY \
	VMOVAPS Y13, Y15; \
	VMULSS  X14, X11, X11; \
	VADDSS  X13, X11, X11

// func attnAccF16AVX2(acc *uint16, d int, v *byte, stride uintptr, keys *int32, ex *float32, newMax *bool, n, rows int) (bad int, sum float32)
// For each key j in turn, e = ex[j]: on a new maximum (newMax[j])
// acc = fp16(acc*e) and acc = fp16(acc + v_j), else acc = fp16(acc +
// v_j*e), v_j the d fp16 values at v + keys[j]*stride; sum is the
// softmax denominator over the same weights. Every element's chain over
// the keys is vecScaleF16AVX2's and vecMadF16AVX2's; the row is taken 64,
// then 8, then one element at a time, all keys for each piece, the
// piece's accumulators staying in registers (each piece also runs the
// sum's scalar chain, hidden under its vector work). d > 0; a key not
// below rows stops it with bad = 1 before its row is read.
TEXT ·attnAccF16AVX2(SB), NOSPLIT, $0-84
	MOVQ acc+0(FP), DI
	MOVQ d+8(FP), CX
	MOVQ v+16(FP), R9
	MOVQ stride+24(FP), R10
	MOVQ keys+32(FP), R11
	MOVQ ex+40(FP), R12
	MOVQ newMax+48(FP), R13
	MOVQ n+56(FP), DX
	MOVQ rows+64(FP), R14
	MOVL $0x3f800000, AX
	VMOVD AX, X13
	VBROADCASTSS X13, Y13
	XORQ R8, R8 // the piece's byte offset in a value row

a64:
	CMPQ CX, $64
	JL   a8
	VCVTPH2PS (DI), Y0
	VCVTPH2PS 16(DI), Y1
	VCVTPH2PS 32(DI), Y2
	VCVTPH2PS 48(DI), Y3
	VCVTPH2PS 64(DI), Y4
	VCVTPH2PS 80(DI), Y5
	VCVTPH2PS 96(DI), Y6
	VCVTPH2PS 112(DI), Y7
	VXORPS X11, X11, X11
	XORQ BX, BX

a64key:
	CMPQ BX, DX
	JE   a64store
	ACCKEY
	JNE  a64new
	OLDKEY

a64mad:
	ACC8(0, Y0, X0)
	ACC8(16, Y1, X1)
	ACC8(32, Y2, X2)
	ACC8(48, Y3, X3)
	ACC8(64, Y4, X4)
	ACC8(80, Y5, X5)
	ACC8(96, Y6, X6)
	ACC8(112, Y7, X7)
	INCQ BX
	JMP  a64key

a64new:
	NEWKEY
	VMULPS Y14, Y0, Y0
	VMULPS Y14, Y1, Y1
	VMULPS Y14, Y2, Y2
	VMULPS Y14, Y3, Y3
	VMULPS Y14, Y4, Y4
	VMULPS Y14, Y5, Y5
	VMULPS Y14, Y6, Y6
	VMULPS Y14, Y7, Y7
	ROUND16(Y0, X0)
	ROUND16(Y1, X1)
	ROUND16(Y2, X2)
	ROUND16(Y3, X3)
	ROUND16(Y4, X4)
	ROUND16(Y5, X5)
	ROUND16(Y6, X6)
	ROUND16(Y7, X7)
	JMP a64mad

a64store:
	VCVTPS2PH $0, Y0, (DI)
	VCVTPS2PH $0, Y1, 16(DI)
	VCVTPS2PH $0, Y2, 32(DI)
	VCVTPS2PH $0, Y3, 48(DI)
	VCVTPS2PH $0, Y4, 64(DI)
	VCVTPS2PH $0, Y5, 80(DI)
	VCVTPS2PH $0, Y6, 96(DI)
	VCVTPS2PH $0, Y7, 112(DI)
	ADDQ $128, DI
	ADDQ $128, R8
	SUBQ $64, CX
	JMP  a64

a8:
	CMPQ CX, $8
	JL   a1
	VCVTPH2PS (DI), Y0
	VXORPS X11, X11, X11
	XORQ BX, BX

a8key:
	CMPQ BX, DX
	JE   a8store
	ACCKEY
	JNE  a8new
	OLDKEY

a8mad:
	ACC8(0, Y0, X0)
	INCQ BX
	JMP  a8key

a8new:
	NEWKEY
	VMULPS Y14, Y0, Y0
	ROUND16(Y0, X0)
	JMP a8mad

a8store:
	VCVTPS2PH $0, Y0, (DI)
	ADDQ $16, DI
	ADDQ $16, R8
	SUBQ $8, CX
	JMP  a8

a1:
	TESTQ CX, CX
	JE    adone
	MOVWLZX (DI), AX
	VMOVD AX, X0
	VCVTPH2PS X0, X0
	VXORPS X11, X11, X11
	XORQ BX, BX

a1key:
	CMPQ BX, DX
	JE   a1store
	ACCKEY
	JNE  a1new
	OLDKEY

a1mad:
	MOVWLZX (SI), AX
	VMOVD AX, X8
	VCVTPH2PS X8, X8
	VFMADD231SS X15, X8, X0
	VCVTPS2PH $0, X0, X0
	VCVTPH2PS X0, X0
	INCQ BX
	JMP  a1key

a1new:
	NEWKEY
	VMULSS X14, X0, X0
	VCVTPS2PH $0, X0, X0
	VCVTPH2PS X0, X0
	JMP a1mad

a1store:
	VCVTPS2PH $0, X0, X0
	VMOVD X0, AX
	MOVW AX, (DI)
	ADDQ $2, DI
	ADDQ $2, R8
	DECQ CX
	JMP  a1

abad:
	MOVQ $1, bad+72(FP)
	VZEROUPPER
	RET

adone:
	MOVQ $0, bad+72(FP)
	VMOVSS X11, sum+80(FP)
	VZEROUPPER
	RET

// The constants of expf (elementwise.go) as float64, each four times (a
// whole register's operand), and its range in float32: above hi e^x
// overflows, below lo it rounds to zero.
DATA expfc<>+0(SB)/8, $0x3ff71547652b82fe // log2(e)
DATA expfc<>+8(SB)/8, $0x3ff71547652b82fe
DATA expfc<>+16(SB)/8, $0x3ff71547652b82fe
DATA expfc<>+24(SB)/8, $0x3ff71547652b82fe
DATA expfc<>+32(SB)/8, $0x3fe0000000000000 // 0.5
DATA expfc<>+40(SB)/8, $0x3fe0000000000000
DATA expfc<>+48(SB)/8, $0x3fe0000000000000
DATA expfc<>+56(SB)/8, $0x3fe0000000000000
DATA expfc<>+64(SB)/8, $0x3fe62e42fee00000 // ln2 hi
DATA expfc<>+72(SB)/8, $0x3fe62e42fee00000
DATA expfc<>+80(SB)/8, $0x3fe62e42fee00000
DATA expfc<>+88(SB)/8, $0x3fe62e42fee00000
DATA expfc<>+96(SB)/8, $0x3dea39ef35793c76 // ln2 lo
DATA expfc<>+104(SB)/8, $0x3dea39ef35793c76
DATA expfc<>+112(SB)/8, $0x3dea39ef35793c76
DATA expfc<>+120(SB)/8, $0x3dea39ef35793c76
DATA expfc<>+128(SB)/8, $0x3efa01a01a01a01a // 1/40320
DATA expfc<>+136(SB)/8, $0x3efa01a01a01a01a
DATA expfc<>+144(SB)/8, $0x3efa01a01a01a01a
DATA expfc<>+152(SB)/8, $0x3efa01a01a01a01a
DATA expfc<>+160(SB)/8, $0x3f2a01a01a01a01a // 1/5040
DATA expfc<>+168(SB)/8, $0x3f2a01a01a01a01a
DATA expfc<>+176(SB)/8, $0x3f2a01a01a01a01a
DATA expfc<>+184(SB)/8, $0x3f2a01a01a01a01a
DATA expfc<>+192(SB)/8, $0x3f56c16c16c16c17 // 1/720
DATA expfc<>+200(SB)/8, $0x3f56c16c16c16c17
DATA expfc<>+208(SB)/8, $0x3f56c16c16c16c17
DATA expfc<>+216(SB)/8, $0x3f56c16c16c16c17
DATA expfc<>+224(SB)/8, $0x3f81111111111111 // 1/120
DATA expfc<>+232(SB)/8, $0x3f81111111111111
DATA expfc<>+240(SB)/8, $0x3f81111111111111
DATA expfc<>+248(SB)/8, $0x3f81111111111111
DATA expfc<>+256(SB)/8, $0x3fa5555555555555 // 1/24
DATA expfc<>+264(SB)/8, $0x3fa5555555555555
DATA expfc<>+272(SB)/8, $0x3fa5555555555555
DATA expfc<>+280(SB)/8, $0x3fa5555555555555
DATA expfc<>+288(SB)/8, $0x3fc5555555555555 // 1/6
DATA expfc<>+296(SB)/8, $0x3fc5555555555555
DATA expfc<>+304(SB)/8, $0x3fc5555555555555
DATA expfc<>+312(SB)/8, $0x3fc5555555555555
DATA expfc<>+320(SB)/8, $0x3fe0000000000000 // 1/2
DATA expfc<>+328(SB)/8, $0x3fe0000000000000
DATA expfc<>+336(SB)/8, $0x3fe0000000000000
DATA expfc<>+344(SB)/8, $0x3fe0000000000000
DATA expfc<>+352(SB)/8, $0x3ff0000000000000 // 1
DATA expfc<>+360(SB)/8, $0x3ff0000000000000
DATA expfc<>+368(SB)/8, $0x3ff0000000000000
DATA expfc<>+376(SB)/8, $0x3ff0000000000000
DATA expfc<>+384(SB)/8, $1023 // the exponent bias
DATA expfc<>+392(SB)/8, $1023
DATA expfc<>+400(SB)/8, $1023
DATA expfc<>+408(SB)/8, $1023
DATA expfc<>+416(SB)/4, $0x42b17218 // hi: float32(88.72284)
DATA expfc<>+420(SB)/4, $0xc2cff1b4 // lo: float32(-103.97208)
DATA expfc<>+424(SB)/4, $0x7f800000 // +Inf
GLOBL expfc<>(SB), RODATA|NOPTR, $428

// HORNER(i) is one step of expf's polynomial: Y2 = c_i + r*Y2, the
// product and the sum rounded apart as the Go code's are.
#define HORNER(i) \
	VMULPD Y1, Y2, Y2; \
	VADDPD expfc<>+i(SB), Y2, Y2

// func expfAVX2(dst, src *float32, n int)
// dst[i] = expf(src[i]) bit for bit, for n a multiple of 4: expf's
// float64 arithmetic, four lanes at a time, each operation rounded as
// the scalar code rounds it (no fused multiply-adds), its special cases
// blended in at the end.
TEXT ·expfAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS expfc<>+416(SB), X10
	VBROADCASTSS expfc<>+420(SB), X11
	VBROADCASTSS expfc<>+424(SB), X12
	VMOVUPD expfc<>+384(SB), Y13

eloop:
	CMPQ CX, $4
	JL   edone
	VMOVUPS (SI), X0
	VCVTPS2PD X0, Y0
	// n = floor(x*log2e + 0.5)
	VMULPD expfc<>+0(SB), Y0, Y3
	VADDPD expfc<>+32(SB), Y3, Y3
	VROUNDPD $1, Y3, Y3
	// r = x - n*ln2hi - n*ln2lo
	VMULPD expfc<>+64(SB), Y3, Y4
	VSUBPD Y4, Y0, Y1
	VMULPD expfc<>+96(SB), Y3, Y4
	VSUBPD Y4, Y1, Y1
	// p = 1 + r*(1 + r*(1/2 + ... + r*(1/40320)))
	VMULPD expfc<>+128(SB), Y1, Y2
	VADDPD expfc<>+160(SB), Y2, Y2
	HORNER(192)
	HORNER(224)
	HORNER(256)
	HORNER(288)
	HORNER(320)
	HORNER(352)
	HORNER(352)
	// p * 2^n, rounded to float32
	VCVTTPD2DQY Y3, X3
	VPMOVSXDQ X3, Y3
	VPADDQ Y13, Y3, Y3
	VPSLLQ $52, Y3, Y3
	VMULPD Y3, Y2, Y2
	VCVTPD2PSY Y2, X2
	// NaN stays x, above hi +Inf, below lo 0.
	VMOVUPS (SI), X0
	VCMPPS $0x1e, X10, X0, X4
	VBLENDVPS X4, X12, X2, X2
	VCMPPS $0x11, X11, X0, X4
	VANDNPS X2, X4, X2
	VCMPPS $3, X0, X0, X4
	VBLENDVPS X4, X0, X2, X2
	VMOVUPS X2, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JMP  eloop

edone:
	VZEROUPPER
	RET

// func vecF32ToF16AVX2(dst *uint16, src *float32, n int)
// dst[i] = quant.FP32ToFP16(src[i]) for n a multiple of 8: the hardware's
// rounding to nearest even, which is the scalar code's for every number;
// a NaN lane is replaced first by the quiet NaN of its sign with no
// payload, which converts to the scalar code's sign|0x7e00.
TEXT ·vecF32ToF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL $0x80000000, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x7fc00000, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

hloop:
	CMPQ CX, $8
	JL   hdone
	VMOVUPS (SI), Y0
	VCMPPS $3, Y0, Y0, Y1
	VANDPS Y14, Y0, Y2
	VORPS  Y15, Y2, Y2
	VBLENDVPS Y1, Y2, Y0, Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JMP  hloop

hdone:
	VZEROUPPER
	RET
