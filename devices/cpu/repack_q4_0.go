package cpu

import (
	"encoding/binary"

	"github.com/ggml-go/ggml/quant"
)

// Q4_0 in groups of eight rows. Block b of a group is 144 bytes (the eight
// rows' 18-byte blocks b): the eight fp16 scales, then four 32-byte chunks.
// Chunk j holds at bytes 4r..4r+3 the quant bytes qs[4j..4j+3] of row r:
// their low nibbles are elements 4j..4j+3 of the block and their high
// nibbles elements 16+4j..16+4j+3. Each chunk's nibbles are thus an 8-row
// by 4-element tile, which one multiply-add against four activation bytes
// (broadcast) turns into one partial sum per row, each in its own lane.
// ggml's block_q4_0x8 serves the same purpose with another arrangement.

const (
	q4_0Block   = 18
	q4_0x8Block = 8 * q4_0Block
)

// packQ4_0x8 moves whole words (the products interleave plain weights on
// the fly, so this is on their path).
func packQ4_0x8(dst, src []byte, rs int) {
	le := binary.LittleEndian
	for b := range rs / q4_0Block {
		o := dst[b*q4_0x8Block : (b+1)*q4_0x8Block : (b+1)*q4_0x8Block]
		for r := range 8 {
			xb := src[r*rs+b*q4_0Block : r*rs+(b+1)*q4_0Block : r*rs+(b+1)*q4_0Block]
			le.PutUint16(o[2*r:], le.Uint16(xb))
			le.PutUint32(o[16+4*r:], le.Uint32(xb[2:]))
			le.PutUint32(o[48+4*r:], le.Uint32(xb[6:]))
			le.PutUint32(o[80+4*r:], le.Uint32(xb[10:]))
			le.PutUint32(o[112+4*r:], le.Uint32(xb[14:]))
		}
	}
}

func unpackQ4_0x8(dst, src []byte, rs int) {
	for b := range rs / q4_0Block {
		o := src[b*q4_0x8Block : (b+1)*q4_0x8Block]
		for r := range 8 {
			xb := dst[r*rs+b*q4_0Block : r*rs+(b+1)*q4_0Block]
			copy(xb[:2], o[2*r:2*r+2])
			for j := range 4 {
				copy(xb[2+4*j:6+4*j], o[16+32*j+4*r:16+32*j+4*r+4])
			}
		}
	}
}

// gemvQ4_0x8 is the generic kernel: out[r] is row r of the group x (nb
// blocks) times the Q8_0 activation row y, with the arithmetic of quant's
// Q4_0 vec_dot (an exact integer sum per block, then
// sum += s*d*dy in that order, in float32), so the generic path gives the
// same bits whether the weight is repacked or not.
func gemvQ4_0x8(nb int, x, y, _ []byte, out []float32) {
	for r := range 8 {
		var sum float32
		for b := range nb {
			o := x[b*q4_0x8Block:]
			yb := y[b*34 : b*34+34]
			var s int32
			for j := range 4 {
				for i := range 4 {
					q := o[16+32*j+4*r+i]
					s += (int32(q&15)-8)*int32(int8(yb[2+4*j+i])) + (int32(q>>4)-8)*int32(int8(yb[18+4*j+i]))
				}
			}
			d := quant.FP16ToFP32(binary.LittleEndian.Uint16(o[2*r:]))
			sum += float32(float32(float32(s)*d) * quant.FP16ToFP32(binary.LittleEndian.Uint16(yb)))
		}
		out[r] = sum
	}
}
