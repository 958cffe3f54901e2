package openvino

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// extract converts src, the ggml bytes of weight t, into dst (at least
// l.total bytes) in the layout l: weights, scales, zero points, and, for
// a lossy conversion, a copy of src at l.origOff. Verified on the double
// by the round-trip and MUL_MAT tests.
func extract(t *graph.Tensor, l extractedLayout, src, dst []byte) error {
	if uint64(len(dst)) < l.total || uint64(len(src)) != t.NBytes() {
		return fmt.Errorf("openvino: extracting %s: %d source bytes for %d, %d destination bytes for %d", t.Name, len(src), t.NBytes(), len(dst), l.total)
	}
	w := dst[l.weightsOff : l.weightsOff+l.weightsLen]
	sc := dst[l.scalesOff : l.scalesOff+l.scalesLen]
	zp := dst[l.zpOff : l.zpOff+l.zpLen]
	clear(dst[:l.total])
	if !l.exact {
		copy(dst[l.origOff:], src)
	}
	if l.requant != requantNone {
		return requantize(t, l, src, w, sc)
	}
	switch t.Type {
	case quant.Q4_0:
		// i4 value q-8 is the nibble q with its top bit flipped.
		forBlocks(src, 18, func(b int, blk []byte) {
			copy(sc[2*b:], blk[0:2])
			packNibbles(w[16*b:], blk[2:18], 0x8)
		})
	case quant.MXFP4:
		// ggml's nibble codes are E2M1 codes (kvalues_mxfp4 are the E2M1
		// values doubled, and the scale is halved to match), and the
		// scale byte is an E8M0 exponent: only the nibble order changes.
		forBlocks(src, 17, func(b int, blk []byte) {
			sc[b] = blk[0]
			packNibbles(w[16*b:], blk[1:17], 0)
		})
	case quant.Q8_0:
		forBlocks(src, 34, func(b int, blk []byte) {
			copy(sc[2*b:], blk[0:2])
			copy(w[32*b:], blk[2:34])
		})
	case quant.Q4_1:
		forBlocks(src, 20, func(b int, blk []byte) {
			d, m := quant.FP16ToFP32(le16(blk)), quant.FP16ToFP32(le16(blk[2:]))
			copy(sc[2*b:], blk[0:2])
			packNibbles(w[16*b:], blk[4:20], 0)
			putZP(zp, b, -m, d)
		})
	case quant.Q5_1:
		forBlocks(src, 24, func(b int, blk []byte) {
			d, m := quant.FP16ToFP32(le16(blk)), quant.FP16ToFP32(le16(blk[2:]))
			qh := binary.LittleEndian.Uint32(blk[4:])
			copy(sc[2*b:], blk[0:2])
			for j := 0; j < 16; j++ {
				w[32*b+j] = blk[8+j]&0xf | byte((qh>>j)&1)<<4
				w[32*b+j+16] = blk[8+j]>>4 | byte((qh>>(j+16))&1)<<4
			}
			putZP(zp, b, -m, d)
		})
	case quant.Q4_K:
		forBlocks(src, 144, func(b int, blk []byte) {
			d, dmin := quant.FP16ToFP32(le16(blk)), quant.FP16ToFP32(le16(blk[2:]))
			scales, qs := blk[4:16], blk[16:144]
			for j := 0; j < 8; j++ {
				s, m := scaleMinK4(j, scales)
				g := 8*b + j
				ds := d * float32(s)
				putF32(sc, g, ds)
				putF32(zp, g, ratio(dmin*float32(m), ds))
				// Sub-block j is the low (even j) or high (odd j) nibbles of
				// the 32 bytes of chunk j/2.
				chunk := qs[32*(j/2) : 32*(j/2)+32]
				for i := 0; i < 32; i += 2 {
					lo, hi := chunk[i]&0xf, chunk[i+1]&0xf
					if j%2 == 1 {
						lo, hi = chunk[i]>>4, chunk[i+1]>>4
					}
					w[16*g+i/2] = lo | hi<<4
				}
			}
		})
	case quant.Q5_K:
		forBlocks(src, 176, func(b int, blk []byte) {
			d, dmin := quant.FP16ToFP32(le16(blk)), quant.FP16ToFP32(le16(blk[2:]))
			scales, qh, qs := blk[4:16], blk[16:48], blk[48:176]
			for j := 0; j < 8; j++ {
				s, m := scaleMinK4(j, scales)
				g := 8*b + j
				ds := d * float32(s)
				putF32(sc, g, ds)
				putF32(zp, g, ratio(dmin*float32(m), ds))
				chunk := qs[32*(j/2) : 32*(j/2)+32]
				for i := 0; i < 32; i++ {
					q := chunk[i] & 0xf
					if j%2 == 1 {
						q = chunk[i] >> 4
					}
					w[32*g+i] = q | (qh[i]>>j&1)<<4
				}
			}
		})
	case quant.Q6_K:
		forBlocks(src, 210, func(b int, blk []byte) {
			ql, qh, scales := blk[0:128], blk[128:192], blk[192:208]
			d := quant.FP16ToFP32(le16(blk[208:]))
			for g := 0; g < 16; g++ {
				putF32(sc, 16*b+g, d*float32(int8(scales[g])))
			}
			out := w[256*b : 256*b+256]
			for h := 0; h < 2; h++ {
				l6, h6, o := ql[64*h:], qh[32*h:], out[128*h:]
				for l := 0; l < 32; l++ {
					o[l] = byte(int8(l6[l]&0xf|(h6[l]&3)<<4) - 32)
					o[l+32] = byte(int8(l6[l+32]&0xf|(h6[l]>>2&3)<<4) - 32)
					o[l+64] = byte(int8(l6[l]>>4|(h6[l]>>4&3)<<4) - 32)
					o[l+96] = byte(int8(l6[l+32]>>4|(h6[l]>>6&3)<<4) - 32)
				}
			}
		})
	default:
		return fmt.Errorf("%w: no extraction for %v", ErrUnsupportedType, t.Type)
	}
	return nil
}

// restore rebuilds the ggml bytes of an extracted weight into out: from
// the copy kept for a lossy conversion, else by inverting extract.
func restore(t *graph.Tensor, l extractedLayout, mem, out []byte) error {
	if uint64(len(out)) != t.NBytes() {
		return fmt.Errorf("openvino: restoring %s: %d bytes for %d", t.Name, len(out), t.NBytes())
	}
	if !l.exact {
		copy(out, mem[l.origOff:l.origOff+t.NBytes()])
		return nil
	}
	w, sc := mem[l.weightsOff:], mem[l.scalesOff:]
	switch t.Type {
	case quant.Q4_0:
		forBlocks(out, 18, func(b int, blk []byte) {
			copy(blk[0:2], sc[2*b:])
			unpackNibbles(blk[2:18], w[16*b:], 0x8)
		})
	case quant.MXFP4:
		forBlocks(out, 17, func(b int, blk []byte) {
			blk[0] = sc[b]
			unpackNibbles(blk[1:17], w[16*b:], 0)
		})
	case quant.Q8_0:
		forBlocks(out, 34, func(b int, blk []byte) {
			copy(blk[0:2], sc[2*b:])
			copy(blk[2:34], w[32*b:32*b+32])
		})
	default:
		return fmt.Errorf("%w: no exact inverse for %v", ErrUnsupportedType, t.Type)
	}
	return nil
}

// forBlocks calls fn for each block of size bytes of buf.
func forBlocks(buf []byte, size int, fn func(b int, blk []byte)) {
	for b := 0; b*size < len(buf); b++ {
		fn(b, buf[b*size:(b+1)*size])
	}
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

// packNibbles turns a ggml 32-weight nibble block (byte j: weight j low,
// weight j+16 high) into OpenVINO's order (byte k: weight 2k low, 2k+1
// high), xoring every nibble with flip.
func packNibbles(dst, src []byte, flip byte) {
	var v [32]byte
	for j := 0; j < 16; j++ {
		v[j], v[j+16] = (src[j]&0xf)^flip, (src[j]>>4)^flip
	}
	for k := 0; k < 16; k++ {
		dst[k] = v[2*k] | v[2*k+1]<<4
	}
}

// unpackNibbles is the inverse of packNibbles.
func unpackNibbles(dst, src []byte, flip byte) {
	var v [32]byte
	for k := 0; k < 16; k++ {
		v[2*k], v[2*k+1] = (src[k]&0xf)^flip, (src[k]>>4)^flip
	}
	for j := 0; j < 16; j++ {
		dst[j] = v[j] | v[j+16]<<4
	}
}

// putU4 stores u4 value v as element i of a packed u4 array.
func putU4(dst []byte, i int, v uint8) {
	if i%2 == 0 {
		dst[i/2] = dst[i/2]&0xf0 | v&0xf
	} else {
		dst[i/2] = dst[i/2]&0x0f | v<<4
	}
}

// putZP stores zero point num/d of group g as f16 (0 when d is 0):
// value = (q - zp) * d.
func putZP(zp []byte, g int, num, d float32) {
	binary.LittleEndian.PutUint16(zp[2*g:], quant.FP32ToFP16(ratio(num, d)))
}

func ratio(num, d float32) float32 {
	if d == 0 {
		return 0
	}
	return num / d
}

func putF32(b []byte, i int, v float32) { binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v)) }

// scaleMinK4 is ggml's get_scale_min_k4: sub-block j's 6-bit scale and
// minimum from a K-quant's 12 scale bytes.
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// requantize converts t to l.requant from its dequantized values, as
// ggml-openvino does (to_float, then its own quantize_q8_0 / q4_0).
func requantize(t *graph.Tensor, l extractedLayout, src, w, sc []byte) error {
	x, err := quant.Dequantize(t.Type, src, int(t.NElements()))
	if err != nil {
		return err
	}
	switch l.requant {
	case requantF16:
		for i, v := range x {
			binary.LittleEndian.PutUint16(w[2*i:], quant.FP32ToFP16(v))
		}
	case requantQ8_0C:
		g := int(l.group)
		for b := 0; b*g < len(x); b++ {
			blk := x[b*g : (b+1)*g]
			amax := float32(0)
			for _, v := range blk {
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			d := amax / 127
			id := float32(0)
			if d != 0 {
				id = 1 / d
			}
			binary.LittleEndian.PutUint16(sc[2*b:], quant.FP32ToFP16(d))
			for i, v := range blk {
				w[b*g+i] = byte(int8(math.Round(float64(v * id))))
			}
		}
	case requantQ4_0_128, requantQ4_0_64:
		g := int(l.group)
		for b := 0; b*g < len(x); b++ {
			blk := x[b*g : (b+1)*g]
			amax, mx := float32(0), float32(0)
			for _, v := range blk {
				if a := float32(math.Abs(float64(v))); a > amax {
					amax, mx = a, v
				}
			}
			d := mx / -8
			id := float32(0)
			if d != 0 {
				id = 1 / d
			}
			binary.LittleEndian.PutUint16(sc[2*b:], quant.FP32ToFP16(d))
			for i, v := range blk {
				q := min(15, int8(v*id+8.5)) - 8 // ggml's quantize_row_q4_0_ref
				e := b*g + i
				putU4(w, e, uint8(q)&0xf)
			}
		}
	}
	return nil
}
