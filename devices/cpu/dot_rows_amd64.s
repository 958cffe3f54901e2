//go:build !purego

#include "dot_amd64.h"

// Four-row kernels: one activation column against weight rows, for
// products with a single column. They read four rows at once, and rows
// far apart: row g of each quarter of the range, so that the core fetches
// four long sequential streams from memory, which it does markedly faster
// than one (1.6x for F32 rows of 4096 on AMD EPYC, 2x for Q8_0), and the
// column's block scales are converted once per call instead of once per
// row. Each row runs exactly the float sequence of its type's single
// kernel (integer parts are exact whatever instructions make them), so
// each result is that kernel's bit for bit.
//
// dotTRowsAVX2(n, x, stride, gap, ngroups, y, dy, out, ogap) computes, for
// g < ngroups and r < 4, dotTAVX2(n, x + g*stride + r*gap, y) into the
// float at out + 4g + r*ogap; dy is scratch (rowsScratch floats).
//
// Registers of the Q8_0-activation kernels: R8..R11 the group's rows, R13
// the byte offset of the current blocks in them, SI the current row's
// blocks, DI the column's, R12 the column's scales as floats, CX the
// blocks left, BX the groups left, DX the stride; 0(SP) the output.

// RSCALE2 is SCALE2 from the converted column scales at 0(R12): the two
// products xd*dy in every lane of Y11 and Y12, using AX and X13.
#define RSCALE2(xo1) \
	MOVWLZX      0(SI), AX;             \
	VMOVD        AX, X12;               \
	VPINSRW      $1, xo1(SI), X12, X12; \
	VCVTPH2PS    X12, X12;              \
	VMULPS       0(R12), X12, X12;      \
	VBROADCASTSS X12, Y11;              \
	VMOVSHDUP    X12, X13;              \
	VBROADCASTSS X13, Y12

#define RPAIR(ROW, ACC, LOAD, XB) \
	LEAQ (ROW)(R13*1), SI; \
	LOAD(0, Y4, Y5);       \
	LOAD(XB, Y6, Y7);      \
	RSCALE2(XB);           \
	PAIR(DI, ACC)

#define RONE(ROW, ACC, LOAD) \
	LEAQ         (ROW)(R13*1), SI;     \
	LOAD(0, Y4, Y5);                   \
	H1(0(SI), X11);                    \
	VMULSS       0(R12), X11, X11;     \
	VBROADCASTSS X11, Y11;             \
	Q8DOT(Y4, Y5, 2(DI), Y8, Y9);      \
	VFMADD231PS  Y11, Y9, ACC

#define Q80ROWS(SETUP, LOAD, XB) \
	MOVQ      out+56(FP), AX;        \
	MOVQ      AX, 0(SP);             \
	MOVQ      n+0(FP), CX;           \
	MOVQ      y+40(FP), DI;          \
	MOVQ      dy+48(FP), R12;        \
conv:                                \
	TESTQ     CX, CX;                \
	JZ        start;                 \
	H1(0(DI), X12);                  \
	VMOVSS    X12, 0(R12);           \
	ADDQ      $34, DI;               \
	ADDQ      $4, R12;               \
	DECQ      CX;                    \
	JMP       conv;                  \
start:                               \
	MOVQ      x+8(FP), R8;           \
	MOVQ      stride+16(FP), DX;     \
	MOVQ      ngroups+32(FP), BX;    \
	SETUP;                           \
group:                               \
	TESTQ     BX, BX;                \
	JZ        done;                  \
	RGROUP;                          \
	MOVQ      n+0(FP), CX;           \
	MOVQ      y+40(FP), DI;          \
	MOVQ      dy+48(FP), R12;        \
pair:                                \
	CMPQ      CX, $2;                \
	JLT       one;                   \
	RPAIR(R8, Y0, LOAD, XB);         \
	RPAIR(R9, Y1, LOAD, XB);         \
	RPAIR(R10, Y2, LOAD, XB);        \
	RPAIR(R11, Y3, LOAD, XB);        \
	ADDQ      $(2*XB), R13;          \
	ADDQ      $68, DI;               \
	ADDQ      $8, R12;               \
	SUBQ      $2, CX;                \
	JMP       pair;                  \
one:                                 \
	CMPQ      CX, $1;                \
	JLT       groupend;              \
	RONE(R8, Y0, LOAD);              \
	RONE(R9, Y1, LOAD);              \
	RONE(R10, Y2, LOAD);             \
	RONE(R11, Y3, LOAD);             \
groupend:                            \
	RSTORE4;                         \
	ADDQ      DX, R8;                \
	DECQ      BX;                    \
	JMP       group;                 \
done:                                \
	VZEROUPPER;                      \
	RET

// func dotQ8_0RowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ8_0RowsAVX2(SB), NOSPLIT, $8-72
	Q80ROWS(NOSETUP, LOADQ8_0, 34)

// func dotQ4_0RowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ4_0RowsAVX2(SB), NOSPLIT, $8-72
	Q80ROWS(NOSETUP, LOADQ4_0, 18)

// func dotQ5_0RowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotQ5_0RowsAVX2(SB), NOSPLIT, $8-72
	Q80ROWS(NOSETUP, LOADQ5_0, 22)

// func dotIQ4_NLRowsAVX2(n int, x unsafe.Pointer, stride uintptr, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
TEXT ·dotIQ4_NLRowsAVX2(SB), NOSPLIT, $8-72
	Q80ROWS(TABLE(iq4nl), LOADIQ4NL, 18)
