package quant

// The K-quants Q2_K..Q6_K: super-blocks of 256 values split into sub-blocks
// of 16 or 32, each with its own quantized scale (and minimum for Q2_K,
// Q4_K and Q5_K) under one or two fp16 super-block scales.
//
// Without an importance matrix ggml quantizes with its reference
// quantizers (quantize_row_*_ref); with one, with the weighted searches of
// quantize_row_*_impl. The two paths choose scales differently, so each
// block quantizer below has both, selected by whether qw is nil.

// kSuperBlock is the number of values in a K-quant super-block (QK_K).
const kSuperBlock = 256

// kBlockQuantizer quantizes the super-block x into y (one block of the
// type). qw is the block's slice of the importance matrix, or nil.
type kBlockQuantizer func(y []byte, x, qw []float32)

// quantizeK runs a block quantizer over every super-block of every row.
// Rows are contiguous in src and dst, so block b of the whole input is
// block b of the output; its importance weights start at its column.
func quantizeK(t Type, block kBlockQuantizer) func([]byte, []float32, int, int, []float32) {
	return func(dst []byte, src []float32, _, nPerRow int, imatrix []float32) {
		ts := t.TypeSize()
		for b := 0; b*kSuperBlock < len(src); b++ {
			var qw []float32
			if imatrix != nil {
				col := b * kSuperBlock % nPerRow
				qw = imatrix[col : col+kSuperBlock]
			}
			block(dst[b*ts:(b+1)*ts], src[b*kSuperBlock:(b+1)*kSuperBlock], qw)
		}
	}
}

// scaleMinK4 unpacks sub-block j's 6-bit scale and minimum from the 12
// scale bytes of a Q4_K or Q5_K block (ggml's get_scale_min_k4).
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xF | q[j-4]>>6<<4, q[j+4]>>4 | q[j]>>6<<4
}

// putScalesMinsK4 packs eight scales and minimums into 12 bytes, the
// inverse of scaleMinK4. As in ggml the first four of each are stored whole,
// so bits above the sixth (which only a wrapped quant has) spill over.
func putScalesMinsK4(q []byte, ls, lm *[8]uint8) {
	for j := range 4 {
		q[j] = ls[j]
		q[j+4] = lm[j]
	}
	for j := 4; j < 8; j++ {
		q[j+4] = ls[j]&0xF | lm[j]<<4
		q[j-4] |= ls[j] >> 4 << 6
		q[j] |= lm[j] >> 4 << 6
	}
}

// scalesQ3K unpacks the sixteen 6-bit scales of a Q3_K block, minus 32.
func scalesQ3K(q []byte) (s [16]int8) {
	for j := range s {
		var lo byte
		if j < 8 {
			lo = q[j] & 0xF
		} else {
			lo = q[j-8] >> 4
		}
		hi := q[8+j%4] >> (2 * (j / 4)) & 3
		s[j] = int8(lo|hi<<4) - 32
	}
	return s
}

// putScalesQ3K packs sixteen 6-bit scales (offset by 32) into 12 bytes,
// the inverse of scalesQ3K.
func putScalesQ3K(q []byte, ls *[16]int8) {
	clear(q[:12])
	for j, v := range ls {
		l := int32(v)
		if j < 8 {
			q[j] = byte(l & 0xF)
		} else {
			q[j-8] |= byte(l & 0xF << 4)
		}
		q[8+j%4] |= byte(l >> 4 << (2 * (j / 4)))
	}
}

// pack2Bits stores the low two bits of 256 quants: byte l of each 32-byte
// group holds quants l, l+32, l+64 and l+96 of its 128 values.
func pack2Bits[T int8 | uint8](qs []byte, L *[kSuperBlock]T) {
	for j := 0; j < kSuperBlock; j += 128 {
		for l := range 32 {
			qs[j/4+l] = byte(L[j+l]) | byte(L[j+l+32])<<2 | byte(L[j+l+64])<<4 | byte(L[j+l+96])<<6
		}
	}
}

// sumSquares is the float32 sum of x[i]^2 in order.
func sumSquares(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += float32(v * v)
	}
	return s
}

// imatrixWeights sets w[i] = qw[i] * sqrt(sigma2 + x[i]^2), the per-value
// weights the imatrix paths fit with, and returns their sum.
func imatrixWeights(w, x, qw []float32, sigma2 float32) float32 {
	var sum float32
	for i, v := range x {
		w[i] = float32(qw[i] * sqrtf(sigma2+float32(v*v)))
		sum += w[i]
	}
	return sum
}

// Q2_K block: scales[16] (scale | min<<4), qs[64], d, dmin.
func quantizeQ2KBlock(y []byte, x, qw []float32) {
	var (
		L            [kSuperBlock]uint8
		laux         [16]uint8
		w            [16]float32
		scales, mins [16]float32
		d, dmin      float32
	)
	sc := y[:16]
	if qw == nil {
		var maxScale, maxMin float32
		for j := range 16 {
			xb := x[16*j : 16*j+16]
			for l, v := range xb {
				w[l] = absf(v)
			}
			scales[j], mins[j] = makeQKXQuants(3, xb, w[:], L[16*j:], laux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		clear(sc)
		var dv, mv float32
		if maxScale > 0 {
			iscale := 15 / maxScale
			for j := range sc {
				sc[j] = byte(nearestInt(iscale * scales[j]))
			}
			dv = maxScale / 15
		}
		if maxMin > 0 {
			iscale := 15 / maxMin
			for j := range sc {
				sc[j] |= byte(nearestInt(iscale*mins[j]) << 4)
			}
			mv = maxMin / 15
		}
		d, dmin = putFP16(y[80:], dv), putFP16(y[82:], mv)
	} else {
		var sw [16]float32
		var ls, lm [16]uint8
		sigma2 := float32(sumSquares(x) / kSuperBlock)
		for j := range 16 {
			xb := x[16*j : 16*j+16]
			sw[j] = imatrixWeights(w[:], xb, qw[16*j:], sigma2)
			scales[j], mins[j] = makeQKXQuants(3, xb, w[:], L[16*j:], laux[:], -0.9, 0.05, 36, false)
		}
		d = putFP16(y[80:], makeQPQuants(15, scales[:], ls[:], sw[:]))
		dmin = putFP16(y[82:], makeQPQuants(15, mins[:], lm[:], sw[:]))
		for j := range sc {
			sc[j] = ls[j] | lm[j]<<4
		}
	}
	for j := range 16 {
		dl := d * float32(sc[j]&0xF)
		if dl == 0 {
			continue
		}
		ml := float32(dmin * float32(sc[j]>>4))
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = uint8(kClamp(nearestInt((x[i]+ml)/dl), 0, 3))
		}
	}
	pack2Bits(y[16:80], &L)
}

func dequantizeQ2KBlock(y []float32, b []byte) {
	d, dmin := fp16At(b[80:]), fp16At(b[82:])
	for j := range 16 {
		sc := b[j]
		dl, ml := d*float32(sc&0xF), float32(dmin*float32(sc>>4))
		// Sub-block j sits in bits 2*(j%8/2) of the 16 bytes at 16*(j%2)
		// of 32-byte run j/8; Q3_K's low bits use the same layout.
		q := b[16+32*(j/8)+16*(j%2):]
		shift := 2 * (j % 8 / 2)
		for l := range 16 {
			y[16*j+l] = float32(dl*float32(q[l]>>shift&3)) - ml
		}
	}
}

// Q3_K block: hmask[32], qs[64], scales[12], d.
func quantizeQ3KBlock(y []byte, x, qw []float32) {
	var (
		L      [kSuperBlock]int8
		scales [16]float32
		ls     [16]int8
		d      float32
	)
	if qw == nil {
		var maxScale, amax float32
		for j := range 16 {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:])
			if a := absf(scales[j]); a > amax {
				amax, maxScale = a, scales[j]
			}
		}
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := range ls {
				l := int32(int8(nearestInt(iscale * scales[j])))
				ls[j] = int8(kClamp(l, -32, 31) + 32)
			}
			d = 1 / iscale
		}
	} else {
		var w, sw [16]float32
		sigma2 := float32(2 * sumSquares(x) / kSuperBlock)
		for j := range 16 {
			xb := x[16*j : 16*j+16]
			sw[j] = imatrixWeights(w[:], xb, qw[16*j:], sigma2)
			scales[j] = makeQXQuants(4, xb, w[:], L[16*j:])
		}
		d = makeQXQuants(32, scales[:], sw[:], ls[:])
	}
	putScalesQ3K(y[96:108], &ls)
	d = putFP16(y[108:], d)
	for j, sc := range scalesQ3K(y[96:108]) {
		dl := d * float32(sc)
		if dl == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = int8(kClamp(nearestInt(x[i]/dl), -4, 3) + 4)
		}
	}
	// The high bit of quant j goes to bit j/32 of hmask byte j%32.
	hmask := y[:32]
	clear(hmask)
	for j := range L {
		if L[j] > 3 {
			hmask[j%32] |= 1 << (j / 32)
			L[j] -= 4
		}
	}
	pack2Bits(y[32:96], &L)
}

func dequantizeQ3KBlock(y []float32, b []byte) {
	d := fp16At(b[108:])
	scales := scalesQ3K(b[96:108])
	for j := range 16 {
		dl := d * float32(scales[j])
		q := b[32+32*(j/8)+16*(j%2):]
		hm := b[16*(j%2):]
		shift := 2 * (j % 8 / 2)
		bit := byte(1) << (j / 2)
		for l := range 16 {
			v := int32(q[l] >> shift & 3)
			if hm[l]&bit == 0 {
				v -= 4
			}
			y[16*j+l] = dl * float32(v)
		}
	}
}

// q45K holds what distinguishes Q4_K from Q5_K when choosing scales.
type q45K struct {
	nmax     int32
	refRmin  float32 // first trial offset of the reference search
	refSteps int     // trial count of the reference search, minus one
	// clampImatrix caps the imatrix path's scale quants at 63, which ggml
	// does for Q5_K but not for Q4_K.
	clampImatrix bool
}

var (
	q4K = q45K{nmax: 15, refRmin: -1, refSteps: 20}
	q5K = q45K{nmax: 31, refRmin: -0.5, refSteps: 15, clampImatrix: true}
)

// quantizeQ45K fills the 16-byte header of a Q4_K or Q5_K block (d, dmin,
// scales[12]) for the super-block x and leaves its quants in L.
func quantizeQ45K(hdr []byte, x, qw []float32, p q45K, L *[kSuperBlock]uint8) {
	var (
		laux         [32]uint8
		w            [32]float32
		scales, mins [8]float32
		ls, lm       [8]uint8
		d, dmin      float32
	)
	if qw == nil {
		var maxScale, maxMin float32
		for j := range 8 {
			xb := x[32*j : 32*j+32]
			avX := sqrtf(sumSquares(xb) / 32)
			for l, v := range xb {
				w[l] = avX + absf(v)
			}
			scales[j], mins[j] = makeQKXQuants(p.nmax, xb, w[:], L[32*j:], laux[:], p.refRmin, 0.1, p.refSteps, false)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		var invScale, invMin float32
		if maxScale > 0 {
			invScale = 63 / maxScale
		}
		if maxMin > 0 {
			invMin = 63 / maxMin
		}
		for j := range 8 {
			ls[j] = min(63, uint8(nearestInt(invScale*scales[j])))
			lm[j] = min(63, uint8(nearestInt(invMin*mins[j])))
		}
		d, dmin = maxScale/63, maxMin/63
	} else {
		var sw [8]float32
		sigma2 := float32(2 * sumSquares(x) / kSuperBlock)
		for j := range 8 {
			xb := x[32*j : 32*j+32]
			sw[j] = imatrixWeights(w[:], xb, qw[32*j:], sigma2)
			scales[j], mins[j] = makeQKXQuants(p.nmax, xb, w[:], L[32*j:], laux[:], -0.9, 0.05, 36, false)
		}
		d = makeQPQuants(63, scales[:], ls[:], sw[:])
		dmin = makeQPQuants(63, mins[:], lm[:], sw[:])
		if p.clampImatrix {
			for j := range 8 {
				ls[j], lm[j] = min(63, ls[j]), min(63, lm[j])
			}
		}
	}
	d = putFP16(hdr[0:], d)
	dmin = putFP16(hdr[2:], dmin)
	putScalesMinsK4(hdr[4:16], &ls, &lm)
	for j := range 8 {
		sc, m := scaleMinK4(j, hdr[4:16])
		dl := d * float32(sc)
		if dl == 0 {
			continue
		}
		ml := float32(dmin * float32(m))
		for i := 32 * j; i < 32*j+32; i++ {
			L[i] = uint8(kClamp(nearestInt((x[i]+ml)/dl), 0, p.nmax))
		}
	}
}

// Q4_K block: d, dmin, scales[12], qs[128] (quants l and l+32 of each
// 64 values share a byte).
func quantizeQ4KBlock(y []byte, x, qw []float32) {
	var L [kSuperBlock]uint8
	quantizeQ45K(y[:16], x, qw, q4K, &L)
	qs := y[16:144]
	for j := 0; j < kSuperBlock; j += 64 {
		for l := range 32 {
			qs[j/2+l] = L[j+l] | L[j+l+32]<<4
		}
	}
}

// dequantizeQ45K expands a Q4_K or Q5_K block from its header, its 4-bit
// quants qs and, for Q5_K, its fifth bits qh (nil for Q4_K).
func dequantizeQ45K(y []float32, b, qs, qh []byte) {
	d, dmin := fp16At(b[0:]), fp16At(b[2:])
	for j := range 8 {
		sc, m := scaleMinK4(j, b[4:16])
		dl, ml := d*float32(sc), float32(dmin*float32(m))
		q := qs[32*(j/2):]
		shift := 4 * (j % 2)
		for l := range 32 {
			v := q[l] >> shift & 0xF
			if qh != nil {
				v |= qh[l] >> j & 1 << 4
			}
			y[32*j+l] = float32(dl*float32(v)) - ml
		}
	}
}

func dequantizeQ4KBlock(y []float32, b []byte) { dequantizeQ45K(y, b, b[16:144], nil) }

// Q5_K block: d, dmin, scales[12], qh[32] (bit j of byte l is the fifth bit
// of value l of sub-block j), qs[128] as in Q4_K.
func quantizeQ5KBlock(y []byte, x, qw []float32) {
	var L [kSuperBlock]uint8
	quantizeQ45K(y[:16], x, qw, q5K, &L)
	qh, qs := y[16:48], y[48:176]
	clear(qh)
	for j := range 8 {
		for l := range 32 {
			v := L[32*j+l]
			if v > 15 {
				v -= 16
				qh[l] |= 1 << j
			}
			if j%2 == 0 {
				qs[32*(j/2)+l] = v
			} else {
				qs[32*(j/2)+l] |= v << 4
			}
		}
	}
}

func dequantizeQ5KBlock(y []float32, b []byte) { dequantizeQ45K(y, b, b[48:176], b[16:48]) }

// Q6_K block: ql[128] (low 4 bits), qh[64] (high 2 bits), scales[16]
// (int8), d.
func quantizeQ6KBlock(y []byte, x, qw []float32) {
	var (
		L                [kSuperBlock]int8
		scales           [16]float32
		w                [16]float32
		maxScale, maxAbs float32
	)
	for j := range 16 {
		xb := x[16*j : 16*j+16]
		wb := w[:]
		if qw != nil {
			wb = qw[16*j : 16*j+16]
		} else {
			for l, v := range xb {
				w[l] = v * v
			}
		}
		scales[j] = makeQXQuants(32, xb, wb, L[16*j:])
		if a := absf(scales[j]); a > maxAbs {
			maxAbs, maxScale = a, scales[j]
		}
	}
	if maxAbs < groupMaxEps {
		clear(y)
		return
	}
	iscale := -128 / maxScale
	d := putFP16(y[208:], 1/iscale)
	sc := y[192:208]
	for j := range sc {
		sc[j] = byte(min(127, nearestInt(iscale*scales[j])))
	}
	for j := range 16 {
		dl := d * float32(int8(sc[j]))
		if dl == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = int8(kClamp(nearestInt(x[i]/dl), -32, 31) + 32)
		}
	}
	// Each 128 values use 64 ql bytes and 32 qh bytes: value l+32k has its
	// low nibble in ql[l+32*(k%2)] (high nibble when k >= 2) and its top two
	// bits at bit 2k of qh[l].
	for n := 0; n < kSuperBlock; n += 128 {
		ql, qh := y[n/2:], y[128+n/4:]
		for l := range 32 {
			q1, q2, q3, q4 := byte(L[n+l]), byte(L[n+l+32]), byte(L[n+l+64]), byte(L[n+l+96])
			ql[l] = q1&0xF | q3<<4
			ql[l+32] = q2&0xF | q4<<4
			qh[l] = q1>>4 | q2>>4<<2 | q3>>4<<4 | q4>>4<<6
		}
	}
}

func dequantizeQ6KBlock(y []float32, b []byte) {
	d := fp16At(b[208:])
	for n := 0; n < kSuperBlock; n += 128 {
		ql, qh, sc := b[n/2:], b[128+n/4:], b[192+n/16:]
		for l := range 32 {
			is := l / 16
			for k := range 4 {
				lo := ql[l+32*(k%2)] >> (4 * (k / 2)) & 0xF
				v := int32(lo|(qh[l]>>(2*k)&3)<<4) - 32
				y[n+l+32*k] = d * float32(int8(sc[is+2*k])) * float32(v)
			}
		}
	}
}

// ScaleMinK4 is sub-block j's 6-bit scale and minimum in the 12 scale
// bytes q of a Q4_K or Q5_K block (ggml's get_scale_min_k4), for kernels
// outside this package that unpack those blocks.
func ScaleMinK4(j int, q []byte) (sc, m uint8) { return scaleMinK4(j, q) }
