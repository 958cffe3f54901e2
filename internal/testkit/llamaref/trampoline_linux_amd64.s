#include "textflag.h"

// structCall is a C-ABI function (System V AMD64) that purego.SyscallN
// calls: structCall(fn, arg0, src, size) calls fn(arg0, S), where S is a
// struct of size bytes (a multiple of 8) at src that the ABI passes in
// memory, on the stack: every struct over 16 bytes. purego's own struct
// support places at most 9 stack words, too few for llama's 80- and
// 160-byte parameter structs.
TEXT structCall<>(SB), NOSPLIT|NOFRAME, $0
	PUSHQ BP
	MOVQ  SP, BP
	MOVQ  DI, R10        // fn
	MOVQ  DX, R11        // src
	MOVQ  CX, AX         // size
	ADDQ  $15, CX
	ANDQ  $-16, CX       // keep SP 16-byte aligned at the call
	SUBQ  CX, SP
	XORQ  R8, R8

copy:
	CMPQ R8, AX
	JAE  call
	MOVQ (R11)(R8*1), R9
	MOVQ R9, (SP)(R8*1)
	ADDQ $8, R8
	JMP  copy

call:
	MOVQ SI, DI          // arg0 becomes fn's first integer argument
	CALL R10
	MOVQ BP, SP
	POPQ BP
	RET

// structCallABI0 holds structCall's address for purego.SyscallN.
DATA ·structCallABI0+0(SB)/8, $structCall<>(SB)
GLOBL ·structCallABI0(SB), RODATA, $8
