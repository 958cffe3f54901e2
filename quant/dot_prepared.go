package quant

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"
)

//go:generate go run ./internal/genunrolled -o dot_prepared_gen.go

// Multi-row dots with a prepared activation. A matrix product meets one
// activation row with many weight rows, so everything the SWAR dots do to
// the activation (biasing, spreading into 16-bit lanes, reversing, splitting
// into nibbles, block sums) is done once per call into a table of words,
// and the loop over weight rows does only the weight's side. The integer
// parts are exact whatever the method, and the float operations and their
// order are those of the single-row kernels, so every row's result is its
// DotKernel result bit for bit. The Q8_0 and Q6_K row loops are written out
// block by block in dot_prepared_gen.go (package internal/unroll says why).

// A preparedKernel is a multi-row dot in two steps: prepare turns the
// activation row y of n elements into words(n) words, rows computes out[r]
// for nrows weight rows stride bytes apart from them.
type preparedKernel struct {
	words   func(n int) int
	prepare func(n int, y []byte, p []uint64)
	rows    func(n int, x []byte, stride uint64, nrows int, p []uint64, out []float32)
}

// preparedTables keeps the prepared words between calls, so a product
// allocates nothing once its threads have run.
var preparedTables = sync.Pool{New: func() any { return new([]uint64) }}

func (k *preparedKernel) dotRows(n int, x []byte, stride uint64, nrows int, y []byte, out []float32) {
	if nrows <= 0 {
		return
	}
	tp := preparedTables.Get().(*[]uint64)
	need := k.words(n)
	if cap(*tp) < need {
		*tp = make([]uint64, need)
	}
	p := (*tp)[:need]
	k.prepare(n, y, p)
	k.rows(n, x, stride, nrows, p, out)
	preparedTables.Put(tp)
}

var preparedKernels = [TypeCount]*preparedKernel{
	Q8_0: {words: func(n int) int { return n / 32 * q8Words }, prepare: prepareQ8_0, rows: rowsQ8_0},
	Q4_0: {words: func(n int) int { return n / 32 * q4Words }, prepare: prepareQ4_0, rows: rowsQ4_0},
	Q4_K: {words: func(n int) int { return n / 256 * k4Words }, prepare: prepareK4, rows: rowsQ4K},
	Q6_K: {words: func(n int) int { return n / 256 * k6Words }, prepare: prepareK6, rows: rowsQ6K},
}

// laneBias is 2^15 in each of a word's three low 16-bit lanes: added to a
// sum of products whose lanes are signed and below 2^15 in magnitude, it
// makes the three low lanes non-negative and below 2^16, so none borrows
// from or carries into the top lane.
const laneBias = 0x0000_8000_8000_8000

// topLane is the signed top lane of such a sum.
func topLane(acc uint64) int32 { return int32(int16((acc + laneBias) >> 48)) }

// The prepare functions work on words of eight quants. Byte-reversed,
// a word's even quants (0, 2, 4, 6) are the high bytes of its 16-bit lanes
// 3, 2, 1, 0 and its odd quants their low bytes: masked out, each lane
// holds quant 2i or 2i+1 in lane 3-i, the reversed order the SWAR dot
// products want.
const (
	laneLowNibbles = 0x000f_000f_000f_000f
	laneEights     = 0x0008_0008_0008_0008
	laneTops       = 0x0080_0080_0080_0080
)

// signedLanes sign-extends the byte in each 16-bit lane of v: the word
// becomes the integer sum of the lanes' signed values times their place.
func signedLanes(v uint64) uint64 { return (v ^ laneTops) - laneTops }

// signedNibbleLanes does the same for a nibble in each lane.
func signedNibbleLanes(v uint64) uint64 { return (v ^ laneEights) - laneEights }

// quantSum is the sum of the signed quants of a word.
func quantSum(w uint64) int32 {
	u := w ^ byteSigns
	return int32((u&evenBytes+u>>8&evenBytes)*laneOnes>>48) - 8*128
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// Q8_0 · Q8_0. Each block of y becomes a word holding y's scale, then for
// each half (16 elements, two 8-byte chunks) nine words: per chunk, the
// low and high nibbles (y = 16*hi + lo, lo unsigned, hi signed) of its even
// and its odd elements, in reversed lanes, and a bias word. x's bytes
// biased by 128 fill 16-bit lanes with two masks, so each multiplication
// takes four products, and sum x*y = sum (x+128)*lo + 16 sum (x+128)*hi -
// 128 sum y. Over a half a lane of the low sums stays below 16*255*15 <
// 2^16; the high sums' lanes stay within 16*255*8 < 2^15, which the bias
// word's laneBias makes non-negative, and its top lane also takes off 8
// times the half's sum of y, so that the top lane ends as sum x*hi - 8 sum
// lo, within 16*1024 + 8*16*15 < 2^15: a signed 16-bit lane.
const (
	q8Words     = 1 + 2*q8HalfWords
	q8HalfWords = 9
)

func prepareQ8_0(n int, y []byte, p []uint64) {
	for b := 0; b < n/32; b++ {
		yb := (*[q8_0Bytes]byte)(y[q8_0Bytes*b:])
		w := (*[q8Words]uint64)(p[q8Words*b:])
		w[0] = uint64(math.Float32bits(fp16At(yb[:2])))
		for hf := range 2 {
			half := (*[q8HalfWords]uint64)(w[1+q8HalfWords*hf:])
			var sum int32
			for ch := range 2 {
				yw := le64(yb[2+16*hf+8*ch:])
				sum += quantSum(yw)
				r := bits.ReverseBytes64(yw)
				half[4*ch] = r >> 8 & laneLowNibbles
				half[4*ch+1] = r & laneLowNibbles
				half[4*ch+2] = signedNibbleLanes(r >> 12 & laneLowNibbles)
				half[4*ch+3] = signedNibbleLanes(r >> 4 & laneLowNibbles)
			}
			half[8] = laneBias + uint64(uint16(-8*sum))<<48
		}
	}
}

func rowsQ8_0(n int, x []byte, stride uint64, nrows int, p []uint64, out []float32) {
	nb := n / 32
	p = p[:q8Words*nb]
	var seq uint64
	for r := range out[:nrows] {
		out[r] = rowQ8_0(x[uint64(r)*stride:][:q8_0Bytes*nb], p, &seq)
	}
}

// Q4_0 · Q8_0. Each block of y becomes a word holding y's scale and 8
// times the sum of its quants, then eight words of y's signed quants in
// reversed lanes: for each 8-byte half of x's quants, its low and high
// nibbles' even and odd elements. x's nibbles fill 16-bit lanes with masks;
// sum (q-8)*y = sum q*y - 8 sum y, and over one half (16 products) a lane
// stays within 16*15*128 < 2^15.
const q4Words = 9

func prepareQ4_0(n int, y []byte, p []uint64) {
	for b := 0; b < n/32; b++ {
		yb := (*[q8_0Bytes]byte)(y[q8_0Bytes*b:])
		w := (*[q4Words]uint64)(p[q4Words*b:])
		var sum int32
		// Word 1+4h+2n+par: half h of x's quants, nibble n (element
		// 16n+8h+j for byte j), even or odd elements.
		for h := range 2 {
			for nib := range 2 {
				yw := le64(yb[2+16*nib+8*h : 10+16*nib+8*h])
				sum += quantSum(yw)
				r := bits.ReverseBytes64(yw)
				w[1+4*h+2*nib] = signedLanes(r >> 8 & evenBytes)
				w[2+4*h+2*nib] = signedLanes(r & evenBytes)
			}
		}
		w[0] = uint64(math.Float32bits(fp16At(yb[:2]))) | uint64(uint32(8*sum))<<32
	}
}

// q4Half is the sum of products of an 8-byte half of Q4_0 quants with its
// four prepared words.
func q4Half(qw uint64, p *[4]uint64) uint64 {
	lo, hi := qw&lowNibbles, qw>>4&lowNibbles
	return (lo&evenBytes)*p[0] + (lo>>8&evenBytes)*p[1] + (hi&evenBytes)*p[2] + (hi>>8&evenBytes)*p[3]
}

func rowsQ4_0(n int, x []byte, stride uint64, nrows int, p []uint64, out []float32) {
	nb := n / 32
	p = p[:q4Words*nb]
	for r := range out[:nrows] {
		out[r] = rowQ4_0(x[uint64(r)*stride:][:18*nb], p)
	}
}

// rowQ4_0 is one row of rowsQ4_0: a function of its own, so that the
// compiler keeps the block loop's few values in registers.
func rowQ4_0(x []byte, p []uint64) float32 {
	t := fp16Table
	var sum float32
	for len(x) >= 18 && len(p) >= q4Words {
		xb := (*[18]byte)(x)
		w := (*[q4Words]uint64)(p)
		s := topLane(q4Half(le64(xb[2:10]), (*[4]uint64)(w[1:5]))) +
			topLane(q4Half(le64(xb[10:18]), (*[4]uint64)(w[5:9]))) - int32(w[0]>>32)
		dx := t[uint16(xb[0])|uint16(xb[1])<<8]
		sum += float32(float32(float32(s)*dx) * math.Float32frombits(uint32(w[0])))
		x, p = x[18:], p[q4Words:]
	}
	return sum
}

// The K-quants keep eight integer lanes per block (element e goes to lane
// e mod 8, see dot_kquants.go), so their products cannot be summed across
// a word's lanes. Instead a multiplication takes two lanes at once, as
// narrow pairs: with x's codes of lanes l and l' in the 16-bit lanes 0 and
// 1 of a word and y's quants of the same elements in those of another
// (narrowPairWords), the product has x_l*y_l in lane 0, the cross terms in
// lane 1 and x_l'*y_l' from bit 32 up. A sub-block's products accumulate
// there; adding narrowBias (which makes lanes 0 and 1 non-negative, so
// neither borrows from the next) and clearing lane 1 leaves
// lane0 + 2^15 + lane2*2^32, two integers that a single multiplication
// scales by the sub-block's scale. Each pair of lanes is thus one word
// until the end of the block, when 2^15 times the sum of the scales comes
// off and splitPair separates the two.

// The lane pairs of a word of eight codes, one byte each: (0,2), (1,3),
// (4,6), (5,7), taken by shifting the word 0, 8, 32 and 40 bits.
var pairShifts = [4]uint{0, 8, 32, 40}

const (
	// narrowBias makes lanes 0 and 1 of a narrow pair sum non-negative.
	narrowBias = 1<<15 + 1<<31
	// narrowKeep clears lane 1.
	narrowKeep = 0xffff_ffff_0000_ffff
)

// narrowPairWords returns, for a word of eight quants, the pair words of
// its lane pairs (pairShifts order): quants l and l' (signed) as
// l + l'*2^16.
func narrowPairWords(yw uint64) (p0, p1, p2, p3 uint64) {
	const lanes, bias = 0x00ff_00ff, 128 + 128<<16
	u := yw ^ byteSigns
	return u&lanes - bias, u>>8&lanes - bias, u>>32&lanes - bias, u>>40&lanes - bias
}

// splitPair returns the two 32-bit integers l + l'*2^32 of a scaled sum
// of narrow pairs once the biases are off.
func splitPair(v uint64) (int32, int32) { return int32(v), int32((v + 1<<31) >> 32) }

// Q4_K · Q8_K. Each block of y becomes a word of its scale and four of
// the sums of its 16-element groups two by two (the mins meet those), then
// per sub-block j, group m of eight elements and lane pair, the pair's
// narrow pair word. Lanes 0 and 2 of a sub-block's sum stay within
// 4*15*128, lane 1 within 8*15*128.
const (
	k4Words    = 1 + 4 + 8*16
	k4PairMask = 0x0000_0000_000f_000f
)

func prepareK4(n int, y []byte, p []uint64) {
	for b := 0; b < n/256; b++ {
		yb := y[q8KBytes*b : q8KBytes*(b+1)]
		w := p[k4Words*b : k4Words*(b+1)]
		w[0] = uint64(binary.LittleEndian.Uint32(yb))
		for k := range 4 {
			s0 := q8KBsum(yb, 4*k) + q8KBsum(yb, 4*k+1)
			s1 := q8KBsum(yb, 4*k+2) + q8KBsum(yb, 4*k+3)
			w[1+k] = uint64(uint32(s0)) | uint64(uint32(s1))<<32
		}
		q := (*[256]byte)(yb[4:260])
		for g := range 32 {
			pw := (*[4]uint64)(w[5+4*g:])
			pw[0], pw[1], pw[2], pw[3] = narrowPairWords(le64(q[8*g : 8*g+8]))
		}
	}
}

// k4Chunk adds to t the scaled lane-pair sums of the two 32-element
// sub-blocks whose nibbles share the 32 bytes qs (low nibbles: the first,
// scale s, against p's first 16 words; high nibbles: the second, scale z).
// One lane pair at a time, so only the four words of qs stay live across
// the loop.
func k4Chunk(t *[4]uint64, qs *[32]byte, p *[32]uint64, s, z uint64) {
	q0, q1 := binary.LittleEndian.Uint64(qs[0:8]), binary.LittleEndian.Uint64(qs[8:16])
	q2, q3 := binary.LittleEndian.Uint64(qs[16:24]), binary.LittleEndian.Uint64(qs[24:32])
	const m = k4PairMask
	// Lane pairs (0,2) and (1,3) from the words' low halves, then (4,6)
	// and (5,7) from their high halves: constant shifts.
	for h := 0; h < 4; h += 2 {
		a := (q0&m)*p[h] + (q1&m)*p[4+h] + (q2&m)*p[8+h] + (q3&m)*p[12+h] + narrowBias
		b := (q0>>4&m)*p[16+h] + (q1>>4&m)*p[20+h] + (q2>>4&m)*p[24+h] + (q3>>4&m)*p[28+h] + narrowBias
		t[h] += s*(a&narrowKeep) + z*(b&narrowKeep)
		a = (q0>>8&m)*p[1+h] + (q1>>8&m)*p[5+h] + (q2>>8&m)*p[9+h] + (q3>>8&m)*p[13+h] + narrowBias
		b = (q0>>12&m)*p[17+h] + (q1>>12&m)*p[21+h] + (q2>>12&m)*p[25+h] + (q3>>12&m)*p[29+h] + narrowBias
		t[h+1] += s*(a&narrowKeep) + z*(b&narrowKeep)
		q0, q1, q2, q3 = q0>>32, q1>>32, q2>>32, q3>>32
	}
}

// laneFloats adds the integer lanes of four pair words, scaled by d, to
// the float lanes in lane order, as addLaneSums does.
func laneFloats(sums *[8]float32, d float32, v0, v1, v2, v3 uint64) {
	l0, l2 := splitPair(v0)
	l1, l3 := splitPair(v1)
	l4, l6 := splitPair(v2)
	l5, l7 := splitPair(v3)
	sums[0] += float32(d * float32(l0))
	sums[1] += float32(d * float32(l1))
	sums[2] += float32(d * float32(l2))
	sums[3] += float32(d * float32(l3))
	sums[4] += float32(d * float32(l4))
	sums[5] += float32(d * float32(l5))
	sums[6] += float32(d * float32(l6))
	sums[7] += float32(d * float32(l7))
}

func rowsQ4K(n int, x []byte, stride uint64, nrows int, p []uint64, out []float32) {
	nb := n / 256
	p = p[:k4Words*nb]
	for r := range out[:nrows] {
		out[r] = rowQ4K(x[uint64(r)*stride:][:144*nb], p)
	}
}

// rowQ4K is one row of rowsQ4K (see rowQ4_0).
func rowQ4K(x []byte, p []uint64) float32 {
	var sums [8]float32
	var sum float32
	for len(x) >= 144 && len(p) >= k4Words {
		xb := (*[144]byte)(x)
		w := (*[k4Words]uint64)(p)
		var scales, mins [8]uint8
		for j := range scales {
			scales[j], mins[j] = scaleMinK4(j, xb[4:16])
		}
		var summ int32
		for k := range 4 {
			summ += int32(w[1+k])*int32(mins[2*k]) + int32(w[1+k]>>32)*int32(mins[2*k+1])
		}
		var t [4]uint64
		for c := 0; c < 4; c++ {
			k4Chunk(&t, (*[32]byte)(xb[16+32*c:]), (*[32]uint64)(w[5+32*c:]), uint64(scales[2*c]), uint64(scales[2*c+1]))
		}
		var ssum uint64
		for _, sc := range scales {
			ssum += uint64(sc)
		}
		ssum <<= 15 // the lane-0 biases, scaled (see Q6_K)
		d := math.Float32frombits(uint32(w[0]))
		laneFloats(&sums, fp16At(xb[:2])*d, t[0]-ssum, t[1]-ssum, t[2]-ssum, t[3]-ssum)
		sum -= float32(fp16At(xb[2:4]) * d * float32(summ))
		x, p = x[144:], p[k4Words:]
	}
	return laneTotal(sum, &sums)
}

// Q6_K · Q8_K. The six-bit codes c stand for c-32; they enter the
// products unsigned, and the prepared word each pair adds (in place of
// narrowBias) also takes off 32 times the pair's sums of y. Each block of
// y becomes its scale, then per 16-element sub-block j: for its two groups
// of eight elements the narrow pair words, then the four prepared words.
// Lanes 0 and 2 of a sub-block's sum stay within 2*63*128 + 32*256, lane 1
// within 4*63*128.
const (
	k6Words    = 1 + 16*12
	k6PairMask = 0x0000_0000_00ff_00ff
	// crumbHighs keeps bits 4 and 5 of every byte, where a code's two
	// high bits go.
	crumbHighs = 0x3030_3030_3030_3030
)

// narrowOffset is the prepared word of a narrow pair whose codes are 32
// too high: sum is the pair's sum of y as l + l'*2^16.
func narrowOffset(sum uint64) uint64 {
	l := int64(int16(sum))
	h := (int64(sum) - l) >> 16
	return uint64(narrowBias - 32*(l+h<<32))
}

func prepareK6(n int, y []byte, p []uint64) {
	for b := 0; b < n/256; b++ {
		yb := y[q8KBytes*b : q8KBytes*(b+1)]
		w := p[k6Words*b : k6Words*(b+1)]
		w[0] = uint64(binary.LittleEndian.Uint32(yb))
		q := (*[256]byte)(yb[4:260])
		for j := range 16 {
			sub := (*[12]uint64)(w[1+12*j:])
			sub[0], sub[1], sub[2], sub[3] = narrowPairWords(le64(q[16*j : 16*j+8]))
			sub[4], sub[5], sub[6], sub[7] = narrowPairWords(le64(q[16*j+8 : 16*j+16]))
			for pr := range 4 {
				sub[8+pr] = narrowOffset(sub[pr] + sub[4+pr])
			}
		}
	}
}

func rowsQ6K(n int, x []byte, stride uint64, nrows int, p []uint64, out []float32) {
	nb := n / 256
	p = p[:k6Words*nb]
	var seq uint64
	for r := range out[:nrows] {
		out[r] = rowQ6K(x[uint64(r)*stride:][:210*nb], p, &seq)
	}
}
