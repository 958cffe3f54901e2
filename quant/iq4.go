package quant

import (
	"encoding/binary"
	"math"
)

// kvaluesIQ4NL are the 16 non-linear levels shared by IQ4_NL and IQ4_XS
// (ggml's kvalues_iq4nl). They are part of the format: a 4-bit index in a
// block selects one of them.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

const (
	// iq4SubBlock is the number of values sharing one scale.
	iq4SubBlock = 32
	// iq4Tries is how far ggml_quantize_chunk searches around the first
	// scale guess (ntry in ggml).
	iq4Tries = 7
	// iq4NoSearch is ntry -1 of IQ4_NL's reference quantizer (the CPU
	// backend's from_float): the first guess has the other sign and there
	// is no search.
	iq4NoSearch = -1
)

// bestIndexIQ4 returns the index of the level nearest to x by binary search,
// breaking ties towards the upper level as ggml's best_index_int8 does. A
// NaN x selects the last level, as in C. Converting x first keeps a
// caller's product from fusing into the subtractions.
func bestIndexIQ4(x float32) uint8 {
	x = float32(x)
	const n = uint8(len(kvaluesIQ4NL))
	if x <= float32(kvaluesIQ4NL[0]) {
		return 0
	}
	if x >= float32(kvaluesIQ4NL[n-1]) {
		return n - 1
	}
	lo, hi := uint8(0), n-1
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if x < float32(kvaluesIQ4NL[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if x-float32(kvaluesIQ4NL[hi-1]) < float32(kvaluesIQ4NL[hi])-x {
		return hi - 1
	}
	return hi
}

// iq4Sums returns sum(w*q*x) and sum(w*q*q) over the sub-block when every
// value is mapped to its nearest level after scaling by id.
func iq4Sums(xb, weight []float32, id float32) (sumqx, sumq2 float32) {
	for j, x := range xb {
		q := float32(kvaluesIQ4NL[bestIndexIQ4(id*x)])
		w := weight[j]
		sumqx += float32(w * q * x)
		sumq2 += float32(w * q * q)
	}
	return sumqx, sumq2
}

// iq4SubScale finds the scale of one sub-block as ggml's
// quantize_row_iq4_nl_impl does: a first guess from the value of largest
// magnitude, then a search over neighbouring guesses for the scale that
// minimises the weighted error.
func iq4SubScale(xb, weight []float32, tries int) float32 {
	var amax, maxv float32
	for _, x := range xb {
		if ax := float32(math.Abs(float64(x))); ax > amax {
			amax, maxv = ax, x
		}
	}
	if amax < groupMaxEps {
		return 0
	}
	v0 := float32(kvaluesIQ4NL[0])
	d0 := maxv / v0
	if tries > 0 {
		d0 = -maxv / v0
	}
	sumqx, sumq2 := iq4Sums(xb, weight, 1/d0)
	var d float32
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for itry := -tries; itry <= tries; itry++ {
		id := float32(itry+int(kvaluesIQ4NL[0])) / maxv
		sumqx, sumq2 = iq4Sums(xb, weight, id)
		if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
			d = sumqx / sumq2
			best = d * sumqx
		}
	}
	return d
}

// iq4Scales computes the scale of every 32-value sub-block of the
// super-block x (32 values for IQ4_NL, 256 for IQ4_XS) into scales, weighting
// the error by the importance weights qw when given and by x*x otherwise.
func iq4Scales(x, qw, scales []float32, tries int) {
	var sigma2 float32
	for _, v := range x {
		sigma2 += float32(v * v)
	}
	sigma2 = float32(sigma2 * (2 / float32(len(x))))

	var weight [iq4SubBlock]float32
	for ib := range scales {
		xb := x[ib*iq4SubBlock : (ib+1)*iq4SubBlock]
		if qw != nil {
			qb := qw[ib*iq4SubBlock:]
			for j, v := range xb {
				weight[j] = qb[j] * float32(math.Sqrt(float64(sigma2+float32(v*v))))
			}
		} else {
			for j, v := range xb {
				weight[j] = v * v
			}
		}
		scales[ib] = iq4SubScale(xb, weight[:], tries)
	}
}

// iq4FirstGuessLevels maps x to levels at the first scale guess,
// max/kvalues[0], and keeps them: the reference quantizer fits the scale to
// these levels but does not requantize. For an all-zero block ggml leaves the
// levels unwritten (stale memory); they are zero here, which dequantizes the
// same under the block's zero scale.
func iq4FirstGuessLevels(x []float32, L []uint8) {
	var amax, maxv float32
	for _, v := range x {
		if ax := absf(v); ax > amax {
			amax, maxv = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return
	}
	id := 1 / (maxv / float32(kvaluesIQ4NL[0]))
	for j, v := range x {
		L[j] = bestIndexIQ4(id * v)
	}
}

// iq4Requantize maps every value of x to its nearest level at scale d.
func iq4Requantize(x []float32, d float32, L []uint8) {
	var id float32
	if d != 0 {
		id = 1 / d
	}
	for j, v := range x {
		L[j] = bestIndexIQ4(id * v)
	}
}

// iq4Pack stores two level indices per byte: byte j of each 32-value group
// holds value j in its low nibble and value j+16 in its high nibble.
func iq4Pack(dst []byte, L []uint8) {
	for i := 0; i < len(L)/32; i++ {
		for j := 0; j < 16; j++ {
			dst[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
		}
	}
}

// quantizeIQ4NL writes blocks of an fp16 scale and 16 bytes of packed level
// indices for every 32 values, as ggml_quantize_chunk.
func quantizeIQ4NL(dst []byte, src []float32, _, nPerRow int, imatrix []float32) {
	iq4NLBlocks(dst, src, nPerRow, imatrix, iq4Tries)
}

// fromFloatIQ4NL is IQ4_NL's reference quantizer, the CPU backend's
// from_float: no importance matrix and no scale search.
func fromFloatIQ4NL(dst []byte, src []float32) {
	iq4NLBlocks(dst, src, len(src), nil, iq4NoSearch)
}

func iq4NLBlocks(dst []byte, src []float32, nPerRow int, imatrix []float32, tries int) {
	const bs, ts = 32, 18
	var L [bs]uint8
	var scale [1]float32
	for b := 0; b < len(src)/bs; b++ {
		x := src[b*bs : (b+1)*bs]
		var qw []float32
		if imatrix != nil {
			col := b * bs % nPerRow
			qw = imatrix[col : col+bs]
		}
		iq4Scales(x, qw, scale[:], tries)
		if tries > 0 {
			iq4Requantize(x, scale[0], L[:])
		} else {
			iq4FirstGuessLevels(x, L[:])
		}
		out := dst[b*ts : (b+1)*ts]
		binary.LittleEndian.PutUint16(out, FP32ToFP16(scale[0]))
		iq4Pack(out[2:], L[:])
	}
}

// quantizeIQ4XS writes super-blocks of 256 values: an fp16 super-scale,
// eight 6-bit sub-scales (low nibbles in scales_l, high bit pairs in
// scales_h) and 128 bytes of packed level indices.
func quantizeIQ4XS(dst []byte, src []float32, _, nPerRow int, imatrix []float32) {
	const bs, ts, nsub = 256, 136, 256 / iq4SubBlock
	var L [bs]uint8
	var scales [nsub]float32
	for b := 0; b < len(src)/bs; b++ {
		x := src[b*bs : (b+1)*bs]
		var qw []float32
		if imatrix != nil {
			col := b * bs % nPerRow
			qw = imatrix[col : col+bs]
		}
		iq4Scales(x, qw, scales[:], iq4Tries)

		var amaxScale, maxScale float32
		for _, s := range scales {
			if as := float32(math.Abs(float64(s))); as > amaxScale {
				amaxScale, maxScale = as, s
			}
		}
		d := -maxScale / 32
		var id float32
		if d != 0 {
			id = 1 / d
		}
		out := dst[b*ts : (b+1)*ts]
		var scalesH uint16
		scalesL := out[4:8]
		for ib := range scales {
			l := max(-32, min(31, nearestInt(id*scales[ib])))
			xb := x[ib*iq4SubBlock : (ib+1)*iq4SubBlock]
			iq4Requantize(xb, d*float32(l), L[ib*iq4SubBlock:])
			l += 32
			if ib%2 == 0 {
				scalesL[ib/2] = uint8(l & 0xf)
			} else {
				scalesL[ib/2] |= uint8(l&0xf) << 4
			}
			scalesH |= uint16(l>>4) << (2 * ib)
		}
		binary.LittleEndian.PutUint16(out, FP32ToFP16(d))
		binary.LittleEndian.PutUint16(out[2:], scalesH)
		iq4Pack(out[8:], L[:])
	}
}

// dequantizeIQ4Group expands one 32-value group of packed level indices
// at scale d.
func dequantizeIQ4Group(dst []float32, qs []byte, d float32) {
	for j := 0; j < 16; j++ {
		dst[j] = d * float32(kvaluesIQ4NL[qs[j]&0xf])
		dst[j+16] = d * float32(kvaluesIQ4NL[qs[j]>>4])
	}
}

func dequantizeIQ4NL(dst []float32, src []byte) {
	const bs, ts = 32, 18
	for b := 0; b < len(dst)/bs; b++ {
		blk := src[b*ts : (b+1)*ts]
		dequantizeIQ4Group(dst[b*bs:], blk[2:], FP16ToFP32(binary.LittleEndian.Uint16(blk)))
	}
}

func dequantizeIQ4XS(dst []float32, src []byte) {
	const bs, ts = 256, 136
	for b := 0; b < len(dst)/bs; b++ {
		blk := src[b*ts : (b+1)*ts]
		d := FP16ToFP32(binary.LittleEndian.Uint16(blk))
		scalesH := binary.LittleEndian.Uint16(blk[2:])
		for ib := 0; ib < bs/iq4SubBlock; ib++ {
			ls := int(blk[4+ib/2]>>(4*(ib%2)))&0xf | int(scalesH>>(2*ib))&3<<4
			dequantizeIQ4Group(dst[b*bs+ib*iq4SubBlock:], blk[8+16*ib:], d*float32(ls-32))
		}
	}
}
