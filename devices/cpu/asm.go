package cpu

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/ggml-go/ggml/quant"
)

// The glue between the levels' kernel tables (level.go) and the
// assembly: the assembly takes base pointers and unit counts, the tables
// take slices. It is built on every architecture (a purego or riscv64
// build registers no level, so none of it runs there).

// asmDot is one type's assembly pair. dot takes the number of blocks (of
// elements for F32, F16 and BF16) and base pointers: the slices' lengths
// have been checked by the product's supports rule, as quant.DotKernel's
// contract says. dot4 may be nil.
type asmDot struct {
	typ  quant.Type
	dot  func(n int, x, y unsafe.Pointer) float32
	dot4 func(n int, x []byte, stride uint64, nrows int, y *[4][]byte, scratch, out []float32)
}

// asmRows is one type's vecDotRows.
type asmRows struct {
	typ  quant.Type
	rows func(n int, x []byte, stride uint64, nrows int, y []byte, scratch, out []float32)
}

// build makes l's kernel set: the generic set with every entry l has
// replaced.
func (l *level) build() *kernelSet {
	s := deriveGeneric(l.name)
	dots := make(map[quant.Type]func(int, unsafe.Pointer, unsafe.Pointer) float32)
	for _, k := range l.dots {
		tr := &s.traits[k.typ]
		tr.vecDot, tr.vecDot4 = wrap1(int(k.typ.BlockSize()), k.dot), k.dot4
		dots[k.typ] = k.dot
		s.dotTypes = append(s.dotTypes, k.typ)
	}
	for _, r := range l.rows {
		s.traits[r.typ].vecDotRows = r.rows
	}
	for _, t := range l.quantizers {
		// quant's assembly needs no more than the level's features
		// (TestLevelsWellFormed): it is missing only where the level
		// does not run.
		k := quant.FromFloatKernel(t)
		if a := quant.FromFloatKernelAVX(t); l.avxActivations && a != nil {
			k = a
			s.avxFromFloatTypes = append(s.avxFromFloatTypes, t)
		}
		if k != nil {
			s.traits[t].fromFloat = asmFromFloat(k, s.traits[t].fromFloat)
			s.fromFloatTypes = append(s.fromFloatTypes, t)
		}
	}
	s.gemm = make(map[quant.Type]*plainGemm, len(l.gemm))
	for typ, g := range l.gemm {
		if g.exact && g.tileCol == nil {
			dot := dots[typ]
			if dot == nil {
				panic(fmt.Sprintf("cpu: level %s tiles %s exactly but has no vec_dot for it", l.name, typ))
			}
			e := *g
			e.tileCol, e.one = dotEdges(g.rows, dot)
			g = &e
		}
		s.gemm[typ] = g
	}
	s.repack, s.pack, s.aux, s.tileMulMat, s.tileTypes = l.repack, l.pack, l.aux, l.tileMulMat, l.tileTypes
	s.vec = newAsmVec(l.vecName(), l.vec)
	slices.Sort(s.dotTypes)
	slices.Sort(s.fromFloatTypes)
	return s
}

// asmFromFloat is from_float through quant's assembly k, the generic
// conversion taking the rows k hands back (lengths off the block size,
// short destinations, the error of non-finite input).
func asmFromFloat(k func([]byte, []float32) bool, generic func([]byte, []float32) error) func([]byte, []float32) error {
	return func(dst []byte, src []float32) error {
		if k(dst, src) {
			return nil
		}
		return generic(dst, src)
	}
}

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// wrap1 adapts a kernel over n/per units to the traits' vecDot.
func wrap1(per int, k func(int, unsafe.Pointer, unsafe.Pointer) float32) func(int, []byte, []byte) float32 {
	return func(n int, x, y []byte) float32 { return k(n/per, ptr(x), ptr(y)) }
}

// wrap4 adapts a four-column kernel over one row of n/per units to
// vecDot4, row by row.
func wrap4(per int, k func(int, unsafe.Pointer, *[4]unsafe.Pointer, *[4]float32)) func(int, []byte, uint64, int, *[4][]byte, []float32, []float32) {
	return func(n int, x []byte, stride uint64, nrows int, y *[4][]byte, _, out []float32) {
		ys := [4]unsafe.Pointer{ptr(y[0]), ptr(y[1]), ptr(y[2]), ptr(y[3])}
		for r := range nrows {
			k(n/per, ptr(x[uint64(r)*stride:]), &ys, (*[4]float32)(out[4*r:4*r+4]))
		}
	}
}

// asmVecFuncs are an architecture's assembly vector primitives on base
// pointers and lengths (n > 0); newAsmVec makes a vecKernels of them. A nil
// entry keeps the portable primitive.
type asmVecFuncs struct {
	add, sub, mul, div func(dst, x, y *float32, n int)
	scale              func(x *float32, n int, s float32)
	mad                func(y, x *float32, n int, s float32)
	dot                func(x, y *float32, n int) float32
	dotF16             func(x, y *uint16, n int) float32
	madF16             func(y, x *uint16, n int, s float32)
	scaleF16           func(y *uint16, n int, s float32)
	f16ToF32           func(dst *float32, src *uint16, n int)

	// The loops that take whole groups only (of values; of pairs for
	// ropeNeox, whose argument is the row's half): the portable primitive
	// takes the rest.
	swiglu     grouped[func(dst, x, g *float32, n int)]
	silu       grouped[func(dst, x *float32, n int)]
	softmax    grouped[func(dst, src *float32, n int, max float32) float64]
	expf       grouped[func(dst, src *float32, n int)]
	f32ToF16   grouped[func(dst *uint16, src *float32, n int)]
	ropeNeox   grouped[func(y, x, cs *float32, half int)]
	ropeNormal grouped[func(y, x, cs *float32, n int)]

	// Flash attention's F16 steps, one call per query row
	// (attnScoresMaxF16Fused, attnAccF16Fused); nil composes them of the
	// primitives.
	attnScores attnScoresAsm
	attnAcc    attnAccAsm
}

// attnScoresAsm is attnScoresMaxF16 on base pointers: n keys, rows of d
// values, bad = 1 for a key not below rows (checked before its row is
// read), no running maximum without mvs (attn_amd64.s, attn_arm64.s).
type attnScoresAsm func(out, qf *float32, k *byte, stride uintptr, keys *int32, n, d, rows int, mvs *float32, newMax *bool,
	scale float32) (bad int, m float32)

// attnAccAsm is attnAccF16 on base pointers, d > 0, with attnScoresAsm's
// check of the keys.
type attnAccAsm func(acc *uint16, d int, v *byte, stride uintptr, keys *int32, ex *float32, newMax *bool, n, rows int) (bad int,
	sum float32)

// grouped is an assembly loop over whole groups of group elements.
type grouped[F any] struct {
	fn    F
	group int
}

func by[F any](group int, fn F) grouped[F] { return grouped[F]{fn, group} }

// asmMap wraps a loop dst[i] = f(src[i]); src is cut to dst's length.
func asmMap[D, S any](k grouped[func(dst *D, src *S, n int)], generic func([]D, []S)) func([]D, []S) {
	if k.fn == nil {
		return generic
	}
	return func(dst []D, src []S) {
		n := len(dst) / k.group * k.group
		if n > 0 {
			src = src[:len(dst)]
			k.fn(unsafe.SliceData(dst), unsafe.SliceData(src), n)
		}
		generic(dst[n:], src[n:])
	}
}

// asmSwiGLU wraps a SwiGLU loop; x and g are cut to dst's length. The
// elements after the last whole group go one by one through the C
// library's e^x (swigluLibc), as ggml's leftovers loop takes them.
func asmSwiGLU(k grouped[func(dst, x, g *float32, n int)], generic func(dst, x, g []float32)) func(dst, x, g []float32) {
	if k.fn == nil {
		return generic
	}
	return func(dst, x, g []float32) {
		n := len(dst) / k.group * k.group
		if n > 0 {
			x, g = x[:len(dst)], g[:len(dst)]
			k.fn(unsafe.SliceData(dst), unsafe.SliceData(x), unsafe.SliceData(g), n)
		}
		swigluLibc(dst[n:], x[n:], g[n:])
	}
}

// asmRopeNeox wraps a NeoX rotation over whole groups of pairs.
func asmRopeNeox(k grouped[func(y, x, cs *float32, half int)], generic func(y, x, cs []float32)) func(y, x, cs []float32) {
	if k.fn == nil {
		return generic
	}
	return func(y, x, cs []float32) {
		h := len(x) / 2
		y, cs = y[:2*h], cs[:2*h]
		n := h / k.group * k.group
		if n > 0 {
			k.fn(unsafe.SliceData(y), unsafe.SliceData(x), unsafe.SliceData(cs), h)
		}
		ropeNeoxFrom(y, x, cs, n)
	}
}

// asmRopeNormal wraps an adjacent-pairs rotation over whole groups of
// values.
func asmRopeNormal(k grouped[func(y, x, cs *float32, n int)], generic func(y, x, cs []float32)) func(y, x, cs []float32) {
	if k.fn == nil {
		return generic
	}
	return func(y, x, cs []float32) {
		y, cs = y[:len(x)], cs[:len(x)]
		n := len(x) / k.group * k.group
		if n > 0 {
			k.fn(unsafe.SliceData(y), unsafe.SliceData(x), unsafe.SliceData(cs), n)
		}
		generic(y[n:], x[n:], cs[n:])
	}
}

// asmBinary wraps one of the binary assembly loops; the slices are cut
// to dst's length first, so a short x or y panics instead of being
// overread.
func asmBinary(op func(dst, x, y *float32, n int), generic func(dst, x, y []float32)) func(dst, x, y []float32) {
	if op == nil {
		return generic
	}
	return func(dst, x, y []float32) {
		if len(dst) == 0 {
			return
		}
		x, y = x[:len(dst)], y[:len(dst)]
		op(unsafe.SliceData(dst), unsafe.SliceData(x), unsafe.SliceData(y), len(dst))
	}
}

// asmScale wraps an in-place loop over y with a scalar.
func asmScale[T float32 | uint16](op func(y *T, n int, s float32), generic func([]T, float32)) func([]T, float32) {
	if op == nil {
		return generic
	}
	return func(y []T, s float32) {
		if len(y) > 0 {
			op(unsafe.SliceData(y), len(y), s)
		}
	}
}

// asmMad wraps y[i] += x[i]*s; x is cut to y's length.
func asmMad[T float32 | uint16](op func(y, x *T, n int, s float32), generic func(y, x []T, s float32)) func(y, x []T, s float32) {
	if op == nil {
		return generic
	}
	return func(y, x []T, s float32) {
		if len(y) > 0 {
			x = x[:len(y)]
			op(unsafe.SliceData(y), unsafe.SliceData(x), len(y), s)
		}
	}
}

// asmDotVec wraps a dot product; y is cut to x's length.
func asmDotVec[T float32 | uint16](op func(x, y *T, n int) float32, generic func(x, y []T) float32) func(x, y []T) float32 {
	if op == nil {
		return generic
	}
	return func(x, y []T) float32 {
		if len(x) == 0 {
			return 0
		}
		y = y[:len(x)]
		return op(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
	}
}

func newAsmVec(name string, f asmVecFuncs) vecKernels {
	g := genericVec
	k := vecKernels{
		name:     name,
		add:      asmBinary(f.add, g.add),
		sub:      asmBinary(f.sub, g.sub),
		mul:      asmBinary(f.mul, g.mul),
		div:      asmBinary(f.div, g.div),
		scale:    asmScale(f.scale, g.scale),
		mad:      asmMad(f.mad, g.mad),
		dot:      asmDotVec(f.dot, g.dot),
		dotF16:   asmDotVec(f.dotF16, g.dotF16),
		madF16:   asmMad(f.madF16, g.madF16),
		scaleF16: asmScale(f.scaleF16, g.scaleF16),
		f16ToF32: g.f16ToF32,
		f32ToF16: asmMap(f.f32ToF16, g.f32ToF16),
		swiglu:   asmSwiGLU(f.swiglu, g.swiglu),
		silu:     asmSiLU(f.silu, g.silu),
		softmax:  asmSoftmax(f.softmax, g.softmax),
		// Every assembly level has FMA, as the ggml builds it stands for.
		contracts:  true,
		expf:       asmMap(f.expf, g.expf),
		ropeNeox:   asmRopeNeox(f.ropeNeox, g.ropeNeox),
		ropeNormal: asmRopeNormal(f.ropeNormal, g.ropeNormal),
	}
	if f.f16ToF32 != nil {
		k.f16ToF32 = func(dst []float32, src []uint16) {
			if len(dst) > 0 {
				src = src[:len(dst)]
				f.f16ToF32(unsafe.SliceData(dst), unsafe.SliceData(src), len(dst))
			}
		}
	}
	k = composeAttn(k)
	if f.attnScores != nil {
		scores := f.attnScores
		k.attnScoresF16 = func(out []float32, keys []int32, kd []byte, stride uint64, q16 []uint16, qf []float32, tmp []uint16) {
			attnScoresMaxF16Fused(scores, out, keys, kd, stride, q16, qf, 1, nil, nil)
		}
		k.attnScoresMaxF16 = func(out []float32, keys []int32, kd []byte, stride uint64, q16 []uint16, qf []float32, _ []uint16,
			scale float32, mvs []float32, newMax []bool) float32 {
			return attnScoresMaxF16Fused(scores, out, keys, kd, stride, q16, qf, scale, mvs, newMax)
		}
	}
	if f.attnAcc != nil {
		acc, composed := f.attnAcc, k.attnAccF16
		k.attnAccF16 = func(a []uint16, keys []int32, v []byte, stride uint64, ex []float32, newMax []bool, tmp []uint16) float32 {
			if len(a) == 0 {
				return composed(a, keys, v, stride, ex, newMax, tmp)
			}
			return attnAccF16Fused(acc, a, keys, v, stride, ex, newMax)
		}
	}
	return k
}

// attnRows is how many rows of rowBytes bytes, stride bytes apart, fit in
// n bytes: the assembly checks every key against it.
func attnRows(n int, stride, rowBytes uint64) int {
	switch {
	case uint64(n) < rowBytes:
		return 0
	case stride == 0:
		return math.MaxInt
	}
	return int(min((uint64(n)-rowBytes)/stride+1, math.MaxInt))
}

// attnScoresMaxF16Fused is attnScoresMaxF16 in one assembly call, and
// without mvs attnScoresF16; a key past the data panics as the composed
// steps' row views do.
func attnScoresMaxF16Fused(scores attnScoresAsm, out []float32, keys []int32, k []byte, stride uint64, q16 []uint16, qf []float32, scale float32, mvs []float32, newMax []bool) float32 {
	d := len(q16)
	out, qf = out[:len(keys)], qf[:d]
	if mvs != nil {
		mvs, newMax = mvs[:len(keys)], newMax[:len(keys)]
	}
	bad, m := scores(unsafe.SliceData(out), unsafe.SliceData(qf), unsafe.SliceData(k), uintptr(stride), unsafe.SliceData(keys),
		len(keys), d, attnRows(len(k), stride, uint64(d)*2), unsafe.SliceData(mvs), unsafe.SliceData(newMax), scale)
	if bad != 0 {
		panic("cpu: attention row out of range")
	}
	return m
}

// attnAccF16Fused is attnAccF16 in one assembly call, for len(acc) > 0.
func attnAccF16Fused(accumulate attnAccAsm, acc []uint16, keys []int32, v []byte, stride uint64, ex []float32, newMax []bool) float32 {
	ex, newMax = ex[:len(keys)], newMax[:len(keys)]
	bad, sum := accumulate(unsafe.SliceData(acc), len(acc), unsafe.SliceData(v), uintptr(stride), unsafe.SliceData(keys),
		unsafe.SliceData(ex), unsafe.SliceData(newMax), len(keys), attnRows(len(v), stride, uint64(len(acc))*2))
	if bad != 0 {
		panic("cpu: attention row out of range")
	}
	return sum
}

// dotEdges are the tileCol and one of a tile of rows rows whose outputs
// are the vec_dot kernel dot's (n super-blocks): the exact tiles' edges.
func dotEdges(rows int, dot func(n int, x, y unsafe.Pointer) float32) (func(int, unsafe.Pointer, uintptr, unsafe.Pointer, unsafe.Pointer), func(int, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer)) {
	tileCol := func(steps int, x unsafe.Pointer, stride uintptr, y, out unsafe.Pointer) {
		o := unsafe.Slice((*float32)(out), rows)
		for r := range o {
			o[r] = dot(steps, unsafe.Add(x, uintptr(r)*stride), y)
		}
	}
	return tileCol, func(steps int, x, y, out unsafe.Pointer) { *(*float32)(out) = dot(steps, x, y) }
}

// packX8 is x8Layout's pack for blocks of blockBytes bytes, the quant
// words moved by an architecture's xpose (nb blocks of the eight rows rs
// bytes apart at src, into dst): the products interleave plain weights on
// the fly, so this is on their path.
func packX8(blockBytes int, xpose func(dst, src unsafe.Pointer, rs uintptr, nb, blockBytes int)) func(dst, src []byte, rs int) {
	return func(dst, src []byte, rs int) {
		nb := rs / blockBytes
		if nb == 0 {
			return
		}
		_, _ = dst[8*nb*blockBytes-1], src[7*rs+nb*blockBytes-1]
		xpose(ptr(dst), ptr(src), uintptr(rs), nb, blockBytes)
	}
}
