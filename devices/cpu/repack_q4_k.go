package cpu

import (
	"encoding/binary"
	"math"

	"github.com/ggml-go/ggml/quant"
)

// Q4_K interleaved for products only (made on the fly, never stored: it
// is larger than the rows it holds). Super-block b of a group of eight
// rows is 1472 bytes, with the scales decoded ahead so the kernel only
// multiplies:
//
//	0     d of each row, as float32
//	32    dmin of each row, as float32
//	64    for sub-block j, at 64+32j: the rows' 6-bit scales as int16
//	      pairs (sc, sc), one pair per row
//	320   for sub-blocks 2p, 2p+1, at 320+32p: the rows' minimums as int16
//	      pairs (m[2p], m[2p+1])
//	448   the quants: chunk 8c+q (at 448+32(8c+q)) holds at bytes 4r..4r+3
//	      qs[32c+4q..32c+4q+3] of row r, whose low nibbles are elements
//	      64c+4q.. (sub-block 2c) and high nibbles 64c+32+4q.. (2c+1)
//
// A scale pair meets the 16-bit sums of a sub-block in one VPMADDWD,
// which scales and widens them at once; a minimum pair meets two
// sub-blocks' activation sums (the aux entry) the same way.

const (
	q4KBlock   = 144
	q4Kx8Block = 1472
)

var q4_Kx8Layout = &repackLayout{
	typ:        quant.Q4_K,
	rows:       8,
	pack:       packQ4_Kx8,
	packedSize: func(plain uint64) uint64 { return plain / (8 * q4KBlock) * q4Kx8Block },
	aux:        q8_KAux,
}

// q4KScaleMin is sub-block j's 6-bit scale and minimum in the 12 packed
// scale bytes of a Q4_K block.
func q4KScaleMin(sc *[12]byte, j int) (s, m byte) {
	if j < 4 {
		return sc[j] & 63, sc[j+4] & 63
	}
	return sc[j+4]&0xf | (sc[j-4]>>6)<<4, sc[j+4]>>4 | (sc[j]>>6)<<4
}

func packQ4_Kx8(dst, src []byte, rs int) {
	le := binary.LittleEndian
	for b := range rs / q4KBlock {
		o := dst[b*q4Kx8Block : (b+1)*q4Kx8Block : (b+1)*q4Kx8Block]
		packQ4_KScales(o, src[b*q4KBlock:], rs)
		for r := range 8 {
			xb := src[r*rs+b*q4KBlock : r*rs+(b+1)*q4KBlock : r*rs+(b+1)*q4KBlock]
			for q := range 32 {
				le.PutUint32(o[448+32*q+4*r:], le.Uint32(xb[16+4*q:]))
			}
		}
	}
}

// packQ4_KScales writes the first 448 bytes of an interleaved super-block
// (d, dmin, scale and minimum pairs) from the eight rows' blocks at src,
// rs bytes apart.
func packQ4_KScales(o, src []byte, rs int) {
	le := binary.LittleEndian
	out := (*[448]byte)(o)
	for r := range 8 {
		xb := (*[16]byte)(src[r*rs:])
		le.PutUint32(out[4*r:], math.Float32bits(quant.FP16ToFP32(le.Uint16(xb[0:]))))
		le.PutUint32(out[32+4*r:], math.Float32bits(quant.FP16ToFP32(le.Uint16(xb[2:]))))
		sc := (*[12]byte)(xb[4:])
		var mins [8]byte
		for j := range 8 {
			s, m := q4KScaleMin(sc, j)
			le.PutUint32(out[64+32*j+4*r:], uint32(s)|uint32(s)<<16)
			mins[j] = m
		}
		for p := range 4 {
			le.PutUint32(out[320+32*p+4*r:], uint32(mins[2*p])|uint32(mins[2*p+1])<<16)
		}
	}
}

// q8_KAux: per super-block the eight sub-blocks' quant sums, as int16
// (at most 32*128 in size), from the Q8_K row's bsums.
var q8_KAux = &actAux{vdt: quant.Q8_K, block: 256, size: 16, fill: func(aux, y []byte, nb int) {
	le := binary.LittleEndian
	for b := range nb {
		bs := y[b*292+260 : b*292+292]
		for j := range 8 {
			le.PutUint16(aux[16*b+2*j:], uint16(int16(le.Uint16(bs[4*j:]))+int16(le.Uint16(bs[4*j+2:]))))
		}
	}
}}
