// NEON encodings for quantize_arm64.s and fromfloat_arm64.s.
//
// The Go assembler has no mnemonics for NEON's float arithmetic and most
// of its lane-wise integer forms, so they are WORDs. Each macro takes
// register numbers (V0-V31 as 0-31) in the Go assembler's order, sources
// first and the destination last: FSUB4S(m, n, d) is d = n - m lane by
// lane. 4S is four float32s or int32s, 16B sixteen bytes. (devices/cpu
// has its own table: the go command's cache tracks only a package's own
// headers, so one package cannot include another's.)

#define ENC3(op, m, n, d) WORD $((op) | ((m)<<16) | ((n)<<5) | (d))
#define ENC2(op, n, d) WORD $((op) | ((n)<<5) | (d))

#define FADD4S(m, n, d) ENC3(0x4E20D400, m, n, d)
#define FSUB4S(m, n, d) ENC3(0x4EA0D400, m, n, d)
#define FMUL4S(m, n, d) ENC3(0x6E20DC00, m, n, d)
#define FDIV4S(m, n, d) ENC3(0x6E20FC00, m, n, d)
#define FMAX4S(m, n, d) ENC3(0x4E20F400, m, n, d)
// FCMEQ4S: all ones in a lane where n == m, else zeros.
#define FCMEQ4S(m, n, d) ENC3(0x4E20E400, m, n, d)
#define FABS4S(n, d) ENC2(0x4EA0F800, n, d)
// FMAXV4S: the scalar S(d) = the largest of n's lanes, NaN if one is.
#define FMAXV4S(n, d) ENC2(0x6E30F800, n, d)

// Float to int32 lanes: FCVTZS truncates toward zero, FCVTAS rounds to
// nearest with ties away from zero (C's roundf), FCVTNS to nearest with
// ties to even. SCVTF is int32 to float.
#define FCVTZS4S(n, d) ENC2(0x4EA1B800, n, d)
#define FCVTAS4S(n, d) ENC2(0x4E21C800, n, d)
#define FCVTNS4S(n, d) ENC2(0x4E21A800, n, d)
#define SCVTF4S(n, d) ENC2(0x4E21D800, n, d)

#define AND16B(m, n, d) ENC3(0x4E201C00, m, n, d)
#define SUB4S(m, n, d) ENC3(0x6EA08400, m, n, d)
#define SMIN4S(m, n, d) ENC3(0x4EA06C00, m, n, d)
#define SMAX4S(m, n, d) ENC3(0x4EA06400, m, n, d)
// XTN keeps the low half of each lane: 4S to the lower 4H of d (clearing
// its upper half), XTN2 to the upper 4H; 8H to 8B likewise.
#define XTN4H(n, d) ENC2(0x0E612800, n, d)
#define XTN24H(n, d) ENC2(0x4E612800, n, d)
#define XTN8B(n, d) ENC2(0x0E212800, n, d)
#define XTN28B(n, d) ENC2(0x4E212800, n, d)
// ORN16B: d = n | ^m.
#define ORN16B(m, n, d) ENC3(0x4EE01C00, m, n, d)
#define UMIN16B(m, n, d) ENC3(0x6E206C00, m, n, d)
// UMINV16B: the scalar B(d) = the smallest of n's bytes.
#define UMINV16B(n, d) ENC2(0x6E31A800, n, d)
// ADDV4S: the scalar S(d) = the sum of n's int32 lanes. SCVTFS converts
// the int32 S(n) to the float S(d).
#define ADDV4S(n, d) ENC2(0x4EB1B800, n, d)
#define SCVTFS(n, d) ENC2(0x5E21D800, n, d)
// SQXTN narrows with signed saturation: 4S to the lower 4H of d (clearing
// its upper half), SQXTN2 to the upper 4H; 8H to 8B likewise.
#define SQXTN4H(n, d) ENC2(0x0E614800, n, d)
#define SQXTN28H(n, d) ENC2(0x4E614800, n, d)
#define SQXTN8B(n, d) ENC2(0x0E214800, n, d)
#define SQXTN216B(n, d) ENC2(0x4E214800, n, d)
