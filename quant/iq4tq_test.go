package quant

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/ggmlref"
	"github.com/ggml-go/ggml/internal/ggmlref/reftest"
)

// Differential tests of the IQ4, ternary and Q8_K formats against the real
// ggml. Names in this file carry an iq4tq prefix so that they cannot clash
// with the other families' test helpers in package quant.

// iq4tqCasesPerType is the number of random inputs each type is tested on.
const iq4tqCasesPerType = 300

// iq4tqSeed returns GGML_TEST_SEED when set, else a seed from the clock,
// and logs it so that a failure can be replayed.
func iq4tqSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GGML_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		require.NoError(t, err, "GGML_TEST_SEED")
		seed = v
	}
	t.Logf("seed %d (set GGML_TEST_SEED=%d to replay)", seed, seed)
	return seed
}

// iq4tqKinds name the value distributions a 32-value segment is drawn from.
var iq4tqKinds = []string{
	"uniform", "gaussian", "heavy-tailed", "constant", "zero", "tiny", "huge",
	"extreme", "subnormal", "outlier", "small-ints", "sparse", "half-steps",
}

// iq4tqFill draws x from distribution kind.
func iq4tqFill(r *rand.Rand, x []float32, kind string) {
	scale := []float64{1e-3, 1, 100}[r.IntN(3)]
	switch kind {
	case "uniform":
		for i := range x {
			x[i] = float32((2*r.Float64() - 1) * scale)
		}
	case "gaussian":
		for i := range x {
			x[i] = float32(r.NormFloat64() * scale)
		}
	case "heavy-tailed":
		for i := range x {
			x[i] = float32(math.Tan(math.Pi*(r.Float64()-0.5)) * scale)
		}
	case "constant":
		c := float32(r.NormFloat64() * scale)
		for i := range x {
			x[i] = c
		}
	case "zero":
		for i := range x {
			x[i] = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
		}
	case "tiny":
		for i := range x {
			x[i] = float32(r.NormFloat64() * 1e-30)
		}
	case "huge":
		for i := range x {
			x[i] = float32(r.NormFloat64() * 1e30)
		}
	case "extreme":
		for i := range x {
			x[i] = float32((2*r.Float64() - 1) * math.MaxFloat32)
		}
	case "subnormal":
		for i := range x {
			x[i] = float32(r.NormFloat64() * 1e-40)
		}
	case "outlier":
		for i := range x {
			x[i] = float32(r.NormFloat64() * scale)
		}
		x[r.IntN(len(x))] *= 1e4
	case "small-ints":
		for i := range x {
			x[i] = float32(r.IntN(7)-3) * []float32{1, 0.25}[r.IntN(2)]
		}
	case "sparse":
		clear(x)
		for range 1 + r.IntN(4) {
			x[r.IntN(len(x))] = float32(r.NormFloat64() * scale)
		}
	case "half-steps":
		// Multiples of a/2 after an anchor a: for |a| = 2 the ternary
		// ratios hit ±0.5, for a = -127 the Q8_K scale is 1 and the
		// quants land halfway between integers, so rounding ties show.
		a := []int{2, -2, 127, -127}[r.IntN(4)]
		x[0] = float32(a)
		for i := 1; i < len(x); i++ {
			x[i] = float32(r.IntN(4*iq4tqAbs(a)+1)-2*iq4tqAbs(a)) / 2
		}
	default:
		panic(kind)
	}
}

// iq4tqAbs is |v|.
func iq4tqAbs(v int) int { return max(v, -v) }

// iq4tqCase is one random input: nrows rows of nPerRow values, an optional
// importance matrix and a description for failure messages.
type iq4tqCase struct {
	nrows, nPerRow int
	src, imatrix   []float32
	desc           string
}

// iq4tqGen draws case i for a type with block size bs. The first cases
// cover every distribution once, alternately without and with an
// importance matrix; later ones pick a distribution per row or mix them in
// 32-value segments.
func iq4tqGen(r *rand.Rand, i, bs int) iq4tqCase {
	maxBlocks := 16384 / bs
	nblocks := 1 + r.IntN(min(maxBlocks, 2048/bs+1))
	if r.IntN(10) == 0 {
		nblocks = 1 + r.IntN(maxBlocks)
	}
	c := iq4tqCase{nrows: 1 + r.IntN(4), nPerRow: nblocks * bs}
	c.src = make([]float32, c.nrows*c.nPerRow)
	switch {
	case i < len(iq4tqKinds):
		kind := iq4tqKinds[i]
		iq4tqFill(r, c.src, kind)
		c.desc = kind
	case r.IntN(3) == 0:
		var kinds []string
		for s := 0; s < len(c.src); s += 32 {
			kind := iq4tqKinds[r.IntN(len(iq4tqKinds))]
			iq4tqFill(r, c.src[s:s+32], kind)
			kinds = append(kinds, kind)
		}
		c.desc = "mixed[" + strings.Join(kinds[:min(len(kinds), 8)], ",") + ",...]"
	default:
		kind := iq4tqKinds[r.IntN(len(iq4tqKinds))]
		iq4tqFill(r, c.src, kind)
		c.desc = kind
	}
	imKind := r.IntN(10)
	if i < len(iq4tqKinds) {
		imKind = 4 * (i % 2)
	}
	switch imKind {
	case 4, 5, 6:
		c.imatrix = make([]float32, c.nPerRow)
		for j := range c.imatrix {
			c.imatrix[j] = float32(r.Float64()*4) + 1e-3
		}
		c.desc += " imatrix=positive"
	case 7:
		c.imatrix = make([]float32, c.nPerRow)
		for j := range c.imatrix {
			if r.IntN(4) != 0 {
				c.imatrix[j] = float32(r.Float64() * 2)
			}
		}
		c.desc += " imatrix=with-zeros"
	case 8:
		c.imatrix = make([]float32, c.nPerRow)
		c.desc += " imatrix=zeros"
	case 9:
		c.imatrix = make([]float32, c.nPerRow)
		for j := range c.imatrix {
			c.imatrix[j] = float32(math.Pow(10, 12*r.Float64()-6))
		}
		c.desc += " imatrix=log-uniform"
	}
	c.desc = fmt.Sprintf("%d x %d %s", c.nrows, c.nPerRow, c.desc)
	return c
}

// iq4tqRequireBytes fails with the first differing byte's block and offset.
func iq4tqRequireBytes(t *testing.T, typ Type, what string, want, got []byte) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s %s: length", typ, what)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s %s: byte %d (block %d, offset %d) differs: ggml %#02x, ours %#02x",
				typ, what, i, i/typ.TypeSize(), i%typ.TypeSize(), want[i], got[i])
		}
	}
}

// iq4tqRequireFloats fails with the first element whose bit pattern differs.
func iq4tqRequireFloats(t *testing.T, typ Type, what string, want, got []float32) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s %s: length", typ, what)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s %s: element %d (block %d, byte offset %d) differs: ggml %v (%#08x), ours %v (%#08x)",
				typ, what, i, i/typ.BlockSize(), i/typ.BlockSize()*typ.TypeSize(),
				want[i], math.Float32bits(want[i]), got[i], math.Float32bits(got[i]))
		}
	}
}

// iq4tqDequantizeQ8K calls ggml's dequantize_row_q8_K. ggml exports it but
// leaves Q8_K's to_float empty in its type traits, so Lib.ToFloat cannot
// reach it.
func iq4tqDequantizeQ8K(t *testing.T, lib *ggmlref.Lib, q []byte, n int) []float32 {
	t.Helper()
	require.LessOrEqual(t, n/Q8_K.BlockSize()*Q8_K.TypeSize(), len(q))
	h, err := purego.Dlopen(filepath.Join(lib.Dir(), "libggml-base.so"), purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err)
	defer purego.Dlclose(h)
	fn, err := purego.Dlsym(h, "dequantize_row_q8_K")
	require.NoError(t, err)
	out := make([]float32, n)
	if n > 0 {
		purego.SyscallN(fn, uintptr(unsafe.Pointer(&q[0])), uintptr(unsafe.Pointer(&out[0])), uintptr(n))
	}
	runtime.KeepAlive(q)
	return out
}

// iq4tqCheckDequantize compares Dequantize of q with ggml's to_float (for
// Q8_K, with its dequantize_row_q8_K).
func iq4tqCheckDequantize(t *testing.T, lib *ggmlref.Lib, typ Type, what string, q []byte, n int) {
	t.Helper()
	var want []float32
	if typ == Q8_K {
		want = iq4tqDequantizeQ8K(t, lib, q, n)
	} else {
		var err error
		want, err = lib.ToFloat(uint32(typ), q, int64(n))
		require.NoError(t, err)
	}
	got, err := Dequantize(typ, q, n)
	require.NoError(t, err)
	iq4tqRequireFloats(t, typ, what, want, got)
}

// TestIQ4TernaryMatchesGGML quantizes random inputs, with and without an
// importance matrix, and requires the bytes of ggml_quantize_chunk and the
// floats of ggml's to_float.
func TestIQ4TernaryMatchesGGML(t *testing.T) {
	lib := reftest.Lib(t)
	seed := iq4tqSeed(t)
	for ti, typ := range []Type{IQ4_NL, IQ4_XS, TQ1_0, TQ2_0} {
		t.Run(typ.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(ti)))
			for i := range iq4tqCasesPerType {
				c := iq4tqGen(r, i, typ.BlockSize())
				what := fmt.Sprintf("seed %d case %d (%s)", seed, i, c.desc)
				want, err := lib.QuantizeChunk(uint32(typ), c.src, int64(c.nrows), int64(c.nPerRow), c.imatrix)
				require.NoError(t, err, what)
				got, err := Quantize(typ, c.src, c.nrows, c.nPerRow, c.imatrix)
				require.NoError(t, err, what)
				iq4tqRequireBytes(t, typ, what, want, got)
				iq4tqCheckDequantize(t, lib, typ, what+" dequantized", want, len(c.src))
			}
		})
	}
}

// TestTernaryIgnoresImatrix shows that ggml's ternary quantizers ignore an
// importance matrix, so ours must too.
func TestTernaryIgnoresImatrix(t *testing.T) {
	lib := reftest.Lib(t)
	seed := iq4tqSeed(t)
	for ti, typ := range []Type{TQ1_0, TQ2_0} {
		r := rand.New(rand.NewPCG(seed, 100+uint64(ti)))
		for i := range 50 {
			c := iq4tqGen(r, i, typ.BlockSize())
			im := make([]float32, c.nPerRow)
			for j := range im {
				im[j] = float32(r.Float64() * 10)
			}
			what := fmt.Sprintf("%s seed %d case %d (%s)", typ, seed, i, c.desc)
			with, err := lib.QuantizeChunk(uint32(typ), c.src, int64(c.nrows), int64(c.nPerRow), im)
			require.NoError(t, err, what)
			without, err := lib.QuantizeChunk(uint32(typ), c.src, int64(c.nrows), int64(c.nPerRow), nil)
			require.NoError(t, err, what)
			require.Equal(t, without, with, what)
			got, err := Quantize(typ, c.src, c.nrows, c.nPerRow, im)
			require.NoError(t, err, what)
			iq4tqRequireBytes(t, typ, what, with, got)
		}
	}
}

// TestQ8KMatchesCPUFromFloat requires Quantize(Q8_K) to give the bytes of
// the CPU backend's from_float, whatever the importance matrix, and
// Dequantize to match ggml's to_float.
func TestQ8KMatchesCPUFromFloat(t *testing.T) {
	lib := reftest.Lib(t)
	seed := iq4tqSeed(t)
	r := rand.New(rand.NewPCG(seed, 15))
	for i := range iq4tqCasesPerType {
		c := iq4tqGen(r, i, Q8_K.BlockSize())
		what := fmt.Sprintf("seed %d case %d (%s)", seed, i, c.desc)
		want, err := lib.FromFloatCPU(uint32(Q8_K), c.src)
		require.NoError(t, err, what)
		got, err := Quantize(Q8_K, c.src, c.nrows, c.nPerRow, c.imatrix)
		require.NoError(t, err, what)
		iq4tqRequireBytes(t, Q8_K, what, want, got)
		if c.imatrix != nil {
			plain, err := Quantize(Q8_K, c.src, c.nrows, c.nPerRow, nil)
			require.NoError(t, err, what)
			require.Equal(t, plain, got, "%s: the imatrix changed Q8_K", what)
		}
		iq4tqCheckDequantize(t, lib, Q8_K, what+" dequantized", want, len(c.src))
	}
}

// TestQ8KZeroBlockInto quantizes an all-zero block into a dirty buffer.
// ggml leaves that block's sums as they were; we write zeros, which is
// what the CPU backend's from_float gives into a cleared buffer.
func TestQ8KZeroBlockInto(t *testing.T) {
	dst := make([]byte, Q8_K.TypeSize())
	for i := range dst {
		dst[i] = 0xa5
	}
	n, err := QuantizeInto(dst, Q8_K, make([]float32, 256), 1, 256, nil)
	require.NoError(t, err)
	require.Equal(t, len(dst), n)
	require.Equal(t, make([]byte, len(dst)), dst)
}

// TestQ8KCPUVariantsAgree runs the Q8_K from_float of ggml's generic x86-64
// build and of its AVX2 (haswell) build on the same random inputs: in
// 0.25.1 both forward to the reference quantizer, so they and ours must
// agree byte for byte.
func TestQ8KCPUVariantsAgree(t *testing.T) {
	def := reftest.Lib(t)
	variants := []string{"x64"}
	if iq4tqCPUHas("avx2", "fma", "f16c", "bmi2") {
		variants = append(variants, "haswell")
	}
	libs := map[string]*ggmlref.Lib{def.Variant(): def}
	for _, v := range variants {
		if libs[v] != nil {
			continue
		}
		t.Setenv(ggmlref.EnvVariant, v)
		l, err := ggmlref.Open(def.Dir())
		require.NoError(t, err, v)
		t.Cleanup(l.Close)
		libs[v] = l
	}
	t.Logf("comparing CPU variants %v", slices.Sorted(maps.Keys(libs)))
	seed := iq4tqSeed(t)
	r := rand.New(rand.NewPCG(seed, 16))
	for i := range iq4tqCasesPerType {
		c := iq4tqGen(r, i, Q8_K.BlockSize())
		what := fmt.Sprintf("seed %d case %d (%s)", seed, i, c.desc)
		got, err := Quantize(Q8_K, c.src, c.nrows, c.nPerRow, nil)
		require.NoError(t, err, what)
		for v, l := range libs {
			want, err := l.FromFloatCPU(uint32(Q8_K), c.src)
			require.NoError(t, err, what)
			iq4tqRequireBytes(t, Q8_K, what+" variant "+v, want, got)
		}
	}
}

// iq4tqCPUHas reports whether /proc/cpuinfo lists every flag.
func iq4tqCPUHas(flags ...string) bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if name, list, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
			for _, f := range strings.Fields(list) {
				have[f] = true
			}
			break
		}
	}
	for _, f := range flags {
		if !have[f] {
			return false
		}
	}
	return true
}

// TestIQ4TernaryQ8KRandomBlocks dequantizes random block bytes, including
// NaN, infinite and subnormal scales, and requires ggml's floats.
func TestIQ4TernaryQ8KRandomBlocks(t *testing.T) {
	lib := reftest.Lib(t)
	seed := iq4tqSeed(t)
	for ti, typ := range []Type{IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, Q8_K} {
		r := rand.New(rand.NewPCG(seed, 200+uint64(ti)))
		for i := range 100 {
			nblocks := 1 + r.IntN(32)
			q := make([]byte, nblocks*typ.TypeSize())
			for j := range q {
				q[j] = byte(r.Uint32())
			}
			what := fmt.Sprintf("seed %d case %d (%d random blocks)", seed, i, nblocks)
			iq4tqCheckDequantize(t, lib, typ, what, q, nblocks*typ.BlockSize())
		}
	}
}

// TestIQ4NLTies places values exactly halfway between two levels (at
// weight zero, so that the scale found is exactly 1) and requires ggml's
// choice of level for them.
func TestIQ4NLTies(t *testing.T) {
	lib := reftest.Lib(t)
	x := make([]float32, 32)
	w := make([]float32, 32)
	for k, v := range kvaluesIQ4NL {
		x[k], w[k] = float32(v), 1
		if k > 0 {
			x[15+k] = (float32(kvaluesIQ4NL[k-1]) + float32(v)) / 2
		}
	}
	x[31], w[31] = float32(kvaluesIQ4NL[0]), 1
	for _, neg := range []bool{false, true} {
		if neg {
			for i := range x {
				x[i] = -x[i]
			}
		}
		want, err := lib.QuantizeChunk(uint32(IQ4_NL), x, 1, 32, w)
		require.NoError(t, err)
		require.Equal(t, FP32ToFP16(map[bool]float32{false: 1, true: -1}[neg]),
			binary.LittleEndian.Uint16(want), "the crafted block should get scale ±1")
		got, err := Quantize(IQ4_NL, x, 1, 32, w)
		require.NoError(t, err)
		iq4tqRequireBytes(t, IQ4_NL, fmt.Sprintf("ties (negated %v)", neg), want, got)
	}
}

// TestIQ4Levels checks the level table through ggml: with a scale of 1,
// nibble k dequantizes to level k.
func TestIQ4Levels(t *testing.T) {
	lib := reftest.Lib(t)
	q := make([]byte, 18)
	binary.LittleEndian.PutUint16(q, FP32ToFP16(1))
	for j := range 16 {
		q[2+j] = byte(j) | byte(15-j)<<4
	}
	want, err := lib.ToFloat(uint32(IQ4_NL), q, 32)
	require.NoError(t, err)
	for k := range 16 {
		require.Equal(t, float32(kvaluesIQ4NL[k]), want[k], "level %d", k)
		require.Equal(t, float32(kvaluesIQ4NL[15-k]), want[16+k], "level %d", 15-k)
	}
}
