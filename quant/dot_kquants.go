package quant

import (
	"encoding/binary"
	"math"
)

// Dot kernels against Q8_K (float32 d, int8 qs[256], int16 bsums[16], the
// sums of qs in groups of 16). All x formats here have 256-element blocks.

func q8KScale(yb []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(yb)) }

func q8KBsum(yb []byte, j int) int32 {
	return int32(int16(binary.LittleEndian.Uint16(yb[q8KBsums+2*j:])))
}

// Q3_K to Q6_K decode a block to small integers first. ggml's generic code
// then keeps eight integer lanes per block (lane l takes the elements whose
// index is l mod 8), scales each lane into its own float accumulator and adds
// the eight accumulators at the very end; the helpers below keep that order.

// addScaledLanes adds scale * q[e]*a[e] to lanes[e%8] for the elements of one
// sub-block (a multiple of 8 long). The sums are small enough that scaling
// each lane once gives the same integers as scaling every product; eight
// elements a step, each lane in its own variable, keep the products in
// registers.
func addScaledLanes(lanes *[8]int32, scale int32, q, a []byte) {
	q = q[:len(a)]
	var p0, p1, p2, p3, p4, p5, p6, p7 int32
	for e := 0; e+8 <= len(a); e += 8 {
		qq, aa := q[e:e+8:e+8], a[e:e+8:e+8]
		p0 += int32(int8(qq[0])) * int32(int8(aa[0]))
		p1 += int32(int8(qq[1])) * int32(int8(aa[1]))
		p2 += int32(int8(qq[2])) * int32(int8(aa[2]))
		p3 += int32(int8(qq[3])) * int32(int8(aa[3]))
		p4 += int32(int8(qq[4])) * int32(int8(aa[4]))
		p5 += int32(int8(qq[5])) * int32(int8(aa[5]))
		p6 += int32(int8(qq[6])) * int32(int8(aa[6]))
		p7 += int32(int8(qq[7])) * int32(int8(aa[7]))
	}
	lanes[0] += scale * p0
	lanes[1] += scale * p1
	lanes[2] += scale * p2
	lanes[3] += scale * p3
	lanes[4] += scale * p4
	lanes[5] += scale * p5
	lanes[6] += scale * p6
	lanes[7] += scale * p7
}

// The decoders below work on eight codes at a time in a uint64 (nibble
// masks and shifts on whole words), storing a word of int8 values (as
// bytes) at once.
const (
	lowNibbles = 0x0f0f0f0f0f0f0f0f
	lowCrumbs  = 0x0303030303030303
	byteTops   = 0x8080808080808080
)

// addLaneSums scales one block's integer lanes by d into the float lanes.
func addLaneSums(sums *[8]float32, d float32, lanes *[8]int32) {
	for l, v := range lanes {
		sums[l] += float32(d * float32(v))
	}
}

// laneTotal adds the float lanes to start, in lane order.
func laneTotal(start float32, sums *[8]float32) float32 {
	for _, v := range sums {
		start += v
	}
	return start
}

// Q2_K (scales[16], qs[64], fp16 d, fp16 dmin) · Q8_K. Each 16-element
// sub-block has a 4-bit scale (low nibble) and 4-bit min (high nibble); the
// mins meet y's group sums instead of the elements.
func dotQ2K(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/256; i++ {
		xb, yb := x[84*i:84*i+84], y[q8KBytes*i:q8KBytes*(i+1)]
		sc, q2, q8 := xb[:16], xb[16:80], yb[4:260]
		var summs int32
		for j, s := range sc {
			summs += q8KBsum(yb, j) * int32(s>>4)
		}
		dall := q8KScale(yb) * fp16At(xb[80:])
		dmin := q8KScale(yb) * fp16At(xb[82:])
		// Sub-block g covers elements 16g..16g+15: byte (g/8)*32 + (g%2)*16 + l
		// of qs, bits 2*((g/2)%4).
		var isum int32
		for g := 0; g < 16; g++ {
			shift := 2 * uint(g/2%4)
			qs := q2[32*(g/8)+16*(g%2):][:16]
			var s int32
			for l, v := range qs {
				s += int32(int8(q8[16*g+l])) * int32(v>>shift&3)
			}
			isum += int32(sc[g]&0xf) * s
		}
		sum += float32(dall*float32(isum)) - float32(dmin*float32(summs))
	}
	return sum
}

// Q3_K (hmask[32], qs[64], scales[12], fp16 d) · Q8_K: 2 low bits from qs,
// and 4 is subtracted where the high bit in hmask is clear; 16-element
// sub-blocks have 6-bit scales offset by 32.
func dotQ3K(n int, x, y []byte) float32 {
	var sums [8]float32
	var a [256]byte
	for i := 0; i < n/256; i++ {
		xb, yb := x[110*i:110*i+110], y[q8KBytes*i:q8KBytes*(i+1)]
		// Element 128c+32s+l: bits 2s of qs[32c+l], high bit 4c+s of hmask[l].
		hm := xb[:32]
		for c := 0; c < 2; c++ {
			q3 := xb[32+32*c : 64+32*c]
			for s := 0; s < 4; s++ {
				out, bit := a[128*c+32*s:128*c+32*s+32], uint(4*c+s)
				for l, h := range hm {
					out[l] = byte(int8(q3[l]>>(2*s)&3) - 4 + int8(h>>bit&1)<<2)
				}
			}
		}
		var lanes [8]int32
		for j, sc := range scalesQ3K(xb[96:108]) {
			addScaledLanes(&lanes, int32(sc), yb[4+16*j:], a[16*j:16*j+16])
		}
		addLaneSums(&sums, fp16At(xb[108:])*q8KScale(yb), &lanes)
	}
	return laneTotal(0, &sums)
}

// dotK4 is the shared body of Q4_K and Q5_K, whose blocks are fp16 d, fp16
// dmin, scales[12], then (Q5_K only, when fifthBit) qh[32], then qs[128].
func dotK4(n, blockBytes int, x, y []byte, fifthBit bool) float32 {
	var sums [8]float32
	var sum float32
	var a [256]byte
	for i := 0; i < n/256; i++ {
		xb, yb := x[blockBytes*i:blockBytes*(i+1)], y[q8KBytes*i:q8KBytes*(i+1)]
		decodeNibbles64(&a, xb[blockBytes-128:blockBytes])
		if fifthBit {
			addFifthBit(&a, xb[16:48])
		}
		var scales, mins [8]uint8
		for j := range scales {
			scales[j], mins[j] = scaleMinK4(j, xb[4:16])
		}
		var summ int32
		for j := 0; j < 16; j++ {
			summ += q8KBsum(yb, j) * int32(mins[j/2])
		}
		var lanes [8]int32
		for j, sc := range scales {
			addScaledLanes(&lanes, int32(sc), yb[4+32*j:], a[32*j:32*j+32])
		}
		d := q8KScale(yb)
		addLaneSums(&sums, fp16At(xb)*d, &lanes)
		sum -= float32(fp16At(xb[2:]) * d * float32(summ))
	}
	return laneTotal(sum, &sums)
}

// decodeNibbles64 fills a from 128 bytes of nibbles, each 32 bytes holding
// 64 elements: the low nibbles first, then the high ones.
func decodeNibbles64(a *[256]byte, qs []byte) {
	qs = qs[:128]
	for c := 0; c < 4; c++ {
		for l := 0; l < 32; l += 8 {
			w := binary.LittleEndian.Uint64(qs[32*c+l:])
			binary.LittleEndian.PutUint64(a[64*c+l:], w&lowNibbles)
			binary.LittleEndian.PutUint64(a[64*c+32+l:], w>>4&lowNibbles)
		}
	}
}

// Q4_K (fp16 d, fp16 dmin, scales[12], qs[128]) · Q8_K.
func dotQ4K(n int, x, y []byte) float32 { return dotK4(n, 144, x, y, false) }

// Q5_K (fp16 d, fp16 dmin, scales[12], qh[32], qs[128]) · Q8_K.
func dotQ5K(n int, x, y []byte) float32 { return dotK4(n, 176, x, y, true) }

// addFifthBit adds Q5_K's high bits: bit e/32 of qh[e%32] adds 16 to element e.
func addFifthBit(a *[256]byte, qh []byte) {
	for c := 0; c < 8; c++ {
		part := a[32*c : 32*c+32]
		for l, h := range qh[:32] {
			part[l] += h >> c & 1 << 4
		}
	}
}

// Q6_K (ql[128], qh[64], int8 scales[16], fp16 d) · Q8_K: 4 low bits from ql
// and 2 high bits from qh, offset by 32; 16-element sub-blocks.
func dotQ6K(n int, x, y []byte) float32 {
	var sums [8]float32
	var a [256]byte
	for i := 0; i < n/256; i++ {
		xb, yb := x[210*i:210*i+210], y[q8KBytes*i:q8KBytes*(i+1)]
		// Element 128c+32k+l: nibble k/2 of ql[64c+l+32(k%2)], bits 2k of
		// qh[32c+l]; the six-bit code minus 32 is (code+96)^128 as a byte,
		// which no byte of the word carries out of.
		for c := 0; c < 2; c++ {
			ql, qh := xb[64*c:64*c+64], xb[128+32*c:128+32*c+32]
			for l := 0; l < 32; l += 8 {
				q0 := binary.LittleEndian.Uint64(ql[l:])
				q1 := binary.LittleEndian.Uint64(ql[l+32:])
				h := binary.LittleEndian.Uint64(qh[l:])
				lo := [4]uint64{q0 & lowNibbles, q1 & lowNibbles, q0 >> 4 & lowNibbles, q1 >> 4 & lowNibbles}
				for k, v := range lo {
					code := v | (h>>(2*k)&lowCrumbs)<<4
					binary.LittleEndian.PutUint64(a[128*c+32*k+l:], (code+0x6060606060606060)^byteTops)
				}
			}
		}
		var lanes [8]int32
		for j, sc := range xb[192:208] {
			addScaledLanes(&lanes, int32(int8(sc)), yb[4+16*j:], a[16*j:16*j+16])
		}
		addLaneSums(&sums, fp16At(xb[208:])*q8KScale(yb), &lanes)
	}
	return laneTotal(0, &sums)
}

// IQ4_XS (fp16 d, scales_h uint16, scales_l[4], qs[128]) · Q8_K: 32-element
// sub-blocks with 6-bit scales offset by 32 (low 4 bits in scales_l, high 2
// in scales_h), each stored as 16 bytes of IQ4_NL nibble pairs.
func dotIQ4XS(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/256; i++ {
		xb, yb := x[136*i:136*i+136], y[q8KBytes*i:q8KBytes*(i+1)]
		d := fp16At(xb) * q8KScale(yb)
		h := binary.LittleEndian.Uint16(xb[2:])
		for ib := 0; ib < 8; ib++ {
			ls := int32(xb[4+ib/2]>>(4*(ib%2))&0xf) | int32(h>>(2*ib)&3)<<4
			s := nibbleDot(xb[8+16*ib:], 0, yb[4+32*ib:], iq4NLValues)
			sum += float32(float32(d*float32(ls-32)) * float32(s))
		}
	}
	return sum
}

// TQ1_0 (qs[48], qh[4], fp16 d) · Q8_K: ternary digits packed five to a qs
// byte and four to a qh byte. Digit k of qs[j] is element 32k+j for j < 32,
// 160+16k+(j-32) for the last 16 bytes, and digit k of qh[j] is 240+4k+j.
func dotTQ1_0(n int, x, y []byte) float32 {
	pow3 := [5]uint8{1, 3, 9, 27, 81}
	var sum float32
	for i := 0; i < n/256; i++ {
		xb, yb := x[54*i:54*i+54], y[q8KBytes*i:q8KBytes*(i+1)]
		q8 := yb[4:260]
		var s int32
		for k, p := range pow3 {
			for j, q := range xb[:32] {
				s += trit(q, p) * int32(int8(q8[32*k+j]))
			}
		}
		for k, p := range pow3 {
			for j, q := range xb[32:48] {
				s += trit(q, p) * int32(int8(q8[160+16*k+j]))
			}
		}
		for k, p := range pow3[:4] {
			for j, q := range xb[48:52] {
				s += trit(q, p) * int32(int8(q8[240+4*k+j]))
			}
		}
		sum += float32(float32(s) * (fp16At(xb[52:]) * q8KScale(yb)))
	}
	return sum
}

// TQ2_0 (qs[64], fp16 d) · Q8_K: 2-bit codes c standing for c-1; bits 2k
// of qs[32h+j] are element 128h+32k+j.
func dotTQ2_0(n int, x, y []byte) float32 {
	var sum float32
	for i := 0; i < n/256; i++ {
		xb, yb := x[66*i:66*i+66], y[q8KBytes*i:q8KBytes*(i+1)]
		q8 := yb[4:260]
		var s int32
		for h := 0; h < 2; h++ {
			for k := 0; k < 4; k++ {
				for j, q := range xb[32*h : 32*h+32] {
					s += int32(int8(q8[128*h+32*k+j])) * (int32(q>>(2*k)&3) - 1)
				}
			}
		}
		d := q8KScale(yb) * fp16At(xb[64:])
		sum += float32(float32(s) * d)
	}
	return sum
}
