//go:build !purego

package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/quant"
)

// levelAVX512VNNI is levelAVX2 with the integer step of the products of
// Q8_0-, Q8_1-activation weights (the one-column four-row kernels of Q8_0,
// Q4_0, Q5_0, IQ4_NL, Q4_1 and Q5_1; Q4_1's and Q5_1's four-column ones)
// as one VPDPBUSD instead of maddubs and a pairwise sum (Q4_0 and Q5_0 also
// start from their negated offsets instead of subtracting them): the
// weights of SmolLM2's layers, of Gemma 3's Q5_0 ones and of both models'
// output matrices. Q5_0's and Q5_1's fifth bits are loaded as an AVX512BW
// mask that adds 16 to the bytes it selects, instead of four operations
// spreading them into bytes. The four-row kernels of Q8_0 and Q5_0 work
// on two rows per 512-bit register (each half the 256-bit kernel's
// lanes), timed in turns in one process at 1 thread: Gemma 3's 640x2048
// Q5_0 products 113 -> 64 us and its 640x262144 Q8_0 output 15.0 -> 11.3
// ms; Q4_1's takes its high nibbles unshifted, 16 times over, in 256-bit
// registers (dot_rows_amd64.s), SmolLM2's 576x1536 products 59 -> 46 us
// as two rows per 512-bit register, then 30 -> 23 us. It needs
// AVX512-VNNI, VL and BW (Ice Lake, Sapphire Rapids, Zen 4 and later). The
// integers and each lane's float operations are the same, so every result
// is avx2's bit for bit. Q8_0's products of eight columns or more take a
// register tile of this level's own (eight rows by four columns, two
// outputs' eight lanes in each 512-bit accumulator, 2 vector operations an
// output and block where avx2's vec_dot and ggml's take 5-6): avx2's bits,
// and at 1 thread 1.8-2.1x ggml haswell's speed at 32 and 256 columns
// where avx2's kernels run at about 1.0x (bench/README.md).
var levelAVX512VNNI = register(levelAVX2.over("avx512vnni", 30,
	func() bool { return cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW },
	[]asmDot{
		{quant.Q4_1, dotQ4_1AVX2, wrapRows(quant.Q4_1, dotQ4_1x4VNNI)},
		{quant.Q5_1, dotQ5_1AVX2, wrapRows(quant.Q5_1, dotQ5_1x4VNNI)},
	},
	[]asmRows{
		{quant.Q8_0, rows4(quant.Q8_0, dotQ8_0RowsVNNI, dotQ8_0AVX2)},
		{quant.Q4_0, rows4(quant.Q4_0, dotQ4_0RowsVNNI, dotQ4_0AVX2)},
		{quant.Q5_0, rows4(quant.Q5_0, dotQ5_0RowsVNNI, dotQ5_0AVX2)},
		{quant.IQ4_NL, rows4(quant.IQ4_NL, dotIQ4_NLRowsVNNI, dotIQ4_NLAVX2)},
		{quant.Q4_1, rows4(quant.Q4_1, dotQ4_1RowsVNNI, dotQ4_1AVX2)},
		{quant.Q5_1, rows4(quant.Q5_1, dotQ5_1RowsVNNI, dotQ5_1AVX2)},
	}).withGemm(map[quant.Type]*plainGemm{
	// Q8_0's products of eight columns or more: exact tiles of eight
	// rows by four columns (gemm_q8_amd64.s), where avx2 keeps the
	// vec_dot kernels.
	quant.Q8_0: {step: 32, rows: 8, exact: true, pack: q8_0PackVNNI},
	// Q5_0's: its rows unpacked into the same tiles' bytes. ggml's
	// vec_dot of Q5_0 and of Q8_0 (x86, AVX2) are one loop (per block
	// the four-product integer sums of eight lanes, times d*dy, fused
	// into the lanes, then one horizontal sum), so Q8_0's tile is Q5_0's
	// vec_dot bit for bit once the weights are bytes.
	quant.Q5_0: {step: 32, rows: 8, exact: true, pack: q5_0PackVNNI},
}))

// q5_0PackVNNI is q8_0PackVNNI over Q5_0 rows (packQ5_0P2).
var q5_0PackVNNI = &gemmPack{
	rowBytes: q8_0PackVNNI.rowBytes,
	colBytes: q8_0ColBytes,
	rows:     packQ5_0P2,
	col:      packQ8_0ColAVX2,
	tile:     gemmQ8_0P8x4VNNI,
}

// fifthBits spreads a byte's bits into the fifth bit (0x10) of eight
// bytes, bit i into byte i.
var fifthBits = func() (t [256]uint64) {
	for b := range t {
		for i := range 8 {
			if b>>i&1 != 0 {
				t[b] |= 0x10 << (8 * i)
			}
		}
	}
	return t
}()

// packQ5_0P2 packs nrows (even) Q5_0 rows of steps blocks, stride bytes
// apart, to dst as packQ8_0P2AVX2 packs Q8_0 rows: per pair of rows and
// block the two rows' 32 values, each stored as itself plus 128 (the
// kernel's sign trick: a Q5_0 value v-16, v its five bits, is v+112),
// then each row's d as eight float32s.
func packQ5_0P2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int) {
	const blk = 22 // quant.Q5_0's block: d, qh, 16 bytes of nibbles
	out := unsafe.Slice((*byte)(dst), nrows*64*steps)
	for p := 0; p+1 < nrows; p += 2 {
		for r := range 2 {
			row := unsafe.Slice((*byte)(unsafe.Add(src, uintptr(p+r)*stride)), steps*blk)
			for b := range steps {
				x := row[b*blk : b*blk+blk]
				o := out[(p/2*steps+b)*128:]
				qh := binary.LittleEndian.Uint32(x[2:])
				lo, hi := binary.LittleEndian.Uint64(x[6:]), binary.LittleEndian.Uint64(x[14:])
				const nib, top, sixteen = 0x0f0f0f0f0f0f0f0f, 0x8080808080808080, 0x1010101010101010
				// v | 0x80, less 16: no byte borrows.
				binary.LittleEndian.PutUint64(o[32*r:], (lo&nib|fifthBits[qh&0xff]|top)-sixteen)
				binary.LittleEndian.PutUint64(o[32*r+8:], (hi&nib|fifthBits[qh>>8&0xff]|top)-sixteen)
				binary.LittleEndian.PutUint64(o[32*r+16:], (lo>>4&nib|fifthBits[qh>>16&0xff]|top)-sixteen)
				binary.LittleEndian.PutUint64(o[32*r+24:], (hi>>4&nib|fifthBits[qh>>24]|top)-sixteen)
				d := math.Float32bits(quant.FP16ToFP32(binary.LittleEndian.Uint16(x)))
				for i := range 8 {
					binary.LittleEndian.PutUint32(o[64+32*r+4*i:], d)
				}
			}
		}
	}
}

// q8_0PackVNNI packs Q8_0 rows in pairs and Q8_0 columns for
// gemmQ8_0P8x4VNNI (gemm_q8_amd64.s says how): 64 bytes a row's block, 64
// a column's and its scale's 4 (padded to 64).
var q8_0PackVNNI = &gemmPack{
	rowBytes: func(steps int) int { return 64 * steps },
	colBytes: q8_0ColBytes,
	rows:     packQ8_0P2AVX2,
	col:      packQ8_0ColAVX2,
	tile:     gemmQ8_0P8x4VNNI,
}

// q8_0ColBytes is the size of a packed Q8_0 column of steps blocks: the
// scales (padded to 64 bytes), then 64 bytes a block.
func q8_0ColBytes(steps int) int { return 64*steps + (4*steps+63)&^63 }

// packQ8_0ColAVX2 packs a Q8_0 row of steps blocks to dst as a column of
// gemmQ8_0P8x4VNNI.
//
//go:noescape
func packQ8_0ColAVX2(dst, src unsafe.Pointer, steps int)

// packQ8_0P2AVX2 packs nrows (even) Q8_0 rows of steps blocks, stride
// bytes apart, to dst, two rows' blocks interleaved.
//
//go:noescape
func packQ8_0P2AVX2(dst, src unsafe.Pointer, stride uintptr, nrows, steps int)

// gemmQ8_0P8x4VNNI is gemmPack's tile for Q8_0 rows and columns packed by
// packQ8_0P2AVX2 and packQ8_0ColAVX2, bit for bit dotQ8_0AVX2, nrows a
// multiple of eight.
//
//go:noescape
func gemmQ8_0P8x4VNNI(steps int, x unsafe.Pointer, stride uintptr, nrows int, y, out *[4]unsafe.Pointer)

// The kernels (dot_q8_amd64.s, dot_rows_amd64.s), as their AVX2 twins
// in traits_amd64.go.

//go:noescape
func dotQ4_1x4VNNI(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)

//go:noescape
func dotQ5_1x4VNNI(n int, x unsafe.Pointer, stride uintptr, nrows int, y *[4]unsafe.Pointer, dy, out *float32)

//go:noescape
func dotQ8_0RowsVNNI(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ4_0RowsVNNI(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ5_0RowsVNNI(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotIQ4_NLRowsVNNI(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ4_1RowsVNNI(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)

//go:noescape
func dotQ5_1RowsVNNI(n int, x unsafe.Pointer, stride, gap uintptr, ngroups int, y unsafe.Pointer, dy, out *float32, ogap uintptr)
