package quant

import (
	"encoding/binary"
	"math"
)

// The legacy formats quantize blocks of 32 values with one fp16 scale d (and
// an fp16 minimum m for the _1 variants):
//
//	Q4_0  d, 16 bytes of 4-bit levels           x = (q-8)*d
//	Q4_1  d, m, 16 bytes of 4-bit levels        x = q*d + m
//	Q5_0  d, 32 high bits, 16 bytes of nibbles  x = (q-16)*d
//	Q5_1  d, m, 32 high bits, 16 nibbles        x = q*d + m
//	Q8_0  d, 32 int8                            x = q*d
//	Q8_1  d, s = d*sum(q), 32 int8              x = q*d
//
// Value j of a 4- or 5-bit block sits in the low nibble of byte j and value
// j+16 in the high nibble; bit j of the high-bit word is bit 4 of value j.
//
// Q1_0 (128 values, a sign bit each) and Q2_0 (64 values, 2 bits each) are
// the small newer formats with the same fp16-scale-first layout.

// legacyBlock is the number of values in a Q4_0..Q8_1 block.
const legacyBlock = 32

// nibbleLevels holds the 32 quantization levels of a 4- or 5-bit block.
type nibbleLevels [legacyBlock]uint8

// pack4 stores levels as nibble pairs. Like ggml it does not mask the low
// level, which only matters for levels outside [0, 15].
func pack4(qs []byte, L *nibbleLevels) {
	for j := range legacyBlock / 2 {
		qs[j] = L[j] | L[j+16]<<4
	}
}

// pack5 stores the low four bits of each level as nibble pairs and bit 4 of
// level j as bit j of the little-endian word qh.
func pack5(qh, qs []byte, L *nibbleLevels) {
	var h uint32
	for j := range legacyBlock / 2 {
		qs[j] = L[j]&0x0f | (L[j+16]&0x0f)<<4
		h |= uint32(L[j]>>4&1)<<j | uint32(L[j+16]>>4&1)<<(j+16)
	}
	binary.LittleEndian.PutUint32(qh, h)
}

// signedMax returns the value of largest magnitude, the first one on ties.
func signedMax(x []float32) float32 {
	var amax, m float32
	for _, v := range x {
		if a := absf(v); amax < a {
			amax, m = a, v
		}
	}
	return m
}

// valueRange returns the smallest and largest of x, as ggml's min/max scans.
func valueRange(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// absMax returns the largest |x|, or 0 for an empty or all-zero x.
func absMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		if a := absf(v); a > amax {
			amax = a
		}
	}
	return amax
}

// symmetricLevels fills L with x/d + offset rounded half up and capped at
// top, for the Q4_0 and Q5_0 reference quantizers (d = max/-offset). It
// returns d.
func symmetricLevels(L *nibbleLevels, x []float32, offset, top int8) float32 {
	d := signedMax(x) / -float32(offset)
	id := invOrZero(d)
	half := float32(offset) + 0.5
	x = x[:len(L)]
	if id > math.MaxFloat32 {
		for j, v := range x {
			L[j] = uint8(min(top, int8(cInt(float32(v*id)+half))))
		}
		return d
	}
	// |v*id| <= -offset, so the sum is in range for the plain conversion.
	for j, v := range x {
		L[j] = uint8(min(top, int8(int32(float32(v*id)+half))))
	}
	return d
}

// offsetLevels fills L with (x-min)/d rounded half up, for the Q4_1 and Q5_1
// reference quantizers (d = (max-min)/nmax). Q4_1 caps the levels at nmax;
// Q5_1 relies on them staying in range. It returns d and min.
func offsetLevels(L *nibbleLevels, x []float32, nmax uint8, capped bool) (d, lo float32) {
	lo, hi := valueRange(x)
	d = (hi - lo) / float32(nmax)
	id := invOrZero(d)
	for j, v := range x {
		q := cInt(float32((v-lo)*id) + 0.5)
		if capped {
			L[j] = uint8(min(int8(nmax), int8(q)))
		} else {
			L[j] = uint8(q)
		}
	}
	return d, lo
}

func quantizeBlockQ4_0(b []byte, x []float32) {
	var L nibbleLevels
	putFP16(b, symmetricLevels(&L, x, 8, 15))
	pack4(b[2:18], &L)
}

func quantizeBlockQ5_0(b []byte, x []float32) {
	var L nibbleLevels
	putFP16(b, symmetricLevels(&L, x, 16, 31))
	pack5(b[2:6], b[6:22], &L)
}

func quantizeBlockQ4_1(b []byte, x []float32) {
	var L nibbleLevels
	d, m := offsetLevels(&L, x, 15, true)
	putFP16(b, d)
	putFP16(b[2:], m)
	pack4(b[4:20], &L)
}

func quantizeBlockQ5_1(b []byte, x []float32) {
	var L nibbleLevels
	d, m := offsetLevels(&L, x, 31, false)
	putFP16(b, d)
	putFP16(b[2:], m)
	pack5(b[4:8], b[8:24], &L)
}

// The importance-matrix quantizers get per-value weights and search for the
// scale (and min) with the least weighted error.

// blockWeights are one block's weights, passed by value: a slice of a local
// array handed to a function value would escape to the heap on every call,
// and QuantizeInto must not allocate.
type blockWeights [legacyBlock]float32

func quantizeBlockQ4_0Weighted(b []byte, x []float32, w blockWeights) {
	L := symmetricSearch(x, w[:], 8)
	pack4(b[2:18], &L.nibbleLevels)
	putFP16(b, L.scale)
}

func quantizeBlockQ5_0Weighted(b []byte, x []float32, w blockWeights) {
	L := symmetricSearch(x, w[:], 16)
	pack5(b[2:6], b[6:22], &L.nibbleLevels)
	putFP16(b, L.scale)
}

func quantizeBlockQ4_1Weighted(b []byte, x []float32, w blockWeights) {
	L := offsetSearch(x, w[:], 15)
	putFP16(b, L.scale)
	putFP16(b[2:], -L.minOffset)
	pack4(b[4:20], &L.nibbleLevels)
}

func quantizeBlockQ5_1Weighted(b []byte, x []float32, w blockWeights) {
	L := offsetSearch(x, w[:], 31)
	putFP16(b, L.scale)
	putFP16(b[2:], -L.minOffset)
	pack5(b[4:8], b[8:24], &L.nibbleLevels)
}

// searchedLevels are a block's levels with the scale (and min offset) found for them.
type searchedLevels struct {
	nibbleLevels
	scale, minOffset float32
}

func symmetricSearch(x, w []float32, nmax int) searchedLevels {
	var l [legacyBlock]int8
	var s searchedLevels
	s.scale = makeQXQuants(int32(nmax), x, w, l[:])
	for j, v := range l {
		s.nibbleLevels[j] = uint8(v)
	}
	return s
}

func offsetSearch(x, w []float32, nmax int) searchedLevels {
	var s searchedLevels
	var aux nibbleLevels
	s.scale, s.minOffset = makeQKXQuants(int32(nmax), x, w, s.nibbleLevels[:], aux[:], -0.9, 0.05, 36, false)
	return s
}

// weightedQuantizer makes the kernel of a format whose ggml quantizer takes
// an importance matrix: without one it is the reference quantizer plain;
// with one, each value's weight is imatrix[j]*sqrt(sigma2 + x^2), sigma2
// being the row's mean square, and weighted quantizes each block.
func weightedQuantizer(t Type, plain func(b []byte, x []float32), weighted func(b []byte, x []float32, w blockWeights)) func(dst []byte, src []float32, nrows, nPerRow int, imatrix []float32) {
	flat := blockQuantizer(t, plain)
	ts := t.TypeSize()
	return func(dst []byte, src []float32, nrows, nPerRow int, imatrix []float32) {
		if imatrix == nil {
			flat(dst, src, nrows, nPerRow, nil)
			return
		}
		var w blockWeights
		for r := range nrows {
			x := src[r*nPerRow : (r+1)*nPerRow]
			var sumX2 float32
			for _, v := range x {
				sumX2 += float32(v * v)
			}
			sigma2 := sumX2 / float32(nPerRow)
			for ib := range nPerRow / legacyBlock {
				xb := x[ib*legacyBlock : (ib+1)*legacyBlock]
				qw := imatrix[ib*legacyBlock : (ib+1)*legacyBlock]
				for j, v := range xb {
					w[j] = qw[j] * sqrtf(sigma2+float32(v*v))
				}
				at := (r*(nPerRow/legacyBlock) + ib) * ts
				weighted(dst[at:at+ts], xb, w)
			}
		}
	}
}

// q8Block fills qs with round(x/d), d = max|x|/127, as ggml's reference
// Q8_0 and Q8_1 quantizers do, and returns d and the sum of the levels.
func q8Block(qs []byte, x []float32) (d float32, sum int) {
	d = absMax(x) / 127
	id := invOrZero(d)
	qs = qs[:len(x)]
	if id > math.MaxFloat32 {
		// 1/d overflowed (d is tiny): the products are infinite or NaN,
		// and only the C conversion's out-of-range result will do.
		for j, v := range x {
			q := int8(cInt(roundHalfAway(v * id)))
			qs[j] = byte(q)
			sum += int(q)
		}
		return d, sum
	}
	for j, v := range x {
		q := int8(roundSmall(v * id))
		qs[j] = byte(q)
		sum += int(q)
	}
	return d, sum
}

func quantizeBlockQ8_0(b []byte, x []float32) {
	d, _ := q8Block(b[2:34], x)
	putFP16(b, d)
}

// quantizeBlockQ8_1 is quantize_row_q8_1_ref: ggml's CPU backend uses it for
// activations in its scalar builds. (Its AVX builds round ties to even and
// scale by 127/max instead of 1/(max/127), so they differ in a few levels.)
func quantizeBlockQ8_1(b []byte, x []float32) {
	d, sum := q8Block(b[4:36], x)
	putFP16(b, d)
	putFP16(b[2:], float32(sum)*d)
}

func dequantizeBlockQ4_0(y []float32, b []byte) {
	d := fp16At(b)
	for j, q := range b[2:18] {
		y[j] = float32(int(q&0x0f)-8) * d
		y[j+16] = float32(int(q>>4)-8) * d
	}
}

func dequantizeBlockQ4_1(y []float32, b []byte) {
	d, m := fp16At(b), fp16At(b[2:])
	for j, q := range b[4:20] {
		y[j] = float32(float32(q&0x0f)*d) + m
		y[j+16] = float32(float32(q>>4)*d) + m
	}
}

// fifthBits returns bit 4 of values j and j+16 of a 5-bit block, in place.
func fifthBits(qh uint32, j int) (lo, hi uint8) {
	return uint8(qh>>j<<4) & 0x10, uint8(qh>>(j+12)) & 0x10
}

func dequantizeBlockQ5_0(y []float32, b []byte) {
	d := fp16At(b)
	qh := binary.LittleEndian.Uint32(b[2:])
	for j, q := range b[6:22] {
		h0, h1 := fifthBits(qh, j)
		y[j] = float32(int(q&0x0f|h0)-16) * d
		y[j+16] = float32(int(q>>4|h1)-16) * d
	}
}

func dequantizeBlockQ5_1(y []float32, b []byte) {
	d, m := fp16At(b), fp16At(b[2:])
	qh := binary.LittleEndian.Uint32(b[4:])
	for j, q := range b[8:24] {
		h0, h1 := fifthBits(qh, j)
		y[j] = float32(float32(q&0x0f|h0)*d) + m
		y[j+16] = float32(float32(q>>4|h1)*d) + m
	}
}

// dequantizeQ8 writes q*d for the int8 levels qs.
func dequantizeQ8(y []float32, d float32, qs []byte) {
	for j, q := range qs {
		y[j] = float32(int8(q)) * d
	}
}

func dequantizeBlockQ8_0(y []float32, b []byte) { dequantizeQ8(y, fp16At(b), b[2:34]) }

// dequantizeBlockQ8_1 has no counterpart in ggml, which never converts Q8_1
// back; it is the plain q*d the format stands for (s is ignored).
func dequantizeBlockQ8_1(y []float32, b []byte) { dequantizeQ8(y, fp16At(b), b[4:36]) }

// quantizeBlockQ1_0 stores the mean |x| as the scale and a set bit for each
// x >= 0 (value j is bit j%8 of byte j/8).
func quantizeBlockQ1_0(b []byte, x []float32) {
	var sum float32
	for _, v := range x {
		sum += absf(v)
	}
	putFP16(b, sum/float32(len(x)))
	qs := b[2:18]
	clear(qs)
	for j, v := range x {
		if v >= 0 {
			qs[j/8] |= 1 << (j % 8)
		}
	}
}

func dequantizeBlockQ1_0(y []float32, b []byte) {
	d := fp16At(b)
	for j := range y {
		if b[2+j/8]>>(j%8)&1 != 0 {
			y[j] = d
		} else {
			y[j] = -d
		}
	}
}

// quantizeBlockQ2_0 stores d = max|x| and, in bits 2*(j%4) of byte j/4,
// round(x/d)+1 clamped to [0, 3], i.e. the levels -d, 0, d and 2d.
func quantizeBlockQ2_0(b []byte, x []float32) {
	d := absMax(x)
	id := invOrZero(d)
	putFP16(b, d)
	qs := b[2:18]
	clear(qs)
	for j, v := range x {
		q := max(0, min(3, int64(cInt(roundHalfAway(v*id)))+1))
		qs[j/4] |= byte(q) << (2 * (j % 4))
	}
}

func dequantizeBlockQ2_0(y []float32, b []byte) {
	d := fp16At(b)
	for j := range y {
		q := int(b[2+j/4]>>(2*(j%4))) & 3
		y[j] = float32(q-1) * d
	}
}
