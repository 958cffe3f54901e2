package openvino

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The sizes and offsets are ../shared/native-facts/openvino-c/layouts.txt's
// (LP64: linux and darwin amd64/arm64). Windows is LLP64, where these
// structs (pointers and 64-bit integers only) have the same layout.
func TestStructLayouts(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the C API layouts are pinned for 64-bit targets")
	}
	var s ovShape
	require.EqualValues(t, 16, unsafe.Sizeof(s))
	require.EqualValues(t, 8, unsafe.Alignof(s))
	require.EqualValues(t, 0, unsafe.Offsetof(s.rank))
	require.EqualValues(t, 8, unsafe.Offsetof(s.dims))

	var v ovVersion
	require.EqualValues(t, 16, unsafe.Sizeof(v))
	require.EqualValues(t, 0, unsafe.Offsetof(v.buildNumber))
	require.EqualValues(t, 8, unsafe.Offsetof(v.description))

	var d ovAvailableDevices
	require.EqualValues(t, 16, unsafe.Sizeof(d))
	require.EqualValues(t, 0, unsafe.Offsetof(d.devices))
	require.EqualValues(t, 8, unsafe.Offsetof(d.size))

	var p ovProfilingInfo
	require.EqualValues(t, 48, unsafe.Sizeof(p))
	require.EqualValues(t, 8, unsafe.Alignof(p))
	require.EqualValues(t, 0, unsafe.Offsetof(p.status))
	require.EqualValues(t, 4, unsafe.Sizeof(p.status))
	require.EqualValues(t, 8, unsafe.Offsetof(p.realTime))
	require.EqualValues(t, 16, unsafe.Offsetof(p.cpuTime))
	require.EqualValues(t, 24, unsafe.Offsetof(p.nodeName))
	require.EqualValues(t, 32, unsafe.Offsetof(p.execType))
	require.EqualValues(t, 40, unsafe.Offsetof(p.nodeType))

	var l ovProfilingInfoList
	require.EqualValues(t, 16, unsafe.Sizeof(l))
	require.EqualValues(t, 0, unsafe.Offsetof(l.infos))
	require.EqualValues(t, 8, unsafe.Offsetof(l.size))
}
