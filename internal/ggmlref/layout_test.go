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
