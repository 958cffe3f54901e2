package quant

import (
	"encoding/binary"
	"math"
)

// Reference dot products of the lattice formats with Q8_K activations, as
// ggml-cpu's generic ggml_vec_dot_<type>_q8_K. Each takes n elements (a
// multiple of 256) of the lattice type in x and of Q8_K in y; the caller
// checks the lengths.
//
// A Q8_K block is a float32 scale, 256 int8 quants and 16 int16 sums of 16
// quants each. Within a block ggml sums in integers, so only the float steps
// below follow its order; integer partial sums may be grouped freely.

// gridQ8K splits a Q8_K block into its scale, quants and 16-element sums.
func gridQ8K(b []byte) (d float32, qs, bsums []byte) {
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), b[4:260], b[260:292]
}

// gridDot8 is the dot product of a group's signed magnitudes with 8 quants.
func gridDot8(point uint64, signs uint8, q8 []byte) int32 {
	var sum int32
	for j := range 8 {
		v := int32(uint8(point>>(8*j))) * int32(int8(q8[j]))
		if signs>>j&1 != 0 {
			v = -v
		}
		sum += v
	}
	return sum
}

// dotSignedGrid is the IQ2/IQ3 dot product: per block d_x*d_y times the sum
// over groups of (2*scale+1) * gridDot8, all times factor.
func dotSignedGrid(n int, x, y []byte, t Type, unpack func([]byte) gridBlock, factor float32) float32 {
	size, ysize := t.TypeSize(), Q8_K.TypeSize()
	var u gridBlock
	var sumf float32
	for i := range n / qkGrid {
		u = unpack(x[i*size : (i+1)*size])
		yd, q8, _ := gridQ8K(y[i*ysize : (i+1)*ysize])
		var bsum int32
		for g := range gridGroups {
			bsum += int32(2*int(u.scale[g])+1) * gridDot8(u.point[g], u.signs[g], q8[8*g:8*g+8])
		}
		d := u.d * yd
		sumf += float32(d * float32(bsum))
	}
	return factor * sumf
}

// dotIQ1 is the IQ1 dot product. The delta term needs the sum of the quants
// under each group: IQ1_M adds them up, IQ1_S (useBsums) takes them from
// Q8_K's 16-element sums as ggml does, which differ only for malformed Q8_K.
func dotIQ1(n int, x, y []byte, t Type, unpack func([]byte) gridBlock, useBsums bool) float32 {
	size, ysize := t.TypeSize(), Q8_K.TypeSize()
	var u gridBlock
	var sumf float32
	for i := range n / qkGrid {
		u = unpack(x[i*size : (i+1)*size])
		yd, q8, bsums := gridQ8K(y[i*ysize : (i+1)*ysize])
		var sumi, sumDelta int32
		for g := range gridGroups {
			ls := int32(2*int(u.scale[g]) + 1)
			var dot, sum int32
			for j := range 8 {
				q := int32(int8(q8[8*g+j]))
				dot += q * int32(int8(u.point[g]>>(8*j)))
				sum += q
			}
			if useBsums {
				// A 16-element sum spans groups g and g+1, which share
				// their sub-block's scale and delta: count it once.
				sum = 0
				if g%2 == 0 {
					sum = int32(int16(binary.LittleEndian.Uint16(bsums[g:])))
				}
			}
			if u.neg>>g&1 != 0 {
				sum = -sum
			}
			sumi += ls * dot
			sumDelta += ls * sum
		}
		d := u.d * yd
		sumf += float32(d * (float32(sumi) + float32(iq1Delta*float32(sumDelta))))
	}
	return sumf
}

func dotIQ2XXSQ8K(n int, x, y []byte) float32 {
	return dotSignedGrid(n, x, y, IQ2_XXS, unpackIQ2XXS, 0.125)
}

func dotIQ2XSQ8K(n int, x, y []byte) float32 {
	return dotSignedGrid(n, x, y, IQ2_XS, unpackIQ2XS, 0.125)
}

func dotIQ2SQ8K(n int, x, y []byte) float32 {
	return dotSignedGrid(n, x, y, IQ2_S, unpackIQ2S, 0.125)
}

func dotIQ3XXSQ8K(n int, x, y []byte) float32 {
	return dotSignedGrid(n, x, y, IQ3_XXS, unpackIQ3XXS, 0.25)
}

func dotIQ3SQ8K(n int, x, y []byte) float32 {
	return dotSignedGrid(n, x, y, IQ3_S, unpackIQ3S, 1)
}

func dotIQ1SQ8K(n int, x, y []byte) float32 { return dotIQ1(n, x, y, IQ1_S, unpackIQ1S, true) }

func dotIQ1MQ8K(n int, x, y []byte) float32 { return dotIQ1(n, x, y, IQ1_M, unpackIQ1M, false) }
