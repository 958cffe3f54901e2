// Package cpuid reports the x86 features golang.org/x/sys/cpu (at the
// version this module requires) does not: F16C, the half-precision
// conversions the CPU kernels' assembly uses beside AVX2 and FMA.
package cpuid

// HasF16C reports whether the processor converts between half and single
// precision (VCVTPH2PS, VCVTPS2PH). It is false off amd64 and in purego
// builds. The caller checks AVX support (the OS saving YMM state)
// separately, as with cpu.X86.HasAVX2.
func HasF16C() bool { return hasF16C }
