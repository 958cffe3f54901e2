package graph

import (
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/dynlib"
	"github.com/ggml-go/ggml/internal/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// The raw ggml calls these tests compare against: ggml's own predicates and
// builders on tensors in a no_alloc ggml context, reached through purego.
// Only valid arguments may be passed: ggml aborts the process on a failed
// assertion.

// Offsets in struct ggml_tensor (336 bytes, LP64) and struct ggml_cgraph of
// ggml 0.25.1; refLoad checks them against the library before any test
// relies on them.
const (
	offType     = 0
	offNe       = 16
	offNb       = 48
	offOp       = 80
	offParams   = 84
	offFlags    = 148
	offSrc      = 152
	offViewSrc  = 232
	offViewOffs = 240
	offName     = 256
	tensorSize  = 336
	objectSize  = 32 // struct ggml_object, before each tensor in a context

	offGraphNNodes   = 4
	offGraphNLeafs   = 8
	offGraphNodes    = 16
	offGraphLeafs    = 40
	offGraphUseCount = 48
	offGraphHashSize = 56
	offGraphHashUsed = 64
	offGraphHashKeys = 72
)

type cInitParams struct {
	MemSize   uintptr
	MemBuffer uintptr
	NoAlloc   bool
}

// cRef holds ggml's functions; every field is registered by refLoad.
type cRef struct {
	Init           func(cInitParams) uintptr                                      `sym:"ggml_init"`
	Free           func(ctx uintptr)                                              `sym:"ggml_free"`
	TensorOverhead func() uintptr                                                 `sym:"ggml_tensor_overhead"`
	NewTensor4D    func(ctx uintptr, typ int32, ne0, ne1, ne2, ne3 int64) uintptr `sym:"ggml_new_tensor_4d"`
	NewTensor      func(ctx uintptr, typ int32, nDims int32, ne *int64) uintptr   `sym:"ggml_new_tensor"`
	SetName        func(t uintptr, name string) uintptr                           `sym:"ggml_set_name"`
	GetName        func(t uintptr) uintptr                                        `sym:"ggml_get_name"`
	SetInput       func(t uintptr)                                                `sym:"ggml_set_input"`
	SetOutput      func(t uintptr)                                                `sym:"ggml_set_output"`
	SetParam       func(t uintptr)                                                `sym:"ggml_set_param"`

	NBytes                  func(t uintptr) uintptr   `sym:"ggml_nbytes"`
	IsContiguous            func(t uintptr) bool      `sym:"ggml_is_contiguous"`
	IsContiguous0           func(t uintptr) bool      `sym:"ggml_is_contiguous_0"`
	IsContiguous1           func(t uintptr) bool      `sym:"ggml_is_contiguous_1"`
	IsContiguous2           func(t uintptr) bool      `sym:"ggml_is_contiguous_2"`
	IsContiguousTo1         func(t uintptr) bool      `sym:"ggml_is_contiguous_to_1"`
	IsContiguousTo2         func(t uintptr) bool      `sym:"ggml_is_contiguous_to_2"`
	IsContiguousTo3         func(t uintptr) bool      `sym:"ggml_is_contiguous_to_3"`
	IsContiguousRows        func(t uintptr) bool      `sym:"ggml_is_contiguous_rows"`
	IsContiguouslyAllocated func(t uintptr) bool      `sym:"ggml_is_contiguously_allocated"`
	IsPermuted              func(t uintptr) bool      `sym:"ggml_is_permuted"`
	IsTransposed            func(t uintptr) bool      `sym:"ggml_is_transposed"`
	IsEmpty                 func(t uintptr) bool      `sym:"ggml_is_empty"`
	CanRepeat               func(t0, t1 uintptr) bool `sym:"ggml_can_repeat"`
	NElements               func(t uintptr) int64     `sym:"ggml_nelements"`
	NRows                   func(t uintptr) int64     `sym:"ggml_nrows"`
	NDims                   func(t uintptr) int32     `sym:"ggml_n_dims"`

	View1D     func(ctx, a uintptr, ne0 int64, offs uintptr) uintptr                               `sym:"ggml_view_1d"`
	View2D     func(ctx, a uintptr, ne0, ne1 int64, nb1, offs uintptr) uintptr                     `sym:"ggml_view_2d"`
	View3D     func(ctx, a uintptr, ne0, ne1, ne2 int64, nb1, nb2, offs uintptr) uintptr           `sym:"ggml_view_3d"`
	View4D     func(ctx, a uintptr, ne0, ne1, ne2, ne3 int64, nb1, nb2, nb3, offs uintptr) uintptr `sym:"ggml_view_4d"`
	ViewTensor func(ctx, a uintptr) uintptr                                                        `sym:"ggml_view_tensor"`
	Reshape4D  func(ctx, a uintptr, ne0, ne1, ne2, ne3 int64) uintptr                              `sym:"ggml_reshape_4d"`
	Permute    func(ctx, a uintptr, ax0, ax1, ax2, ax3 int32) uintptr                              `sym:"ggml_permute"`
	Transpose  func(ctx, a uintptr) uintptr                                                        `sym:"ggml_transpose"`
	Cont       func(ctx, a uintptr) uintptr                                                        `sym:"ggml_cont"`
	Cont4D     func(ctx, a uintptr, ne0, ne1, ne2, ne3 int64) uintptr                              `sym:"ggml_cont_4d"`
	Cpy        func(ctx, a, b uintptr) uintptr                                                     `sym:"ggml_cpy"`
	Dup        func(ctx, a uintptr) uintptr                                                        `sym:"ggml_dup"`
	Add        func(ctx, a, b uintptr) uintptr                                                     `sym:"ggml_add"`
	Sub        func(ctx, a, b uintptr) uintptr                                                     `sym:"ggml_sub"`
	Mul        func(ctx, a, b uintptr) uintptr                                                     `sym:"ggml_mul"`
	Div        func(ctx, a, b uintptr) uintptr                                                     `sym:"ggml_div"`
	AddInplace func(ctx, a, b uintptr) uintptr                                                     `sym:"ggml_add_inplace"`
	SubInplace func(ctx, a, b uintptr) uintptr                                                     `sym:"ggml_sub_inplace"`
	MulInplace func(ctx, a, b uintptr) uintptr                                                     `sym:"ggml_mul_inplace"`
	DivInplace func(ctx, a, b uintptr) uintptr                                                     `sym:"ggml_div_inplace"`

	NewGraphCustom func(ctx uintptr, size uintptr, grads bool) uintptr `sym:"ggml_new_graph_custom"`
	BuildForward   func(g, t uintptr)                                  `sym:"ggml_build_forward_expand"`
	GraphNNodes    func(g uintptr) int32                               `sym:"ggml_graph_n_nodes"`
	GraphNode      func(g uintptr, i int32) uintptr                    `sym:"ggml_graph_node"`
	GraphNodes     func(g uintptr) uintptr                             `sym:"ggml_graph_nodes"`
}

var (
	refOnce sync.Once
	refFns  *cRef
	refErr  string
)

// ref returns ggml's functions, skipping t when the library is absent.
func ref(t testing.TB) *cRef {
	t.Helper()
	lib := reftest.Lib(t)
	refOnce.Do(func() { refFns, refErr = refLoad(lib.Dir()) })
	if refErr != "" {
		t.Fatal(refErr)
	}
	return refFns
}

func refLoad(dir string) (*cRef, string) {
	lib, err := dynlib.Open(filepath.Join(dir, "libggml-base.so"))
	if err != nil {
		return nil, err.Error()
	}
	r := &cRef{}
	if msg := registerSyms(lib, r); msg != "" {
		return nil, msg
	}
	if got := r.TensorOverhead(); got != objectSize+tensorSize {
		return nil, "ggml_tensor_overhead changed: the struct offsets here are stale"
	}
	return r, ""
}

// registerSyms registers every func field of r with the symbol its sym tag names.
func registerSyms(lib *dynlib.Library, r *cRef) string {
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Tag.Get("sym")
		sym, err := lib.Sym(name)
		if err != nil {
			return err.Error()
		}
		purego.RegisterFunc(v.Field(i).Addr().Interface(), sym)
	}
	return ""
}

// cPtr turns an address ggml returned into a pointer. The memory is the C
// context's, never Go's, so the round trip vet warns about is safe.
func cPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func cI64(p uintptr) *int64    { return (*int64)(cPtr(p)) }
func cU64(p uintptr) *uint64   { return (*uint64)(cPtr(p)) }
func cI32(p uintptr) *int32    { return (*int32)(cPtr(p)) }
func cPtrAt(p uintptr) uintptr { return *(*uintptr)(cPtr(p)) }

func cString(p uintptr) string {
	var b []byte
	for i := uintptr(0); i < 64; i++ {
		c := *(*byte)(cPtr(p + i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// refCtx is a no_alloc ggml context, freed when the test ends.
type refCtx struct {
	r   *cRef
	ctx uintptr
}

func newRefCtx(t testing.TB) *refCtx {
	r := ref(t)
	ctx := r.Init(cInitParams{MemSize: 64 << 20, NoAlloc: true})
	require.NotZero(t, ctx)
	t.Cleanup(func() { r.Free(ctx) })
	return &refCtx{r: r, ctx: ctx}
}

// cTensor is a ggml tensor's description as this package's Tensor holds it.
type cTensor struct {
	Type     quant.Type
	Ne       [MaxDims]int64
	Nb       [MaxDims]uint64
	Op       ops.Op
	Params   ops.Params
	Flags    Flags
	Src      [MaxSrc]uintptr
	ViewSrc  uintptr
	ViewOffs uint64
	Name     string
}

func readTensor(p uintptr) cTensor {
	var t cTensor
	t.Type = quant.Type(*cI32(p + offType))
	for i := range MaxDims {
		t.Ne[i] = *cI64(p + offNe + uintptr(8*i))
		t.Nb[i] = *cU64(p + offNb + uintptr(8*i))
	}
	t.Op = ops.Op(*cI32(p + offOp))
	for i := range t.Params {
		t.Params[i] = *cI32(p + offParams + uintptr(4*i))
	}
	t.Flags = Flags(*cI32(p + offFlags))
	for i := range MaxSrc {
		t.Src[i] = cPtrAt(p + offSrc + uintptr(8*i))
	}
	t.ViewSrc = cPtrAt(p + offViewSrc)
	t.ViewOffs = *cU64(p + offViewOffs)
	t.Name = cString(p + offName)
	return t
}

// tensorAs creates a ggml tensor of typ and overwrites its shape and
// strides with ne and nb: the predicates only read these fields.
func (c *refCtx) tensorAs(typ quant.Type, ne [MaxDims]int64, nb [MaxDims]uint64) uintptr {
	p := c.r.NewTensor4D(c.ctx, int32(typ), 1, 1, 1, 1)
	for i := range MaxDims {
		*cI64(p + offNe + uintptr(8*i)) = ne[i]
		*cU64(p + offNb + uintptr(8*i)) = nb[i]
	}
	return p
}

// newTensor is ggml_new_tensor with the dimensions of ne.
func (c *refCtx) newTensor(typ quant.Type, ne ...int64) uintptr {
	return c.r.NewTensor(c.ctx, int32(typ), int32(len(ne)), &ne[0])
}

// refGraph is a ggml graph built with ggml_build_forward_expand.
type refGraph struct {
	Nodes, Leafs []uintptr
	p            uintptr
}

func (c *refCtx) build(outputs ...uintptr) *refGraph {
	g := c.r.NewGraphCustom(c.ctx, 4096, false)
	for _, o := range outputs {
		c.r.BuildForward(g, o)
	}
	rg := &refGraph{p: g}
	nodes, leafs := cPtrAt(g+offGraphNodes), cPtrAt(g+offGraphLeafs)
	for i := range int(*cI32(g + offGraphNNodes)) {
		rg.Nodes = append(rg.Nodes, cPtrAt(nodes+uintptr(8*i)))
	}
	for i := range int(*cI32(g + offGraphNLeafs)) {
		rg.Leafs = append(rg.Leafs, cPtrAt(leafs+uintptr(8*i)))
	}
	return rg
}

// useCount is ggml's use count of t: the use_counts slot of t's position
// in the graph's hash set.
func (g *refGraph) useCount(t uintptr) int {
	size := int(*cU64(g.p + offGraphHashSize))
	used, keys, counts := cPtrAt(g.p+offGraphHashUsed), cPtrAt(g.p+offGraphHashKeys), cPtrAt(g.p+offGraphUseCount)
	for i := range size {
		word := *(*uint32)(cPtr(used + uintptr(4*(i/32))))
		if word&(1<<(i%32)) != 0 && cPtrAt(keys+uintptr(8*i)) == t {
			return int(*cI32(counts + uintptr(4*i)))
		}
	}
	return -1
}

// TestRefLayout checks the struct offsets used here against ggml's own
// accessors, so a layout change fails loudly instead of reading garbage.
func TestRefLayout(t *testing.T) {
	c := newRefCtx(t)
	r := c.r
	a := c.newTensor(quant.F16, 3, 5, 7, 11)
	ta := readTensor(a)
	require.Equal(t, quant.F16, ta.Type)
	require.Equal(t, [MaxDims]int64{3, 5, 7, 11}, ta.Ne)
	require.Equal(t, [MaxDims]uint64{2, 6, 30, 210}, ta.Nb)
	r.SetName(a, "abc")
	require.Equal(t, a+offName, r.GetName(a))
	require.Equal(t, "abc", readTensor(a).Name)

	v := r.View1D(c.ctx, a, 4, 10)
	tv := readTensor(v)
	require.Equal(t, ops.View, tv.Op)
	require.Equal(t, a, tv.Src[0])
	require.Equal(t, a, tv.ViewSrc)
	require.EqualValues(t, 10, tv.ViewOffs)
	require.EqualValues(t, 10, tv.Params[0])
	require.Equal(t, "abc (view)", tv.Name)

	b := c.newTensor(quant.F16, 3, 5, 7, 11)
	g := c.build(r.Add(c.ctx, a, b))
	require.Len(t, g.Nodes, 1)
	require.EqualValues(t, r.GraphNNodes(g.p), len(g.Nodes))
	require.Equal(t, r.GraphNodes(g.p), cPtrAt(g.p+offGraphNodes))
	require.Equal(t, r.GraphNode(g.p, 0), g.Nodes[0])
	require.Equal(t, []uintptr{a, b}, g.Leafs)
	require.Equal(t, FlagCompute, readTensor(g.Nodes[0]).Flags)
	require.Equal(t, 1, g.useCount(a))
	require.Equal(t, 0, g.useCount(g.Nodes[0]))
}
