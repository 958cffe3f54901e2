package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant"
)

// testLibm is the C library's math (skipped, or failed with
// GGML_REF_REQUIRED=1, where it is not glibc's libm.so.6).
func testLibm(t *testing.T) *ggmlref.Libm {
	t.Helper()
	m, err := ggmlref.LibmDefault()
	if err != nil {
		if os.Getenv(ggmlref.EnvRequired) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return m
}

// sameFloat reports whether a and b have the same bits, or are both NaN.
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// expArgs are arguments of e^x to check: every libmStride-th float32 bit
// pattern (both signs, every exponent, infinities, NaN) and expEdges.
func expArgs(r *rand.Rand) []float32 {
	return append(bitPatterns(r, libmStride()), expEdges(r)...)
}

// libmStride is the bit-pattern stride of the libm sweeps: every 331st
// pattern (13 million arguments), or every 4099th in short mode, which CI
// uses for the race detector's run and the oldest toolchain's after the
// full sweep has passed once: the sweeps check arithmetic with no
// goroutines for the detector to watch, and under it the two full sweeps
// took 220 s of devices/cpu's 314.
func libmStride() int {
	if testing.Short() {
		return 4099
	}
	return 331
}

// bitPatterns are the float32 values of every stride-th bit pattern from a
// random start below stride.
func bitPatterns(r *rand.Rand, stride int) []float32 {
	var xs []float32
	for b := uint64(r.IntN(stride)); b < 1<<32; b += uint64(stride) {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	return xs
}

// expEdges are the boundaries of each range glibc's and ggml's e^x treat
// apart and their neighbours, and fresh random values of the sizes a
// softmax and a SiLU see.
func expEdges(r *rand.Rand) []float32 {
	var xs []float32
	for _, v := range []float32{0, 88, 0x1.62e42ep6, 88.7228394, 88.3762626, -0x1.9fe368p6, -0x1.9d1d9ep6,
		-87.3365447, -103.5, 126 * 0.6931472, -126 * 0.6931472, 192 * 0.6931472, -192 * 0.6931472, 1e-30, 1e-45} {
		for _, s := range []float32{1, -1} {
			x := s * v
			xs = append(xs, x, math.Nextafter32(x, float32(math.Inf(1))), math.Nextafter32(x, float32(math.Inf(-1))))
		}
	}
	for range 200000 {
		xs = append(xs, float32(r.NormFloat64()*math.Pow(10, r.Float64()*3-1)))
	}
	return xs
}

// TestLibcExpf: libcExpf gives glibc's expf bits (the process's libm,
// which ggml's builds call) on expArgs.
func TestLibcExpf(t *testing.T) {
	m := testLibm(t)
	r := rand.New(rand.NewPCG(rand.Uint64(), 3))
	xs := expArgs(r)
	bad := 0
	for _, x := range xs {
		if got, want := libcExpf(x), m.Expf(x); !sameFloat(got, want) {
			if bad++; bad <= 10 {
				t.Errorf("libcExpf(%v (%#x)) = %v, glibc %v", x, math.Float32bits(x), got, want)
			}
		}
	}
	require.Zero(t, bad, "of %d arguments", len(xs))
}

// TestExp2fTable: the table libcExpf builds is 2^(i/32) rounded to
// float64, checked against math.Exp2 (within an ulp) and by the table's
// own identity at i = 0 and 16 (1 and sqrt 2, both exact).
func TestExp2fTable(t *testing.T) {
	for i, v := range exp2fTable {
		f := math.Float64frombits(v + uint64(i)<<47)
		require.InDelta(t, math.Exp2(float64(i)/32), f, 2.3e-16, "entry %d", i)
	}
	require.Equal(t, 1.0, math.Float64frombits(exp2fTable[0]))
	require.Equal(t, math.Sqrt2, math.Float64frombits(exp2fTable[16]+16<<47))
}

// levelBuilds names the ggml CPU build whose orders each amd64 level's
// kernels follow (avx512vnni's integers and sums are avx2's).
var levelBuilds = map[string]string{"avx2": "haswell", "avx512vnni": "haswell", "amx": "sapphirerapids"}

// buildSet is a kernel set and the ggml build it follows.
type buildSet struct {
	variant string
	set     *kernelSet
}

// buildSets are the kernel sets to check against ggml's builds: the
// generic one against x64, and each level's that the processor runs
// against its build (levelBuilds).
func buildSets() []buildSet {
	v := []buildSet{{"x64", genericKernels}}
	for _, l := range byPriority(levels) {
		if b := levelBuilds[l.name]; b != "" && l.supported() {
			v = append(v, buildSet{b, l.kernels()})
		}
	}
	return v
}

// vexpVariants are the vector primitives of buildSets' kernel sets, each
// set once (levels share theirs), with the build it follows: the portable
// ones against x64, the AVX2 ones against haswell, the amx level's 16-lane
// e^x loops against sapphirerapids.
func vexpVariants(t *testing.T) []struct {
	variant string
	set     vecKernels
} {
	var v []struct {
		variant string
		set     vecKernels
	}
	seen := map[string]bool{}
	for _, b := range buildSets() {
		if !seen[b.set.vec.name] {
			seen[b.set.vec.name] = true
			v = append(v, struct {
				variant string
				set     vecKernels
			}{b.variant, b.set.vec})
		}
	}
	return v
}

// ggmlVariant is ggml's CPU build of that name as an executor, closed with t.
func ggmlVariant(t *testing.T, variant string) *mirror.Executor {
	t.Helper()
	lib, err := ggmlref.OpenVariant(reftest.Lib(t).Dir(), variant)
	require.NoError(t, err)
	t.Cleanup(lib.Close)
	e, err := mirror.New(lib, 1)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	return e
}

// fillF32Wide fills t with random values whose sizes spread over
// 10^-2..10^2 (so e^x sees its wide and subnormal ranges too).
func fillF32Wide(r *rand.Rand, t *graph.Tensor) {
	for i := 0; i+4 <= len(t.Data); i += 4 {
		v := float32(r.NormFloat64() * math.Pow(10, r.Float64()*4-2))
		binary.LittleEndian.PutUint32(t.Data[i:], math.Float32bits(v))
	}
}

// requireGGMLBits computes out on ggml (e) and with set, and requires
// the same bytes.
func requireGGMLBits(t *testing.T, e *mirror.Executor, out *graph.Tensor, set vecKernels, what string) {
	t.Helper()
	requireGGMLNode(t, e, out, func() []byte { return vecOpRuns(t, out, set)[0] }, what)
}

// requireGGMLNode computes out on ggml (e) and then with ours (which
// computes it from the same sources and returns its bytes), and requires
// the same bytes.
func requireGGMLNode(t *testing.T, e *mirror.Executor, out *graph.Tensor, ours func() []byte, what string) {
	t.Helper()
	g := graph.NewGraph()
	require.NoError(t, g.Expand(out))
	srcs := make([][]byte, len(out.Src))
	for i, s := range out.Src {
		if s != nil {
			srcs[i] = append([]byte(nil), s.Data...)
		}
	}
	require.NoError(t, e.Compute(g), what)
	want := append([]byte(nil), out.Data...)
	for i, s := range out.Src {
		if s != nil {
			copy(s.Data, srcs[i])
		}
	}
	got := ours()
	if string(got) == string(want) {
		return
	}
	differ, first := diffCount(got, want)
	if differ == 0 {
		return
	}
	a := math.Float32frombits(binary.LittleEndian.Uint32(got[4*first:]))
	b := math.Float32frombits(binary.LittleEndian.Uint32(want[4*first:]))
	t.Fatalf("%s: %d of %d floats differ from ggml's, first [%d] %v (%#x), ggml %v (%#x)", what, differ, len(got)/4,
		first, a, math.Float32bits(a), b, math.Float32bits(b))
}

// diffCount counts the float32s of a and b (as bytes) that differ
// (sameFloat), and gives the index of the first.
func diffCount(a, b []byte) (n, first int) {
	first = -1
	for i := 0; i+4 <= len(a); i += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(a[i:]))
		y := math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))
		if !sameFloat(x, y) {
			if n++; first < 0 {
				first = i / 4
			}
		}
	}
	return n, first
}

// vexpRowLengths are row lengths around the vector groups, and those of
// the real models (SmolLM2's 1536 feed-forward, Gemma 3 270M's 2048; key
// counts of a 512-token context).
var vexpRowLengths = []int64{1, 2, 3, 4, 5, 7, 8, 9, 11, 15, 16, 17, 31, 33, 100, 256, 257, 512, 1536, 2048, 2051}

// TestSoftMaxMatchesGGML: SOFT_MAX, plain, scaled with an F32 or F16 mask
// holding -Inf, with ALiBi slopes (a multiply-add the FMA build fuses)
// and with sinks, is bit for bit ggml's x64 build with the portable
// kernels, its haswell build with the AVX2 ones and its sapphirerapids
// build with the amx level's (vexpVariants), at every row length
// of vexpRowLengths on fresh random inputs.
func TestSoftMaxMatchesGGML(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 5))
	for _, v := range vexpVariants(t) {
		e := ggmlVariant(t, v.variant)
		for _, n := range vexpRowLengths {
			for _, kind := range []string{"plain", "mask f32", "mask f16", "alibi", "sinks"} {
				c := graph.NewContext(graph.ContextOptions{Alloc: true})
				const rows, heads = 3, 4
				a := c.NewTensor(quant.F32, n, rows, heads)
				fillF32Wide(r, a)
				var out *graph.Tensor
				mask := func(typ quant.Type) *graph.Tensor {
					m := c.NewTensor(typ, n, rows)
					for i := range m.NElements() {
						val := float32(r.NormFloat64())
						if r.IntN(4) == 0 {
							val = float32(math.Inf(-1))
						}
						if typ == quant.F16 {
							binary.LittleEndian.PutUint16(m.Data[2*i:], quant.FP32ToFP16(val))
						} else {
							binary.LittleEndian.PutUint32(m.Data[4*i:], math.Float32bits(val))
						}
					}
					// One unmasked key per row keeps every sum above 0.
					for row := range rows {
						if typ == quant.F16 {
							binary.LittleEndian.PutUint16(m.Data[2*n*int64(row):], 0)
						} else {
							binary.LittleEndian.PutUint32(m.Data[4*n*int64(row):], 0)
						}
					}
					return m
				}
				switch kind {
				case "plain":
					out = c.SoftMax(a)
				case "mask f32":
					out = c.SoftMaxExt(a, mask(quant.F32), 0.125, 0)
				case "mask f16":
					out = c.SoftMaxExt(a, mask(quant.F16), 0.3, 0)
				case "alibi":
					out = c.SoftMaxExt(a, mask(quant.F32), 0.7, 8)
				case "sinks":
					s := c.NewTensor(quant.F32, heads)
					fillF32(r, s, 2)
					out = c.SoftMaxAddSinks(c.SoftMaxExt(a, mask(quant.F16), 0.5, 0), s)
				}
				require.NoError(t, c.Err())
				requireGGMLBits(t, e, out, v.set, fmt.Sprintf("%s %s n=%d", v.variant, kind, n))
			}
		}
	}
}

// TestSwiGLUMatchesGGML: SWIGLU (two sources, one split in halves,
// swapped), SILU, GEGLU and GELU of F32 rows, bit for bit ggml's x64 build
// with the portable kernels, its haswell build with the AVX2 ones and its
// sapphirerapids build with the amx level's (vexpVariants).
func TestSwiGLUMatchesGGML(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 9))
	for _, v := range vexpVariants(t) {
		e := ggmlVariant(t, v.variant)
		for _, n := range vexpRowLengths {
			for _, kind := range []string{"split", "halves", "swapped", "silu", "geglu", "gelu"} {
				c := graph.NewContext(graph.ContextOptions{Alloc: true})
				var out *graph.Tensor
				switch kind {
				case "split":
					x, g := c.NewTensor(quant.F32, n, 3), c.NewTensor(quant.F32, n, 3)
					fillF32Wide(r, x)
					fillF32Wide(r, g)
					out = c.SwiGLUSplit(x, g)
				case "halves", "swapped":
					x := c.NewTensor(quant.F32, 2*n, 3)
					fillF32Wide(r, x)
					if kind == "halves" {
						out = c.SwiGLU(x)
					} else {
						out = c.SwiGLUSwapped(x)
					}
				case "silu", "gelu":
					x := c.NewTensor(quant.F32, n, 3)
					fillF32Wide(r, x)
					if kind == "gelu" {
						out = c.GELU(x)
					} else {
						out = c.SiLU(x)
					}
				case "geglu":
					x, g := c.NewTensor(quant.F32, n, 3), c.NewTensor(quant.F32, n, 3)
					fillF32Wide(r, x)
					fillF32Wide(r, g)
					out = c.GeGLUSplit(x, g)
				}
				require.NoError(t, c.Err())
				requireGGMLBits(t, e, out, v.set, fmt.Sprintf("%s %s n=%d", v.variant, kind, n))
			}
		}
	}
}

// TestSiLUEdgesMatchGGML: SILU and softmax over expArgs' edge arguments
// (infinities, NaN, the two-step scaling past |n| > 126 and the flush
// past 192, subnormal results; every 4099th bit pattern) in rows of 1000,
// bit for bit ggml's builds.
func TestSiLUEdgesMatchGGML(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 13))
	xs := append(bitPatterns(r, 4099), expEdges(r)...)
	rows := int64(len(xs) / 1000)
	for _, v := range vexpVariants(t) {
		e := ggmlVariant(t, v.variant)
		for _, op := range []string{"silu", "softmax"} {
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			x := c.NewTensor(quant.F32, 1000, rows)
			for i := range x.NElements() {
				v := xs[i]
				if op == "softmax" && (v != v || v > 0 && math.IsInf(float64(v), 0)) {
					v = 0 // a NaN or +Inf logit makes the whole row NaN
				}
				binary.LittleEndian.PutUint32(x.Data[4*i:], math.Float32bits(v))
			}
			out := c.SiLU(x)
			if op == "softmax" {
				out = c.SoftMax(x)
			}
			require.NoError(t, c.Err())
			requireGGMLBits(t, e, out, v.set, v.variant+" "+op+" edges")
		}
	}
}

// TestGELUTablesMatchGGML: the GELU and GELU_QUICK tables, unfused as the
// x64 build fills them and fused as the haswell build does, are those
// builds' tables entry for entry (read from the live libraries).
func TestGELUTablesMatchGGML(t *testing.T) {
	for _, c := range []struct {
		variant string
		fused   bool
	}{{"x64", false}, {"haswell", true}} {
		lib, err := ggmlref.OpenVariant(reftest.Lib(t).Dir(), c.variant)
		require.NoError(t, err)
		gelu, quick, err := lib.GELUTables()
		lib.Close()
		require.NoError(t, err)
		tab := geluTableFor(c.fused)
		for i := range gelu {
			if tab.gelu[i] != gelu[i] || tab.quick[i] != quick[i] {
				t.Fatalf("%s, input %#04x (%v): gelu %#04x quick %#04x, ggml %#04x %#04x", c.variant, i,
					quant.FP16ToFP32(uint16(i)), tab.gelu[i], tab.quick[i], gelu[i], quick[i])
			}
		}
	}
}

// TestFma32: fma32 is a*b+c rounded once, against the exact sum in
// big.Float rounded to float32, on random operands and on sums a hair
// below a midpoint between two floats: c with an odd last bit, a*b half
// its ulp less 2^-46 of that, which a float64 sum rounds onto the
// midpoint and then to even, away from the exact sum's float.
func TestFma32(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 17))
	exact := func(a, b, c float32) float32 {
		p := new(big.Float).SetPrec(300).SetFloat64(float64(a))
		p.Mul(p, new(big.Float).SetFloat64(float64(b)))
		p.Add(p, new(big.Float).SetFloat64(float64(c)))
		f, _ := p.Float32()
		return f
	}
	twice := 0
	for i := range 300000 {
		a := float32(r.NormFloat64())
		b := float32(r.NormFloat64())
		c := float32(r.NormFloat64() * 4)
		if i%2 == 1 {
			c = math.Float32frombits(math.Float32bits(c) | 1)
			_, e := math.Frexp(float64(c))
			a = float32(math.Ldexp(1+0x1p-23, e-25))
			b = 1 - 0x1p-23
		}
		got, want := fma32(a, b, c), exact(a, b, c)
		if !sameFloat(got, want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, exact %v", a, b, c, got, want)
		}
		if float32(float64(a)*float64(b)+float64(c)) != want {
			twice++
		}
	}
	require.Greater(t, twice, 100000, "cases where a float64 sum rounded again is wrong")
}
