// R16 is _mm512_reduce_add_ps as GCC 11 compiles it in ggml's
// sapphirerapids build (read in the build's disassembly): the upper 256
// bits added to the lower, the upper 128 of that to the lower, the two
// 64-bit halves (lanes 0+2, 1+3), then lane 0 + lane 1. It does so for the
// accumulator Z (Y and X its lower halves), leaving the sum in X's low
// lane; T names a temporary, TX its 128-bit half.
#define R16(Z, Y, X, T, TX) \
	VEXTRACTF64X4 $1, Z, T;  \
	VADDPS        Y, T, Y;   \
	VEXTRACTF32X4 $1, Y, TX; \
	VADDPS        X, TX, X;  \
	VPERMILPS     $0x4e, X, TX; \
	VADDPS        X, TX, X;  \
	VMOVSHDUP     X, TX;     \
	VADDSS        TX, X, X
