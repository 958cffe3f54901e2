package ggmlref

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The C layouts (LP64) of struct ggml_type_traits and ggml_type_traits_cpu in ggml 0.25.1.
func TestTraitsLayout(t *testing.T) {
	var c cTypeTraits
	require.EqualValues(t, 56, unsafe.Sizeof(c))
	require.EqualValues(t, 0, unsafe.Offsetof(c.typeName))
	require.EqualValues(t, 8, unsafe.Offsetof(c.blckSize))
	require.EqualValues(t, 16, unsafe.Offsetof(c.blckSizeInterleave))
	require.EqualValues(t, 24, unsafe.Offsetof(c.typeSize))
	require.EqualValues(t, 32, unsafe.Offsetof(c.isQuantized))
	require.EqualValues(t, 40, unsafe.Offsetof(c.toFloat))
	require.EqualValues(t, 48, unsafe.Offsetof(c.fromFloatRef))

	var cc cTypeTraitsCPU
	require.EqualValues(t, 32, unsafe.Sizeof(cc))
	require.EqualValues(t, 0, unsafe.Offsetof(cc.fromFloat))
	require.EqualValues(t, 8, unsafe.Offsetof(cc.vecDot))
	require.EqualValues(t, 16, unsafe.Offsetof(cc.vecDotType))
	require.EqualValues(t, 24, unsafe.Offsetof(cc.nrows))
}

// The C layouts of struct ggml_init_params and struct ggml_tensor in 0.25.1.
func TestGraphLayout(t *testing.T) {
	var p InitParams
	require.EqualValues(t, 24, unsafe.Sizeof(p))
	require.EqualValues(t, 0, unsafe.Offsetof(p.MemSize))
	require.EqualValues(t, 8, unsafe.Offsetof(p.MemBuffer))
	require.EqualValues(t, 16, unsafe.Offsetof(p.NoAlloc))

	var x Tensor
	require.EqualValues(t, 336, unsafe.Sizeof(x))
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"type", unsafe.Offsetof(x.Type), 0},
		{"buffer", unsafe.Offsetof(x.Buffer), 8},
		{"ne", unsafe.Offsetof(x.Ne), 16},
		{"nb", unsafe.Offsetof(x.Nb), 48},
		{"op", unsafe.Offsetof(x.Op), 80},
		{"op_params", unsafe.Offsetof(x.OpParams), 84},
		{"flags", unsafe.Offsetof(x.Flags), 148},
		{"src", unsafe.Offsetof(x.Src), 152},
		{"view_src", unsafe.Offsetof(x.ViewSrc), 232},
		{"view_offs", unsafe.Offsetof(x.ViewOffs), 240},
		{"data", unsafe.Offsetof(x.Data), 248},
		{"name", unsafe.Offsetof(x.Name), 256},
		{"extra", unsafe.Offsetof(x.Extra), 320},
		{"padding", unsafe.Offsetof(x.Padding), 328},
	} {
		require.Equal(t, f.want, f.got, "offset of %s", f.name)
	}
}

func TestThreadpoolParamsLayout(t *testing.T) {
	var p ThreadpoolParams
	require.EqualValues(t, 528, unsafe.Sizeof(p))
	require.EqualValues(t, 512, unsafe.Offsetof(p.NThreads))
	require.EqualValues(t, 516, unsafe.Offsetof(p.Prio))
	require.EqualValues(t, 520, unsafe.Offsetof(p.Poll))
	require.EqualValues(t, 524, unsafe.Offsetof(p.StrictCPU))
	require.EqualValues(t, 525, unsafe.Offsetof(p.Paused))
}
