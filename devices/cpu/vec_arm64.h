// Encodings the vector primitives' NEON kernels need beyond dot_arm64.h's
// (whose conventions they keep: register numbers, sources first, the
// destination last). The float64 forms serve e^x and sincos, whose
// portable versions compute in float64.

#include "dot_arm64.h"

// Double arithmetic (2 x float64): FADD2D(m, n, d) is d = n + m, FSUB2D
// d = n - m, FMUL2D d = n*m.
#define FADD2D(m, n, d) ENC3(0x4E60D400, m, n, d)
#define FSUB2D(m, n, d) ENC3(0x4EE0D400, m, n, d)
#define FMUL2D(m, n, d) ENC3(0x6E60DC00, m, n, d)
#define FABS2D(n, d) ENC2(0x4EE0F800, n, d)
// FRINTM2D: floor, to an integral double.
#define FRINTM2D(n, d) ENC2(0x4E619800, n, d)

// FNEG4S: d = -n for four floats (the sign flipped, NaNs included).
#define FNEG4S(n, d) ENC2(0x6EA0F800, n, d)

// Conversions between doubles, floats and 64-bit integers. FCVTZS2D and
// FCVTZU2D truncate to signed and unsigned integers; FCVTL2D widens the
// lower two floats of n (FCVTL22D the upper two); FCVTN2S narrows two
// doubles to the lower floats of d (FCVTN24S to the upper ones, keeping
// the lower), rounding to nearest even.
#define FCVTZS2D(n, d) ENC2(0x4EE1B800, n, d)
#define FCVTZU2D(n, d) ENC2(0x6EE1B800, n, d)
#define UCVTF2D(n, d) ENC2(0x6E61D800, n, d)
#define FCVTL2D(n, d) ENC2(0x0E617800, n, d)
#define FCVTL22D(n, d) ENC2(0x4E617800, n, d)
#define FCVTN2S(n, d) ENC2(0x0E616800, n, d)
#define FCVTN24S(n, d) ENC2(0x4E616800, n, d)

// Comparisons, all ones in a lane where true (false for NaN):
// FCMGT4S(m, n, d) is d = n > m; FCMGTZ2D(n, d) is d = n > 0.
#define FCMGT4S(m, n, d) ENC3(0x6EA0E400, m, n, d)
#define FCMEQ4S(m, n, d) ENC3(0x4E20E400, m, n, d)
#define FCMGT2D(m, n, d) ENC3(0x6EE0E400, m, n, d)
#define FCMGTZ2D(n, d) ENC2(0x4EE0C800, n, d)

// 64-bit integer lanes: add, shift left, arithmetic shift right by s.
#define ADD2D(m, n, d) ENC3(0x4EE08400, m, n, d)
#define SHL2D(s, n, d) WORD $(0x4F405400 | ((s)<<16) | ((n)<<5) | (d))
#define SSHR2D(s, n, d) WORD $(0x4F000400 | ((128-(s))<<16) | ((n)<<5) | (d))

// VMOV16B(n, d): V(d) = V(n) (ORR with itself).
#define VMOV16B(n, d) ENC3(0x4EA01C00, n, n, d)
// ORN16B(m, n, d): V(d) = V(n) | ^V(m).
#define ORN16B(m, n, d) ENC3(0x4EE01C00, m, n, d)

// ROUNDH(a, t) rounds the four floats of V(a) to fp16 and back (through
// V(t)), as storing an fp16 accumulator and loading it again does.
#define ROUNDH(a, t) \
	FCVTN4H(a, t); \
	FCVTL4S(t, a)
