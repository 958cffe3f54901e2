package cpu

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Architecture levels (the package doc says how to add one): each is a
// table of kernels, as ggml's type_traits_cpu with the per-arch overrides
// it builds them from, or gomlx's executors by priority. A level's file
// lists the vec_dot kernels (with their four-column and many-row forms),
// the activation quantizers, the register-tiled and repacked products, the
// weight interleave, the aux rows and the vector primitives it has; what
// it leaves out is the generic Go's. chooseLevel picks, once, the highest
// priority among the registered levels whose features the processor has.

// level is one architecture level's kernel table. Its file registers it
// from a package-level variable, so that every level is known before the
// package's init chooses one, whatever the files' names.
type level struct {
	name string
	// priority orders the levels: the highest one supported is chosen.
	priority int
	// supported reports whether the processor has the features the
	// level's assembly needs (and the OS saves their registers).
	supported func() bool

	// dots replace the generic vec_dot (and vecDot4) of their types;
	// rows set vecDotRows, which must be bit for bit the level's vec_dot.
	dots []asmDot
	rows []asmRows
	// quantizers are the activation types whose from_float is quant's
	// assembly (quant.FromFloatKernel, the one copy Quantize uses too)
	// on this level.
	quantizers []quant.Type
	// avxActivations takes quant.FromFloatKernelAVX for the quantizers
	// that have it: ggml's AVX builds, whose products these kernels
	// match, convert Q8_0 and Q8_1 activations so, not as the reference
	// quantizer (and ggml's scalar build, which the generic set matches).
	avxActivations bool
	// gemm are the register-tiled products (gemm.go). An exact entry
	// without tileCol and one gets them from the level's vec_dot of
	// its type, a column of g.rows rows at a time.
	gemm map[quant.Type]*plainGemm
	// repack are the repacked products (gemm_repack.go), pack the
	// weight interleave of their layouts (the same bytes as the
	// layouts' pack), aux the fill of an activation type's aux rows
	// (the same bytes as its actAux.fill).
	repack map[quant.Type]*repackKernel
	pack   map[quant.Type]func(dst, src []byte, rs int)
	aux    map[quant.Type]func(aux, y []byte, nb int)
	// vec are the vector primitives (vec.go); a nil entry keeps the
	// portable one. vecOf names the level they are (empty: this one), as
	// they are reported and as tests tell them apart.
	vec   asmVecFuncs
	vecOf string
	// tileMulMat computes a thread's share of a MUL_MAT on a matrix unit
	// and reports true, or reports false without computing when the
	// product is not one it takes (nil: none); levels over this one do
	// not inherit it.
	tileMulMat func(p *Params, t *graph.Tensor) bool
	// tileTypes are the weight types tileMulMat takes.
	tileTypes []quant.Type

	once sync.Once
	set  *kernelSet
}

// over returns a level named name above base: base's tables, with the
// entries of dots and rows replacing base's of the same types (or added),
// supported where base is and more says so. A level that differs from the
// one below in a few kernels lists only those; its vector primitives are
// the one below's, under that level's name.
func (base *level) over(name string, priority int, more func() bool, dots []asmDot, rows []asmRows) *level {
	return &level{
		name:           name,
		priority:       priority,
		supported:      func() bool { return base.supported() && more() },
		dots:           replaceByType(base.dots, dots, func(d asmDot) quant.Type { return d.typ }),
		rows:           replaceByType(base.rows, rows, func(r asmRows) quant.Type { return r.typ }),
		quantizers:     base.quantizers,
		avxActivations: base.avxActivations,
		gemm:           base.gemm,
		repack:         base.repack,
		pack:           base.pack,
		aux:            base.aux,
		vec:            base.vec,
		vecOf:          base.vecName(),
	}
}

// withGemm puts the register tiles of gemms in l (a level over makes) in
// place of, or beside, its own of the same types, and returns l.
func (l *level) withGemm(gemms map[quant.Type]*plainGemm) *level {
	m := maps.Clone(l.gemm)
	maps.Copy(m, gemms)
	l.gemm = m
	return l
}

// vecName is the name of the level whose vector primitives l has.
func (l *level) vecName() string {
	if l.vecOf != "" {
		return l.vecOf
	}
	return l.name
}

// replaceByType is base with each entry of with in place of base's entry
// of the same type, or appended where base has none.
func replaceByType[E any](base, with []E, typ func(E) quant.Type) []E {
	out := slices.Clone(base)
	for _, w := range with {
		if i := slices.IndexFunc(out, func(e E) bool { return typ(e) == typ(w) }); i >= 0 {
			out[i] = w
		} else {
			out = append(out, w)
		}
	}
	return out
}

// levels are the registered levels of this build, in no particular order.
var levels []*level

// register adds l to levels and returns it.
func register(l *level) *level {
	levels = append(levels, l)
	return l
}

// kernels is l's kernel set, built on first use.
func (l *level) kernels() *kernelSet {
	l.once.Do(func() { l.set = l.build() })
	return l.set
}

// byPriority returns ls sorted from the highest priority down.
func byPriority(ls []*level) []*level {
	ls = slices.Clone(ls)
	slices.SortFunc(ls, func(a, b *level) int { return cmp.Compare(b.priority, a.priority) })
	return ls
}

// bestLevel is the highest-priority level of ls the processor supports,
// or nil.
func bestLevel(ls []*level) *level {
	for _, l := range byPriority(ls) {
		if l.supported() {
			return l
		}
	}
	return nil
}

var (
	// fast is the best level's kernel set, or the generic set when no
	// level runs here: what the tests compare with the generic set.
	fast *kernelSet
	// chosen is fast, or the generic set when GGML_CPU_GENERIC=1 at
	// start: the set of an Engine of default options, whose vector
	// primitives vec holds.
	chosen *kernelSet
	// vec are the vector primitives the kernels call.
	vec vecKernels
)

func init() { chooseLevel() }

// chooseLevel sets fast, chosen and vec from the registered levels, the
// processor and the environment.
func chooseLevel() {
	fast = genericKernels
	if l := bestLevel(levels); l != nil {
		fast = l.kernels()
	}
	chosen = chooseSet(fast, envGeneric())
	vec = chosen.vec
}

// chooseSet is best, or the generic set when generic is set.
func chooseSet(best *kernelSet, generic bool) *kernelSet {
	if generic {
		return genericKernels
	}
	return best
}

// fastKernels is the best kernel set for this processor, whatever
// GGML_CPU_GENERIC says.
func fastKernels() *kernelSet { return fast }

// Levels describes the architecture levels of this build from the best
// down, each as its name and whether the processor supports it, the one in
// use marked: for example "avx2 (in use), generic" or "neon-dotprod
// (unsupported), neon (in use), generic". The generic Go is always last.
func Levels() string {
	var b strings.Builder
	for _, l := range byPriority(levels) {
		fmt.Fprintf(&b, "%s%s, ", l.name, levelState(l.supported(), l.set != nil && l.set == chosen))
	}
	b.WriteString("generic" + levelState(true, chosen == genericKernels))
	return b.String()
}

func levelState(supported, inUse bool) string {
	switch {
	case inUse:
		return " (in use)"
	case !supported:
		return " (unsupported)"
	}
	return ""
}

// KernelReport says which architecture level and which kernels the CPU
// device computes with, for `ggml devices`: the levels (Levels), then the
// types with assembly vec_dot kernels, register-tiled products and
// repacked products, and the activation types quantized in assembly, in
// the chosen set.
func KernelReport() string {
	s := chosen
	var tiled, repacked []quant.Type
	for t := range quant.TypeCount {
		if s.gemm[quant.Type(t)] != nil {
			tiled = append(tiled, quant.Type(t))
		}
		if s.repack[quant.Type(t)] != nil {
			repacked = append(repacked, quant.Type(t))
		}
	}
	return fmt.Sprintf("kernel level %s; vec_dot %s; tiled %s; repacked %s; from_float %s; vector primitives %s",
		Levels(), typeList(s.dotTypes), typeList(tiled), typeList(repacked), typeList(s.fromFloatTypes), vec.name)
}

// typeList is ts's names, space-separated, or "none".
func typeList(ts []quant.Type) string {
	if len(ts) == 0 {
		return "none"
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, " ")
}

// EnvAMX set to 0 at start leaves the amx kernel level out where the
// processor has it (linux/amd64 with AMX-INT8): the avx512vnni level
// below it then computes every product, bit for bit avx2's.
const EnvAMX = "GGML_CPU_AMX"

// MatrixUnitTypes are the weight types whose products of many columns (a
// prompt's) the kernel set in use computes on a matrix unit (the amx
// level's tiles), in the order of ggml's AMX code (its sapphirerapids
// build's with AMX weights), not the vec_dot's: tests that compare those
// products with ggml's other builds bit for bit allow them a rounding. It
// is empty where no such level is in use.
func MatrixUnitTypes() []quant.Type { return slices.Clone(chosen.tileTypes) }
