//go:build !purego

package cpu

import (
	"testing"
	"unsafe"
)

// BenchmarkAMXKernel times one tile kernel call of 48 steps by 16 columns
// (zero operands), per step.
func BenchmarkAMXKernel(b *testing.B) {
	if !levelAMX.supported() {
		b.Skip()
	}
	const steps = 48
	a := make([]byte, 16*36*steps+64)
	w := make([]byte, steps*640)
	aux := make([]byte, steps*128)
	var c [2048]byte
	out := make([]float32, 256)
	var cfg [64]byte
	setTileConfig(&cfg, 16, 32)
	b.ResetTimer()
	for range b.N {
		amxDotSU32(unsafe.Pointer(&cfg), steps, 1, 36, 32, unsafe.Pointer(&a[4]), 36*steps, unsafe.Pointer(&w[0]),
			unsafe.Pointer(&aux[0]), unsafe.Pointer(&c[0]), unsafe.Pointer(&out[0]), 64, 16, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/steps, "ns/step")
}
