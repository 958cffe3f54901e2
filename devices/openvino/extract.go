package openvino

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// extract converts src, the ggml bytes of weight t, into dst (at least
// l.total bytes) in the layout l: weights, scales and zero points.
// Verified on the double by the round-trip and MUL_MAT tests.
func extract(t *graph.Tensor, l extractedLayout, src, dst []byte) error {
	if uint64(len(dst)) < l.total || uint64(len(src)) != t.NBytes() {
		return fmt.Errorf("openvino: extracting %s: %d source bytes for %d, %d destination bytes for %d", t.Name, len(src), t.NBytes(), len(dst), l.total)
	}
	w := dst[l.weightsOff : l.weightsOff+l.weightsLen]
	sc := dst[l.scalesOff : l.scalesOff+l.scalesLen]
	zp := dst[l.zpOff : l.zpOff+l.zpLen]
	clear(dst[:l.total])
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
			putZP(zp, b, ratio(-m, d))
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
			putZP(zp, b, ratio(-m, d))
		})
	case quant.Q4_K:
		forBlocks(src, 144, func(b int, blk []byte) {
			d, dmin := quant.FP16ToFP32(le16(blk)), quant.FP16ToFP32(le16(blk[2:]))
			scales, qs := blk[4:16], blk[16:144]
			for j := 0; j < 8; j++ {
				s, m := scaleMinK4(j, scales)
				g := 8*b + j
				putZP(zp, g, ratio(dmin*float32(m), putF16(sc, g, d*float32(s))))
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
				putZP(zp, g, ratio(dmin*float32(m), putF16(sc, g, d*float32(s))))
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
				putF16(sc, 16*b+g, d*float32(int8(scales[g])))
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

// restore writes the ggml bytes of an extracted weight into out: the
// original ones where the conversion is exact (Q4_0, Q8_0, MXFP4), else
// the converted values, which are what the device computes with,
// quantized to t's type again (upstream's get-tensor returns the
// converted layout's raw bytes; the original ones are not kept).
func restore(t *graph.Tensor, l extractedLayout, mem, out []byte) error {
	if uint64(len(out)) != t.NBytes() {
		return fmt.Errorf("openvino: restoring %s: %d bytes for %d", t.Name, len(out), t.NBytes())
	}
	w, sc := mem[l.weightsOff:], mem[l.scalesOff:]
	switch {
	case !l.exact:
		x, err := decode(t, l, mem)
		if err != nil {
			return err
		}
		_, err = quant.QuantizeInto(out, t.Type, x, int(t.NElements()/t.Ne[0]), int(t.Ne[0]), nil)
		return err
	case t.Type == quant.Q4_0:
		forBlocks(out, 18, func(b int, blk []byte) {
			copy(blk[0:2], sc[2*b:])
			unpackNibbles(blk[2:18], w[16*b:], 0x8)
		})
	case t.Type == quant.MXFP4:
		forBlocks(out, 17, func(b int, blk []byte) {
			blk[0] = sc[b]
			unpackNibbles(blk[1:17], w[16*b:], 0)
		})
	case t.Type == quant.Q8_0:
		forBlocks(out, 34, func(b int, blk []byte) {
			copy(blk[0:2], sc[2*b:])
			copy(blk[2:34], w[32*b:32*b+32])
		})
	default:
		return fmt.Errorf("%w: no exact inverse for %v", ErrUnsupportedType, t.Type)
	}
	return nil
}

// decode evaluates an extracted layout as the IR's decompression subgraph
// does: (w - zp) * scale per group, in f32.
func decode(t *graph.Tensor, l extractedLayout, mem []byte) ([]float32, error) {
	n := int(t.NElements())
	out := make([]float32, n)
	w, sc, zp := mem[l.weightsOff:], mem[l.scalesOff:], mem[l.zpOff:]
	wv, err := elemReader(l.wtype)
	if err != nil {
		return nil, err
	}
	if l.requant == requantF16 {
		for i := range out {
			out[i] = wv(w, i)
		}
		return out, nil
	}
	sv, err := elemReader(l.scaleType)
	if err != nil {
		return nil, err
	}
	zv := func([]byte, int) float32 { return 0 }
	if !l.symmetric {
		if zv, err = elemReader(l.zpType); err != nil {
			return nil, err
		}
	}
	g := int(l.group)
	for i := range out {
		out[i] = (wv(w, i) - zv(zp, i/g)) * sv(sc, i/g)
	}
	return out, nil
}

// elemReader returns the reader of element i of a packed array of et.
func elemReader(et elemType) (func(b []byte, i int) float32, error) {
	switch et {
	case etU4:
		return func(b []byte, i int) float32 { return float32(b[i/2] >> (4 * (i % 2)) & 0xf) }, nil
	case etI4:
		return func(b []byte, i int) float32 { return float32(int8(b[i/2]>>(4*(i%2))<<4) >> 4) }, nil
	case etF4E2M1:
		return func(b []byte, i int) float32 {
			v := b[i/2] >> (4 * (i % 2)) & 0xf
			mag := [8]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}[v&7]
			if v&8 != 0 {
				return -mag
			}
			return mag
		}, nil
	case etU8:
		return func(b []byte, i int) float32 { return float32(b[i]) }, nil
	case etI8:
		return func(b []byte, i int) float32 { return float32(int8(b[i])) }, nil
	case etF16:
		return func(b []byte, i int) float32 { return quant.FP16ToFP32(le16(b[2*i:])) }, nil
	case etF8E8M0:
		return func(b []byte, i int) float32 { return float32(math.Ldexp(1, int(b[i])-127)) }, nil
	}
	return nil, fmt.Errorf("%w: no reader for %v", ErrUnsupportedType, et)
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

// putZP stores zero point v of group g (value = (q - zp) * scale) as an
// exact f16 value.
func putZP(zp []byte, g int, v float32) {
	binary.LittleEndian.PutUint16(zp[2*g:], quant.FP32ToFP16(v))
}

func ratio(num, d float32) float32 {
	if d == 0 {
		return 0
	}
	return num / d
}

// putF16 stores v as f16 element i of b and returns the value stored.
func putF16(b []byte, i int, v float32) float32 {
	h := quant.FP32ToFP16(v)
	binary.LittleEndian.PutUint16(b[2*i:], h)
	return quant.FP16ToFP32(h)
}

// scaleMinK4 is ggml's get_scale_min_k4: sub-block j's 6-bit scale and
// minimum from a K-quant's 12 scale bytes.
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// requantize converts t to l.requant from its dequantized values, as
// ggml-openvino does (to_float, then its own quantize_q8_0 / q4_0). It
// dequantizes a few rows at a time (whole groups each): the whole tensor
// in f32 was 125 MB of garbage for a 32000x1024 output weight, which the
// Go heap kept and the process's peak RSS counted.
func requantize(t *graph.Tensor, l extractedLayout, src, w, sc []byte) error {
	ne0, rows := int(t.Ne[0]), int(t.NElements()/t.Ne[0])
	g := max(int(l.group), 1)
	// Rows per chunk: a whole number of groups, and at least 64 KiB of
	// values where the rows are short.
	step := g / gcd(ne0, g)
	for step*ne0 < 16384 && step < rows {
		step *= 2
	}
	rowBytes := int(t.Type.RowSize(int64(ne0)))
	x := make([]float32, 0, step*ne0)
	for r0 := 0; r0 < rows; r0 += step {
		n := min(step, rows-r0) * ne0
		x = x[:n]
		if err := quant.DequantizeInto(x, t.Type, src[r0*rowBytes:]); err != nil {
			return err
		}
		requantChunk(l, x, r0*ne0, w, sc)
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// requantChunk converts the values x of elements e0.. (whole groups).
func requantChunk(l extractedLayout, x []float32, e0 int, w, sc []byte) {
	switch l.requant {
	case requantF16:
		for i, v := range x {
			binary.LittleEndian.PutUint16(w[2*(e0+i):], quant.FP32ToFP16(v))
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
			gb := e0/g + b
			binary.LittleEndian.PutUint16(sc[2*gb:], quant.FP32ToFP16(d))
			for i, v := range blk {
				w[gb*g+i] = byte(int8(math.Round(float64(v * id))))
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
			gb := e0/g + b
			binary.LittleEndian.PutUint16(sc[2*gb:], quant.FP32ToFP16(d))
			for i, v := range blk {
				q := min(15, int8(v*id+8.5)) - 8 // ggml's quantize_row_q4_0_ref
				putU4(w, gb*g+i, uint8(q)&0xf)
			}
		}
	}
}
