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
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// The raw ggml calls these tests compare against: ggml's own layout
// predicates and builders on tensors of a no_alloc ggml context, through
// purego. ggmlref.Tensor is struct ggml_tensor, so its fields are read and
// written in place. ggmlref's Context has no builders, so this file binds
// the ones the tests need itself. A call that may fail an assertion in
// ggml goes through ggmlref.Catch.

type cTensor = ggmlref.Tensor

// Offsets in struct ggml_cgraph of ggml 0.25.1 (checked in TestRefLayout).
const (
	offGraphNNodes   = 4
	offGraphNLeafs   = 8
	offGraphNodes    = 16
	offGraphLeafs    = 40
	offGraphUseCount = 48
	offGraphHashSize = 56
	offGraphHashUsed = 64
	offGraphHashKeys = 72
)

// cRef holds ggml's functions; every field is registered by refLoad with
// the symbol its tag names.
type cRef struct {
	Init        func(ggmlref.InitParams) uintptr                                `sym:"ggml_init"`
	Free        func(ctx uintptr)                                               `sym:"ggml_free"`
	NewTensor   func(ctx uintptr, typ int32, nDims int32, ne *int64) *cTensor   `sym:"ggml_new_tensor"`
	NewTensor4D func(ctx uintptr, typ int32, ne0, ne1, ne2, ne3 int64) *cTensor `sym:"ggml_new_tensor_4d"`
	SetName     func(t *cTensor, name string) *cTensor                          `sym:"ggml_set_name"`
	GetName     func(t *cTensor) uintptr                                        `sym:"ggml_get_name"`
	SetInput    func(t *cTensor)                                                `sym:"ggml_set_input"`
	SetOutput   func(t *cTensor)                                                `sym:"ggml_set_output"`
	SetParam    func(t *cTensor)                                                `sym:"ggml_set_param"`

	NBytes                  func(t *cTensor) uintptr   `sym:"ggml_nbytes"`
	IsContiguous            func(t *cTensor) bool      `sym:"ggml_is_contiguous"`
	IsContiguous0           func(t *cTensor) bool      `sym:"ggml_is_contiguous_0"`
	IsContiguous1           func(t *cTensor) bool      `sym:"ggml_is_contiguous_1"`
	IsContiguous2           func(t *cTensor) bool      `sym:"ggml_is_contiguous_2"`
	IsContiguousTo1         func(t *cTensor) bool      `sym:"ggml_is_contiguous_to_1"`
	IsContiguousTo2         func(t *cTensor) bool      `sym:"ggml_is_contiguous_to_2"`
	IsContiguousTo3         func(t *cTensor) bool      `sym:"ggml_is_contiguous_to_3"`
	IsContiguousRows        func(t *cTensor) bool      `sym:"ggml_is_contiguous_rows"`
	IsContiguouslyAllocated func(t *cTensor) bool      `sym:"ggml_is_contiguously_allocated"`
	IsPermuted              func(t *cTensor) bool      `sym:"ggml_is_permuted"`
	IsTransposed            func(t *cTensor) bool      `sym:"ggml_is_transposed"`
	IsEmpty                 func(t *cTensor) bool      `sym:"ggml_is_empty"`
	CanRepeat               func(t0, t1 *cTensor) bool `sym:"ggml_can_repeat"`
	NElements               func(t *cTensor) int64     `sym:"ggml_nelements"`
	NRows                   func(t *cTensor) int64     `sym:"ggml_nrows"`
	NDims                   func(t *cTensor) int32     `sym:"ggml_n_dims"`

	View1D     func(ctx uintptr, a *cTensor, ne0 int64, offs uintptr) *cTensor                               `sym:"ggml_view_1d"`
	View2D     func(ctx uintptr, a *cTensor, ne0, ne1 int64, nb1, offs uintptr) *cTensor                     `sym:"ggml_view_2d"`
	View3D     func(ctx uintptr, a *cTensor, ne0, ne1, ne2 int64, nb1, nb2, offs uintptr) *cTensor           `sym:"ggml_view_3d"`
	View4D     func(ctx uintptr, a *cTensor, ne0, ne1, ne2, ne3 int64, nb1, nb2, nb3, offs uintptr) *cTensor `sym:"ggml_view_4d"`
	ViewTensor func(ctx uintptr, a *cTensor) *cTensor                                                        `sym:"ggml_view_tensor"`
	Reshape4D  func(ctx uintptr, a *cTensor, ne0, ne1, ne2, ne3 int64) *cTensor                              `sym:"ggml_reshape_4d"`
	Permute    func(ctx uintptr, a *cTensor, ax0, ax1, ax2, ax3 int32) *cTensor                              `sym:"ggml_permute"`
	Transpose  func(ctx uintptr, a *cTensor) *cTensor                                                        `sym:"ggml_transpose"`
	Cont       func(ctx uintptr, a *cTensor) *cTensor                                                        `sym:"ggml_cont"`
	Cont4D     func(ctx uintptr, a *cTensor, ne0, ne1, ne2, ne3 int64) *cTensor                              `sym:"ggml_cont_4d"`
	Cpy        func(ctx uintptr, a, b *cTensor) *cTensor                                                     `sym:"ggml_cpy"`
	Dup        func(ctx uintptr, a *cTensor) *cTensor                                                        `sym:"ggml_dup"`
	Add        func(ctx uintptr, a, b *cTensor) *cTensor                                                     `sym:"ggml_add"`
	Sub        func(ctx uintptr, a, b *cTensor) *cTensor                                                     `sym:"ggml_sub"`
	Mul        func(ctx uintptr, a, b *cTensor) *cTensor                                                     `sym:"ggml_mul"`
	Div        func(ctx uintptr, a, b *cTensor) *cTensor                                                     `sym:"ggml_div"`
	AddInplace func(ctx uintptr, a, b *cTensor) *cTensor                                                     `sym:"ggml_add_inplace"`
	SubInplace func(ctx uintptr, a, b *cTensor) *cTensor                                                     `sym:"ggml_sub_inplace"`
	MulInplace func(ctx uintptr, a, b *cTensor) *cTensor                                                     `sym:"ggml_mul_inplace"`
	DivInplace func(ctx uintptr, a, b *cTensor) *cTensor                                                     `sym:"ggml_div_inplace"`

	Sum              func(ctx uintptr, a *cTensor) *cTensor                               `sym:"ggml_sum"`
	SumRows          func(ctx uintptr, a *cTensor) *cTensor                               `sym:"ggml_sum_rows"`
	Cumsum           func(ctx uintptr, a *cTensor) *cTensor                               `sym:"ggml_cumsum"`
	Mean             func(ctx uintptr, a *cTensor) *cTensor                               `sym:"ggml_mean"`
	Argmax           func(ctx uintptr, a *cTensor) *cTensor                               `sym:"ggml_argmax"`
	Norm             func(ctx uintptr, a *cTensor, eps float32) *cTensor                  `sym:"ggml_norm"`
	NormInplace      func(ctx uintptr, a *cTensor, eps float32) *cTensor                  `sym:"ggml_norm_inplace"`
	RMSNorm          func(ctx uintptr, a *cTensor, eps float32) *cTensor                  `sym:"ggml_rms_norm"`
	RMSNormInplace   func(ctx uintptr, a *cTensor, eps float32) *cTensor                  `sym:"ggml_rms_norm_inplace"`
	L2Norm           func(ctx uintptr, a *cTensor, eps float32) *cTensor                  `sym:"ggml_l2_norm"`
	L2NormInplace    func(ctx uintptr, a *cTensor, eps float32) *cTensor                  `sym:"ggml_l2_norm_inplace"`
	GroupNorm        func(ctx uintptr, a *cTensor, groups int32, eps float32) *cTensor    `sym:"ggml_group_norm"`
	GroupNormInplace func(ctx uintptr, a *cTensor, groups int32, eps float32) *cTensor    `sym:"ggml_group_norm_inplace"`
	SoftMaxExt       func(ctx uintptr, a, mask *cTensor, scale, maxBias float32) *cTensor `sym:"ggml_soft_max_ext"`
	SoftMaxExtInpl   func(ctx uintptr, a, mask *cTensor, scale, maxBias float32) *cTensor `sym:"ggml_soft_max_ext_inplace"`
	SoftMaxAddSinks  func(a, sinks *cTensor)                                              `sym:"ggml_soft_max_add_sinks"`
	Argsort          func(ctx uintptr, a *cTensor, order int32) *cTensor                  `sym:"ggml_argsort"`
	ArgsortTopK      func(ctx uintptr, a *cTensor, k int32) *cTensor                      `sym:"ggml_argsort_top_k"`
	TopK             func(ctx uintptr, a *cTensor, k int32) *cTensor                      `sym:"ggml_top_k"`

	NewGraphCustom func(ctx uintptr, size uintptr, grads bool) uintptr `sym:"ggml_new_graph_custom"`
	BuildForward   func(g uintptr, t *cTensor)                         `sym:"ggml_build_forward_expand"`
	GraphNNodes    func(g uintptr) int32                               `sym:"ggml_graph_n_nodes"`
	GraphNode      func(g uintptr, i int32) *cTensor                   `sym:"ggml_graph_node"`
	GraphNodes     func(g uintptr) uintptr                             `sym:"ggml_graph_nodes"`
}

var (
	refOnce sync.Once
	refFns  *cRef
	refErr  error
)

// ref returns ggml's functions, skipping t when the library is absent.
// Loading the default reference installs ggmlref's abort callback, which
// Catch needs.
func ref(t testing.TB) *cRef {
	t.Helper()
	lib := reftest.Lib(t)
	refOnce.Do(func() { refFns, refErr = refLoad(lib.Dir()) })
	require.NoError(t, refErr)
	return refFns
}

func refLoad(dir string) (*cRef, error) {
	lib, err := dynlib.Open(filepath.Join(dir, "libggml-base.so"))
	if err != nil {
		return nil, err
	}
	r := &cRef{}
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		sym, err := lib.Sym(v.Type().Field(i).Tag.Get("sym"))
		if err != nil {
			return nil, err
		}
		purego.RegisterFunc(v.Field(i).Addr().Interface(), sym)
	}
	return r, nil
}

// cPtr turns an address ggml returned into a pointer. The memory is the C
// context's, never Go's, so the round trip vet warns about is safe.
func cPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// refCtx is a no_alloc ggml context, freed when the test ends.
type refCtx struct {
	r   *cRef
	ctx uintptr
}

func newRefCtx(t testing.TB) *refCtx {
	r := ref(t)
	ctx := r.Init(ggmlref.InitParams{MemSize: 64 << 20, NoAlloc: true})
	require.NotZero(t, ctx)
	t.Cleanup(func() { r.Free(ctx) })
	return &refCtx{r: r, ctx: ctx}
}

// tensorAs creates a ggml tensor of typ and gives it shape ne and strides
// nb: the predicates read nothing else.
func (c *refCtx) tensorAs(typ quant.Type, ne [MaxDims]int64, nb [MaxDims]uint64) *cTensor {
	p := c.r.NewTensor4D(c.ctx, int32(typ), 1, 1, 1, 1)
	p.Ne, p.Nb = ne, nb
	return p
}

// newTensor is ggml_new_tensor with the dimensions of ne.
func (c *refCtx) newTensor(typ quant.Type, ne ...int64) *cTensor {
	return c.r.NewTensor(c.ctx, int32(typ), int32(len(ne)), &ne[0])
}

// refGraph is a ggml graph built with ggml_build_forward_expand.
type refGraph struct {
	Nodes, Leafs []*cTensor
	p            uintptr
}

func (c *refCtx) build(outputs ...*cTensor) *refGraph {
	g := c.r.NewGraphCustom(c.ctx, 4096, false)
	for _, o := range outputs {
		c.r.BuildForward(g, o)
	}
	at := func(off uintptr) unsafe.Pointer { return cPtr(g + off) }
	return &refGraph{
		Nodes: unsafe.Slice(*(***cTensor)(at(offGraphNodes)), *(*int32)(at(offGraphNNodes))),
		Leafs: unsafe.Slice(*(***cTensor)(at(offGraphLeafs)), *(*int32)(at(offGraphNLeafs))),
		p:     g,
	}
}

// useCount is ggml's use count of t: the use_counts slot of t's position
// in the graph's hash set, or -1 when t is not in the graph.
func (g *refGraph) useCount(t *cTensor) int {
	at := func(off uintptr) unsafe.Pointer { return cPtr(g.p + off) }
	size := *(*uint64)(at(offGraphHashSize))
	used := unsafe.Slice(*(**uint32)(at(offGraphHashUsed)), (size+31)/32)
	keys := unsafe.Slice(*(***cTensor)(at(offGraphHashKeys)), size)
	counts := unsafe.Slice(*(**int32)(at(offGraphUseCount)), size)
	for i := range size {
		if used[i/32]&(1<<(i%32)) != 0 && keys[i] == t {
			return int(counts[i])
		}
	}
	return -1
}

// TestRefLayout checks the cgraph offsets used here, and the reading of
// tensor fields, against ggml's own accessors.
func TestRefLayout(t *testing.T) {
	c := newRefCtx(t)
	r := c.r
	a := c.newTensor(quant.F16, 3, 5, 7, 11)
	require.EqualValues(t, quant.F16, a.Type)
	require.Equal(t, [MaxDims]int64{3, 5, 7, 11}, a.Ne)
	require.Equal(t, [MaxDims]uint64{2, 6, 30, 210}, a.Nb)
	r.SetName(a, "abc")
	require.Equal(t, uintptr(unsafe.Pointer(&a.Name[0])), r.GetName(a))
	require.Equal(t, "abc", a.GetName())

	v := r.View1D(c.ctx, a, 4, 10)
	require.EqualValues(t, ops.View, v.Op)
	require.Same(t, a, v.Src[0])
	require.Same(t, a, v.ViewSrc)
	require.EqualValues(t, 10, v.ViewOffs)
	require.EqualValues(t, 10, v.OpParams[0])
	require.Equal(t, "abc (view)", v.GetName())

	b := c.newTensor(quant.F16, 3, 5, 7, 11)
	g := c.build(r.Add(c.ctx, a, b))
	require.Len(t, g.Nodes, 1)
	require.EqualValues(t, r.GraphNNodes(g.p), len(g.Nodes))
	require.Equal(t, r.GraphNodes(g.p), uintptr(unsafe.Pointer(unsafe.SliceData(g.Nodes))))
	require.Same(t, r.GraphNode(g.p, 0), g.Nodes[0])
	require.Equal(t, []*cTensor{a, b}, g.Leafs)
	require.EqualValues(t, FlagCompute, g.Nodes[0].Flags)
	require.Equal(t, 1, g.useCount(a))
	require.Equal(t, 0, g.useCount(g.Nodes[0]))
	require.Equal(t, -1, g.useCount(v))
}
