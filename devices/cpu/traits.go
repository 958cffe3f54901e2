package cpu

import (
	"fmt"
	"os"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// The matrix products reach their per-type arithmetic through a kernel
// set: ggml's type_traits_cpu, one entry per element type, with the tiled
// and repacked products and the vector primitives beside them. The
// generic set is quant's portable Go (the reference the other devices are
// checked against); each architecture level (level.go) makes a faster set
// of Go assembly, and the best one the processor runs is chosen at start.
// The generic set stays selectable:
//
//   - at build time, with the purego build tag (go build -tags purego),
//     which leaves every assembly file and every level out;
//   - at run time, with Options.Generic, or for every Engine of a process
//     with the environment variable GGML_CPU_GENERIC=1, which also gives
//     the process the generic vector primitives (vec.go).

// EnvGeneric is the environment variable that, set to 1 when the process
// starts, makes every Engine use the generic matrix kernels (as
// Options.Generic does) and the element-wise, norm, softmax, rope and
// flash-attention paths use the generic vector primitives.
const EnvGeneric = "GGML_CPU_GENERIC"

// envGeneric reports whether GGML_CPU_GENERIC asks for the generic
// kernels; chooseLevel reads it once, at start.
func envGeneric() bool { return os.Getenv(EnvGeneric) == "1" }

// typeTraits is what the CPU does with one element type.
type typeTraits struct {
	// vecDotType is the type src1's rows are converted to before they
	// meet rows of this type in vecDot.
	vecDotType quant.Type
	// fromFloat converts a row of floats to this type; quant.ErrNonFinite
	// reports a row the type cannot represent.
	fromFloat func(dst []byte, src []float32) error
	// vecDot is the dot product of n elements of x (this type) with n
	// elements of y (vecDotType), under quant.DotKernel's contract. nil
	// when the type has no vec_dot.
	vecDot func(n int, x, y []byte) float32
	// vecDot4 (optional) computes, for nrows rows of x stride bytes
	// apart and four rows of y, out[4r+c] = vecDot(n, row r, y[c]),
	// reading each row of x once for all four; each result is bit for bit
	// vecDot's, so a product's result does not depend on which columns
	// were grouped. scratch holds at least n/8 float32s.
	vecDot4 func(n int, x []byte, stride uint64, nrows int, y *[4][]byte, scratch, out []float32)
	// vecDotRows (optional) computes, for nrows rows of x stride bytes
	// apart and one row of y, out[r] = vecDot(n, row r, y), bit for bit,
	// reading several rows of x at once: a product with a single column
	// is a stream of weight rows, and one core fetches several streams
	// from memory faster than one. scratch holds at least rowsScratch(n)
	// float32s.
	vecDotRows func(n int, x []byte, stride uint64, nrows int, y []byte, scratch, out []float32)
	// rowsPrepare is set when each vecDotRows call first prepares its
	// column (quant's multi-row kernels that convert the activation row
	// into a table): products of several columns then give each call a
	// longer run of rows (productPrepared) than the tiles of the other
	// kernels, so the preparation is paid once per many rows.
	rowsPrepare bool
}

// rowsScratch is the scratch vecDotRows needs for rows of n elements: what
// the kernels keep of the column's blocks (their scales, offsets).
func rowsScratch(n int) int { return n/2 + 16 }

// kernelSet is one level's kernels (level.go) and the name it is reported
// under: a full traits table, the tiled and repacked products of the
// types that have them, and the vector primitives.
type kernelSet struct {
	name   string
	traits [quant.TypeCount]typeTraits
	// gemm, repack, pack and aux are the level's entries of the same
	// name (nil in the generic set, whose repacked products are
	// genericRepack's).
	gemm   map[quant.Type]*plainGemm
	repack map[quant.Type]*repackKernel
	pack   map[quant.Type]func(dst, src []byte, rs int)
	aux    map[quant.Type]func(aux, y []byte, nb int)
	// tileMulMat is the level's (level.tileMulMat).
	tileMulMat func(p *Params, t *graph.Tensor) bool
	tileTypes  []quant.Type
	vec        vecKernels
	// dotTypes and fromFloatTypes are the types whose vec_dot and
	// from_float are the level's assembly, for KernelReport.
	dotTypes, fromFloatTypes []quant.Type
	// avxFromFloatTypes are those of fromFloatTypes converted as ggml's
	// AVX builds do (quant.FromFloatKernelAVX), not as the generic set.
	avxFromFloatTypes []quant.Type
}

// genericKernels is quant's portable arithmetic for every type.
var genericKernels = newGenericKernels()

func newGenericKernels() *kernelSet {
	s := &kernelSet{name: "generic", vec: genericVec}
	for t := range quant.TypeCount {
		typ := quant.Type(t)
		tr := &s.traits[t]
		tr.vecDotType = typ.VecDotType()
		tr.vecDot = quant.DotKernel(typ)
		if rows := quant.DotRowsKernel(typ); rows != nil {
			tr.vecDotRows = func(n int, x []byte, stride uint64, nrows int, y []byte, _, out []float32) {
				rows(n, x, stride, nrows, y, out)
			}
			tr.rowsPrepare = typ != quant.F32 && typ != quant.F16
		}
		tr.fromFloat = func(dst []byte, src []float32) error {
			_, err := quant.FromFloat(dst, typ, src)
			return err
		}
	}
	return s
}

// selectKernels is the set an Engine with opts computes with.
func selectKernels(opts Options) *kernelSet {
	if opts.Generic {
		return genericKernels
	}
	return chosen
}

// deriveGeneric returns a copy of the generic set named name, for an
// architecture file to override entries in. The copy has no vecDotRows:
// those must agree bit for bit with the vecDot beside them, which the
// architecture replaces.
func deriveGeneric(name string) *kernelSet {
	s := *genericKernels
	s.name = name
	for t := range s.traits {
		s.traits[t].vecDotRows = nil
		s.traits[t].rowsPrepare = false
	}
	return &s
}

// kernels returns the kernel set of p's engine (the best one when p was
// made outside an engine, as in some tests).
func (p *Params) kernels() *kernelSet {
	if p.kset != nil {
		return p.kset
	}
	return fast
}

// FromFloat converts the row src into dst as the CPU backend does before a
// matrix product (ggml's type_traits_cpu from_float): with the kernels an
// Engine made with opts computes with, so the assembly quantizers unless
// opts, GGML_CPU_GENERIC or the purego tag ask for the generic ones. It is
// here for benchmarks and tools that compare the activation formats with
// ggml's. dst must hold t's row size of len(src) elements; a row t cannot
// represent reports quant.ErrNonFinite.
func FromFloat(opts Options, t quant.Type, dst []byte, src []float32) error {
	if err := t.Check(); err != nil {
		return err
	}
	rs := t.RowSize(int64(len(src)))
	if rs < 0 {
		return fmt.Errorf("%w: %d elements: not a multiple of the block size of %s (%d)",
			quant.ErrBadLength, len(src), t, t.BlockSize())
	}
	if int64(len(dst)) < rs {
		return fmt.Errorf("%w: dst has %d bytes, need %d", quant.ErrBadLength, len(dst), rs)
	}
	return selectKernels(opts).traits[t].fromFloat(dst[:rs], src)
}
