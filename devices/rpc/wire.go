package rpc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
)

// The protocol version spoken, pinned to the ggml that llama-cpp-python
// 0.3.36 vendors (ggml 0.25.3, ggml-rpc.h RPC_PROTO_*_VERSION). A peer with
// another major version, or a newer minor one, is refused, as ggml's own
// client does.
const (
	ProtoMajor = 7
	ProtoMinor = 0
	ProtoPatch = 0
)

// command is an RPC command byte (ggml-rpc.cpp enum rpc_cmd).
type command uint8

// The commands, numbered as ggml's; HELLO is always 14.
const (
	cmdAllocBuffer command = iota
	cmdGetAlignment
	cmdGetMaxSize
	cmdBufferGetBase
	cmdFreeBuffer
	cmdBufferClear
	cmdSetTensor
	cmdSetTensorHash
	cmdGetTensor
	cmdCopyTensor
	cmdGraphCompute
	cmdGetDeviceMemory
	cmdInitTensor
	cmdGetAllocSize
	cmdHello
	cmdDeviceCount
	cmdGraphRecompute
	cmdMemsetTensor
	cmdCount
)

// cmdAuth is ours, not ggml's: the shared token our server asks for when
// started with -token, sent by our client right after HELLO. A stock ggml
// client never sends it, so a server with a token refuses stock clients.
const cmdAuth command = 0xA0

var commandNames = [cmdCount]string{
	"ALLOC_BUFFER", "GET_ALIGNMENT", "GET_MAX_SIZE", "BUFFER_GET_BASE", "FREE_BUFFER",
	"BUFFER_CLEAR", "SET_TENSOR", "SET_TENSOR_HASH", "GET_TENSOR", "COPY_TENSOR",
	"GRAPH_COMPUTE", "GET_DEVICE_MEMORY", "INIT_TENSOR", "GET_ALLOC_SIZE", "HELLO",
	"DEVICE_COUNT", "GRAPH_RECOMPUTE", "MEMSET_TENSOR",
}

func (c command) String() string {
	if c < cmdCount {
		return commandNames[c]
	}
	if c == cmdAuth {
		return "AUTH"
	}
	return fmt.Sprintf("command %d", uint8(c))
}

// Sizes of the fixed parts of the protocol, in bytes (ggml packs every
// message struct to 1-byte alignment).
const (
	maxDims     = 4
	maxSrc      = 10
	maxName     = 64 // GGML_MAX_NAME, the NUL included
	maxParams   = 16 // GGML_MAX_OP_PARAMS / 4
	connCaps    = 24 // RPC_CONN_CAPS_SIZE: transport upgrades (RDMA); zero for TCP
	tensorBytes = 8 + 4 + 8 + 4*maxDims + 4*maxDims + 4 + 4*maxParams + 4 + 8*maxSrc + 8 + 8 + 8 + maxName + 4

	helloReqBytes = connCaps
	helloRspBytes = 4 + connCaps
	// Inputs of SET_TENSOR: tensor, cache flag, offset, then the data.
	setTensorHeader = tensorBytes + 1 + 8
	// hashThreshold is ggml's HASH_THRESHOLD: weights set in one piece
	// larger than this are first offered by hash.
	hashThreshold = 10 << 20
)

// wireTensor is ggml-rpc.cpp's rpc_tensor: a tensor as the client
// describes it, its sources and view source named by the client's ids, its
// memory by a buffer handle and an address in the server's address space
// of that buffer.
type wireTensor struct {
	ID       uint64
	Type     uint32
	Buffer   uint64
	Ne       [maxDims]uint32
	Nb       [maxDims]uint32
	Op       uint32
	Params   [maxParams]int32
	Flags    int32
	Src      [maxSrc]uint64
	ViewSrc  uint64
	ViewOffs uint64
	Data     uint64
	Name     [maxName]byte
	UseCount int32
}

// put appends t's wire form to b.
func (t wireTensor) put(b []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, t.ID)
	b = le.AppendUint32(b, t.Type)
	b = le.AppendUint64(b, t.Buffer)
	for _, v := range t.Ne {
		b = le.AppendUint32(b, v)
	}
	for _, v := range t.Nb {
		b = le.AppendUint32(b, v)
	}
	b = le.AppendUint32(b, t.Op)
	for _, v := range t.Params {
		b = le.AppendUint32(b, uint32(v))
	}
	b = le.AppendUint32(b, uint32(t.Flags))
	for _, v := range t.Src {
		b = le.AppendUint64(b, v)
	}
	b = le.AppendUint64(b, t.ViewSrc)
	b = le.AppendUint64(b, t.ViewOffs)
	b = le.AppendUint64(b, t.Data)
	b = append(b, t.Name[:]...)
	return le.AppendUint32(b, uint32(t.UseCount))
}

// getTensor decodes a wire tensor from the first tensorBytes of b, which
// the caller has checked are there.
func getTensor(b []byte) wireTensor {
	le := binary.LittleEndian
	var t wireTensor
	r := reader{b: b[:tensorBytes]}
	t.ID = r.u64()
	t.Type = r.u32()
	t.Buffer = r.u64()
	for i := range t.Ne {
		t.Ne[i] = r.u32()
	}
	for i := range t.Nb {
		t.Nb[i] = r.u32()
	}
	t.Op = r.u32()
	for i := range t.Params {
		t.Params[i] = int32(r.u32())
	}
	t.Flags = int32(r.u32())
	for i := range t.Src {
		t.Src[i] = r.u64()
	}
	t.ViewSrc = r.u64()
	t.ViewOffs = r.u64()
	t.Data = r.u64()
	copy(t.Name[:], r.next(maxName))
	t.UseCount = int32(le.Uint32(r.next(4)))
	return t
}

// name is the tensor's name up to its NUL, or an error when the field has
// none (ggml would read past it).
func (t *wireTensor) name() (string, error) {
	i := bytes.IndexByte(t.Name[:], 0)
	if i < 0 {
		return "", fmt.Errorf("tensor %#x: its name has no terminating zero in %d bytes", t.ID, maxName)
	}
	return string(t.Name[:i]), nil
}

// setName stores s, cut to fit with its NUL, as ggml's snprintf does.
func (t *wireTensor) setName(s string) {
	t.Name = [maxName]byte{}
	copy(t.Name[:maxName-1], s)
}

// reader takes fixed-size little-endian fields from a message whose length
// was checked first.
type reader struct {
	b []byte
}

func (r *reader) next(n int) []byte {
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() uint8   { return r.next(1)[0] }
func (r *reader) u32() uint32 { return binary.LittleEndian.Uint32(r.next(4)) }
func (r *reader) u64() uint64 { return binary.LittleEndian.Uint64(r.next(8)) }

// fnv1a is ggml-rpc.cpp's fnv_hash: 64-bit FNV-1a, the key of the server's
// set_tensor cache (the file name, in 16 lower-case hex digits).
func fnv1a(data []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(data)
	return h.Sum64()
}

// fitsU32 reports whether v can be sent in one of rpc_tensor's 32-bit
// shape or stride fields.
func fitsU32[T int64 | uint64](v T) bool { return v >= 0 && uint64(v) <= math.MaxUint32 }
