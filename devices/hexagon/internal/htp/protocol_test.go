package htp

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestFenceLayouts pins the fence-protocol structs to hexagon.md 2.2 (the
// double's wire_check.c pins its own copies to the same numbers).
func TestFenceLayouts(t *testing.T) {
	var o FenceOpDesc
	require.Equal(t, uintptr(232), unsafe.Sizeof(o))
	require.Equal(t, uintptr(8), unsafe.Offsetof(o.Params))
	require.Equal(t, uintptr(72), unsafe.Offsetof(o.KernelParams))
	require.Equal(t, uintptr(200), unsafe.Offsetof(o.Src))
	require.Equal(t, uintptr(220), unsafe.Offsetof(o.Dst))
	require.Equal(t, uintptr(228), unsafe.Offsetof(o.Pad))
	var q FenceOpBatchReq
	require.Equal(t, uintptr(32), unsafe.Sizeof(q))
	require.Equal(t, uintptr(24), unsafe.Offsetof(q.Seq))
	var r FenceOpBatchRsp
	require.Equal(t, uintptr(96), unsafe.Sizeof(r))
	require.Equal(t, uintptr(88), unsafe.Offsetof(r.Seq))
	var a AllreduceKernelParams
	require.LessOrEqual(t, unsafe.Sizeof(a), uintptr(MaxKernParams*4))
	require.Equal(t, uintptr(8), unsafe.Offsetof(a.Mode))
	for _, p := range []Protocol{ProtocolPublic, ProtocolFence} {
		require.Equal(t, p.ReqSize(), map[Protocol]int{ProtocolPublic: int(unsafe.Sizeof(OpBatchReq{})), ProtocolFence: 32}[p])
		require.Equal(t, p.RspSize(), map[Protocol]int{ProtocolPublic: int(unsafe.Sizeof(OpBatchRsp{})), ProtocolFence: 96}[p])
		require.Equal(t, p.OpDescSize(), map[Protocol]int{ProtocolPublic: int(unsafe.Sizeof(OpDesc{})), ProtocolFence: 232}[p])
	}
}

// TestProtocolOpcodes: the public table is the ops' own values and has no
// fence-protocol only op; upstream table is hexagon.md 3's (spot checks) and maps
// no two ops to one value.
func TestProtocolOpcodes(t *testing.T) {
	for op := OpMul; op < OpInvalid; op++ {
		v, ok := ProtocolPublic.Opcode(op)
		require.True(t, ok)
		require.Equal(t, uint32(op), v)
	}
	for op := OpFence; op <= OpAllreduceAdd; op++ {
		_, ok := ProtocolPublic.Opcode(op)
		require.False(t, ok, op.String())
		require.True(t, op.FenceOnly())
	}
	want := map[Op]uint32{OpUnarySilu: 11, OpGLUSwiglu: 21, OpSoftmax: 25, OpRope: 27, OpFlashAttnExt: 28,
		OpScale: 31, OpCpy: 32, OpCpyFence: 33, OpPad: 48, OpNorm: 49, OpIm2col: 53, OpFence: 54, OpAllreduce: 55,
		OpAllreduceAdd: 56, OpMdevGroup: 58}
	for op, v := range want {
		got, ok := ProtocolFence.Opcode(op)
		require.True(t, ok, op.String())
		require.Equal(t, v, got, op.String())
	}
	for _, op := range []Op{OpMulMatQKV, OpMulMatFFN} {
		_, ok := ProtocolFence.Opcode(op)
		require.False(t, ok, "%s has no fence-protocol value", op)
	}
	seen := map[uint32]Op{}
	for op, v := range fenceOpcodes {
		o, dup := seen[v]
		require.False(t, dup, "%s and %s", op, o)
		seen[v] = op
		require.Less(t, v, uint32(60))
	}
	require.Equal(t, 10, ProtocolFence.MaxInputs())
	require.True(t, ProtocolFence.Fences())
	require.False(t, ProtocolPublic.Fences())
	require.Contains(t, ProtocolFence.String(), "NOT verified")
}
