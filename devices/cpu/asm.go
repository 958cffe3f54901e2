//go:build (amd64 || arm64) && !purego

package cpu

import (
	"unsafe"

	"github.com/ggml-go/ggml/quant"
)

// The glue between the kernel tables and the assembly, shared by every
// architecture that has some (traits_amd64.go, traits_arm64.go): the
// assembly takes base pointers and unit counts, the tables take slices.

// asmDot is one type's assembly pair. The kernels take the number of
// blocks (of elements for F32, F16 and BF16) and base pointers: the
// slices' lengths have been checked by the product's supports rule, as
// quant.DotKernel's contract says. dot4 may be nil.
type asmDot struct {
	typ  quant.Type
	dot  func(n int, x, y []byte) float32
	dot4 func(n int, x []byte, stride uint64, nrows int, y *[4][]byte, scratch, out []float32)
}

// asmQuantizer is an activation type's assembly from_float over whole
// blocks; the generic one stays for what it does not take (lengths off
// the block size, short destinations, and the error of non-finite input).
// quantize returns nonzero for input it hands back to the generic one.
type asmQuantizer struct {
	typ      quant.Type
	block    int
	quantize func(nb int, x, y unsafe.Pointer) int
}

// deriveAsm is the generic set named name with the entries of dots and
// quantizers replaced.
func deriveAsm(name string, dots []asmDot, quantizers []asmQuantizer) *kernelSet {
	s := deriveGeneric(name)
	for _, k := range dots {
		tr := &s.traits[k.typ]
		tr.vecDot, tr.vecDot4 = k.dot, k.dot4
	}
	for _, q := range quantizers {
		s.traits[q.typ].fromFloat = q.fromFloat(s.traits[q.typ].fromFloat)
	}
	return s
}

func (q asmQuantizer) fromFloat(generic func([]byte, []float32) error) func([]byte, []float32) error {
	return func(dst []byte, src []float32) error {
		nb := len(src) / q.block
		if len(src)%q.block != 0 || int64(len(dst)) < q.typ.RowSize(int64(len(src))) {
			return generic(dst, src)
		}
		if nb > 0 && q.quantize(nb, unsafe.Pointer(unsafe.SliceData(src)), ptr(dst)) != 0 {
			return generic(dst, src)
		}
		return nil
	}
}

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// wrap1 adapts a kernel over n/per units to the traits' vecDot.
func wrap1(per int, k func(int, unsafe.Pointer, unsafe.Pointer) float32) func(int, []byte, []byte) float32 {
	return func(n int, x, y []byte) float32 { return k(n/per, ptr(x), ptr(y)) }
}

// wrap4 adapts a four-column kernel over one row of n/per units to
// vecDot4, row by row.
func wrap4(per int, k func(int, unsafe.Pointer, *[4]unsafe.Pointer, *[4]float32)) func(int, []byte, uint64, int, *[4][]byte, []float32, []float32) {
	return func(n int, x []byte, stride uint64, nrows int, y *[4][]byte, _, out []float32) {
		ys := [4]unsafe.Pointer{ptr(y[0]), ptr(y[1]), ptr(y[2]), ptr(y[3])}
		for r := range nrows {
			k(n/per, ptr(x[uint64(r)*stride:]), &ys, (*[4]float32)(out[4*r:4*r+4]))
		}
	}
}

// asmVecFuncs are an architecture's assembly vector primitives on base
// pointers and lengths (n > 0); newAsmVec makes a vecKernels of them. A nil
// entry keeps the portable primitive.
type asmVecFuncs struct {
	add, sub, mul, div func(dst, x, y *float32, n int)
	scale              func(x *float32, n int, s float32)
	mad                func(y, x *float32, n int, s float32)
	dot                func(x, y *float32, n int) float32
	dotF16             func(x, y *uint16, n int) float32
	madF16             func(y, x *uint16, n int, s float32)
	scaleF16           func(y *uint16, n int, s float32)
	f16ToF32           func(dst *float32, src *uint16, n int)
}

// asmBinary wraps one of the binary assembly loops; the slices are cut
// to dst's length first, so a short x or y panics instead of being
// overread.
func asmBinary(op func(dst, x, y *float32, n int), generic func(dst, x, y []float32)) func(dst, x, y []float32) {
	if op == nil {
		return generic
	}
	return func(dst, x, y []float32) {
		if len(dst) == 0 {
			return
		}
		x, y = x[:len(dst)], y[:len(dst)]
		op(unsafe.SliceData(dst), unsafe.SliceData(x), unsafe.SliceData(y), len(dst))
	}
}

// asmScale wraps an in-place loop over y with a scalar.
func asmScale[T float32 | uint16](op func(y *T, n int, s float32), generic func([]T, float32)) func([]T, float32) {
	if op == nil {
		return generic
	}
	return func(y []T, s float32) {
		if len(y) > 0 {
			op(unsafe.SliceData(y), len(y), s)
		}
	}
}

// asmMad wraps y[i] += x[i]*s; x is cut to y's length.
func asmMad[T float32 | uint16](op func(y, x *T, n int, s float32), generic func(y, x []T, s float32)) func(y, x []T, s float32) {
	if op == nil {
		return generic
	}
	return func(y, x []T, s float32) {
		if len(y) > 0 {
			x = x[:len(y)]
			op(unsafe.SliceData(y), unsafe.SliceData(x), len(y), s)
		}
	}
}

// asmDotVec wraps a dot product; y is cut to x's length.
func asmDotVec[T float32 | uint16](op func(x, y *T, n int) float32, generic func(x, y []T) float32) func(x, y []T) float32 {
	if op == nil {
		return generic
	}
	return func(x, y []T) float32 {
		if len(x) == 0 {
			return 0
		}
		y = y[:len(x)]
		return op(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
	}
}

func newAsmVec(name string, f asmVecFuncs) vecKernels {
	g := genericVec
	k := vecKernels{
		name:     name,
		add:      asmBinary(f.add, g.add),
		sub:      asmBinary(f.sub, g.sub),
		mul:      asmBinary(f.mul, g.mul),
		div:      asmBinary(f.div, g.div),
		scale:    asmScale(f.scale, g.scale),
		mad:      asmMad(f.mad, g.mad),
		dot:      asmDotVec(f.dot, g.dot),
		dotF16:   asmDotVec(f.dotF16, g.dotF16),
		madF16:   asmMad(f.madF16, g.madF16),
		scaleF16: asmScale(f.scaleF16, g.scaleF16),
		f16ToF32: g.f16ToF32,
		f32ToF16: g.f32ToF16,
		swiglu:   g.swiglu,
		expf:     g.expf,
		sincos:   g.sincos,
		ropeNeox: g.ropeNeox,
		// The NEON set has no rope kernels: the portable loops.
		ropeNormal: g.ropeNormal,
	}
	if f.f16ToF32 != nil {
		k.f16ToF32 = func(dst []float32, src []uint16) {
			if len(dst) > 0 {
				src = src[:len(dst)]
				f.f16ToF32(unsafe.SliceData(dst), unsafe.SliceData(src), len(dst))
			}
		}
	}
	return composeAttn(k)
}

// packX8 is x8Layout's pack for blocks of blockBytes bytes, the quant
// words moved by an architecture's xpose (nb blocks of the eight rows rs
// bytes apart at src, into dst): the products interleave plain weights on
// the fly, so this is on their path.
func packX8(blockBytes int, xpose func(dst, src unsafe.Pointer, rs uintptr, nb, blockBytes int)) func(dst, src []byte, rs int) {
	return func(dst, src []byte, rs int) {
		nb := rs / blockBytes
		if nb == 0 {
			return
		}
		_, _ = dst[8*nb*blockBytes-1], src[7*rs+nb*blockBytes-1]
		xpose(ptr(dst), ptr(src), uintptr(rs), nb, blockBytes)
	}
}
