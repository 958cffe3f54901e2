// Package ggmlref loads the real ggml shared libraries (ggml 0.25.1, as
// shipped in the npm package @node-llama-cpp/linux-x64@3.22.1) through purego,
// without cgo, so tests can use ggml as an oracle and benchmarks as a peer.
//
// The library folder comes from GGML_REF_LIB_DIR, or from the cache folder
// that scripts/fetch-ref fills. Every function checks its arguments before
// calling into C: the release build of ggml has no bounds checks of its own.
package ggmlref

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
)

// Environment variables read by this package.
const (
	// EnvLibDir names the folder holding libggml-base.so and the CPU variants.
	EnvLibDir = "GGML_REF_LIB_DIR"
	// EnvVariant forces one CPU variant ("haswell", "x64", ...).
	EnvVariant = "GGML_REF_CPU_VARIANT"
	// EnvRequired, when "1", turns a missing reference into a test failure.
	EnvRequired = "GGML_REF_REQUIRED"
)

// PackageSpec is the npm package the reference libraries come from.
const PackageSpec = "@node-llama-cpp/linux-x64@3.22.1"

// ErrNotAvailable reports that the reference library could not be loaded.
var ErrNotAvailable = errors.New("ggmlref: reference ggml not available")

// numTypes is GGML_TYPE_COUNT in 0.25.1.
const numTypes = 43

const typeQ8K = 15

// Lib is a loaded copy of the real ggml: libggml-base plus one CPU variant.
type Lib struct {
	dir     string
	variant string

	quantizeChunk     uintptr
	requiresImatrix   uintptr
	getTypeTraits     uintptr
	getTypeTraitsCPU  uintptr
	cpuFP32ToFP16     uintptr
	bf16ToFP32Row     uintptr
	dequantizeQ8K     uintptr
	geluTables        [2]uintptr // ggml_table_gelu_f16, ggml_table_gelu_quick_f16
	version, commit   string
	fp16ToFP32        func(uint16) float32
	fp32ToFP16        func(float32) uint16
	bf16ToFP32        func(uint16) float32
	fp32ToBF16        func(float32) uint16
	libs              []*dynlib.Library
	graph             *graphAPI
	mu                sync.Mutex
	quantizeChunkLock sync.Mutex
}

var (
	defaultOnce sync.Once
	defaultLib  *Lib
	defaultErr  error
)

// Default loads the reference library once per process from LibDir().
func Default() (*Lib, error) {
	defaultOnce.Do(func() {
		dir, err := LibDir()
		if err != nil {
			defaultErr = err
			return
		}
		defaultLib, defaultErr = Open(dir)
	})
	return defaultLib, defaultErr
}

// CacheDir is where scripts/fetch-ref unpacks the npm package when
// GGML_REF_CACHE is not set.
func CacheDir() string {
	if d := os.Getenv("GGML_REF_CACHE"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "ggml-go", "ref")
}

// LibDir returns the folder to load the libraries from: GGML_REF_LIB_DIR if
// set, else the unpacked package in CacheDir.
func LibDir() (string, error) {
	if d := os.Getenv(EnvLibDir); d != "" {
		return d, nil
	}
	d := filepath.Join(CacheDir(), "node-llama-cpp-linux-x64-3.22.1", "package", "bins", "linux-x64")
	if _, err := os.Stat(filepath.Join(d, "libggml-base.so")); err != nil {
		return "", fmt.Errorf("%w: %s is not set and %s has no libggml-base.so (run scripts/fetch-ref to install %s)",
			ErrNotAvailable, EnvLibDir, d, PackageSpec)
	}
	return d, nil
}

// Open loads libggml-base.so and a CPU variant from dir: the one named by
// GGML_REF_CPU_VARIANT, else the best one for this machine.
func Open(dir string) (*Lib, error) { return OpenVariant(dir, os.Getenv(EnvVariant)) }

// OpenVariant loads libggml-base.so and the named CPU variant ("x64",
// "haswell", ...; "" picks the best) from dir. A variant this machine cannot
// run (ggml_backend_score 0) is an error. Each call loads the libraries
// again, so two variants can be compared in one process.
func OpenVariant(dir, variant string) (*Lib, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return nil, fmt.Errorf("%w: the reference libraries are built for linux/amd64, this is %s/%s",
			ErrNotAvailable, runtime.GOOS, runtime.GOARCH)
	}
	l := &Lib{dir: dir}
	base, err := l.dlopen("libggml-base.so")
	if err != nil {
		return nil, err
	}
	variant, cpu, err := l.pickVariant(variant)
	if err != nil {
		l.Close()
		return nil, err
	}
	l.variant = variant

	syms := []struct {
		lib  *dynlib.Library
		name string
		dst  *uintptr
	}{
		{base, "ggml_quantize_chunk", &l.quantizeChunk},
		{base, "ggml_quantize_requires_imatrix", &l.requiresImatrix},
		{base, "ggml_get_type_traits", &l.getTypeTraits},
		{cpu, "ggml_get_type_traits_cpu", &l.getTypeTraitsCPU},
		{cpu, "ggml_cpu_fp32_to_fp16", &l.cpuFP32ToFP16},
		{base, "ggml_bf16_to_fp32_row", &l.bf16ToFP32Row},
		{base, "dequantize_row_q8_K", &l.dequantizeQ8K},
	}
	for _, s := range syms {
		if *s.dst, err = l.dlsym(s.lib, s.name); err != nil {
			l.Close()
			return nil, err
		}
	}
	var version, commit, cpuInit uintptr
	for _, s := range []struct {
		lib  *dynlib.Library
		name string
		dst  *uintptr
	}{{base, "ggml_version", &version}, {base, "ggml_commit", &commit}, {cpu, "ggml_cpu_init", &cpuInit}} {
		if *s.dst, err = l.dlsym(s.lib, s.name); err != nil {
			l.Close()
			return nil, err
		}
	}
	// Float arguments and results need RegisterFunc; SyscallN only handles integers.
	for _, f := range []struct {
		name string
		fn   any
	}{
		{"ggml_fp16_to_fp32", &l.fp16ToFP32},
		{"ggml_fp32_to_fp16", &l.fp32ToFP16},
		{"ggml_bf16_to_fp32", &l.bf16ToFP32},
		{"ggml_fp32_to_bf16", &l.fp32ToBF16},
	} {
		sym, err := l.dlsym(base, f.name)
		if err != nil {
			l.Close()
			return nil, err
		}
		purego.RegisterFunc(f.fn, sym)
	}
	if err := l.installAbortCallback(base); err != nil {
		l.Close()
		return nil, err
	}
	if err := l.loadGraphAPI(base, cpu); err != nil {
		l.Close()
		return nil, err
	}
	// The GELU tables are data of the CPU library; a build that hides
	// them leaves GELUTables an error.
	for i, name := range []string{"ggml_table_gelu_f16", "ggml_table_gelu_quick_f16"} {
		l.geluTables[i], _ = cpu.Sym(name)
	}
	purego.SyscallN(cpuInit)
	r, _, _ := purego.SyscallN(version)
	l.version = cString(r, 256)
	r, _, _ = purego.SyscallN(commit)
	l.commit = cString(r, 256)
	return l, nil
}

func (l *Lib) dlopen(name string) (*dynlib.Library, error) {
	lib, err := dynlib.Open(filepath.Join(l.dir, name))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotAvailable, err)
	}
	l.libs = append(l.libs, lib)
	return lib, nil
}

func (l *Lib) dlsym(lib *dynlib.Library, name string) (uintptr, error) {
	p, err := lib.Sym(name)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNotAvailable, err)
	}
	return p, nil
}

// pickVariant opens the named CPU variant, or else the one whose
// ggml_backend_score is highest on this machine, as ggml's own loader does;
// "x64" (the generic build) always scores above zero.
func (l *Lib) pickVariant(want string) (string, *dynlib.Library, error) {
	paths, _ := filepath.Glob(filepath.Join(l.dir, "libggml-cpu-*.so"))
	if want != "" {
		paths = []string{filepath.Join(l.dir, "libggml-cpu-"+want+".so")}
	}
	if plain := filepath.Join(l.dir, "libggml-cpu.so"); len(paths) == 0 {
		// A build without GGML_BACKEND_DL (the RPC reference peer,
		// scripts/fetch-rpc-ref) has one CPU library, built for this
		// machine, and no score to ask.
		if lib, err := dynlib.Open(plain); err == nil {
			l.libs = append(l.libs, lib)
			return "native", lib, nil
		}
	}
	sort.Strings(paths)
	bestScore, bestName := 0, ""
	var best *dynlib.Library
	for _, p := range paths {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "libggml-cpu-"), ".so")
		lib, err := dynlib.Open(p)
		if err != nil {
			if want != "" {
				return "", nil, fmt.Errorf("%w: %w", ErrNotAvailable, err)
			}
			continue
		}
		score := 0
		if fn, err := lib.Sym("ggml_backend_score"); err == nil {
			r, _, _ := purego.SyscallN(fn)
			score = int(int32(r))
		}
		if score > bestScore {
			_ = best.Close()
			bestScore, bestName, best = score, name, lib
		} else {
			_ = lib.Close()
		}
	}
	if best == nil {
		if want != "" {
			return "", nil, fmt.Errorf("%w: CPU variant %s cannot run on this machine (ggml_backend_score 0)", ErrNotAvailable, want)
		}
		return "", nil, fmt.Errorf("%w: no libggml-cpu-*.so in %s scores above 0 on this machine", ErrNotAvailable, l.dir)
	}
	l.libs = append(l.libs, best)
	return bestName, best, nil
}

// Close unloads the libraries. The Lib must not be used afterwards.
func (l *Lib) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.libs) - 1; i >= 0; i-- {
		_ = l.libs[i].Close()
	}
	l.libs = nil
}

// GELUTables returns copies of the CPU build's GELU and GELU_QUICK tables
// (F16 result by F16 input bits), which ggml_cpu_init fills and its GELU
// kernels and gates read.
func (l *Lib) GELUTables() (gelu, quick []uint16, err error) {
	for i, dst := range []*[]uint16{&gelu, &quick} {
		if l.geluTables[i] == 0 {
			return nil, nil, fmt.Errorf("%w: the %s build does not export its GELU tables", ErrNotAvailable, l.variant)
		}
		*dst = append([]uint16(nil), unsafe.Slice((*uint16)(cPtr(l.geluTables[i])), 1<<16)...)
	}
	return gelu, quick, nil
}

// Dir is the folder the libraries were loaded from.
func (l *Lib) Dir() string { return l.dir }

// Variant is the CPU variant in use ("haswell", "x64", ...).
func (l *Lib) Variant() string { return l.variant }

// Version is ggml_version() ("0.25.1").
func (l *Lib) Version() string { return l.version }

// Commit is ggml_commit().
func (l *Lib) Commit() string { return l.commit }

// cPtr turns an address returned by C into a pointer. The memory belongs to
// the library (static tables and strings), never to the Go heap, so the
// uintptr round trip that vet warns about is safe here.
func cPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// cString reads the NUL-terminated C string at p, at most max bytes of it.
func cString(p uintptr, max uintptr) string {
	if p == 0 {
		return ""
	}
	var b []byte
	for i := uintptr(0); i < max; i++ {
		c := *(*byte)(cPtr(p + i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// TypeTraits mirrors the fields of struct ggml_type_traits (56 bytes; offsets
// type_name 0, blck_size 8, blck_size_interleave 16, type_size 24,
// is_quantized 32, to_float 40, from_float_ref 48) and of struct
// ggml_type_traits_cpu (32 bytes; from_float 0, vec_dot 8, vec_dot_type 16,
// nrows 24).
type TypeTraits struct {
	Name         string
	BlockSize    int64
	TypeSize     int64
	IsQuantized  bool
	toFloat      uintptr
	fromFloatRef uintptr
	fromFloatCPU uintptr
	vecDot       uintptr
	VecDotType   uint32
	VecDotRows   int64
}

type cTypeTraits struct {
	typeName           uintptr
	blckSize           int64
	blckSizeInterleave int64
	typeSize           uint64
	isQuantized        bool
	_                  [7]byte
	toFloat            uintptr
	fromFloatRef       uintptr
}

type cTypeTraitsCPU struct {
	fromFloat  uintptr
	vecDot     uintptr
	vecDotType int32
	_          int32
	nrows      int64
}

// HasToFloat reports whether the type has a to_float (F32 and Q8_1 do not;
// for Q8_K it is ggml's exported dequantize_row_q8_K).
func (t TypeTraits) HasToFloat() bool { return t.toFloat != 0 }

// HasFromFloatRef reports whether the type has a reference from_float.
func (t TypeTraits) HasFromFloatRef() bool { return t.fromFloatRef != 0 }

// HasFromFloatCPU reports whether the CPU backend has a from_float for the type.
func (t TypeTraits) HasFromFloatCPU() bool { return t.fromFloatCPU != 0 }

// HasVecDot reports whether the CPU backend has a vec_dot for the type.
func (t TypeTraits) HasVecDot() bool { return t.vecDot != 0 }

// Traits returns the base and CPU traits of type t.
func (l *Lib) Traits(t uint32) (TypeTraits, error) {
	if t >= numTypes {
		return TypeTraits{}, fmt.Errorf("ggmlref: type %d out of range", t)
	}
	r, _, _ := purego.SyscallN(l.getTypeTraits, uintptr(t))
	c := (*cTypeTraits)(cPtr(r))
	rc, _, _ := purego.SyscallN(l.getTypeTraitsCPU, uintptr(t))
	cc := (*cTypeTraitsCPU)(cPtr(rc))
	toFloat := c.toFloat
	if t == typeQ8K && toFloat == 0 {
		// ggml leaves Q8_K's to_float empty but exports its dequantizer.
		toFloat = l.dequantizeQ8K
	}
	return TypeTraits{
		Name:         cString(c.typeName, 256),
		BlockSize:    c.blckSize,
		TypeSize:     int64(c.typeSize),
		IsQuantized:  c.isQuantized,
		toFloat:      toFloat,
		fromFloatRef: c.fromFloatRef,
		fromFloatCPU: cc.fromFloat,
		vecDot:       cc.vecDot,
		VecDotType:   uint32(cc.vecDotType),
		VecDotRows:   cc.nrows,
	}, nil
}

func (l *Lib) rowBytes(tr TypeTraits, n int64) (int64, error) {
	if tr.BlockSize <= 0 || tr.TypeSize <= 0 {
		return 0, fmt.Errorf("ggmlref: type %s has no layout", tr.Name)
	}
	if n < 0 || n%tr.BlockSize != 0 {
		return 0, fmt.Errorf("ggmlref: %d elements is not a multiple of %s's block size %d", n, tr.Name, tr.BlockSize)
	}
	return n / tr.BlockSize * tr.TypeSize, nil
}

// RequiresImatrix is ggml_quantize_requires_imatrix.
func (l *Lib) RequiresImatrix(t uint32) bool {
	if t >= numTypes {
		return false
	}
	r, _, _ := purego.SyscallN(l.requiresImatrix, uintptr(t))
	return r&0xff != 0
}

// QuantizeChunk calls ggml_quantize_chunk(t, src, dst, 0, nrows, nPerRow,
// imatrix) and returns the bytes written. imatrix may be nil; otherwise it
// must hold nPerRow weights.
func (l *Lib) QuantizeChunk(t uint32, src []float32, nrows, nPerRow int64, imatrix []float32) ([]byte, error) {
	tr, err := l.Traits(t)
	if err != nil {
		return nil, err
	}
	rb, err := l.rowBytes(tr, nPerRow)
	if err != nil {
		return nil, err
	}
	if nrows < 0 {
		return nil, fmt.Errorf("ggmlref: %d rows", nrows)
	}
	dst := make([]byte, rb*nrows)
	return dst, l.QuantizeChunkInto(dst, t, src, nrows, nPerRow, imatrix)
}

// QuantizeChunkInto is QuantizeChunk writing into dst, which must hold
// exactly the nrows quantized rows (benchmarks keep allocation out of the
// timing).
func (l *Lib) QuantizeChunkInto(dst []byte, t uint32, src []float32, nrows, nPerRow int64, imatrix []float32) error {
	tr, err := l.Traits(t)
	if err != nil {
		return err
	}
	rb, err := l.rowBytes(tr, nPerRow)
	if err != nil {
		return err
	}
	if int64(len(dst)) != rb*nrows {
		return fmt.Errorf("ggmlref: dst has %d bytes, need %d", len(dst), rb*nrows)
	}
	if nrows < 0 || int64(len(src)) < nrows*nPerRow {
		return fmt.Errorf("ggmlref: src has %d floats, need %d", len(src), nrows*nPerRow)
	}
	if imatrix != nil && int64(len(imatrix)) != nPerRow {
		return fmt.Errorf("ggmlref: imatrix has %d weights, need %d", len(imatrix), nPerRow)
	}
	if imatrix == nil && l.RequiresImatrix(t) {
		return fmt.Errorf("ggmlref: %s requires an imatrix", tr.Name)
	}
	if len(dst) == 0 {
		return nil
	}
	var im uintptr
	if imatrix != nil {
		im = uintptr(unsafe.Pointer(&imatrix[0]))
	}
	// The lattice quantizers share lazily built global tables in ggml.
	l.quantizeChunkLock.Lock()
	r, _, _ := purego.SyscallN(l.quantizeChunk, uintptr(t), uintptr(unsafe.Pointer(&src[0])),
		uintptr(unsafe.Pointer(&dst[0])), 0, uintptr(nrows), uintptr(nPerRow), im)
	l.quantizeChunkLock.Unlock()
	runtime.KeepAlive(src)
	runtime.KeepAlive(imatrix)
	if int64(r) != int64(len(dst)) {
		return fmt.Errorf("ggmlref: ggml_quantize_chunk returned %d, want %d", r, len(dst))
	}
	return nil
}

// ToFloat applies the type's to_float to the first n elements in src.
func (l *Lib) ToFloat(t uint32, src []byte, n int64) ([]float32, error) {
	tr, err := l.Traits(t)
	if err != nil {
		return nil, err
	}
	if tr.toFloat == 0 {
		return nil, fmt.Errorf("ggmlref: %s has no to_float", tr.Name)
	}
	rb, err := l.rowBytes(tr, n)
	if err != nil {
		return nil, err
	}
	if int64(len(src)) < rb {
		return nil, fmt.Errorf("ggmlref: %d bytes hold fewer than %d %s elements", len(src), n, tr.Name)
	}
	dst := make([]float32, n)
	if n == 0 {
		return dst, nil
	}
	purego.SyscallN(tr.toFloat, uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&dst[0])), uintptr(n))
	runtime.KeepAlive(src)
	return dst, nil
}

// FromFloatRef applies the type's reference from_float to src.
func (l *Lib) FromFloatRef(t uint32, src []float32) ([]byte, error) {
	tr, err := l.Traits(t)
	if err != nil {
		return nil, err
	}
	return l.fromFloat(tr, tr.fromFloatRef, "from_float_ref", src)
}

// FromFloatCPU applies the CPU backend's from_float (the SIMD quantizer that
// makes activations: Q8_0, Q8_1, Q8_K, ...) to src.
func (l *Lib) FromFloatCPU(t uint32, src []float32) ([]byte, error) {
	tr, err := l.Traits(t)
	if err != nil {
		return nil, err
	}
	return l.fromFloat(tr, tr.fromFloatCPU, "CPU from_float", src)
}

func (l *Lib) fromFloat(tr TypeTraits, fn uintptr, what string, src []float32) ([]byte, error) {
	rb, err := l.rowBytes(tr, int64(len(src)))
	if err != nil {
		return nil, err
	}
	dst := make([]byte, rb)
	return dst, l.fromFloatInto(dst, tr, fn, what, src)
}

// FromFloatCPUInto is FromFloatCPU writing into dst, which must hold
// exactly the quantized src.
func (l *Lib) FromFloatCPUInto(dst []byte, t uint32, src []float32) error {
	tr, err := l.Traits(t)
	if err != nil {
		return err
	}
	return l.fromFloatInto(dst, tr, tr.fromFloatCPU, "CPU from_float", src)
}

func (l *Lib) fromFloatInto(dst []byte, tr TypeTraits, fn uintptr, what string, src []float32) error {
	if fn == 0 {
		return fmt.Errorf("ggmlref: %s has no %s", tr.Name, what)
	}
	rb, err := l.rowBytes(tr, int64(len(src)))
	if err != nil {
		return err
	}
	if int64(len(dst)) != rb {
		return fmt.Errorf("ggmlref: dst has %d bytes, need %d", len(dst), rb)
	}
	if len(src) == 0 {
		return nil
	}
	purego.SyscallN(fn, uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&dst[0])), uintptr(len(src)))
	runtime.KeepAlive(src)
	return nil
}

// VecDot calls the CPU backend's vec_dot for type t on one row pair: x holds n
// elements of type t and y n elements of t's vec_dot_type.
func (l *Lib) VecDot(t uint32, n int64, x, y []byte) (float32, error) {
	tr, err := l.Traits(t)
	if err != nil {
		return 0, err
	}
	if tr.vecDot == 0 {
		return 0, fmt.Errorf("ggmlref: %s has no vec_dot", tr.Name)
	}
	xb, err := l.rowBytes(tr, n)
	if err != nil {
		return 0, err
	}
	ytr, err := l.Traits(tr.VecDotType)
	if err != nil {
		return 0, err
	}
	yb, err := l.rowBytes(ytr, n)
	if err != nil {
		return 0, err
	}
	if int64(len(x)) < xb || int64(len(y)) < yb || n == 0 {
		return 0, fmt.Errorf("ggmlref: vec_dot buffers too short (%d, %d bytes for %d elements)", len(x), len(y), n)
	}
	var s float32
	purego.SyscallN(tr.vecDot, uintptr(n), uintptr(unsafe.Pointer(&s)), 0,
		uintptr(unsafe.Pointer(&x[0])), 0, uintptr(unsafe.Pointer(&y[0])), 0, 1)
	runtime.KeepAlive(x)
	runtime.KeepAlive(y)
	return s, nil
}

// FP16ToFP32 is ggml_fp16_to_fp32.
func (l *Lib) FP16ToFP32(h uint16) float32 { return l.fp16ToFP32(h) }

// FP32ToFP16 is ggml_fp32_to_fp16 (scalar path).
func (l *Lib) FP32ToFP16(f float32) uint16 { return l.fp32ToFP16(f) }

// BF16ToFP32 is ggml_bf16_to_fp32. A signalling NaN comes back quieted:
// the float travels through purego's float result path; BF16ToFP32Row
// keeps every bit.
func (l *Lib) BF16ToFP32(h uint16) float32 { return l.bf16ToFP32(h) }

// BF16ToFP32Row is ggml_bf16_to_fp32_row, which writes the floats to
// memory, bit for bit.
func (l *Lib) BF16ToFP32Row(src []uint16) []float32 {
	dst := make([]float32, len(src))
	if len(src) > 0 {
		purego.SyscallN(l.bf16ToFP32Row, uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&dst[0])), uintptr(len(src)))
	}
	runtime.KeepAlive(src)
	return dst
}

// FP32ToBF16 is ggml_fp32_to_bf16.
func (l *Lib) FP32ToBF16(f float32) uint16 { return l.fp32ToBF16(f) }

// CPUFP32ToFP16 is ggml_cpu_fp32_to_fp16, the CPU backend's (F16C) row conversion.
func (l *Lib) CPUFP32ToFP16(src []float32) []uint16 {
	dst := make([]uint16, len(src))
	if len(src) > 0 {
		purego.SyscallN(l.cpuFP32ToFP16, uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&dst[0])), uintptr(len(src)))
	}
	runtime.KeepAlive(src)
	return dst
}
