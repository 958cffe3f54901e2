package cpu

import (
	"encoding/binary"

	"github.com/ggml-go/ggml/quant"
)

// Interleaved layouts of eight rows for the 32-element types with an fp16
// scale first (Q4_0: 16 quant bytes per block, Q8_0: 32). Block b of a
// group is the eight rows' blocks b: the eight scales (16 bytes), then one
// 32-byte chunk per four quant bytes, chunk j holding at bytes 4r..4r+3
// the quant bytes 4j..4j+3 of row r. A chunk is thus an 8-row by 4-byte
// tile, which one multiply-add against four activation bytes (broadcast)
// turns into one partial sum per row, each in its own lane. For Q4_0 a
// byte's low nibble is element 4j+i and its high nibble element 16+4j+i,
// so a Q4_0 chunk holds two tiles. ggml's block_q4_0x8 serves the same
// purpose with another arrangement.

// x8Layout is the layout of a type whose blocks are blockBytes long.
func x8Layout(typ quant.Type, blockBytes int) *repackLayout {
	return &repackLayout{
		typ:  typ,
		rows: 8,
		aux:  q8_0Aux,
		pack: func(dst, src []byte, rs int) {
			le := binary.LittleEndian
			gb := 8 * blockBytes
			for b := range rs / blockBytes {
				o := dst[b*gb : (b+1)*gb : (b+1)*gb]
				for r := range 8 {
					xb := src[r*rs+b*blockBytes : r*rs+(b+1)*blockBytes : r*rs+(b+1)*blockBytes]
					le.PutUint16(o[2*r:], le.Uint16(xb))
					for j := 0; 4*j+2 < blockBytes; j++ {
						le.PutUint32(o[16+32*j+4*r:], le.Uint32(xb[2+4*j:]))
					}
				}
			}
		},
		unpack: func(dst, src []byte, rs int) {
			le := binary.LittleEndian
			gb := 8 * blockBytes
			for b := range rs / blockBytes {
				o := src[b*gb : (b+1)*gb : (b+1)*gb]
				for r := range 8 {
					xb := dst[r*rs+b*blockBytes : r*rs+(b+1)*blockBytes : r*rs+(b+1)*blockBytes]
					le.PutUint16(xb, le.Uint16(o[2*r:]))
					for j := 0; 4*j+2 < blockBytes; j++ {
						le.PutUint32(xb[2+4*j:], le.Uint32(o[16+32*j+4*r:]))
					}
				}
			}
		},
	}
}

const (
	q4_0x8Block = 8 * 18
	q8_0x8Block = 8 * 34
)

// nibbleSumX8 is the exact integer dot product of row r of the
// interleaved Q4_0-layout block o with the Q8_0 block yb, the nibbles
// mapped through levels.
func nibbleSumX8(o, yb []byte, r int, levels *[16]int32) int32 {
	var s int32
	for j := range 4 {
		for i := range 4 {
			q := o[16+32*j+4*r+i]
			s += levels[q&15]*int32(int8(yb[2+4*j+i])) + levels[q>>4]*int32(int8(yb[18+4*j+i]))
		}
	}
	return s
}

// q4_0Levels and iq4NLLevels map a nibble to its level: code - 8 for Q4_0;
// IQ4_NL's table, read from quant by dequantizing every code at scale 1.
var (
	q4_0Levels = func() (l [16]int32) {
		for i := range l {
			l[i] = int32(i) - 8
		}
		return
	}()
	iq4NLLevels = func() (l [16]int32) {
		blk := make([]byte, 18)
		binary.LittleEndian.PutUint16(blk, 0x3c00) // fp16 1.0
		for i := range 8 {
			blk[2+i] = byte(2*i) | byte(2*i+1)<<4
		}
		v, err := quant.Dequantize(quant.IQ4_NL, blk, 32)
		if err != nil {
			panic(err) // quant always has IQ4_NL's to_float
		}
		for i := range 8 {
			l[2*i], l[2*i+1] = int32(v[i]), int32(v[16+i])
		}
		return
	}()
)

// gemvQ4_0x8 is the generic kernel: out[r] is row r of the group x (nb
// blocks) times the Q8_0 activation row y, with the arithmetic of quant's
// Q4_0 vec_dot (an exact integer sum per block, then sum += s*d*dy in
// that order, in float32), so the generic path gives the same bits whether
// the weight is interleaved or not.
func gemvQ4_0x8(nb int, x, y, _ []byte, out []float32) {
	for r := range 8 {
		var sum float32
		for b := range nb {
			o, yb := x[b*q4_0x8Block:], y[b*34:b*34+34]
			d := quant.FP16ToFP32(binary.LittleEndian.Uint16(o[2*r:]))
			sum += float32(float32(float32(nibbleSumX8(o, yb, r, &q4_0Levels))*d) * quant.FP16ToFP32(binary.LittleEndian.Uint16(yb)))
		}
		out[r] = sum
	}
}

// gemvIQ4_NLx8 is gemvQ4_0x8 for IQ4_NL, with quant's IQ4_NL arithmetic
// (sum += (dy*d) * s).
func gemvIQ4_NLx8(nb int, x, y, _ []byte, out []float32) {
	for r := range 8 {
		var sum float32
		for b := range nb {
			o, yb := x[b*q4_0x8Block:], y[b*34:b*34+34]
			d := quant.FP16ToFP32(binary.LittleEndian.Uint16(yb)) * quant.FP16ToFP32(binary.LittleEndian.Uint16(o[2*r:]))
			sum += float32(d * float32(nibbleSumX8(o, yb, r, &iq4NLLevels)))
		}
		out[r] = sum
	}
}

// gemvQ8_0x8 is gemvQ4_0x8 for Q8_0, with quant's Q8_0 arithmetic
// (sum += s * (d*dy)).
func gemvQ8_0x8(nb int, x, y, _ []byte, out []float32) {
	for r := range 8 {
		var sum float32
		for b := range nb {
			o := x[b*q8_0x8Block:]
			yb := y[b*34 : b*34+34]
			var s int32
			for j := range 8 {
				for i := range 4 {
					s += int32(int8(o[16+32*j+4*r+i])) * int32(int8(yb[2+4*j+i]))
				}
			}
			d := quant.FP16ToFP32(binary.LittleEndian.Uint16(o[2*r:]))
			// The explicit conversion keeps the product rounded before
			// the sum, as quant's kernel does (Go may fuse x*y+z otherwise,
			// and does on arm64).
			sum += float32(float32(s) * float32(d*quant.FP16ToFP32(binary.LittleEndian.Uint16(yb))))
		}
		out[r] = sum
	}
}
