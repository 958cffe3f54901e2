package quant

import (
	"encoding/binary"
	"math/bits"
)

//go:generate go run ./internal/gengrids -o grids_gen.go

// The lattice formats store each group of 8 weights as an index into a
// codebook of points (grids_gen.go) plus per-sub-block scales. IQ2 and IQ3
// points hold magnitudes and the block carries sign bits; IQ1 points hold
// -1, 0 or 1 and a shifted delta replaces the signs. Every format is decoded
// by unpacking a block into a gridBlock first, so the dequantizers and the dot
// products (dot_lattice.go) share one reading of each layout.

const (
	qkGrid     = 256 // block length of every lattice format
	gridGroups = 32  // 8-element groups in a block
)

// gridBlock is one 256-element lattice block unpacked into its 32 groups of 8
// consecutive elements.
type gridBlock struct {
	d float32 // the block's fp16 scale
	// point is the group's codebook point: byte j is element j (unsigned
	// magnitudes for IQ2/IQ3, int8 values for IQ1). The 4-element IQ3
	// points of a group fill the low and high halves.
	point [gridGroups]uint64
	signs [gridGroups]uint8 // bit j negates element j (IQ2, IQ3)
	scale [gridGroups]uint8 // the scale field of the group's sub-block
	neg   uint32            // IQ1: bit g set when group g's delta is negative
}

// iqSigns expands the low 7 bits of v to the 8 sign bits of a group: the
// eighth is chosen so that the number of negated elements is even.
func iqSigns(v uint32) uint8 {
	v &= 0x7f
	return uint8(v) | uint8(bits.OnesCount32(v)&1)<<7
}

// iqNibble returns the low (half 0) or high (half 1) 4 bits of b.
func iqNibble(b byte, half int) uint8 { return b >> (4 * half) & 0xf }

func unpackIQ2XXS(b []byte) (u gridBlock) {
	u.d = FP16ToFP32(binary.LittleEndian.Uint16(b))
	for sb := range 8 {
		q := b[2+8*sb : 10+8*sb]
		aux := binary.LittleEndian.Uint32(q[4:])
		for l := range 4 {
			g := 4*sb + l
			u.point[g] = iq2xxsGrid[q[l]]
			u.signs[g] = iqSigns(aux >> (7 * l))
			u.scale[g] = uint8(aux >> 28)
		}
	}
	return u
}

func unpackIQ2XS(b []byte) (u gridBlock) {
	u.d = FP16ToFP32(binary.LittleEndian.Uint16(b))
	for g := range gridGroups {
		q := binary.LittleEndian.Uint16(b[2+2*g:])
		u.point[g] = iq2xsGrid[q&511]
		u.signs[g] = iqSigns(uint32(q >> 9))
		u.scale[g] = iqNibble(b[66+g/4], g%4/2)
	}
	return u
}

func unpackIQ2S(b []byte) (u gridBlock) {
	u.d = FP16ToFP32(binary.LittleEndian.Uint16(b))
	for g := range gridGroups {
		sb, l := g/4, g%4
		high := int(b[66+sb]) >> (2 * l) & 3
		u.point[g] = iq2sGrid[int(b[2+g])|high<<8]
		u.signs[g] = b[34+g]
		u.scale[g] = iqNibble(b[74+sb], l/2)
	}
	return u
}

func unpackIQ3XXS(b []byte) (u gridBlock) {
	u.d = FP16ToFP32(binary.LittleEndian.Uint16(b))
	for g := range gridGroups {
		aux := binary.LittleEndian.Uint32(b[66+4*(g/4):])
		u.point[g] = uint64(iq3xxsGrid[b[2+2*g]]) | uint64(iq3xxsGrid[b[3+2*g]])<<32
		u.signs[g] = iqSigns(aux >> (7 * (g % 4)))
		u.scale[g] = uint8(aux >> 28)
	}
	return u
}

func unpackIQ3S(b []byte) (u gridBlock) {
	u.d = FP16ToFP32(binary.LittleEndian.Uint16(b))
	for g := range gridGroups {
		sb := g / 4
		// Bit k of qh[sb] is the ninth index bit of the sub-block's k-th point.
		qh := int(b[66+sb]) >> (2 * (g % 4))
		lo := int(b[2+2*g]) | (qh&1)<<8
		hi := int(b[3+2*g]) | (qh>>1&1)<<8
		u.point[g] = uint64(iq3sGrid[lo]) | uint64(iq3sGrid[hi])<<32
		u.signs[g] = b[74+g]
		u.scale[g] = iqNibble(b[106+sb/2], sb%2)
	}
	return u
}

func unpackIQ1S(b []byte) (u gridBlock) {
	u.d = FP16ToFP32(binary.LittleEndian.Uint16(b))
	for sb := range 8 {
		qh := binary.LittleEndian.Uint16(b[34+2*sb:])
		for l := range 4 {
			g := 4*sb + l
			u.point[g] = iq1sGrid[int(b[2+g])|int(qh>>(3*l)&7)<<8]
			u.scale[g] = uint8(qh >> 12 & 7)
			u.neg |= uint32(qh>>15) << g
		}
	}
	return u
}

func unpackIQ1M(b []byte) (u gridBlock) {
	var sc [4]uint16
	for k := range sc {
		sc[k] = binary.LittleEndian.Uint16(b[48+2*k:])
	}
	// The fp16 block scale is spread over the top nibbles of the four words.
	u.d = FP16ToFP32(sc[0]>>12 | sc[1]>>8&0x00f0 | sc[2]>>4&0x0f00 | sc[3]&0xf000)
	for g := range gridGroups {
		sb, l := g/4, g%4
		// Each qh byte serves two groups: 3 index bits and a delta sign per nibble.
		qh := int(b[32+2*sb+l/2]) >> (4 * (l % 2))
		u.point[g] = iq1sGrid[int(b[g])|(qh&7)<<8]
		u.scale[g] = uint8(sc[sb/2] >> (6*(sb%2) + 3*(l/2)) & 7)
		u.neg |= uint32(qh>>3&1) << g
	}
	return u
}

// dequantizeSignedGrid decodes IQ2 and IQ3 rows: element j of group g is
// subScale(d, scale[g]) * point byte j, negated by sign bit j.
func dequantizeSignedGrid(dst []float32, src []byte, t Type, unpack func([]byte) gridBlock, subScale func(d float32, s uint8) float32) {
	size := t.TypeSize()
	var u gridBlock
	for i := range len(dst) / qkGrid {
		u = unpack(src[i*size : (i+1)*size])
		y := dst[i*qkGrid : (i+1)*qkGrid]
		for g := range gridGroups {
			db := subScale(u.d, u.scale[g])
			p, s := u.point[g], u.signs[g]
			for j := range 8 {
				// Negate rather than multiply by -1: the library's build
				// flips the sign bit, which shows for a NaN block scale.
				v := db * float32(uint8(p>>(8*j)))
				if s>>j&1 != 0 {
					v = -v
				}
				y[8*g+j] = v
			}
		}
	}
}

// iq1Delta is the shift of IQ1_S and IQ1_M points towards the sign given by
// the group's delta bit.
const iq1Delta = 0.125

// dequantizeIQ1 decodes IQ1_S and IQ1_M rows: element j of group g is
// d*(2*scale[g]+1) * (point value j ± iq1Delta).
func dequantizeIQ1(dst []float32, src []byte, t Type, unpack func([]byte) gridBlock) {
	size := t.TypeSize()
	var u gridBlock
	for i := range len(dst) / qkGrid {
		u = unpack(src[i*size : (i+1)*size])
		y := dst[i*qkGrid : (i+1)*qkGrid]
		for g := range gridGroups {
			dl := u.d * float32(2*int(u.scale[g])+1)
			delta := float32(iq1Delta)
			if u.neg>>g&1 != 0 {
				delta = -iq1Delta
			}
			p := u.point[g]
			for j := range 8 {
				y[8*g+j] = dl * (float32(int8(p>>(8*j))) + delta)
			}
		}
	}
}

// iq2SubScale is the IQ2 sub-block scale d*(s+1/2)/4.
func iq2SubScale(d float32, s uint8) float32 { return d * (0.5 + float32(s)) * 0.25 }

// iq3xxsSubScale is the IQ3_XXS sub-block scale d*(s+1/2)/2.
func iq3xxsSubScale(d float32, s uint8) float32 { return d * (0.5 + float32(s)) * 0.5 }

// iq3sSubScale is the IQ3_S sub-block scale d*(2s+1).
func iq3sSubScale(d float32, s uint8) float32 { return d * float32(1+2*int(s)) }

func dequantizeIQ2XXS(dst []float32, src []byte) {
	dequantizeSignedGrid(dst, src, IQ2_XXS, unpackIQ2XXS, iq2SubScale)
}

func dequantizeIQ2XS(dst []float32, src []byte) {
	dequantizeSignedGrid(dst, src, IQ2_XS, unpackIQ2XS, iq2SubScale)
}

func dequantizeIQ2S(dst []float32, src []byte) {
	dequantizeSignedGrid(dst, src, IQ2_S, unpackIQ2S, iq2SubScale)
}

func dequantizeIQ3XXS(dst []float32, src []byte) {
	dequantizeSignedGrid(dst, src, IQ3_XXS, unpackIQ3XXS, iq3xxsSubScale)
}

func dequantizeIQ3S(dst []float32, src []byte) {
	dequantizeSignedGrid(dst, src, IQ3_S, unpackIQ3S, iq3sSubScale)
}

func dequantizeIQ1S(dst []float32, src []byte) { dequantizeIQ1(dst, src, IQ1_S, unpackIQ1S) }

func dequantizeIQ1M(dst []float32, src []byte) { dequantizeIQ1(dst, src, IQ1_M, unpackIQ1M) }
