package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ValueType is a metadata value's type, numbered as ggml's enum gguf_type.
type ValueType uint32

// The value types of GGUF v3.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
	// typeCount is GGUF_TYPE_COUNT.
	typeCount ValueType = 13
)

var typeNames = [typeCount]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

// String is gguf_type_name's name for t ("u32", "str", "arr"), or
// "ValueType(N)" for a value outside the enum.
func (t ValueType) String() string {
	if t < typeCount {
		return typeNames[t]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(t))
}

// Scalar is the set of Go types a metadata element can have.
type Scalar interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | bool | string | uint64 | int64 | float64
}

// Value is one metadata value: a scalar or an array of one scalar type
// (GGUF has no nested arrays). The zero Value is invalid. Values share
// their slices with whoever made them; treat them as read-only.
type Value struct {
	// elems is a []T of one Scalar type: one element for a scalar.
	elems any
	array bool
}

// ScalarValue is the scalar value v.
func ScalarValue[T Scalar](v T) Value { return Value{elems: []T{v}} }

// ArrayValue is the array v (which the Value keeps, not copies). A nil
// slice is an empty array.
func ArrayValue[T Scalar](v []T) Value {
	if v == nil {
		v = []T{}
	}
	return Value{elems: v, array: true}
}

// ValueAs returns v's scalar as a T, and false when v is an array or holds
// another type: GGUF readers are strict about types, as llama.cpp is.
func ValueAs[T Scalar](v Value) (T, bool) {
	s, ok := v.elems.([]T)
	if !ok || v.array || len(s) != 1 {
		var zero T
		return zero, false
	}
	return s[0], true
}

// ArrayAs returns v's array as a []T (shared, not copied), and false when
// v is a scalar or its elements are another type.
func ArrayAs[T Scalar](v Value) ([]T, bool) {
	s, ok := v.elems.([]T)
	if !ok || !v.array {
		return nil, false
	}
	return s, true
}

// IsArray reports whether v is an array.
func (v Value) IsArray() bool { return v.array }

// Type is v's type as a file stores it: TypeArray for arrays.
func (v Value) Type() ValueType {
	if v.array {
		return TypeArray
	}
	return v.ElemType()
}

// ElemType is the type of v's elements (the scalar's type for a scalar),
// or typeCount for the zero Value.
func (v Value) ElemType() ValueType {
	switch v.elems.(type) {
	case []uint8:
		return TypeUint8
	case []int8:
		return TypeInt8
	case []uint16:
		return TypeUint16
	case []int16:
		return TypeInt16
	case []uint32:
		return TypeUint32
	case []int32:
		return TypeInt32
	case []float32:
		return TypeFloat32
	case []bool:
		return TypeBool
	case []string:
		return TypeString
	case []uint64:
		return TypeUint64
	case []int64:
		return TypeInt64
	case []float64:
		return TypeFloat64
	}
	return typeCount
}

// Len is the number of elements: 1 for a scalar.
func (v Value) Len() int {
	if v.elems == nil {
		return 0
	}
	return codecs[v.ElemType()].n(v.elems)
}

// Interface returns the scalar (uint32, string, ...) or the array's slice
// ([]uint32, []string, ...).
func (v Value) Interface() any {
	if v.array || v.elems == nil {
		return v.elems
	}
	return codecs[v.ElemType()].at(v.elems, 0)
}

// valid reports whether v holds a value (not the zero Value).
func (v Value) valid() bool { return v.ElemType() < typeCount }

// Format writes at most max elements of v the way gguf-dump shows them:
// strings quoted, arrays in brackets with ", ..." when cut short.
func (v Value) Format(max int) string {
	if !v.valid() {
		return "<invalid>"
	}
	c := codecs[v.ElemType()]
	if !v.array {
		return c.format(v.elems, 0)
	}
	var b strings.Builder
	b.WriteByte('[')
	n := c.n(v.elems)
	for i := 0; i < n && i < max; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.format(v.elems, i))
	}
	if n > max {
		b.WriteString(", ...")
	}
	b.WriteByte(']')
	return b.String()
}

// String formats v with arrays cut after 6 elements, as gguf-dump does.
func (v Value) String() string { return v.Format(6) }

// codec reads and writes the elements of one value type. size is the
// fixed element size in a file, 0 for strings.
type codec struct {
	size   int
	decode func(b []byte, n int) any // n elements from exactly n*size bytes
	encode func(dst []byte, elems any) []byte
	n      func(elems any) int
	at     func(elems any, i int) any
	format func(elems any, i int) string
}

func fixedCodec[T Scalar](size int, get func([]byte) T, put func([]byte, T) []byte, format func(T) string) codec {
	return codec{
		size: size,
		decode: func(b []byte, n int) any {
			out := make([]T, n)
			for i := range out {
				out[i] = get(b[i*size:])
			}
			return out
		},
		encode: func(dst []byte, elems any) []byte {
			for _, e := range elems.([]T) {
				dst = put(dst, e)
			}
			return dst
		},
		n:      func(elems any) int { return len(elems.([]T)) },
		at:     func(elems any, i int) any { return elems.([]T)[i] },
		format: func(elems any, i int) string { return format(elems.([]T)[i]) },
	}
}

func formatInt[T int8 | int16 | int32 | int64](v T) string { return strconv.FormatInt(int64(v), 10) }
func formatUint[T uint8 | uint16 | uint32 | uint64](v T) string {
	return strconv.FormatUint(uint64(v), 10)
}

var le = binary.LittleEndian

// codecs is indexed by ValueType; TypeString's decode is unused (strings
// have their own length prefix) and TypeArray has no codec.
var codecs = [typeCount + 1]codec{
	TypeUint8: fixedCodec(1, func(b []byte) uint8 { return b[0] }, func(d []byte, v uint8) []byte { return append(d, v) }, formatUint[uint8]),
	TypeInt8:  fixedCodec(1, func(b []byte) int8 { return int8(b[0]) }, func(d []byte, v int8) []byte { return append(d, byte(v)) }, formatInt[int8]),
	TypeUint16: fixedCodec(2, func(b []byte) uint16 { return le.Uint16(b) },
		func(d []byte, v uint16) []byte { return le.AppendUint16(d, v) }, formatUint[uint16]),
	TypeInt16: fixedCodec(2, func(b []byte) int16 { return int16(le.Uint16(b)) },
		func(d []byte, v int16) []byte { return le.AppendUint16(d, uint16(v)) }, formatInt[int16]),
	TypeUint32: fixedCodec(4, func(b []byte) uint32 { return le.Uint32(b) },
		func(d []byte, v uint32) []byte { return le.AppendUint32(d, v) }, formatUint[uint32]),
	TypeInt32: fixedCodec(4, func(b []byte) int32 { return int32(le.Uint32(b)) },
		func(d []byte, v int32) []byte { return le.AppendUint32(d, uint32(v)) }, formatInt[int32]),
	TypeFloat32: fixedCodec(4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) },
		func(d []byte, v float32) []byte { return le.AppendUint32(d, math.Float32bits(v)) },
		func(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }),
	// ggml reads any non-zero byte as true and writes true as 1.
	TypeBool: fixedCodec(1, func(b []byte) bool { return b[0] != 0 }, func(d []byte, v bool) []byte {
		if v {
			return append(d, 1)
		}
		return append(d, 0)
	}, strconv.FormatBool),
	TypeString: {
		encode: func(dst []byte, elems any) []byte {
			for _, s := range elems.([]string) {
				dst = appendString(dst, s)
			}
			return dst
		},
		n:      func(elems any) int { return len(elems.([]string)) },
		at:     func(elems any, i int) any { return elems.([]string)[i] },
		format: func(elems any, i int) string { return formatString(elems.([]string)[i]) },
	},
	TypeUint64: fixedCodec(8, func(b []byte) uint64 { return le.Uint64(b) },
		func(d []byte, v uint64) []byte { return le.AppendUint64(d, v) }, formatUint[uint64]),
	TypeInt64: fixedCodec(8, func(b []byte) int64 { return int64(le.Uint64(b)) },
		func(d []byte, v int64) []byte { return le.AppendUint64(d, uint64(v)) }, formatInt[int64]),
	TypeFloat64: fixedCodec(8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) },
		func(d []byte, v float64) []byte { return le.AppendUint64(d, math.Float64bits(v)) },
		func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }),
}

// formatString quotes s, cutting it after 60 bytes as gguf-dump does.
func formatString(s string) string {
	if len(s) > 60 {
		return strconv.Quote(s[:57]) + "..."
	}
	return strconv.Quote(s)
}

func appendString(dst []byte, s string) []byte {
	dst = le.AppendUint64(dst, uint64(len(s)))
	return append(dst, s...)
}
