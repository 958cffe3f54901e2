package quant

import "testing"

// TestIntoVariantsDoNotAllocate holds QuantizeInto, DequantizeInto and VecDot
// to their promise: no allocation, whatever the type, with or without an
// importance matrix.
func TestIntoVariantsDoNotAllocate(t *testing.T) {
	const rows, n = 4, 512
	src := make([]float32, rows*n)
	for i := range src {
		src[i] = float32(i%37) - 18
	}
	im := make([]float32, n)
	for i := range im {
		im[i] = 1 + float32(i%5)
	}
	out := make([]float32, rows*n)
	for _, typ := range Types() {
		if !typ.CanDequantize() {
			continue
		}
		dst := make([]byte, typ.RowSize(n)*rows)
		if typ.CanQuantize() {
			for _, w := range [][]float32{nil, im} {
				if a := testing.AllocsPerRun(3, func() { _, _ = QuantizeInto(dst, typ, src, rows, n, w) }); a != 0 {
					t.Errorf("QuantizeInto %s (imatrix %v): %v allocations", typ, w != nil, a)
				}
			}
		}
		if a := testing.AllocsPerRun(3, func() { _ = DequantizeInto(out, typ, dst) }); a != 0 {
			t.Errorf("DequantizeInto %s: %v allocations", typ, a)
		}
		y := make([]byte, typ.VecDotType().RowSize(n))
		if _, err := VecDot(typ, n, dst, y); err != nil {
			continue // no vec_dot; the error path may allocate
		}
		if a := testing.AllocsPerRun(3, func() { _, _ = VecDot(typ, n, dst, y) }); a != 0 {
			t.Errorf("VecDot %s: %v allocations", typ, a)
		}
	}
}
