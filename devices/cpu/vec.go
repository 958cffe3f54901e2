package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/ggml-go/ggml/quant"
)

// Vector primitives: the inner loops of the element-wise, norm, softmax,
// rope and attention kernels, over whole rows of float32 or fp16 values
// instead of a closure and a type switch per element. Each has a portable
// Go version (vecGeneric*) and, where the chosen architecture level has
// one (level.go), an assembly version: vec holds the set in use. The portable versions are always compiled:
// the tests check every assembly version against them, and the purego
// build tag leaves the assembly out.
//
// The assembly versions round differently where they fuse a multiply and
// an add (as ggml's SIMD builds do); their tests bound the difference.
// Those promised bit for bit (expf, the rope rotations, the attention
// weights) match the portable code, whose bits are the same for
// every GOARCH and GOAMD64/GOARM64 level: the Go specification lets the
// compiler fuse x*y+z into one rounding (it does for arm64 always, for
// amd64 from GOAMD64=v3 on, and only where its optimizer happens to see
// the pattern), and an explicit conversion, float32(x*y) + z, forbids it.
// So every product the portable code adds or subtracts is converted, and
// the kernels round the product and the sum apart in the same places.

// vecKernels is one implementation of every primitive. Slices passed
// together have equal lengths (the callers guarantee it).
type vecKernels struct {
	name string
	// add, sub, mul, div: dst[i] = x[i] op y[i].
	add, sub, mul, div func(dst, x, y []float32)
	// scale: x[i] *= s.
	scale func(x []float32, s float32)
	// mad: y[i] += x[i]*s (ggml_vec_mad_f32).
	mad func(y, x []float32, s float32)
	// dot: the sum of x[i]*y[i], in float32.
	dot func(x, y []float32) float32
	// dotF16: the sum of x[i]*y[i] of fp16 values, in float32
	// (ggml_vec_dot_f16).
	dotF16 func(x, y []uint16) float32
	// madF16: y[i] = fp16(y[i] + x[i]*s), fp16 accumulators
	// (ggml_vec_mad_f16).
	madF16 func(y, x []uint16, s float32)
	// scaleF16: y[i] = fp16(y[i]*s).
	scaleF16 func(y []uint16, s float32)
	// f16ToF32 and f32ToF16 convert rows (rounding to nearest even).
	f16ToF32 func(dst []float32, src []uint16)
	f32ToF16 func(dst []uint16, src []float32)
	// swiglu: dst[i] = silu(x[i]) * g[i], silu(x) = x / (1 + e^-x), and
	// silu: dst[i] = silu(x[i]), with ggml's vector e^x (vexp.go): the
	// bits of ggml_vec_swiglu_f32 and ggml_vec_silu_f32 of the ggml build
	// the set stands for (x64 for the portable one, haswell for AVX2).
	swiglu func(dst, x, g []float32)
	silu   func(dst, x []float32)
	// softmax: dst[i] = e^(src[i]-max) as ggml_vec_soft_max_f32 of that
	// build, returning the sum it returns; dst may be src.
	softmax func(dst, src []float32, max float32) float64
	// contracts: the set stands for a ggml build compiled with FMA
	// contraction (haswell, ARM's), whose scalar C fuses a*b + c where
	// the x64 build rounds a*b first: the GELU table
	// (elementwise_glu.go) and rope's YaRN angle and scale (rope.go)
	// follow it.
	contracts bool
	// expf: dst[i] = expf(src[i]), bit for bit; dst may be src.
	expf func(dst, src []float32)
	// ropeNeox rotates the pairs (x[i], x[h+i]), h = len(x)/2, and
	// ropeNormal the pairs (x[2i], x[2i+1]), by cos cs[2i] and sin
	// cs[2i+1] into y (which may be x): y_a = x_a*cos - x_b*sin,
	// y_b = x_a*sin + x_b*cos, rounded as the ggml build of the set
	// does: every product apart in the portable set (x64), one product
	// of each sum fused on AVX2 (haswell; rope_amd64.s says which).
	ropeNeox, ropeNormal func(y, x, cs []float32)

	// Flash attention's F16 steps over many keys at once, the keys being
	// rows of fp16 values at byte offsets keys[j]*stride of a K or V
	// tensor's data (any alignment), every offset checked against the
	// data's length. Composed from dotF16, scaleF16 and madF16 unless an
	// architecture fuses them, with the same results.
	//
	// attnScoresF16: out[j] = dotF16(key row keys[j], q16), rows of
	// len(q16) values; qf holds q16's values as floats; tmp (len(q16))
	// is scratch.
	attnScoresF16 func(out []float32, keys []int32, k []byte, stride uint64, q16 []uint16, qf []float32, tmp []uint16)
	// attnScoresMaxF16 is attnScoresF16, then attnRunningMax(out, mvs,
	// newMax, scale), whose maximum it returns.
	attnScoresMaxF16 func(out []float32, keys []int32, k []byte, stride uint64, q16 []uint16, qf []float32, tmp []uint16,
		scale float32, mvs []float32, newMax []bool) float32
	// attnAccF16: for each key j in turn, with ms, vs the weights
	// attnWeights gives ex[j] and newMax[j], scaleF16(acc, ms) when
	// ms != 1, then madF16(acc, value row keys[j], vs), rows of len(acc)
	// values; it returns the softmax denominator over the same weights
	// (S = S*ms + vs from 0). tmp (len(acc)) is scratch.
	attnAccF16 func(acc []uint16, keys []int32, v []byte, stride uint64, ex []float32, newMax []bool, tmp []uint16) float32
}

// genericVec is the portable implementation.
var genericVec = composeAttn(vecKernels{
	name: "generic",
	add:  func(dst, x, y []float32) { vecGenericBinary(dst, x, y, func(a, b float32) float32 { return a + b }) },
	sub:  func(dst, x, y []float32) { vecGenericBinary(dst, x, y, func(a, b float32) float32 { return a - b }) },
	mul:  func(dst, x, y []float32) { vecGenericBinary(dst, x, y, func(a, b float32) float32 { return a * b }) },
	div:  func(dst, x, y []float32) { vecGenericBinary(dst, x, y, func(a, b float32) float32 { return a / b }) },
	scale: func(x []float32, s float32) {
		for i := range x {
			x[i] *= s
		}
	},
	mad: func(y, x []float32, s float32) {
		x = x[:len(y)]
		for i := range y {
			y[i] += float32(x[i] * s)
		}
	},
	dot: func(x, y []float32) float32 {
		y = y[:len(x)]
		var s float32
		for i := range x {
			s += float32(x[i] * y[i])
		}
		return s
	},
	dotF16: func(x, y []uint16) float32 {
		y = y[:len(x)]
		var s float32
		for i := range x {
			s += float32(quant.FP16ToFP32(x[i]) * quant.FP16ToFP32(y[i]))
		}
		return s
	},
	madF16: func(y, x []uint16, s float32) {
		x = x[:len(y)]
		for i := range y {
			y[i] = quant.FP32ToFP16(quant.FP16ToFP32(y[i]) + float32(quant.FP16ToFP32(x[i])*s))
		}
	},
	scaleF16: func(y []uint16, s float32) {
		for i := range y {
			y[i] = quant.FP32ToFP16(quant.FP16ToFP32(y[i]) * s)
		}
	},
	f16ToF32: quant.FP16ToFP32Slice,
	f32ToF16: quant.FP32ToFP16Slice,
	swiglu:   swigluSSE,
	silu:     siluSSE,
	softmax:  softmaxSSE,
	expf: func(dst, src []float32) {
		src = src[:len(dst)]
		for i, x := range src {
			dst[i] = expf(x)
		}
	},
	ropeNeox: func(y, x, cs []float32) { ropeNeoxFrom(y, x, cs, 0) },
	ropeNormal: func(y, x, cs []float32) {
		y, cs = y[:len(x)&^1], cs[:len(x)&^1]
		for i := 0; i+1 < len(x); i += 2 {
			y[i], y[i+1] = ropeRotate(x[i], x[i+1], cs[i], cs[i+1])
		}
	},
})

// ropeNeoxFrom is the portable ropeNeox over the pairs from i on.
func ropeNeoxFrom(y, x, cs []float32, i int) {
	h := len(x) / 2
	y, cs = y[:2*h], cs[:2*h]
	for ; i < h; i++ {
		y[i], y[h+i] = ropeRotate(x[i], x[h+i], cs[2*i], cs[2*i+1])
	}
}

// ropeRotate is rope's rotation of the pair (a, b) by the angle with cos and
// sin: a*cos - b*sin, a*sin + b*cos, each product rounded before the sum.
func ropeRotate(a, b, cos, sin float32) (float32, float32) {
	return float32(a*cos) - float32(b*sin), float32(a*sin) + float32(b*cos)
}

// composeAttn returns k with its attention steps made of its own
// primitives.
func composeAttn(k vecKernels) vecKernels {
	dotF16, scaleF16, madF16 := k.dotF16, k.scaleF16, k.madF16
	scores := func(out []float32, keys []int32, kd []byte, stride uint64, q16 []uint16, _ []float32, tmp []uint16) {
		out = out[:len(keys)]
		for j, key := range keys {
			out[j] = dotF16(f16RowOr(kd, attnRowOffset(key, stride), int64(len(q16)), tmp), q16)
		}
	}
	k.attnScoresF16 = scores
	k.attnScoresMaxF16 = func(out []float32, keys []int32, kd []byte, stride uint64, q16 []uint16, qf []float32, tmp []uint16,
		scale float32, mvs []float32, newMax []bool) float32 {
		scores(out, keys, kd, stride, q16, qf, tmp)
		return attnRunningMax(out[:len(keys)], mvs, newMax, scale)
	}
	k.attnAccF16 = func(acc []uint16, keys []int32, v []byte, stride uint64, ex []float32, newMax []bool, tmp []uint16) float32 {
		ex, newMax = ex[:len(keys)], newMax[:len(keys)]
		var sum float32
		for j, key := range keys {
			ms, vs := attnWeights(ex[j], newMax[j])
			if ms != 1 {
				scaleF16(acc, ms)
			}
			madF16(acc, f16RowOr(v, attnRowOffset(key, stride), int64(len(acc)), tmp), vs)
			sum = float32(sum*ms) + vs
		}
		return sum
	}
	return k
}

// attnRunningMax turns flash attention's scores into the arguments of
// their exponentials, in key order: s = score*scale + mvs[j] (the mask),
// and against M, the largest s so far, newMax[j] = s > M with M-s (the
// rescaling of what came before) on a new maximum, else s-M. It returns
// the last M. The products and sums round apart, as ggml's.
func attnRunningMax(ex, mvs []float32, newMax []bool, scale float32) float32 {
	mvs, newMax = mvs[:len(ex)], newMax[:len(ex)]
	m := float32(math.Inf(-1))
	for j, s := range ex {
		s = float32(s*scale) + mvs[j]
		if newMax[j] = s > m; newMax[j] {
			ex[j], m = m-s, s
		} else {
			ex[j] = s - m
		}
	}
	return m
}

// attnWeights is a key's factors in the online softmax from e, its
// exponential: ms rescales what came before, vs weighs its value.
func attnWeights(e float32, newMax bool) (ms, vs float32) {
	if newMax {
		return e, 1
	}
	return 1, e
}

// attnRowOffset is the byte offset of row key, which must not be negative.
func attnRowOffset(key int32, stride uint64) uint64 {
	if key < 0 {
		panic("cpu: negative attention row")
	}
	return uint64(key) * stride
}

// vecGenericBinary is inlined into each generic binary op, so op is a
// direct call the compiler inlines too.
func vecGenericBinary(dst, x, y []float32, op func(a, b float32) float32) {
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = op(x[i], y[i])
	}
}

// f32Row views n float32 values at byte offset off of b, or returns nil
// when they are not 4-byte aligned (the caller then takes its element-wise
// path). The memory stays owned by b.
func f32Row(b []byte, off uint64, n int64) []float32 {
	if n == 0 {
		return []float32{}
	}
	end := off + uint64(n)*4
	if end > uint64(len(b)) || end < off {
		panic("cpu: row out of range")
	}
	p := unsafe.Pointer(&b[off])
	if uintptr(p)%4 != 0 {
		return nil
	}
	return unsafe.Slice((*float32)(p), n)
}

// f16Row views n fp16 values at byte offset off of b, or returns nil when
// they are not 2-byte aligned.
func f16Row(b []byte, off uint64, n int64) []uint16 {
	if n == 0 {
		return []uint16{}
	}
	end := off + uint64(n)*2
	if end > uint64(len(b)) || end < off {
		panic("cpu: row out of range")
	}
	p := unsafe.Pointer(&b[off])
	if uintptr(p)%2 != 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(p), n)
}

// f32RowOr is f32Row, falling back to a copy into tmp (len n) when the
// values are not aligned: the kernels then need no second path.
func f32RowOr(b []byte, off uint64, n int64, tmp []float32) []float32 {
	if r := f32Row(b, off, n); r != nil {
		return r
	}
	tmp = tmp[:n]
	for i := range tmp {
		tmp[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[off+uint64(i)*4:]))
	}
	return tmp
}

// f16RowOr is f16Row, falling back to a copy into tmp (len n) when the
// values are not aligned.
func f16RowOr(b []byte, off uint64, n int64, tmp []uint16) []uint16 {
	if r := f16Row(b, off, n); r != nil {
		return r
	}
	tmp = tmp[:n]
	for i := range tmp {
		tmp[i] = binary.LittleEndian.Uint16(b[off+uint64(i)*2:])
	}
	return tmp
}
