package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// A dot kernel returns the dot product of n elements of one type in x with n
// elements of its vec_dot type in y. VecDot checks the arguments first, so a
// kernel may assume n >= 0 is a multiple of both block sizes and that x and y
// are exactly the row sizes of n elements of their types.
//
// The kernels follow ggml's generic (scalar) CPU code: an integer dot product
// per block, scaled in float32 and accumulated in the same order. ggml's SIMD
// builds sum in a different order, so results agree with them only to within
// float rounding.
var dotKernels = [TypeCount]func(n int, x, y []byte) float32{
	// Plain floats.
	F32:  dotF32,
	F16:  dotF16,
	BF16: dotBF16,

	// Legacy 32-blocks and the small newer formats, against Q8_0 or Q8_1.
	Q4_0:   dotQ4_0,
	Q4_1:   dotQ4_1,
	Q5_0:   dotQ5_0,
	Q5_1:   dotQ5_1,
	Q8_0:   dotQ8_0,
	Q1_0:   dotQ1_0,
	Q2_0:   dotQ2_0,
	MXFP4:  dotMXFP4,
	NVFP4:  dotNVFP4,
	IQ4_NL: dotIQ4NL,

	// K-quants, IQ4_XS and the ternary formats, against Q8_K.
	Q2_K:   dotQ2K,
	Q3_K:   dotQ3K,
	Q4_K:   dotQ4K,
	Q5_K:   dotQ5K,
	Q6_K:   dotQ6K,
	IQ4_XS: dotIQ4XS,
	TQ1_0:  dotTQ1_0,
	TQ2_0:  dotTQ2_0,

	// Lattice (grid) formats, against Q8_K.
	IQ2_XXS: dotIQ2XXSQ8K,
	IQ2_XS:  dotIQ2XSQ8K,
	IQ2_S:   dotIQ2SQ8K,
	IQ3_XXS: dotIQ3XXSQ8K,
	IQ3_S:   dotIQ3SQ8K,
	IQ1_S:   dotIQ1SQ8K,
	IQ1_M:   dotIQ1MQ8K,
}

// vecDotTypes mirrors vec_dot_type in ggml's CPU type traits. Types ggml
// leaves unset (including those without a vec_dot) read as F32, the zero Type,
// just as they do in ggml.
var vecDotTypes = [TypeCount]Type{
	F16:     F16,
	BF16:    BF16,
	Q4_0:    Q8_0,
	Q4_1:    Q8_1,
	Q5_0:    Q8_0,
	Q5_1:    Q8_1,
	Q8_0:    Q8_0,
	Q8_1:    Q8_1,
	Q1_0:    Q8_0,
	Q2_0:    Q8_0,
	MXFP4:   Q8_0,
	NVFP4:   Q8_0,
	IQ4_NL:  Q8_0,
	Q2_K:    Q8_K,
	Q3_K:    Q8_K,
	Q4_K:    Q8_K,
	Q5_K:    Q8_K,
	Q6_K:    Q8_K,
	IQ4_XS:  Q8_K,
	TQ1_0:   Q8_K,
	TQ2_0:   Q8_K,
	IQ2_XXS: Q8_K,
	IQ2_XS:  Q8_K,
	IQ2_S:   Q8_K,
	IQ3_XXS: Q8_K,
	IQ3_S:   Q8_K,
	IQ1_S:   Q8_K,
	IQ1_M:   Q8_K,
}

// VecDotType returns the activation format ggml's CPU backend pairs with t in vec_dot
// (Q8_0 for Q4_0, Q8_K for the K-quants, t itself for F16 and BF16, ...).
// Like ggml it reports F32 for types that have no vec_dot of their own, and
// for invalid types.
func (t Type) VecDotType() Type {
	if !t.Valid() {
		return F32
	}
	return vecDotTypes[t]
}

// VecDot returns the dot product of n elements of x (type t) with n elements of y (type t.VecDotType()).
// n must be a multiple of both types' block sizes, and x and y must hold at
// least the row sizes of n elements of their types. Types without a vec_dot
// in ggml's CPU backend return an ErrUnsupported error.
//
// The result follows ggml's generic CPU vec_dot: it matches ggml's SIMD
// builds to within float rounding, not bit for bit.
func VecDot(t Type, n int, x, y []byte) (float32, error) {
	if err := t.Check(); err != nil {
		return 0, err
	}
	k := dotKernels[t]
	if k == nil {
		return 0, fmt.Errorf("%w: vec_dot of %s", ErrUnsupported, t)
	}
	if n < 0 {
		return 0, fmt.Errorf("%w: negative count %d", ErrBadLength, n)
	}
	yt := t.VecDotType()
	xs, ys := t.RowSize(int64(n)), yt.RowSize(int64(n))
	if xs < 0 || ys < 0 {
		return 0, fmt.Errorf("%w: %d elements: not a multiple of the block sizes of %s (%d) and %s (%d)",
			ErrBadLength, n, t, t.BlockSize(), yt, yt.BlockSize())
	}
	if int64(len(x)) < xs {
		return 0, fmt.Errorf("%w: x has %d bytes, %d %s elements need %d", ErrBadLength, len(x), n, t, xs)
	}
	if int64(len(y)) < ys {
		return 0, fmt.Errorf("%w: y has %d bytes, %d %s elements need %d", ErrBadLength, len(y), n, yt, ys)
	}
	return k(n, x[:xs], y[:ys]), nil
}

// dotKernel returns t's dot kernel, or nil if t has none, for callers that
// have already checked the shapes as VecDot does (the CPU backend's matmul
// checks them once per tensor rather than once per row pair).
func dotKernel(t Type) func(n int, x, y []byte) float32 {
	if !t.Valid() {
		return nil
	}
	return dotKernels[t]
}

// DotKernel returns t's vec_dot without VecDot's checks, or nil when t has
// none. Calling it as k(n, x, y) gives VecDot(t, n, x, y) provided x and y
// are exactly the row sizes of n elements of t and of t.VecDotType() and n
// is a multiple of both block sizes; anything else may panic or read the
// wrong bytes. It exists for matrix products, which check their shapes once
// per operation instead of once per pair of rows, and allocates nothing.
func DotKernel(t Type) func(n int, x, y []byte) float32 { return dotKernel(t) }

// Block sizes (elements) and byte sizes of the activation formats.
const (
	q8_0Bytes = 34  // fp16 d, int8 qs[32]
	q8_1Bytes = 36  // fp16 d, fp16 s (= d * sum of qs), int8 qs[32]
	q8KBytes  = 292 // float32 d, int8 qs[256], int16 bsums[16]
	q8KBsums  = 4 + 256
)

// Plain floats: ggml's scalar path rounds each product to float32 and sums
// in double precision, one element after the other. That chain of
// additions bounds a single dot product; DotRowsKernel runs four rows'
// chains side by side, each in the same order.

func dotF32(n int, x, y []byte) float32 {
	y = y[:4*n]
	x = x[:len(y)]
	var sum float64
	for i := 0; i+4 <= len(y); i += 4 {
		a := math.Float32frombits(binary.LittleEndian.Uint32(x[i : i+4 : i+4]))
		b := math.Float32frombits(binary.LittleEndian.Uint32(y[i : i+4 : i+4]))
		sum += float64(a * b)
	}
	return float32(sum)
}

func dotF16(n int, x, y []byte) float32 {
	y = y[:2*n]
	x = x[:len(y)]
	t := fp16Table
	var sum float64
	for i := 0; i+2 <= len(y); i += 2 {
		a := t[binary.LittleEndian.Uint16(x[i:i+2:i+2])]
		b := t[binary.LittleEndian.Uint16(y[i:i+2:i+2])]
		sum += float64(a * b)
	}
	return float32(sum)
}

// dotRowsF32 sets out[r] = dotF32(n, row r, y) for nrows rows of x stride
// bytes apart, four rows at a time.
func dotRowsF32(n int, x []byte, stride uint64, nrows int, y []byte, out []float32) {
	y = y[:4*n]
	out = out[:nrows]
	r := 0
	for ; r+4 <= nrows; r += 4 {
		o := uint64(r) * stride
		x0, x1, x2, x3 := x[o:][:len(y)], x[o+stride:][:len(y)], x[o+2*stride:][:len(y)], x[o+3*stride:][:len(y)]
		var s0, s1, s2, s3 float64
		for i := 0; i+4 <= len(y); i += 4 {
			b := math.Float32frombits(binary.LittleEndian.Uint32(y[i : i+4 : i+4]))
			s0 += float64(math.Float32frombits(binary.LittleEndian.Uint32(x0[i:i+4:i+4])) * b)
			s1 += float64(math.Float32frombits(binary.LittleEndian.Uint32(x1[i:i+4:i+4])) * b)
			s2 += float64(math.Float32frombits(binary.LittleEndian.Uint32(x2[i:i+4:i+4])) * b)
			s3 += float64(math.Float32frombits(binary.LittleEndian.Uint32(x3[i:i+4:i+4])) * b)
		}
		out[r], out[r+1], out[r+2], out[r+3] = float32(s0), float32(s1), float32(s2), float32(s3)
	}
	for ; r < nrows; r++ {
		out[r] = dotF32(n, x[uint64(r)*stride:], y)
	}
}

// dotRowsF16 is dotRowsF32 for F16.
func dotRowsF16(n int, x []byte, stride uint64, nrows int, y []byte, out []float32) {
	y = y[:2*n]
	out = out[:nrows]
	t := fp16Table
	r := 0
	for ; r+4 <= nrows; r += 4 {
		o := uint64(r) * stride
		x0, x1, x2, x3 := x[o:][:len(y)], x[o+stride:][:len(y)], x[o+2*stride:][:len(y)], x[o+3*stride:][:len(y)]
		var s0, s1, s2, s3 float64
		for i := 0; i+2 <= len(y); i += 2 {
			b := t[binary.LittleEndian.Uint16(y[i:i+2:i+2])]
			s0 += float64(t[binary.LittleEndian.Uint16(x0[i:i+2:i+2])] * b)
			s1 += float64(t[binary.LittleEndian.Uint16(x1[i:i+2:i+2])] * b)
			s2 += float64(t[binary.LittleEndian.Uint16(x2[i:i+2:i+2])] * b)
			s3 += float64(t[binary.LittleEndian.Uint16(x3[i:i+2:i+2])] * b)
		}
		out[r], out[r+1], out[r+2], out[r+3] = float32(s0), float32(s1), float32(s2), float32(s3)
	}
	for ; r < nrows; r++ {
		out[r] = dotF16(n, x[uint64(r)*stride:], y)
	}
}

// DotRowsKernel returns a kernel k with k(n, x, stride, nrows, y, out)
// setting out[r] to DotKernel(t)(n, x[r*stride:], y) bit for bit for r <
// nrows, for the types where one row of y meeting many rows of x pays:
// F32 and F16, whose vec_dot is one long chain of dependent additions, run
// four rows' chains at once; Q8_0, Q4_0, Q4_K and Q6_K prepare y once per
// call (dot_prepared.go). It is nil for other types. The operands are
// under DotKernel's contract, row by row. The kernel allocates nothing
// once it has run (it keeps its prepared tables in a pool), and is safe
// for concurrent use.
func DotRowsKernel(t Type) func(n int, x []byte, stride uint64, nrows int, y []byte, out []float32) {
	switch t {
	case F32:
		return dotRowsF32
	case F16:
		return dotRowsF16
	}
	if t.Valid() && preparedKernels[t] != nil {
		return preparedKernels[t].dotRows
	}
	return nil
}

func dotBF16(n int, x, y []byte) float32 {
	var sum float64
	for i := 0; i < 2*n; i += 2 {
		a := BF16ToFP32(binary.LittleEndian.Uint16(x[i:]))
		b := BF16ToFP32(binary.LittleEndian.Uint16(y[i:]))
		sum += float64(a * b)
	}
	return float32(sum)
}

// Legacy formats. Each 32-element block stores its quants as 16 bytes of
// nibble pairs: the low nibble of byte j is element j, the high nibble
// element j+16, so both halves meet y's quants qs[j] and qs[j+16].

// nibbleDot returns sum(lo(q[j])*y[j] + hi(q[j])*y[j+16]) over the 16 bytes
// of q, where lo and hi map a byte's nibbles through values (a 16-entry
// table) and an optional fifth bit from qh (bit j for the low nibble, bit
// j+16 for the high one) adds 16 before the lookup.
func nibbleDot(q []byte, qh uint32, yq []byte, values *[32]int32) int32 {
	q, yq = q[:16], yq[:32]
	var lo, hi int32
	for j, b := range q {
		l := uint32(b&0x0f) | (qh>>j&1)<<4
		h := uint32(b>>4) | (qh>>(j+16)&1)<<4
		lo += values[l] * int32(int8(yq[j]))
		hi += values[h] * int32(int8(yq[j+16]))
	}
	return lo + hi
}

// Quant-to-integer maps for nibbleDot: index is the 4- or 5-bit code.
var (
	q4_0Values  = offsetValues(-8)  // Q4_0: code - 8
	q5_0Values  = offsetValues(-16) // Q5_0: code - 16
	plainValues = offsetValues(0)   // Q4_1, Q5_1: the code itself

	iq4NLValues = tableValues(kvaluesIQ4NL)
	// fp4Values is twice the E2M1 value of each code, ggml's kvalues_mxfp4;
	// the scales of MXFP4 and NVFP4 are halved to make up for it.
	fp4Values = tableValues(kvaluesFP4)
)

func offsetValues(off int32) *[32]int32 {
	var v [32]int32
	for i := range v {
		v[i] = int32(i) + off
	}
	return &v
}

func tableValues(t [16]int8) *[32]int32 {
	var v [32]int32
	for i, x := range t {
		v[i] = int32(x)
	}
	return &v
}

// Q4_0 (fp16 d, qs[16]) · Q8_0.
func dotQ4_0(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/32; i++ {
		xb, yb := x[18*i:18*i+18], y[q8_0Bytes*i:q8_0Bytes*(i+1)]
		s := nibbleDotQ4_0(xb[2:], yb[2:])
		sum += float32(float32(float32(s)*fp16At(xb)) * fp16At(yb))
	}
	return sum
}

// Words of bytes and of 16-bit lanes for the SWAR dot products.
const (
	evenBytes = 0x00ff00ff00ff00ff
	byteSigns = 0x8080808080808080
	laneOnes  = 0x0001000100010001
)

// nibbleDotQ4_0 is nibbleDot(q, 0, yq, q4_0Values) four products to a
// multiplication: with the quants spread into the 16-bit lanes of a word
// (q0, q2, q4, q6) and y's biased quants y+128 into another in reverse
// order (y6, y4, y2, y0), the top lane of their product is q0y0 + q2y2 +
// q4y4 + q6y6. Every lane of every product stays below 3*15*255, and four
// products summed below 2^16, so no lane carries into the next and the
// top lane of the sum is exact. The biases come off with the sums of q
// and y: sum (q-8)y = sum q(y+128) - 128 sum q - 8 sum y.
func nibbleDotQ4_0(q, yq []byte) int32 {
	q, yq = q[:16], yq[:32]
	var dot, lanesQ, lanesY uint64
	for k := 0; k < 16; k += 8 {
		w := binary.LittleEndian.Uint64(q[k:])
		lo, hi := w&lowNibbles, w>>4&lowNibbles
		ylo := bits.ReverseBytes64(binary.LittleEndian.Uint64(yq[k:]) ^ byteSigns)
		yhi := bits.ReverseBytes64(binary.LittleEndian.Uint64(yq[16+k:]) ^ byteSigns)
		qe, qo, he, ho := lo&evenBytes, lo>>8&evenBytes, hi&evenBytes, hi>>8&evenBytes
		// Reversed, y's even elements sit in the odd bytes.
		le, lo8, ue, uo := ylo>>8&evenBytes, ylo&evenBytes, yhi>>8&evenBytes, yhi&evenBytes
		dot += (qe*le + qo*lo8 + he*ue + ho*uo) >> 48
		lanesQ += qe + qo + he + ho
		lanesY += le + lo8 + ue + uo
	}
	sumQ := int32(lanesQ * laneOnes >> 48)
	sumY := int32(lanesY*laneOnes>>48) - 128*32
	return int32(dot) - 128*sumQ - 8*sumY
}

// Q4_1 (fp16 d, fp16 m, qs[16]) · Q8_1: the min times y's stored sum adds
// the offset without touching each element.
func dotQ4_1(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/32; i++ {
		xb, yb := x[20*i:20*i+20], y[q8_1Bytes*i:q8_1Bytes*(i+1)]
		s := nibbleDot(xb[4:], 0, yb[4:], plainValues)
		sum += float32(float32(fp16At(xb)*fp16At(yb))*float32(s)) + float32(fp16At(xb[2:])*fp16At(yb[2:]))
	}
	return sum
}

// Q5_0 (fp16 d, qh[4], qs[16]) · Q8_0.
func dotQ5_0(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/32; i++ {
		xb, yb := x[22*i:22*i+22], y[q8_0Bytes*i:q8_0Bytes*(i+1)]
		s := nibbleDot(xb[6:], binary.LittleEndian.Uint32(xb[2:]), yb[2:], q5_0Values)
		sum += float32(float32(fp16At(xb)*fp16At(yb)) * float32(s))
	}
	return sum
}

// Q5_1 (fp16 d, fp16 m, qh[4], qs[16]) · Q8_1.
func dotQ5_1(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/32; i++ {
		xb, yb := x[24*i:24*i+24], y[q8_1Bytes*i:q8_1Bytes*(i+1)]
		s := nibbleDot(xb[8:], binary.LittleEndian.Uint32(xb[4:]), yb[4:], plainValues)
		sum += float32(float32(fp16At(xb)*fp16At(yb))*float32(s)) + float32(fp16At(xb[2:])*fp16At(yb[2:]))
	}
	return sum
}

// Q8_0 · Q8_0.
func dotQ8_0(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/32; i++ {
		xb, yb := x[q8_0Bytes*i:q8_0Bytes*(i+1)], y[q8_0Bytes*i:q8_0Bytes*(i+1)]
		s := int8DotQ8_0(xb[2:], yb[2:])
		sum += float32(float32(s) * float32(fp16At(xb)*fp16At(yb)))
	}
	return sum
}

// int8DotQ8_0 is int8Dot of two 32-byte blocks in the manner of
// nibbleDotQ4_0: x biased to x+128 in 16-bit lanes, y biased to y+128 and
// split into its nibbles (each product lane then stays below 3*255*15),
// so that a multiplication takes four products of each nibble; sum xy =
// sum (x+128)(y+128) - 128 sum (x+128) - 128 sum (y+128) + 32*128*128.
func int8DotQ8_0(xq, yq []byte) int32 {
	xq, yq = xq[:32], yq[:32]
	var lo, hi, lanesX, lanesY uint64
	for k := 0; k < 32; k += 16 {
		var l, h uint64
		for j := k; j < k+16; j += 8 {
			xw := binary.LittleEndian.Uint64(xq[j:]) ^ byteSigns
			yw := bits.ReverseBytes64(binary.LittleEndian.Uint64(yq[j:]) ^ byteSigns)
			xe, xo := xw&evenBytes, xw>>8&evenBytes
			yl, yh := yw&lowNibbles, yw>>4&lowNibbles
			// Reversed, y's even elements sit in the odd bytes.
			le, lo8, he, ho := yl>>8&evenBytes, yl&evenBytes, yh>>8&evenBytes, yh&evenBytes
			l += xe*le + xo*lo8
			h += xe*he + xo*ho
			lanesX += xe + xo
			lanesY += le + lo8 + (he+ho)<<4
		}
		lo += l >> 48
		hi += h >> 48
	}
	sumX := int32(lanesX * laneOnes >> 48)
	sumY := int32(lanesY * laneOnes >> 48)
	return int32(hi<<4+lo) - 128*sumX - 128*sumY + 32*128*128
}

// Q1_0 (fp16 d, 128 sign bits) · Q8_0: bit k of byte b is element 8b+k and
// stands for +1 when set, -1 when clear. Each block spans four Q8_0 blocks,
// whose scaled sums are added in float before x's scale applies.
func dotQ1_0(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/128; i++ {
		xb, yb := x[18*i:18*i+18], y[4*q8_0Bytes*i:4*q8_0Bytes*(i+1)]
		var sub float32
		for k := 0; k < 4; k++ {
			bits, q := xb[2+4*k:6+4*k], yb[q8_0Bytes*k:q8_0Bytes*(k+1)]
			var s int32
			for j, v := range q[2:] {
				qy := int32(int8(v))
				if bits[j>>3]>>(j&7)&1 == 0 {
					qy = -qy
				}
				s += qy
			}
			sub += float32(fp16At(q) * float32(s))
		}
		sum += float32(fp16At(xb) * sub)
	}
	return sum
}

// Q2_0 (fp16 d, 64 two-bit codes) · Q8_0: byte b holds elements 4b..4b+3
// from the low bits up, each code c standing for c-1. Each block spans two
// Q8_0 blocks, combined as in Q1_0.
func dotQ2_0(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/64; i++ {
		xb, yb := x[18*i:18*i+18], y[2*q8_0Bytes*i:2*q8_0Bytes*(i+1)]
		var sub float32
		for k := 0; k < 2; k++ {
			codes, q := xb[2+8*k:10+8*k], yb[q8_0Bytes*k:q8_0Bytes*(k+1)]
			q = q[:q8_0Bytes]
			var s int32
			for b, c := range codes {
				for l := 0; l < 4; l++ {
					s += (int32(c>>(2*l)&3) - 1) * int32(int8(q[2+4*b+l]))
				}
			}
			sub += float32(fp16At(q) * float32(s))
		}
		sum += float32(fp16At(xb) * sub)
	}
	return sum
}

// MXFP4 (E8M0 e, qs[16]) · Q8_0.
func dotMXFP4(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/32; i++ {
		xb, yb := x[17*i:17*i+17], y[q8_0Bytes*i:q8_0Bytes*(i+1)]
		d := fp16At(yb) * e8m0Half(xb[0])
		sum += float32(d * float32(nibbleDot(xb[1:], 0, yb[2:], fp4Values)))
	}
	return sum
}

// ue4m3Half caches ue4m3ToFP32 for every scale byte.
var ue4m3Half = func() (t [256]float32) {
	for x := range t {
		t[x] = ue4m3ToFP32(uint8(x))
	}
	return t
}()

// NVFP4 (UE4M3 d[4], qs[32]) · Q8_0: four 16-element sub-blocks with their
// own scales; sub-block s is the low (s even) or high (s odd) half of Q8_0
// block s/2 and stores its codes as 8 bytes of nibble pairs (j, j+8).
func dotNVFP4(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/64; i++ {
		xb, yb := x[36*i:36*i+36], y[2*q8_0Bytes*i:2*q8_0Bytes*(i+1)]
		for s := 0; s < 4; s++ {
			q := yb[q8_0Bytes*(s/2) : q8_0Bytes*(s/2+1)]
			qy := q[2+16*(s%2) : 2+16*(s%2)+16]
			codes := xb[4+8*s : 4+8*s+8]
			var lo, hi int32
			for j, c := range codes {
				lo += fp4Values[c&0xf] * int32(int8(qy[j]))
				hi += fp4Values[c>>4] * int32(int8(qy[j+8]))
			}
			sum += float32(float32(fp16At(q)*ue4m3Half[xb[s]]) * float32(lo+hi))
		}
	}
	return sum
}

// IQ4_NL (fp16 d, qs[16]) · Q8_0: nibbles index a fixed non-linear table.
func dotIQ4NL(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/32; i++ {
		xb, yb := x[18*i:18*i+18], y[q8_0Bytes*i:q8_0Bytes*(i+1)]
		d := fp16At(yb) * fp16At(xb)
		sum += float32(d * float32(nibbleDot(xb[2:], 0, yb[2:], iq4NLValues)))
	}
	return sum
}
