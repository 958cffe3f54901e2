//go:build !purego

package cpu

import (
	"encoding/binary"
	"math"
	"os"
	"slices"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// levelAMX is levelAVX512VNNI with the products of several columns (a
// prompt's) of the quantized weights in amxTypes on the AMX int8 tile unit
// (Sapphire Rapids and later): each 16 weight rows are unpacked once per
// product into their integer levels (amxPack), and for every step of 32
// (Q6_K: 16) elements one TDPBSUD or TDPBSSD multiplies a tile of up to 16
// activation columns, read where the quantized activations lie, by them;
// the step's 16x16 int32 sums get the weight rows' and columns' scales in
// AVX-512.
//
// The types are those of ggml's AMX code (its qtype_has_amx_kernels) that
// we have tiles for, on the weights its AMX buffer type takes (amxMulMat),
// and the float steps are that code's, in its order (the kernels' doc says
// which): these products are bit for bit those of ggml's sapphirerapids
// build with the weight in its AMX buffer, as libllama places weights on
// such a processor (TestMulMatMatchesAMXBuild). Products of fewer columns
// than minCols, a decode step's one among them, take the one-column
// AVX512-VNNI kernels of amxGemv, a column at a time, in the order of the
// AMX code's VNNI kernel for one column, which is its tiles' for more
// (TestMulMatMatchesAMXBuildDecode). The F32 products (attention's),
// SOFT_MAX, SWIGLU and SILU take the sapphirerapids build's 16-lane
// orders and e^x (avx512_linux_amd64.go), where the levels below keep
// haswell's 8-lane ones; the level's other vector primitives are avx2's.
var levelAMX = register(func() *level {
	l := levelAVX512VNNI.over("amx", 40, amxUsable, []asmDot{sprF32Dot}, []asmRows{sprF32Rows}).
		withGemm(map[quant.Type]*plainGemm{quant.F32: sprF32Gemm})
	l.vec.softmax, l.vec.swiglu, l.vec.silu = by(16, vsoftmaxAVX512), by(16, vswigluAVX512), by(16, vsiluAVX512)
	l.vecOf = ""
	l.tileMulMat = amxMulMat
	for typ := range amxTypes {
		l.tileTypes = append(l.tileTypes, typ)
	}
	slices.Sort(l.tileTypes)
	return l
}())

// minCols is the fewest columns a product of a's type takes the tiles
// with. ggml's AMX code takes every product of two columns or more to its
// tiles (one column to its VNNI kernel, in the same order), so the tiles
// give its bits from two on; a legacy type's are as fast as the vector
// kernels at 2 columns and 2-5x faster from 4 (bench matmul, Q4_1
// 576x1536, 1 thread). A K-quant's 16 rows' scales are unpacked in Go
// for each product, 0.6 ms of CPU for Gemma 3's 2048x640 Q4_K whatever
// the columns: below a tile of 16 its columns take the one-column
// kernels (amxGemv) one by one instead, in the same order.
func (a *amxType) minCols() int64 {
	if a.kq != nil {
		return 16
	}
	return 2
}

// amxRowMultiple is what ggml's AMX buffer type wants of a weight's row
// count (its supports_op: two tiles of 16 output rows); libllama leaves
// other weights in plain memory, where ggml computes them as its other
// builds do, and so do the level's vector kernels.
const amxRowMultiple = 32

// The arch_prctl request for the tile data state (Linux 5.16 and later):
// without it the first tile instruction faults.
const (
	archReqXcompPerm  = 0x1023
	archGetXcompPerm  = 0x1022
	xfeatureXtiledata = 18
)

var amxOnce = sync.OnceValue(func() bool {
	if os.Getenv(EnvAMX) == "0" {
		return false
	}
	if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXInt8 || !cpu.X86.HasAVX512F || !cpu.X86.HasAVX512BW {
		return false
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0); e != 0 {
		return false
	}
	var perm uint64
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetXcompPerm, uintptr(unsafe.Pointer(&perm)), 0); e != 0 {
		return false
	}
	return perm&(1<<xfeatureXtiledata) != 0
})

// amxUsable reports whether the processor has AMX-TILE and AMX-INT8 and
// the kernel granted this process the tile data state (asked for once,
// process-wide, on the first call), unless EnvAMX is 0.
func amxUsable() bool { return amxOnce() }

// amxType is how a weight type meets the tiles: its activations are
// vdt, read a step at a time from qoff in each block of outer bytes,
// inner steps of step elements a block; codes unpacks one weight block
// into its integer levels (signed or unsigned as the kernel multiplies
// them) and each step's row scale and minimum (the value of a weight is
// level*dx + mx, with mx multiplying the activation's step sum).
type amxType struct {
	vdt          quant.Type
	step         int // elements per step: 32 or 16
	blockSteps   int // steps per weight block
	qoff, outer  int // activation block: levels at qoff, blocks outer bytes apart
	signed, mins bool
	codes        func(b []byte, q []byte, dx, mx []float32)
	// colAux sets step s's d_y and s_y of an activation row y.
	colAux func(y []byte, s int) (dy, sy float32)
	// packAsm, where the type has it, is pack for 16 rows in assembly
	// (the same bytes): row m at src+idx[m], nb blocks.
	packAsm func(dst, src unsafe.Pointer, idx *[16]int32, nb int)
	// kq, set for the K-quants, writes a super-block's step headers as
	// their kernels take them (see amxDotQ4K): each step's integer scale
	// (sc) and, for Q4_K, its minimum as a float32 (mn), as bits; it
	// returns the super-block's d and dmin. codes then only unpacks the
	// levels, and packAsm leaves the headers to Go.
	kq func(b []byte, sc, mn []uint32) (d, dmin float32)
	// gemv, where the type has it, computes one-column products in
	// ggml's AMX order (amxGemv), off the tiles; gemvAux writes its
	// activation records.
	gemv    func(nb int, x unsafe.Pointer, stride uintptr, ngroups int, aux unsafe.Pointer, out *float32, idx *[16]int32, gstride uintptr, oidx *[16]int32)
	gemvAux func(rec, y []byte, nb int)
	// gemvSwap: the kernel's lanes 4-7 and 8-11 are rows 8-11 and 4-7
	// (gemvRow).
	gemvSwap bool
}

var amxTypes = map[quant.Type]*amxType{
	quant.Q4_0: {vdt: quant.Q8_0, step: 32, blockSteps: 1, qoff: 2, outer: 34, signed: true, codes: codesQ4_0, colAux: auxQ8_0, packAsm: amxPackQ4_0, gemv: amxGemvQ4_0, gemvAux: gemvAuxQ8_0(8)},
	quant.Q4_1: {vdt: quant.Q8_1, step: 32, blockSteps: 1, qoff: 4, outer: 36, mins: true, codes: codesQ4_1, colAux: auxQ8_1, packAsm: amxPackQ4_1, gemv: amxGemvQ4_1, gemvAux: gemvAuxQ8_1},
	quant.Q8_0: {vdt: quant.Q8_0, step: 32, blockSteps: 1, qoff: 2, outer: 34, signed: true, codes: codesQ8_0, colAux: auxQ8_0, packAsm: amxPackQ8_0, gemv: amxGemvQ8_0, gemvAux: gemvAuxQ8_0(128), gemvSwap: true},
	quant.Q4_K: {vdt: quant.Q8_K, step: 32, blockSteps: 8, qoff: 4, outer: 292, mins: true, codes: codesQ4_K, colAux: auxQ8_K32, packAsm: amxPackQ4_K, kq: kqQ4_K, gemv: amxGemvQ4K, gemvAux: gemvAuxQ8_K},
	quant.Q6_K: {vdt: quant.Q8_K, step: 16, blockSteps: 16, qoff: 4, outer: 292, signed: true, codes: codesQ6_K, colAux: auxQ8_K16, kq: kqQ6_K, gemv: amxGemvQ6K, gemvAux: gemvAuxQ8_K16},
}

func f16(b []byte) float32 { return quant.FP16ToFP32(binary.LittleEndian.Uint16(b)) }

func auxQ8_0(y []byte, s int) (float32, float32) { return f16(y[34*s:]), 0 }
func auxQ8_1(y []byte, s int) (float32, float32) { return f16(y[36*s:]), f16(y[36*s+2:]) }

// auxQ8_K32 is a 32-element step's d and its levels' sum (two of the
// block's 16-element sums) as a float, which is exact.
func auxQ8_K32(y []byte, s int) (float32, float32) {
	b := y[292*(s/8):]
	d := math.Float32frombits(binary.LittleEndian.Uint32(b))
	j := s % 8
	sum := int32(int16(binary.LittleEndian.Uint16(b[260+4*j:]))) + int32(int16(binary.LittleEndian.Uint16(b[262+4*j:])))
	return d, float32(sum)
}

func auxQ8_K16(y []byte, s int) (float32, float32) {
	return math.Float32frombits(binary.LittleEndian.Uint32(y[292*(s/16):])), 0
}

const nibbles = 0x0f0f0f0f0f0f0f0f

// nibbleCodes writes the 32 levels of 16 nibble pairs qs (value j low in
// byte j, value j+16 high) to q, plus add to each byte.
func nibbleCodes(q, qs []byte, add uint64) {
	lo, hi := binary.LittleEndian.Uint64(qs), binary.LittleEndian.Uint64(qs[8:])
	binary.LittleEndian.PutUint64(q, lo&nibbles+add)
	binary.LittleEndian.PutUint64(q[8:], hi&nibbles+add)
	binary.LittleEndian.PutUint64(q[16:], lo>>4&nibbles+add)
	binary.LittleEndian.PutUint64(q[24:], hi>>4&nibbles+add)
}

// codesQ4_0: the levels minus 8, signed.
func codesQ4_0(b, q []byte, dx, _ []float32) {
	dx[0] = f16(b)
	for j, v := range b[2:18] {
		q[j], q[j+16] = byte(int8(v&15)-8), byte(int8(v>>4)-8)
	}
}

func codesQ4_1(b, q []byte, dx, mx []float32) {
	dx[0], mx[0] = f16(b), f16(b[2:])
	nibbleCodes(q, b[4:20], 0)
}

func codesQ8_0(b, q []byte, dx, _ []float32) {
	dx[0] = f16(b)
	copy(q[:32], b[2:34])
}

// codesQ4_K: sub-block j's levels are nibble j%2 of qs[32(j/2):], its
// value d*sc*q - dmin*m (kqQ4_K has the scales).
func codesQ4_K(b, q []byte, _, _ []float32) {
	for p := range 4 {
		qs := b[16+32*p : 48+32*p]
		for i := 0; i < 32; i += 8 {
			v := binary.LittleEndian.Uint64(qs[i:])
			binary.LittleEndian.PutUint64(q[64*p+i:], v&nibbles)
			binary.LittleEndian.PutUint64(q[64*p+32+i:], v>>4&nibbles)
		}
	}
}

// kqQ4_K: the eight sub-blocks' 6-bit scales and minimums.
func kqQ4_K(b []byte, sc, mn []uint32) (float32, float32) {
	for j := range 8 {
		s, m := quant.ScaleMinK4(j, b[4:16])
		sc[j], mn[j] = uint32(s), math.Float32bits(float32(m))
	}
	return f16(b), f16(b[2:])
}

// kqQ6_K: the 16 signed 8-bit scales.
func kqQ6_K(b []byte, sc, mn []uint32) (float32, float32) {
	for j := range 16 {
		sc[j], mn[j] = uint32(int32(int8(b[192+j]))), 0
	}
	return f16(b[208:]), 0
}

// codesQ6_K: element 128c+32k+l is nibble k/2 of ql[64c+l+32(k%2)] with
// bits 2k of qh[32c+l] above it, minus 32 (as a byte, (code+0x60)^0x80:
// no byte carries); 16 scales of 16 elements.
func codesQ6_K(b, q []byte, _, _ []float32) {
	const crumbs, tops = 0x0303030303030303, 0x8080808080808080
	for c := range 2 {
		ql, qh := b[64*c:64*c+64], b[128+32*c:160+32*c]
		for l := 0; l < 32; l += 8 {
			q0, q1 := binary.LittleEndian.Uint64(ql[l:]), binary.LittleEndian.Uint64(ql[l+32:])
			h := binary.LittleEndian.Uint64(qh[l:])
			lo := [4]uint64{q0 & nibbles, q1 & nibbles, q0 >> 4 & nibbles, q1 >> 4 & nibbles}
			for k, v := range lo {
				code := v | (h>>(2*k)&crumbs)<<4
				binary.LittleEndian.PutUint64(q[128*c+32*k+l:], (code+0x6060606060606060)^tops)
			}
		}
	}
}

// kernel is the assembly for a's levels and steps.
func (a *amxType) kernel() func(cfg unsafe.Pointer, steps, inner int, outer, astep uintptr, a unsafe.Pointer, astride uintptr, w, aux, c, out unsafe.Pointer, ostride uintptr, ncols int, bd unsafe.Pointer) {
	switch {
	case a.kq != nil && a.signed:
		return amxDotQ6K
	case a.kq != nil:
		return amxDotQ4K
	case !a.signed:
		return amxDotSU32
	}
	return amxDotSS32
}

// A packed step of 16 weight rows: their 16 scales (float32; a K-quant's
// int32), 16 minimums (float32), then B: step/4 rows of 64 bytes, byte
// 4m+i of row k being level 4k+i of the step in weight row m (the layout
// TDPBSUD's second source takes).
func (a *amxType) wstep() int { return 128 + 16*a.step }

// packSize is the bytes of nb blocks of 16 packed rows: the steps, then,
// for a K-quant, each super-block's 16 d and 16 dmin (float32).
func (a *amxType) packSize(nb int) int {
	n := nb * a.blockSteps * a.wstep()
	if a.kq != nil {
		n += 128 * nb
	}
	return n
}

// kheaders writes row r's K-quant step headers and super-block scales
// for its nb blocks of bs bytes at row into dst (packSize(nb) bytes).
func (a *amxType) kheaders(dst, row []byte, r, nb, bs int) {
	ws, spb := a.wstep(), a.blockSteps
	bd := dst[nb*spb*ws:]
	var sc, mn [16]uint32
	for b := range nb {
		d, dmin := a.kq(row[b*bs:], sc[:], mn[:])
		for s := range spb {
			st := dst[(b*spb+s)*ws:]
			binary.LittleEndian.PutUint32(st[4*r:], sc[s])
			binary.LittleEndian.PutUint32(st[64+4*r:], mn[s])
		}
		binary.LittleEndian.PutUint32(bd[128*b+4*r:], math.Float32bits(d))
		binary.LittleEndian.PutUint32(bd[128*b+64+4*r:], math.Float32bits(dmin))
	}
}

// pack unpacks rows [0, nrows) of x (stride bytes apart, nb blocks of bs
// bytes each) into dst, nb*blockSteps packed steps; rows past nrows are
// zero.
func (a *amxType) pack(dst, x []byte, stride, nrows, nb int, bs int) {
	ws, spb, words := a.wstep(), a.blockSteps, a.step/4
	if nrows < 16 {
		clear(dst)
	}
	_ = dst[a.packSize(nb)-1]
	var q [256]byte
	var dx, mx [16]float32
	base := unsafe.Pointer(unsafe.SliceData(dst))
	for r := range nrows {
		row := x[r*stride : r*stride+nb*bs]
		for b := range nb {
			a.codes(row[b*bs:], q[:], dx[:], mx[:])
			for s := range spb {
				// In bounds: step b*spb+s < nb*spb, checked above.
				st := unsafe.Add(base, (b*spb+s)*ws+4*r)
				*(*float32)(st) = dx[s]
				*(*float32)(unsafe.Add(st, 64)) = mx[s]
				src := q[s*a.step : (s+1)*a.step]
				for k := range words {
					*(*uint32)(unsafe.Add(st, 128+64*k)) = binary.LittleEndian.Uint32(src[4*k:])
				}
			}
		}
		if a.kq != nil {
			a.kheaders(dst, row, r, nb, bs)
		}
	}
}

// packRows is pack, through packAsm for a whole tile where a has it.
func (a *amxType) packRows(dst, x []byte, stride, nrows, nb int, bs int) {
	if a.packAsm == nil || nrows < 16 || 15*stride > math.MaxInt32 {
		a.pack(dst, x, stride, nrows, nb, bs)
		return
	}
	_, _ = dst[a.packSize(nb)-1], x[15*stride+nb*bs-1]
	var idx [16]int32
	for m := range idx {
		idx[m] = int32(m * stride)
	}
	a.packAsm(unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(x)), &idx, nb)
	if a.kq != nil {
		for r := range 16 {
			a.kheaders(dst, x[r*stride:], r, nb, bs)
		}
	}
}

// fillAux writes the columns' step scales for the kernels: for each tile
// of 16 columns from column c0 of act and each step, the columns' d_y,
// then their s_y (128 bytes a step; zero past the last column).
func (a *amxType) fillAux(aux []byte, act *activations, ncols int64, steps int) {
	clear(aux)
	for c := range ncols {
		y := act.data[uint64(c)*act.nb[1]:]
		t := aux[int(c/16)*steps*128+4*int(c%16):]
		for k := range steps {
			dy, sy := a.colAux(y, k)
			binary.LittleEndian.PutUint32(t[128*k:], math.Float32bits(dy))
			binary.LittleEndian.PutUint32(t[128*k+64:], math.Float32bits(sy))
		}
	}
}

// amxScratch is one thread's memory for amxMulMat, kept across calls.
type amxScratch struct {
	cfg [64]byte
	w   []byte
	aux []byte
	c   [2048]byte
	out [256]float32
	// amxGemv's lane offsets: here, not on its stack, since the kernel
	// is called through a func value, which escape analysis cannot see
	// through (four allocations a product otherwise).
	idx, oidx, tidx, toidx [16]int32
}

var amxScratches = sync.Pool{New: func() any { return new(amxScratch) }}

// amxMulMat computes thread p's share of MUL_MAT t on the tiles and
// reports true, or reports false, computing nothing, when t is not a
// product they take: a 2-D weight of an amxTypes type with whole blocks
// against at least at.minCols F32 columns, the results' columns evenly
// spaced.
func amxMulMat(p *Params, t *graph.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	at := amxTypes[a.Type]
	ncols := b.NRows()
	gemv := at != nil && at.gemv != nil && ncols < at.minCols() && uint64(a.Ne[1])*a.Nb[1] <= math.MaxInt32
	if at == nil || b.Type != quant.F32 || ncols < at.minCols() && !gemv || a.Ne[2] != 1 || a.Ne[3] != 1 ||
		a.Ne[0]%int64(a.Type.BlockSize()) != 0 || a.Ne[1]%amxRowMultiple != 0 || isHadamard(t) ||
		!a.IsContiguous() || !b.IsContiguous() ||
		t.Nb[2] != t.Nb[1]*uint64(t.Ne[1]) || t.Nb[3] != t.Nb[2]*uint64(t.Ne[2]) {
		return false
	}
	act := prepareActivations(p, b, at.vdt)
	m := a.Ne[1]
	tiles := (m + 15) / 16
	lo, hi := p.Rows(tiles)
	if lo >= hi {
		return true
	}
	if gemv {
		amxGemv(t, at, &act, lo, hi)
		return true
	}
	amxTiles(t, at, &act, lo, hi)
	// Columns whose activations were not finite are NaN, as on the
	// other paths.
	nan := math.Float32bits(float32(math.NaN()))
	for c := range ncols {
		if act.bad != nil && act.bad[c] != 0 {
			for r := lo * 16; r < min(hi*16, m); r++ {
				binary.LittleEndian.PutUint32(t.Data[uint64(c)*t.Nb[1]+4*uint64(r):], nan)
			}
		}
	}
	return true
}

// amxTiles computes tiles [lo, hi) of 16 rows of MUL_MAT t, of at's
// weight type, on the tile unit, from the activations act.
func amxTiles(t *graph.Tensor, at *amxType, act *activations, lo, hi int64) {
	a := t.Src[0]
	ncols := t.Src[1].NRows()
	nb := int(a.Ne[0] / int64(a.Type.BlockSize()))
	steps := nb * at.blockSteps
	bs := int(a.Type.TypeSize())
	m := a.Ne[1]
	s := amxScratches.Get().(*amxScratch)
	defer amxScratches.Put(s)
	ws := at.wstep()
	w := grow(&s.w, at.packSize(nb))
	// A K-quant's super-block scales follow the steps (packSize); the
	// legacy kernels do not read bd.
	bd := unsafe.Pointer(unsafe.SliceData(w))
	if at.kq != nil {
		bd = unsafe.Pointer(&w[steps*ws])
	}
	aux := grow(&s.aux, int((ncols+15)/16)*steps*128)
	at.fillAux(aux, act, ncols, steps)
	st := act.nb[1]
	kern := at.kernel()
	astep := uintptr(at.step)
	cfgCols := -1 // the columns s.cfg is set for
	for tile := lo; tile < hi; tile++ {
		r0 := tile * 16
		nrows := int(min(16, m-r0))
		at.packRows(w, a.Data[uint64(r0)*a.Nb[1]:], int(a.Nb[1]), nrows, nb, bs)
		for c0 := int64(0); c0 < ncols; c0 += 16 {
			nc := int(min(16, ncols-c0))
			caux := aux[int(c0/16)*steps*128:]
			if nc != cfgCols {
				setTileConfig(&s.cfg, nc, at.step)
				cfgCols = nc
			}
			out := unsafe.Pointer(&s.out[0])
			ostride := uintptr(64)
			// The K-quant kernels accumulate in out as they go, in a
			// zeroed scratch.
			direct := nrows == 16 && at.kq == nil
			if at.kq != nil {
				clear(s.out[:])
			}
			if direct {
				off := uint64(c0)*t.Nb[1] + 4*uint64(r0)
				end := off + uint64(nc-1)*t.Nb[1] + 64
				out, ostride = unsafe.Pointer(unsafe.SliceData(t.Data[off:end])), uintptr(t.Nb[1])
			}
			ya := act.data[uint64(c0)*st+uint64(at.qoff) : uint64(c0+int64(nc)-1)*st+act.rowSize]
			kern(unsafe.Pointer(&s.cfg), steps, at.blockSteps, uintptr(at.outer), astep,
				unsafe.Pointer(unsafe.SliceData(ya)), uintptr(st), unsafe.Pointer(unsafe.SliceData(w)),
				unsafe.Pointer(unsafe.SliceData(caux[:steps*128])), unsafe.Pointer(&s.c[0]), out, ostride, nc, bd)
			if !direct {
				for c := range nc {
					off := uint64(c0+int64(c))*t.Nb[1] + 4*uint64(r0)
					for r := range nrows {
						binary.LittleEndian.PutUint32(t.Data[off+4*uint64(r):], math.Float32bits(s.out[16*c+r]))
					}
				}
			}
		}
	}
}

// setTileConfig writes palette 1's configuration: TMM0 the 16x16 int32
// sums of nc columns, TMM1 nc activation rows of step bytes, TMM2 the
// step/4 rows of 64 bytes of packed weights; TMM3 to TMM5 the same.
func setTileConfig(cfg *[64]byte, nc, step int) {
	clear(cfg[:])
	cfg[0] = 1
	binary.LittleEndian.PutUint16(cfg[16:], 64)
	binary.LittleEndian.PutUint16(cfg[18:], uint16(step))
	binary.LittleEndian.PutUint16(cfg[20:], 64)
	cfg[48], cfg[49], cfg[50] = byte(nc), byte(nc), byte(step/4)
	// TMM3 to TMM5 as TMM0 to TMM2, for the odd steps.
	copy(cfg[22:28], cfg[16:22])
	copy(cfg[51:54], cfg[48:51])
}

// amxDotSU32 and amxDotSS32 (amx_linux_amd64.s) compute, for the nc <= 16
// columns of a tile and the 16 packed weight rows w, out[c*ostride + 4m] =
// the sum over steps, in order, fused, of C[c][m] * (dx[m]*dy[c]) (then
// + mx[m]*sy[c], fused, in SU): ggml's AMX order for the legacy types. C
// is the step's int32 tile product, dx and mx the step's row scales and
// minimums in w, dy and sy the columns' in aux (128 bytes a step); c is 2
// KiB of scratch. The activation levels of step k of column c are at a +
// c*astride + (k/inner)*outer + (k%inner)*astep. SU multiplies signed
// activations by unsigned weight levels, SS signed by signed, in steps of
// 32. amxDotQ4K and amxDotQ6K do so for those K-quants, in ggml's order
// for them: per super-block the integer sum over its sub-blocks of C
// times the rows' integer scales, fused times d*dy into out (16 columns
// 64 bytes apart, zeroed by the caller), then for Q4_K minus the integer
// sum of the sub-blocks' bsums times the minimums times dmin*dy, fused; d
// and dmin at bd (16 floats each a super-block). The legacy kernels
// ignore bd.
//
//go:noescape
func amxDotSU32(cfg unsafe.Pointer, steps, inner int, outer, astep uintptr, a unsafe.Pointer, astride uintptr, w, aux, c, out unsafe.Pointer, ostride uintptr, ncols int, bd unsafe.Pointer)

//go:noescape
func amxDotSS32(cfg unsafe.Pointer, steps, inner int, outer, astep uintptr, a unsafe.Pointer, astride uintptr, w, aux, c, out unsafe.Pointer, ostride uintptr, ncols int, bd unsafe.Pointer)

//go:noescape
func amxDotQ4K(cfg unsafe.Pointer, steps, inner int, outer, astep uintptr, a unsafe.Pointer, astride uintptr, w, aux, c, out unsafe.Pointer, ostride uintptr, ncols int, bd unsafe.Pointer)

//go:noescape
func amxDotQ6K(cfg unsafe.Pointer, steps, inner int, outer, astep uintptr, a unsafe.Pointer, astride uintptr, w, aux, c, out unsafe.Pointer, ostride uintptr, ncols int, bd unsafe.Pointer)

//go:noescape
func amxPackQ4_0(dst, src unsafe.Pointer, idx *[16]int32, nb int)

//go:noescape
func amxPackQ4_1(dst, src unsafe.Pointer, idx *[16]int32, nb int)

//go:noescape
func amxPackQ4_K(dst, src unsafe.Pointer, idx *[16]int32, nb int)

//go:noescape
func amxPackQ8_0(dst, src unsafe.Pointer, idx *[16]int32, nb int)
