//go:build !purego

package cpu

import "unsafe"

// The declarations of the neon and neon-dotprod levels' vec_dot kernels
// (level_neon_arm64.go and level_neondotprod_arm64.go list them). dotTNEON(n, x, y) is the dot
// product of n units (blocks; elements for F32, F16 and BF16) of type T at
// x with n units of its vec_dot type at y; dotTSDOT is the same with
// dotprod.

//go:noescape
func dotF32NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotF16NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotBF16NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ8_0NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ8_0SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_0NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_0SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_0NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_0SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotIQ4_NLNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotIQ4_NLSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotMXFP4NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotMXFP4SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_1NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_1SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_1NEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_1SDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ6_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ4_KSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ6_KSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ2_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ3_KNEON(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ5_KSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ2_KSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ3_KSDOT(n int, x, y unsafe.Pointer) float32

//go:noescape
func dotQ8_0x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ8_0x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_0x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_0x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_0x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_0x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotIQ4_NLx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotIQ4_NLx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotMXFP4x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotMXFP4x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_1x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_1x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_1x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_1x4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotF32x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotF16x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotBF16x4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_Kx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ4_Kx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_Kx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ5_Kx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ6_Kx4NEON(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)

//go:noescape
func dotQ6_Kx4SDOT(n int, x unsafe.Pointer, y *[4]unsafe.Pointer, out *[4]float32)
