package htp

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestSeedLayouts pins the seed-era structs to hexagon.md 2.2 (the
// double's wire_check.c pins its own copies to the same numbers).
func TestSeedLayouts(t *testing.T) {
	var o SeedOpDesc
	require.Equal(t, uintptr(232), unsafe.Sizeof(o))
	require.Equal(t, uintptr(8), unsafe.Offsetof(o.Params))
	require.Equal(t, uintptr(72), unsafe.Offsetof(o.KernelParams))
	require.Equal(t, uintptr(200), unsafe.Offsetof(o.Src))
	require.Equal(t, uintptr(220), unsafe.Offsetof(o.Dst))
	require.Equal(t, uintptr(228), unsafe.Offsetof(o.Pad))
	var q SeedOpBatchReq
	require.Equal(t, uintptr(32), unsafe.Sizeof(q))
	require.Equal(t, uintptr(24), unsafe.Offsetof(q.Seq))
	var r SeedOpBatchRsp
	require.Equal(t, uintptr(96), unsafe.Sizeof(r))
	require.Equal(t, uintptr(88), unsafe.Offsetof(r.Seq))
	var a AllreduceKernelParams
	require.LessOrEqual(t, unsafe.Sizeof(a), uintptr(MaxKernParams*4))
	require.Equal(t, uintptr(8), unsafe.Offsetof(a.Mode))
	for _, p := range []Protocol{ProtocolPublic, ProtocolSeed} {
		require.Equal(t, p.ReqSize(), map[Protocol]int{ProtocolPublic: int(unsafe.Sizeof(OpBatchReq{})), ProtocolSeed: 32}[p])
		require.Equal(t, p.RspSize(), map[Protocol]int{ProtocolPublic: int(unsafe.Sizeof(OpBatchRsp{})), ProtocolSeed: 96}[p])
		require.Equal(t, p.OpDescSize(), map[Protocol]int{ProtocolPublic: int(unsafe.Sizeof(OpDesc{})), ProtocolSeed: 232}[p])
	}
}

// TestProtocolOpcodes: the public table is the ops' own values and has no
// seed-only op; the seed table is hexagon.md 3's (spot checks) and maps
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
		require.True(t, op.SeedOnly())
	}
	want := map[Op]uint32{OpUnarySilu: 11, OpGLUSwiglu: 21, OpSoftmax: 25, OpRope: 27, OpFlashAttnExt: 28,
		OpScale: 31, OpCpy: 32, OpCpyFence: 33, OpPad: 48, OpNorm: 49, OpIm2col: 53, OpFence: 54, OpAllreduce: 55,
		OpAllreduceAdd: 56, OpMdevGroup: 58}
	for op, v := range want {
		got, ok := ProtocolSeed.Opcode(op)
		require.True(t, ok, op.String())
		require.Equal(t, v, got, op.String())
	}
	for _, op := range []Op{OpMulMatQKV, OpMulMatFFN} {
		_, ok := ProtocolSeed.Opcode(op)
		require.False(t, ok, "%s has no seed value", op)
	}
	seen := map[uint32]Op{}
	for op, v := range seedOpcodes {
		o, dup := seen[v]
		require.False(t, dup, "%s and %s", op, o)
		seen[v] = op
		require.Less(t, v, uint32(60))
	}
	require.Equal(t, 10, ProtocolSeed.MaxInputs())
	require.True(t, ProtocolSeed.Fences())
	require.False(t, ProtocolPublic.Fences())
	require.Contains(t, ProtocolSeed.String(), "NOT verified")
}
